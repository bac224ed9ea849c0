#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build rdma-core $RDMA_CORE_VERSION with the Kite provider overlaid:
# libibverbs, librdmacm, the tools and every provider (kite and rxe among
# them) and pyverbs with the test suite (bin/run_tests.py), in
# $KITE_CACHE/build/rdma-core. IN_PLACE: the built libibverbs loads
# its providers from the build directory's etc/libibverbs.d, so run tools as
#   LD_LIBRARY_PATH=$BUILD/lib $BUILD/bin/ibv_devinfo
# Idempotent and incremental. Prints the build directory as its last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SRC=$KITE_CACHE/src/rdma-core-$RDMA_CORE_VERSION
BUILD=$KITE_CACHE/build/rdma-core

"$KITE_ROOT/scripts/fetch-sources.sh" rdma-core
mkdir -p "$BUILD"
# The two VM lanes may prepare at once.
exec 9>"$BUILD.lock"
flock 9
[ -f "$SRC/CMakeLists.txt" ] || die "no rdma-core tree at $SRC"

# --- overlay ---------------------------------------------------------------
# The provider and the uapi header are symlinks to the repository (one copy
# of each; edits are picked up by the next incremental build), with the
# entries of the build files, verbs.h and the packaging that the provider's
# submission to rdma-core adds (scripts/overlay-rdma-core.py, which
# make patches uses too). The kernel-headers update gives enum
# rdma_driver_id as the kernel has it, with RDMA_DRIVER_KITE last
# (scripts/overlay-kernel.sh; compat/kite_compat.h gives older kernels the
# same number).
python3 "$KITE_ROOT/scripts/overlay-rdma-core.py" "$SRC"

# --- configure -------------------------------------------------------------
# pyverbs (rdma-core's Python bindings, which its test suite tests/ runs on)
# is built with Debian's interpreter and its Cython: the python3 first on
# PATH may be another interpreter, and the guest has only /usr/bin/python3.
# rdma-core's Findcython runs Cython through that interpreter. A build
# directory configured without pyverbs (NO_PYVERBS=1) is configured again.
mkdir -p "$BUILD"
if [ ! -f "$BUILD/build.ninja" ] ||
	! grep -qx 'NO_PYVERBS:[A-Z]*=0' "$BUILD/CMakeCache.txt" ||
	! grep -q '^FIND_PACKAGE_MESSAGE_DETAILS_cython:' "$BUILD/CMakeCache.txt"; then
	log "configuring rdma-core in $BUILD"
	if ! (cd "$BUILD" && cmake -GNinja -DIN_PLACE=1 -DNO_MAN_PAGES=1 \
		-DNO_PYVERBS=0 -DPYTHON_EXECUTABLE=/usr/bin/python3 \
		-DENABLE_STATIC=0 "$SRC" >cmake.log 2>&1); then
		tail -n 40 "$BUILD/cmake.log" >&2
		rm -f "$BUILD/build.ninja"
		die "cmake failed (full log: $BUILD/cmake.log)"
	fi
fi

# --- build -----------------------------------------------------------------
# ninja re-runs cmake by itself when a CMakeLists.txt changed. The overlay's
# objects are compiled again whenever its content differs from the last
# build's (overlay_changed): this checkout's files may be older than them.
overlay=("$KITE_ROOT/rdma-core/providers/kite" "$KITE_ROOT/include/linux/kite/kite_hw.h"
	"$KITE_ROOT/include/uapi/rdma/kite-abi.h")
if overlay_changed "$BUILD/.kite-overlay" "${overlay[@]}"; then
	rm -f "$BUILD/.kite-overlay" "$BUILD/include/kernel-abi/kite-abi.h"
	find "$BUILD/providers/kite" -name '*.o' -delete 2>/dev/null || true
fi
log "building rdma-core"
ninja -C "$BUILD" -j "$KITE_JOBS" >&2
overlay_built "$BUILD/.kite-overlay" "${overlay[@]}"

[ -f "$BUILD/python/pyverbs/__init__.py" ] ||
	die "pyverbs not built: cython3 and python3-dev for /usr/bin/python3 missing? ($BUILD/cmake.log)"
for f in "$BUILD/etc/libibverbs.d/kite.driver" "$BUILD/etc/libibverbs.d/rxe.driver" \
	"$BUILD/bin/ibv_devinfo" "$BUILD/bin/rping" "$BUILD/bin/run_tests.py"; do
	[ -e "$f" ] || die "build incomplete: $f missing"
done
compgen -G "$BUILD/lib/libkite-rdmav*.so" >/dev/null || die "build incomplete: libkite missing"

echo "$BUILD"
