#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test: NVMe over RDMA over Kite, in one VM: an nvmet-rdma target on a
# memory-backed null_blk namespace, listening on the Kite port's address,
# and the nvme-rdma host connecting to it (the device loops the RoCEv2
# frames back). A few MB are written and read back and compared, and
# written and verified again through a polled queue (the host's CQ polled
# in process context, IB_POLL_DIRECT: io_uring with hipri), then the host
# disconnects; then the same with the target using shared receive queues
# (use_srq=1).
. "$KITE_ROOT/scripts/guest/lib.sh"

check "nvme: kite_en and kite_ib load" bash -c "insmod $KITE_EN_KO && modprobe ib_uverbs && insmod $KITE_IB_KO"
nic=$(kite_netdev)
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
check "nvme: kite0 has the IPv4 GID" wait_for 10 bash -c \
	"grep -qs 0a4d:0001 /sys/class/infiniband/kite0/ports/1/gids/*"
check "nvme: target: subsystem with a null_blk namespace on 10.77.0.1:4420" nvme_target 10.77.0.1
check "nvme: nvme-rdma loads" modprobe nvme-rdma
check "nvme: nvme connect -t rdma, with a poll queue" timeout $((60 * KITE_SCALE)) \
	nvme connect -t rdma -a 10.77.0.1 -s 4420 -n kite --nr-poll-queues=1
check "nvme: the host mapped one poll queue" bash -c \
	"dmesg | grep -Eq 'mapped [0-9]+/[0-9]+/1 default/read/poll queues'"
check "nvme: the namespace appears" wait_for 10 bash -c "ls /dev/nvme*n1"
dev=$(ls /dev/nvme*n1 2>/dev/null | head -n 1)
check "nvme: 8 MB written (O_DIRECT, 64 KiB requests), read back, compared (sha256)" nvme_io "$dev" 8
check "nvme: 50 random 4 KiB reads match" bash -c '
	for i in $(seq 1 50); do
		b=$((RANDOM % 2048))
		dd if='"$dev"' of=/tmp/blk bs=4k skip=$b count=1 iflag=direct status=none &&
		dd if=/tmp/nvme-data of=/tmp/want bs=4k skip=$b count=1 status=none &&
		cmp /tmp/blk /tmp/want || exit 1
	done'
# io_uring refuses hipri (EOPNOTSUPP) on a queue that cannot be polled.
check "nvme: polled I/O (io_uring, hipri): 4 MB of random 4 KiB writes verified by reads (crc32c)" \
	timeout $((120 * KITE_SCALE)) fio --name=poll --filename="$dev" --ioengine=io_uring --hipri \
	--direct=1 --rw=randwrite --bs=4k --size=4m --iodepth=8 --verify=crc32c --do_verify=1 \
	--verify_fatal=1 --output=/tmp/fio-poll.log
check "nvme: disconnect" nvme disconnect -n kite
check "nvme: the controller is gone" bash -c "! ls /dev/nvme*n1 2>/dev/null"
check "nvme: target torn down" nvme_target_remove

# Again with the target's receive buffers in shared receive queues
# (nvmet-rdma use_srq=1: one SRQ per completion vector, every queue's
# commands received from it).
check "nvme use_srq: nvmet-rdma loads with use_srq=1" modprobe nvmet-rdma use_srq=1
check "nvme use_srq: target on 10.77.0.1:4420" nvme_target 10.77.0.1
check "nvme use_srq: nvme connect -t rdma" timeout 60 nvme connect -t rdma -a 10.77.0.1 -s 4420 -n kite
check "nvme use_srq: the target's SRQs are on the device (rdma res show srq)" bash -c \
	"rdma res show srq dev kite0 | grep -q 'srqn'"
check "nvme use_srq: the namespace appears" wait_for 10 bash -c "ls /dev/nvme*n1"
dev=$(ls /dev/nvme*n1 2>/dev/null | head -n 1)
check "nvme use_srq: 8 MB written, read back, compared (sha256)" nvme_io "$dev" 8
check "nvme use_srq: disconnect" nvme disconnect -n kite
check "nvme use_srq: the controller is gone" bash -c "! ls /dev/nvme*n1 2>/dev/null"
check "nvme use_srq: target torn down" nvme_target_remove
check "nvme use_srq: no SRQ left on the device" bash -c \
	"! rdma res show srq dev kite0 | grep -q srqn"
check "nvme: nvme-rdma unloads" modprobe -r nvme-rdma
check "nvme: kite_ib and kite_en unload" bash -c "rmmod kite_ib && rmmod kite_en"
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
finish
