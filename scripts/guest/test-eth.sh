#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test, run in both VMs of a two-VM topology: ping and a 4 MB TCP
# transfer, compared by SHA-256, between this VM's NIC and the peer's.
# Environment: KITE_SELF_IP, KITE_PEER_IP, KITE_ROLE (send or receive),
# KITE_NIC (kite or virtio).
. "$KITE_ROOT/scripts/guest/lib.sh"
peer_barrier_start

if [ "$KITE_NIC" = kite ]; then
	check "eth: kite_en loads" insmod "$KITE_EN_KO"
	nic=$(kite_netdev)
else
	modprobe virtio_net
	nic=$(for d in /sys/class/net/*; do
		[ "$(basename "$(readlink "$d/device/driver")")" = virtio_net ] && basename "$d"
	done | head -n 1)
fi
check "eth: $KITE_NIC interface present" test -n "$nic"
ip addr add "$KITE_SELF_IP/24" dev "$nic"
ip link set "$nic" up
check "eth: $KITE_NIC carrier up" wait_for 10 grep -qx 1 "/sys/class/net/$nic/carrier"
# The peer may still be booting: wait for its first answer.
check "eth: peer $KITE_PEER_IP answers" wait_for 90 ping -c 1 -W 1 "$KITE_PEER_IP"
check "eth: ping $KITE_PEER_IP" ping -c 5 -W 2 -w 30 "$KITE_PEER_IP"
check "eth: 1400-byte pings" ping -c 3 -s 1400 -W 2 -w 30 "$KITE_PEER_IP"

size=4000000
make_data "$size" 700000 >/tmp/expect
if [ "$KITE_ROLE" = receive ]; then
	timeout 120 socat -u TCP-LISTEN:5001,reuseaddr OPEN:/tmp/rx,creat,trunc &
	lpid=$!
	wait "$lpid"
	check "eth: 4 MB TCP transfer received" test "$?" = 0
	check "eth: received data matches (sha256)" \
		test "$(sha256sum </tmp/rx)" = "$(sha256sum </tmp/expect)"
else
	sent=1
	for i in $(seq 1 50); do
		timeout 120 socat -u OPEN:/tmp/expect TCP:"$KITE_PEER_IP":5001 2>/dev/null && { sent=0; break; }
		sleep 0.3
	done
	check "eth: 4 MB TCP transfer sent" test "$sent" = 0
fi
if [ "$KITE_NIC" = kite ]; then
	check "eth: no RX/TX errors counted" \
		bash -c "ethtool -S $nic | awk '/_errors:/ && \$2 != 0 { bad = 1 } END { exit bad }'"
fi
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
check "eth: peer finished its checks" peer_barrier "$KITE_PEER_IP"
finish
