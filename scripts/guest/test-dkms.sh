#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test: the drivers as the kite-dkms package installed them on the host
# (scripts/build-deb.sh; the guest's root is the host's): modprobe finds
# kite_en and kite_ib under /lib/modules/<release>/updates/dkms through
# the host's own module index, kite0 comes up, and rdma and ibv_devinfo
# show it. Nothing of the build tree's modules is used.
. "$KITE_ROOT/scripts/guest/lib.sh"

kver=$(uname -r)
check "dkms: the package's modules are in the host's module tree" bash -c \
	"ls /lib/modules/$kver/updates/dkms/kite_en.ko* /lib/modules/$kver/updates/dkms/kite_ib.ko*"
check "dkms: modprobe kite_ib resolves to the DKMS build (and kite_en with it)" bash -c \
	"modinfo -n kite_ib | grep -q /updates/dkms/ && modinfo -n kite_en | grep -q /updates/dkms/"
check "dkms: modprobe kite_ib loads kite_en and kite_ib" modprobe kite_ib
check "dkms: both loaded from the DKMS build" bash -c \
	"grep -qE '^kite_en ' /proc/modules && grep -qE '^kite_ib ' /proc/modules"
check "dkms: kite0 registered" wait_for 10 test -d /sys/class/infiniband/kite0
nic=$(kite_netdev)
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
check "dkms: rdma link shows kite0/1 ACTIVE on the Kite netdev" wait_for 10 bash -c \
	"rdma link show kite0/1 | grep -q 'state ACTIVE.*netdev $nic'"
check "dkms: ibv_devinfo shows kite0, its port active" bash -c \
	"LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib $KITE_RDMA_CORE/bin/ibv_devinfo -d kite0 | tee /kite-out/ibv_devinfo.txt | grep -q 'state:.*PORT_ACTIVE'"
check "dkms: the modules unload" modprobe -r kite_ib kite_en
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
finish
