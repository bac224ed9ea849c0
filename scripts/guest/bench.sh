#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Guest side of scripts/bench.sh: kernel-verbs CQ/QP create/destroy timing
# (kite_verbs_test "bench N"), 1 GiB MR registration from user space
# (kite_mr_bench) and libkite's instructions per ibv_post_send and
# ibv_poll_cq under callgrind (kite_dp_bench). Prints the figures; fails
# only if something could not be run.
. "$KITE_ROOT/scripts/guest/lib.sh"

run=/sys/module/kite_verbs_test/parameters/run
n=${KITE_BENCH_N:-1000}
rc=0

insmod "$KITE_EN_KO" && insmod "$KITE_IB_KO" &&
	insmod "$KITE_TESTMOD_DIR/kite_verbs_test.ko" || exit 1
wait_for 10 test -d /sys/class/infiniband/kite0 || exit 1
# 1 GiB of 2 MiB pages, and some to spare.
echo 600 >/proc/sys/vm/nr_hugepages

echo "== Kite control-path benchmark (QEMU TCG, 1 vCPU; figures, not assertions)"
echo "guest: $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo) of memory," \
	"$(cat /proc/sys/vm/nr_hugepages) 2 MiB huge pages reserved"
echo
echo "-- kernel verbs ($n CQs, then $n QPs; kite_verbs_test)"
kite_mark bench
echo "bench $n" >"$run"
kernel_log_since bench | sed -n 's/^\[[^]]*\] kite_verbs_test: bench: /  /p'
kernel_log_since bench | grep -q 'kite_verbs_test: done bench: [0-9]* cases, 0 failed' || {
	echo "  FAILED:"
	kernel_log_since bench | grep 'kite_verbs_test: \(not ok\|#\)' | sed 's/^/    /'
	rc=1
}
echo
echo "-- user space MR registration (ibv_reg_mr/ibv_dereg_mr through libkite)"
LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib "$KITE_TOOLS/kite_mr_bench" -d kite0 -s 1024 -n 3 2>&1 | sed 's/^/  /'
[ "${PIPESTATUS[0]}" = 0 ] || rc=1
echo
echo "-- libkite data path: instructions per call (callgrind, UD loopback; kite_dp_bench)"
nic=$(kite_netdev)
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
wait_for 10 grep -qs 0a4d:0001 /sys/class/infiniband/kite0/ports/1/gids/1
if out=$(LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib valgrind --tool=callgrind \
	--callgrind-out-file=/tmp/dp.cg "$KITE_TOOLS/kite_dp_bench" -d kite0 -g 1 -n 1000 2>/tmp/dp.err); then
	echo "  $out"
	callgrind_annotate --inclusive=yes /tmp/dp.cg 2>/dev/null >/tmp/dp.txt
	ir() { awk -v f="$1" '$0 ~ "[^A-Za-z_]" f " " || $0 ~ "[^A-Za-z_]" f "$" { gsub(",", "", $1); print $1; exit }' /tmp/dp.txt; }
	set -- $out
	ps=$(ir kite_post_send) pc=$(ir kite_poll_cq)
	echo "  kite_post_send: ${ps:-?} instructions in $4 calls: $(( ${ps:-0} / $4 )) per ibv_post_send"
	echo "  kite_poll_cq: ${pc:-?} instructions in $6 calls ($8 with completions), ${10} completions:" \
		"$(( ${pc:-0} / $6 )) per ibv_poll_cq, $(( ${pc:-0} / ${10} )) per completion"
else
	echo "  FAILED:"; tail -5 /tmp/dp.err | sed 's/^/    /'
	rc=1
fi
echo
rmmod kite_verbs_test kite_ib kite_en
exit "$rc"
