#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the drivers as they will be submitted: overlaid into the newest
# kernel source Debian packages (sid's linux-source-7.x), without the compat
# layer, with W=1. Compiles the objects of both driver directories.
#
# Exit status: 0 built, 1 failed, 2 the upstream source is unavailable
# (fetch-sources.sh says why, loudly).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$("$KITE_ROOT/scripts/fetch-sources.sh" linux-upstream) || exit 2
out=$KITE_CACHE/build/upstream-$(basename "$tree")
"$KITE_ROOT/scripts/overlay-kernel.sh" "$tree"

if [ ! -f "$out/.config" ]; then
	mkdir -p "$out"
	make -C "$tree" O="$out" x86_64_defconfig >/dev/null || exit 1
	"$tree/scripts/config" --file "$out/.config" -e PCI -e NET -e INET \
		-e ETHERNET -m INFINIBAND -e INFINIBAND_USER_ACCESS \
		-e NET_VENDOR_KITE -m KITE_EN -m INFINIBAND_KITE
	make -C "$tree" O="$out" olddefconfig >/dev/null || exit 1
fi
for sym in CONFIG_KITE_EN CONFIG_INFINIBAND_KITE; do
	grep -q "^$sym=m" "$out/.config" || die "$sym is not enabled in $out/.config"
done
# Compile every file again so that every warning is seen.
rm -rf "$out/drivers/net/ethernet/kite" "$out/drivers/infiniband/hw/kite"
log "building the drivers in $(basename "$tree") (W=1)"
# make fails with 2, which means "unavailable" here: a failed build is 1.
make -C "$tree" O="$out" -j"$KITE_JOBS" W=1 \
	drivers/net/ethernet/kite/ drivers/infiniband/hw/kite/ || exit 1
