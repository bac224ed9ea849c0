#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test: kite_ib brings up the RDMA control path on the emulated device:
# the command channel, QUERY_DEVICE, the control and completion event
# queues with their interrupts; a device that stops answering commands
# makes probe fail after the time-out instead of hanging, and the driver
# binds again once the device answers.
. "$KITE_ROOT/scripts/guest/lib.sh"

aux=/sys/bus/auxiliary/devices/kite_en.rdma.0
drv=/sys/bus/auxiliary/drivers/kite_ib.kite_ib
kite_ib_bound() { [ "$(basename "$(readlink "$aux/driver")")" = kite_ib.kite_ib ]; }
# Interrupts counted on the kite_ib EQ vectors.
eq_irqs() { awk '/kite_ib-eq/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts; }

check "rdma: kite_en and kite_ib load" bash -c "insmod $KITE_EN_KO && insmod $KITE_IB_KO cmd_timeout_ms=$((1500 * KITE_SCALE))"
check "rdma: kite_ib bound" kite_ib_bound
check "rdma: capabilities and event queues reported" bash -c \
	"dmesg | grep -qE 'kite_ib.*bound to .*max 1023 QPs, 1023 CQs, 4095 MRs, 1023 PDs; 1 control \\+ [0-9]+ completion EQs'"
check "rdma: control EQ vector registered" grep -q 'kite_ib-eq0' /proc/interrupts
check "rdma: completion EQ vectors registered" grep -q 'kite_ib-eq1' /proc/interrupts
# Commands after EQ0 exists complete through its interrupt.
check "rdma: EQ0 interrupts delivered command completions" test "$(eq_irqs)" -gt 0

# The RDMA device as the RDMA core and its tools see it.
nic=$(kite_netdev)
ip link set "$nic" up
ip addr add 10.77.0.1/24 dev "$nic"
ip addr add fd00:77::1/64 dev "$nic" nodad
gids=/sys/class/infiniband/kite0/ports/1/gids
check "ib: kite0 registered" test -d /sys/class/infiniband/kite0
check "rdma link: kite0/1 ACTIVE, LINK_UP, on the netdev" wait_for 10 bash -c \
	"rdma link show kite0/1 | grep -q 'state ACTIVE physical_state LINK_UP netdev $nic'"
# The node GUID is the EUI-64 of the factory MAC (the netdev's, unchanged).
IFS=: read -r m0 m1 m2 m3 m4 m5 <"/sys/class/net/$nic/address"
guid=$(printf '%02x%s:%sff:fe%s:%s%s' $((0x$m0 ^ 2)) "$m1" "$m2" "$m3" "$m4" "$m5")
check "rdma dev: firmware and node GUID ($guid)" bash -c \
	"rdma dev show kite0 | grep -q 'fw 1.0.0 node_guid $guid sys_image_guid $guid'"
check "gids: IPv4 address in the GID table" wait_for 10 grep -q '0000:0000:0000:0000:0000:ffff:0a4d:0001' $gids/*
check "gids: IPv6 address in the GID table" wait_for 10 grep -q 'fd00:0077:0000:0000:0000:0000:0000:0001' $gids/*
check "gids: RoCE v2 type" bash -c "grep -q 'RoCE v2' /sys/class/infiniband/kite0/ports/1/gid_attrs/types/*"
check "rdma res: ib_mad's QP1 (GSI) is on the device" bash -c \
	"rdma res show qp link kite0/1 | grep -q 'lqpn 1 .*type GSI'"
check "rdma res: PDs and CQs present" bash -c \
	"rdma res show pd dev kite0 | grep -q kite0 && rdma res show cq dev kite0 | grep -q kite0"
# Driver details (restrack fill ops) and the device's own view (raw).
check "rdma -dd res: CQ driver details (cqn, EQ, depth, PBL)" bash -c \
	"rdma -dd res show cq dev kite0 | grep -qE 'drv_cqn [0-9]+ drv_eqn [0-9]+ drv_depth [0-9]+ .*drv_pbl_level [0-2] drv_pages [0-9]+ drv_page_size 0x'"
check "rdma -dd res: QP1 driver details (SQ/RQ geometry)" bash -c \
	"rdma -dd res show qp link kite0/1 lqpn 1 | grep -qE 'drv_sq_depth [0-9]+ drv_sq_wqe_size [0-9]+ .*drv_rq_depth [0-9]+'"
# QUERY_QP output: QPN 1 as little-endian bytes (rdma prints each byte
# in unpadded hex), then the mask. QP1 is the only QP.
check "rdma -r res: raw device context of QP1 (QUERY_QP)" bash -c \
	"rdma -r res show qp link kite0/1 | grep -qE '^link kite0/- 1000[0-9a-f]+'"
# Hardware counters from QUERY_STATS; commands are counted by the device.
fw_cmds() { rdma statistic show link kite0/1 | grep -oE 'fw_cmds [0-9]+' | awk '{ print $2 }'; }
check "rdma statistic: hardware counters listed" bash -c \
	"rdma statistic show link kite0/1 | grep -q 'roce_rx_pkts' && rdma statistic show link kite0/1 | grep -q 'tx_frames'"
c1=$(fw_cmds)
rdma -r res show qp link kite0/1 >/dev/null 2>&1
c2=$(fw_cmds)
check "rdma statistic: fw_cmds counts commands ($c1 -> $c2)" test "${c2:-0}" -gt "${c1:-0}"
check "ibv_devinfo -v: the provider opens kite0 (ucontext + doorbell page)" bash -c \
	"LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib $KITE_RDMA_CORE/bin/ibv_devinfo -v -d kite0 | grep -q 'fw_ver:.*1.0.0'"
check "ibv_devinfo: port active, RoCE GIDs listed" bash -c \
	"LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib $KITE_RDMA_CORE/bin/ibv_devinfo -v -d kite0 | grep -q 'GID\\[.*10.77.0.1, RoCE v2'"

# User CQs and QPs through the uverbs ABI, good and bad requests.
stat_of() { rdma statistic show link kite0/1 | grep -oE "$1 [0-9]+" | awk '{ print $2 }'; }
bad_db0=$(stat_of bad_doorbells)
kite_mark uverbs
# The program's run is one check (kernel error reports during it fail
# it); each of its own results becomes a check of this VM.
check "uverbs: kite_uverbs_test --data ran to its summary" bash -c \
	"LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib $KITE_TOOLS/kite_uverbs_test kite0 --data >/kite-out/uverbs.log 2>&1;
	grep -q ' passed, 0 failed' /kite-out/uverbs.log"
kite_results "uverbs: " </kite-out/uverbs.log
bad_db1=$(stat_of bad_doorbells)
check "uverbs: the device counted the doorbell on the wrong page (bad_doorbells $bad_db0 -> $bad_db1)" \
	test "${bad_db1:-0}" -gt "${bad_db0:-0}"
check "uverbs: a user CQ's overflow leaves no warning in the kernel log (its owner gets the event)" \
	bash -c "! dmesg | sed -n '/kite-test: uverbs\$/,\$p' | grep ': CQ [0-9]* entered the error state'"

# Unchanged rdma-core applications on libkite: ibv_ud_pingpong between two
# processes on this device (the device loops the frames back), data checked.
gid_index() {
	local f
	for f in "$gids"/*; do
		if grep -q "$1" "$f"; then basename "$f"; return; fi
	done
}
gidx=$(gid_index '0000:0000:0000:0000:0000:ffff:0a4d:0001')
pp() { LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((60 * KITE_SCALE)) "$KITE_RDMA_CORE/bin/$1" "${@:2}"; }
pp ibv_ud_pingpong -d kite0 -g "$gidx" -c -n 200 -s 1024 >/tmp/ud-server.log 2>&1 &
server=$!
wait_for 10 listening 18515
check "ibv_ud_pingpong: 200 exchanges of 1024 bytes, data checked (loopback, GID $gidx)" \
	bash -c "LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((60 * KITE_SCALE)) $KITE_RDMA_CORE/bin/ibv_ud_pingpong -d kite0 -g $gidx -c -n 200 -s 1024 127.0.0.1 >/tmp/ud-client.log 2>&1"
wait "$server"
check "ibv_ud_pingpong: the server side completes too" test "$?" = 0
pp ibv_ud_pingpong -d kite0 -g "$gidx" -c -e -n 100 -s 512 >/tmp/ud-server-e.log 2>&1 &
server=$!
wait_for 10 listening 18515
check "ibv_ud_pingpong -e: completion events (CQ armed, EQ interrupt, cq_event)" \
	bash -c "LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((60 * KITE_SCALE)) $KITE_RDMA_CORE/bin/ibv_ud_pingpong -d kite0 -g $gidx -c -e -n 100 -s 512 127.0.0.1 >/tmp/ud-client-e.log 2>&1"
wait "$server"
check "ibv_ud_pingpong -e: the server side completes too" test "$?" = 0
cp /tmp/ud-*.log /kite-out/ 2>/dev/null

# perftest (Debian's, on this libibverbs and libkite): UD send bandwidth.
# Every perftest runs with -F: on a busy VM its calibration of the CPU
# clock against gettimeofday() can fail ("Correlation coefficient r^2 <
# 0.9"), after which it exits 1 ("Can't produce a report") once the test
# itself has passed; -F reports anyway. These checks are about completion,
# not figures (bench-pair.sh measures).
LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((90 * KITE_SCALE)) ib_send_bw -F -d kite0 -x "$gidx" -c UD -n 200 -s 1024 >/tmp/pt-server.log 2>&1 &
server=$!
wait_for 10 listening 18515
check "perftest: ib_send_bw -c UD (loopback)" bash -c \
	"LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((90 * KITE_SCALE)) ib_send_bw -F -d kite0 -x $gidx -c UD -n 200 -s 1024 127.0.0.1 >/tmp/pt-client.log 2>&1"
wait "$server"
check "perftest: ib_send_bw -c UD, the server side completes too" test "$?" = 0
cp /tmp/pt-*.log /kite-out/ 2>/dev/null

# RC through the device's loopback: rdma-core's ibv_rc_pingpong (data
# checked, polling and with events) and perftest's RC tests, unchanged.
# pair ID NAME SERVER-CMD...: run a server and its client (the same command
# with the server's address); both must succeed. Logs: /kite-out/ID-*.log.
# A server still running 30 s (scaled) after its client ended is stuck:
# what the device and the driver hold for it goes to /kite-out/ID-hang.txt
# (the QPs and CQs with the device's own contexts, the SRQs, the port's
# counters) before it is killed.
pair_hang_dump() {
	local id=$1
	{
		echo "=== $id: server stuck; $(date)"
		rdma -dd res show qp dev kite0
		rdma -r res show qp dev kite0
		rdma -dd res show cq dev kite0
		rdma -r res show cq dev kite0
		rdma -dd res show srq dev kite0
		rdma statistic show link kite0/1
		ethtool -S "$(kite_netdev)"
		dmesg | tail -n 30
	} >"/kite-out/$id-hang.txt" 2>&1
}
pair() {
	local id=$1 name=$2 st server
	shift 2
	# VERBS_LOG_LEVEL=2: libkite's warnings (a CQE skipped) in the logs.
	VERBS_LOG_LEVEL=2 LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((60 * KITE_SCALE)) "$@" >"/tmp/$id-server.log" 2>&1 &
	server=$!
	wait_for 10 listening 18515
	check "$name" bash -c "VERBS_LOG_LEVEL=2 LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((60 * KITE_SCALE)) $* 127.0.0.1 >/tmp/$id-client.log 2>&1"
	if ! wait_for 30 exited "$server"; then
		pair_hang_dump "$id"
		kill "$server" 2>/dev/null
	fi
	wait "$server"
	st=$?
	check "$name: the server side completes too" test "$st" = 0
	cp "/tmp/$id-server.log" "/tmp/$id-client.log" /kite-out/ 2>/dev/null
}
rcpp=$KITE_RDMA_CORE/bin/ibv_rc_pingpong
pair rcpp "ibv_rc_pingpong: 500 x 4096 bytes, data checked" "$rcpp" -d kite0 -g "$gidx" -c -n 500 -s 4096
pair rcpp-e "ibv_rc_pingpong -e: 100 x 20000 bytes (multi-packet), events" "$rcpp" -d kite0 -g "$gidx" -c -e -n 100 -s 20000
# -t: an extended CQ (ibv_create_cq_ex) with completion timestamps.
pair rcpp-t "ibv_rc_pingpong -t: 100 x 4096 bytes, extended CQ with completion timestamps" "$rcpp" -d kite0 -g "$gidx" -c -t -n 100 -s 4096
check "ibv_rc_pingpong -t: receive completion clock deltas reported, not all zero" \
	grep -qE 'Average receive completion clock cycles = [0-9]*[1-9]' /kite-out/rcpp-t-client.log
# QP error recovery (seed 001): one RC QP of each side goes to ERROR
# (remote access error, retry exceeded, a flush), every receive comes back
# flushed, and the same QP goes RESET -> INIT -> RTR -> RTS and carries
# RDMA WRITEs, their FLUSH and an ATOMIC WRITE flag (-a) and a SEND both
# ways again, data compared; 7 rounds.
pair qprec "QP recovery: ERROR -> RESET -> RTS six times (remote access, retry exceeded, flush), data compared after FLUSH and ATOMIC WRITE" \
	"$KITE_TOOLS/kite_qp_recover" -a -d kite0 -g "$gidx" -r 7 -T "$((50 * KITE_SCALE))"
# UC through the device's loopback: rdma-core's ibv_uc_pingpong (SEND on a
# UC QP; data checked with -c), polling and with events, multi-packet.
ucpp=$KITE_RDMA_CORE/bin/ibv_uc_pingpong
pair ucpp "ibv_uc_pingpong: 500 x 4096 bytes, data checked" "$ucpp" -d kite0 -g "$gidx" -c -n 500 -s 4096
pair ucpp-e "ibv_uc_pingpong -e: 100 x 20000 bytes (multi-packet), events" "$ucpp" -d kite0 -g "$gidx" -c -e -n 100 -s 20000
# UD multicast through the device's loopback: librdmacm's mckey, a
# receiver and a sender that both join 239.77.0.1 on kite0 (rdma_cm's
# IGMP join, ibv_attach_mcast: ATTACH_MCAST); the sender's 20 messages to
# the group (DestQP 0xFFFFFF, MAC 01:00:5e:4d:00:01) reach the receiver.
mck() {
	LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout "$((60 * KITE_SCALE))" \
		stdbuf -oL "$KITE_RDMA_CORE/bin/mckey" -m 239.77.0.1 -b 10.77.0.1 -C 20 -S 512 "$@"
}
modprobe rdma_ucm
mck >/tmp/mckey-server.log 2>&1 &
server=$!
check "mckey: the receiver joins 239.77.0.1 (ATTACH_MCAST)" \
	wait_for 30 grep -q 'receiving data transfers' /tmp/mckey-server.log
mck_send() { mck -s >/tmp/mckey-client.log 2>&1; }
check "mckey: the sender joins and sends 20 x 512 bytes to the group" mck_send
wait "$server"
st=$?
check "mckey: the receiver gets all 20 messages (loopback)" \
	bash -c "test $st = 0 && grep -q 'data transfers complete' /tmp/mckey-server.log"
cp /tmp/mckey-*.log /kite-out/ 2>/dev/null
# A shared receive queue: 16 RC QPs receiving from one SRQ (libkite's
# ibv_create_srq and ibv_post_srq_recv), data checked; perftest's RC send
# bandwidth with --use-srq.
srqpp=$KITE_RDMA_CORE/bin/ibv_srq_pingpong
LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout 60 "$srqpp" -d kite0 -g "$gidx" -c -n 200 -s 4096 >/tmp/srqpp-server.log 2>&1 &
srv=$!
sleep 2
check "rdma res show srq: the server's SRQ is tracked (BASIC)" bash -c \
	"rdma res show srq dev kite0 | tee /kite-out/res-srq.txt | grep -qE 'dev kite0 srqn [0-9]+ .*type BASIC'"
check "ibv_srq_pingpong: 16 QPs on one SRQ, 200 x 4096 bytes, data checked" bash -c \
	"LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout 60 $srqpp -d kite0 -g $gidx -c -n 200 -s 4096 127.0.0.1 >/tmp/srqpp-client.log 2>&1"
wait "$srv"
check "ibv_srq_pingpong: the server side completes too" test "$?" = 0
cp /tmp/srqpp-*.log /kite-out/ 2>/dev/null
pair ib_send_bw-srq "perftest: ib_send_bw --use-srq (RC)" ib_send_bw -F -d kite0 -x "$gidx" -n 200 --use-srq
perftests="ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat"
# The debug lane (several times slower) runs one: every perftest reaches
# the same kernel paths (context, PD, MR, CQ, QP, mmap); what differs is
# libkite's and the device's data path, which the lts lane covers.
[ "${KITE_LANE:-lts}" = debug ] && perftests=ib_read_bw
for t in $perftests; do
	pair "$t" "perftest: $t (RC)" "$t" -F -d kite0 -x "$gidx" -n 200
done
pair ib_send_bw-e "perftest: ib_send_bw -e (sleep on CQ events)" ib_send_bw -F -d kite0 -x "$gidx" -n 200 -e

# QP-bound counters (rdma statistic qp): each bound counter is one of the
# device's QP counter sets (on 6.12 through compat/backport/).
qstat() { rdma statistic qp show link kite0/1 2>/dev/null; }
port_qp_tx() { stat_of qp_tx_pkts; }
# Manual mode: bind a waiting ibv_rc_pingpong server's QP, then unbind.
pp ibv_rc_pingpong -d kite0 -g "$gidx" -n 50 -s 1024 >/tmp/cntr-server.log 2>&1 &
server=$!
wait_for 10 listening 18515
lqpn=$(rdma res show qp link kite0/1 | awk '/comm ibv_rc_pingpong/ { for (i = 1; i < NF; i++) if ($i == "lqpn") print $(i + 1) }' | head -n 1)
check "rdma statistic qp bind: a counter for the server's QP ${lqpn:-?}" \
	rdma statistic qp bind link kite0/1 lqpn "${lqpn:-0}"
cntn=$(qstat | awk -v q="$lqpn" '/cntn/ { for (i = 1; i < NF; i++) if ($i == "cntn") c = $(i + 1) } $0 ~ "[<, ]" q "[>,]" { print c; exit }')
check "rdma statistic qp show: counter ${cntn:-?} with the QP, its qp_* counters" bash -c \
	"rdma statistic qp show link kite0/1 | grep -q 'qp_tx_pkts' && test -n '$cntn'"
check "rdma statistic qp show: only the QP counters (no device-wide ones)" bash -c \
	"! rdma statistic qp show link kite0/1 | grep -qE 'fw_cmds|tx_frames|drv_bad'"
check "rdma statistic qp unbind: counter ${cntn:-?} released" \
	rdma statistic qp unbind link kite0/1 cntn "${cntn:-0}" lqpn "${lqpn:-0}"
check "rdma statistic qp: no counter left after the unbind" bash -c \
	"! rdma statistic qp show link kite0/1 | grep -q cntn"
check "ibv_rc_pingpong after the unbind: 50 exchanges" bash -c \
	"LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((60 * KITE_SCALE)) $rcpp -d kite0 -g $gidx -n 50 -s 1024 127.0.0.1 >/tmp/cntr-client.log 2>&1"
wait "$server"
check "ibv_rc_pingpong after the unbind: the server side completes too" test "$?" = 0

# Auto mode: a new RC QP is bound when it goes to INIT. An RC QP
# connected to itself completes 200 WRITEs of 4096 bytes (800 packets
# at MTU 1024) and waits: its set counted every packet both ways.
tx0=$(port_qp_tx)
check "rdma statistic qp set auto type on" rdma statistic qp set link kite0/1 auto type on
coproc HOLD { LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((120 * KITE_SCALE)) "$KITE_TOOLS/kite_uverbs_test" kite0 --hold 200 2>/tmp/cntr-hold.log; }
read -r -t $((60 * KITE_SCALE)) held hqpn <&"${HOLD[0]}"
line=$(qstat | awk -v q="$hqpn" '/cntn/ { l = $0 } $0 ~ "[<, ]" q "[>,]" { print l; exit }')
val() { grep -oE "(^| )$1 [0-9]+" <<<"$line" | awk '{ print $2 }'; }
echo "$line" >/kite-out/cntr-auto.txt
check "rdma statistic qp: QP ${hqpn:-?} bound to a counter in auto mode" test "$held" = held -a -n "$line"
check "rdma statistic qp: the QP's 200 WRITEs counted, each packet sent and received ($(val qp_tx_pkts) / $(val qp_rx_pkts))" \
	bash -c "[ '$(val qp_tx_pkts)' -ge 800 ] && [ '$(val qp_tx_pkts)' = '$(val qp_rx_pkts)' ] && [ '$(val qp_tx_bytes)' = '$(val qp_rx_bytes)' ] && [ '$(val qp_tx_bytes)' -gt $((800 * 1024)) ]"
check "rdma statistic qp: no loss, no retry, no drop" \
	test "$(val qp_retries)" = 0 -a "$(val qp_rx_drops)" = 0
sent=$(val qp_tx_pkts)
hold_in=${HOLD[1]}
exec {hold_in}>&-
wait "$HOLD_PID"
check "kite_uverbs_test --hold: the QP is destroyed when told" test "$?" = 0
check "rdma statistic qp set auto off" rdma statistic qp set link kite0/1 auto off
tx1=$(port_qp_tx)
check "port qp_tx_pkts keeps what the freed counter counted ($tx0 -> $tx1, >= +${sent:-?})" \
	test "${tx1:-0}" -ge $((${tx0:-0} + ${sent:-1000000000}))
cp /tmp/cntr-*.log /kite-out/ 2>/dev/null

# Object numbers under churn: 3 processes x 2 threads create and destroy
# PDs, CQs, RC and UD QPs, SRQs, MRs and user contexts
# (tools/testing/kite/kite_churn.c) while an RC pingpong runs. A number
# handed out while still in use fails a create ("already in use").
res_counts() {
	local o
	for o in pd cq qp mr srq; do
		rdma res show "$o" 2>/dev/null | grep -c 'kite0'
	done | paste -sd' '
}
kite_mark churn
res0=$(res_counts)
churn_rounds=60
[ "${KITE_LANE:-lts}" = debug ] && churn_rounds=20
pp ibv_rc_pingpong -d kite0 -g "$gidx" -n 2000 -s 1024 >/tmp/churn-pp-server.log 2>&1 &
server=$!
wait_for 10 listening 18515
pp ibv_rc_pingpong -d kite0 -g "$gidx" -n 2000 -s 1024 127.0.0.1 >/tmp/churn-pp-client.log 2>&1 &
client=$!
churners=()
for i in 1 2 3; do
	LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout $((300 * KITE_SCALE)) "$KITE_TOOLS/kite_churn" kite0 2 "$churn_rounds" >"/tmp/churn-$i.log" 2>&1 &
	churners+=($!)
done
for i in 1 2 3; do
	wait "${churners[$((i - 1))]}"
	st=$?
	check "churn: process $i: $(head -c 160 /tmp/churn-$i.log)" test "$st" = 0
done
wait "$client"
st=$?
wait "$server"
check "churn: ibv_rc_pingpong 2000 x 1024 bytes alongside, both sides complete" test "$st" = 0 -a "$?" = 0
no_churn_clash() { ! since_mark churn 'already in use'; }
check "churn: no object number handed out while still in use" no_churn_clash
check "churn: rdma res back to its start (pd cq qp mr srq: $res0)" test "$(res_counts)" = "$res0"
cp /tmp/churn-*.log /kite-out/ 2>/dev/null

check "rdma: unbind kite_ib" bash -c "echo kite_en.rdma.0 >$drv/unbind"
check "rdma: rebind kite_ib" bash -c "echo kite_en.rdma.0 >$drv/bind"
check "rdma: bound again" kite_ib_bound

kite_mark hang
check "fault: device stops completing commands (qom-set fault-cmd-hang)" \
	fault "fault-cmd-hang true"
check "fault: unbind while the device hangs completes" \
	bash -c "timeout $((60 * KITE_SCALE)) sh -c 'echo kite_en.rdma.0 >$drv/unbind'"
check "fault: the time-out is reported" since_mark hang 'kite_ib.*timed out'
# The failed device keeps objects it could not destroy: kite_ib asks for a
# reset, kite_en re-creates the RDMA device, and its probe fails cleanly.
check "fault: remove of a failed device requests a reset" \
	wait_for 10 since_mark hang 'kite_en.*reset requested by the RDMA driver'
check "fault: the reset completes" wait_for 30 since_mark hang 'kite_en.*reset complete'
check "fault: probe of the re-created device fails instead of hanging" \
	wait_for 30 since_mark hang 'probe with driver kite_ib.kite_ib failed'
resets=$(dmesg | grep -c 'reset requested by the RDMA driver')
check "fault: a manual bind fails too" \
	bash -c "! timeout $((60 * KITE_SCALE)) sh -c 'echo kite_en.rdma.0 >$drv/bind' 2>/dev/null"
check "fault: no reset was requested for a device in probe" \
	test "$(dmesg | grep -c 'reset requested by the RDMA driver')" = "$resets"
check "fault: device answers again" fault "fault-cmd-hang false"
check "fault: bind succeeds afterwards" bash -c "echo kite_en.rdma.0 >$drv/bind"
check "fault: bound again" kite_ib_bound

check "rdma: kite_ib and kite_en unload" bash -c "rmmod kite_ib && rmmod kite_en"
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
finish
