#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Overlay the Kite drivers into a Linux source tree, as the upstream
# submission will place them: the driver directories, the shared and uapi
# headers, the documentation, and one line each in the parent Kconfig and
# Makefile files. Idempotent; re-running refreshes the copies.
#
# usage: overlay-kernel.sh TREE [--compat DIR]
#   --compat DIR  force-include compat/kite_compat.h with DIR's
#                 kite_compat_autoconf.h (for trees older than the newest
#                 kernel; see scripts/compat-probe.sh). Without it the
#                 drivers build exactly as they would upstream.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$(realpath "$1")
shift
compat=
if [ "${1:-}" = --compat ]; then
	compat=$(realpath "$2")
	shift 2
fi
[ -f "$tree/MAINTAINERS" ] || die "$tree is not a Linux source tree"

sync() { mkdir -p "$tree/$2" && rsync -a --delete "$KITE_ROOT/$1/" "$tree/$2/"; }
sync drivers/net/ethernet/kite drivers/net/ethernet/kite
sync drivers/infiniband/hw/kite drivers/infiniband/hw/kite
sync include/linux/kite include/linux/kite
cp -p "$KITE_ROOT/include/uapi/rdma/kite-abi.h" "$tree/include/uapi/rdma/kite-abi.h"
if [ -d "$KITE_ROOT/Documentation" ]; then
	rsync -a "$KITE_ROOT/Documentation/" "$tree/Documentation/"
fi

# add_line FILE LINE [ANCHOR]: add LINE once, before the first line
# matching the regex ANCHOR, or at the end of FILE.
add_line() {
	local file=$tree/$1 line=$2 anchor=${3:-}
	grep -qxF "$line" "$file" && return 0
	if [ -n "$anchor" ] && grep -qE "$anchor" "$file"; then
		awk -v line="$line" -v anchor="$anchor" \
			'!done && $0 ~ anchor { print line; done = 1 } { print }' \
			"$file" >"$file.kite" && mv "$file.kite" "$file"
	else
		echo "$line" >>"$file"
	fi
}
# The driver id, last in enum rdma_driver_id (the uapi header user space
# matches providers by).
ids=$tree/include/uapi/rdma/ib_user_ioctl_verbs.h
if ! grep -qx $'\tRDMA_DRIVER_KITE,' "$ids"; then
	awk '/^enum rdma_driver_id \{/ { inb = 1 }
		inb && /^};/ { print "\tRDMA_DRIVER_KITE,"; inb = 0 } { print }' \
		"$ids" >"$ids.kite" && mv "$ids.kite" "$ids"
fi
grep -qx $'\tRDMA_DRIVER_KITE,' "$ids" || die "$ids: could not add RDMA_DRIVER_KITE"

add_line drivers/net/ethernet/Kconfig 'source "drivers/net/ethernet/kite/Kconfig"' '^endif # ETHERNET'
add_line drivers/net/ethernet/Makefile 'obj-$(CONFIG_NET_VENDOR_KITE) += kite/'
add_line drivers/infiniband/Kconfig 'source "drivers/infiniband/hw/kite/Kconfig"' '^if !UML'
add_line drivers/infiniband/hw/Makefile 'obj-$(CONFIG_INFINIBAND_KITE)		+= kite/'

if [ -n "$compat" ]; then
	mkdir -p "$tree/kite-compat"
	cp -p "$KITE_ROOT/compat/kite_compat.h" "$compat/kite_compat_autoconf.h" "$tree/kite-compat/"
	for d in drivers/net/ethernet/kite drivers/infiniband/hw/kite; do
		echo 'ccflags-y += -I$(srctree)/kite-compat -include $(srctree)/kite-compat/kite_compat.h' \
			>>"$tree/$d/Makefile"
	done
	compat_backport "$compat/kite_compat_autoconf.h" "$tree"
fi
