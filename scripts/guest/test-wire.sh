#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test, run in both VMs of a two-VM topology: the wire between them
# carries traffic (virtio-net on both ends), and the Kite VM's drivers bind.
# Environment: KITE_SELF_IP, KITE_PEER_IP (addresses on the VM-only wire).
. "$KITE_ROOT/scripts/guest/lib.sh"
peer_barrier_start

# No udev in the test VMs: load the driver by hand.
modprobe virtio_net
nic=$(virtio_netdev)
check "wire: virtio-net interface present" test -n "$nic"
ip addr add "$KITE_SELF_IP/24" dev "$nic"
ip link set "$nic" up
check "wire: peer $KITE_PEER_IP answers" wait_for 90 ping -c 1 -W 1 "$KITE_PEER_IP"
check "wire: ping $KITE_PEER_IP over the dgram wire" ping -c 3 -W 2 -w 30 "$KITE_PEER_IP"
if [ -n "$(kite_bdf)" ]; then
	check "wire: kite_en and kite_ib bind in the two-VM topology" \
		bash -c "insmod $KITE_EN_KO && insmod $KITE_IB_KO && [ -e /sys/bus/auxiliary/devices/kite_en.rdma.0/driver ]"
fi
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
check "wire: peer finished its checks" peer_barrier "$KITE_PEER_IP"
finish
