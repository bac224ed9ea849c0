#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The module index (modules.dep and the other depmod files) of a guest's
# module tree with the Kite drivers installed as updates/kite/, made on
# the host. A guest test that installs the drivers for modprobe
# (kite_install_modules in scripts/guest/lib.sh) copies these files
# instead of running depmod -a, which reads every module of the tree:
# about 40 s under TCG for Debian's 4,000 compressed modules, 6 s here.
#
# usage: vm-moddep.sh KVER MODULES_DIR KITE_MODDIR
#   MODULES_DIR: the guest's /lib/modules/KVER as the host sees it
#   KITE_MODDIR: where kite_en.ko and kite_ib.ko were built
# Prints the directory holding the index files. Cached: made again only
# when the drivers or the tree's own index change.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kver=$1 mods=$(realpath "$2") kmod=$3
en=$kmod/drivers/net/ethernet/kite/kite_en.ko
ib=$kmod/drivers/infiniband/hw/kite/kite_ib.ko
base=$KITE_CACHE/build/moddep-$kver
out=$base/lib/modules/$kver
mkdir -p "$base"
exec 9>"$base.lock"
flock 9

stamp="$(cat "$en" "$ib" "$mods/modules.dep" | sha256sum | cut -c1-16) $mods"
if [ -f "$out/modules.dep.bin" ] && [ "$(cat "$base/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$out"
	exit 0
fi

rm -rf "$out"
mkdir -p "$out/updates/kite"
# depmod reads the tree through the link; it writes only the index files.
ln -s "$mods/kernel" "$out/kernel"
for f in modules.order modules.builtin modules.builtin.modinfo; do
	[ ! -f "$mods/$f" ] || cp "$mods/$f" "$out/"
done
cp "$en" "$ib" "$out/updates/kite/"
depmod -b "$base" "$kver"
grep -q '^updates/kite/kite_ib.ko: updates/kite/kite_en.ko' "$out/modules.dep" ||
	die "depmod did not record kite_ib's dependency on kite_en"
echo "$stamp" >"$base/stamp"
echo "$out"
