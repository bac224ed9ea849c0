#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test, run in both VMs of a two-VM topology: NFSv4.2 over RDMA
# (rpcrdma, port 20049) between kite_ib or rdma_rxe on each side. The
# receiving VM exports a tmpfs through the kernel's nfsd, with Debian's
# nfs-utils (rpc.nfsd, exportfs, rpc.mountd: unpacked by fetch-sources.sh,
# never installed on the host); the sending VM mounts it with proto=rdma,
# writes 64 MiB and reads it back after a remount. Both sides compare
# SHA-256, and the client's mountstats must show one connection per RDMA
# transport: no reconnect. The client's figures go to
# /kite-out/nfs-figures.txt for the host to print beside the other pairs'.
# With KITE_NFS_LOSS=PERMILLE, a second pass runs with every Kite device
# losing that much of the frames it sends (and receives, when its peer is
# rdma_rxe), duplicating and reordering 0.5% (the model's loss-* properties).
# Environment: as test-eth.sh, and KITE_NFS_LOSS.
. "$KITE_ROOT/scripts/guest/lib.sh"
peer_barrier_start
socat -u UDP-RECV:7778 OPEN:/tmp/kite-sync,creat,append &

# pair_sync NAME: return once the peer has reached pair_sync NAME too (or
# after 120 s, failing).
pair_sync() {
	local i
	for i in $(seq 1 240); do
		echo "$1" >"/dev/udp/$KITE_PEER_IP/7778" 2>/dev/null
		grep -qx "$1" /tmp/kite-sync 2>/dev/null && break
		sleep 0.5
	done
	# Once more, for a peer that started waiting after our last message.
	echo "$1" >"/dev/udp/$KITE_PEER_IP/7778" 2>/dev/null
	grep -qx "$1" /tmp/kite-sync 2>/dev/null
}

nfsu=$KITE_TOOLS/nfs-utils
mib=64
pair_nic_up
pair_roce_up
side=client
[ "$KITE_ROLE" = receive ] && side=server

# nfs_loss PERMILLE: this VM's Kite device loses PERMILLE of its RoCEv2
# frames (0: none), as test-eth.sh's loss runs do.
nfs_loss() {
	local props=()
	[ "$KITE_NIC" = kite ] || return 0
	props=("loss-seed $((7 + ${KITE_SELF_IP##*.}))" "loss-tx-drop $1")
	props+=("loss-tx-dup $(($1 ? 5 : 0))" "loss-tx-reorder $(($1 ? 5 : 0))")
	if [ "$KITE_PEER_NIC" != kite ]; then
		props+=("loss-rx-drop $1" "loss-rx-dup $(($1 ? 5 : 0))"
			"loss-rx-reorder $(($1 ? 5 : 0))")
	fi
	model_set "${props[@]}"
}

# nfs_server: export /export (a tmpfs) to the peer, NFSv4 only, over RDMA
# and TCP. A 10 s grace period (instead of 90 s) lets the client write soon.
nfs_server() {
	modprobe nfsd && modprobe rpcrdma || return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	mkdir -p /export /var/lib/nfs/v4recovery &&
		mount -t tmpfs -o size=$((3 * mib))m tmpfs /export || return 1
	echo "/export $KITE_PEER_IP(rw,no_root_squash,insecure,fsid=0,no_subtree_check,sync)" \
		>/etc/exports
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	"$nfsu/usr/sbin/exportfs" -ra || return 1
	"$nfsu/usr/sbin/rpc.mountd" -N 2 -N 3 || return 1
	"$nfsu/usr/sbin/rpc.nfsd" -N 3 --rdma=20049 4 || return 1
	grep -q 'rdma 20049' /proc/fs/nfsd/portlist
}

# nfs_mount: mount the peer's export over RDMA (retried while the server
# comes up).
nfs_mount() {
	local i
	modprobe rpcrdma && modprobe nfsv4 || return 1
	mkdir -p /mnt/nfs
	for i in $(seq 1 60); do
		timeout $(kite_scale 60) "$nfsu/sbin/mount.nfs4" "$KITE_PEER_IP:/" /mnt/nfs \
			-o vers=4.2,proto=rdma,port=20049 >/tmp/nfs-mount.log 2>&1 && return 0
		sleep 1
	done
	return 1
}

# nfs_one_connection: every RDMA transport of the NFS mount connected once.
nfs_one_connection() {
	awk '$1 == "xprt:" && $2 == "rdma" { n++; if ($5 != 1) bad = 1 }
		END { exit !(n > 0 && !bad) }' /proc/self/mountstats
}

# ms_since NS: milliseconds since date +%s%N printed NS.
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# nfs_pass NAME: the client writes $mib MiB, tells the server its SHA-256
# (a file renamed into place), and reads the data back after a remount; the
# server checks the file against the SHA-256. Figures: NAME, then the
# write's and the read's MB/s.
nfs_pass() {
	local name=$1 t ms_w ms_r sum
	if [ "$KITE_ROLE" = receive ]; then
		check "nfs $name: the client's data arrived ($side)" \
			wait_for 600 test -s "/export/$name.sha256"
		check "nfs $name: $mib MiB on the server match the client's SHA-256 ($side)" \
			test "$(sha256sum <"/export/$name.data")" = "$(cat "/export/$name.sha256")"
		return
	fi
	sum=$(sha256sum </tmp/nfs-src)
	t=$(date +%s%N)
	check "nfs $name: write $mib MiB ($side)" \
		bash -c "cp /tmp/nfs-src /mnt/nfs/$name.data && sync"
	ms_w=$(ms_since "$t")
	echo "$sum" >"/mnt/nfs/$name.sha256.tmp" && mv "/mnt/nfs/$name.sha256.tmp" "/mnt/nfs/$name.sha256"
	# Read from the server, not from this VM's page cache.
	umount /mnt/nfs && nfs_mount
	t=$(date +%s%N)
	check "nfs $name: read back $mib MiB, SHA-256 equal ($side)" \
		test "$(sha256sum <"/mnt/nfs/$name.data")" = "$sum"
	ms_r=$(ms_since "$t")
	check "nfs $name: no transport reconnect (mountstats: one connection)" nfs_one_connection
	grep -E 'xprt:' /proc/self/mountstats >>/kite-out/nfs-mountstats.txt
	awk -v n="$name" -v m="$mib" -v w="$ms_w" -v r="$ms_r" \
		'BEGIN { printf "%s %.1f %.1f\n", n, m * 1048.576 / (w + 1), m * 1048.576 / (r + 1) }' \
		>>/kite-out/nfs-figures.txt
}

if [ ! -x "$nfsu/usr/sbin/rpc.nfsd" ]; then
	echo "ok - nfs: NFS over RDMA # SKIP nfs-utils not unpacked ($nfsu)" >>"$KITE_RESULTS"
else
	if [ "$KITE_ROLE" = receive ]; then
		check "nfs: nfsd exports /export over RDMA (port 20049) ($rdev)" nfs_server
	else
		dd if=/dev/urandom of=/tmp/nfs-src bs=1M count=$mib status=none
		check "nfs: mount -t nfs4 -o vers=4.2,proto=rdma $rdev->$prdev" nfs_mount
	fi
	nfs_pass clean
	if [ -n "${KITE_NFS_LOSS:-}" ]; then
		pct=$((KITE_NFS_LOSS / 10))
		# Both sides lose only once the clean pass is over on both, and
		# the pass starts once both lose.
		check "nfs: the clean pass is over on both sides" pair_sync clean-done
		if [ "$KITE_NIC" = kite ]; then
			check "nfs: $rdev loses $pct% of its RoCEv2 frames" nfs_loss "$KITE_NFS_LOSS"
		fi
		check "nfs: both sides lose" pair_sync loss-on
		nfs_pass "loss$pct"
		[ "$KITE_NIC" = kite ] && check "nfs: back to no loss" nfs_loss 0
	fi
	[ "$KITE_ROLE" = send ] && check "nfs: umount" umount /mnt/nfs
fi

check "dmesg: no warning, bug, oops or leak report" dmesg_clean
check "nfs: peer finished its checks" peer_barrier "$KITE_PEER_IP"
finish
