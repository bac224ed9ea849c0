#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the user-space test programs of tools/testing/kite against the
# in-place rdma-core build (scripts/build-rdma-core.sh), into
# $KITE_CACHE/build/tools. Prints that directory as its last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RC=$("$KITE_ROOT/scripts/build-rdma-core.sh" | tail -n 1)
OUT=$KITE_CACHE/build/tools
SRC=$KITE_ROOT/tools/testing/kite
mkdir -p "$OUT"
# The two VM lanes may prepare at once.
exec 9>"$OUT.lock"
flock 9

# stale PROG FILE...: PROG is missing or was built from other content than
# FILEs' (this checkout's files may be older than a binary built from
# another's); the caller builds it and records them (overlay_built).
stale() {
	local prog=$1
	shift
	[ ! -e "$OUT/$prog" ] || overlay_changed "$OUT/.$prog.src" "$@"
}

# Programs linked with libibverbs (the uverbs command helpers included).
for prog in kite_uverbs_test kite_mr_bench kite_dp_bench kite_failnth kite_churn kite_qp_recover; do
	if stale "$prog" "$SRC/$prog.c" "$KITE_ROOT/include/uapi/rdma/kite-abi.h"; then
		gcc -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
			-I"$RC/include" -I"$KITE_ROOT/include/uapi" \
			-o "$OUT/$prog" "$SRC/$prog.c" \
			-L"$RC/lib" -Wl,-rpath,"$RC/lib" -libverbs -lpthread
		overlay_built "$OUT/.$prog.src" "$SRC/$prog.c" "$KITE_ROOT/include/uapi/rdma/kite-abi.h"
	fi
done
# Programs that talk to /dev/infiniband/uverbs* directly (the uapi headers
# of the rdma-core build only).
for prog in kite_uverbs_fuzz; do
	if stale "$prog" "$SRC/$prog.c" "$KITE_ROOT/include/uapi/rdma/kite-abi.h"; then
		gcc -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
			-I"$RC/include" -I"$KITE_ROOT/include/uapi" \
			-o "$OUT/$prog" "$SRC/$prog.c" -lpthread
		overlay_built "$OUT/.$prog.src" "$SRC/$prog.c" "$KITE_ROOT/include/uapi/rdma/kite-abi.h"
	fi
done
# Programs that connect through librdmacm.
for prog in kite_rc_stream; do
	if stale "$prog" "$SRC/$prog.c"; then
		gcc -O2 -g -Wall -Wextra -Werror \
			-I"$RC/include" -o "$OUT/$prog" "$SRC/$prog.c" \
			-L"$RC/lib" -Wl,-rpath,"$RC/lib" -lrdmacm -libverbs
		overlay_built "$OUT/.$prog.src" "$SRC/$prog.c"
	fi
done
# LD_PRELOAD shims for unchanged applications.
for prog in kite_ah_flowlabel; do
	if stale "$prog.so" "$SRC/$prog.c"; then
		gcc -O2 -g -Wall -Wextra -Werror -shared -fPIC \
			-I"$RC/include" -o "$OUT/$prog.so" "$SRC/$prog.c" -ldl
		overlay_built "$OUT/.$prog.so.src" "$SRC/$prog.c"
	fi
done
# NFS's user space for the guests (test-nfs.sh), unpacked from Debian's
# packages; without it the NFS tests say they skipped.
if nfs=$("$KITE_ROOT/scripts/fetch-sources.sh" nfs-utils | tail -n 1); then
	ln -sfn "$nfs" "$OUT/nfs-utils"
else
	warn "nfs-utils unavailable: the NFS over RDMA tests will skip"
fi
echo "$OUT"
