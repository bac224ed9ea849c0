#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test: kite_ib's kernel verbs with bad input, called through the RDMA
# core by the test module kite_verbs_test (tools/testing/kite): capacities
# beyond the device's, unsupported QP types, invalid QP state transitions
# and attributes, moderation limits; a device that fails a command with an
# error status (the model's fault-cmd-opcode/fault-cmd-status), then one
# that stops answering (fault-cmd-hang) while a kernel consumer holds
# objects: time-out, IB_EVENT_DEVICE_FATAL, commands failing fast, local
# destroys, recovery by rebinding. Each case set's results are the module's
# "ok - SET: ..." kernel log lines; "rdma res" must show the same objects
# after every set as before.
. "$KITE_ROOT/scripts/guest/lib.sh"

KVT_KO=$KITE_TESTMOD_DIR/kite_verbs_test.ko
run=/sys/module/kite_verbs_test/parameters/run
drv=/sys/bus/auxiliary/drivers/kite_ib.kite_ib
aux=/sys/bus/auxiliary/devices/kite_en.rdma.0
gids=/sys/class/infiniband/kite0/ports/1/gids
# Small, so that the hang case is quick; the module checks the wait.
TIMEOUT_MS=$((1000 * KITE_SCALE))

kite_ib_bound() { [ "$(basename "$(readlink "$aux/driver")")" = kite_ib.kite_ib ]; }
# The device's objects as "rdma res" counts them: "kite0: pd 1 cq 2 ...".
res_summary() { rdma res show | sed -n 's/^[0-9]*: \(kite0: .*\)$/\1/p'; }

# kvt SET [ARGS]: run a case set of kite_verbs_test; each of its result
# lines becomes a check, and the set must have run to its end.
kvt_n=0
kvt() {
	local log line
	kvt_n=$((kvt_n + 1))
	kvt_mark="verbs-$kvt_n"
	kite_mark "$kvt_mark"
	echo "$*" >"$run"
	log=$(kernel_log_since "$kvt_mark" | sed -n 's/^\[[^]]*\] kite_verbs_test: //p')
	kite_results "verbs: " <<<"$log"
	# The module's diagnostics.
	while IFS= read -r line; do
		[[ $line != "# "* ]] || echo "    $line"
	done <<<"$log"
	check "verbs $*: the case set ran to its end" \
		grep -qE "^done $1: [0-9]+ cases, [0-9]+ failed$" <<<"$log"
}

check "kite_en, kite_ib (cmd_timeout_ms=$TIMEOUT_MS) and kite_verbs_test load" bash -c \
	"insmod $KITE_EN_KO && insmod $KITE_IB_KO cmd_timeout_ms=$TIMEOUT_MS && insmod $KVT_KO"
check "kite_verbs_test attached to kite0" bash -c "dmesg | grep -q 'kite_verbs_test: attached to kite0'"
nic=$(kite_netdev)
# No IPv6: no GID may come or go (a command) while the device hangs.
sysctl -qw "net.ipv6.conf.$nic.disable_ipv6=1"
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
check "port active with the IPv4 GID" wait_for 10 bash -c \
	"rdma link show kite0/1 | grep -q 'state ACTIVE' && grep -q '0000:0000:0000:0000:0000:ffff:0a4d:0001' $gids/*"
base=$(res_summary)
check "rdma res: kite0's objects counted ($base)" test -n "$base"

# Input the verbs must refuse, each with its errno.
kvt bad
check "rdma res: the same objects after the bad-input cases" test "$(res_summary)" = "$base"

# The device fails one command with an error status: OPCODE STATUS NAME.
# Together the cases cover every status and every verb's command.
while read -r op status name; do
	fault "fault-cmd-status $status" "fault-cmd-opcode $op"
	kvt fault "$op" "$status"
	fault "fault-cmd-opcode -1" "fault-cmd-status 0"
	case $status in
	3 | 8 | 9 | 10 | 127)
		# Statuses that mean a driver or device fault are logged.
		check "fault $name status $status: kite_ib logs the failed command" \
			since_mark "$kvt_mark" "kite_ib.*command $name \\($(printf '0x%02x' "$op")\\) failed: status $(printf '0x%02x' "$status")"
		;;
	esac
	case $name in
	DESTROY_* | DEREG_* | DEALLOC_*)
		# The object the device could not destroy goes now.
		kvt works
		;;
	esac
	check "rdma res: the same objects after the $name fault" test "$(res_summary)" = "$base"
done <<'EOF'
10 4 ALLOC_PD
24 10 CREATE_CQ
32 2 CREATE_QP
33 6 MODIFY_QP
34 8 QUERY_QP
26 1 MODIFY_CQ
2 5 QUERY_PORT
40 9 REG_MR
41 3 ALLOC_MR
27 7 DESTROY_CQ
35 7 DESTROY_QP
42 5 DEREG_MR
11 127 DEALLOC_PD
EOF

# With the fault cleared, everything works, and the device's tables hold
# what it promised: nothing leaked inside the device either.
kvt works
kvt capacity
check "rdma res: the same objects after the capacity cases" test "$(res_summary)" = "$base"

# The kernel data path in the device's loopback (data compared, drain),
# and the CQ arm rules as a kernel consumer sees them.
kvt data
kvt events
check "rdma res: the same objects after the data and events cases" test "$(res_summary)" = "$base"

# Shared receive queues: a kernel consumer's SENDs through an SRQ (data
# compared), the limit event, drain; restrack lists the SRQ meanwhile.
kvt srq
check "rdma res: the same objects after the SRQ cases" test "$(res_summary)" = "$base"

# The device stops answering while a kernel consumer holds objects.
kvt hang_prepare
check "hang: the device stops completing commands (fault-cmd-hang)" fault "fault-cmd-hang true"
kvt hang "$TIMEOUT_MS"
check "hang: kite_ib reports the time-out" since_mark "$kvt_mark" \
	"kite_ib.*command CREATE_CQ \\(0x18\\) timed out after $TIMEOUT_MS ms"
check "hang: kite_ib requests a reset" since_mark "$kvt_mark" 'kite_en.*reset requested by the RDMA driver'
check "hang: the client is removed from the failed kite0" \
	wait_for 30 since_mark "$kvt_mark" 'kite_verbs_test: detached from kite0'
check "hang: probe of the re-created device fails while it hangs" \
	wait_for 30 since_mark "$kvt_mark" 'probe with driver kite_ib.kite_ib failed'
kite_mark rebind
check "hang: the device answers again" fault "fault-cmd-hang false"
check "hang: rebinding kite_ib succeeds" bash -c "echo kite_en.rdma.0 >$drv/bind"
check "hang: kite_ib bound again" kite_ib_bound
check "hang: the client attaches to the new kite0" \
	wait_for 10 since_mark rebind 'kite_verbs_test: attached to kite0'
check "hang: port active with the IPv4 GID again" wait_for 10 bash -c \
	"rdma link show kite0/1 | grep -q 'state ACTIVE' && grep -q '0000:0000:0000:0000:0000:ffff:0a4d:0001' $gids/*"
kvt works
check "rdma res: the new kite0 has the same objects as the first" test "$(res_summary)" = "$base"

check "kite_verbs_test, kite_ib and kite_en unload" bash -c "rmmod kite_verbs_test && rmmod kite_ib && rmmod kite_en"
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
finish
