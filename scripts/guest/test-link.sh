#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test, run in both VMs of a two-Kite-VM topology: the wire is cut
# (QEMU "set_link off" on the sending VM's Kite NIC) while RC traffic is in
# flight, first from user space, then under the kernel's NVMe over RDMA
# host. Outstanding work must complete with transport-retry-exceeded
# errors, the QPs must reach ERROR, and after "set_link on" new connections
# must work and the data must be intact.
# Environment: KITE_SELF_IP, KITE_PEER_IP, KITE_ROLE (send or receive).
. "$KITE_ROOT/scripts/guest/lib.sh"
peer_barrier_start

check "link: kite_en and kite_ib load" bash -c "insmod $KITE_EN_KO && insmod $KITE_IB_KO"
modprobe rdma_ucm
nic=$(kite_netdev)
ip addr add "$KITE_SELF_IP/24" dev "$nic"
ip link set "$nic" up
check "link: carrier up" wait_for 10 grep -qx 1 "/sys/class/net/$nic/carrier"
check "link: peer $KITE_PEER_IP answers" wait_for 90 ping -c 1 -W 1 "$KITE_PEER_IP"

stream() { LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib "$KITE_TOOLS/kite_rc_stream" "$@"; }
port_state() { rdma link show kite0/1 | grep -q "state $1"; }

# 1. User space: kite_rc_stream keeps 16 RDMA WRITEs of 16 KiB in flight
# (acknowledge timeout 4.096 us * 2^17 from rdma_cm, retry_cnt 7). The
# sender cuts its own link once 64 writes have completed; the server of the
# cut stream is left to its timeout. A second server takes the connection
# made after the link is back.
if [ "$KITE_ROLE" = receive ]; then
	stream -s "$KITE_SELF_IP" -P 18601 -T 150 >/kite-out/stream-cut-server.log 2>&1 &
	stream -s "$KITE_SELF_IP" -P 18602 -T 200 >/kite-out/stream-after-server.log 2>&1 &
	spid=$!
	wait "$spid"
	check "link: after set_link on, a new RC connection's 500 writes arrive intact (server)" \
		grep -q 'server: 500 writes of 16384 bytes, data verified' /kite-out/stream-after-server.log
else
	rm -f /tmp/progress
	# Retry until the server listens: a refused client exits at once.
	: >/kite-out/stream-cut.log
	ok=1
	for i in $(seq 1 30); do
		# The program itself in the background (not the stream function,
		# whose subshell a kill would leave it running behind).
		LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib "$KITE_TOOLS/kite_rc_stream" -c "$KITE_PEER_IP" \
			-P 18601 -n 1000000 -w 16 -p /tmp/progress -e -T 120 \
			>>/kite-out/stream-cut.log 2>&1 &
		cpid=$!
		wait_for 30 bash -c "test -s /tmp/progress || ! kill -0 $cpid"
		# Running: it has made progress and has not exited.
		[ -s /tmp/progress ] && ! exited "$cpid" && { ok=0; break; }
		kill "$cpid" 2>/dev/null
		wait "$cpid" 2>/dev/null
		rm -f /tmp/progress
		sleep 1
	done
	check "link: RC write stream to the peer is running" test "$ok" = 0
	check "link: the stream has 64 writes completed" wait_for 60 \
		bash -c '[ "$(cat /tmp/progress)" -ge 64 ]'
	check "link: set_link off" host_monitor "set_link n1 off"
	check "link: the port goes DOWN" wait_for 10 port_state DOWN
	wait "$cpid"
	sed 's/^/    /' /kite-out/stream-cut.log
	# The tool's own verdict (an earlier, killed attempt may have written
	# to the log too).
	check "link: outstanding writes: RETRY_EXC, then the rest flushed, QP in ERR" \
		grep -q 'the stream ended as a cut wire must end it: yes' /kite-out/stream-cut.log
	check "link: the client reported transport retry counter exceeded" \
		grep -q 'transport retry counter exceeded' /kite-out/stream-cut.log
	check "link: set_link on" host_monitor "set_link n1 on"
	check "link: the port is ACTIVE again" wait_for 20 port_state ACTIVE
	check "link: the peer answers again" wait_for 30 ping -c 1 -W 1 "$KITE_PEER_IP"
	ok=1
	for i in $(seq 1 20); do
		stream -c "$KITE_PEER_IP" -P 18602 -n 500 -w 16 -T 120 >/kite-out/stream-after.log 2>&1 &&
			{ ok=0; break; }
		sleep 1
	done
	check "link: after set_link on, a new RC connection completes 500 writes (client)" test "$ok" = 0
fi

# 2. The kernel's NVMe over RDMA host (the sender) against the receiver's
# nvmet-rdma target: a 16 MB O_DIRECT write is in progress when the link
# goes down. nvme-rdma's queues see their work complete with "transport
# retry counter exceeded", the controller reconnects (every second) once
# the link is back, the write completes and reads back intact.
if [ "$KITE_ROLE" = receive ]; then
	check "nvme: target on $KITE_SELF_IP:4420" nvme_target "$KITE_SELF_IP"
else
	check "nvme: nvme connect -t rdma (reconnect-delay 1 s)" \
		nvme_connect "$KITE_PEER_IP" --reconnect-delay=1 --ctrl-loss-tmo=120
	check "nvme: the namespace appears" wait_for 10 bash -c "ls /dev/nvme*n1"
	dev=$(ls /dev/nvme*n1 2>/dev/null | head -n 1)
	head -c $((16 * 1048576)) /dev/urandom >/tmp/nvme-data
	kite_mark nvme-cut
	dd if=/tmp/nvme-data of="$dev" bs=64k oflag=direct status=none &
	ddpid=$!
	sleep 1
	check "nvme: set_link off during the write" host_monitor "set_link n1 off"
	check "nvme: the host's RDMA work completes with transport retry counter exceeded" \
		wait_for 60 since_mark nvme-cut 'failed with status transport retry counter exceeded'
	check "nvme: the controller starts error recovery" \
		wait_for 30 since_mark nvme-cut 'starting error recovery|Reconnecting in'
	check "nvme: set_link on" host_monitor "set_link n1 on"
	check "nvme: the controller reconnects" \
		wait_for 90 since_mark nvme-cut 'Successfully reconnected'
	wait_for 120 exited "$ddpid"
	wait "$ddpid"
	check "nvme: the interrupted 16 MB write completes" test "$?" = 0
	check "nvme: the 16 MB read back match (sha256)" bash -c \
		"dd if=$dev of=/tmp/nvme-back bs=64k count=256 iflag=direct status=none &&
		 test \"\$(sha256sum </tmp/nvme-data)\" = \"\$(sha256sum </tmp/nvme-back)\""
	check "nvme: disconnect" nvme disconnect -n kite
	kernel_log_since nvme-cut | grep -E 'nvme|kite' | head -n 40 >/kite-out/nvme-cut.log
fi

check "dmesg: no warning, bug, oops or leak report" dmesg_clean
check "link: peer finished its checks" peer_barrier "$KITE_PEER_IP"
if [ "$KITE_ROLE" = receive ]; then
	check "nvme: target removed" nvme_target_remove
fi
finish
