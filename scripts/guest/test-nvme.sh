#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test: NVMe over RDMA over Kite, in one VM: an nvmet-rdma target on a
# memory-backed null_blk namespace, listening on the Kite port's address,
# and the nvme-rdma host connecting to it (the device loops the RoCEv2
# frames back). A few MB are written and read back and compared, then the
# host disconnects.
. "$KITE_ROOT/scripts/guest/lib.sh"

cfg=/sys/kernel/config/nvmet
check "nvme: kite_en and kite_ib load" bash -c "insmod $KITE_EN_KO && modprobe ib_uverbs && insmod $KITE_IB_KO"
nic=$(kite_netdev)
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
check "nvme: kite0 has the IPv4 GID" wait_for 10 bash -c \
	"grep -qs 0a4d:0001 /sys/class/infiniband/kite0/ports/1/gids/*"
check "nvme: null_blk (memory backed), nvmet-rdma and nvme-rdma load" bash -c \
	"modprobe null_blk nr_devices=1 gb=1 memory_backed=1 && modprobe nvmet-rdma && modprobe nvme-rdma"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
check "nvme: target subsystem with the null_blk namespace" bash -c "
	mkdir $cfg/subsystems/kite && echo 1 >$cfg/subsystems/kite/attr_allow_any_host &&
	mkdir $cfg/subsystems/kite/namespaces/1 &&
	echo /dev/nullb0 >$cfg/subsystems/kite/namespaces/1/device_path &&
	echo 1 >$cfg/subsystems/kite/namespaces/1/enable"
check "nvme: RDMA port on 10.77.0.1:4420" bash -c "
	mkdir $cfg/ports/1 && echo rdma >$cfg/ports/1/addr_trtype &&
	echo ipv4 >$cfg/ports/1/addr_adrfam && echo 10.77.0.1 >$cfg/ports/1/addr_traddr &&
	echo 4420 >$cfg/ports/1/addr_trsvcid &&
	ln -s $cfg/subsystems/kite $cfg/ports/1/subsystems/kite"
check "nvme: nvme connect -t rdma" timeout 60 nvme connect -t rdma -a 10.77.0.1 -s 4420 -n kite
check "nvme: the namespace appears" wait_for 10 bash -c "ls /dev/nvme*n1"
dev=$(ls /dev/nvme*n1 2>/dev/null | head -n 1)
head -c 8388608 /dev/urandom >/tmp/data
check "nvme: write 8 MB (O_DIRECT, 64 KiB requests)" \
	dd if=/tmp/data of="$dev" bs=64k oflag=direct status=none
check "nvme: read 8 MB back" dd if="$dev" of=/tmp/back bs=64k count=128 iflag=direct status=none
check "nvme: the data read back is the data written (sha256)" \
	test "$(sha256sum </tmp/data)" = "$(sha256sum </tmp/back)"
check "nvme: 50 random 4 KiB reads match" bash -c '
	for i in $(seq 1 50); do
		b=$((RANDOM % 2048))
		dd if='"$dev"' of=/tmp/blk bs=4k skip=$b count=1 iflag=direct status=none &&
		dd if=/tmp/data of=/tmp/want bs=4k skip=$b count=1 status=none &&
		cmp /tmp/blk /tmp/want || exit 1
	done'
check "nvme: disconnect" nvme disconnect -n kite
check "nvme: the controller is gone" bash -c "! ls /dev/nvme*n1 2>/dev/null"
check "nvme: target torn down" bash -c "
	rm $cfg/ports/1/subsystems/kite && rmdir $cfg/ports/1 &&
	echo 0 >$cfg/subsystems/kite/namespaces/1/enable &&
	rmdir $cfg/subsystems/kite/namespaces/1 && rmdir $cfg/subsystems/kite &&
	modprobe -r nvme-rdma nvmet-rdma"
check "nvme: kite_ib and kite_en unload" bash -c "rmmod kite_ib && rmmod kite_en"
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
finish
