#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Data-path benchmark over a pair of VMs (not a test: it prints figures and
# asserts nothing about them). Each VM has a Kite NIC (kite_ib) and a
# virtio-net NIC (rdma_rxe, Linux soft-RoCE); the four NICs share one
# Ethernet segment (a multicast group on the host's loopback), so that in
# one run, on the same VMs, it measures:
#   - perftest bandwidth (ib_write_bw, 64 KiB), message rate (ib_send_bw,
#     64 bytes) and latency (ib_write_lat, 64 bytes) for Kite<->Kite,
#     rxe<->rxe, Kite->rxe and rxe->Kite;
#   - NVMe over RDMA (nvmet-rdma target on a memory-backed null_blk in VM b,
#     nvme-rdma host in VM a): 4 KiB random read IOPS and 128 KiB sequential
#     read throughput with fio, over Kite and over rxe, and the interrupts
#     per completion on the host's Kite NIC (and per I/O on its virtio-net
#     NIC) at that load.
# Both VMs' logs are kept in $KITE_CACHE/logs/bench-pair-{a,b}; the report
# is VM a's guest.log.
#
# usage: bench-pair.sh [SECONDS]     SECONDS: length of each run (default 10)
set -euo pipefail
. "$(dirname "$0")/vm.sh"

secs=${1:-10}
"$KITE_ROOT/scripts/setup-host.sh" >&2
"$KITE_ROOT/scripts/build-rdma-core.sh" >/dev/null
log "building QEMU, the modules, the test programs and the initramfs"
vm_prepare
port=$((20000 + RANDOM % 20000))
group=239.255.$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
for r in a b; do
	peer=b
	[ "$r" = b ] && peer=a
	vm_start "bench-$r" "$KITE_CACHE/logs/bench-pair-$r" "$KITE_ROOT/scripts/guest/bench-pair.sh" \
		--no-capture --kite-net "mcast:$group:$port" --virtio-net "mcast:$group:$port" \
		--env KITE_ROLE="$r" --env KITE_BENCH_SECS="$secs" -- -m 2G
done
log "booted; the benchmark takes about $((secs * 14 / 60 + 5)) minutes under TCG"
rca=0 rcb=0
vm_wait bench-a "${KITE_BENCH_TIMEOUT:-2400}" || rca=$?
vm_wait bench-b 120 || rcb=$?
cat "$KITE_CACHE/logs/bench-pair-a/guest.log" 2>/dev/null || true
[ "$rca" = 0 ] || die "VM a failed (status $rca); see $KITE_CACHE/logs/bench-pair-a"
[ "$rcb" = 0 ] || warn "VM b ended with status $rcb; see $KITE_CACHE/logs/bench-pair-b"
