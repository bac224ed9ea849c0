#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Data-path benchmark over a pair of VMs (not a test: it prints figures and
# asserts nothing about them). Each VM has two Kite NICs (kite_ib) and two
# virtio-net NICs (rdma_rxe, Linux soft-RoCE), each pairing on a UDP wire
# of its own between the two QEMUs (attempt() below), so that in one run,
# on the same VMs, it measures:
#   - perftest bandwidth (ib_write_bw and ib_read_bw, 64 KiB), message rate
#     (ib_send_bw, 64 bytes) and latency (ib_write_lat, 64 bytes) for
#     Kite<->Kite, rxe<->rxe, Kite->rxe and rxe->Kite;
#   - a size sweep (64 B to 1 MiB) of ib_write_bw and ib_write_lat for
#     Kite<->Kite, rxe<->rxe and Kite->rxe, plotted (gnuplot) beside the
#     text table;
#   - NVMe over RDMA (nvmet-rdma target on a memory-backed null_blk in VM b,
#     nvme-rdma host in VM a): 4 KiB random and 128 KiB sequential reads and
#     writes with fio at queue depth 16, over Kite and over rxe (writes:
#     the target fetches the data with RDMA READ), 4 KiB random reads at
#     queue depths 1, 64 and 128 and through a poll queue (io_uring,
#     hipri) too (each transport's peak beside the other's), and the
#     interrupts per completion on the host's Kite NIC (and per I/O on its
#     virtio-net NIC) at each random read load.
# rdma_rxe can crash its kernel under load (a GPF in rxe_skb_tx_dtor after
# "rxe_destroy_qp: cleanup failed" on Debian's 6.12): when a VM panics, the
# pair is stopped, the run it was in is reported lost, and both VMs start
# again from the run after it (at most KITE_BENCH_RESTARTS times, default
# 4), so that every other figure is still measured. The logs of a crashed
# attempt are kept as bench-pair-{a,b}.crashN.
# Figures and logs: $KITE_CACHE/logs/bench-pair*; the report (report.txt)
# and the plot (bench-pair.png) also go to out/bench-pair/.
#
# usage: bench-pair.sh [SECONDS]     SECONDS: length of each main run
#                                    (default 10)
# Environment: KITE_BENCH_SWEEP_SECS (each sweep bandwidth run, default 3),
# KITE_BENCH_MTU (both NICs' netdev MTU, default 9000: RoCE MTU 4096),
# KITE_BENCH_ONLY (a regular expression: only the runs whose key, e.g.
# "Kite<->Kite|write_bw|65536" or "nvme-Kite|randread|4096", matches),
# KITE_BENCH_CRASH=INDEX:ROLE (VM ROLE, a or b, crashes at run INDEX: tries
# the recovery), KITE_BENCH_TIMEOUT (seconds per attempt, default 3600),
# KITE_BENCH_GUEST_PROF (a regular expression: the runs whose key matches
# are profiled inside both VMs, perf and kite_ib's calls timed by ftrace,
# into $KITE_CACHE/logs/bench-pair-{a,b}/gprof-INDEX.txt; the NVMe target's
# whole NVMe part into gprof-nvme-target.txt).
set -euo pipefail
. "$(dirname "$0")/vm.sh"

secs=${1:-10}
extra_pkgs=(gnuplot-nox)
# perf, on the host for KITE_QEMU_PERF and in the guests (which run the
# host's root file system) for KITE_BENCH_GUEST_PROF.
[ "${KITE_QEMU_PERF:-0}" = 1 ] || [ -n "${KITE_BENCH_GUEST_PROF:-}" ] &&
	extra_pkgs+=(linux-perf)
"$KITE_ROOT/scripts/setup-host.sh" "${extra_pkgs[@]}" >&2
"$KITE_ROOT/scripts/build-rdma-core.sh" >/dev/null
log "building QEMU, the modules, the test programs and the initramfs"
vm_prepare

logs=$KITE_CACHE/logs
figs=$logs/bench-pair-figures
out=$KITE_ROOT/out/bench-pair
rm -rf "$figs" "$logs"/bench-pair-[ab].crash*
mkdir -p "$figs" "$out"

# attempt FROM: both VMs, from run FROM; returns VM a's status.
#
# Each pairing has a wire of its own, UDP between the two QEMUs (a shared
# multicast segment handed every frame to all four NICs' sockets, the
# sender's own included: four main loop wake-ups per frame): Kite<->Kite
# a's kite0 to b's kite0, rxe<->rxe a's first virtio-net to b's, Kite->rxe
# a's kite1 to b's second virtio-net, rxe->Kite a's second virtio-net to
# b's kite1.
attempt() {
	local r p rc=0
	local -a wire=()
	p=$((20000 + RANDOM % 20000))
	for r in a b; do
		if [ "$r" = a ]; then
			wire=(--kite-net "dgram:$p:$((p + 1))" --virtio-net "dgram:$((p + 2)):$((p + 3))"
				--kite-net "dgram:$((p + 4)):$((p + 5))"
				--virtio-net "dgram:$((p + 6)):$((p + 7))")
		else
			wire=(--kite-net "dgram:$((p + 1)):$p" --virtio-net "dgram:$((p + 3)):$((p + 2))"
				--virtio-net "dgram:$((p + 5)):$((p + 4))"
				--kite-net "dgram:$((p + 7)):$((p + 6))")
		fi
		vm_start "bench-$r" "$logs/bench-pair-$r" "$KITE_ROOT/scripts/guest/bench-pair.sh" \
			--no-capture "${wire[@]}" \
			--env KITE_ROLE="$r" --env KITE_BENCH_SECS="$secs" --env KITE_BENCH_FROM="$1" \
			--env KITE_BENCH_SWEEP_SECS="${KITE_BENCH_SWEEP_SECS:-3}" \
			--env KITE_BENCH_ONLY="${KITE_BENCH_ONLY:-.}" \
			--env KITE_BENCH_MTU="${KITE_BENCH_MTU:-9000}" \
			--env KITE_BENCH_CRASH="${KITE_BENCH_CRASH:-}" \
			--env KITE_BENCH_GUEST_PROF="${KITE_BENCH_GUEST_PROF:-}" -- -m 2G
	done
	KITE_VM_STOP_ON_PANIC=bench-b vm_wait bench-a "${KITE_BENCH_TIMEOUT:-3600}" || rc=$?
	return "$rc"
}

# current R: "INDEX KEY" of the run VM R was in ("-1 set-up" before the
# first).
current() { cat "$logs/bench-pair-$1/current" 2>/dev/null || echo "-1 set-up"; }

from=0 restarts=0 rca=0 rcb=0
if [ -n "${KITE_BENCH_ONLY:-}" ]; then
	log "booting; only the runs matching '$KITE_BENCH_ONLY'"
else
	# The main runs, the size sweep and the 16 NVMe runs, and the set-ups.
	log "booting; the benchmark takes about $((secs * 4 + 28)) minutes under TCG"
fi
while :; do
	rca=0
	attempt "$from" || rca=$?
	crashed=
	for r in a b; do
		grep -qE "$KITE_PANIC_RE" "$logs/bench-pair-$r/console.log" 2>/dev/null && crashed=$r
	done
	if [ -z "$crashed" ]; then
		rcb=0
		vm_wait bench-b 120 || rcb=$?
		cp -p "$logs"/bench-pair-a/fig/* "$figs/" 2>/dev/null || true
		break
	fi
	# A kernel crash: stop the other VM, keep what was measured before
	# the run it happened in, and go on after that run.
	pid=${KITE_VM_PID[bench-b]}
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	# The run lost is the crashed VM's, or the other VM's if that one is
	# earlier and has no figure yet: a VM through its list says "N end"
	# while the other may still be in a run (the NVMe target while the
	# host runs fio), and a VM a run behind may be in one already measured.
	other=a
	[ "$crashed" = a ] && other=b
	read -r lost key <<<"$(current "$crashed")"
	read -r lo ko <<<"$(current "$other")"
	if [ "$lo" -ge 0 ] && [ "$lo" -lt "$lost" ] &&
		[ ! -e "$logs/bench-pair-a/fig/$lo" ]; then
		lost=$lo key=$ko
	fi
	warn "VM $crashed crashed in run $lost ($key); see $logs/bench-pair-$crashed.crash$restarts"
	# The run's own figure too, if VM a wrote it before the crash (the
	# crash came in the run's tail, e.g. the NVMe target's teardown).
	for f in "$logs"/bench-pair-a/fig/*; do
		n=$(basename "$f")
		[ -e "$f" ] && [ "${n%%.*}" -le "$lost" ] && cp -p "$f" "$figs/"
	done
	if [ "$lost" -ge 0 ]; then
		[ -e "$figs/$lost" ] ||
			printf '%s\tlost: VM %s crashed\n' "$key" "$crashed" >"$figs/$lost"
		from=$((lost + 1))
	fi
	for r in a b; do mv "$logs/bench-pair-$r" "$logs/bench-pair-$r.crash$restarts"; done
	restarts=$((restarts + 1))
	if [ "$restarts" -gt "${KITE_BENCH_RESTARTS:-4}" ]; then
		warn "$restarts crashes: giving up; the runs from $from on are not measured"
		rca=0
		break
	fi
	log "starting both VMs again from run $from"
done

python3 "$KITE_ROOT/scripts/bench-report.py" --secs "$secs" --restarts "$restarts" \
	--mtu "${KITE_BENCH_MTU:-9000}" \
	"$figs" "$out" | tee "$out/report.txt"
log "report: $out/report.txt; plot: $out/bench-pair.png"
if [ -n "${KITE_BENCH_GUEST_PROF:-}" ]; then
	for f in "$logs"/bench-pair-[ab]/gprof-*.txt; do
		[ -e "$f" ] && log "guest profile: $f"
	done
fi
[ "$rca" = 0 ] || die "VM a failed (status $rca); see $logs/bench-pair-a"
[ "$rcb" = 0 ] || warn "VM b ended with status $rcb; see $logs/bench-pair-b"
