#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the debug lane's guest kernel: the newest Debian kernel source
# (sid's linux-source-7.x, the tree the upstream step builds in) with the
# Kite drivers merged in tree as modules (scripts/overlay-kernel.sh, no
# compat layer), configured as x86_64_defconfig plus
# scripts/kconfig/debug-guest.config (KASAN, lockdep, kmemleak, DMA-API
# debugging, debug objects, UBSAN bounds, hung-task and soft-lockup
# detection, allocation-failure injection), with the fixes of
# patches/linux applied. The modules are installed under
# the build directory, not on this machine.
#
# Incremental: the configuration is made again when the fragment changes,
# and make rebuilds only what changed since the last build; nothing runs
# when no input changed.
#
# usage: build-debug-kernel.sh      (prints the build directory)
# Exit status: 0 built, 1 failed, 2 the newest kernel source is unavailable.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$("$KITE_ROOT/scripts/fetch-sources.sh" linux-upstream) || exit 2
out=$KITE_CACHE/build/debug-$(basename "$tree")
frag=$KITE_ROOT/scripts/kconfig/debug-guest.config
mkdir -p "$out"
# One build at a time in the build directory (and in the overlaid tree).
exec 9>"$out.lock"
flock 9

stamp="$(inputs_hash "$frag" "$KITE_ROOT/scripts/build-debug-kernel.sh" \
	"$KITE_ROOT/scripts/overlay-kernel.sh" "$KITE_ROOT/drivers" \
	"$KITE_ROOT/include" "$KITE_ROOT/Documentation" "$KITE_ROOT/patches/linux") $(basename "$tree")"
if [ -f "$out/arch/x86/boot/bzImage" ] && [ "$(cat "$out/.kite-stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$out"
	exit 0
fi

"$KITE_ROOT/scripts/overlay-kernel.sh" "$tree"
# Fixes of kernel code outside Kite that the debug lane found, carried
# until the kernel has them: patches/linux holds each as the patch for
# upstream, with the report that found it. One already in the tree (it
# reverses cleanly) is skipped.
for p in "$KITE_ROOT"/patches/linux/*.patch; do
	[ -e "$p" ] || continue
	patch -d "$tree" -p1 -R --dry-run -s -f <"$p" >/dev/null 2>&1 && continue
	patch -d "$tree" -p1 -N -s <"$p" || die "$(basename "$p") does not apply to $(basename "$tree")"
	log "applied $(basename "$p")"
done
cfgstamp=$(inputs_hash "$frag")
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.kite-config-stamp" 2>/dev/null)" != "$cfgstamp" ]; then
	log "configuring $(basename "$tree"): x86_64_defconfig + $(basename "$frag")"
	make -C "$tree" O="$out" x86_64_defconfig >/dev/null
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag" >/dev/null
	make -C "$tree" O="$out" olddefconfig >/dev/null
	# Every option the fragment asks for must have survived olddefconfig.
	missing=$(grep -E '^(CONFIG_[A-Z0-9_]+=.*|# CONFIG_[A-Z0-9_]+ is not set)$' "$frag" |
		while IFS= read -r line; do
			case $line in
			"# "*) sym=${line#\# }; sym=${sym%% *}
				grep -q "^$sym=" "$out/.config" && echo "$line" ;;
			*) grep -qxF "$line" "$out/.config" || echo "$line" ;;
			esac
		done)
	[ -z "$missing" ] || die "the debug kernel's configuration lacks: $missing"
	echo "$cfgstamp" >"$out/.kite-config-stamp"
fi

log "building the debug kernel in $out"
make -C "$tree" O="$out" -j"$KITE_JOBS" bzImage modules >&2
rm -rf "$out/modinst"
make -C "$tree" O="$out" INSTALL_MOD_PATH="$out/modinst" INSTALL_MOD_STRIP=1 \
	DEPMOD=/sbin/depmod modules_install >/dev/null
echo "$stamp" >"$out/.kite-stamp"
echo "$out"
