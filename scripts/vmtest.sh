#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Run VM test groups and record their checks as TAP.
#
# usage: vmtest.sh [--lane lts|debug] [GROUP...]     (default: all groups)
#   --lane debug runs the groups on the debug guest kernel (the newest
#   kernel with KASAN, lockdep, kmemleak, ...; see scripts/vm.sh); their
#   checks are named "vm-debug GROUP: ..." instead of "vm GROUP: ...".
# After every VM its kernel log (and, on the debug lane, its kmemleak
# report) must hold no error report other than the known upstream issues
# listed in .known-kernel-issues (scripts/check-splats.py).
# Groups:
#   bind   one VM with a Kite NIC: probe, auxiliary device, kite_ib bind,
#          load/unload in any order, PCI unbind/rebind/remove/rescan
#   wire   two VMs on one dgram wire: a Kite + virtio-net VM and a
#          virtio-net VM; traffic crosses, the Kite drivers bind
#   eth    two Kite VMs, then a Kite VM and a virtio-net VM: ping and a
#          4 MB TCP transfer compared by checksum, both ways; then RDMA
#          between the two: ibv_ud_pingpong over Kite<->Kite and over
#          Kite<->rdma_rxe (soft-RoCE on the virtio-net VM), data checked,
#          and rdma_cm (udaddy); an SRQ (ibv_srq_pingpong, perftest
#          --use-srq); RC perftests with the Kite devices
#          losing 1%, 5% and 10% of their RoCEv2 frames (and duplicating
#          and reordering some), Kite<->Kite and Kite<->rdma_rxe; the
#          wire's capture is checked (ICRC, tshark)
#   link   two Kite VMs: the wire is cut (set_link off) under an RC
#          write stream and under NVMe over RDMA I/O: retry-exceeded
#          completions, QPs in ERROR, new connections after set_link on,
#          data intact
#   nfs    NFSv4.2 over RDMA between two VMs (test-nfs.sh: nfsd exports
#          a tmpfs, the other VM mounts it with proto=rdma, writes 64 MiB
#          and reads it back, SHA-256 compared on both sides, one RDMA
#          connection in mountstats): two Kite VMs, then two rdma_rxe
#          VMs; the figures side by side; the Kite pair again at 1%,
#          5% and 10% loss (KITE_NFS_LOSS)
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
#   pyverbs one Kite VM: rdma-core's own conformance suite (the pyverbs
#          tests of the rdma-core build, run_tests.py's tests) against
#          kite0 in loopback: one TAP line per test, ok, not ok, or ok #
#          SKIP with the suite's reason; a failing test listed in
#          tools/testing/kite/pyverbs-todo.txt is not ok # TODO with the
#          issue item that will fix it. KITE_PYVERBS_TESTS: a subset
#          (unittest names); KITE_PYVERBS_BUDGET: seconds for the suite;
#          KITE_PYVERBS_SEED: the seed of the suite's random choices
#          (printed by every run)
#   loss   one Kite VM: the device goes away (PCI function reset, a fatal
#          error raised by the model, announced and silent, devlink health
#          recover, devlink reload, kite_ib unbind, rmmod kite_ib, PCI
#          remove + rescan) with an idle ibv_rc_pingpong server and an
#          ib_write_bw stream holding contexts, and an NVMe over RDMA host
#          writing (KITE_LOSS_NVME=0: not): each completes within 10 s,
#          the applications fail with errors, a fresh pingpong works and
#          NVMe reconnects, rdma res is back; devlink health counts, dumps
#          and recovers; KITE_LOSS_CYCLES cycles of the eight (default 2)
#          within KITE_LOSS_SECONDS, the worst time and memory printed
#   failinject  one Kite VM (debug lane only; skipped elsewhere): every
#          allocation on kite_en's probe and open, kite_ib's probe and
#          each user verb's path failed in turn (failslab,
#          fail_page_alloc, fail-nth): clean unwinding, then success
#   uvfuzz one Kite VM: kite_uverbs_fuzz, a short seeded run of random
#          uverbs commands, udata, mmap()s and doorbells (three seeds, a
#          two-thread run with racing destroys, children that exit with
#          objects alive); rdma res counts back to the start, no splat,
#          ibv_rc_pingpong works afterwards. KITE_FUZZ_SEEDS, _CALLS and
#          _SECONDS choose the runs (make fuzz: the long run)
#   devfuzz one Kite VM: a device-side fuzzer: under kernel RDMA traffic the
#          model corrupts CQEs, EQEs, command completions and register
#          reads (fault-corrupt), each class alone, then seeded random
#          mixes (the classes contained without a reset, then all): no
#          splat, the drivers' reaction logged, the device works again; a
#          table of figures. KITE_DEVFUZZ_PARTS ("classes", "contained",
#          "all", "mixes" for both mixes; default "classes mixes")
#          chooses what runs
#   demo   make demo (scripts/demo.sh) on a pseudo-terminal: the guest's
#          shell takes a command, Ctrl-C reaches the guest, exit ends the
#          demo and leaves the terminal sane (scripts/test-demo-pty.py)
#   dkms   (lts lane, root) the kite-dkms package (scripts/build-deb.sh)
#          installed on the host, DKMS building the drivers for the guest's
#          kernel; one Kite VM loads them through the host's module index
#          and shows kite0; the package removed leaves nothing
# When sourced by check.sh the results join its TAP file; run alone it
# writes its own and ends with the "N passed, N failed" line.
. "$(dirname "$0")/vm.sh"
. "$(dirname "$0")/tap.sh"

KITE_VM_TIMEOUT=${KITE_VM_TIMEOUT:-300}

# vmtest_lane LANE: run the next groups on LANE (lts or debug).
vmtest_lane() {
	KITE_LANE=$1
	case $1 in
	lts) KITE_VM_TAG=vm KITE_VM_SCALE=1 ;;
	# KASAN, lockdep and kmemleak under TCG: everything is slower.
	debug) KITE_VM_TAG=vm-debug KITE_VM_SCALE=3 ;;
	*) die "unknown lane '$1' (lts or debug)" ;;
	esac
	VMLOGS=${KITE_VMLOGS_BASE:-$KITE_CACHE/logs}/$KITE_VM_TAG
}
vmtest_lane "${KITE_LANE:-lts}"

# vm_outcome NAME STATUS GROUP: record that a VM ran to completion, then
# its checks, then that its kernel log and kmemleak report are clean.
vm_outcome() {
	local name=$1 status=$2 group=$3 dir=${KITE_VM_DIR[$1]} out rc
	local tag="$KITE_VM_TAG $group"
	case $status in
	0 | 1) tap_ok "$tag: $name booted, ran its checks and powered off" ;;
	124) tap_not_ok "$tag: $name timed out after $((KITE_VM_TIMEOUT * KITE_VM_SCALE))s" ;;
	125) tap_not_ok "$tag: $name kernel panic" ;;
	*) tap_not_ok "$tag: $name exited with status $status" ;;
	esac
	if [ "$status" != 0 ]; then
		echo "# --- $name: $dir/console.log (tail)"
		tail -n 30 "$dir/console.log" 2>/dev/null | sed 's/^/# /'
		echo "# --- $name: $dir/guest.log (tail)"
		tail -n 30 "$dir/guest.log" 2>/dev/null | sed 's/^/# /'
	fi
	tap_import "$dir/results.tap" "$tag: "
	# The whole kernel log: the console's when the guest could not save
	# its dmesg (a panic, a hang).
	local klog=$dir/dmesg.log
	[ -s "$klog" ] || klog=$dir/console.log
	rc=0
	out=$(python3 "$KITE_ROOT/scripts/check-splats.py" "$klog" 2>&1) || rc=1
	# At most 200 lines, without head (see two_vms()).
	[ -z "$out" ] || sed -n '1,200s/^/# /p' <<<"$out"
	tap_result "$rc" "$tag: $name: kernel log holds no error report (KASAN, lockdep, WARN, ...)"
	if [ "$KITE_LANE" = debug ]; then
		rc=0
		if [ -f "$dir/kmemleak.log" ]; then
			out=$(python3 "$KITE_ROOT/scripts/check-splats.py" "$dir/kmemleak.log" 2>&1) || rc=1
			[ -z "$out" ] || sed -n '1,200s/^/# /p' <<<"$out"
		else
			rc=1
			echo "# $name: no kmemleak report ($dir/kmemleak.log)"
		fi
		tap_result "$rc" "$tag: $name: kmemleak finds no unreferenced object"
	fi
}

group_bind() {
	local st=0
	vm_start kite "$VMLOGS/bind" "$KITE_ROOT/scripts/guest/test-bind.sh" --kite
	vm_wait kite "$(vm_timeout)" || st=$?
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
	vm_wait kite "$(vm_timeout)" || a=$?
	vm_wait peer "$(vm_timeout)" || b=$?
	vm_outcome kite "$a" wire
	vm_outcome peer "$b" wire
}

# vm_timeout: how long a VM of this lane may run.
vm_timeout() { echo $((KITE_VM_TIMEOUT * KITE_VM_SCALE)); }

# panic_outside_kite NAME STATUS NIC: VM NAME panicked (STATUS 125) in a
# kernel that ran none of Kite's code: its NIC is not Kite's (test-eth.sh
# loads no Kite module there) and no oops on its console names one.
panic_outside_kite() {
	[ "$2" = 125 ] && [ "$3" != kite ] &&
		! grep 'Modules linked in:' "${KITE_VM_DIR[$1]}/console.log" | grep -q kite
}

# two_vms GROUP NIC_A NIC_B [SCRIPT]: VM a sends to VM b over one wire; both
# run SCRIPT (default test-eth.sh) from scripts/guest.
# The rdma_rxe VMs' Debian 6.12 kernel (no Kite module in it) has panicked
# in 4 of about 17 eth runs, during RDMA READs with Kite (rxe as requester
# and as responder), and once between two rdma_rxe VMs (NFS over RDMA, no
# Kite anywhere): a zeroed list head on the stack in net_rx_action, double
# faults and a non-canonical freelist pointer in the slab allocator's fast
# path; every oops shows an EFLAGS no CPU can push (bits 22-31 set, some
# shared with RAX), which points below the guest, at TCG.
# Such a panic of a VM that runs no Kite code is reported as a TODO with
# where its logs are kept, and the pair runs once more; its second run
# counts. A Kite VM's panic is never retried.
two_vms() {
	local group=$1 a=0 b=0 p1 p2 script=$KITE_ROOT/scripts/guest/${4:-test-eth.sh}
	local try vm st KITE_VM_STOP_ON_PANIC e env=()
	# KITE_PAIR_ENV: VAR=VALUE words for both VMs' environment.
	for e in ${KITE_PAIR_ENV:-}; do env+=(--env "$e"); done
	for try in 1 2; do
		a=0 b=0
		p1=$((20000 + RANDOM % 20000))
		p2=$((p1 + 1))
		vm_start "$group-a" "$VMLOGS/$group-a" "$script" \
			"--$2-net" "dgram:$p1:$p2" --env KITE_NIC="$2" --env KITE_ROLE=send \
			--env KITE_PEER_NIC="$3" \
			--env KITE_SELF_IP=10.77.0.1 --env KITE_PEER_IP=10.77.0.2 "${env[@]}"
		vm_start "$group-b" "$VMLOGS/$group-b" "$script" \
			"--$3-net" "dgram:$p2:$p1" --env KITE_NIC="$3" --env KITE_ROLE=receive \
			--env KITE_PEER_NIC="$2" \
			--env KITE_SELF_IP=10.77.0.2 --env KITE_PEER_IP=10.77.0.1 "${env[@]}"
		# On the first run, a VM whose peer without Kite panicked is
		# stopped at once: its checks against a dead peer are not kept.
		KITE_VM_STOP_ON_PANIC=
		[ "$try" = 1 ] && [ "$3" != kite ] && KITE_VM_STOP_ON_PANIC=$group-b
		vm_wait "$group-a" "$(vm_timeout)" || a=$?
		KITE_VM_STOP_ON_PANIC=
		[ "$try" = 1 ] && [ "$2" != kite ] && KITE_VM_STOP_ON_PANIC=$group-a
		vm_wait "$group-b" "$(vm_timeout)" || b=$?
		KITE_VM_STOP_ON_PANIC=
		[ "$try" = 1 ] || break
		vm=
		panic_outside_kite "$group-a" "$a" "$2" && vm=$group-a st=$a
		panic_outside_kite "$group-b" "$b" "$3" && vm=$group-b st=$b
		[ -n "$vm" ] || break
		rm -rf "$VMLOGS/$vm-panic"
		cp -a "$VMLOGS/$vm" "$VMLOGS/$vm-panic"
		# Its first 40 lines; read to the end (head would close the pipe
		# early: SIGPIPE, and pipefail under set -e ends the script).
		sed -n '/Oops\|BUG:\|double fault/,/Kernel panic/p' "$VMLOGS/$vm/console.log" |
			sed -n '1,40s/^/# /p'
		tap_todo 1 "$KITE_VM_TAG $group: $vm kernel panic (status $st) outside Kite's code; the pair runs again" \
			"peer kernel (no Kite module) panicked; logs in $VMLOGS/$vm-panic"
	done
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
	tap_result "$rc" "$KITE_VM_TAG $1: wire capture: every RoCEv2 frame's ICRC checks (both senders)"
	if ! command -v tshark >/dev/null; then
		tap_skip "$KITE_VM_TAG $1: wire capture decodes in tshark" "tshark not installed"
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
	tap_result "$?" "$KITE_VM_TAG $1: wire capture: tshark decodes $out RoCEv2 frames (BTH), $bad malformed"
}

# flowlabel_check GROUP VM IP...: each Kite sender (IP) sent UD SENDs of an
# application QP from UDP source port 0xffc0 (65472), the port of flow label
# 0xfffff: the low 20 bits of the 0xFFFFFFFF that test-eth.sh's
# kite_ah_flowlabel.so pass gave its address handles.
flowlabel_check() {
	local group=$1 pcap=$VMLOGS/$2/wire1.pcap ip n bad=0 counts=
	shift 2
	if ! command -v tshark >/dev/null; then
		tap_skip "$KITE_VM_TAG $group: wire capture: UD source port of flow label 0xfffff" "tshark not installed"
		return
	fi
	for ip; do
		n=$(tshark -r "$pcap" -Y "ip.src == $ip && udp.srcport == 65472 &&
			infiniband.bth.opcode == 100 && infiniband.deth.srcqp != 1" 2>/dev/null | wc -l)
		[ "$n" -gt 0 ] || bad=1
		counts+=" $ip:$n"
	done
	tap_result "$bad" "$KITE_VM_TAG $group: wire capture: Kite's UD SENDs through the 0xFFFFFFFF-label AH leave from UDP port 0xffc0 ($counts )"
}

group_eth() {
	# Each pair runs the perftest suite: allow it more time.
	local KITE_VM_TIMEOUT=$((KITE_VM_TIMEOUT * 2))
	two_vms eth-kite kite kite
	wire_check eth-kite eth-kite-a
	flowlabel_check eth-kite eth-kite-a 10.77.0.1 10.77.0.2
	two_vms eth-mixed kite virtio
	wire_check eth-mixed eth-mixed-a
	flowlabel_check eth-mixed eth-mixed-a 10.77.0.1
	two_vms eth-mixed-rev virtio kite
	wire_check eth-mixed-rev eth-mixed-rev-b
	flowlabel_check eth-mixed-rev eth-mixed-rev-b 10.77.0.2
}

# NFSv4.2 over RDMA: Kite<->Kite, then rdma_rxe<->rdma_rxe on the same kind
# of VMs; the clients' figures side by side (MB/s of one 64 MiB file; a
# figure, never a pass condition). Then the Kite pair runs a pass at each
# loss rate of KITE_NFS_LOSS (per mille, comma-separated; default 1%, 5%
# and 10%: 10,50,100; empty: none), the Kite models losing that much of
# the frames, duplicating and reordering 0.5%.
group_nfs() {
	local f pair name w r loss=${KITE_NFS_LOSS-10,50,100}
	# 64 MiB each way, once per pass: allow the time.
	local KITE_VM_TIMEOUT=$((KITE_VM_TIMEOUT * 4))
	KITE_PAIR_ENV=${loss:+KITE_NFS_LOSS=$loss} \
		two_vms nfs-kite kite kite test-nfs.sh
	two_vms nfs-rxe virtio virtio test-nfs.sh
	echo "# NFSv4.2 over RDMA, one 64 MiB file, client side (MB/s):"
	printf '# %-22s %8s %8s\n' pair write read
	for pair in nfs-kite nfs-rxe; do
		f=$VMLOGS/$pair-a/nfs-figures.txt
		[ -f "$f" ] || { echo "# $pair: no figures"; continue; }
		while read -r name w r; do
			printf '# %-22s %8s %8s\n' "${pair#nfs-}<->${pair#nfs-} $name" "$w" "$r"
		done <"$f"
	done
}

# UCX (Debian's, unchanged) between Kite and Kite, and between Kite and
# rdma_rxe: UCT's RC transport, UCP over RC and over UD, io_demo's checked
# reads and writes (scripts/guest/test-ucx.sh).
group_ucx() {
	local pair b t lat bw rate f
	two_vms ucx-kite kite kite test-ucx.sh
	two_vms ucx-mixed kite virtio test-ucx.sh
	echo "# UCX's ucx_perftest, client side (median overhead in us, overall MB/s and messages/s):"
	printf '# %-12s %-7s %-18s %10s %10s %10s\n' pair batch test p50 MB/s msg/s
	for pair in ucx-kite ucx-mixed; do
		f=$VMLOGS/$pair-a/ucx-figures.txt
		[ -s "$f" ] || { echo "# $pair: no figures"; continue; }
		while read -r b t lat bw rate; do
			printf '# %-12s %-7s %-18s %10s %10s %10s\n' "${pair#ucx-}" "$b" "$t" "$lat" "$bw" "$rate"
		done <"$f"
	done
}

group_link() {
	two_vms link kite kite test-link.sh
}

group_ethops() {
	local st=0 p
	p=$((20000 + RANDOM % 20000))
	vm_start ethops "$VMLOGS/ethops" "$KITE_ROOT/scripts/guest/test-ethops.sh" \
		--kite-net "dgram:$p:$((p + 1))"
	vm_wait ethops "$(vm_timeout)" || st=$?
	vm_outcome ethops "$st" ethops
}

group_nvme() {
	local st=0
	vm_start nvme "$VMLOGS/nvme" "$KITE_ROOT/scripts/guest/test-nvme.sh" --kite
	vm_wait nvme "$(vm_timeout)" || st=$?
	vm_outcome nvme "$st" nvme
}

group_rdma() {
	# About 720 s of its 900 on the debug lane, 900 when the host is slow.
	local KITE_VM_TIMEOUT=$((KITE_VM_TIMEOUT * 2))
	local st=0
	vm_start rdma "$VMLOGS/rdma" "$KITE_ROOT/scripts/guest/test-rdma.sh" --kite
	vm_wait rdma "$(vm_timeout)" || st=$?
	vm_outcome rdma "$st" rdma
}

group_verbs() {
	local st=0
	vm_start verbs "$VMLOGS/verbs" "$KITE_ROOT/scripts/guest/test-verbs.sh" --kite
	vm_wait verbs "$(vm_timeout)" || st=$?
	vm_outcome verbs "$st" verbs
}

group_pyverbs() {
	# About 300 tests, some of them with traffic: under TCG it takes
	# minutes. The guest bounds the suite (KITE_PYVERBS_BUDGET, default
	# 900 s scaled by the lane) and each test (60 s scaled).
	local KITE_VM_TIMEOUT=$((KITE_VM_TIMEOUT * 4))
	local st=0 e=() v
	for v in KITE_PYVERBS_TESTS KITE_PYVERBS_BUDGET KITE_PYVERBS_SEED; do
		[ -n "${!v:-}" ] && e+=(--env "$v=${!v}")
	done
	vm_start pyverbs "$VMLOGS/pyverbs" "$KITE_ROOT/scripts/guest/test-pyverbs.sh" --kite "${e[@]}"
	vm_wait pyverbs "$(vm_timeout)" || st=$?
	vm_outcome pyverbs "$st" pyverbs
	grep '^pyverbs: ' "$VMLOGS/pyverbs/pyverbs.log" 2>/dev/null | sed 's/^/# /' || true
}

group_loss() {
	# Eight losses a cycle, each with applications started, recovery and
	# traffic.
	local KITE_VM_TIMEOUT=$((KITE_VM_TIMEOUT * 3 * ${KITE_LOSS_CYCLES:-2}))
	local st=0 e=()
	# KITE_LOSS_NVME=0: without the NVMe host and target; KITE_LOSS_CYCLES,
	# KITE_LOSS_SECONDS: the loop's count and time bound (test-loss.sh).
	local v
	for v in KITE_LOSS_NVME KITE_LOSS_CYCLES KITE_LOSS_SECONDS; do
		[ -n "${!v:-}" ] && e+=(--env "$v=${!v}")
	done
	vm_start loss "$VMLOGS/loss" "$KITE_ROOT/scripts/guest/test-loss.sh" --kite "${e[@]}"
	vm_wait loss "$(vm_timeout)" || st=$?
	vm_outcome loss "$st" loss
	sed "s/^/# loss times (ms: operation, kernel log): /" "$VMLOGS/loss/loss-times.txt" 2>/dev/null || true
}

group_devfuzz() {
	# Fourteen classes, each followed by recovery and traffic, and two mixes.
	local KITE_VM_TIMEOUT=$((KITE_VM_TIMEOUT * 4))
	local st=0 p e=() v
	for v in KITE_DEVFUZZ_PARTS KITE_FUZZ_SEED KITE_FUZZ_MIX; do
		[ -n "${!v:-}" ] && e+=(--env "$v=${!v}")
	done
	p=$((20000 + RANDOM % 20000))
	vm_start devfuzz "$VMLOGS/devfuzz" "$KITE_ROOT/scripts/guest/test-devfuzz.sh" \
		--kite-net "dgram:$p:$((p + 1))" --no-capture "${e[@]}"
	vm_wait devfuzz "$(vm_timeout)" || st=$?
	vm_outcome devfuzz "$st" devfuzz
	sed 's/^/# /' "$VMLOGS/devfuzz/devfuzz-figures.txt" 2>/dev/null || true
}

# The kite-dkms package (scripts/build-deb.sh) installed on the host, as
# on a host with the NIC: DKMS builds the drivers against the installed
# 6.12 headers, a VM (whose root is the host's) loads them through the
# host's module index and shows kite0; then the package is removed and
# leaves nothing. Other VMs meanwhile use their own module index
# (scripts/vm-moddep.sh), which has no DKMS directory.
group_dkms() {
	local st=0 rc deb pkg ver kver
	if [ "$KITE_LANE" != lts ]; then
		tap_skip "$KITE_VM_TAG dkms: the kite-dkms package" \
			"DKMS builds for the installed Debian kernel (the lts lane's)"
		return
	fi
	if [ "$(id -u)" != 0 ] || ! command -v dkms >/dev/null; then
		tap_skip "$KITE_VM_TAG dkms: the kite-dkms package" "needs root and dkms (scripts/setup-host.sh)"
		return
	fi
	kver=$(guest_kver)
	mkdir -p "$VMLOGS/dkms"
	rc=0
	deb=$("$KITE_ROOT/scripts/build-deb.sh" 2>"$VMLOGS/dkms/build-deb.log" | tail -n 1) || rc=$?
	[ -f "$deb" ] || rc=1
	pkg=$(basename "$deb")
	ver=${pkg#kite-dkms_}
	ver=${ver%_all.deb}
	tap_result "$rc" "$KITE_VM_TAG dkms: kite-dkms $ver built (scripts/build-deb.sh)"
	[ "$rc" = 0 ] || return 0
	rc=0
	dpkg -i "$deb" >"$VMLOGS/dkms/dpkg-install.log" 2>&1 || rc=$?
	tap_result "$rc" "$KITE_VM_TAG dkms: dpkg -i kite-dkms (DKMS builds and installs for $kver)"
	rc=0
	dkms status -m kite -v "$ver" -k "$kver" 2>&1 | grep -q ': installed$' || rc=1
	tap_result "$rc" "$KITE_VM_TAG dkms: dkms status: kite/$ver installed for $kver"
	vm_start dkms "$VMLOGS/dkms" "$KITE_ROOT/scripts/guest/test-dkms.sh" --kite
	vm_wait dkms "$(vm_timeout)" || st=$?
	vm_outcome dkms "$st" dkms
	rc=0
	dpkg -r kite-dkms >"$VMLOGS/dkms/dpkg-remove.log" 2>&1 || rc=$?
	tap_result "$rc" "$KITE_VM_TAG dkms: dpkg -r kite-dkms"
	rc=0
	if ls /lib/modules/"$kver"/updates/dkms/kite_* >/dev/null 2>&1 ||
		[ -n "$(dkms status -m kite 2>&1)" ]; then
		rc=1
	fi
	tap_result "$rc" "$KITE_VM_TAG dkms: removed: no Kite module left under updates/dkms, nothing in dkms status"
}

# failinject: one Kite VM; needs a kernel with fault injection (the
# debug lane; on the lts lane it is skipped).
group_failinject() {
	# Sweeps of hundreds of probes, each seconds long on the debug kernel.
	local KITE_VM_TIMEOUT=$((KITE_VM_TIMEOUT * 3))
	local st=0 p
	if [ "$KITE_LANE" != debug ]; then
		tap_skip "$KITE_VM_TAG failinject: allocation-failure injection" \
			"the $KITE_LANE lane's kernel has no fault injection (run it with --lane debug)"
		return
	fi
	p=$((20000 + RANDOM % 20000))
	vm_start failinject "$VMLOGS/failinject" "$KITE_ROOT/scripts/guest/test-failinject.sh" \
		--kite-net "dgram:$p:$((p + 1))"
	vm_wait failinject "$(vm_timeout)" || st=$?
	vm_outcome failinject "$st" failinject
	# The figures: each sweep's failures, the call sites reached.
	sed -n '/^--- allocation-failure sweeps:/,$p' "$VMLOGS/failinject/guest.log" 2>/dev/null |
		grep -v '^ok - ' | sed 's/^#* */# /' || true
}

group_uvfuzz() {
	local st=0 e=() v
	for v in KITE_FUZZ_SEEDS KITE_FUZZ_CALLS KITE_FUZZ_SECONDS KITE_FUZZ_MODE; do
		[ -n "${!v:-}" ] && e+=(--env "$v=${!v}")
	done
	vm_start uvfuzz "$VMLOGS/uvfuzz" "$KITE_ROOT/scripts/guest/test-uvfuzz.sh" --kite "${e[@]}"
	vm_wait uvfuzz "$(vm_timeout)" || st=$?
	vm_outcome uvfuzz "$st" uvfuzz
}

group_demo() {
	local out=$VMLOGS/demo rc=0
	mkdir -p "$out"
	if [ "$KITE_LANE" != lts ]; then
		tap_skip "$KITE_VM_TAG demo: make demo at a terminal" "make demo runs the lts lane"
		return
	fi
	timeout --kill-after=10 $((15 * 60)) python3 "$KITE_ROOT/scripts/test-demo-pty.py" \
		"$out/session.log" >"$out/results.tap" 2>"$out/stderr.log" || rc=$?
	tap_import "$out/results.tap" "$KITE_VM_TAG demo: "
	tap_result "$rc" "$KITE_VM_TAG demo: the terminal session ran to its end"
	[ "$rc" = 0 ] || tail -n 20 "$out/session.log" | sed 's/^/# /'
}

KITE_VM_GROUPS=(bind wire eth link nfs ucx ethops rdma verbs loss nvme pyverbs failinject uvfuzz devfuzz demo dkms)

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
	if [ "${1:-}" = --lane ]; then
		vmtest_lane "$2"
		shift 2
	fi
	tap_init "${KITE_VMTEST_TAP:-$KITE_CACHE/results/vmtest.tap}"
	# KITE_VM_ENV: a file of vm_prepare_save's, when a caller prepared the
	# lane once for several runs (check.sh).
	if [ -n "${KITE_VM_ENV:-}" ]; then
		vm_prepared "$KITE_VM_ENV"
		vmtest_lane "$KITE_LANE"
	else
		vm_prepare
	fi
	vmtest_run "$@"
	tap_finish
fi
