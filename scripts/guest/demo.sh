#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The main job, in the guest: load the Kite drivers and show what they
# registered. Output goes to the console.
exec >/dev/ttyS0 2>&1
step() { printf '\n\033[1m### %s\033[0m\n' "$*"; }
export LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib

step "The Kite PCI function"
lspci -nn -d 1ee7:4b01 -vv | grep -E '^[0-9a-f]|Region|MSI-X|Kernel'
step "insmod kite_en.ko kite_ib.ko"
modprobe -q ib_uverbs
insmod "$KITE_MODDIR/drivers/net/ethernet/kite/kite_en.ko" || exit 1
insmod "$KITE_MODDIR/drivers/infiniband/hw/kite/kite_ib.ko" || exit 1
lspci -nn -d 1ee7:4b01 -vv | grep -E 'MSI-X|Kernel driver'
nic=$(for d in /sys/class/net/*; do
	[ "$(basename "$(readlink "$d/device/driver" 2>/dev/null)")" = kite_en ] && basename "$d"
done | head -n 1)
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
step "The auxiliary device and its driver"
ls -l /sys/bus/auxiliary/devices/
readlink -f /sys/bus/auxiliary/devices/kite_en.rdma.0/driver
step "dmesg | grep kite"
dmesg | grep -E 'kite'
step "rdma link"
for i in $(seq 1 20); do rdma link | grep -q ACTIVE && break; sleep 0.5; done
rdma link
step "rdma dev; rdma res"
rdma dev
rdma res
step "ibv_devinfo -v"
"$KITE_RDMA_CORE/bin/ibv_devinfo" -v
true
