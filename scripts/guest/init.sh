#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Second-stage init of a Kite test VM, run from the host's / (read-only 9p
# under a tmpfs overlay). Sets up the basics, runs $KITE_GUEST_SCRIPT with
# the results share at /kite-out, records its exit status and powers off.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
# What udev would add: /dev/fd (bash's process substitution) and friends.
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
# / is a writable overlay already; /tmp stays the host's (read-only lower
# layer), so a checkout or cache under /tmp is visible in the guest.
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=${TERM:-linux}
. /kite-out/env
# A guest kernel that is not the host's (the debug lane) brings its module
# tree from the build directory: writable over a tmpfs, for depmod.
if [ -n "${KITE_GUEST_MODULES:-}" ]; then
	m=/lib/modules/$(uname -r)
	mkdir -p /run/kite-mod/upper /run/kite-mod/work "$m"
	mount -t overlay overlay -o "lowerdir=$KITE_GUEST_MODULES,upperdir=/run/kite-mod/upper,workdir=/run/kite-mod/work" "$m" ||
		cp -a "$KITE_GUEST_MODULES/." "$m/"
fi
hostname "$KITE_VM_NAME"
ip link set lo up

status=1
if [ -n "${KITE_GUEST_SCRIPT:-}" ]; then
	if [ "$KITE_GUEST_XTRACE" = 1 ]; then
		# Every command of the script time-stamped, for finding where
		# a group's time goes (scripts/xtrace-times.py): kept on tmpfs
		# while it runs (a 9p write per line would be the cost seen).
		# (bash takes no PS4 from the environment when run as root.)
		# shellcheck disable=SC2016 # expanded by the traced shell
		bash -c 'PS4="+ \$EPOCHREALTIME \${BASH_SOURCE[0]##*/}:\$LINENO "
			BASH_XTRACEFD=9; set -x; . "$1"' xtrace "$KITE_GUEST_SCRIPT" \
			>/kite-out/guest.log 2>&1 9>/run/kite-xtrace.log
		status=$?
		cp /run/kite-xtrace.log /kite-out/xtrace.log
	else
		bash "$KITE_GUEST_SCRIPT" >/kite-out/guest.log 2>&1
		status=$?
	fi
fi
if [ "${KITE_INTERACTIVE:-0}" = 1 ]; then
	echo
	echo "Kite VM shell: the host's / (read-only, tmpfs overlay). 'exit' powers off."
	setsid -c bash -l </dev/ttyS0 >/dev/ttyS0 2>&1
fi
# A kernel with kmemleak: scan twice (an object is reported once it has
# been unreferenced for 5 s) and keep the report for the host's check.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak >/kite-out/kmemleak.log
fi
dmesg >/kite-out/dmesg.log
echo "$status" >/kite-out/exit_status
sync
# After the power-off request the 9p root goes away: wait with builtins
# only (init must not exit, or the kernel panics).
mkfifo /run/kite-hold
echo o >/proc/sysrq-trigger
while :; do read -r -t 30 <>/run/kite-hold; done
