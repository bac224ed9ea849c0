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
# With KITE_NFS_LOSS=PERMILLE[,PERMILLE...], a pass follows for each rate,
# with every Kite device losing that much of the frames it sends (and
# receives, when its peer is rdma_rxe) and duplicating and reordering 0.5%
# (the model's loss-* properties), from the start of the write to the end
# of the read-back.
# Environment: as test-eth.sh, and KITE_NFS_LOSS.
. "$KITE_ROOT/scripts/guest/lib.sh"
peer_barrier_start
socat -u UDP-RECV:7778 OPEN:/tmp/kite-sync,creat,append &

# pair_sync NAME [SECONDS]: return once the peer has reached pair_sync NAME
# too (or after SECONDS, default 120, failing).
pair_sync() {
	local i
	for i in $(seq 1 $((2 * ${2:-120}))); do
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
# The passes after the clean one (each leaves its file on the server).
npass=$(echo "${KITE_NFS_LOSS:-}" | tr ',' '\n' | grep -c .)
pair_nic_up
pair_roce_up
side=client
[ "$KITE_ROLE" = receive ] && side=server

# nfs_trace_on: record the kernel's trace events that tell why an RPC
# transport disconnects (RDMA CM events, RPC-over-RDMA completion errors
# and flushes, QP events, RPC timeouts), for /kite-out/nfs-trace.txt.
nfs_trace_on() {
	local t=/sys/kernel/tracing e
	[ -e $t/set_event ] || mount -t tracefs nodev $t 2>/dev/null || return 0
	for e in $t/events/rdma_cma/enable $t/events/rpcrdma/*_err/enable \
		$t/events/rpcrdma/*flush*/enable $t/events/rpcrdma/*qp_error/enable \
		$t/events/rpcrdma/*qp_event/enable $t/events/rpcrdma/*disconnect*/enable \
		$t/events/rpcrdma/*close*/enable $t/events/rpcrdma/*_timeout/enable \
		$t/events/sunrpc/xprt_disconnect*/enable $t/events/sunrpc/rpc_timeout_status/enable; do
		[ -e "$e" ] && echo 1 >"$e"
	done
	# Who closes a server transport (with the call stack).
	if [ -e $t/events/sunrpc/svc_xprt_close/enable ]; then
		echo stacktrace >$t/events/sunrpc/svc_xprt_close/trigger
		echo 1 >$t/events/sunrpc/svc_xprt_close/enable
	fi
	# The completions that failed (the client's have no error events).
	for e in $t/events/rpcrdma/xprtrdma_wc_*; do
		[ -e "$e/filter" ] && echo 'status != 0' >"$e/filter" && echo 1 >"$e/enable"
	done
	echo 4096 >$t/buffer_size_kb
}

# nfs_server: export /export (a tmpfs) to the peer, NFSv4 only, over RDMA
# and TCP. A 10 s grace period (instead of 90 s) lets the client write soon.
nfs_server() {
	modprobe nfsd && modprobe rpcrdma || return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	mkdir -p /export /var/lib/nfs/v4recovery &&
		mount -t tmpfs -o size=$(((3 + npass) * mib))m tmpfs /export || return 1
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
		timeout $((60 * KITE_SCALE)) "$nfsu/sbin/mount.nfs4" "$KITE_PEER_IP:/" /mnt/nfs \
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

# nfs_connections: how many times the mount's RDMA transports connected.
nfs_connections() {
	awk '$1 == "xprt:" && $2 == "rdma" { n += $5 } END { print n + 0 }' /proc/self/mountstats
}

# ms_since NS: milliseconds since date +%s%N printed NS.
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# nfs_pass NAME: the client writes $mib MiB, tells the server its SHA-256
# (a file renamed into place), and reads the data back after a remount; the
# server checks the file against the SHA-256. Figures: NAME, then the
# write's and the read's MB/s. With loss passes to follow, both sides
# then wait for each other (the client's read-back is part of the pass).
nfs_pass() {
	local name=$1
	if [ "$KITE_ROLE" = receive ]; then
		check "nfs $name: the client's data arrived ($side)" \
			wait_for 600 test -s "/export/$name.sha256"
		check "nfs $name: $mib MiB on the server match the client's SHA-256 ($side)" \
			test "$(sha256sum <"/export/$name.data")" = "$(cat "/export/$name.sha256")"
	else
		nfs_client_pass "$name"
	fi
	if [ -n "${KITE_NFS_LOSS:-}" ]; then
		check "nfs $name: the pass is over on both sides ($side)" pair_sync "$name-done" 600
	fi
}

nfs_client_pass() {
	local name=$1 t ms_w ms_r sum
	sum=$(sha256sum </tmp/nfs-src)
	# Out of the timing: a first OPEN waits for the end of the server's
	# grace period (10 s after nfsd starts).
	: >"/mnt/nfs/$name.open"
	t=$(date +%s%N)
	check "nfs $name: write $mib MiB ($side)" \
		bash -c "cp /tmp/nfs-src /mnt/nfs/$name.data && sync"
	ms_w=$(ms_since "$t")
	echo "$sum" >"/mnt/nfs/$name.sha256.tmp" && mv "/mnt/nfs/$name.sha256.tmp" "/mnt/nfs/$name.sha256"
	# rdma_rxe, the comparison, reconnects now and then on the VM wire's
	# own losses: for it the count is a figure.
	if [ "$KITE_NIC" = kite ]; then
		check "nfs $name: no transport reconnect in the write (mountstats: one connection)" \
			nfs_one_connection
	else
		echo "# nfs $name: rdma_rxe's write: $(nfs_connections) RDMA connection(s)" \
			>>"$KITE_RESULTS"
	fi
	grep -E 'xprt:' /proc/self/mountstats >>/kite-out/nfs-mountstats.txt
	# Read from the server, not from this VM's page cache.
	umount /mnt/nfs && nfs_mount
	t=$(date +%s%N)
	check "nfs $name: read back $mib MiB, SHA-256 equal ($side)" \
		test "$(sha256sum <"/mnt/nfs/$name.data")" = "$sum"
	ms_r=$(ms_since "$t")
	check "nfs $name: no transport reconnect in the read (mountstats: one connection)" \
		nfs_one_connection
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
	nfs_trace_on
	nfs_pass clean
	[ "$KITE_NIC" = kite ] && rc_counts_diag "nfs clean: $rdev's RC transport ($side)"
	# Each loss pass: both sides lose once the pass before is over on
	# both (the client's read-back included), and the pass starts once
	# both lose.
	for permille in ${KITE_NFS_LOSS//,/ }; do
		pct=$((permille / 10))
		if [ "$KITE_NIC" = kite ]; then
			check "nfs: $rdev loses $pct% of its RoCEv2 frames" \
				pair_loss "$permille" "$((permille + 7 + ${KITE_SELF_IP##*.}))" 5
		fi
		check "nfs: both sides lose $pct%" pair_sync "loss$pct-on"
		nfs_pass "loss$pct"
		[ "$KITE_NIC" = kite ] && check "nfs: $pct% loss over, back to none" pair_loss 0 1 0
		[ "$KITE_NIC" = kite ] && rc_counts_diag "nfs loss$pct: $rdev's RC transport ($side)"
	done
	[ "$KITE_ROLE" = send ] && check "nfs: umount" umount /mnt/nfs
	cp /sys/kernel/tracing/trace /kite-out/nfs-trace.txt 2>/dev/null
fi

check "dmesg: no warning, bug, oops or leak report" dmesg_clean
check "nfs: peer finished its checks" peer_barrier "$KITE_PEER_IP"
finish
