#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test: kite_uverbs_fuzz drives kite_ib through /dev/infiniband/uverbs*
# with random command sequences, udata, attribute masks, mmap()s and
# doorbells (tools/testing/kite/kite_uverbs_fuzz.c). Afterwards the RDMA
# core's resource counts are back where they started, the device's
# object tables are whole, the kernel log has no splat, an ordinary
# libkite program still works, and the modules unload.
#
# Environment (the defaults are the short run of make check):
#   KITE_FUZZ_SEEDS    seeds of the single-threaded runs ("1 2 3")
#   KITE_FUZZ_CALLS    calls per run (1500)
#   KITE_FUZZ_SECONDS  time limit per run (120)
#   KITE_FUZZ_MODE     "long": one single-threaded run of KITE_FUZZ_CALLS
#                      calls per seed (scripts/fuzz.sh), then the same
#                      checks
#   KITE_FUZZ_THREADS  long mode: the runs with this many threads on one
#                      context (--threads), racing destroys
. "$KITE_ROOT/scripts/guest/lib.sh"

seeds=${KITE_FUZZ_SEEDS:-1 2 3}
calls=${KITE_FUZZ_CALLS:-1500}
secs=${KITE_FUZZ_SECONDS:-120}
fuzz=$KITE_TOOLS/kite_uverbs_fuzz

check "uvfuzz: kite_en and kite_ib load" bash -c "insmod $KITE_EN_KO && insmod $KITE_IB_KO"
check "uvfuzz: kite0 registered" wait_for 10 test -d /sys/class/infiniband/kite0
nic=$(kite_netdev)
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
check "uvfuzz: IPv4 GID present" wait_for 10 grep -qs '0000:0000:0000:0000:0000:ffff:0a4d:0001' \
	/sys/class/infiniband/kite0/ports/1/gids/1 /sys/class/infiniband/kite0/ports/1/gids/2

# The kernel's own objects (ib_mad's QP1 and its CQ and PD) stay; the
# counts of every type must be these again afterwards.
res_counts() { rdma res show | grep ' kite0:'; }
wait_for 10 res_counts || true
res0=$(res_counts)
echo "rdma res before: $res0"

# fuzz NAME ARGS...: one run; its output goes to /kite-out/uvfuzz-NAME.log
# and its summary line to the guest log.
fuzz() {
	local name=$1 st
	shift
	timeout $((secs + 120)) "$fuzz" -d kite0 --seconds "$secs" "$@" >"/kite-out/uvfuzz-$name.log" 2>&1
	st=$?
	grep -E '^kite_uverbs_fuzz: seed|^INCONSISTENCY' "/kite-out/uvfuzz-$name.log"
	return "$st"
}

kite_mark fuzz
if [ "${KITE_FUZZ_MODE:-}" = long ]; then
	threads=()
	[ -n "${KITE_FUZZ_THREADS:-}" ] && threads=(--threads "$KITE_FUZZ_THREADS")
	for s in $seeds; do
		check "uvfuzz: long run, seed $s, $calls calls${threads:+, ${threads[*]}}: no inconsistency" \
			fuzz "long-$s" --seed "$s" --calls "$calls" "${threads[@]}"
		cat "/kite-out/uvfuzz-long-$s.log"
	done
else
	for s in $seeds; do
		check "uvfuzz: seed $s, $calls calls: no inconsistency" \
			fuzz "seed-$s" --seed "$s" --calls "$calls"
	done
	check "uvfuzz: --threads 2 (shared context, racing destroys), $calls calls" \
		fuzz threads --seed 11 --calls "$calls" --threads 2
	check "uvfuzz: --fork-exit 6 (children exit or are killed with objects alive), $calls calls" \
		fuzz fork-exit --seed 21 --calls "$calls" --fork-exit 6
fi
for f in /kite-out/uvfuzz-*.log; do
	grep -E '^kite_uverbs_fuzz: seed' "$f"
done

res1() { test "$(res_counts)" = "$res0"; }
check "uvfuzz: rdma res back to its starting counts ($res0)" wait_for 20 res1
echo "rdma res after: $(res_counts)"
check "uvfuzz: no warning, bug, oops or leak report in the kernel log" dmesg_clean
no_driver_errors() { ! kernel_log_since fuzz | grep -E '(kite_ib|infiniband kite0).*(timed out|failed|error|in use)'; }
check "uvfuzz: no command time-out, failure or number clash logged by kite_ib" no_driver_errors

# Nothing leaked inside the device either: its CQ, QP and PD tables hold
# what QUERY_DEVICE promises again (kite_verbs_test's capacity set fills
# each one with kernel verbs).
kite_mark capacity
if insmod "$KITE_TESTMOD_DIR/kite_verbs_test.ko"; then
	echo capacity >/sys/module/kite_verbs_test/parameters/run
	rmmod kite_verbs_test
fi
check "uvfuzz: the device's CQ, QP and PD tables are whole (kite_verbs_test capacity)" \
	since_mark capacity 'kite_verbs_test: done capacity: [0-9]+ cases, 0 failed'
kernel_log_since capacity | grep 'kite_verbs_test: \(not ok\|#\)'

# An ordinary application on libkite still works: ibv_rc_pingpong in
# loopback through the device.
gidx=$(grep -l '0000:0000:0000:0000:0000:ffff:0a4d:0001' /sys/class/infiniband/kite0/ports/1/gids/* |
	head -n 1 | xargs -r basename)
rcpp=$KITE_RDMA_CORE/bin/ibv_rc_pingpong
LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((60 * KITE_SCALE)) "$rcpp" -d kite0 -g "$gidx" -n 100 -s 4096 \
	>/kite-out/uvfuzz-rcpp-server.log 2>&1 &
server=$!
wait_for 10 listening 18515
check "uvfuzz: afterwards ibv_rc_pingpong (100 x 4096 bytes, loopback) works" \
	bash -c "LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((60 * KITE_SCALE)) $rcpp -d kite0 -g $gidx -n 100 -s 4096 127.0.0.1 >/kite-out/uvfuzz-rcpp-client.log 2>&1"
wait "$server"
check "uvfuzz: ibv_rc_pingpong: the server side completes too" test "$?" = 0

check "uvfuzz: kite_ib and kite_en unload" bash -c "rmmod kite_ib && rmmod kite_en"
check "uvfuzz: dmesg clean after unload" dmesg_clean
finish
