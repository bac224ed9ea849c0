# SPDX-License-Identifier: GPL-2.0-only
# VM harness library: boot a guest kernel under QEMU (TCG, q35) with the
# Kite device model, the host's / as the guest root (read-only 9p with a
# tmpfs overlay) and a read-write results share. Source this file.
#
# KITE_LANE chooses the guest kernel:
#   lts    (default) Debian's 6.12 kernel, with the drivers built out of
#          tree against its headers (through the compat layer)
#   debug  the newest Debian kernel source with the drivers merged in
#          tree, built with KASAN, lockdep, kmemleak, DMA-API debugging,
#          debug objects, UBSAN bounds, hung-task detection and fault
#          injection (scripts/build-debug-kernel.sh); 2 GiB per VM, and
#          every VM ends with a kmemleak scan
#
# KITE_QEMU_BIN runs another QEMU binary than the one vm_prepare builds
# (to compare two builds of the device model in one benchmark session).
#
#   vm_prepare                  build QEMU, the guest kernel (debug lane),
#                               the modules (drivers and test modules),
#                               the initramfs
#   vm_prepare_save FILE        vm_prepare, and save what it found in FILE
#   vm_prepared FILE            load FILE instead of running vm_prepare
#   vm_start NAME DIR SCRIPT [--kite] [--kite-net SPEC] [--virtio-net SPEC]
#            [--no-capture] [--env VAR=VALUE]... [--interactive] [-- QEMU ARGS]
#                               start a VM in the background; DIR receives
#                               console.log, guest.log, dmesg.log, results
#   vm_wait NAME TIMEOUT        wait for it; returns the guest script's exit
#                               status, 124 on timeout, 125 on a kernel panic,
#                               126 when stopped for a panic of a VM named
#                               in KITE_VM_STOP_ON_PANIC
#   vm_monitor NAME COMMAND     send a command to the VM's QEMU monitor
#
# A guest asks the host for a monitor command (set_link, or qom-set of the
# Kite model's fault-injection properties) by writing it to
# /kite-out/request, ended by a line "# end ID #"; vm_wait runs it and
# writes ID to /kite-out/request.done.
#
# SPEC for a network: dgram:LOCALPORT:REMOTEPORT (UDP on 127.0.0.1, one
# wire between two VMs), mcast:GROUP:PORT (a multicast group on the
# loopback interface: one segment for any number of NICs) or none. The
# Kite NIC's traffic is captured to DIR/wireN.pcap unless --no-capture
# (which must come before --kite-net). Every step is bounded; only
# processes the harness started are killed, by PID.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KITE_QEMU=${KITE_QEMU_BIN:-$KITE_CACHE/build/qemu/qemu-system-x86_64}
KITE_RDMA_CORE=$KITE_CACHE/build/rdma-core
declare -A KITE_VM_DIR KITE_VM_PID
KITE_VM_COUNT=0

KITE_LANE=${KITE_LANE:-lts}

vm_prepare() {
	local kver kdir out
	"$KITE_ROOT/scripts/build-qemu.sh" >/dev/null
	case $KITE_LANE in
	lts)
		kver=$(guest_kver)
		kdir=/lib/modules/$kver/build
		KITE_GUEST_KERNEL=$(ls /boot/vmlinuz-"$kver")
		KITE_GUEST_MODULES=
		KITE_MODDIR=$("$KITE_ROOT/scripts/build-modules.sh" "$kdir" W=1 2>/dev/null | tail -n 1)
		KITE_INITRAMFS=$("$KITE_ROOT/scripts/vm-initramfs.sh" "$kver")
		KITE_VM_MEM=1G
		KITE_VM_APPEND=
		;;
	debug)
		out=$("$KITE_ROOT/scripts/build-debug-kernel.sh" | tail -n 1) ||
			die "the debug guest kernel did not build (run scripts/build-debug-kernel.sh)"
		kver=$(cat "$out/include/config/kernel.release")
		kdir=$out
		KITE_GUEST_KERNEL=$out/arch/x86/boot/bzImage
		KITE_GUEST_MODULES=$out/modinst/lib/modules/$kver
		# The drivers are in tree: the build directory holds their .ko
		# files at the same paths as an out-of-tree build's.
		KITE_MODDIR=$out
		KITE_INITRAMFS=$("$KITE_ROOT/scripts/vm-initramfs.sh" "$kver" "$KITE_GUEST_MODULES")
		# KASAN's shadow and kmemleak's metadata need the room.
		KITE_VM_MEM=2G
		# nokaslr: addresses from the QEMU monitor (info registers) map
		# to System.map when a guest must be looked into while it runs.
		# A TCG vCPU is a host thread: on a loaded host it can go
		# unscheduled for tens of seconds, which the guest's soft-lockup
		# and RCU-stall detectors (20 s, 21 s) report although no guest
		# code is stuck (seen: "soft lockup ... [migration/0]" at boot,
		# no module loaded). Their thresholds are raised to 60 s; a real
		# lockup is reported all the same, only later.
		KITE_VM_APPEND="log_buf_len=8M nokaslr watchdog_thresh=30 rcupdate.rcu_cpu_stall_timeout=60"
		;;
	*) die "unknown KITE_LANE '$KITE_LANE' (lts or debug)" ;;
	esac
	KITE_GUEST_KVER=$kver
	KITE_VM_MODDEP=$("$KITE_ROOT/scripts/vm-moddep.sh" "$kver" \
		"${KITE_GUEST_MODULES:-/lib/modules/$kver}" "$KITE_MODDIR" | tail -n 1)
	KITE_TESTMOD_DIR=$("$KITE_ROOT/scripts/build-test-modules.sh" "$kdir" W=1 2>/dev/null | tail -n 1)
	KITE_TOOLS=$("$KITE_ROOT/scripts/build-tools.sh" | tail -n 1)
	[ -x "$KITE_QEMU" ] || die "QEMU not built"
	[ -f "$KITE_MODDIR/drivers/net/ethernet/kite/kite_en.ko" ] || die "modules not built"
	[ -f "$KITE_TESTMOD_DIR/kite_verbs_test.ko" ] || die "test modules not built"
}

# What vm_prepare finds, for VM runs in other processes of the same lane.
KITE_VM_PREPARED_VARS=(KITE_LANE KITE_GUEST_KVER KITE_GUEST_KERNEL KITE_GUEST_MODULES
	KITE_MODDIR KITE_INITRAMFS KITE_VM_MEM KITE_VM_APPEND KITE_TESTMOD_DIR KITE_TOOLS
	KITE_VM_MODDEP)

# vm_prepare_save FILE: vm_prepare, then save its findings in FILE, which
# vm_prepared FILE loads instead of preparing again.
vm_prepare_save() {
	vm_prepare
	# Loaded inside a function: global, not local, declarations.
	declare -p "${KITE_VM_PREPARED_VARS[@]}" | sed 's/^declare /declare -g /' >"$1.tmp" &&
		mv "$1.tmp" "$1"
}

vm_prepared() {
	# shellcheck disable=SC1090
	. "$1"
	[ -x "$KITE_QEMU" ] || die "QEMU not built"
}

# A MAC address from a small integer.
vm_mac() { printf '52:54:00:4b:00:%02x' "$1"; }

vm_start() {
	local name=$1 dir=$2 script=$3 interactive=0 netdev
	local -a qargs=() env=()
	local nic=0 capture=1 knics=0 vnics=0
	shift 3
	while [ $# -gt 0 ]; do
		case $1 in
		--kite) qargs+=(-device "kite,id=kite0,mac=$(vm_mac $((0x10 + KITE_VM_COUNT)))") ;;
		--kite-net)
			# A second Kite NIC (bench-pair) is kite1, its MAC above.
			nic=$((nic + 1)); netdev=$(vm_netdev "n$nic" "$2"); shift
			qargs+=(-netdev "$netdev" -device "kite,id=kite$knics,netdev=n$nic,mac=$(vm_mac $((0x10 + 0x40 * knics + KITE_VM_COUNT)))")
			knics=$((knics + 1))
			[ "$capture" = 1 ] &&
				qargs+=(-object "filter-dump,id=dump$nic,netdev=n$nic,file=$dir/wire$nic.pcap") ;;
		--no-capture) capture=0 ;;
		--virtio-net)
			nic=$((nic + 1)); netdev=$(vm_netdev "n$nic" "$2"); shift
			qargs+=(-netdev "$netdev" -device "virtio-net-pci,netdev=n$nic,mac=$(vm_mac $((0x20 + 0x40 * vnics + KITE_VM_COUNT)))")
			vnics=$((vnics + 1)) ;;
		--env) env+=("$2"); shift ;;
		--interactive) interactive=1 ;;
		--) shift; qargs+=("$@"); break ;;
		*) die "vm_start: unknown option $1" ;;
		esac
		shift
	done

	rm -rf "$dir"
	mkdir -p "$dir"
	{
		printf 'export KITE_ROOT=%q KITE_CACHE=%q KITE_VM_NAME=%q\n' "$KITE_ROOT" "$KITE_CACHE" "$name"
		printf 'export KITE_GUEST_SCRIPT=%q KITE_INTERACTIVE=%q\n' "$script" "$interactive"
		printf 'export KITE_MODDIR=%q KITE_TESTMOD_DIR=%q KITE_RDMA_CORE=%q KITE_TOOLS=%q\n' \
			"$KITE_MODDIR" "$KITE_TESTMOD_DIR" "$KITE_RDMA_CORE" "$KITE_TOOLS"
		printf 'export KITE_LANE=%q KITE_GUEST_MODULES=%q KITE_VM_MODDEP=%q\n' \
			"$KITE_LANE" "$KITE_GUEST_MODULES" "${KITE_VM_MODDEP:-}"
		printf 'export KITE_GUEST_XTRACE=%q\n' "${KITE_GUEST_XTRACE:-0}"
		for e in "${env[@]}"; do printf 'export %q\n' "$e"; done
	} >"$dir/env"

	# KITE_QEMU_TRACE=EVENT[,EVENT...]: the device model's trace events
	# (qemu/hw/net/trace-events-kite; patterns allowed) and guest errors,
	# into the VM's qemu.log: for finding out what the device did.
	local ev trace=${KITE_QEMU_TRACE:-}
	local -a evs=()
	[ -n "$trace" ] && IFS=, read -ra evs <<<"$trace"
	for ev in "${evs[@]}"; do qargs+=(-trace "$ev"); done
	# Each event time-stamped (the host's real-time clock, microseconds).
	[ -n "$trace" ] && qargs+=(-d guest_errors -D "$dir/qemu.log" -msg timestamp=on)
	# KITE_QEMU_PERF=1: QEMU runs under 'perf record' (frequency
	# KITE_QEMU_PERF_FREQ, default 499 Hz) into the VM's perf.data: where
	# the host's CPU time goes (README, "Benchmarks"), time-stamped by the
	# real-time clock (scripts/qemu-profile.py cuts it into the runs of a
	# benchmark). Figures taken so are not comparable to others.
	local -a perf=()
	if [ "${KITE_QEMU_PERF:-0}" = 1 ]; then
		command -v perf >/dev/null || die "KITE_QEMU_PERF=1 needs perf: apt-get install linux-perf"
		perf=(perf record -q -k realtime -F "${KITE_QEMU_PERF_FREQ:-499}" -o "$dir/perf.data" --)
	fi
	local serial=(-serial "file:$dir/console.log")
	[ "$interactive" = 1 ] && serial=(-serial mon:stdio)
	# debug-threads: the vCPU thread is "CPU 0/TCG" (in top -H, in perf).
	local cmd=("${perf[@]}" "$KITE_QEMU" -name "$name,debug-threads=on"
		-M q35 -m "$KITE_VM_MEM" -smp 1 -nodefaults -display none -no-reboot
		-L /usr/share/seabios -L /usr/share/qemu -L /usr/lib/ipxe/qemu
		-kernel "$KITE_GUEST_KERNEL" -initrd "$KITE_INITRAMFS"
		-append "console=ttyS0 panic=-1 loglevel=4 $KITE_VM_APPEND"
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$dir,mount_tag=kiteout,security_model=none"
		-monitor "unix:$dir/monitor.sock,server=on,wait=off"
		"${serial[@]}" "${qargs[@]}")
	if [ "$interactive" = 1 ]; then
		# A background job of a script reads /dev/null unless told
		# otherwise: the console is the terminal.
		"${cmd[@]}" <&0 &
	else
		"${cmd[@]}" &
	fi
	KITE_VM_PID[$name]=$!
	KITE_VM_COUNT=$((KITE_VM_COUNT + 1))
	KITE_VM_DIR[$name]=$dir
	echo "${KITE_VM_PID[$name]}" >"$dir/qemu.pid"
}

vm_netdev() {
	local id=$1 spec=$2 lp rp
	case $spec in
	dgram:*:*)
		lp=$(echo "$spec" | cut -d: -f2)
		rp=$(echo "$spec" | cut -d: -f3)
		echo "dgram,id=$id,local.type=inet,local.host=127.0.0.1,local.port=$lp,remote.type=inet,remote.host=127.0.0.1,remote.port=$rp"
		;;
	mcast:*:*)
		# A shared segment: every NIC on GROUP:PORT sees every frame.
		lp=$(echo "$spec" | cut -d: -f2)
		rp=$(echo "$spec" | cut -d: -f3)
		echo "socket,id=$id,mcast=$lp:$rp,localaddr=127.0.0.1"
		;;
	none) echo "hubport,id=$id,hubid=$RANDOM" ;;
	*) die "bad network spec $spec" ;;
	esac
}

# Console patterns that mean the guest kernel is dead.
KITE_PANIC_RE='Kernel panic - not syncing|double fault:'

vm_wait() {
	local name=$1 timeout=$2 pid dir start other
	pid=${KITE_VM_PID[$name]}
	dir=${KITE_VM_DIR[$name]}
	start=$SECONDS
	while kill -0 "$pid" 2>/dev/null; do
		# Every VM's requests, not only this one's: two VMs run at once.
		for other in "${!KITE_VM_DIR[@]}"; do
			kill -0 "${KITE_VM_PID[$other]}" 2>/dev/null &&
				vm_serve_requests "$other"
		done
		for other in ${KITE_VM_STOP_ON_PANIC:-}; do
			grep -qE "$KITE_PANIC_RE" "${KITE_VM_DIR[$other]}/console.log" 2>/dev/null || continue
			warn "$name: $other panicked, stopping $name"
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 126
		done
		if grep -qE "$KITE_PANIC_RE" "$dir/console.log" 2>/dev/null; then
			warn "$name: kernel panic on the console, stopping it"
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 125
		fi
		if [ $((SECONDS - start)) -ge "$timeout" ]; then
			warn "$name: no poweroff after ${timeout}s, killing QEMU (pid $pid)"
			kill "$pid" 2>/dev/null
			sleep 1
			kill -9 "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 124
		fi
		# Often: a guest waits for its monitor requests.
		sleep 0.2
	done
	wait "$pid" 2>/dev/null
	if grep -qE "$KITE_PANIC_RE" "$dir/console.log" 2>/dev/null; then
		return 125
	fi
	[ -f "$dir/exit_status" ] || return 1
	return "$(cat "$dir/exit_status")"
}

# Run the monitor commands a guest asked for (one request: its lines, in
# order, in one monitor connection); a request with a command the guest
# may not ask for is refused whole.
vm_serve_requests() {
	local name=$1 dir=${KITE_VM_DIR[$1]} cmd reply=0 end id
	local -a cmds
	[ -f "$dir/request" ] || return 0
	mapfile -t cmds <"$dir/request"
	# Not yet written whole: served at the next look.
	[ ${#cmds[@]} -gt 0 ] || return 0
	end=${cmds[-1]}
	[[ $end =~ ^"# end "([0-9]+-[0-9]+)" #"$ ]] || return 0
	id=${BASH_REMATCH[1]}
	unset 'cmds[-1]'
	for cmd in "${cmds[@]}"; do
		case $cmd in
		"set_link "* | "qom-set /machine/peripheral/kite0 fault-"* | \
			"qom-set /machine/peripheral/kite0 loss-"*) ;;
		"qom-get /machine/peripheral/kite0 fault-"* | \
			"qom-get /machine/peripheral/kite0 loss-"* | \
			"qom-get /machine/peripheral/kite0 rc-counts") reply=1 ;;
		*)
			warn "$name: refusing monitor request '$cmd'"
			cmds=()
			break
			;;
		esac
	done
	if [ "${#cmds[@]}" -gt 0 ] && [ "$reply" = 1 ]; then
		# The answer goes back to the guest, in /kite-out/reply.
		printf '%s\n' "${cmds[@]}" | timeout 10 socat - "UNIX-CONNECT:$dir/monitor.sock" \
			>"$dir/reply.tmp" 2>&1
		mv "$dir/reply.tmp" "$dir/reply"
	elif [ "${#cmds[@]}" -gt 0 ]; then
		printf '%s\n' "${cmds[@]}" | vm_monitor_in "$name"
	fi
	rm -f "$dir/request"
	echo "$id" >"$dir/request.done"
}

vm_monitor() {
	printf '%s\n' "$2" | vm_monitor_in "$1"
}

# vm_monitor_in NAME: the monitor commands on standard input, one per line.
vm_monitor_in() {
	local dir=${KITE_VM_DIR[$1]}
	timeout 10 socat - "UNIX-CONNECT:$dir/monitor.sock" >/dev/null
}
