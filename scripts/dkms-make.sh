#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The kite-dkms package's build (dkms.conf's MAKE), run by DKMS in its copy
# of the sources: the compat probes against the kernel, the backports it
# needs, then kite_en.ko and kite_ib.ko in place.
#
# usage: scripts/dkms-make.sh KDIR
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
# Nothing outside the build directory.
export KITE_CACHE=$src/.cache
. "$src/scripts/lib.sh"

kdir=$1
"$src/scripts/compat-probe.sh" "$kdir" "$src/.compat"
compat_backport "$src/.compat/kite_compat_autoconf.h" "$src"
make -C "$kdir" M="$src" -j"$KITE_JOBS" KITE_SRC="$src" \
	KITE_COMPAT_DIR="$src/.compat" CONFIG_KITE_EN=m CONFIG_INFINIBAND_KITE=m modules
