#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark of kite_ib's control path (not a test: it prints figures and
# asserts nothing about them). Boots one Kite VM with 3 GiB of memory and
# 600 2 MiB huge pages and prints:
#   - the time to create and destroy 1,000 CQs and 1,000 QPs with kernel
#     verbs (kite_verbs_test's "bench" case set), per operation;
#   - the time to register and deregister a 1 GiB MR from user space
#     through libibverbs and libkite (tools/testing/kite/kite_mr_bench.c),
#     with 4 KiB pages and with 2 MiB pages;
#   - the providers' instructions per send posted (ibv_post_send and the
#     ibv_wr_* API) and per completion polled (ibv_poll_cq and the extended
#     CQ API), counted by callgrind over UD
#     messages the device loops back (tools/testing/kite/kite_dp_bench.c):
#     libkite on kite0 beside librxe on rxe0 (rdma_rxe on a virtio-net NIC).
# The VM's logs are kept in $KITE_CACHE/logs/bench.
#
# usage: bench.sh [N]     N: CQs and QPs to create (default 1000)
set -euo pipefail
. "$(dirname "$0")/vm.sh"

n=${1:-1000}
"$KITE_ROOT/scripts/setup-host.sh" >&2
log "building QEMU, the modules, the test programs and the initramfs"
vm_prepare
dir=$KITE_CACHE/logs/bench
log "booting (the benchmark takes a few minutes under TCG)"
port=$((20000 + RANDOM % 20000))
group=239.255.$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
vm_start bench "$dir" "$KITE_ROOT/scripts/guest/bench.sh" --kite \
	--virtio-net "mcast:$group:$port" \
	--env KITE_BENCH_N="$n" \
	-- -m 3G
rc=0
vm_wait bench "${KITE_BENCH_TIMEOUT:-1200}" || rc=$?
cat "$dir/guest.log" 2>/dev/null || true
[ "$rc" = 0 ] || die "the benchmark VM failed (status $rc); see $dir"
