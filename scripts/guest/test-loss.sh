#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# VM test: the device goes away while applications hold it. For each way
# it can go (PCI function reset through sysfs, a fatal device error raised
# by the model, the same unannounced (found by kite_en's health poll),
# devlink reload, kite_ib unbind, rmmod kite_ib, PCI remove + rescan),
# with an idle
# ibv_rc_pingpong server holding a context and an ib_write_bw RC stream
# running through the device's loopback:
# - the operation completes within 10 s (kite_ib disassociates the open
#   user contexts instead of waiting for the processes);
# - an application waiting for its context's async events, holding a QP,
#   an MR of a dma-buf (udmabuf), device memory under an MR and an XRC
#   domain with an SRQ, a target and an initiator (kite_uverbs_test
#   --await-fatal) gets IBV_EVENT_DEVICE_FATAL, then ibv_alloc_pd fails
#   with EIO, its XRC objects are destroyed without an error and it
#   closes the context cleanly;
# - the stream's client fails with an error and both perftest sides exit;
#   the idle server, once a peer connects, fails to use its QP and exits
#   with an error: nothing hangs;
# - an NVMe over RDMA host (nvme-rdma, connected to an nvmet-rdma target
#   in the same VM over Kite; KITE_LOSS_NVME=0: not) with writes in flight:
#   either the RDMA core's removal of the device deletes the host's
#   controller and its writes fail, or a flushed completion comes first,
#   its error recovery lets go of the device and reconnects by itself
#   once the target is back, and its queued writes complete; nvmet-rdma
#   drops its listener with the device (it re-listens only on an address
#   change), so the target's port is enabled again, as an administrator
#   would; afterwards 4 MB read back intact;
# - afterwards the device is back, a fresh ibv_rc_pingpong pair works, and
#   the RDMA core's resource counts and the module reference counts are
#   those of the start; the worst completion time is printed.
# The fatal errors also go through devlink health: the fw_fatal reporter
# counts them, its dump shows the device's state, auto-recovery brings the
# RDMA link back to ACTIVE; "devlink health recover" resets on request.
# The eight losses are one cycle; KITE_LOSS_CYCLES (default 2) cycles run,
# none started once KITE_LOSS_SECONDS (default 900, scaled) have passed,
# and the figures are printed: cycles, the worst completion time, and
# memory (MemAvailable and unreclaimable slab) before and after.
. "$KITE_ROOT/scripts/guest/lib.sh"

RC=$KITE_RDMA_CORE
export LD_LIBRARY_PATH=$RC/lib
rcpp=$RC/bin/ibv_rc_pingpong
limit=$((10 * KITE_SCALE))
bdf=$(kite_bdf)

kite_install_modules
check "loss: kite_en and kite_ib load" modprobe kite_ib

ib_bound() { ls /sys/bus/auxiliary/drivers/kite_ib.kite_ib 2>/dev/null | grep -q '^kite_en\.rdma\.'; }
aux_name() { ls /sys/bus/auxiliary/devices | grep -m1 '^kite_en\.rdma\.'; }
gid_index() {
	grep -l '0000:0000:0000:0000:0000:ffff:0a4d:0001' /sys/class/infiniband/kite0/ports/1/gids/* 2>/dev/null |
		head -n 1 | xargs -r basename
}
port_active() { grep -q ACTIVE /sys/class/infiniband/kite0/ports/1/state; }
gid_present() { [ -n "$(gid_index)" ]; }

# bring_up: the interface up with its address (a rescanned function has a
# new netdev), kite0 registered, its port ACTIVE and its IPv4 GID present.
bring_up() {
	local nic
	wait_for 10 ib_bound || return 1
	wait_for 10 test -d /sys/class/infiniband/kite0 || return 1
	nic=$(kite_netdev)
	[ -n "$nic" ] || return 1
	ip link set "$nic" up
	ip -4 addr show dev "$nic" | grep -q 10.77.0.1/24 || ip addr add 10.77.0.1/24 dev "$nic"
	wait_for 10 port_active && wait_for 10 gid_present
}
check "loss: kite0 up, port ACTIVE, IPv4 GID" bring_up

# The NVMe host and target (KITE_LOSS_NVME=0: without them).
nvme_on=${KITE_LOSS_NVME:-1}
# The NVMe target: its port enabled again after each loss (nvme_target_again).
if [ "$nvme_on" = 1 ]; then
	check "loss: NVMe target: subsystem with a null_blk namespace on 10.77.0.1:4420" nvme_target 10.77.0.1
	check "loss: nvme-rdma loads" modprobe nvme-rdma
fi

# The namespace's block device (a regular file of that name, which a
# writer creates once the device is gone, does not count).
nvme_dev() {
	local f
	for f in /dev/nvme*n1; do
		[ -b "$f" ] && echo "$f" && return
	done
}
no_nvme() { ! ls /sys/class/nvme/nvme* >/dev/null 2>&1; }
nvme_ready() { [ -n "$(nvme_dev)" ]; }
# nvmet-rdma drops a listener whose device goes away (it re-listens only
# on an address change): the target's port is enabled again, as an
# administrator would, by linking the subsystem to it anew. The subsystem
# and its namespace stay as they were, so a reconnecting host finds the
# same namespace.
nvme_target_again() {
	local cfg=/sys/kernel/config/nvmet
	rm "$cfg/ports/1/subsystems/kite" &&
		ln -s "$cfg/subsystems/kite" "$cfg/ports/1/subsystems/kite"
}
# nvme_writer DEV: 64 KiB O_DIRECT writes until one fails, DEV is no
# longer a block device (dd would create a file in its place) or
# /tmp/nvme-stop exists.
nvme_writer() {
	while [ -b "$1" ] && [ ! -e /tmp/nvme-stop ] &&
		dd if=/dev/urandom of="$1" bs=64k count=16 oflag=direct conv=nocreat status=none; do :; done
	[ -b "$1" ] || echo "nvme_writer: $1 is gone"
}
nvme_state() { cat /sys/class/nvme/nvme*/state 2>/dev/null | head -n 1; }
nvme_live() { [ "$(nvme_state)" = live ]; }
# The host let go of the lost device: the RDMA core's removal deleted its
# controller, or a flushed completion came first and its error recovery
# tore the queues down and reconnects (every 10 s, for 10 minutes).
nvme_let_go() { no_nvme || [[ $(nvme_state) =~ ^(connecting|resetting)$ ]]; }
export -f nvme_dev no_nvme nvme_ready nvme_io nvme_state nvme_live nvme_let_go

# The kernel's own objects (ib_mad's QP1, its CQ and PD): the counts of
# every type must be these again after each loss (the device's index in
# front changes with each registration).
res_counts() { rdma res show | grep ' kite0:' | sed 's/^[0-9]*: //'; }
wait_for 10 res_counts || true
# One NVMe connection first: the RDMA core's shared CQ pool, which the
# NVMe queues take their CQs from, stays on the device once made.
nvme_once() { nvme_connect 10.77.0.1 && nvme disconnect -n kite >/dev/null && wait_for 10 no_nvme; }
[ "$nvme_on" = 1 ] &&
	check "loss: an NVMe host connects, then disconnects (the CQ pool made)" nvme_once
sleep 2
res0=$(res_counts)
echo "rdma res at the start: $res0"
# Module reference counts: the same again after every loss.
refcnts() {
	local m
	for m in kite_en kite_ib ib_core ib_uverbs rdma_cm nvme_rdma nvmet_rdma; do
		printf '%s=%s ' "$m" "$(cat /sys/module/$m/refcnt 2>/dev/null || echo -)"
	done
}
ref0=$(refcnts)
echo "module reference counts at the start: $ref0"

# Both perftest QPs connected (its server's stays in RTR).
stream_running() {
	[ "$(rdma res show qp link kite0/1 | grep -cE 'state (RTR|RTS) .*comm ib_write_bw')" -ge 2 ]
}

# A well-formed rc_pingpong peer address (LID 0, QPN 1, PSN 1, GID 0): the
# idle server reads it, then tries to connect its QP.
poke_idle_server() {
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf '0000:000001:000001:00000000000000000000000000000000\0' >&3
	sleep 1
	exec 3>&-
}

# The fatal-error trigger goes through the host's QEMU monitor (set-up, not
# timed: the harness's round trip); the timed part waits for the unbind.
export -f host_monitor model_set fault wait_for since_mark kernel_log_since
export KITE_SCALE

health() { devlink health show "pci/$bdf" reporter fw_fatal; }
health_field() { health | grep -oE "$1 [0-9]+" | awk '{ print $2 }'; }
errors0=$(health_field error)
check "devlink health: reporter fw_fatal, healthy, auto-recover on" \
	bash -c "devlink health show pci/$bdf reporter fw_fatal | grep -q 'state healthy.*auto_recover true'"

port=19000
# loss_kernel_ms NAME [FAULT]: milliseconds to kite_ib's "unbound" from
# the mark (the operation's start) or, with FAULT, from the first Kite
# message (the fault seen), by the kernel log's timestamps: the harness's
# own latency (the monitor's round trip) is not in it.
loss_kernel_ms() {
	kernel_log_since "loss-$1" | awk -F'[][]' -v fault="${2:-}" '
		NR == 1 && !fault { t0 = $2 }
		/kite_(en|ib)/ && !t0 { t0 = $2 }
		/kite_ib.*unbound/ { t1 = $2; exit }
		END { if (t0 && t1) printf "%d", (t1 - t0) * 1000; else print "?" }'
}

# timed CMD: run the shell command CMD, bounded by $limit seconds; its
# duration in ms goes to /tmp/loss-ms.
timed() {
	local t0 rc=0

	t0=$(date +%s%N)
	timeout --kill-after=5 "$limit" bash -c "$1" || rc=$?
	echo $((($(date +%s%N) - t0) / 1000000)) >/tmp/loss-ms
	return "$rc"
}

# nvme_after_loss NAME: the NVMe host and its writer right after a loss.
nvme_after_loss() {
	local name=$1
	check "loss $name: the NVMe host let go of the device (controller deleted, or reconnecting)" \
		wait_for 10 nvme_let_go
	nvme_kept=
	if ! no_nvme; then
		# Error recovery: its writes wait for the reconnection.
		nvme_kept=1
		echo "loss $name: the NVMe host is reconnecting ($(nvme_state)); its writes are queued"
	else
		check "loss $name: the NVMe writes stop (an error, or the device gone) within ${limit} s" \
			wait_for 10 exited "$nvio"
	fi
	if [ -n "$nvme_kept" ]; then
		:
	elif exited "$nvio"; then
		wait "$nvio"
	else
		# Never wait for a stuck writer: say what NVMe looks like.
		echo "loss $name: the NVMe writer is still running:"
		ls /dev/nvme* 2>&1 | tr '\n' ' '
		grep -H . /sys/class/nvme/*/state 2>&1
		ps -eo pid,stat,wchan:32,cmd | grep -E '[d]d if=' | head -n 3
		for p in $(pgrep -x dd); do cat "/proc/$p/stack"; done 2>/dev/null | head -n 20
		kernel_log_since "loss-$name" | tail -n 40
		kill -9 "$nvio" $(pgrep -x dd) 2>/dev/null
	fi
	head -n 2 "/kite-out/loss-$name-nvme.log"
}

# nvme_back NAME: after a loss, the target's port again and the host's
# data intact.
nvme_back() {
	local name=$1
	check "loss $name: afterwards the NVMe target's port is enabled again" nvme_target_again
	if [ -n "$nvme_kept" ]; then
		check "loss $name: afterwards the NVMe host reconnects by itself" wait_for 40 nvme_live
		touch /tmp/nvme-stop
		check "loss $name: afterwards its queued writes complete" wait_for 20 exited "$nvio"
		wait "$nvio"
		rm -f /tmp/nvme-stop
	else
		check "loss $name: afterwards an NVMe host connects again" nvme_connect 10.77.0.1
	fi
	check "loss $name: afterwards 4 MB written over NVMe read back intact" \
		bash -c 'wait_for 10 nvme_ready && nvme_io "$(nvme_dev)" 4' || {
		grep -H . /sys/class/nvme/*/state
		ls -l /dev/nvme*
		kernel_log_since "loss-$name" | grep -i nvme | tail -n 20
	}
	check "loss $name: afterwards the NVMe host disconnects" \
		bash -c "nvme disconnect -n kite >/dev/null && wait_for 10 no_nvme"
}

# loss NAME DO [UNDO [PRE]]: one loss with the applications running. PRE,
# if any, runs once they hold the device; DO takes the device away
# (bounded by $limit seconds); UNDO, if any, brings it back.
loss() {
	local name=$KITE_LOSS_CP$1 do=$2 undo=${3:-} pre=${4:-} gidx ms kms idle srv cli st await
	local idle_port=$port pt_port=$((port + 1)) pp_port=$((port + 2))

	port=$((port + 3))

	gidx=$(gid_index)
	timeout 300 "$rcpp" -d kite0 -g "$gidx" -p "$idle_port" -n 10 \
		>"/kite-out/loss-$name-idle.log" 2>&1 &
	idle=$!
	timeout 300 ib_write_bw -F -d kite0 -x "$gidx" -p "$pt_port" -D 200 \
		>"/kite-out/loss-$name-pt-server.log" 2>&1 &
	srv=$!
	wait_for 10 listening "$pt_port"
	timeout 300 ib_write_bw -F -d kite0 -x "$gidx" -p "$pt_port" -D 200 127.0.0.1 \
		>"/kite-out/loss-$name-pt-client.log" 2>&1 &
	cli=$!
	# The stream runs once both its QPs are in RTS (perftest's output is
	# buffered until it exits).
	check "loss $name: ib_write_bw RC stream running" wait_for 30 stream_running
	sleep 1
	# A verbs application waiting for its context's async events.
	LD_LIBRARY_PATH=$RC/lib "$KITE_TOOLS/kite_uverbs_test" kite0 --await-fatal "$((120 * KITE_SCALE))" \
		>"/kite-out/loss-$name-await.log" 2>&1 &
	await=$!
	check "loss $name: an application holds a QP, device memory and XRC objects and waits for async events" \
		wait_for 10 grep -q '^holding.*XRC' "/kite-out/loss-$name-await.log"
	check "loss $name: the stream and the idle server hold the device" exited_not "$idle" "$srv" "$cli"
	check "loss $name: rdma res shows their contexts" bash -c "rdma res show | grep ' kite0:' | grep -qv 'ctx 0 '"
	if [ "$nvme_on" = 1 ]; then
		check "loss $name: an NVMe host connects over Kite" nvme_connect 10.77.0.1
		wait_for 10 nvme_ready
		nvme_writer "$(nvme_dev)" >"/kite-out/loss-$name-nvme.log" 2>&1 &
		nvio=$!
		sleep 1
		check "loss $name: NVMe writes in flight" exited_not "$nvio"
	fi

	kite_mark "loss-$name"
	if [ -n "$pre" ]; then
		check "loss $name: the set-up before the loss holds" bash -c "$pre"
	fi
	check "loss $name: completes within ${limit} s with applications open" \
		timed "$do"
	ms=$(cat /tmp/loss-ms)
	# A fatal error's loss starts when the drivers see it.
	case $name in
	fatal*) kms=$(loss_kernel_ms "$name" fault) ;;
	*) kms=$(loss_kernel_ms "$name") ;;
	esac
	echo "loss $name: the operation took $ms ms; $kms ms by the kernel log"
	echo "$name $ms $kms" >>/kite-out/loss-times.txt
	check "loss $name: kite_ib disassociated the open user contexts" \
		since_mark "loss-$name" 'kite_ib.*unbound; [0-9]+ open user contexts disassociated'

	check "loss $name: the stream's client and server exit within ${limit} s" \
		wait_for 10 exited "$srv" "$cli"
	check "loss $name: the waiting application got IBV_EVENT_DEVICE_FATAL within ${limit} s" \
		wait_for 10 exited "$await"
	wait "$await"
	st=$?
	check "loss $name: then ibv_alloc_pd and a copy to its device memory failed with EIO, its XRC objects were destroyed and it closed the context cleanly (exit $st)" \
		test "$st" = 0
	grep -E '^(event|after|ibv_close)' "/kite-out/loss-$name-await.log" | tr '\n' ';'
	echo
	[ "$nvme_on" = 1 ] && nvme_after_loss "$name"
	wait "$cli"
	st=$?
	check "loss $name: the stream's client failed with an error (exit $st)" \
		test "$st" != 0 -a "$st" -lt 124
	grep -iE 'fail|error|poll' "/kite-out/loss-$name-pt-client.log" | head -n 3
	wait "$srv"
	st=$?
	check "loss $name: the stream's server exited by itself (exit $st)" test "$st" -lt 124
	check "loss $name: the idle server is still waiting for its peer" exited_not "$idle"
	poke_idle_server "$idle_port"
	check "loss $name: the idle server, given a peer, fails within ${limit} s" \
		wait_for 10 exited "$idle"
	wait "$idle"
	st=$?
	check "loss $name: the idle server exited with an error (exit $st)" \
		test "$st" != 0 -a "$st" -lt 124
	grep -iE 'fail|couldn' "/kite-out/loss-$name-idle.log" | head -n 3

	if [ -n "$undo" ]; then
		check "loss $name: the device comes back ($undo)" bash -c "$undo"
	fi
	check "loss $name: kite0 back, port ACTIVE, IPv4 GID" bring_up
	gidx=$(gid_index)
	timeout 60 "$rcpp" -d kite0 -g "$gidx" -p "$pp_port" -n 50 -s 4096 \
		>"/kite-out/loss-$name-rcpp-server.log" 2>&1 &
	srv=$!
	wait_for 10 listening "$pp_port"
	check "loss $name: afterwards a fresh ibv_rc_pingpong pair works (50 x 4096 bytes)" \
		timeout 60 "$rcpp" -d kite0 -g "$gidx" -p "$pp_port" -n 50 -s 4096 127.0.0.1
	wait "$srv"
	check "loss $name: afterwards the pingpong server completes too" test "$?" = 0
	[ "$nvme_on" = 1 ] && nvme_back "$name"
	res_back() { test "$(res_counts)" = "$res0"; }
	check "loss $name: rdma res back to its starting counts" wait_for 20 res_back ||
		rdma res show cq | grep ' kite0 '
	refs_back() { test "$(refcnts)" = "$ref0"; }
	check "loss $name: module reference counts back to the start's" wait_for 10 refs_back
	echo "rdma res after $name: $(res_counts)"
}

# exited_not PID...: every process is still alive.
exited_not() {
	local p
	for p; do
		kill -0 "$p" 2>/dev/null || return 1
	done
}

# health_error, no_reset: the manual recovery's set-up (exported: it runs
# in a child shell).
health_error() { devlink health show "pci/$bdf" reporter fw_fatal | grep -q 'state error'; }
no_reset() { ! since_mark "loss-${KITE_LOSS_CP}recover" 'kite_ib.*unbound'; }
export -f health_error no_reset
export bdf

# cycle N: every kind of loss once. The names of cycle 1's checks carry no
# cycle number; later cycles' do ("c2-flr", "... (cycle 2)").
cycle() {
	local cp= cn= errors0

	if [ "$1" -gt 1 ]; then
		cp="c$1-"
		cn=" (cycle $1)"
	fi
	export KITE_LOSS_CP=$cp
	errors0=$(health_field error)
	loss flr "echo 1 >/sys/bus/pci/devices/$bdf/reset"
	loss fatal "wait_for 10 since_mark loss-${cp}fatal 'kite_ib.*unbound'" "" \
		"fault 'fault-fatal 7'"
	check "devlink health: the error count rose by one$cn" test "$(health_field error)" = $((errors0 + 1))
	check "devlink health: recovered, healthy again$cn" bash -c "devlink health show pci/$bdf reporter fw_fatal | grep -q 'state healthy.*recover [1-9]'"
	check "devlink health: dump shows the device state at the error (fatal, code 7)$cn" \
		bash -c "devlink health dump show pci/$bdf reporter fw_fatal | tr -d ',:' | grep -q 'fatal true fatal_code 7'"
	devlink health dump show "pci/$bdf" reporter fw_fatal
	# The reporter keeps its first dump until it is cleared.
	devlink health dump clear "pci/$bdf" reporter fw_fatal
	check "devlink health: diagnose shows the device ready now$cn" \
		bash -c "devlink health diagnose pci/$bdf reporter fw_fatal | tr -d ',:' | grep -q 'ready true fatal false'"
	check "rdma link: ACTIVE after the automatic recovery$cn" \
		bash -c "rdma link show kite0/1 | grep -q 'state ACTIVE'"
	check "model: a silent fatal error can be armed$cn" fault "fault-fatal-silent true"
	loss fatal-silent "wait_for 10 since_mark loss-${cp}fatal-silent 'kite_ib.*unbound'" "" \
		"fault 'fault-fatal 9'"
	fault "fault-fatal-silent false"
	check "devlink health: the health poll found the silent error (count +2)$cn" \
		test "$(health_field error)" = $((errors0 + 2))
	check "kite_en: the silent error was found by STATUS (code 9)$cn" \
		since_mark "loss-${cp}fatal-silent" 'device reports a fatal error \(code 9\)'
	# Auto-recovery off: a fatal error leaves the device failed (the reporter
	# in error, no reset) until "devlink health recover".
	check "devlink health: auto-recovery can be turned off$cn" \
		devlink health set "pci/$bdf" reporter fw_fatal auto_recover false
	loss recover "devlink health recover pci/$bdf reporter fw_fatal && wait_for 10 since_mark loss-${cp}recover 'kite_ib.*unbound'" "" \
		"fault 'fault-fatal 11' && wait_for 10 health_error && sleep 3 && no_reset && health_error"
	check "devlink health: the manual recovery counted (errors +3)$cn" \
		test "$(health_field error)" = $((errors0 + 3))
	check "devlink health: auto-recovery back on$cn" \
		devlink health set "pci/$bdf" reporter fw_fatal auto_recover true
	loss reload "devlink dev reload pci/$bdf"
	loss unbind "echo \$(ls /sys/bus/auxiliary/drivers/kite_ib.kite_ib | grep -m1 '^kite_en\.rdma\.') >/sys/bus/auxiliary/drivers/kite_ib.kite_ib/unbind" \
		"echo \$(ls /sys/bus/auxiliary/devices | grep -m1 '^kite_en\.rdma\.') >/sys/bus/auxiliary/drivers/kite_ib.kite_ib/bind"
	loss rmmod "rmmod kite_ib" "modprobe kite_ib"
	loss remove "echo 1 >/sys/bus/pci/devices/$bdf/remove && echo 1 >/sys/bus/pci/rescan"
}

# The loop: KITE_LOSS_CYCLES cycles (default 2), and no new cycle once
# KITE_LOSS_SECONDS (default 900, scaled) have passed; memory figures
# around it.
cycles_want=${KITE_LOSS_CYCLES:-2}
loop_limit=$((${KITE_LOSS_SECONDS:-900} * KITE_SCALE))
meminfo() { awk '$1 == "MemAvailable:" { a = $2 } $1 == "SUnreclaim:" { u = $2 } END { print a, u }' /proc/meminfo; }
read -r avail0 sunrec0 < <(sync; echo 3 >/proc/sys/vm/drop_caches; meminfo)
loop_t0=$SECONDS
cycles_done=0
while [ "$cycles_done" -lt "$cycles_want" ] && [ $((SECONDS - loop_t0)) -lt "$loop_limit" ]; do
	cycles_done=$((cycles_done + 1))
	echo "loss: cycle $cycles_done of $cycles_want"
	cycle "$cycles_done"
done
loop_s=$((SECONDS - loop_t0))
read -r avail1 sunrec1 < <(sync; echo 3 >/proc/sys/vm/drop_caches; meminfo)
echo "loss: memory: MemAvailable $avail0 -> $avail1 kB, unreclaimable slab $sunrec0 -> $sunrec1 kB ($((sunrec1 - sunrec0)) kB) over $cycles_done cycles"
check "loss: $cycles_want cycles of every kind of loss ran within ${loop_limit} s ($cycles_done in $loop_s s)" \
	test "$cycles_done" = "$cycles_want"
echo "loss: completion times (ms): $(tr '\n' ' ' </kite-out/loss-times.txt)"
cycles=$(wc -l </kite-out/loss-times.txt)
worst=$(awk 'BEGIN { w = 0 } $2 > w { w = $2; n = $1 } END { print w " ms (" n ")" }' /kite-out/loss-times.txt)
echo "loss: figures: $cycles losses with applications$([ "$nvme_on" = 1 ] && echo " and NVMe I/O") open, worst completion $worst, bound ${limit} s; rdma res and module reference counts back after each"
check "loss: every kind of loss went through ($cycles of $((8 * cycles_want)))" \
	test "$cycles" = $((8 * cycles_want))
if [ "$nvme_on" = 1 ]; then
	check "loss: NVMe target torn down" nvme_target_remove
	check "loss: nvme-rdma unloads" modprobe -r nvme-rdma
fi
check "loss: kite_ib and kite_en unload" modprobe -r kite_ib kite_en
check "loss: dmesg clean" dmesg_clean
finish
