#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test (debug lane): allocation failures injected into the Kite
# drivers. failslab and fail_page_alloc are restricted, by their
# stack-trace filter, to allocations made while one module's code is on
# the stack; the per-task fail-nth counter then fails the 1st, 2nd, ...
# such allocation of one operation, until the operation makes no more:
#   - kite_en's PCI probe (bind; kite_ib not loaded),
#   - kite_ib's probe (bind of the auxiliary device: command channel,
#     EQs, ib_device registration),
#   - every user verb's path (tools/testing/kite/kite_failnth: context,
#     PD, MR, CQ, extended CQ, CQ resize, RC and UD QPs, modify to RTS, AH),
#   - kite_en's netdev open (rings, RX page pool and its first fill).
# Each failure must fail the operation with an errno, leave no object
# ("rdma res") and no leak (kmemleak at the end of the VM), and the
# operation must succeed afterwards. The figures (failures injected, call
# sites reached) are printed.
. "$KITE_ROOT/scripts/guest/lib.sh"

DBG=/sys/kernel/debug
NTH=/proc/thread-self/fail-nth
aux=/sys/bus/auxiliary/devices/kite_en.rdma.0
ibdrv=/sys/bus/auxiliary/drivers/kite_ib.kite_ib
endrv=/sys/bus/pci/drivers/kite_en
# Every allocation up to DENSE is failed in turn, then every STRIDE-th up
# to MAX (ib_device registration alone makes hundreds, each probe takes
# seconds on the debug kernel).
DENSE=40 STRIDE=23 MAX=700

if [ ! -d "$DBG/failslab" ] || [ ! -e "$NTH" ]; then
	echo "ok - failinject: allocation-failure injection # SKIP kernel without CONFIG_FAILSLAB" >>"$KITE_RESULTS"
	finish
fi

bound_to_kite_ib() { [ "$(basename "$(readlink "$aux/driver")")" = kite_ib.kite_ib ]; }
res_summary() { rdma res show | sed -n 's/^[0-9]*: \(kite0: .*\)$/\1/p'; }

# fi_module MODULE: look up the text range of MODULE, loaded for the rest
# of the test, once (kallsyms is large on the debug kernel; call it from
# the test's shell, not a subshell): fi_range[MODULE]="FIRST LAST".
declare -A fi_range
fi_module() {
	fi_range[$1]=$(awk -v m="[$1]" '$4 == m && ($2 == "t" || $2 == "T") { print $1 }' \
		/proc/kallsyms | sort | sed -n '1p;$p' | tr '\n' ' ')
}

# fi_restrict MODULE: failslab and fail_page_alloc fail only allocations
# with a frame of MODULE's text among the 32 innermost of their stack.
fi_restrict() {
	local first last a
	[ -n "${fi_range[$1]:-}" ] || fi_module "$1"
	read -r first last <<<"${fi_range[$1]}"
	[ -n "$first" ] && [ "$first" != 0000000000000000 ] || return 1
	last=${last:-$first}
	for a in failslab fail_page_alloc; do
		echo 0 >"$DBG/$a/probability"
		echo -1 >"$DBG/$a/times"
		# 2: with the stack, which names the call site.
		echo 2 >"$DBG/$a/verbose"
		echo N >"$DBG/$a/task-filter"
		echo 32 >"$DBG/$a/stacktrace-depth"
		echo "0x$first" >"$DBG/$a/require-start"
		printf '0x%x\n' $((0x$last + 0x1000)) >"$DBG/$a/require-end"
		echo N >"$DBG/$a/ignore-gfp-wait"
	done
	echo N >"$DBG/fail_page_alloc/ignore-gfp-highmem"
	echo 0 >"$DBG/fail_page_alloc/min-order"
}

# no_new_leaks: kmemleak finds no object unreferenced since the last
# call (two scans: an object is reported once it has been unreferenced
# for a while); what it finds is printed and then cleared, so that each
# call reports only its own. True without kmemleak.
no_new_leaks() {
	local k=/sys/kernel/debug/kmemleak out f
	[ -w "$k" ] || return 0
	echo scan >"$k"
	sleep 6
	echo scan >"$k"
	out=$(cat "$k")
	echo clear >"$k"
	[ -z "$out" ] && return 0
	# The whole report, with the processes alive now (to match its pids
	# against), in the VM's log directory; its first object here.
	f=/kite-out/kmemleak-found-$EPOCHSECONDS.txt
	{
		echo "$out"
		echo "--- processes:"
		ps -eo pid,ppid,stat,cmd
	} >"$f"
	echo "kmemleak: $(grep -c '^unreferenced object' <<<"$out") objects ($f); the first:"
	echo "$out" | head -n 18
	return 1
}

# pin_leak VERB COUNT: a sweep of VERB leaked: fail its allocations 1 ..
# COUNT one at a time, a process each, and print the first whose failure
# leaks, with the injection's stack (the call site) and kmemleak's report.
pin_leak() {
	local verb=$1 count=${2:-0} n leak
	[ "$count" -gt 0 ] || return 0
	for n in $(seq 1 "$count"); do
		kite_mark "pin-leak-$n"
		fi_restrict kite_ib
		LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib "$KITE_TOOLS/kite_failnth" kite0 "${gidx:-0}" "$verb" "$n"
		fi_off
		if ! leak=$(no_new_leaks); then
			echo "--- $verb: failing allocation $n leaks; the injected failure:"
			kernel_log_since "pin-leak-$n" | sed -n '/FAULT_INJECTION/,/<\/TASK>/p' | head -n 60
			echo "--- kmemleak:"
			echo "$leak" | head -n 40
			return 0
		fi
	done
	echo "--- $verb: no single failed allocation of 1..$count leaks"
}

fi_off() {
	local a
	for a in failslab fail_page_alloc; do
		echo 0 >"$DBG/$a/probability"
	done
	echo 0 >"$NTH"
}

# sweep NAME WRITE_FILE VALUE UNDO_CMD OK_CMD: for n = 1, 2, ...: fail the
# n-th filtered allocation of the write of VALUE to WRITE_FILE (done by
# this shell, so in this task); when a failure was injected the write
# must have failed, or OK_CMD must hold (a fallback absorbed it; UNDO_CMD
# then undoes it); when none was, the write must have succeeded. An
# operation that makes more than MAX such allocations is swept up to MAX
# and must then succeed without injection. Sets sweep_injected and
# sweep_result.
sweep() {
	local name=$1 file=$2 value=$3 undo=$4 okcmd=$5 n=1 rc left absorbed=0 bad=0
	local swept
	sweep_injected=0
	while :; do
		if [ "$n" -gt "$MAX" ]; then
			# Bounded: the first MAX allocations swept; now none fails.
			swept="up to $MAX of more"
			left=none
		else
			swept="$((n - 1)) in all"
			echo "$n" >"$NTH"
		fi
		rc=0
		echo "$value" >"$file" 2>/dev/null || rc=$?
		[ "$left" = none ] || read -r left <"$NTH"
		echo 0 >"$NTH"
		if [ "$left" != 0 ]; then
			# Nothing (left) to fail: the operation must work now.
			if [ "$rc" = 0 ] && eval "$okcmd"; then
				sweep_result="$sweep_injected failures injected (allocations 1..$DENSE, then every ${STRIDE}th, $swept), $absorbed absorbed, $bad not unwound; then it succeeds"
				[ "$bad" = 0 ]
				return
			fi
			sweep_result="fails without an injected failure (n=$n, exit $rc)"
			return 1
		fi
		sweep_injected=$((sweep_injected + 1))
		if [ "$rc" = 0 ]; then
			# The write succeeded although an allocation failed.
			if eval "$okcmd"; then
				absorbed=$((absorbed + 1))
			else
				echo "$name: n=$n: write succeeded but the device is not usable"
				bad=$((bad + 1))
			fi
			eval "$undo"
		fi
		if [ "$n" -lt "$DENSE" ]; then n=$((n + 1)); else n=$((n + STRIDE)); fi
	done
}

kite_mark failinject
bdf=$(kite_bdf)

# --- kite_en probe -----------------------------------------------------
check "failinject: kite_en loads" insmod "$KITE_EN_KO"
fi_module kite_en
check "failinject: restrict injection to kite_en" fi_restrict kite_en
echo "$bdf" >"$endrv/unbind"
en_probe() {
	sweep kite_en_probe "$endrv/bind" "$bdf" "echo $bdf >$endrv/unbind" \
		"test -d $aux" || { echo "$sweep_result"; return 1; }
	echo "kite_en probe: $sweep_result" >>/tmp/failinject-figures
}
check "failinject: kite_en probe: every failed allocation unwinds, then probe succeeds" en_probe
fi_off
check "failinject: kite_en bound after the sweep" test -d "$aux"
check "failinject: kite_en probe sweep: no leak" no_new_leaks

# --- kite_ib probe -----------------------------------------------------
check "failinject: kite_ib loads and binds" bash -c "insmod $KITE_IB_KO && sleep 0 && [ -e $aux/driver ]"
fi_module kite_ib
check "failinject: restrict injection to kite_ib" fi_restrict kite_ib
echo kite_en.rdma.0 >"$ibdrv/unbind"
ib_probe() {
	sweep kite_ib_probe "$ibdrv/bind" kite_en.rdma.0 "echo kite_en.rdma.0 >$ibdrv/unbind" \
		"bound_to_kite_ib && test -d /sys/class/infiniband/kite0" ||
		{ echo "$sweep_result"; return 1; }
	echo "kite_ib probe: $sweep_result" >>/tmp/failinject-figures
}
check "failinject: kite_ib probe: every failed allocation unwinds, then probe succeeds" ib_probe
fi_off
check "failinject: kite_ib bound after the sweep" bound_to_kite_ib
check "failinject: kite_ib probe sweep: no leak" no_new_leaks

# --- user verbs ----------------------------------------------------------
nic=$(kite_netdev)
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
check "failinject: port active" wait_for 10 bash -c "rdma link show kite0/1 | grep -q 'state ACTIVE'"
gidx=
for f in /sys/class/infiniband/kite0/ports/1/gids/*; do
	grep -q '0000:0000:0000:0000:0000:ffff:0a4d:0001' "$f" && gidx=$(basename "$f")
done
before=$(res_summary)
# failnth VERB: kite_failnth's sweep of VERB, a process of its own.
failnth() {
	fi_restrict kite_ib
	LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib "$KITE_TOOLS/kite_failnth" kite0 "${gidx:-0}" "$1" 2>&1
	fi_off
}
mapfile -t verbs < <("$KITE_TOOLS/kite_failnth" --list)
out=
for verb in "${verbs[@]}"; do
	o=$(failnth "$verb")
	out+="$o"$'\n'
	echo "$o"
done
# One leak check for all the processes, which have exited (a kmemleak
# scan takes seconds on the debug kernel). A leak is then located: each
# verb's sweep again, checked on its own, and its first leaking failure.
if ! check "failinject: user verbs: no leak once the processes have exited" no_new_leaks; then
	for verb in "${verbs[@]}"; do
		o=$(failnth "$verb")
		no_new_leaks >/dev/null && continue
		echo "--- $verb: its sweep leaks"
		pin_leak "$verb" "$(sed -n 's/.*: \([0-9]*\) allocations failed in turn.*/\1/p' <<<"$o" | head -n 1)"
	done
fi
kite_results "" <<<"$out"
check "failinject: kite_failnth ran every verb" bash -c "test \$(grep -c '^ok - failnth: .*then it succeeds' <<<'$out') -ge 10"
check "failinject: rdma res back to its counts after the verb sweeps" \
	bash -c "test \"\$(rdma res show | sed -n 's/^[0-9]*: \\(kite0: .*\\)\$/\\1/p')\" = '$before'"

# --- netdev open: rings and the RX page pool --------------------------------
# The RX refill of a running ring is in NAPI (softirq) context, which
# fail-nth does not reach; the rings and their first fill are made by
# ndo_open, in the task that sets IFF_UP (here through sysfs).
fi_restrict kite_en
echo 0x1002 >"/sys/class/net/$nic/flags"
en_open() {
	sweep kite_en_open "/sys/class/net/$nic/flags" 0x1003 \
		"echo 0x1002 >/sys/class/net/$nic/flags" \
		"ip link show $nic | grep -q ',UP'" || { echo "$sweep_result"; return 1; }
	echo "kite_en open: $sweep_result" >>/tmp/failinject-figures
}
check "failinject: kite_en open: every failed allocation unwinds, then the link comes up" en_open
fi_off
check "failinject: port ACTIVE again after the open sweep" \
	wait_for 10 bash -c "rdma link show kite0/1 | grep -q 'state ACTIVE'"
check "failinject: kite_en open sweep: no leak" no_new_leaks

# --- the figures -----------------------------------------------------------
echo "--- allocation-failure sweeps:"
cat /tmp/failinject-figures
echo "$out" | grep 'failnth:'
echo "--- allocation failures injected, by call site (the innermost Kite frame; a __GFP_NOWARN allocation fails without a report and is not counted):"
kernel_log_since failinject | python3 "$KITE_SPLATS_PY" --injected --quiet-known | grep '^#'
check "failinject: unload both drivers" bash -c "rmmod kite_ib && rmmod kite_en"
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
finish
