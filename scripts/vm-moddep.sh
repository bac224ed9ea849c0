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
mkdir -p "$base"
exec 9>"$base.lock"
flock 9
# One directory per index: a running VM copies its index from the one it
# was given (kite_install_modules) while another caller may need a new one
# (the dkms group changes the host's own index for a while), so an index
# is never changed or removed in place.
stamp="$(cat "$en" "$ib" "$mods/modules.dep" | sha256sum | cut -c1-16) $mods"
dir=$base/$(echo "$stamp" | sha256sum | cut -c1-16)
out=$dir/lib/modules/$kver
if [ -f "$out/modules.dep.bin" ]; then
	echo "$out"
	exit 0
fi
tmp=$base/.new-$$
rm -rf "$tmp"
mkdir -p "$tmp/lib/modules/$kver/updates/kite"
# depmod reads the tree through the link; it writes only the index files.
ln -s "$mods/kernel" "$tmp/lib/modules/$kver/kernel"
for f in modules.order modules.builtin modules.builtin.modinfo; do
	[ ! -f "$mods/$f" ] || cp "$mods/$f" "$tmp/lib/modules/$kver/"
done
cp "$en" "$ib" "$tmp/lib/modules/$kver/updates/kite/"
depmod -b "$tmp" "$kver"
grep -q '^updates/kite/kite_ib.ko: updates/kite/kite_en.ko' "$tmp/lib/modules/$kver/modules.dep" ||
	die "depmod did not record kite_ib's dependency on kite_en"
echo "$stamp" >"$tmp/stamp"
# Left incomplete by a build that was killed: no VM could use it.
rm -rf "$dir"
mv -T "$tmp" "$dir"
# Indexes a day old are no VM's any more (and the layout before this one).
find "$base" -mindepth 1 -maxdepth 1 ! -path "$dir" -mmin +1440 -exec rm -rf {} +
echo "$out"
