#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build qemu-system-x86_64 with the Kite device model.
#
# Overlays the model (qemu/hw/net/kite*, include/linux/kite/kite_hw.h) into
# bookworm's QEMU 7.2 source tree in $KITE_CACHE/src/qemu-7.2 with symlinks,
# so edits in the repository are picked up by the next build, splices the
# model's trace events (qemu/hw/net/trace-events-kite) into hw/net/trace-events,
# configures once in $KITE_CACHE/build/qemu and builds incrementally with
# ninja.
# Idempotent; prints the path of the binary as the last line on stdout.
# With --asan, a second build in $KITE_CACHE/build/qemu-asan with QEMU's
# sanitizers (--enable-sanitizers: AddressSanitizer), for the model's
# qtests.
#
# Debian's QEMU source is DFSG-stripped (no firmware blobs): run the binary
# with -L /usr/share/seabios -L /usr/share/qemu -L /usr/lib/ipxe/qemu
# (packages seabios, qemu-system-data, ipxe-qemu).
#
# usage: build-qemu.sh [--asan]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

asan=0 configure_extra=()
if [ "${1:-}" = --asan ]; then
	asan=1
	configure_extra=(--enable-sanitizers)
fi

SRC=$KITE_CACHE/src/qemu-7.2
BUILD=$KITE_CACHE/build/qemu
[ "$asan" = 1 ] && BUILD=$KITE_CACHE/build/qemu-asan

"$KITE_ROOT/scripts/fetch-sources.sh" qemu
mkdir -p "$BUILD"
# The two VM lanes may prepare at once, and both builds prepare the same
# source tree: one lock.
exec 9>"$KITE_CACHE/build/qemu.lock"
flock 9
[ -f "$SRC/.kite-unpacked" ] || die "QEMU source tree missing: $SRC"

# Overlay the device model; drop links to files the repository no longer has.
for f in "$SRC"/hw/net/kite*; do
	[ -L "$f" ] && [ ! -e "$f" ] && rm -f "$f"
done
for f in "$KITE_ROOT"/qemu/hw/net/kite*; do
	[ -f "$f" ] || continue
	ln -sfn "$f" "$SRC/hw/net/$(basename "$f")"
done
ln -sfn "$KITE_ROOT/include/linux/kite/kite_hw.h" "$SRC/hw/net/kite_hw.h"

# One meson line listing every qemu/hw/net/kite*.c (kite.c first).
KITE_SOURCES=$(cd "$KITE_ROOT/qemu/hw/net" && LC_ALL=C ls kite*.c |
	sed "s/.*/'&'/" | paste -sd, - | sed 's/,/, /g')
[ -n "$KITE_SOURCES" ] || die "no qemu/hw/net/kite*.c"
MESON_LINE="softmmu_ss.add(when: 'CONFIG_PCI_EXPRESS', if_true: files($KITE_SOURCES))"
if ! grep -qxF "$MESON_LINE" "$SRC/hw/net/meson.build"; then
	log "hw/net/meson.build: $MESON_LINE"
	sed -i '/kite/d' "$SRC/hw/net/meson.build"
	printf '%s\n' "$MESON_LINE" >>"$SRC/hw/net/meson.build"
fi

# The model's trace events: a block of hw/net/trace-events between marker
# lines, put back from qemu/hw/net/trace-events-kite on every build (tracetool
# reads one trace-events file per directory). The file is rewritten only when
# the block changed, so that an unchanged build regenerates nothing.
TRACE=$SRC/hw/net/trace-events
TRACE_BEGIN="# kite begin: from qemu/hw/net/trace-events-kite (scripts/build-qemu.sh)"
TRACE_END="# kite end"
[ -f "$TRACE" ] || die "no $TRACE"
if grep -q '^# kite begin' "$TRACE" && ! grep -qxF "$TRACE_END" "$TRACE"; then
	die "$TRACE: a kite begin marker without its end marker"
fi
{
	sed '/^# kite begin/,/^# kite end$/d' "$TRACE"
	printf '%s\n' "$TRACE_BEGIN"
	cat "$KITE_ROOT/qemu/hw/net/trace-events-kite"
	printf '%s\n' "$TRACE_END"
} >"$TRACE.kite-new"
if cmp -s "$TRACE.kite-new" "$TRACE"; then
	rm -f "$TRACE.kite-new"
else
	log "hw/net/trace-events: kite trace events updated"
	mv "$TRACE.kite-new" "$TRACE"
fi

if [ ! -f "$BUILD/build.ninja" ]; then
	log "configuring QEMU in $BUILD"
	mkdir -p "$BUILD"
	(cd "$BUILD" && "$SRC/configure" --target-list=x86_64-softmmu \
		--disable-docs --disable-user --without-default-features \
		--disable-werror --enable-virtfs --enable-attr --enable-cap-ng \
		"${configure_extra[@]}" >&2) ||
		{ rm -f "$BUILD/build.ninja"; die "QEMU configure failed"; }
fi

# The model's objects are compiled again whenever its content differs from
# the last build's (overlay_changed): this checkout's files may be older.
overlay=("$KITE_ROOT/qemu/hw/net" "$KITE_ROOT/include/linux/kite/kite_hw.h")
if overlay_changed "$BUILD/.kite-overlay" "${overlay[@]}"; then
	rm -f "$BUILD/.kite-overlay"
	find "$BUILD" -name 'hw_net_kite*.o' -delete
fi
log "building qemu-system-x86_64"
ninja -C "$BUILD" -j "$KITE_JOBS" qemu-system-x86_64 >&2 ||
	die "QEMU build failed"
overlay_built "$BUILD/.kite-overlay" "${overlay[@]}"

QEMU=$BUILD/qemu-system-x86_64
[ -x "$QEMU" ] || die "no binary at $QEMU"
echo "$QEMU"
