#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The long run of kite_uverbs_fuzz (make fuzz): boots one Kite VM and runs
# scripts/guest/test-uvfuzz.sh with KITE_FUZZ_MODE=long: one seeded,
# single-threaded run of N calls (default 100,000) of random uverbs
# commands, udata, mmap()s and doorbells, then the checks of the short run
# (rdma res back to its starting counts, no splat, ibv_rc_pingpong works,
# the modules unload). Prints the fuzzer's per-command table and its
# figures: calls, objects created, seconds, calls per second.
# The VM's logs are kept in $KITE_CACHE/logs/fuzz.
#
# usage: fuzz.sh [N [SEED]]    (or KITE_FUZZ_CALLS, KITE_FUZZ_SEEDS)
#        KITE_LANE=debug fuzz.sh ...: on the debug kernel (scripts/vm.sh)
#        KITE_FUZZ_THREADS=2 fuzz.sh ...: each run with two threads on one
#        context, racing destroys (kite_uverbs_fuzz --threads)
set -euo pipefail
. "$(dirname "$0")/vm.sh"

calls=${1:-${KITE_FUZZ_CALLS:-100000}}
seeds=${2:-${KITE_FUZZ_SEEDS:-$(date +%s)}}
"$KITE_ROOT/scripts/setup-host.sh" >&2
log "building QEMU, the modules, the test programs and the initramfs"
vm_prepare
dir=$KITE_CACHE/logs/fuzz
log "booting: $calls calls, seed(s) $seeds (about 2-3 minutes per 100,000 calls under TCG)"
# The run's own limit, and the VM's: time for the checks around it.
secs=${KITE_FUZZ_SECONDS:-3600}
vm_start fuzz "$dir" "$KITE_ROOT/scripts/guest/test-uvfuzz.sh" --kite \
	--env KITE_FUZZ_MODE=long --env KITE_FUZZ_CALLS="$calls" \
	--env KITE_FUZZ_SEEDS="$seeds" --env KITE_FUZZ_SECONDS="$secs" \
	--env KITE_FUZZ_THREADS="${KITE_FUZZ_THREADS:-}"
rc=0
vm_wait fuzz $((secs + 600)) || rc=$?
cat "$dir/guest.log" 2>/dev/null || true
echo "== results"
grep -h '^kite_uverbs_fuzz: seed' "$dir"/uvfuzz-long-*.log 2>/dev/null || true
cat "$dir/results.tap" 2>/dev/null || true
# The same judge as every VM test (kmemleak's own start-up line is none).
splats=unknown
if [ -f "$dir/dmesg.log" ]; then
	logs=("$dir/dmesg.log")
	[ -f "$dir/kmemleak.log" ] && logs+=("$dir/kmemleak.log")
	splats=$(python3 "$KITE_ROOT/scripts/check-splats.py" "${logs[@]}" |
		grep -c '^SPLAT ' || true)
fi
echo "kernel log splats: $splats"
[ "$rc" = 0 ] || die "the fuzz VM failed (status $rc); see $dir"
