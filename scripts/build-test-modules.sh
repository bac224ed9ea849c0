#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the Kite test modules (tools/testing/kite: kite_verbs_test.ko) out
# of tree against a kernel build tree, as build-modules.sh builds the
# drivers: the sources are mirrored into
# $KITE_CACHE/build/modules-<release>/test-src, so no build product lands in
# the repository, and rebuilds are incremental.
#
# usage: build-test-modules.sh KDIR [make arguments, e.g. W=1 C=2]
# Prints the directory holding the .ko files as the last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=$(realpath "$1")
shift
[ -f "$kdir/Makefile" ] || die "$kdir is not a kernel build tree (install the kernel headers)"
release=$(cat "$kdir/include/config/kernel.release")
src=$KITE_CACHE/build/modules-$release/test-src
mkdir -p "$src/tools/testing"

# Mirror the sources and the headers they include; keep build products. By
# content, a file copied getting the time of the copy (build-modules.sh).
rsync -rlpgoD --checksum --delete \
	--filter='P *.o' --filter='P *.ko' --filter='P *.mod' --filter='P *.mod.c' \
	--filter='P .*.cmd' --filter='P Module.symvers' --filter='P modules.order' \
	--filter='P .*.d' \
	"$KITE_ROOT/tools/testing/kite" "$src/tools/testing/"
rsync -rlpgoD --checksum --delete "$KITE_ROOT/include" "$src/"

make -C "$kdir" M="$src/tools/testing/kite" -j"$KITE_JOBS" "$@" >&2
echo "$src/tools/testing/kite"
