#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the VM's initramfs: static busybox plus the 9p, virtio and overlay
# modules of the guest kernel. Its /init mounts the host's / read-only over
# virtio-9p under a tmpfs overlay, mounts the read-write results share and
# switch_roots into scripts/guest/init.sh. Rebuilt when its inputs change.
#
# usage: vm-initramfs.sh KVER [MODDIR]    (prints the initramfs path)
#   MODDIR: the kernel's module tree (default /lib/modules/KVER); modules
#   built into the kernel (modules.builtin) are left out.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kver=$1
mods=${2:-/lib/modules/$kver}
out=$KITE_CACHE/build/initramfs-$kver.cpio.gz
# The two VM lanes may prepare at once.
exec 9>"$out.lock"
flock 9
# Load order matters: dependencies first.
modlist=(fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay)
stamp="$(inputs_hash "$KITE_ROOT/scripts/vm-initramfs.sh" /bin/busybox "$mods/modules.builtin") $kver"
if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$out"
	exit 0
fi

work=$(mktemp -d "$KITE_CACHE/initramfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,dev,proc,sys,lower,rw,newroot,modules}
cp /bin/busybox "$work/bin/busybox"
touch "$work/modules/order"
for m in "${modlist[@]}"; do
	grep -qxF "kernel/$m.ko" "$mods/modules.builtin" 2>/dev/null && continue
	f=$(ls "$mods/kernel/$m".ko* 2>/dev/null | head -n 1)
	[ -n "$f" ] || die "module $m not found in $mods"
	case $f in
	*.xz) xz -dc "$f" >"$work/modules/$(basename "$m").ko" ;;
	*.zst) zstd -qdc "$f" >"$work/modules/$(basename "$m").ko" ;;
	*) cp "$f" "$work/modules/$(basename "$m").ko" ;;
	esac
	echo "$(basename "$m").ko" >>"$work/modules/order"
done

cat >"$work/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
fail() { echo "kite-initramfs: $*"; echo o >/proc/sysrq-trigger; sleep 10; }
for m in $(cat /modules/order); do
	insmod "/modules/$m" || fail "insmod $m failed"
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /lower ||
	fail "cannot mount the host root"
mount -t tmpfs -o size=512m tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	fail "cannot mount the overlay"
mkdir -p /newroot/kite-out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 kiteout /newroot/kite-out ||
	fail "cannot mount the results share"
[ -r /newroot/kite-out/env ] || fail "no /kite-out/env"
. /newroot/kite-out/env
umount /proc /sys
umount /dev
exec switch_root /newroot /bin/bash "$KITE_ROOT/scripts/guest/init.sh"
INIT
chmod +x "$work/init"
(cd "$work" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
echo "$stamp" >"$out.stamp"
echo "$out"
