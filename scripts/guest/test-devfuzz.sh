#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test: a device-side fuzzer. Under kernel RDMA traffic (kite_verbs_test
# "traffic": SENDs and RDMA WRITEs through the device's loopback, data
# compared), the model corrupts what the drivers read from DMA memory and
# registers (QOM fault-corrupt, fault-corrupt-count, fault-seed): each class
# once on its own, then a seeded random mix. After each: no splat in the
# kernel log, the drivers' reaction is seen (the "bad device data (CLASS)"
# log line and what follows: QP or CQ isolated, device reset), and the
# device works again (new traffic, all of it successful). A table of
# figures (class, injected, detected, reaction) ends the guest log.
. "$KITE_ROOT/scripts/guest/lib.sh"

KVT_KO=$KITE_TESTMOD_DIR/kite_verbs_test.ko
run=/sys/module/kite_verbs_test/parameters/run
gids=/sys/class/infiniband/kite0/ports/1/gids
SEED=${KITE_FUZZ_SEED:-20261123}
# What to run: "classes" (each class once, alone), "contained" (a seeded
# random mix of the classes contained without a reset), "all" (a mix of
# every class, resets among the traffic), "mixes" (both mixes); default:
# everything.
PARTS=${KITE_DEVFUZZ_PARTS:-classes mixes}
[[ " $PARTS " != *" mixes "* ]] || PARTS="$PARTS contained all"
MIX_COUNT=${KITE_FUZZ_MIX:-24}

# injected CLASS: how often the model corrupted CLASS so far.
injected() {
	host_monitor "qom-get /machine/peripheral/kite0 fault-injected" || return 1
	grep -ao '"[a-z0-9= -]*"' /kite-out/reply | tail -n 1 |
		grep -oE "(^|[\" ])$1=[0-9]+" | grep -oE '[0-9]+$' || echo 0
}
# fault_count: the corruptions the model has left to make.
fault_count() {
	host_monitor "qom-get /machine/peripheral/kite0 fault-corrupt-count" &&
		tr -d '\r' </kite-out/reply | grep -E '^[0-9]+$' | tail -n 1
}
# detected MARK CLASS: the drivers' "bad device data (CLASS)" lines since MARK.
detected() { kernel_log_since "$1" | grep -c "bad device data ($2)"; }
port_active() {
	rdma link show kite0/1 2>/dev/null | grep -q 'state ACTIVE' &&
		grep -q '0000:0000:0000:0000:0000:ffff:0a4d:0001' $gids/* 2>/dev/null
}

# traffic N: run N exchanges; prints "OK FAILED" of the run.
traffic() {
	local mark=traffic-$RANDOM$RANDOM line
	kite_mark "$mark"
	echo "traffic $1" >"$run"
	line=$(kernel_log_since "$mark" | grep -oE '# traffic: [0-9]+ exchanges, [0-9]+ ok, [0-9]+ failed' | tail -n 1)
	set -- $line
	echo "${5:-0} ${7:-0}"
}

# recovered: kite0 is back (after a reset if there was one) with its port
# active and the client attached, and 20 exchanges all succeed.
recovered() {
	local r
	wait_for 60 port_active || return 1
	# The test module follows kite0 through resets: attached to the last.
	wait_for 10 bash -c "dmesg | grep -E 'kite_verbs_test: (attached to|detached from) kite0' | tail -n 1 | grep -q attached" ||
		return 1
	r=$(traffic 20)
	echo "traffic after recovery: ${r% *} ok, ${r#* } failed"
	[ "$r" = "20 0" ]
}

check "kite_en, kite_ib and kite_verbs_test load" bash -c \
	"insmod $KITE_EN_KO && insmod $KITE_IB_KO cmd_timeout_ms=2000 && insmod $KVT_KO"
nic=$(kite_netdev)
bdf=$(kite_bdf)
sysctl -qw "net.ipv6.conf.$nic.disable_ipv6=1"
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
check "port active with the IPv4 GID" wait_for 10 port_active
check "traffic without faults: 20 of 20 exchanges succeed" bash -c "[ '$(traffic 20)' = '20 0' ]"
check "fault-seed $SEED set" fault "fault-seed $SEED"

# CLASS TRIGGER REACTION_REGEX: how each class is provoked (traffic: the
# kernel data path; link: a link change makes kite_en read STATUS; reset: a
# function reset makes it re-read the interface revision) and the reaction
# that must follow its detection.
declare -A INJ DET REACT TR TRIGGER REACTION
CLASSES=()
while read -r class trigger reaction; do
	CLASSES+=("$class")
	TRIGGER[$class]=$trigger
	REACTION[$class]=$reaction
	INJ[$class]=- DET[$class]=- TR[$class]=-
done <<'EOF'
cqe-cqn traffic QP [0-9]+ (isolated|destroyed before it was isolated)
cqe-qpn traffic CQ [0-9]+ lost a completion
cqe-wqe-idx traffic QP [0-9]+ (isolated|destroyed before it was isolated)
cqe-opcode traffic QP [0-9]+ (isolated|destroyed before it was isolated)
cqe-len traffic QP [0-9]+ (isolated|destroyed before it was isolated)
cqe-owner traffic CQ [0-9]+ lost a completion
cqe-syndrome traffic QP [0-9]+ (isolated|destroyed before it was isolated)
eqe-type traffic event type 0x[0-9a-f]+ for object [0-9]+ ignored
eqe-obj traffic event type 0x[0-9a-f]+ for object [0-9]+ ignored
cmd-cookie traffic unknown or stale cookie 0x[0-9a-f]+ ignored
cmd-status traffic device failed \(command completion makes no sense\)
cmd-result traffic device failed \(command completion makes no sense\)
reg-status link STATUS reads 0x[0-9a-f]+, resetting
reg-version reset interface revision 0x[0-9a-f]+ after reset, 0x[0-9a-f]+ at probe: resetting again
EOF

# Each class once on its own (KITE_DEVFUZZ_PARTS has "classes").
for class in "${CLASSES[@]}"; do
	[[ " $PARTS " == *" classes "* ]] || break
	trigger=${TRIGGER[$class]}
	reaction=${REACTION[$class]}
	mark=fuzz-$class
	kite_mark "$mark"
	i0=$(injected "$class")
	fault "fault-corrupt $class" "fault-corrupt-count 1"
	case $trigger in
	traffic) r=$(traffic 40) ;;
	link)
		host_monitor "set_link n1 off"
		sleep 1
		host_monitor "set_link n1 on"
		sleep 1
		r="- -" ;;
	reset)
		echo 1 >"/sys/bus/pci/devices/$bdf/reset"
		r="- -" ;;
	esac
	fault "fault-corrupt-count 0" "fault-corrupt none"
	i1=$(injected "$class")
	INJ[$class]=$((i1 - i0))
	TR[$class]="${r% *}/${r#* }"
	# The reaction may take a moment (isolation work, reset).
	wait_for 15 since_mark "$mark" "$reaction"
	DET[$class]=$(detected "$mark" "$class")
	REACT[$class]=$(kernel_log_since "$mark" | grep -oE "$reaction" | head -n 1)
	echo "$class: injected ${INJ[$class]}, detected ${DET[$class]}, traffic ${r% *} ok ${r#* } failed, reaction: ${REACT[$class]:-none}"
	check "$class: the model injected one corruption" test "${INJ[$class]}" = 1
	check "$class: the driver detected it (bad device data ($class))" test "${DET[$class]}" -ge 1
	check "$class: reaction seen ($reaction)" since_mark "$mark" "$reaction"
	check "$class: no splat in the kernel log" dmesg_clean
	check "$class: the device works again (20 of 20 exchanges)" recovered
done

# Seeded random mixes under a longer stream, with link changes and a reset
# among it: first of the classes the drivers contain without a reset (CQEs,
# EQEs, cookies), so that the data path meets many; then of every class.
declare -A MI MD
for c in "${CLASSES[@]}"; do MI[$c]=0 MD[$c]=0; done
mix_inj=0 mix_det=0
MIXES=()

# mix NAME SEED CLASSES COUNT
mix() {
	local name=$1 seed=$2 classes=$3 count=$4 mark=fuzz-mix-$1 round r left c
	local inj=0 det=0 ok=0 failed=0 resets=0 i d
	local -A m0
	kite_mark "$mark"
	for c in "${CLASSES[@]}"; do m0[$c]=$(injected "$c"); done
	fault "fault-seed $seed" "fault-corrupt $classes" "fault-corrupt-count $count"
	for round in 1 2 3 4 5 6; do
		r=$(traffic 50)
		ok=$((ok + ${r% *}))
		failed=$((failed + ${r#* }))
		case $round in
		2) host_monitor "set_link n1 off"; sleep 1; host_monitor "set_link n1 on"; sleep 1 ;;
		4) echo 1 >"/sys/bus/pci/devices/$bdf/reset" ;;
		esac
		# The stream stops early while the device resets: let it come
		# back. A corruption during kite_ib's probe makes the probe fail
		# (a device failing while set up is not reset, lest it loop):
		# reset it then, as a user would, with the fuzzer paused.
		if ! wait_for 20 port_active; then
			left=$(fault_count)
			fault "fault-corrupt-count 0"
			echo "mix $name round $round: kite0 not back, resetting the function ($left corruptions left)"
			resets=$((resets + 1))
			echo 1 >"/sys/bus/pci/devices/$bdf/reset"
			wait_for 30 port_active
			fault "fault-corrupt-count ${left:-0}"
		fi
	done
	fault "fault-corrupt-count 0" "fault-corrupt none"
	for c in "${CLASSES[@]}"; do
		i=$(($(injected "$c") - ${m0[$c]}))
		d=$(detected "$mark" "$c")
		MI[$c]=$((${MI[$c]} + i))
		MD[$c]=$((${MD[$c]} + d))
		inj=$((inj + i))
		det=$((det + d))
	done
	mix_inj=$((mix_inj + inj))
	mix_det=$((mix_det + det))
	MIXES+=("mix $name (seed $seed, $classes): $inj injected, $det detected; traffic $ok ok, $failed failed; $resets function resets by hand")
	echo "${MIXES[-1]}"
	check "mix $name: the model injected corruptions ($inj)" test "$inj" -gt 0
	check "mix $name: the drivers detected them ($det lines for $inj corruptions)" test "$det" -gt 0
	check "mix $name: no splat in the kernel log" dmesg_clean
	# A device left failed by the mix is brought back as a user would.
	if ! wait_for 30 port_active; then
		echo "mix $name: kite0 not back, resetting the function"
		echo 1 >"/sys/bus/pci/devices/$bdf/reset"
	fi
	check "mix $name: the device works again (20 of 20 exchanges)" recovered
}

if [[ " $PARTS " == *" contained "* ]]; then
	mix contained $((SEED + 1)) \
		cqe-cqn,cqe-qpn,cqe-wqe-idx,cqe-opcode,cqe-len,cqe-owner,cqe-syndrome,eqe-type,eqe-obj,cmd-cookie \
		"$MIX_COUNT"
fi
[[ " $PARTS " != *" all "* ]] || mix all $((SEED + 2)) all "$MIX_COUNT"

# sum VALUE...: the sum of the numbers among VALUEs ("-": not run).
sum() {
	local v n=0
	for v in "$@"; do [[ $v =~ ^[0-9]+$ ]] && n=$((n + v)); done
	echo "$n"
}

# Figures.
{
	echo "devfuzz figures (seed $SEED; parts: $PARTS; the mixes: $MIX_COUNT corruptions each)"
	printf '%-13s %8s %8s %9s %8s %8s  %s\n' class injected detected ok/failed \
		mix-inj mix-det reaction
	for c in "${CLASSES[@]}"; do
		printf '%-13s %8s %8s %9s %8s %8s  %s\n' "$c" "${INJ[$c]}" "${DET[$c]}" \
			"${TR[$c]}" "${MI[$c]}" "${MD[$c]}" "${REACT[$c]:-none}"
	done
	printf '%-13s %8s %8s %9s %8s %8s\n' total \
		"$(sum "${INJ[@]}")" "$(sum "${DET[@]}")" "" \
		"$mix_inj" "$mix_det"
	echo "(ok/failed: exchanges of the 40-exchange stream during the injection)"
	printf '%s\n' "${MIXES[@]}"
	echo "crashes: $(dmesg | grep -cE "$KITE_SPLAT_RE")"
} | tee /kite-out/devfuzz-figures.txt

check "kite_verbs_test, kite_ib and kite_en unload" bash -c "rmmod kite_verbs_test && rmmod kite_ib && rmmod kite_en"
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
finish
