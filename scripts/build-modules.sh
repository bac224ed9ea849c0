#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build kite_en.ko and kite_ib.ko out of tree against a kernel build tree.
# The sources are mirrored into $KITE_CACHE/build/modules-<release>/src so
# that no build product lands in the repository; the mirror keeps
# timestamps, so rebuilds are incremental.
#
# usage: build-modules.sh KDIR [make arguments, e.g. W=1 C=2 or a target]
# Prints the directory holding the .ko files as the last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=$(realpath "$1")
shift
[ -f "$kdir/Makefile" ] || die "$kdir is not a kernel build tree (install the kernel headers)"
release=$(cat "$kdir/include/config/kernel.release")
bdir=$KITE_CACHE/build/modules-$release
src=$bdir/src
mkdir -p "$src"

# Mirror the sources; protect build products from --delete. By content, and
# a file copied gets the time of the copy: this checkout's files may be
# older than products made from another's (make compares times only).
rsync -rlpgoD --checksum --delete \
	--filter='P *.o' --filter='P *.ko' --filter='P *.mod' --filter='P *.mod.c' \
	--filter='P .*.cmd' --filter='P Module.symvers' --filter='P modules.order' \
	--filter='P .*.d' --filter='P *.a' \
	"$KITE_ROOT/Kbuild" "$KITE_ROOT/drivers" "$KITE_ROOT/include" \
	"$KITE_ROOT/compat" "$src/"

"$KITE_ROOT/scripts/compat-probe.sh" "$kdir" "$bdir/compat"
compat_backport "$bdir/compat/kite_compat_autoconf.h" "$src"

make -C "$kdir" M="$src" -j"$KITE_JOBS" \
	KITE_SRC="$src" KITE_COMPAT_DIR="$bdir/compat" \
	CONFIG_KITE_EN=m CONFIG_INFINIBAND_KITE=m "$@" >&2
echo "$src"
