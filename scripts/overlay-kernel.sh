#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Overlay the Kite drivers into a Linux source tree, as the upstream
# submission (make patches) places them: the driver directories, the shared
# and uapi headers, the documentation with its toctree entries, the driver
# id, one line each in the parent Kconfig and Makefile files, and the
# MAINTAINERS entry (the repository's MAINTAINERS file). Idempotent;
# re-running refreshes the copies.
#
# usage: overlay-kernel.sh TREE [--compat DIR]
#        overlay-kernel.sh --remove TREE
#   --compat DIR  force-include compat/kite_compat.h with DIR's
#                 kite_compat_autoconf.h (for trees older than the newest
#                 kernel; see scripts/compat-probe.sh). Without it the
#                 drivers build exactly as they would upstream.
#   --remove      undo the overlay: TREE as it was before it (files are
#                 replaced, never written in place, so a tree of hard links
#                 to another one can be restored without touching it).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

remove=0
if [ "${1:-}" = --remove ]; then
	remove=1
	shift
fi
tree=$(realpath "$1")
shift
compat=
if [ "${1:-}" = --compat ]; then
	compat=$(realpath "$2")
	shift 2
fi
[ -f "$tree/MAINTAINERS" ] || die "$tree is not a Linux source tree"

# The repository's documentation files, relative to Documentation/.
docs() { (cd "$KITE_ROOT/Documentation" && find . -type f | sed 's|^\./||' | LC_ALL=C sort); }

# replace FILE: FILE's new content from stdin, through a new file.
replace() { cat >"$1.kite" && mv "$1.kite" "$1"; }

# add_line FILE LINE [ANCHOR]: add LINE once, before the first line
# matching the regex ANCHOR, or at the end of FILE.
add_line() {
	local file=$tree/$1 line=$2 anchor=${3:-}
	grep -qxF "$line" "$file" && return 0
	if [ -n "$anchor" ] && grep -qE "$anchor" "$file"; then
		awk -v line="$line" -v anchor="$anchor" \
			'!done && $0 ~ anchor { print line; done = 1 } { print }' \
			"$file" | replace "$file"
	else
		{ cat "$file"; echo "$line"; } | replace "$file"
	fi
}

# del_line FILE LINE: remove every line LINE from FILE.
del_line() {
	local file=$tree/$1
	grep -qxF "$2" "$file" || return 0
	grep -vxF "$2" "$file" | replace "$file"
}

# add_toc FILE ENTRY: ENTRY in FILE's first toctree, in alphabetical order.
add_toc() {
	local file=$tree/$1
	grep -qxF "   $2" "$file" && return 0
	awk -v entry="$2" '
		/^\.\. toctree::/ && !seen { intoc = 1; seen = 1; print; next }
		intoc && /^   [^ :]/ {
			listed = 1
			if (!done && substr($0, 4) > entry) { print "   " entry; done = 1 }
			print; next
		}
		intoc && listed && !/^ *$/ && !/^   / {
			if (!done) { print "   " entry; done = 1 }
			intoc = 0
		}
		intoc && listed && /^ *$/ && !done { print "   " entry; done = 1 }
		{ print }
		END { if (!done) exit 1 }' "$file" | replace "$file" ||
		die "$1: no toctree to add $2 to"
	grep -qxF "   $2" "$file" || die "$1: could not add $2 to its toctree"
}

# The MAINTAINERS entry: the repository's MAINTAINERS file, placed in
# alphabetical order among the entries of the tree's MAINTAINERS.
maint=$tree/MAINTAINERS
heading=$(head -n 1 "$KITE_ROOT/MAINTAINERS")
del_maintainers() {
	grep -qxF "$heading" "$maint" || return 0
	awk -v heading="$heading" '
		$0 == heading { skip = 1; next }
		skip { if ($0 == "") skip = 0; next }
		{ print }' "$maint" | replace "$maint"
}
add_maintainers() {
	del_maintainers
	awk -v heading="$heading" -v entry="$KITE_ROOT/MAINTAINERS" '
		{ line[NR] = $0 }
		$0 == "Maintainers List" { start = NR }
		$0 == "THE REST" { stop = NR }
		END {
			if (!start || !stop)
				exit 1
			# After the last entry of the same initial sorting
			# before this one (the list is not strictly sorted).
			at = stop
			after = 0
			for (i = start + 1; i < stop; i++) {
				if (line[i - 1] != "" || line[i + 1] !~ /^[A-Z]:\t/)
					continue
				if (after) {
					at = i
					after = 0
				}
				if (substr(line[i], 1, 1) == substr(heading, 1, 1) &&
				    line[i] < heading)
					after = 1
			}
			for (i = 1; i <= NR; i++) {
				if (i == at) {
					while ((getline l <entry) > 0)
						print l
					print ""
				}
				print line[i]
			}
		}' "$maint" | replace "$maint" || die "$maint: no entry list to add Kite to"
}

ids=$tree/include/uapi/rdma/ib_user_ioctl_verbs.h
hooks() {
	"$1" drivers/net/ethernet/Kconfig 'source "drivers/net/ethernet/kite/Kconfig"' '^endif # ETHERNET'
	"$1" drivers/net/ethernet/Makefile 'obj-$(CONFIG_NET_VENDOR_KITE) += kite/'
	"$1" drivers/infiniband/Kconfig 'source "drivers/infiniband/hw/kite/Kconfig"' '^if !UML'
	"$1" drivers/infiniband/hw/Makefile 'obj-$(CONFIG_INFINIBAND_KITE)		+= kite/'
}

if [ "$remove" = 1 ]; then
	rm -rf "$tree/drivers/net/ethernet/kite" "$tree/drivers/infiniband/hw/kite" \
		"$tree/include/linux/kite" "$tree/kite-compat"
	rm -f "$tree/include/uapi/rdma/kite-abi.h"
	docs | while read -r f; do rm -f "$tree/Documentation/$f"; done
	rmdir "$tree/Documentation/networking/device_drivers/ethernet/kite" 2>/dev/null || :
	hooks del_line
	del_line include/uapi/rdma/ib_user_ioctl_verbs.h $'\tRDMA_DRIVER_KITE,'
	del_line Documentation/infiniband/index.rst '   kite'
	del_line Documentation/networking/device_drivers/ethernet/index.rst '   kite/index'
	del_maintainers
	exit 0
fi

# By content, a file copied getting the time of the copy: this checkout's
# files may be older than the tree's objects built from another's.
sync() { mkdir -p "$tree/$2" && rsync -rlpgoD --checksum --delete "$KITE_ROOT/$1/" "$tree/$2/"; }
sync drivers/net/ethernet/kite drivers/net/ethernet/kite
sync drivers/infiniband/hw/kite drivers/infiniband/hw/kite
sync include/linux/kite include/linux/kite
cp -p "$KITE_ROOT/include/uapi/rdma/kite-abi.h" "$tree/include/uapi/rdma/kite-abi.h"
docs | while read -r f; do
	mkdir -p "$(dirname "$tree/Documentation/$f")"
	cp -p "$KITE_ROOT/Documentation/$f" "$tree/Documentation/$f"
done
add_toc Documentation/infiniband/index.rst kite
add_toc Documentation/networking/device_drivers/ethernet/index.rst kite/index
add_maintainers

# The driver id, last in enum rdma_driver_id (the uapi header user space
# matches providers by).
if ! grep -qx $'\tRDMA_DRIVER_KITE,' "$ids"; then
	awk '/^enum rdma_driver_id \{/ { inb = 1 }
		inb && /^};/ { print "\tRDMA_DRIVER_KITE,"; inb = 0 } { print }' \
		"$ids" | replace "$ids"
fi
grep -qx $'\tRDMA_DRIVER_KITE,' "$ids" || die "$ids: could not add RDMA_DRIVER_KITE"

hooks add_line

if [ -n "$compat" ]; then
	mkdir -p "$tree/kite-compat"
	cp -p "$KITE_ROOT/compat/kite_compat.h" "$compat/kite_compat_autoconf.h" "$tree/kite-compat/"
	for d in drivers/net/ethernet/kite drivers/infiniband/hw/kite; do
		echo 'ccflags-y += -I$(srctree)/kite-compat -include $(srctree)/kite-compat/kite_compat.h' \
			>>"$tree/$d/Makefile"
	done
	compat_backport "$compat/kite_compat_autoconf.h" "$tree"
fi
