# SPDX-License-Identifier: GPL-2.0-only
# Helpers for guest test scripts. Results go to /kite-out/results.tap as
# "ok - NAME" / "not ok - NAME" lines; the host numbers and counts them.

KITE_RESULTS=/kite-out/results.tap
KITE_EN_KO=$KITE_MODDIR/drivers/net/ethernet/kite/kite_en.ko
KITE_IB_KO=$KITE_MODDIR/drivers/infiniband/hw/kite/kite_ib.ko
: >"$KITE_RESULTS"
# kite_ib needs ib_core; there is no udev to load it on demand.
modprobe -q ib_uverbs
kite_failed=0

# check NAME COMMAND...: run COMMAND, record whether it succeeded.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "ok - $name" >>"$KITE_RESULTS"
	else
		echo "not ok - $name" >>"$KITE_RESULTS"
		kite_failed=1
		echo "FAILED: $name"
		echo "$out" | tail -n 20 | sed 's/^/    /'
	fi
}

# The Kite function's PCI address, e.g. 0000:00:02.0.
kite_bdf() { lspci -Dn -d 1ee7:4b01 | awk 'NR == 1 { print $1 }'; }

# kernel_log_since MARK: the kernel log after the line containing MARK.
kite_mark() { echo "kite-test: $1" >/dev/kmsg; }
kernel_log_since() { dmesg | sed -n "/kite-test: $1\$/,\$p"; }
# since_mark MARK REGEX: the kernel log after MARK matches REGEX.
since_mark() { kernel_log_since "$1" | grep -qE "$2"; }

# Kernel log lines that mean a driver bug.
KITE_SPLAT_RE='WARNING:|BUG:|Oops|general protection|kmemleak|UBSAN|KASAN|refcount_t:|list_(add|del) corruption|possible recursive locking|circular locking|INFO: task .* blocked|Call Trace'

dmesg_clean() {
	! dmesg | grep -E "$KITE_SPLAT_RE"
}

finish() {
	exit "$kite_failed"
}

# Two-VM barrier over the wire: call peer_barrier_start early, and
# peer_barrier PEER_IP when done; it returns once the peer is done too
# (or after 60 s), so neither VM powers off while the other needs it.
peer_barrier_start() {
	socat -u UDP-RECV:7777 OPEN:/tmp/kite-peer-done,creat,append &
}

peer_barrier() {
	local i
	for i in $(seq 1 120); do
		echo done >"/dev/udp/$1/7777" 2>/dev/null
		[ -s /tmp/kite-peer-done ] && break
		sleep 0.5
	done
	echo done >"/dev/udp/$1/7777" 2>/dev/null
	[ -s /tmp/kite-peer-done ]
}

# host_monitor COMMAND: have the host run a QEMU monitor command for this
# VM (set_link, or qom-set of kite0's fault-* properties) and wait for it,
# at most 20 s.
host_monitor() {
	local i
	rm -f /kite-out/request.done
	echo "$1" >/kite-out/request.tmp
	mv /kite-out/request.tmp /kite-out/request
	for i in $(seq 1 100); do
		[ -e /kite-out/request.done ] && return 0
		sleep 0.2
	done
	return 1
}

# The Kite function's network interface.
kite_netdev() {
	local d
	for d in /sys/class/net/*; do
		[ "$(basename "$(readlink "$d/device/driver" 2>/dev/null)")" = kite_en ] &&
			basename "$d"
	done | head -n 1
}

# wait_for SECONDS COMMAND...: poll COMMAND every 0.2 s until it succeeds.
wait_for() {
	local t=$(($1 * 5))
	shift
	while [ "$t" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
		t=$((t - 1))
	done
	return 1
}

# Deterministic test data: the same bytes in every VM.
make_data() { seq 1 "$2" | head -c "$1"; }

# Install the Kite modules into the guest's (overlay) module tree, so that
# modprobe resolves kite_ib's dependency on kite_en as on a real host.
kite_install_modules() {
	local d=/lib/modules/$(uname -r)/updates/kite
	mkdir -p "$d"
	cp "$KITE_EN_KO" "$KITE_IB_KO" "$d/"
	depmod -a
}
