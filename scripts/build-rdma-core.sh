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
# The provider, the uapi header and the hardware interface header's directory
# are symlinks to the repository: one copy of each, and edits are picked up by
# the next incremental build.
ln -sfn "$KITE_ROOT/rdma-core/providers/kite" "$SRC/providers/kite"
ln -sfn "$KITE_ROOT/include/uapi/rdma/kite-abi.h" "$SRC/kernel-headers/rdma/kite-abi.h"
ln -sfn "$KITE_ROOT/include/linux/kite" "$SRC/providers/kite-hw"

# insert_after FILE ANCHOR LINE: add LINE after the first line equal to
# ANCHOR, unless FILE already has a line equal to LINE. Files are rewritten
# in place (cat, not mv) to keep their mode.
insert_after() {
	local file=$1 anchor=$2 line=$3 tmp
	grep -qxF -- "$line" "$file" && return 0
	grep -qxF -- "$anchor" "$file" || die "$file: no line '$anchor' to add '$line' after"
	tmp=$(mktemp "$file.XXXXXX")
	awk -v anchor="$anchor" -v line="$line" \
		'{ print } !done && $0 == anchor { print line; done = 1 }' "$file" >"$tmp"
	cat "$tmp" >"$file"
	rm -f "$tmp"
	log "$(basename "$(dirname "$file")")/$(basename "$file"): added '$line'"
}

# kernel-headers/CMakeLists.txt lists each header twice: published into
# build/include/rdma, and transformed into kernel-abi/<name> for
# DECLARE_DRV_CMD. The anchor (erdma) sits in both lists; the header must be
# in both, so check each list on its own.
khdrs=$SRC/kernel-headers/CMakeLists.txt
kite_in_list() {
	# Is rdma/kite-abi.h listed in the block opened by the line $1?
	awk -v start="$1" '
		$0 == start { inb = 1; next }
		inb && /^ *\)/ { inb = 0 }
		inb && $1 == "rdma/kite-abi.h" { found = 1 }
		END { exit !found }' "$khdrs"
}
add_to_list() {
	local start=$1 tmp
	kite_in_list "$start" && return 0
	tmp=$(mktemp "$khdrs.XXXXXX")
	awk -v start="$start" '
		$0 == start { inb = 1 }
		{ print }
		inb && $1 == "rdma/erdma-abi.h" { print "  rdma/kite-abi.h"; inb = 0 }' \
		"$khdrs" >"$tmp"
	cat "$tmp" >"$khdrs"
	rm -f "$tmp"
	kite_in_list "$start" || die "$khdrs: could not add rdma/kite-abi.h to $start"
	log "kernel-headers/CMakeLists.txt: added rdma/kite-abi.h to $start"
}
add_to_list 'publish_internal_headers(rdma'
add_to_list 'rdma_kernel_provider_abi('

# The kernel-headers update of the provider series: enum rdma_driver_id as
# the kernel has it, with RDMA_DRIVER_KITE last (scripts/overlay-kernel.sh;
# compat/kite_compat.h gives older kernels the same number).
ids=$SRC/kernel-headers/rdma/ib_user_ioctl_verbs.h
insert_after "$ids" $'\tRDMA_DRIVER_MANA,' $'\tRDMA_DRIVER_IONIC,'
insert_after "$ids" $'\tRDMA_DRIVER_IONIC,' $'\tRDMA_DRIVER_KITE,'

insert_after "$SRC/CMakeLists.txt" 'add_subdirectory(providers/erdma)' \
	'add_subdirectory(providers/kite)'

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
# ninja re-runs cmake by itself when a CMakeLists.txt changed.
log "building rdma-core"
ninja -C "$BUILD" -j "$KITE_JOBS" >&2

[ -f "$BUILD/python/pyverbs/__init__.py" ] ||
	die "pyverbs not built: cython3 and python3-dev for /usr/bin/python3 missing? ($BUILD/cmake.log)"
for f in "$BUILD/etc/libibverbs.d/kite.driver" "$BUILD/etc/libibverbs.d/rxe.driver" \
	"$BUILD/bin/ibv_devinfo" "$BUILD/bin/rping" "$BUILD/bin/run_tests.py"; do
	[ -e "$f" ] || die "build incomplete: $f missing"
done
compgen -G "$BUILD/lib/libkite-rdmav*.so" >/dev/null || die "build incomplete: libkite missing"

echo "$BUILD"
