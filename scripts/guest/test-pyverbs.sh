#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test: rdma-core's own conformance suite (the pyverbs tests, tests/ of
# the rdma-core source, run on the build's pyverbs) against kite0, in one
# VM: the device loops the RoCEv2 frames back. One TAP line per test
# (scripts/guest/pyverbs-tap.py): ok, not ok (a failure or an error), or
# ok # SKIP with the suite's reason. A test listed in
# tools/testing/kite/pyverbs-todo.txt (a feature Kite does not have yet,
# with the issue item that brings it) that fails is "not ok # TODO".
# KITE_PYVERBS_TESTS: unittest names to run instead of the whole suite
# (e.g. tests.test_cq); KITE_PYVERBS_BUDGET: seconds the suite may run;
# KITE_PYVERBS_SEED: the seed of the suite's random choices (printed).
. "$KITE_ROOT/scripts/guest/lib.sh"

check "pyverbs: kite_en and kite_ib load" bash -c "insmod $KITE_EN_KO && insmod $KITE_IB_KO"
nic=$(kite_netdev)
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
gids=/sys/class/infiniband/kite0/ports/1/gids
check "pyverbs: kite0 has the IPv4 GID" wait_for 10 grep -qs '0000:0000:0000:0000:0000:ffff:0a4d:0001' $gids/*
check "pyverbs: kite0/1 ACTIVE" wait_for 10 bash -c \
	"rdma link show kite0/1 | grep -q 'state ACTIVE'"
gidx=
for f in "$gids"/*; do
	grep -q '0000:0000:0000:0000:0000:ffff:0a4d:0001' "$f" && gidx=$(basename "$f") && break
done
check "pyverbs: the suite and pyverbs are built" test -f "$KITE_RDMA_CORE/python/pyverbs/__init__.py"
# The suite's rdmacm tests open /dev/infiniband/rdma_cm: rdma_ucm loaded,
# as a host's rdma-core loads it at boot, not left to librdmacm's
# on-demand load (once it was not there: ENOENT for every rdmacm test).
check "pyverbs: rdma_ucm loads (/dev/infiniband/rdma_cm)" bash -c \
	'modprobe rdma_ucm && [ -e /sys/class/misc/rdma_cm ]'

# 2 MiB huge pages for the suite's huge-page tests (a parent domain whose
# allocator hands out rings from one).
check "pyverbs: 8 huge pages of 2 MiB reserved" bash -c \
	'echo 8 >/proc/sys/vm/nr_hugepages && [ "$(cat /proc/sys/vm/nr_hugepages)" -ge 1 ]'

# The suite is the source tree's tests/ (the build's bin/run_tests.py runs
# it from there too).
src=$(sed -n 's|^CMAKE_HOME_DIRECTORY:INTERNAL=||p' "$KITE_RDMA_CORE/CMakeCache.txt")/tests
budget=${KITE_PYVERBS_BUDGET:-$((900 * KITE_SCALE))}
# The suite's own rdmacm tests resolve the address; the tests pick no
# device or GID by themselves: kite0 and its IPv4 GID.
# shellcheck disable=SC2086
LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib PYTHONPATH=$KITE_RDMA_CORE/python \
	timeout --kill-after=10 $((budget + 60)) /usr/bin/python3 \
	"$KITE_ROOT/scripts/guest/pyverbs-tap.py" --tests "$src" \
	--tap "$KITE_RESULTS" --todo "$KITE_ROOT/tools/testing/kite/pyverbs-todo.txt" \
	--test-timeout "$((60 * KITE_SCALE))" --budget "$budget" \
	${KITE_PYVERBS_SEED:+--seed "$KITE_PYVERBS_SEED"} \
	--dev kite0 --port 1 --gid "$gidx" -v ${KITE_PYVERBS_TESTS:-} \
	>/kite-out/pyverbs.log 2>&1
rc=$?
grep '^pyverbs: ' /kite-out/pyverbs.log | tail -n 3
# Only a runner that died is a failure of its own: each test has its line.
check "pyverbs: the suite ran to its summary (exit $rc)" grep -q '^pyverbs: .* passed, ' /kite-out/pyverbs.log
check "pyverbs: kite_ib and kite_en unload" bash -c "rmmod kite_ib && rmmod kite_en"
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
finish
