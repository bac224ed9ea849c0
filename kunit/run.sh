#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Run every Kite KUnit suite on UML: overlay the drivers into the 6.12 source
# tree (with the out-of-tree compat layer, generated against the matching
# 6.12 headers) and run kunit.py with kunit/.kunitconfig.
#
# usage: kunit/run.sh [JSON_OUT]
#   Writes kunit.py's JSON results to JSON_OUT if given. Extra kunit.py
#   arguments can be passed in KUNIT_ARGS (e.g. KUNIT_ARGS='kite_en_hw').
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

json=${1:-$KITE_CACHE/build/kunit-$KITE_KVER_SERIES.json}
tree=$("$KITE_ROOT/scripts/fetch-sources.sh" linux-target)
kdir=/lib/modules/$(guest_kver)/build
compat=$KITE_CACHE/build/kunit-$KITE_KVER_SERIES-compat

# One run at a time: the overlay and the build directory are shared.
exec 9>"$KITE_CACHE/kunit.lock"
flock 9

"$KITE_ROOT/scripts/compat-probe.sh" "$kdir" "$compat"
"$KITE_ROOT/scripts/overlay-kernel.sh" "$tree" --compat "$compat"

cd "$tree"
# shellcheck disable=SC2086
python3 tools/testing/kunit/kunit.py run --arch=um \
	--build_dir="$KITE_CACHE/build/kunit-$KITE_KVER_SERIES" \
	--kunitconfig="$KITE_ROOT/kunit/.kunitconfig" \
	--jobs="$KITE_JOBS" --timeout=300 --json="$json" ${KUNIT_ARGS:-}
