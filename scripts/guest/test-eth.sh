#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test, run in both VMs of a two-VM topology: ping and a 4 MB TCP
# transfer, compared by SHA-256, between this VM's NIC and the peer's; then
# RoCEv2 between kite_ib or rdma_rxe on each side: UD and RC tools,
# rdma_cm, perftest's RC suite, and NVMe over RDMA (the receiving VM is the
# target).
# Environment: KITE_SELF_IP, KITE_PEER_IP, KITE_ROLE (send or receive),
# KITE_NIC and KITE_PEER_NIC (kite or virtio).
. "$KITE_ROOT/scripts/guest/lib.sh"
peer_barrier_start

pair_nic_up
check "eth: ping $KITE_PEER_IP" ping -c 5 -W 2 -w 30 "$KITE_PEER_IP"
check "eth: 1400-byte pings" ping -c 3 -s 1400 -W 2 -w 30 "$KITE_PEER_IP"

size=4000000
make_data "$size" 700000 >/tmp/expect
if [ "$KITE_ROLE" = receive ]; then
	timeout 120 socat -u TCP-LISTEN:5001,reuseaddr OPEN:/tmp/rx,creat,trunc &
	lpid=$!
	wait "$lpid"
	check "eth: 4 MB TCP transfer received" test "$?" = 0
	check "eth: received data matches (sha256)" \
		test "$(sha256sum </tmp/rx)" = "$(sha256sum </tmp/expect)"
else
	sent=1
	for i in $(seq 1 50); do
		timeout 120 socat -u OPEN:/tmp/expect TCP:"$KITE_PEER_IP":5001 2>/dev/null && { sent=0; break; }
		sleep 0.3
	done
	check "eth: 4 MB TCP transfer sent" test "$sent" = 0
fi
# RoCEv2 between the two VMs: Kite's kite_ib, or Linux soft-RoCE (rdma_rxe)
# on a virtio-net VM, each with its rdma-core provider; rdma-core's
# unchanged ibv_ud_pingpong, data checked.
pair_roce_up
udpp() {
	LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib LD_PRELOAD=${udpp_preload:-} timeout 90 \
		"$KITE_RDMA_CORE/bin/ibv_ud_pingpong" -d "$rdev" -g "$gidx" -c -n 500 -s 1024 "$@"
}
side=client
[ "$KITE_ROLE" = receive ] && side=server
# ud_pair ID NAME: udpp as the server (receive role) or as the client, which
# retries until the server is up.
ud_pair() {
	local id=$1 name=$2 ok=1 i
	if [ "$KITE_ROLE" = receive ]; then
		udpp >"/tmp/$id.log" 2>&1
		ok=$?
	else
		for i in $(seq 1 30); do
			udpp "$KITE_PEER_IP" >"/tmp/$id.log" 2>&1 && { ok=0; break; }
			sleep 1
		done
	fi
	cp "/tmp/$id.log" /kite-out/ 2>/dev/null
	check "$name ($side)" test "$ok" = 0
}
ud_pair udpp "roce: ibv_ud_pingpong $rdev<->$prdev (GID $gidx): 500 x 1024 bytes, data checked"
# Address handles whose flow label is wider than the wire's 20 bits (UCX
# passes 0xFFFFFFFF): the same exchange, every AH both sides create given
# that label by the kite_ah_flowlabel.so shim, which notes each one. The
# low 20 bits are used; Kite's UD frames then leave from UDP source port
# 0xffc0 (rdma_flow_label_to_udp_sport(0xfffff)), which the host checks in
# the wire capture.
udpp_preload=$KITE_TOOLS/kite_ah_flowlabel.so
ud_pair udfl "roce: ibv_ud_pingpong $rdev<->$prdev, AH flow label 0xFFFFFFFF: 500 x 1024 bytes, data checked"
udpp_preload=
check "roce: the AH was created with flow label 0xFFFFFFFF ($side)" \
	grep -q 'flow label 0xffffffff: created' /tmp/udfl.log

# rdma_cm over RoCEv2: udaddy resolves the peer's address and route and
# connects UD QPs with an SIDR exchange, which the kernel's ib_cm carries in
# MADs on the GSI QPs (QP1) of both sides; then UD messages flow.
modprobe rdma_ucm
cm() { LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout 60 "$KITE_RDMA_CORE/bin/udaddy" "$@"; }
if [ "$KITE_ROLE" = receive ]; then
	check "rdma_cm: udaddy $rdev<->$prdev, SIDR over QP1, 10 messages (server)" \
		cm -b "$KITE_SELF_IP" -C 10
else
	ok=1
	for i in $(seq 1 20); do
		cm -s "$KITE_PEER_IP" -C 10 >/tmp/udaddy.log 2>&1 && { ok=0; break; }
		sleep 1
	done
	cp /tmp/udaddy.log /kite-out/ 2>/dev/null
	check "rdma_cm: udaddy $rdev<->$prdev, SIDR over QP1, 10 messages (client)" test "$ok" = 0
fi

# RC between the VMs: rdma-core's ibv_rc_pingpong, librdmacm's rping and
# ucmatose (RC connections through rdma_cm: CM MADs on QP1), perftest;
# unchanged tools.
# rc_pair ID NAME CMD...: this VM runs CMD as the server (receive role) or
# as the client with the peer's address (send role), the client retrying
# until the server listens.
rc_pair() {
	local id=$1 name=$2 ok=1 i
	shift 2
	: >"/tmp/$id.log"
	if [ "$KITE_ROLE" = receive ]; then
		LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout 90 "$@" >>"/tmp/$id.log" 2>&1
		ok=$?
	else
		for i in $(seq 1 30); do
			echo "== attempt $i" >>"/tmp/$id.log"
			LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout 90 "$@" "$KITE_PEER_IP" >>"/tmp/$id.log" 2>&1 &&
				{ ok=0; break; }
			sleep 1
		done
	fi
	cp "/tmp/$id.log" /kite-out/ 2>/dev/null
	check "$name ($KITE_ROLE)" test "$ok" = 0
}
# pt_pair ID NAME PORT CMD...: like rc_pair, for perftest on TCP or
# rdma_cm port PORT: the server tells the client (UDP 7778) once it
# listens, and the client starts then, so that its attempt meets a
# listening server (perftest's own error paths have crashed on rdma_rxe's
# side when the server was not there yet). Every client attempt has a
# server of its own: a server that does not come up or fails is started
# again, and so is one whose client failed (the client tells it at once;
# it would otherwise wait for a connection until its time-out), up to
# four times. A perftest server is never reused after a failed client:
# perftest -R's server destroys the listener of its control connection
# once that is accepted and listens again on the same port for the test
# QPs (perftest_communication.c: rdma_server_connect(),
# rdma_cm_server_connection()); a client whose test QP's REQ comes before
# that second listen is rejected (reason 8, no listener: perftest's own
# race, on rdma_rxe as on Kite), and the server, left waiting for the
# test QPs, takes the next client's control connection for one: that
# client has died in librdmacm (a user-space GPF in rdma_resolve_addr2()
# on a bad cm_id) or been rejected again.
socat -u UDP-RECV:7778 OPEN:/tmp/kite-ready,creat,append &
listening() {
	ss -Hltn "sport = :$1" | grep -q . ||
		rdma res show cm_id 2>/dev/null | grep -qE "src-addr [^ ]*:$1( |$)"
}
pt_pair() {
	local id=$1 name=$2 port=$3 ok=1 i try pid st watcher
	shift 3
	: >"/tmp/$id.log"
	for try in 1 2 3 4; do
		if [ "$KITE_ROLE" = receive ]; then
			echo "== server $try" >>"/tmp/$id.log"
			LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout 60 stdbuf -oL "$@" >>"/tmp/$id.log" 2>&1 &
			pid=$!
			wait_for 20 listening "$port"
			# What listens as the client is told to start (a failed
			# rdma_cm connection is seen against this).
			{
				echo "== listening on $port:"
				ss -Hltn "sport = :$port"
				rdma res show cm_id 2>&1 | grep -E "src-addr [^ ]*:$port( |$)"
			} >>"/tmp/$id.log" 2>&1
			for i in 1 2 3; do
				echo "ready $id $try" >"/dev/udp/$KITE_PEER_IP/7778" 2>/dev/null
			done
			# A watcher stops the server if its client failed.
			{
				wait_for 60 grep -qx "retry $id $try" /tmp/kite-ready || exit 0
				echo "== server $try stopped: the client failed" >>"/tmp/$id.log"
				kill "$pid" 2>/dev/null
			} &
			watcher=$!
			wait "$pid"
			st=$?
			kill "$watcher" 2>/dev/null
			wait "$watcher" 2>/dev/null
			[ "$st" = 0 ] && { ok=0; break; }
		else
			wait_for 90 grep -qx "ready $id $try" /tmp/kite-ready || break
			echo "== client $try" >>"/tmp/$id.log"
			LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout 50 "$@" "$KITE_PEER_IP" >>"/tmp/$id.log" 2>&1 &&
				{ ok=0; break; }
			# A new server for the next attempt, at once.
			for i in 1 2 3; do
				echo "retry $id $try" >"/dev/udp/$KITE_PEER_IP/7778" 2>/dev/null
			done
			sleep 1
		fi
	done
	cp "/tmp/$id.log" /kite-out/ 2>/dev/null
	check "$name ($KITE_ROLE)" test "$ok" = 0
}
rb=$KITE_RDMA_CORE/bin
rc_pair rcpp "rc: ibv_rc_pingpong $rdev<->$prdev: 300 x 8000 bytes, data checked" \
	"$rb/ibv_rc_pingpong" -d "$rdev" -g "$gidx" -c -n 300 -s 8000
# UC between the VMs: nothing is retransmitted, so a frame lost on the
# wire stalls the exchange (timeout); the wire is not lossy here.
rc_pair ucpp "uc: ibv_uc_pingpong $rdev<->$prdev: 300 x 4096 bytes, data checked" \
	"$rb/ibv_uc_pingpong" -d "$rdev" -g "$gidx" -c -n 300 -s 4096
# QP error recovery across the wire: the same RC QP on each side goes to
# ERROR (remote access error, retry exceeded, flush) and, through RESET,
# carries data again (tools/testing/kite/kite_qp_recover.c). Kite<->Kite,
# every round also flushes its writes (ibv_wr_flush()) and publishes a flag
# with an ATOMIC WRITE (ibv_wr_atomic_write()) each way.
qprec_aw=() qprec_what=
if [ "$rdev" = kite0 ] && [ "$prdev" = kite0 ]; then
	qprec_aw=(-a)
	qprec_what=", a FLUSH and an ATOMIC WRITE each way per round"
fi
rc_pair qprec "rc: QP recovery $rdev<->$prdev: ERROR -> RESET -> RTS three times, data compared$qprec_what" \
	"$KITE_TOOLS/kite_qp_recover" "${qprec_aw[@]}" -d "$rdev" -g "$gidx" -r 4
# UD multicast between the VMs through rdma_cm: librdmacm's mckey joins
# 239.77.0.1 on both sides (IGMP join; ATTACH_MCAST on Kite, rdma_rxe's
# group table on rxe); the receiving VM waits for 20 messages of 512 bytes
# to the group. UD is unreliable and the VM wire loses bursts under load:
# the sending VM sends batches of 20 (up to 5, a second apart) until the
# receiver says it has had 20.
# The receiver gives up after 30 s, while the sender's peer still retries
# its next test's connection (rc_pair's 30 attempts).
mck() {
	LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib timeout 30 stdbuf -oL \
		"$rb/mckey" -m 239.77.0.1 -b "$KITE_SELF_IP" -C 20 -S 512 "$@"
}
if [ "$KITE_ROLE" = receive ]; then
	mck >/tmp/mckey.log 2>&1 &
	pid=$!
	wait_for 30 grep -q 'receiving data transfers' /tmp/mckey.log
	for i in 1 2 3; do
		echo "ready mckey 1" >"/dev/udp/$KITE_PEER_IP/7778" 2>/dev/null
	done
	wait "$pid"
	ok=$?
	grep -q 'data transfers complete' /tmp/mckey.log || ok=1
	for i in 1 2 3; do
		echo "done mckey 1" >"/dev/udp/$KITE_PEER_IP/7778" 2>/dev/null
	done
else
	wait_for 90 grep -qx "ready mckey 1" /tmp/kite-ready
	: >/tmp/mckey.log
	for batch in 1 2 3 4 5; do
		echo "== batch $batch" >>/tmp/mckey.log
		mck -s >>/tmp/mckey.log 2>&1
		ok=$?
		[ "$ok" = 0 ] || break
		wait_for 2 grep -qx "done mckey 1" /tmp/kite-ready && break
	done
fi
cp /tmp/mckey.log /kite-out/ 2>/dev/null
check "mcast: mckey $rdev<->$prdev, 20 x 512 bytes to 239.77.0.1 ($KITE_ROLE)" test "$ok" = 0
if [ "$KITE_ROLE" = receive ]; then
	rc_pair rping "rc: rping -v $rdev<->$prdev, 50 pings, data verified" "$rb/rping" -s -v -V -C 50 -a "$KITE_SELF_IP"
	rc_pair ucmatose "rc: ucmatose $rdev<->$prdev (rdma_cm, RC)" "$rb/ucmatose" -b "$KITE_SELF_IP"
else
	rc_pair rping "rc: rping -v $rdev<->$prdev, 50 pings, data verified" "$rb/rping" -c -v -V -C 50 -a
	rc_pair ucmatose "rc: ucmatose $rdev<->$prdev (rdma_cm, RC)" "$rb/ucmatose" -s
fi
# perftest, every benchmark of the suite, plain (QP numbers exchanged over
# TCP, GID index given) and through rdma_cm (-R; ib_send_bw with -e:
# completion channels and ibv_req_notify_cq. perftest has no events for
# the other bandwidth tests, and its latency tests with -e poll once per
# event and lose count when a completion is slower than the event). Each run has its
# own port, so that a failed run cannot pair the next ones up wrongly.
pt=0
for t in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat ib_read_lat ib_send_lat; do
	for mode in plain rdma_cm; do
		pt=$((pt + 1))
		# -F: see the loss runs below.
		args=(-F -d "$rdev" -n 200 -p $((18600 + pt)))
		if [ "$mode" = plain ]; then
			args+=(-x "$gidx")
		else
			args+=(-R)
			[ "$t" = ib_send_bw ] && args+=(-e)
		fi
		pt_pair "pt$pt" "rc: perftest $t ${args[*]:7} $rdev<->$prdev" $((18600 + pt)) \
			"$t" "${args[@]}"
	done
done
# A shared receive queue across the wire: rdma-core's ibv_srq_pingpong (16
# RC QPs receiving from one SRQ, data checked) and perftest's RC send
# bandwidth with --use-srq.
rc_pair srqpp "srq: ibv_srq_pingpong $rdev<->$prdev: 16 QPs, 200 x 4096 bytes, data checked" \
	"$rb/ibv_srq_pingpong" -d "$rdev" -g "$gidx" -c -n 200 -s 4096
pt=$((pt + 1))
pt_pair "pt$pt" "srq: perftest ib_send_bw --use-srq $rdev<->$prdev" $((18600 + pt)) \
	ib_send_bw -F -d "$rdev" -n 200 -x "$gidx" --use-srq -p $((18600 + pt))

# RoCE under loss, in every pair (Kite<->Kite, a Kite client with an
# rdma_rxe server and the reverse): each Kite device loses 1%, then 5%,
# then 10% of the RoCEv2 frames it sends and duplicates and reorders 0.5%
# (the model's seeded loss-tx-* properties, prm_port.rst); a Kite whose peer is
# rdma_rxe does the same to the frames it receives, so that both
# directions lose. RC ib_write_bw, ib_read_bw and ib_send_bw complete (a
# completion in error fails perftest), and the model counted the losses.
# perftest runs with -F: on a busy VM its calibration of the CPU clock can
# fail ("Correlation coefficient r^2 < 0.9"), and it then exits 1 ("Can't
# produce a report") after a run that passed; these checks are about
# completion, not figures.
if [ "$KITE_NIC" = kite ] || [ "$KITE_PEER_NIC" = kite ]; then
	for permille in 10 50 100; do
		pct=$((permille / 10))
		if [ "$KITE_NIC" = kite ]; then
			check "loss $pct%: $rdev loses $pct% of its RoCEv2 frames, duplicates and reorders 0.5%" \
				pair_loss "$permille" "$((permille + ${KITE_SELF_IP##*.}))" 5
		fi
		for t in ib_write_bw ib_read_bw ib_send_bw; do
			pt=$((pt + 1))
			pt_pair "pt$pt" "loss $pct%: perftest $t -n 100 -s 16384 $rdev<->$prdev" \
				$((18600 + pt)) "$t" -F -d "$rdev" -n 100 -s 16384 -x "$gidx" \
				-p $((18600 + pt))
		done
	done
	if [ "$KITE_NIC" = kite ]; then
		host_monitor "qom-get /machine/peripheral/kite0 loss-counts"
		tr -d '\r' </kite-out/reply 2>/dev/null | grep -o '"rx-dropped.*"' >/kite-out/loss-counts.txt
		check "loss: the model lost, duplicated and reordered frames ($(cat /kite-out/loss-counts.txt))" \
			grep -qE 'tx-dropped=[1-9].* tx-duplicated=[1-9].* tx-reordered=[1-9]' /kite-out/loss-counts.txt
		rc_counts_diag "loss: $rdev's RC transport"
		check "loss: back to no loss" pair_loss 0 1 0
	fi
fi

# NVMe over RDMA between the VMs: the receiving VM is the target, the
# sending VM the host (Kite or rdma_rxe on either side).
if [ "$KITE_ROLE" = receive ]; then
	check "nvme: target on $KITE_SELF_IP:4420 ($rdev)" nvme_target "$KITE_SELF_IP"
else
	check "nvme: nvme connect -t rdma $rdev->$prdev" nvme_connect "$KITE_PEER_IP"
	check "nvme: the namespace appears" wait_for 10 bash -c "ls /dev/nvme*n1"
	check "nvme: 4 MB written, read back, compared (sha256) $rdev->$prdev" \
		nvme_io "$(ls /dev/nvme*n1 2>/dev/null | head -n 1)" 4
	check "nvme: disconnect" nvme disconnect -n kite
fi

if [ "$KITE_NIC" = kite ]; then
	check "eth: no RX/TX errors counted" \
		bash -c "ethtool -S $nic | awk '/_errors:/ && \$2 != 0 { bad = 1 } END { exit bad }'"
fi
check "dmesg: no warning, bug, oops or leak report" dmesg_clean
check "eth: peer finished its checks" peer_barrier "$KITE_PEER_IP"
finish
