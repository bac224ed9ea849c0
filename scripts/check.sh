#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Every Kite test: set-up, builds and static checks, KUnit, the QEMU model,
# rdma-core and the VM tests. Each result is a TAP line in the file whose
# path is printed at the end; the last line is "N passed, N failed".
#
# usage: check.sh [STEP...]
# Steps (default: all, in this order): build sparse checkpatch prm kunit
# upstream patches qemu rdma-core vm vm-debug
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap.sh"

stamp=$(date +%Y%m%d-%H%M%S)
LOGS=$KITE_CACHE/logs/check-$stamp
mkdir -p "$LOGS"
# A run's logs take gigabytes (the VM groups' wire captures): keep the
# newest KITE_KEEP_LOGS runs' (default 5, this one included).
ls -1dt "$KITE_CACHE"/logs/check-* 2>/dev/null |
	tail -n +$((${KITE_KEEP_LOGS:-5} + 1)) | xargs -r rm -rf
tap_init "$KITE_CACHE/results/check-$stamp.tap"
ln -sfn "check-$stamp.tap" "$KITE_CACHE/results/latest.tap"

# Longest any single step may take (a cold UML or QEMU build is ~10 min).
KITE_STEP_TIMEOUT=${KITE_STEP_TIMEOUT:-2700}

# run NAME CMD...: run CMD, bounded, with its output in $LOGS/NAME.log.
run() {
	local name=$1 t0=$SECONDS rc=0
	shift
	log "$name ..."
	timeout --kill-after=30 "$KITE_STEP_TIMEOUT" "$@" >"$LOGS/$name.log" 2>&1 || rc=$?
	[ "$rc" = 124 ] && warn "$name: killed after ${KITE_STEP_TIMEOUT}s"
	log "$name: exit $rc after $((SECONDS - t0))s (log: $LOGS/$name.log)"
	[ "$rc" = 0 ] || tail -n 25 "$LOGS/$name.log" | sed 's/^/# /'
	return "$rc"
}

# no_warnings LOG: true when a compiler or checker log has no diagnostics.
no_warnings() {
	! grep -E '(warning|error):' "$1" | sed 's/^/# /' | grep .
}

KERNEL_SOURCES=$(cd "$KITE_ROOT" && find drivers include compat tools/testing/kite \
	-name '*.[ch]' ! -name kite_mr_bench.c | sort)

step_build() {
	local rc=0
	# Remove the objects so that every file is compiled and every
	# warning is seen again.
	find "$KITE_CACHE/build/modules-$KVER/src" -name '*.o' -delete 2>/dev/null
	run build "$KITE_ROOT/scripts/build-modules.sh" "$KDIR" W=1 || rc=1
	[ "$rc" = 0 ] && no_warnings "$LOGS/build.log" || rc=1
	tap_result "$rc" "build: kite_en.ko and kite_ib.ko against $KVER headers, W=1, no warnings"
	rc=0
	find "$KITE_CACHE/build/modules-$KVER/test-src" -name '*.o' -delete 2>/dev/null
	run build-test "$KITE_ROOT/scripts/build-test-modules.sh" "$KDIR" W=1 || rc=1
	[ "$rc" = 0 ] && no_warnings "$LOGS/build-test.log" || rc=1
	tap_result "$rc" "build: kite_verbs_test.ko (tools/testing/kite) against $KVER headers, W=1, no warnings"
}

step_sparse() {
	local rc=0
	run sparse "$KITE_ROOT/scripts/build-modules.sh" "$KDIR" C=2 || rc=1
	[ "$rc" = 0 ] && no_warnings "$LOGS/sparse.log" || rc=1
	tap_result "$rc" "sparse: C=2 over every kernel source, no warnings"
	rc=0
	run sparse-test "$KITE_ROOT/scripts/build-test-modules.sh" "$KDIR" C=2 || rc=1
	[ "$rc" = 0 ] && no_warnings "$LOGS/sparse-test.log" || rc=1
	tap_result "$rc" "sparse: C=2 over the test modules (tools/testing/kite), no warnings"
}

step_checkpatch() {
	local tree newest trees names
	tree=$(run fetch-linux-target "$KITE_ROOT/scripts/fetch-sources.sh" linux-target && \
		tail -n 1 "$LOGS/fetch-linux-target.log") || {
		tap_not_ok "checkpatch: linux-source-$KITE_KVER_SERIES unpacked"
		return
	}
	trees=$tree names=$(basename "$tree")
	# The newest kernel's checkpatch too (it knows the newest idioms).
	if newest=$(run fetch-linux-upstream "$KITE_ROOT/scripts/fetch-sources.sh" linux-upstream &&
		tail -n 1 "$LOGS/fetch-linux-upstream.log"); then
		trees="$trees $newest" names="$names and $(basename "$newest")"
	else
		tap_skip "checkpatch --strict of the newest kernel" "linux-source-7.x unavailable"
	fi
	# The files are split among one worker per CPU; the results are then
	# recorded in the files' order.
	local dir=$LOGS/checkpatch w i workers pids=()
	local -a files
	mapfile -t files <<<"$KERNEL_SOURCES"
	rm -rf "$dir"
	mkdir -p "$dir"
	workers=$(nproc)
	for ((w = 0; w < workers; w++)); do
		for ((i = w; i < ${#files[@]}; i += workers)); do
			# shellcheck disable=SC2086 # trees: one word each
			checkpatch_file "${files[i]}" $trees >"$dir/$i.out"
			echo $? >"$dir/$i.rc"
		done &
		pids+=($!)
	done
	wait "${pids[@]}"
	for i in "${!files[@]}"; do
		cat "$dir/$i.out"
		tap_result "$(cat "$dir/$i.rc" 2>/dev/null || echo 1)" \
			"checkpatch --strict ($names): ${files[i]}"
	done
}

# checkpatch_file FILE TREE...: checkpatch --strict of each kernel TREE on
# FILE; its findings as "# TREE: ..." lines; false when there are any.
checkpatch_file() {
	local f=$1 t out rc=0
	shift
	for t; do
		# .checkpatch.conf in the repository holds the justified exceptions.
		out=$(cd "$KITE_ROOT" && perl "$t/scripts/checkpatch.pl" --strict \
			--no-tree --terse --show-types -f "$f" 2>&1) || rc=1
		echo "$out" | grep -qE '(ERROR|WARNING|CHECK):' && rc=1
		echo "$out" | grep -E '(ERROR|WARNING|CHECK):' | sed "s|^|# $(basename "$t"): |"
	done
	return "$rc"
}

step_kunit() {
	local json=$LOGS/kunit.json rc=0
	run kunit "$KITE_ROOT/kunit/run.sh" "$json" || rc=1
	tap_result "$rc" "kunit: UML kernel with both drivers built and booted, all suites run"
	# A WARN (or worse) while the suites ran fails even when every test
	# passed: the kernel's log, as the VM tests check theirs.
	rc=0
	python3 "$KITE_ROOT/scripts/check-splats.py" \
		"$KITE_CACHE/build/kunit-$KITE_KVER_SERIES/test.log" >"$LOGS/kunit-splats.log" 2>&1 || rc=1
	grep -v '^ ' "$LOGS/kunit-splats.log" | sed 's/^/# /'
	tap_result "$rc" "kunit: no kernel error report (WARN, BUG, ...) in the UML kernel's log"
	[ -f "$json" ] || return
	python3 - "$json" >"$LOGS/kunit.tap" <<'PY'
import json, sys
def walk(node, prefix):
    for case in node.get("test_cases", []):
        ok = case.get("status") == "PASS"
        skip = case.get("status") == "SKIP"
        name = f"kunit: {prefix}{case['name']}"
        print(f"ok - {name} # SKIP" if skip else ("ok - " if ok else "not ok - ") + name)
    for sub in node.get("sub_groups", []):
        walk(sub, prefix + sub["name"] + ".")
walk(json.load(open(sys.argv[1])), "")
PY
	tap_import "$LOGS/kunit.tap" ""
}

step_prm() {
	run prm python3 "$KITE_ROOT/scripts/check-prm-layout.py"
	tap_import "$LOGS/prm.log" ""
	grep -q '^1\.\.' "$LOGS/prm.log" || tap_not_ok "prm: layout checker ran"
	# The splat scanner every VM test relies on.
	run splats python3 "$KITE_ROOT/scripts/check-splats.py" --selftest
	tap_import "$LOGS/splats.log" ""
	grep -q '^1\.\.' "$LOGS/splats.log" || tap_not_ok "check-splats: self-test ran"
	local m
	for m in drivers/net/ethernet/kite:drivers/net/ethernet/kite/kite_en.h \
		drivers/infiniband/hw/kite:drivers/infiniband/hw/kite/kite_ib.h \
		qemu/hw/net:qemu/hw/net/kite_int.h; do
		file_map "${m%%:*}" "${m#*:}"
		tap_result $? "file map: ${m#*:} names every C file of ${m%%:*}"
	done
}

# file_map DIR HEADER: true when the first comment of HEADER names every C
# file of DIR (a "*_test.c" entry names the test files); the others listed.
file_map() {
	local map f missing=()
	map=$(sed -n '1,/\*\//p' "$KITE_ROOT/$2")
	for f in "$KITE_ROOT/$1"/*.c; do
		f=$(basename "$f")
		case $f in *_test.c) grep -q '_\*_test\.c' <<<"$map" && continue ;; esac
		grep -qF "$f" <<<"$map" || missing+=("$f")
	done
	[ ${#missing[@]} = 0 ] || echo "# $2: not in its file map: ${missing[*]}"
	[ ${#missing[@]} = 0 ]
}

step_upstream() {
	local rc=0
	run upstream "$KITE_ROOT/scripts/build-upstream.sh" || rc=$?
	if [ "$rc" = 2 ]; then
		echo "#"
		echo "# !!! UPSTREAM BUILD SKIPPED: the newest Debian kernel source could not be fetched."
		grep -h 'UNAVAILABLE' "$LOGS/upstream.log" | sed 's/^/# /'
		echo "#"
		tap_skip "upstream: drivers build in the newest Debian kernel tree, W=1, no compat" \
			"linux-source-7.x unavailable"
		return
	fi
	[ "$rc" = 0 ] && no_warnings "$LOGS/upstream.log" || rc=1
	tap_result "$rc" "upstream: drivers build in the newest Debian kernel tree, W=1, no compat, no warnings"
}

step_patches() {
	local rc=0 dir=$LOGS/patches
	run make-patches "$KITE_ROOT/scripts/make-patches.sh" "$dir" || rc=$?
	[ "$rc" = 2 ] || tap_result "$rc" "patches: the series against the newest kernel (make patches) is written"
	tap_result "$([ -f "$dir/rdma-core/0000-cover-letter.patch" ]; echo $?)" \
		"patches: the rdma-core series (make patches) is written"
	rc=0
	run check-patches "$KITE_ROOT/scripts/check-patches.sh" "$dir" || rc=$?
	tap_import "$LOGS/check-patches.log" ""
	grep -q '^ok - patches: rdma-core: kite(7)' "$LOGS/check-patches.log" ||
		tap_not_ok "patches: every rdma-core patch applied and checked"
	if [ "$rc" = 2 ]; then
		tap_skip "patches: the series against the newest kernel" "linux-source-7.x unavailable"
		return
	fi
	# The last check, made once every patch applied.
	grep -q '^ok - patches: the MAINTAINERS entry covers' "$LOGS/check-patches.log" ||
		tap_not_ok "patches: every patch applied and checked"
}

step_qemu() {
	local rc=0 qemu asan
	run qemu "$KITE_ROOT/scripts/build-qemu.sh" || rc=1
	tap_result "$rc" "qemu: QEMU 7.2 with the Kite device model builds"
	[ "$rc" = 0 ] || return
	# The model's tests again on a build with AddressSanitizer: a memory
	# error that their valid, invalid and random input provokes fails them.
	# That build and its run go on beside the plain build's tests (each
	# takes about one CPU); their results are recorded after them.
	qemu_asan >"$LOGS/qemu-asan.out" &
	asan=$!
	qemu=$(tail -n 1 "$LOGS/qemu.log")
	run qtest "$KITE_ROOT/qemu/tests/kite-regs-qtest.sh" "$qemu"
	tap_import "$LOGS/qtest.log" "qtest regs: "
	run qtest-eth python3 "$KITE_ROOT/qemu/tests/kite-eth-qtest.py" "$qemu"
	tap_import "$LOGS/qtest-eth.log" "qtest eth: "
	run qtest-model "$KITE_ROOT/qemu/tests/kite-model-test.sh" "$qemu"
	tap_import "$LOGS/qtest-model.log" "qtest model: "
	for t in qtest qtest-eth qtest-model; do
		grep -q '^1\.\.' "$LOGS/$t.log" || tap_not_ok "$t: ran to completion"
	done
	rc=0
	wait "$asan" || rc=1
	cat "$LOGS/qemu-asan.out"
	tap_result "$rc" "qemu: QEMU 7.2 with the Kite device model builds with AddressSanitizer"
	[ "$rc" = 0 ] || return
	tap_import "$LOGS/qtest-model-asan.log" "qtest model (ASan): "
	grep -q '^1\.\.' "$LOGS/qtest-model-asan.log" ||
		tap_not_ok "qtest-model-asan: ran to completion"
}

# qemu_asan: build QEMU with AddressSanitizer (false when that fails) and
# run the model's tests on it (their TAP: $LOGS/qtest-model-asan.log).
# Leak reports are off: QEMU leaves much allocated at exit by design.
qemu_asan() {
	run qemu-asan "$KITE_ROOT/scripts/build-qemu.sh" --asan || return 1
	ASAN_OPTIONS=detect_leaks=0 run qtest-model-asan \
		"$KITE_ROOT/qemu/tests/kite-model-test.sh" "$(tail -n 1 "$LOGS/qemu-asan.log")"
	return 0
}

step_rdma_core() {
	local rc=0
	run rdma-core "$KITE_ROOT/scripts/build-rdma-core.sh" || rc=1
	tap_result "$rc" "rdma-core: libibverbs, librdmacm, tools and providers (kite, rxe, ...) build"
}

# The VM tests of both lanes: the lts lane (Debian's 6.12 kernel, every
# group) and the debug lane (the newest kernel with KASAN, lockdep,
# kmemleak, DMA-API debugging, ...: the groups in KITE_DEBUG_GROUPS).
#
# The debug lane's groups reach the drivers' paths: probe, bind, unload,
# PCI unbind/remove/rescan (bind); the command channel, EQs, every user
# verb, restrack, counters, mmap, libkite's data path, a hanging device
# (rdma); every kernel verb with bad input, device errors, the kernel data
# path (verbs); a kernel ULP's whole life (nvme: nvmet-rdma and nvme-rdma,
# I/O, disconnect); hostile user space (uvfuzz) and a hostile device under
# traffic, with resets (devfuzz, the mix of every class). The two-VM
# groups (link, eth) reach the same kite_ib and kite_en code (their
# difference is the wire, i.e. the device model). ethops, and failinject
# (the allocation-failure sweeps: about 6 minutes of one CPU, more than the
# 25-minute budget of a warm make check leaves), run on this lane by hand:
# scripts/vmtest.sh --lane debug GROUP, or make failinject.
KITE_DEBUG_GROUPS=${KITE_DEBUG_GROUPS:-bind rdma verbs nvme uvfuzz devfuzz}
# KITE_LTS_GROUPS: the lts lane's groups (default: all of vmtest.sh's).
# A VM is one single-threaded TCG vCPU: KITE_VM_SLOTS VMs run at once
# (default: one per CPU). The two-VM groups take two slots.
KITE_VM_SLOTS=${KITE_VM_SLOTS:-$(nproc)}

# The debug kernel is built in the background from the start, at the
# lowest priority, so that it takes the CPU time the other steps leave
# idle.
debug_kernel_pid=
debug_kernel_start() {
	log "debug-kernel: building in the background (log: $LOGS/debug-kernel.log)"
	nice -n 19 timeout --kill-after=30 $((2 * KITE_STEP_TIMEOUT)) \
		"$KITE_ROOT/scripts/build-debug-kernel.sh" >"$LOGS/debug-kernel.log" 2>&1 &
	debug_kernel_pid=$!
}

vm_slots_of() {
	local n=1
	case $1 in wire | eth | link | nfs | ucx) n=2 ;; esac
	[ "$n" -le "$KITE_VM_SLOTS" ] || n=$KITE_VM_SLOTS
	echo "$n"
}

# vm_lanes LANE...: run the VM groups of LANEs (lts, debug) as jobs that
# share the machine: each group is one vmtest.sh process with its own TAP
# file and logs. Jobs start in list order as their VMs fit (a job that
# does not fit holds back the ones after it, so a two-VM group is not
# starved): the two-VM groups first, while both slots are free, then the
# others, longest first; debug-lane jobs start once their lane is
# prepared (the debug kernel built). The results are imported in a fixed
# order.
vm_lanes_ran=0
vm_lanes() {
	local lane g job t0=$SECONDS free=$KITE_VM_SLOTS i fin
	local -a order=() pending=() lanes=("$@")
	local -A need=() jobpid=() started=() env=() prep=()
	# The device fuzzer: each class alone on the lts lane, the random
	# mix of every class (resets among the traffic) under the debug
	# kernel's checks (the whole fuzzer there takes over 15 minutes).
	local -A devfuzz_parts=([lts]=${KITE_LTS_DEVFUZZ:-classes} [debug]=${KITE_DEBUG_DEVFUZZ:-all})
	local dir=$LOGS/vmjobs
	mkdir -p "$dir"
	. "$KITE_ROOT/scripts/vmtest.sh"
	for lane in "${lanes[@]}"; do
		case $lane in
		lts) for g in ${KITE_LTS_GROUPS:-${KITE_VM_GROUPS[*]}}; do order+=("lts:$g"); done ;;
		debug) for g in $KITE_DEBUG_GROUPS; do order+=("debug:$g"); done ;;
		esac
	done
	for job in "${order[@]}"; do need[$job]=$(vm_slots_of "${job#*:}"); done
	# Start order: the two-VM groups, then the one-VM jobs of both lanes,
	# longest first (the last run's durations, else typical ones), so that
	# no long job starts last and runs alone.
	for job in "${order[@]}"; do [ "${need[$job]}" -gt 1 ] && pending+=("$job"); done
	while read -r _ job; do pending+=("$job"); done < <(
		for job in "${order[@]}"; do
			[ "${need[$job]}" = 1 ] && echo "$(vm_job_seconds "$job") $job"
		done | sort -s -k1,1nr)

	# Each lane is prepared once (QEMU, modules, initramfs; the debug
	# kernel), in the background for the debug lane.
	for lane in "${lanes[@]}"; do
		env[$lane]=$dir/prepared-$lane.env
		rm -f "${env[$lane]}"
		if [ "$lane" = lts ]; then
			if run vm-prepare bash -c ". '$KITE_ROOT/scripts/vm.sh' && vm_prepare_save '${env[lts]}'"; then
				continue
			fi
			tap_not_ok "vm: harness ready (QEMU, modules, initramfs)"
			vm_lanes_drop lts
			continue
		fi
		(
			# (Not this subshell's child: wait by polling.)
			while [ -n "$debug_kernel_pid" ] && kill -0 "$debug_kernel_pid" 2>/dev/null; do
				sleep 5
			done
			log "vm-debug: preparing the debug lane"
			KITE_LANE=debug timeout --kill-after=30 "$KITE_STEP_TIMEOUT" bash -c \
				". '$KITE_ROOT/scripts/vm.sh' && vm_prepare_save '${env[debug]}'" \
				>"$LOGS/vm-prepare-debug.log" 2>&1
		) &
		prep[debug]=$!
	done

	while [ ${#pending[@]} -gt 0 ] || [ ${#jobpid[@]} -gt 0 ]; do
		# Start what fits, in order.
		for i in "${!pending[@]}"; do
			job=${pending[i]}
			lane=${job%%:*}
			if [ ! -f "${env[$lane]}" ]; then
				[ -n "${prep[$lane]:-}" ] && continue
				# The lane could not be prepared.
				unset 'pending[i]'
				continue
			fi
			[ "${need[$job]}" -le "$free" ] || break
			free=$((free - need[$job]))
			started[$job]=$SECONDS
			KITE_DEVFUZZ_PARTS=${devfuzz_parts[$lane]} \
				KITE_VM_ENV=${env[$lane]} KITE_VMTEST_TAP=$dir/$lane-${job#*:}.tap \
				KITE_VMLOGS_BASE=$LOGS timeout --kill-after=30 "$KITE_STEP_TIMEOUT" \
				"$KITE_ROOT/scripts/vmtest.sh" --lane "$lane" "${job#*:}" \
				>"$dir/$lane-${job#*:}.log" 2>&1 &
			jobpid[$job]=$!
			unset 'pending[i]'
		done
		pending=("${pending[@]}")
		[ ${#jobpid[@]} -gt 0 ] || [ -n "${prep[debug]:-}" ] || break
		fin=
		# shellcheck disable=SC2086 # no preparation running: no word
		wait -n -p fin "${jobpid[@]}" ${prep[debug]:-} 2>/dev/null
		[ -n "$fin" ] || continue
		if [ "$fin" = "${prep[debug]:-}" ]; then
			unset 'prep[debug]'
			if [ -f "${env[debug]}" ]; then
				log "vm-debug: the debug lane is prepared"
			else
				log "vm-debug: the debug lane could not be prepared (log: $LOGS/vm-prepare-debug.log)"
			fi
			continue
		fi
		for job in "${!jobpid[@]}"; do
			[ "${jobpid[$job]}" = "$fin" ] || continue
			unset 'jobpid[$job]'
			free=$((free + need[$job]))
			log "vm: $job done after $((SECONDS - started[$job]))s ($((SECONDS - t0))s into the VM tests)"
			vm_job_seconds_save "$job" $((SECONDS - started[$job]))
		done
	done

	# The results, lane by lane in the groups' order.
	for lane in "${lanes[@]}"; do
		if [ "$lane" = debug ] && [ ! -f "${env[debug]}" ]; then
			if grep -qs 'UPSTREAM KERNEL UNAVAILABLE' "$LOGS/vm-prepare-debug.log" \
				"$LOGS/debug-kernel.log"; then
				echo "#"
				echo "# !!! DEBUG LANE SKIPPED: the newest Debian kernel source could not be fetched."
				echo "#"
				tap_skip "vm-debug: the debug lane ran" "linux-source-7.x unavailable"
			else
				tap_not_ok "vm-debug: harness ready (the debug kernel, modules, initramfs)"
				tail -n 25 "$LOGS/vm-prepare-debug.log" | sed 's/^/# /'
			fi
			continue
		fi
		[ -f "${env[$lane]}" ] || continue
		for job in "${order[@]}"; do
			[ "${job%%:*}" = "$lane" ] || continue
			g=${job#*:}
			tap_import "$dir/$lane-$g.tap" ""
			# The group's diagnostics: what failed, its figures.
			grep -vE '^(not )?ok [0-9]+ - |^TAP version|^1\.\.[0-9]+$|^[0-9]+ passed, ' \
				"$dir/$lane-$g.log" | grep . | sed -E 's/^([^#])/# \1/' | head -n 400
			grep -qE '^[0-9]+ passed, 0 failed' "$dir/$lane-$g.log" ||
				tap_not_ok "$lane $g: the VM tests ran to their end without failures"
		done
	done
	log "vm: both lanes in $((SECONDS - t0))s"
}

# How long each VM job took in the last run that ran it, for the start
# order: "LANE:GROUP SECONDS" lines.
VM_JOB_SECONDS=$KITE_CACHE/results/vm-job-seconds
# Typical durations on 2 cores (CI of cbaad0c; lts:loss with two cycles and
# NVMe, 2026-11-25), for jobs not yet timed.
declare -A VM_JOB_TYPICAL=([debug:rdma]=380 [debug:verbs]=250 [debug:devfuzz]=220
	[debug:nvme]=160 [lts:loss]=260 [debug:uvfuzz]=120 [debug:bind]=105 [lts:rdma]=95
	[lts:devfuzz]=70 [lts:pyverbs]=50 [lts:verbs]=30 [lts:demo]=20 [lts:nvme]=20
	[lts:ethops]=20 [lts:uvfuzz]=20 [lts:bind]=15 [lts:dkms]=45 [lts:failinject]=0)

# vm_job_seconds JOB: the seconds JOB is expected to take.
vm_job_seconds() {
	local s
	s=$(awk -v j="$1" '$1 == j { s = $2 } END { print s }' "$VM_JOB_SECONDS" 2>/dev/null)
	echo "${s:-${VM_JOB_TYPICAL[$1]:-60}}"
}

# vm_job_seconds_save JOB SECONDS: record how long JOB took.
vm_job_seconds_save() {
	mkdir -p "$(dirname "$VM_JOB_SECONDS")"
	{
		grep -v "^$1 " "$VM_JOB_SECONDS" 2>/dev/null
		echo "$1 $2"
	} >"$VM_JOB_SECONDS.tmp" && mv "$VM_JOB_SECONDS.tmp" "$VM_JOB_SECONDS"
}

vm_lanes_drop() {
	local i
	for i in "${!pending[@]}"; do
		[ "${pending[i]%%:*}" = "$1" ] && unset 'pending[i]'
	done
	pending=("${pending[@]}")
}

# check.sh vm, vm-debug or both: one run of the lanes asked for.
step_vm() {
	[ "$vm_lanes_ran" = 0 ] || return 0
	vm_lanes_ran=1
	local -a lanes=()
	case " $STEPS " in *" vm "*) lanes+=(lts) ;; esac
	case " $STEPS " in *" vm-debug "*) lanes+=(debug) ;; esac
	vm_lanes "${lanes[@]}"
}
step_vm_debug() { step_vm; }

t_start=$SECONDS
if ! run setup "$KITE_ROOT/scripts/setup-host.sh"; then
	tap_not_ok "setup: Debian packages installed"
	tap_finish
	exit 1
fi
KVER=$(guest_kver)
KDIR=/lib/modules/$KVER/build

[ $# -gt 0 ] || set -- build sparse checkpatch prm kunit upstream patches qemu rdma-core vm vm-debug
STEPS="$*"
case " $* " in *" vm-debug "*) debug_kernel_start ;; esac
for s in "$@"; do
	declare -F "step_${s//-/_}" >/dev/null || die "unknown step: $s"
	"step_${s//-/_}"
done
log "check: $((SECONDS - t_start))s in all; logs in $LOGS"
tap_finish
