#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Benchmark of kite_ib's control path (not a test: it prints figures and
# asserts nothing about them). Boots one Kite VM with 3 GiB of memory and
# 600 2 MiB huge pages and prints:
#   - the time to create and destroy 1,000 CQs and 1,000 QPs with kernel
#     verbs (kite_verbs_test's "bench" case set), per operation;
#   - the time to register and deregister a 1 GiB MR from user space
#     through libibverbs and libkite (tools/testing/kite/kite_mr_bench.c),
#     with 4 KiB pages and with 2 MiB pages.
# The VM's logs are kept in $KITE_CACHE/logs/bench.
#
# usage: bench.sh [N]     N: CQs and QPs to create (default 1000)
set -euo pipefail
. "$(dirname "$0")/vm.sh"

n=${1:-1000}
"$KITE_ROOT/scripts/setup-host.sh" >&2
rdma_core=$("$KITE_ROOT/scripts/build-rdma-core.sh" | tail -n 1)
bindir=$KITE_CACHE/build/tools
mkdir -p "$bindir"
log "building kite_mr_bench against $rdma_core"
cc -O2 -Wall -Wextra -Werror -I"$rdma_core/include" \
	-o "$bindir/kite_mr_bench" "$KITE_ROOT/tools/testing/kite/kite_mr_bench.c" \
	-L"$rdma_core/lib" -Wl,-rpath,"$rdma_core/lib" -libverbs
log "building QEMU, the modules and the initramfs"
vm_prepare
dir=$KITE_CACHE/logs/bench
log "booting (the benchmark takes a few minutes under TCG)"
vm_start bench "$dir" "$KITE_ROOT/scripts/guest/bench.sh" --kite \
	--env KITE_BENCH_N="$n" --env KITE_MR_BENCH="$bindir/kite_mr_bench" \
	-- -m 3G
rc=0
vm_wait bench "${KITE_BENCH_TIMEOUT:-1200}" || rc=$?
cat "$dir/guest.log" 2>/dev/null || true
[ "$rc" = 0 ] || die "the benchmark VM failed (status $rc); see $dir"
