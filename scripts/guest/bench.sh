#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Guest side of scripts/bench.sh: kernel-verbs CQ/QP create/destroy timing
# (kite_verbs_test "bench N") and 1 GiB MR registration from user space
# (kite_mr_bench). Prints the figures; fails only if something could not
# be run.
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
LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib "$KITE_MR_BENCH" -d kite0 -s 1024 -n 3 2>&1 | sed 's/^/  /'
[ "${PIPESTATUS[0]}" = 0 ] || rc=1
echo
rmmod kite_verbs_test kite_ib kite_en
exit "$rc"
