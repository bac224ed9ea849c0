#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Guest side of scripts/bench-pair.sh, in both VMs (KITE_ROLE a: clients
# and NVMe host, prints the report; b: servers and NVMe target). Each VM
# has kite0 (Kite) and rxe0 (rdma_rxe on virtio-net) on one segment:
#   Kite<->Kite  10.77.0.1 (a kite0) -> 10.77.0.2 (b kite0)
#   rxe<->rxe    10.78.0.1 (a rxe0)  -> 10.78.0.2 (b rxe0)
#   Kite->rxe    10.79.0.1 (a kite0) -> 10.79.0.2 (b rxe0)
#   rxe->Kite    10.80.0.1 (a rxe0)  -> 10.80.0.2 (b kite0)
# Prints figures; fails only if something could not be run at all.
. "$KITE_ROOT/scripts/guest/lib.sh"

secs=${KITE_BENCH_SECS:-10}
me=1
[ "$KITE_ROLE" = b ] && me=2
peer_ip() { echo "10.$1.0.$((3 - me))"; }
peer_barrier_start

insmod "$KITE_EN_KO" && insmod "$KITE_IB_KO" || exit 1
modprobe virtio_net && modprobe rdma_rxe && modprobe rdma_ucm || exit 1
knic=$(kite_netdev)
vnic=$(virtio_netdev)
[ -n "$knic" ] && [ -n "$vnic" ] || { echo "no Kite or no virtio-net interface"; exit 1; }
# Two NICs on one segment: each answers ARP only for its own addresses.
sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
if [ "$KITE_ROLE" = a ]; then
	kite_subnets="77 79" rxe_subnets="78 80"
else
	kite_subnets="77 80" rxe_subnets="78 79"
fi
for n in $kite_subnets; do ip addr add "10.$n.0.$me/24" dev "$knic"; done
for n in $rxe_subnets; do ip addr add "10.$n.0.$me/24" dev "$vnic"; done
ip link set "$knic" up
ip link set "$vnic" up
rdma link add rxe0 type rxe netdev "$vnic"

# gid_index DEV SUBNET: the GID index of DEV's IPv4 address in 10.SUBNET.0.0/24.
gid_index() {
	local hex f
	hex=$(printf '0000:0000:0000:0000:0000:ffff:0a%02x:00%02x' "$2" "$me")
	for f in /sys/class/infiniband/$1/ports/1/gids/*; do
		grep -q "$hex" "$f" 2>/dev/null && { basename "$f"; return; }
	done
}
for i in $(seq 1 100); do
	[ -n "$(gid_index kite0 77)" ] && [ -n "$(gid_index rxe0 78)" ] && break
	sleep 0.2
done
[ -n "$(gid_index kite0 77)" ] && [ -n "$(gid_index rxe0 78)" ] || { echo "no IPv4 GIDs"; exit 1; }
for n in 77 78 79 80; do
	wait_for 90 ping -c 1 -W 1 "$(peer_ip $n)" || { echo "no answer from $(peer_ip $n)"; exit 1; }
done

# The pairings, in the order both VMs run them: NAME SUBNET A_DEV B_DEV.
pairs=(
	"Kite<->Kite 77 kite0 kite0"
	"rxe<->rxe 78 rxe0 rxe0"
	"Kite->rxe 79 kite0 rxe0"
	"rxe->Kite 80 rxe0 kite0"
)
tests=(
	"ib_write_bw -s 65536"
	"ib_send_bw -s 64"
	"ib_write_lat -s 64"
)

# perf N SUBNET DEV TEST...: run one side of perftest run N (on TCP port
# 18600 + N, so that the sides cannot pair up wrongly); the client (VM a)
# retries until VM b's server listens. perftest uses the rdma-core build's
# libibverbs, which has the Kite provider.
perf() {
	local n=$1 net=$2 dev=$3 gidx i
	shift 3
	gidx=$(gid_index "$dev" "$net")
	# Latency by iterations: with -D perftest reports only the average.
	case $1 in
	*_lat) set -- "$@" -n 2000 ;;
	*) set -- "$@" -D "$secs" ;;
	esac
	set -- "$@" -d "$dev" -x "$gidx" -p $((18600 + n))
	export LD_LIBRARY_PATH=$KITE_RDMA_CORE/lib
	if [ "$KITE_ROLE" = b ]; then
		timeout $((secs + 120)) "$@" >"/kite-out/perf-$n.log" 2>&1
	else
		for i in $(seq 1 40); do
			timeout $((secs + 60)) "$@" "$(peer_ip "$net")" >"/kite-out/perf-$n.log" 2>&1 &&
				return 0
			sleep 1
		done
		return 1
	fi
}

# The figures of a perftest report: "BW_MBPS MPPS" or "T_TYPICAL T_AVG T_99".
bw_of() { awk '$1 ~ /^[0-9]+$/ && NF >= 5 { bw = $4; mr = $5 } END { print bw, mr }' "$1"; }
lat_of() { awk '$1 ~ /^[0-9]+$/ && NF >= 8 { t = $5; a = $6; p = $8 } END { print t, a, p }' "$1"; }

declare -A fig
n=0
for p in "${pairs[@]}"; do
	set -- $p
	name=$1 net=$2 dev=$3
	[ "$KITE_ROLE" = b ] && dev=$4
	for t in "${tests[@]}"; do
		n=$((n + 1))
		if perf "$n" "$net" "$dev" $t; then
			case $t in
			*_lat*) fig[$name/$t]=$(lat_of "/kite-out/perf-$n.log") ;;
			*) fig[$name/$t]=$(bw_of "/kite-out/perf-$n.log") ;;
			esac
		else
			fig[$name/$t]=failed
		fi
	done
done

# NVMe over RDMA: VM b is the target on its Kite and its rxe addresses.
cfg=/sys/kernel/config/nvmet
if [ "$KITE_ROLE" = b ]; then
	nvme_target 10.77.0.2 || exit 1
	mkdir $cfg/ports/2 && echo rdma >$cfg/ports/2/addr_trtype &&
		echo ipv4 >$cfg/ports/2/addr_adrfam && echo 10.78.0.2 >$cfg/ports/2/addr_traddr &&
		echo 4420 >$cfg/ports/2/addr_trsvcid &&
		ln -s $cfg/subsystems/kite $cfg/ports/2/subsystems/kite || exit 1
	# Serve until VM a has run its NVMe benchmarks.
	wait_for $((secs * 8 + 600)) test -s /tmp/kite-peer-done
	peer_barrier 10.77.0.1
	rm $cfg/ports/2/subsystems/kite && rmdir $cfg/ports/2
	nvme_target_remove
	rmmod kite_ib kite_en 2>/dev/null
	exit 0
fi

# irqs PATTERN: interrupts so far on the vectors whose name matches PATTERN.
irqs() { awk -v p="$1" '$NF ~ p { for (i = 2; i < NF; i++) if ($i ~ /^[0-9]+$/) s += $i } END { print s + 0 }' /proc/interrupts; }
cqes() { rdma statistic show link kite0/1 | tr ' ' '\n' | awk 'prev == "cqes" { print; exit } { prev = $0 }'; }
have_fio=0
command -v fio >/dev/null && have_fio=1
# fio_run NAME RW BS: IOPS and MB/s of a read job on the namespace.
fio_run() {
	fio --name="$1" --filename="$dev" --rw="$2" --bs="$3" --direct=1 --ioengine=libaio \
		--iodepth=16 --runtime="$secs" --time_based --size=512m --output-format=json \
		>"/kite-out/fio-$1.json" 2>/dev/null &&
		python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print("%.0f %.1f %d" % (r["iops"], r["bw"] / 1024.0, r["total_ios"]))' "/kite-out/fio-$1.json"
}
# dd fallback without fio: sequential O_DIRECT reads only.
dd_run() {
	local bs=$3 count t0 t1
	count=$(( 256 * 1048576 / bs ))
	t0=$(date +%s%N)
	dd if="$dev" of=/dev/null bs="$bs" count="$count" iflag=direct status=none || return 1
	t1=$(date +%s%N)
	awk -v n="$count" -v b="$bs" -v ns=$((t1 - t0)) 'BEGIN { s = ns / 1e9; printf "%.0f %.1f %d\n", n / s, n * b / s / 1048576, n }'
}
declare -A nv
for tr in Kite:10.77.0.2 rxe:10.78.0.2; do
	name=${tr%%:*} addr=${tr#*:}
	if ! nvme_connect "$addr" || ! wait_for 10 bash -c 'ls /dev/nvme*n1'; then
		nv[$name/rand]=failed nv[$name/seq]=failed
		continue
	fi
	dev=$(ls /dev/nvme*n1 | head -n 1)
	run=fio_run
	[ "$have_fio" = 1 ] || run=dd_run
	k0=$(irqs '^kite_ib-eq') v0=$(irqs '^virtio[0-9]+-(input|output)') c0=$(cqes)
	nv[$name/rand]=$($run "$name-randread-4k" randread 4096 || echo failed)
	k1=$(irqs '^kite_ib-eq') v1=$(irqs '^virtio[0-9]+-(input|output)') c1=$(cqes)
	nv[$name/seq]=$($run "$name-read-128k" read 131072 || echo failed)
	set -- ${nv[$name/rand]}
	ios=${3:-0}
	if [ "$name" = Kite ]; then
		nv[irq]="$((k1 - k0)) Kite interrupts, $((c1 - c0)) CQEs, $ios I/Os"
	else
		nv[virq]="$((v1 - v0)) virtio-net interrupts, $ios I/Os"
	fi
	nvme disconnect -n kite >/dev/null 2>&1
	sleep 1
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'; }
echo "== Kite and rdma_rxe side by side (QEMU TCG, 1 vCPU per VM, both VMs on one"
echo "   host; figures, not assertions; each run ${secs} s)"
echo
echo "-- perftest (-D $secs): bandwidth and message rate"
printf '  %-13s %22s %22s\n' pairing "write_bw 64K MB/s" "send_bw 64B Mmsg/s"
for p in "${pairs[@]}"; do
	set -- $p
	w=(${fig[$1/ib_write_bw -s 65536]}) s=(${fig[$1/ib_send_bw -s 64]})
	printf '  %-13s %22s %22s\n' "$1" "${w[0]:-failed}" "${s[1]:-failed}"
done
echo
echo "-- perftest (-n 2000): ib_write_lat, 64 bytes, usec"
printf '  %-13s %10s %10s %10s\n' pairing typical average 99%
for p in "${pairs[@]}"; do
	set -- $p
	l=(${fig[$1/ib_write_lat -s 64]})
	printf '  %-13s %10s %10s %10s\n' "$1" "${l[0]:-failed}" "${l[1]:--}" "${l[2]:--}"
done
echo
if [ "$have_fio" = 1 ]; then
	echo "-- NVMe over RDMA (fio, libaio, iodepth 16, O_DIRECT, ${secs} s, null_blk target)"
else
	echo "-- NVMe over RDMA (no fio: dd, 256 MiB sequential O_DIRECT reads)"
fi
printf '  %-6s %20s %20s %24s\n' over "4K randread IOPS" "4K randread MB/s" "128K seq read MB/s"
for t in Kite rxe; do
	r=(${nv[$t/rand]}) s=(${nv[$t/seq]})
	printf '  %-6s %20s %20s %24s\n' "$t" "${r[0]:-failed}" "${r[1]:--}" "${s[1]:-failed}"
done
echo
echo "-- interrupts at load (the 4K random read run)"
set -- ${nv[irq]:-0 x x 0 x 0}
echo "  Kite host NIC: ${nv[irq]:-n/a}: $(ratio "$1" "$4") interrupts per CQE," \
	"$(ratio "$1" "$6") per I/O"
set -- ${nv[virq]:-0 x x 0}
echo "  rxe (virtio-net) host NIC: ${nv[virq]:-n/a}: $(ratio "$1" "$4") interrupts per I/O"
echo
peer_barrier 10.77.0.2
rmmod kite_ib kite_en 2>/dev/null
exit 0
