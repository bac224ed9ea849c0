#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test, run in both VMs of a two-VM topology: UCX (Debian's libucx0 and
# ucx-utils, unchanged) over this VM's RDMA device and the peer's: Kite's
# kite_ib, or rdma_rxe on a virtio-net VM. UCX picks its transports, GID
# and device limits from the verbs the device reports, as MPI and the
# other UCX applications do.
#
# - ucx_info: the device's transports (rc_verbs, ud_verbs).
# - ucx_perftest, one connection per batch: UCT's RC verbs transport
#   directly (put, get, active messages, atomics), then UCP over RC (with
#   UD for wire-up) and over UD alone: tag matching, RMA, atomics, stream
#   and active messages. Figures only, no pass condition on them.
# - io_demo: UCP reads and writes of random sizes with its data integrity
#   check (-q), connected through rdma_cm.
# The receiving VM is the server.
# Environment: as test-eth.sh (KITE_SELF_IP, KITE_PEER_IP, KITE_ROLE,
# KITE_NIC, KITE_PEER_NIC).
. "$KITE_ROOT/scripts/guest/lib.sh"
peer_barrier_start

pair_nic_up
pair_roce_up
export LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib
export UCX_NET_DEVICES=$rdev:1
# UCX warns that it cannot pin memory past RLIMIT_MEMLOCK otherwise.
ulimit -l unlimited
# UCX before 1.19 (Debian 12 has 1.13) drops every UD packet that arrives
# over IPv4 on a device other than a Mellanox one: its ud_verbs transport
# takes the packet's IP version from the completion's SL, which only
# mlx5 hardware fills that way (rdma_rxe and Kite report the SL, 0), and
# then compares the wrong bytes of the GRH area with its GIDs. UCX 1.19
# reads the IP version from the GRH area instead (openucx/ucx 7de57ad9f9,
# "UCT/IB/UD: Use GRH to detect address family on non-Mellanox
# hardware"), which Kite fills as RoCEv2 asks (the IPv4 header in the
# last 20 of its 40 bytes). Until then, the documented switch: no
# destination GID check on Ethernet.
export UCX_UD_VERBS_ETH_DGID_CHECK=n
# rdma_rxe raises IB_EVENT_QP_LAST_WQE_REACHED each time its responder
# runs on an SRQ-attached QP in ERR, not once: the modify to ERR runs it,
# and so does every send WQE its requester then flushes (rxe_req.c calls
# rxe_qp_error() per flushed WQE, which reschedules the responder). UCX
# (1.13 to this day) waits for that event once per QP it destroys and
# aborts when a second one comes before it has handled the first
# ("Assertion `wait_ctx->cb_id == (-1)' failed" in
# uct_ib_handle_async_event): an io_demo server that still has sends
# queued when its client leaves hits it now and then. On rdma_rxe
# only, UCX does not listen for async events (its documented switch;
# the QPs are then destroyed with the interface). Kite raises the event
# once per QP (the model's last_wqe flag) and keeps UCX's default.
[ "$rdev" = rxe0 ] && export UCX_IB_ASYNC_EVENTS=n

# "TRANSPORT DEVICE" pairs from ucx_info's listing.
ucx_info -d >/tmp/ucx_info.txt 2>&1
cp /tmp/ucx_info.txt /kite-out/
awk '/Transport: /{t=$3} /Device: /{print t, $3}' /tmp/ucx_info.txt >/tmp/ucx_tl.txt
check "ucx: ucx_info lists $rdev:1 with rc_verbs and ud_verbs" bash -c \
	"grep -qx 'rc_verbs $rdev:1' /tmp/ucx_tl.txt && grep -qx 'ud_verbs $rdev:1' /tmp/ucx_tl.txt"

# The server tells the client over UDP 7779 when it listens.
socat -u UDP-RECV:7779 OPEN:/tmp/ucx-ready,creat,append &

# ucx_pair ID NAME PORT CMD...: this VM runs CMD as the server (receive
# role) or, once the server listens on TCP PORT, as the client with the
# peer's address (send role). The server is stopped once the client is
# done (io_demo's server serves until it is killed).
ucx_pair() {
	local id=$1 name=$2 port=$3 ok=1 pid i
	shift 3
	: >"/tmp/$id.log"
	if [ "$KITE_ROLE" = receive ]; then
		timeout 240 stdbuf -oL "$@" >>"/tmp/$id.log" 2>&1 &
		pid=$!
		wait_for 60 listening "$port"
		for i in 1 2 3; do
			echo "ready $id" >"/dev/udp/$KITE_PEER_IP/7779" 2>/dev/null
		done
		if [ "${KITE_UCX_SERVE:-}" = until-done ]; then
			wait_for 240 grep -qE "^done $id [01]\$" /tmp/ucx-ready
			kill "$pid" 2>/dev/null
			wait "$pid"
			grep -qx "done $id 0" /tmp/ucx-ready && ok=0
		else
			wait "$pid" && ok=0
		fi
	else
		wait_for 90 grep -qx "ready $id" /tmp/ucx-ready
		timeout 220 stdbuf -oL "$@" "$KITE_PEER_IP" >>"/tmp/$id.log" 2>&1 && ok=0
		for i in 1 2 3; do
			echo "done $id $ok" >"/dev/udp/$KITE_PEER_IP/7779" 2>/dev/null
		done
	fi
	# A server reports its errors but may still exit 0; io_demo reports
	# corrupted data ("data corruption") and aborts.
	grep -qE 'UCX  ERROR|Fatal:|Assertion|Segmentation|data corruption' "/tmp/$id.log" && ok=1
	cp "/tmp/$id.log" /kite-out/ 2>/dev/null
	check "$name ($KITE_ROLE)" test "$ok" = 0
}

# One batch file per transport: "NAME ARGS..." per line.
cat >/tmp/uct-rc.batch <<'EOF'
put_bw_zcopy_64k  -t put_bw -D zcopy -s 65536 -n 200 -w 20
put_lat_short     -t put_lat -D short -s 8 -n 1000 -w 100
get_zcopy_64k     -t get -D zcopy -s 65536 -n 200 -w 20
get_bcopy_4k      -t get -D bcopy -s 4096 -n 500 -w 50
am_lat_short      -t am_lat -D short -s 8 -n 1000 -w 100
am_bw_bcopy_4k    -t am_bw -D bcopy -s 4096 -n 500 -w 50
add_lat           -t add_lat -s 8 -n 500 -w 50
fadd_64           -t fadd -s 8 -n 500 -w 50
cswap_64          -t cswap -s 8 -n 500 -w 50
EOF
cat >/tmp/ucp.batch <<'EOF'
tag_lat_8         -t tag_lat -s 8 -n 1000 -w 100
tag_bw_64k        -t tag_bw -s 65536 -n 200 -w 20
tag_sync_lat_8    -t tag_sync_lat -s 8 -n 500 -w 50
ucp_put_bw_64k    -t ucp_put_bw -s 65536 -n 200 -w 20
ucp_get_64k       -t ucp_get -s 65536 -n 200 -w 20
ucp_add           -t ucp_add -s 8 -n 500 -w 50
ucp_fadd          -t ucp_fadd -s 8 -n 500 -w 50
ucp_cswap         -t ucp_cswap -s 8 -n 500 -w 50
stream_bw_64k     -t stream_bw -s 65536 -n 200 -w 20
ucp_am_bw_64k     -t ucp_am_bw -s 65536 -n 200 -w 20
EOF
cat >/tmp/ucp-ud.batch <<'EOF'
tag_lat_8         -t tag_lat -s 8 -n 1000 -w 100
tag_bw_64k        -t tag_bw -s 65536 -n 100 -w 10
ucp_put_bw_64k    -t ucp_put_bw -s 65536 -n 100 -w 10
ucp_get_4k        -t ucp_get -s 4096 -n 200 -w 20
EOF

# UCT's tests name one device for both sides (the server takes the
# client's parameters): Kite<->Kite only.
if [ "$rdev" = "$prdev" ]; then
	ucx_pair uct-rc "ucx: ucx_perftest, UCT rc_verbs on $rdev<->$prdev: put, get, active messages, atomics" \
		13371 ucx_perftest -d "$rdev:1" -x rc_verbs -b /tmp/uct-rc.batch -p 13371
fi
UCX_TLS=rc_v ucx_pair ucp-rc "ucx: ucx_perftest, UCP over RC on $rdev<->$prdev: tag matching, RMA, atomics, stream, active messages" \
	13372 ucx_perftest -b /tmp/ucp.batch -p 13372
UCX_TLS=ud_v ucx_pair ucp-ud "ucx: ucx_perftest, UCP over UD on $rdev<->$prdev: tag matching, RMA" \
	13373 ucx_perftest -b /tmp/ucp-ud.batch -p 13373
# io_demo: random sizes up to 128 KiB in 16 KiB chunks, reads and writes,
# every byte checked (-q). Its client connects to the server's address
# through rdma_cm (UCX's rdmacm connection manager, not its TCP one).
UCX_TLS=rc_v UCX_SOCKADDR_TLS_PRIORITY=rdmacm KITE_UCX_SERVE=until-done \
	ucx_pair iodemo "ucx: io_demo over rdma_cm and RC on $rdev<->$prdev: 400 reads and writes of 1 B..128 KiB, data checked" \
	13374 io_demo -p 13374 -q -o read,write -d 1:131072 -k 16384 -i 400 -w 8

# The client's figures, for the host to print: one line per test,
# "BATCH TEST P50_US MB_S MSG_S" (ucx_perftest's final line: the median
# overhead, the overall bandwidth and message rate).
if [ "$KITE_ROLE" = send ]; then
	for f in uct-rc ucp-rc ucp-ud; do
		[ -f "/tmp/$f.log" ] || continue
		awk -v b="$f" '/^\+[a-z]/ { t = substr($0, 2); sub(/[-+].*/, "", t) }
			/^Final:/ { print b, t, $3, $7, $9 }' "/tmp/$f.log"
	done >/kite-out/ucx-figures.txt
fi

peer_barrier "$KITE_PEER_IP"
finish
