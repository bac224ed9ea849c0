#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build and run the Kite device model test (qemu/tests/kite-model-test.c,
# the groups in kite-model-test-*.c): a qtest client that drives the model's
# RDMA control plane without a guest. Prints TAP; exits non-zero if the build
# or any test fails.
#
# usage: kite-model-test.sh /path/to/qemu-system-x86_64 [GROUP...]
# env:   KITE_CACHE (default ~/.cache/kite), KITE_SEED, KITE_TEST_VERBOSE,
#        KITE_QEMU_STDERR_LOG (append every QEMU's stderr to this file),
#        KITE_QEMU_TRACE (-trace enable=PATTERN for every QEMU, e.g. 'kite_*'),
#        KITE_QEMU_GUEST_LOG (append every QEMU's -D log, with the guest
#        errors and the trace events, to this file)
set -uo pipefail

QEMU=${1:?usage: $0 /path/to/qemu-system-x86_64 [GROUP...]}
shift
[ -x "$QEMU" ] || { echo "Bail out! no QEMU binary at $QEMU"; exit 1; }

HERE=$(cd "$(dirname "$0")" && pwd)
KITE_CACHE=${KITE_CACHE:-$HOME/.cache/kite}
OUT=$KITE_CACHE/build/tests
mkdir -p "$OUT"

# A binary of its own: make check runs the tests on two QEMU builds at once.
BIN=$(mktemp "$OUT/kite-model-test.XXXXXX")
trap 'rm -f "$BIN"' EXIT
if ! gcc -O1 -g -Wall -Wextra -Werror -o "$BIN" "$HERE"/kite-model-test*.c; then
	echo "Bail out! kite-model-test*.c do not compile"
	exit 1
fi

"$BIN" "$QEMU" "$@"
