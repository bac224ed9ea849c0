#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Run VM test groups and record their checks as TAP.
#
# usage: vmtest.sh [GROUP...]     (default: all groups)
# Groups:
#   bind   one VM with a Kite NIC: probe, auxiliary device, kite_ib bind,
#          load/unload in any order, PCI unbind/rebind/remove/rescan
#   wire   two VMs on one dgram wire: a Kite + virtio-net VM and a
#          virtio-net VM; traffic crosses, the Kite drivers bind
#   eth    two Kite VMs, then a Kite VM and a virtio-net VM: ping and a
#          4 MB TCP transfer compared by checksum, both ways; then RDMA
#          between the two: ibv_ud_pingpong over Kite<->Kite and over
#          Kite<->rdma_rxe (soft-RoCE on the virtio-net VM), data checked,
#          and rdma_cm (udaddy); the wire's capture is checked (ICRC, tshark)
#   link   two Kite VMs: the wire is cut (set_link off) under an RC
#          write stream and under NVMe over RDMA I/O: retry-exceeded
#          completions, QPs in ERROR, new connections after set_link on,
#          data intact
#   ethops one Kite VM: ethtool, devlink, bad input, link events, PCI
#          reset, devlink reload, unbind/rebind, unload during traffic
#   nvme   one Kite VM: NVMe over RDMA (nvmet-rdma target on null_blk,
#          nvme-rdma host) through the device's loopback, data compared
#   rdma   one Kite VM: kite_ib's command channel and event queues, the
#          RDMA device in the tools, user CQs/QPs through the uverbs ABI, a
#          device that stops answering commands
#   verbs  one Kite VM: kernel verbs with bad input through the RDMA core
#          (kite_verbs_test), device command errors and a device that
#          hangs while objects exist, with errno and leak checks
#   devfuzz one Kite VM: a device-side fuzzer: under kernel RDMA traffic the
#          model corrupts CQEs, EQEs, command completions and register
#          reads (fault-corrupt), each class alone, then seeded random
#          mixes (the classes contained without a reset, then all): no
#          splat, the drivers' reaction logged, the device works again; a
#          table of figures
# When sourced by check.sh the results join its TAP file; run alone it
# writes its own and ends with the "N passed, N failed" line.
. "$(dirname "$0")/vm.sh"
. "$(dirname "$0")/tap.sh"

KITE_VM_TIMEOUT=${KITE_VM_TIMEOUT:-300}
VMLOGS=${VMLOGS:-$KITE_CACHE/logs/vm}

# vm_outcome NAME STATUS GROUP: record that a VM ran to completion.
vm_outcome() {
	local name=$1 status=$2 group=$3 dir=${KITE_VM_DIR[$1]}
	case $status in
	0 | 1) tap_ok "vm $group: $name booted, ran its checks and powered off" ;;
	124) tap_not_ok "vm $group: $name timed out after ${KITE_VM_TIMEOUT}s" ;;
	125) tap_not_ok "vm $group: $name kernel panic" ;;
	*) tap_not_ok "vm $group: $name exited with status $status" ;;
	esac
	if [ "$status" != 0 ]; then
		echo "# --- $name: $dir/console.log (tail)"
		tail -n 30 "$dir/console.log" 2>/dev/null | sed 's/^/# /'
		echo "# --- $name: $dir/guest.log (tail)"
		tail -n 30 "$dir/guest.log" 2>/dev/null | sed 's/^/# /'
	fi
	tap_import "$dir/results.tap" "vm $group: "
}

group_bind() {
	local st=0
	vm_start kite "$VMLOGS/bind" "$KITE_ROOT/scripts/guest/test-bind.sh" --kite
	vm_wait kite "$KITE_VM_TIMEOUT" || st=$?
	vm_outcome kite "$st" bind
}

group_wire() {
	local a=0 b=0 p1 p2
	p1=$((20000 + RANDOM % 20000))
	p2=$((p1 + 1))
	vm_start kite "$VMLOGS/wire-kite" "$KITE_ROOT/scripts/guest/test-wire.sh" \
		--kite --virtio-net "dgram:$p1:$p2" \
		--env KITE_SELF_IP=10.77.0.1 --env KITE_PEER_IP=10.77.0.2
	vm_start peer "$VMLOGS/wire-peer" "$KITE_ROOT/scripts/guest/test-wire.sh" \
		--virtio-net "dgram:$p2:$p1" \
		--env KITE_SELF_IP=10.77.0.2 --env KITE_PEER_IP=10.77.0.1
	vm_wait kite "$KITE_VM_TIMEOUT" || a=$?
	vm_wait peer "$KITE_VM_TIMEOUT" || b=$?
	vm_outcome kite "$a" wire
	vm_outcome peer "$b" wire
}

# two_vms GROUP NIC_A NIC_B [SCRIPT]: VM a sends to VM b over one wire; both
# run SCRIPT (default test-eth.sh) from scripts/guest.
two_vms() {
	local group=$1 a=0 b=0 p1 p2 script=$KITE_ROOT/scripts/guest/${4:-test-eth.sh}
	p1=$((20000 + RANDOM % 20000))
	p2=$((p1 + 1))
	vm_start "$group-a" "$VMLOGS/$group-a" "$script" \
		"--$2-net" "dgram:$p1:$p2" --env KITE_NIC="$2" --env KITE_ROLE=send \
		--env KITE_PEER_NIC="$3" \
		--env KITE_SELF_IP=10.77.0.1 --env KITE_PEER_IP=10.77.0.2
	vm_start "$group-b" "$VMLOGS/$group-b" "$script" \
		"--$3-net" "dgram:$p2:$p1" --env KITE_NIC="$3" --env KITE_ROLE=receive \
		--env KITE_PEER_NIC="$2" \
		--env KITE_SELF_IP=10.77.0.2 --env KITE_PEER_IP=10.77.0.1
	vm_wait "$group-a" "$KITE_VM_TIMEOUT" || a=$?
	vm_wait "$group-b" "$KITE_VM_TIMEOUT" || b=$?
	vm_outcome "$group-a" "$a" "$group"
	vm_outcome "$group-b" "$b" "$group"
}

# wire_check GROUP VM: the RoCEv2 frames the Kite VM's wire carried (the
# capture QEMU's filter-dump kept in its log directory) have good ICRCs and
# decode as RoCEv2 in tshark.
wire_check() {
	local pcap=$VMLOGS/$2/wire1.pcap out rc=0 bad
	out=$(python3 "$KITE_ROOT/scripts/check-roce-pcap.py" "$pcap" 2>&1) || rc=1
	echo "$out" | sed 's/^/# /'
	tap_result "$rc" "vm $1: wire capture: every RoCEv2 frame's ICRC checks (both senders)"
	if ! command -v tshark >/dev/null; then
		tap_skip "vm $1: wire capture decodes in tshark" "tshark not installed"
		return
	fi
	# Wireshark's heuristic dissectors for InfiniBand payloads (RPC, NVMe,
	# SMB Direct, SMC-R, iSER, LNet, SDP, FCoIB, Ethernet over IB) take RC
	# payloads whose connection they did not see (small SENDs, RDMA WRITE
	# middles, perftest's 2-byte READ responses) for malformed messages of
	# theirs; the transport headers are what is checked here.
	local h heur=()
	for h in eth_over_ib fc_infiniband iser_infiniband lnet_ib rpcrdma_infiniband \
		sdp_infiniband smb_direct_infiniband smcr_infiniband; do
		heur+=(--disable-heuristic "$h")
	done
	bad=$(tshark "${heur[@]}" --disable-protocol rpcordma --disable-protocol nvme-rdma \
		--disable-protocol crtp -r "$pcap" \
		-Y 'udp.dstport == 4791 && (!infiniband.bth || _ws.malformed)' 2>/dev/null | wc -l)
	out=$(tshark -r "$pcap" -Y 'infiniband.bth' 2>/dev/null | wc -l)
	test "$bad" = 0 && test "$out" -gt 0
	tap_result "$?" "vm $1: wire capture: tshark decodes $out RoCEv2 frames (BTH), $bad malformed"
}

group_eth() {
	# Each pair runs the perftest suite: allow it more time.
	local KITE_VM_TIMEOUT=$((KITE_VM_TIMEOUT * 2))
	two_vms eth-kite kite kite
	wire_check eth-kite eth-kite-a
	two_vms eth-mixed kite virtio
	wire_check eth-mixed eth-mixed-a
	two_vms eth-mixed-rev virtio kite
	wire_check eth-mixed-rev eth-mixed-rev-b
}

group_link() {
	two_vms link kite kite test-link.sh
}

group_ethops() {
	local st=0 p
	p=$((20000 + RANDOM % 20000))
	vm_start ethops "$VMLOGS/ethops" "$KITE_ROOT/scripts/guest/test-ethops.sh" \
		--kite-net "dgram:$p:$((p + 1))"
	vm_wait ethops "$KITE_VM_TIMEOUT" || st=$?
	vm_outcome ethops "$st" ethops
}

group_nvme() {
	local st=0
	vm_start nvme "$VMLOGS/nvme" "$KITE_ROOT/scripts/guest/test-nvme.sh" --kite
	vm_wait nvme "$KITE_VM_TIMEOUT" || st=$?
	vm_outcome nvme "$st" nvme
}

group_rdma() {
	local st=0
	vm_start rdma "$VMLOGS/rdma" "$KITE_ROOT/scripts/guest/test-rdma.sh" --kite
	vm_wait rdma "$KITE_VM_TIMEOUT" || st=$?
	vm_outcome rdma "$st" rdma
}

group_verbs() {
	local st=0
	vm_start verbs "$VMLOGS/verbs" "$KITE_ROOT/scripts/guest/test-verbs.sh" --kite
	vm_wait verbs "$KITE_VM_TIMEOUT" || st=$?
	vm_outcome verbs "$st" verbs
}

group_devfuzz() {
	# Fourteen classes, each followed by recovery and traffic, and two mixes.
	local KITE_VM_TIMEOUT=$((KITE_VM_TIMEOUT * 4))
	local st=0 p
	p=$((20000 + RANDOM % 20000))
	vm_start devfuzz "$VMLOGS/devfuzz" "$KITE_ROOT/scripts/guest/test-devfuzz.sh" \
		--kite-net "dgram:$p:$((p + 1))" --no-capture
	vm_wait devfuzz "$KITE_VM_TIMEOUT" || st=$?
	vm_outcome devfuzz "$st" devfuzz
	sed 's/^/# /' "$VMLOGS/devfuzz/devfuzz-figures.txt" 2>/dev/null || true
}

KITE_VM_GROUPS=(bind wire eth link ethops rdma verbs nvme devfuzz)

vmtest_run() {
	local g
	[ $# -gt 0 ] || set -- "${KITE_VM_GROUPS[@]}"
	for g in "$@"; do
		declare -F "group_$g" >/dev/null || die "unknown VM test group: $g"
		"group_$g"
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	tap_init "$KITE_CACHE/results/vmtest.tap"
	vm_prepare
	vmtest_run "$@"
	tap_finish
fi
