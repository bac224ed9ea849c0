#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The main job: set everything up, boot a VM with the emulated Kite NIC,
# load kite_en and kite_ib and show the PCI device, the drivers' kernel
# messages, rdma link and ibv_devinfo -v. With a terminal on stdin the VM
# then gives an interactive shell (exit it to power off); otherwise the
# demo exits when the guest has shown everything.
set -euo pipefail
. "$(dirname "$0")/vm.sh"

"$KITE_ROOT/scripts/setup-host.sh" >&2
"$KITE_ROOT/scripts/build-rdma-core.sh" >/dev/null
log "building QEMU, the modules and the initramfs"
vm_prepare
dir=$KITE_CACHE/logs/demo
if [ -t 0 ] && [ -t 1 ]; then
	log "booting (interactive: 'exit' in the guest powers it off; Ctrl-A x quits QEMU)"
	# QEMU puts the terminal in raw mode and restores it when it exits;
	# restore it here too, should QEMU not exit by itself.
	tty_mode=$(stty -g)
	trap 'stty "$tty_mode"' EXIT
	vm_start demo "$dir" "$KITE_ROOT/scripts/guest/demo.sh" --kite --interactive
	rc=0
	wait "${KITE_VM_PID[demo]}" || rc=$?
	[ "$rc" = 0 ] || die "QEMU exited with status $rc; see $dir"
	exit 0
fi
log "booting"
vm_start demo "$dir" "$KITE_ROOT/scripts/guest/demo.sh" --kite
while [ ! -f "$dir/console.log" ]; do sleep 0.2; done
tail -n +1 -f --pid="${KITE_VM_PID[demo]}" "$dir/console.log" &
tailpid=$!
rc=0
vm_wait demo 300 || rc=$?
wait "$tailpid" 2>/dev/null || true
[ "$rc" = 0 ] || die "the demo VM failed (status $rc); see $dir"
