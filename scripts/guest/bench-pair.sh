#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Guest side of scripts/bench-pair.sh, in both VMs (KITE_ROLE a: clients
# and NVMe host, records the figures; b: servers and NVMe target). Each VM
# has two Kite NICs and two virtio-net NICs with rdma_rxe (rxe0, rxe1),
# and each pairing a wire of its own:
#   Kite<->Kite  10.77.0.1 (a's first Kite)  -> 10.77.0.2 (b's first Kite)
#   rxe<->rxe    10.78.0.1 (a rxe0)          -> 10.78.0.2 (b rxe0)
#   Kite->rxe    10.79.0.1 (a's second Kite) -> 10.79.0.2 (b rxe1)
#   rxe->Kite    10.80.0.1 (a rxe1)          -> 10.80.0.2 (b's second Kite)
#
# Both VMs go through one list of runs, in the same order, from run
# KITE_BENCH_FROM (the host restarts the pair after the run during which a
# VM crashed). Before each run a VM writes "INDEX KEY" to /kite-out/current;
# VM a writes each run's figures to /kite-out/fig/INDEX as "KEY<TAB>FIGURES"
# (or "failed"), and the host's scripts/bench-report.py makes the report.
# KEY is PAIRING|TEST|SIZE. Knobs (from the host's environment):
#   KITE_BENCH_SECS        length of each main run (default 10)
#   KITE_BENCH_SWEEP_SECS  length of each bandwidth run of the size sweep (3)
#   KITE_BENCH_MTU         both NICs' netdev MTU (default 9000: RoCE MTU
#                          4096, as on a RoCE network with jumbo frames)
#   KITE_BENCH_ONLY        an extended regular expression: only the runs
#                          whose KEY matches
#   KITE_BENCH_CRASH       INDEX:ROLE: VM ROLE crashes its kernel at run
#                          INDEX (tests the host's recovery)
#   KITE_BENCH_GUEST_PROF  an extended regular expression: the runs whose
#                          KEY matches are profiled inside the VMs
#                          (gprof_start), into /kite-out/gprof-INDEX.txt
. "$KITE_ROOT/scripts/guest/lib.sh"

secs=${KITE_BENCH_SECS:-10}
ssecs=${KITE_BENCH_SWEEP_SECS:-3}
from=${KITE_BENCH_FROM:-0}
me=1
[ "$KITE_ROLE" = b ] && me=2
peer_ip() { echo "10.$1.0.$((3 - me))"; }
peer_barrier_start
mkdir -p /kite-out/fig
# Each VM announces the run it starts to the other (UDP port 7778, over
# virtio-net): the one behind (a perftest that failed on one side only, or
# runs VM a gave up) skips to it.
socat -u UDP-RECV:7778 - | while read -r n; do echo "$n" >/tmp/kite-peer-run; done &
# peer_ahead N: the other VM has started a run after run N.
peer_ahead() { [ "$(cat /tmp/kite-peer-run 2>/dev/null || echo -1)" -gt "$1" ]; }
declare -A fails

insmod "$KITE_EN_KO" && insmod "$KITE_IB_KO" || exit 1
modprobe virtio_net && modprobe rdma_rxe && modprobe rdma_ucm || exit 1
# netdevs_by_mac DRIVER: DRIVER's interfaces, in the order of their MAC
# addresses (vm.sh gives a VM's first NIC of a kind the lowest).
netdevs_by_mac() {
	local d
	for d in /sys/class/net/*; do
		[ "$(basename "$(readlink "$d/device/driver" 2>/dev/null)")" = "$1" ] &&
			echo "$(cat "$d/address") $(basename "$d")"
	done | sort | awk '{ printf "%s ", $2 }'
}
# rdma_dev_of NETDEV: the RDMA device on NETDEV.
rdma_dev_of() {
	rdma link show | awk -v n="$1" '{ for (i = 1; i < NF; i++)
		if ($i == "netdev" && $(i + 1) == n) { split($2, d, "/"); print d[1] } }'
}
# Two of each (scripts/bench-pair.sh): the first pair for Kite<->Kite and
# rxe<->rxe, the second for the mixed pairings, each on a wire of its own.
read -r knic knic1 <<<"$(netdevs_by_mac kite_en)"
read -r vnic vnic1 <<<"$(netdevs_by_mac virtio_net)"
[ -n "$knic1" ] && [ -n "$vnic1" ] || { echo "not two Kite and two virtio-net interfaces"; exit 1; }
if [ "$KITE_ROLE" = a ]; then
	set -- "$knic" 77 "$vnic" 78 "$knic1" 79 "$vnic1" 80
else
	set -- "$knic" 77 "$vnic" 78 "$vnic1" 79 "$knic1" 80
fi
while [ $# -gt 0 ]; do
	ip addr add "10.$2.0.$me/24" dev "$1"
	ip link set "$1" mtu "${KITE_BENCH_MTU:-9000}" || { echo "$1: MTU not set"; exit 1; }
	ip link set "$1" up
	shift 2
done
rdma link add rxe0 type rxe netdev "$vnic"
rdma link add rxe1 type rxe netdev "$vnic1"
kdev=$(rdma_dev_of "$knic") kdev1=$(rdma_dev_of "$knic1")
[ -n "$kdev" ] && [ -n "$kdev1" ] || { echo "no RDMA device on $knic or $knic1"; exit 1; }

# gid_index DEV SUBNET: the GID index of DEV's IPv4 address in 10.SUBNET.0.0/24.
gid_index() {
	local hex f
	hex=$(printf '0000:0000:0000:0000:0000:ffff:0a%02x:00%02x' "$2" "$me")
	for f in /sys/class/infiniband/$1/ports/1/gids/*; do
		grep -q "$hex" "$f" 2>/dev/null && { basename "$f"; return; }
	done
}
# have_gids: every RDMA device has the GID of its IPv4 address.
have_gids() {
	local k=79 r=80
	[ "$KITE_ROLE" = b ] && k=80 r=79
	[ -n "$(gid_index "$kdev" 77)" ] && [ -n "$(gid_index rxe0 78)" ] &&
		[ -n "$(gid_index "$kdev1" $k)" ] && [ -n "$(gid_index rxe1 $r)" ]
}
for i in $(seq 1 100); do
	have_gids && break
	sleep 0.2
done
have_gids || { echo "no IPv4 GIDs"; exit 1; }
for n in 77 78 79 80; do
	wait_for 90 ping -c 1 -W 1 "$(peer_ip $n)" || { echo "no answer from $(peer_ip $n)"; exit 1; }
done

# The pairings: NAME -> "SUBNET A_DEV B_DEV".
declare -A pairing=(
	["Kite<->Kite"]="77 $kdev $kdev"
	["rxe<->rxe"]="78 rxe0 rxe0"
	["Kite->rxe"]="79 $kdev1 rxe1"
	["rxe->Kite"]="80 rxe1 $kdev1"
)
sizes="64 256 1024 4096 16384 65536 262144 1048576"
runs=()
# pair_runs NAME [sweep]: a pairing's main runs, and its size sweep.
pair_runs() {
	local s
	runs+=("$1|write_bw|65536" "$1|read_bw|65536" "$1|send_bw|64" "$1|write_lat|64")
	[ "${2:-}" = sweep ] || return 0
	for s in $sizes; do runs+=("$1|sweep_bw|$s" "$1|sweep_lat|$s"); done
}
# The queue depths of the 4 KiB random read sweep, besides the main runs'
# 16 (nvme-rdma's default I/O queue holds 127 commands).
nvme_depths="1 64 128"
# nvme_runs TRANSPORT: NVMe over RDMA reads and writes (the target fetches
# written data with RDMA READ), and 4 KiB random reads at other queue depths
# (TEST randread_qdN).
nvme_runs() {
	local d
	runs+=("nvme-$1|randread|4096" "nvme-$1|read|131072" "nvme-$1|randwrite|4096"
		"nvme-$1|write|131072")
	for d in $nvme_depths; do runs+=("nvme-$1|randread_qd$d|4096"); done
	runs+=("nvme-$1|randread_poll|4096")
}
# Kite's own figures first; the NVMe runs last (VM b serves them with a
# target set up after its perftest servers).
pair_runs "Kite<->Kite" sweep
pair_runs "rxe<->rxe" sweep
pair_runs "Kite->rxe" sweep
pair_runs "rxe->Kite"
nvme_runs Kite
nvme_runs rxe

# perf N PAIRING TEST SIZE: one side of run N's perftest (on TCP port
# 18600 + N, so that the sides cannot pair up wrongly); the client (VM a)
# retries until VM b's server listens; its figures go to $res: "MB/s
# Mmsg/s messages" for bandwidth, "typical average 99%" (usec) for latency.
# perftest uses the rdma-core build's libibverbs, which has the Kite
# provider.
perf() {
	local n=$1 net dev adev bdev gidx iters prog tb end
	read -r net adev bdev <<<"${pairing[$2]}"
	dev=$adev
	[ "$KITE_ROLE" = b ] && dev=$bdev
	gidx=$(gid_index "$dev" "$net")
	prog=ib_$3
	case $3 in
	sweep_*) prog=ib_write_${3#sweep_} ;;
	esac
	case $3 in
	*lat)
		# By iterations: with -D perftest reports only the average.
		iters=2000
		[ "$4" -gt 4096 ] && iters=$((4194304 / $4))
		[ "$iters" -lt 100 ] && iters=100
		set -- "$prog" -s "$4" -n "$iters" ;;
	sweep_bw) set -- "$prog" -s "$4" -D "$ssecs" ;;
	*) set -- "$prog" -s "$4" -D "$secs" ;;
	esac
	set -- "$@" -d "$dev" -x "$gidx" -p $((18600 + n))
	export LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib
	res=failed
	# The server gives up after $tb s. The client tries (each try at most
	# secs + 60 s: a stream that stalls is not waited for) until the
	# server may have given up, and half a minute more: a run that failed
	# on one side leaves both at the next run within that half minute.
	# A server whose client went away before the end (perftest's client
	# exits without a report when its clock calibration fails, "r^2 <
	# 0.9", which a vCPU descheduled mid-sample causes under TCG) listens
	# again for the client's next try, within the same $tb s.
	tb=$((2 * secs + 120))
	local try=0 st
	if [ "$KITE_ROLE" = b ]; then
		end=$((SECONDS + tb))
		while [ "$SECONDS" -lt "$end" ]; do
			try=$((try + 1))
			st=0
			timeout $((end - SECONDS)) "$@" >"/kite-out/perf-$n.log" 2>&1 || st=$?
			[ "$st" = 0 ] && return 0
			{
				echo "== try $try: exit status $st"
				cat "/kite-out/perf-$n.log"
			} >>"/kite-out/perf-$n.failed.log"
			[ "$st" = 124 ] && return 0
		done
		return 0
	fi
	end=$((SECONDS + tb + 30))
	while [ "$SECONDS" -lt "$end" ]; do
		try=$((try + 1))
		st=0
		timeout $((secs + 60)) "$@" "$(peer_ip "$net")" >"/kite-out/perf-$n.log" 2>&1 || st=$?
		if [ "$st" != 0 ]; then
			# A try that failed after it reached the server is kept, with
			# the RDMA devices' QPs then: what a stalled stream left.
			if ! grep -q "Couldn't connect" "/kite-out/perf-$n.log"; then
				{
					echo "== try $try: exit status $st"
					cat "/kite-out/perf-$n.log"
					echo "== rdma resource show qp"
					rdma -d resource show qp 2>&1
					echo "== counters"
					kite_counters 2>&1
				} >>"/kite-out/perf-$n.failed.log"
			fi
			sleep 1
			continue
		fi
		case $prog in
		*_lat) res=$(awk '$1 ~ /^[0-9]+$/ && NF >= 8 { t = $5; a = $6; p = $8 }
			END { print t, a, p }' "/kite-out/perf-$n.log") ;;
		*) res=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 { n = $2 + 0; bw = $4 + 0; mr = $5 + 0 }
			END { print bw, mr, n }' "/kite-out/perf-$n.log") ;;
		esac
		return 0
	done
}

# irqs PATTERN: interrupts so far on the vectors whose name matches PATTERN.
irqs() { awk -v p="$1" '$NF ~ p { for (i = 2; i < NF; i++) if ($i ~ /^[0-9]+$/) s += $i } END { print s + 0 }' /proc/interrupts; }
# kite_stat DEV NAME: Kite device DEV's port counter NAME.
kite_stat() { rdma statistic show link "$1/1" | tr ' ' '\n' | awk -v c="$2" 'prev == c { print; exit } { prev = $0 }'; }
# The CQEs of the NVMe host's device.
cqes() { kite_stat "$kdev" cqes; }
# kite_counters: both Kite devices' port counters, "DEV:NAME VALUE" a line.
kite_counters() {
	local d
	for d in "$kdev" "$kdev1"; do
		rdma statistic show link "$d/1" | tr ' ' '\n' |
			awk -v d="$d" 'prev ~ /^[a-z_]+$/ && $0 ~ /^[0-9]+$/ { print d ":" prev, $0 } { prev = $0 }'
	done
}
# kite_counters_since BEFORE: the counters that moved since BEFORE
# (kite_counters' output), "NAME DELTA" a line.
kite_counters_since() {
	kite_counters | awk 'NR == FNR { v[$1] = $2; next } $2 != v[$1] { print $1, $2 - v[$1] }' \
		<(printf '%s\n' "$1") -
}
# roce_pkts tx|rx: the RoCE packets both Kite devices sent or received.
roce_pkts() { echo $(($(kite_stat "$kdev" "roce_$1_pkts") + $(kite_stat "$kdev1" "roce_$1_pkts"))); }
have_fio=0

# The guest profile of a run (KITE_BENCH_GUEST_PROF): where the VM's CPU
# went (perf record of the whole VM, call graphs, 499 Hz) and how long
# kite_ib's data path calls took (the function_graph tracer on
# $gprof_funcs: each call's duration, summed up by graph-durations.py).
# Under TCG the calls that ring a doorbell are the slow ones: an MMIO
# write takes QEMU's global lock (docs/performance.rst). "command perf":
# perf() above runs perftest.
gprof_funcs="kite_ib_post_send kite_ib_post_recv kite_ib_poll_cq
	kite_ib_req_notify_cq kite_ib_eq_irq kite_ib_eq_tasklet"
gprof_pid=
# gprof_start KEY: starts the profile if KEY is to be profiled.
gprof_start() {
	local t=/sys/kernel/tracing f
	gprof_pid=
	[ -n "${KITE_BENCH_GUEST_PROF:-}" ] && [[ $1 =~ $KITE_BENCH_GUEST_PROF ]] || return 0
	if ! command -v perf >/dev/null; then
		echo "bench-pair: no perf (the host's linux-perf): no guest profile" >&2
		return 0
	fi
	mountpoint -q $t || mount -t tracefs nodev $t || return 0
	echo 0 >$t/tracing_on
	echo nop >$t/current_tracer
	: >$t/set_ftrace_filter
	for f in $gprof_funcs; do
		echo "$f" >>$t/set_ftrace_filter 2>/dev/null ||
			echo "bench-pair: $f cannot be traced" >&2
	done
	echo 16384 >$t/buffer_size_kb
	echo 1 >$t/options/funcgraph-tail
	echo function_graph >$t/current_tracer
	: >$t/trace
	echo 1 >$t/tracing_on
	# perf starts disabled and is enabled through its control FIFO: the
	# ack comes once it is sampling. Before that it reads every process's
	# maps, seconds under TCG, which must not fall into the run.
	rm -f /tmp/gprof.ctl /tmp/gprof.ack
	mkfifo /tmp/gprof.ctl /tmp/gprof.ack
	exec {gprof_ctl}<>/tmp/gprof.ctl {gprof_ack}<>/tmp/gprof.ack
	command perf record -q -a -g -F 499 -D -1 -o /tmp/gprof.data \
		--control fifo:/tmp/gprof.ctl,/tmp/gprof.ack >/dev/null 2>&1 &
	gprof_pid=$!
	echo enable >&$gprof_ctl
	read -rt 120 -u $gprof_ack _ || echo "bench-pair: perf not sampling after 120 s" >&2
}
# gprof_stop INDEX|NAME: ends the profile gprof_start started, into
# /kite-out/gprof-INDEX.txt.
gprof_stop() {
	local t=/sys/kernel/tracing
	[ -n "$gprof_pid" ] || return 0
	kill -INT "$gprof_pid" 2>/dev/null
	wait "$gprof_pid" 2>/dev/null
	gprof_pid=
	exec {gprof_ctl}>&- {gprof_ack}>&-
	rm -f /tmp/gprof.ctl /tmp/gprof.ack
	echo 0 >$t/tracing_on
	{
		echo "== kite_ib's calls (function_graph), microseconds a call"
		python3 "$KITE_ROOT/scripts/guest/graph-durations.py" <$t/trace
		echo
		echo "== where the VM's CPU went (perf report: self, by symbol)"
		command perf report -i /tmp/gprof.data --stdio --no-children -g none \
			--sort comm,dso,sym --percent-limit 0.5 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 60
		echo
		echo "== the top symbols by call chain (each with its callers)"
		command perf report -i /tmp/gprof.data --stdio --no-children -g callee \
			--sort sym --percent-limit 3 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 150
	} >"/kite-out/gprof-$1.txt"
	echo nop >$t/current_tracer
	: >$t/set_ftrace_filter
	rm -f /tmp/gprof.data
}
command -v fio >/dev/null && have_fio=1
# fio_run NAME RW BS DEPTH ENGINE...: "IOPS MB/s I/Os" of a job on the
# namespace $dev, at queue depth DEPTH, with the I/O engine options ENGINE.
fio_run() {
	local name=$1 rw=$2 bs=$3 depth=$4
	shift 4
	fio --name="$name" --filename="$dev" --rw="$rw" --bs="$bs" --direct=1 "$@" \
		--iodepth="$depth" --runtime="$secs" --time_based --size=512m --output-format=json \
		>"/kite-out/fio-$name.json" 2>/dev/null &&
		python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
r = j["write" if "write" in sys.argv[2] else "read"]
print("%.0f %.1f %d" % (r["iops"], r["bw"] / 1024.0, r["total_ios"]))' "/kite-out/fio-$name.json" "$rw"
}
# dd fallback without fio: sequential O_DIRECT transfers of 256 MiB.
dd_run() {
	local bs=$3 count t0 t1
	count=$(( 256 * 1048576 / bs ))
	t0=$(date +%s%N)
	case $2 in
	*write) dd if=/dev/zero of="$dev" bs="$bs" count="$count" oflag=direct status=none || return 1 ;;
	*) dd if="$dev" of=/dev/null bs="$bs" count="$count" iflag=direct status=none || return 1 ;;
	esac
	t1=$(date +%s%N)
	awk -v n="$count" -v b="$bs" -v ns=$((t1 - t0)) 'BEGIN { s = ns / 1e9; printf "%.0f %.1f %d\n", n / s, n * b / s / 1048576, n }'
}
# bounded SECS CMD...: CMD, given at most SECS seconds: its status, or 124
# (and a line on standard error) if it is still running then. It is left
# behind: a process in an I/O the kernel cannot end is not killable, and
# the benchmark goes on without it.
bounded() {
	# Not "secs": CMD may be a function of this script that reads it.
	local bound_s=$1 bound_pid bound_i
	shift
	"$@" &
	bound_pid=$!
	for ((bound_i = 0; bound_i < bound_s * 10; bound_i++)); do
		kill -0 "$bound_pid" 2>/dev/null || { wait "$bound_pid"; return; }
		kite_nap 0.1
	done
	kill "$bound_pid" 2>/dev/null
	echo "bench-pair: '$*' still running after $bound_s s: given up" >&2
	# Where it is stuck: the blocked tasks' stacks, into the kernel log
	# (the VM's dmesg.log).
	echo "bench-pair: '$*' given up after $bound_s s" >/dev/kmsg
	echo 1 >/proc/sys/kernel/sysrq && echo w >/proc/sysrq-trigger
	return 124
}
nvme_on=
declare -A nvme_lost=()
# nvme_job TRANSPORT TEST BS: one NVMe over RDMA job (VM a), connected to
# the target's TRANSPORT address first if it is not yet (with one poll
# queue); TEST is fio's rw (libaio, queue depth 16), randread_qdN (random
# reads at queue depth N) or randread_poll (random reads through the poll
# queue: io_uring with hipri).
# Its figures go to $res: "IOPS MB/s I/Os", and for the random reads the
# interrupts at that load: "IRQS CQES" on Kite's NIC, "IRQS" on rxe's
# virtio-net NIC. Each step has a time bound: a job that does not end in
# time is "lost", and so are the transport's runs after it.
nvme_job() {
	local addr=10.77.0.2 run=fio_run rw=$2 depth=16 engine=(--ioengine=libaio)
	local k0 v0 c0 k1 v1 c1 st
	[ "$1" = rxe ] && addr=10.78.0.2
	if [[ $rw == randread_qd* ]]; then
		depth=${rw#randread_qd}
		rw=randread
	elif [ "$rw" = randread_poll ]; then
		engine=(--ioengine=io_uring --hipri)
		rw=randread
	fi
	if [ "$have_fio" != 1 ]; then
		run=dd_run
		# A depth or engine of its own: only fio has those.
		if [ "$rw" != "$2" ]; then
			res="skipped: needs fio"
			return 0
		fi
	fi
	if [ -n "${nvme_lost[$1]:-}" ]; then
		res="lost: ${nvme_lost[$1]}"
		return 0
	fi
	res=failed
	if [ "$nvme_on" != "$1" ]; then
		if [ -n "$nvme_on" ]; then
			st=0
			bounded 60 nvme disconnect -n kite >/dev/null 2>&1 || st=$?
			if [ "$st" = 124 ]; then
				nvme_lost[$1]="the disconnect from $nvme_on did not end"
				res="lost: ${nvme_lost[$1]}"
				return 0
			fi
		fi
		nvme_on=
		sleep 1
		nvme_connect "$addr" --nr-poll-queues=1 && wait_for 10 bash -c 'ls /dev/nvme*n1' || return 0
		nvme_on=$1
	fi
	dev=$(ls /dev/nvme*n1 | head -n 1)
	k0=$(irqs '^kite_ib-eq') v0=$(irqs '^virtio[0-9]+-(input|output)') c0=$(cqes)
	st=0
	bounded $((secs + 120)) "$run" "$1-$2-$3" "$rw" "$3" "$depth" "${engine[@]}" >/tmp/nvme-res || st=$?
	if [ "$st" = 124 ]; then
		nvme_lost[$1]="a job did not end in $((secs + 120)) s"
		res="lost: ${nvme_lost[$1]}"
		return 0
	fi
	[ "$st" = 0 ] && res=$(cat /tmp/nvme-res) || { res=failed; return 0; }
	k1=$(irqs '^kite_ib-eq') v1=$(irqs '^virtio[0-9]+-(input|output)') c1=$(cqes)
	[ "$rw" = randread ] || return 0
	if [ "$1" = Kite ]; then
		res="$res $((k1 - k0)) $((c1 - c0))"
	else
		res="$res $((v1 - v0))"
	fi
}

# The runs from $from on: VM b serves the perftest ones, then the NVMe
# target until VM a is done.
nvme_ready=0
for ((i = from; i < ${#runs[@]}; i++)); do
	key=${runs[i]}
	[[ $key =~ ${KITE_BENCH_ONLY:-.} ]] || continue
	IFS='|' read -r pair test size <<<"$key"
	if [[ $pair != nvme-* ]]; then
		res=
		if peer_ahead "$i"; then
			res="skipped: the other VM was past it"
		elif [ "${fails[$pair]:-0}" -ge 2 ]; then
			res="skipped: the two runs before it failed"
		fi
		if [ -n "$res" ]; then
			[ "$KITE_ROLE" = a ] && printf '%s\t%s\n' "$key" "$res" >"/kite-out/fig/$i"
			continue
		fi
		for n in 1 2 3; do echo "$i" >"/dev/udp/$(peer_ip 78)/7778"; done 2>/dev/null
	fi
	echo "$i $key" >/kite-out/current
	# Its start and end by the host's clock (the files' times) and
	# the Kite devices' RoCE packets in it (N.pkts: sent, received): the time window
	# and the packets of a QEMU profile (scripts/qemu-profile.py).
	# Not on the NVMe target, which goes through its NVMe runs at once
	# while VM a measures the first: its counters (rdma and the device's
	# firmware commands) would take the target's CPU from that run.
	if [[ $pair != nvme-* || $KITE_ROLE = a ]]; then
		: >"/kite-out/fig/$i.start"
		tx0=$(roce_pkts tx) rx0=$(roce_pkts rx) ctr0=$(kite_counters)
	fi
	if [ "${KITE_BENCH_CRASH:-}" = "$i:$KITE_ROLE" ]; then
		echo "KITE_BENCH_CRASH: crashing at run $i ($key)"
		echo 1 >/proc/sys/kernel/sysrq
		echo c >/proc/sysrq-trigger
	fi
	# The NVMe target profiles its NVMe part in one stretch (below).
	[[ $pair == nvme-* && $KITE_ROLE = b ]] || gprof_start "$key"
	case $pair in
	nvme-*)
		if [ "$KITE_ROLE" = b ]; then
			[ "$nvme_ready" = 1 ] && continue
			nvme_ready=1
			# The target serves every NVMe run in one stretch: one
			# profile of it all, if any NVMe run is profiled.
			for k in "${runs[@]:i}"; do
				[[ $k == nvme-* && $k =~ ${KITE_BENCH_ONLY:-.} ]] || continue
				gprof_start "$k"
				[ -n "$gprof_pid" ] && break
			done
			cfg=/sys/kernel/config/nvmet
			nvme_target 10.77.0.2 || exit 1
			mkdir $cfg/ports/2 && echo rdma >$cfg/ports/2/addr_trtype &&
				echo ipv4 >$cfg/ports/2/addr_adrfam &&
				echo 10.78.0.2 >$cfg/ports/2/addr_traddr &&
				echo 4420 >$cfg/ports/2/addr_trsvcid &&
				ln -s $cfg/subsystems/kite $cfg/ports/2/subsystems/kite || exit 1
			continue
		fi
		nvme_job "${pair#nvme-}" "$test" "$size" ;;
	*)
		perf "$i" "$pair" "$test" "$size"
		if [ "$KITE_ROLE" = b ]; then
			:
		elif [ "$res" = failed ]; then
			fails[$pair]=$((${fails[$pair]:-0} + 1))
		else
			fails[$pair]=0
		fi ;;
	esac
	gprof_stop "$i"
	# The Kite counters that moved in the run (retries, NAKs, ...), for
	# finding out where a figure comes from.
	kite_counters_since "$ctr0" >"/kite-out/counters-$i.log"
	[ "$KITE_ROLE" = a ] || continue
	printf '%s\t%s\n' "$key" "$res" >"/kite-out/fig/$i"
	echo $(($(roce_pkts tx) - tx0)) $(($(roce_pkts rx) - rx0)) >"/kite-out/fig/$i.pkts"
done
echo "${#runs[@]} end" >/kite-out/current

if [ "$KITE_ROLE" = b ]; then
	# Serve until VM a has run its NVMe benchmarks.
	[ "$nvme_ready" = 1 ] && wait_for $((secs * 8 + 600)) test -s /tmp/kite-peer-done
	gprof_stop nvme-target
	peer_barrier 10.77.0.1
	# Bounded like the host's steps: a host whose I/O got stuck may keep
	# the target's queues from draining.
	if [ "$nvme_ready" = 1 ]; then
		bounded 60 bash -c "rm $cfg/ports/2/subsystems/kite && rmdir $cfg/ports/2"
		bounded 60 nvme_target_remove
	fi
	bounded 60 rmmod kite_ib kite_en 2>/dev/null
	exit 0
fi
[ -z "$nvme_on" ] || bounded 60 nvme disconnect -n kite >/dev/null 2>&1
peer_barrier 10.77.0.2
# After a lost NVMe run, removing an RDMA device waits for nvme-rdma's
# controller deletions (nvme_rdma_remove_one() flushes them), which may
# never end: the VM powers off without it.
bounded 60 rmmod kite_ib kite_en 2>/dev/null
exit 0
