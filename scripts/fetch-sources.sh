#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fetch and unpack the Debian sources Kite builds against, into $KITE_CACHE/src:
#   qemu        bookworm's QEMU 7.2 source package (Debian patches applied)
#   rdma-core   trixie's rdma-core 56.1 original tarball
#   linux-6.12  linux-source-6.12's tarball (checkpatch, KUnit)
#   linux-7.x   the newest linux-source-7.x that Debian (sid) packages
#   nfs-utils   bookworm's nfs-common and nfs-kernel-server, unpacked (not
#               installed: the VM tests run them in guests, never on the
#               host); prints the directory
# Each uses an apt source list private to this script; the machine's own apt
# configuration is never touched, but its archive URIs (a mirror, a proxy)
# are used when it has them. Idempotent.
#
# usage: fetch-sources.sh [qemu|rdma-core|linux-target|linux-upstream|nfs-utils]...
set -euo pipefail
. "$(dirname "$0")/lib.sh"

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# apt_archive SECURITY: the URI of the Debian archive (SECURITY=0) or of its
# security archive (1) as the machine's own apt configuration names it (a
# mirror, a proxy), from the index targets of its Debian releases;
# deb.debian.org when it names none.
apt_archive() {
	local uri
	# shellcheck disable=SC2016 # apt's own $(FIELD) syntax
	uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk -v sec="$1" '
			$2 ~ /^(oldstable|stable|testing|unstable|sid|bookworm|trixie|forky)(-[a-z]+)?$/ {
				s = ($2 ~ /-security$/); u = ($2 ~ /-(updates|backports|proposed-updates)$/)
				if (s == sec && !u) { print $1; exit }
			}')
	if [ -z "$uri" ]; then
		[ "$1" = 1 ] && uri=http://deb.debian.org/debian-security || uri=http://deb.debian.org/debian
	fi
	echo "${uri%/}"
}
MIRROR=$(apt_archive 0)
SECURITY_MIRROR=$(apt_archive 1)
SRC=$KITE_CACHE/src
mkdir -p "$SRC"

apt_list_fresh() {
	# Refresh a private list at most once a day.
	local name=$1 lines=$2 stamp=$KITE_CACHE/apt/$1/updated
	if [ -z "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
		private_apt "$name" "$lines" apt-get update >/dev/null
		touch "$stamp"
	fi
}

fetch_qemu() {
	local dir=$SRC/qemu-7.2 lines dl=$SRC/qemu-dl
	[ -f "$dir/.kite-unpacked" ] && return 0
	lines="deb-src [signed-by=$KEYRING] $MIRROR bookworm main
deb-src [signed-by=$KEYRING] $SECURITY_MIRROR bookworm-security main"
	apt_list_fresh bookworm-src "$lines"
	rm -rf "$dl" "$dir"
	mkdir -p "$dl"
	log "downloading qemu=$QEMU_DEB_VERSION source"
	(cd "$dl" && private_apt bookworm-src "$lines" apt-get source --download-only "qemu=$QEMU_DEB_VERSION" >/dev/null)
	log "unpacking qemu source"
	# dpkg-source applies Debian's patches.
	(cd "$dl" && dpkg-source -x ./*.dsc "$dir" >/dev/null)
	touch "$dir/.kite-unpacked"
	rm -rf "$dl"
}

fetch_rdma_core() {
	local dir=$SRC/rdma-core-$RDMA_CORE_VERSION lines dl=$SRC/rdma-core-dl
	[ -f "$dir/.kite-unpacked" ] && return 0
	lines="deb-src [signed-by=$KEYRING] $MIRROR trixie main"
	apt_list_fresh trixie-src "$lines"
	rm -rf "$dl" "$dir"
	mkdir -p "$dl"
	log "downloading rdma-core $RDMA_CORE_VERSION original tarball"
	# The .dsc of this version is missing from the mirror (404), the
	# original tarball is not: ignore the failure and use the tarball.
	(cd "$dl" && private_apt trixie-src "$lines" apt-get source --download-only \
		"rdma-core=$RDMA_CORE_VERSION-1" >/dev/null 2>&1) || true
	[ -f "$dl/rdma-core_$RDMA_CORE_VERSION.orig.tar.gz" ] ||
		die "could not download rdma-core_$RDMA_CORE_VERSION.orig.tar.gz"
	mkdir -p "$dir"
	tar -C "$dir" --strip-components=1 -xzf "$dl/rdma-core_$RDMA_CORE_VERSION.orig.tar.gz"
	touch "$dir/.kite-unpacked"
	rm -rf "$dl"
}

# The 6.12 source tree (checkpatch, KUnit) from linux-source-6.12.
fetch_linux_target() {
	local tarball=/usr/src/linux-source-$KITE_KVER_SERIES.tar.xz dir=$SRC/linux-$KITE_KVER_SERIES
	[ -f "$tarball" ] || die "$tarball missing (run scripts/setup-host.sh)"
	if [ ! -f "$dir/.kite-unpacked" ] || [ "$tarball" -nt "$dir/.kite-unpacked" ]; then
		log "unpacking $tarball"
		rm -rf "$dir"
		mkdir -p "$dir"
		tar -C "$dir" --strip-components=1 -xJf "$tarball"
		touch "$dir/.kite-unpacked"
	fi
	echo "$dir"
}

# Prints the unpacked upstream tree's path; returns 1 (loudly) if unavailable.
fetch_linux_upstream() {
	local lines pkg dir dl=$SRC/linux-upstream-dl ver
	# The upstream build and the debug kernel build may ask at once.
	exec 8>"$SRC/.linux-upstream.lock"
	flock 8
	lines="deb [signed-by=$KEYRING] $MIRROR sid main"
	if ! apt_list_fresh sid "$lines"; then
		warn "UPSTREAM KERNEL UNAVAILABLE: cannot read Debian sid's package list"
		return 1
	fi
	pkg=$(private_apt sid "$lines" apt-cache search --names-only '^linux-source-[0-9]+\.[0-9]+$' |
		awk '{print $1}' | sort -V | tail -n 1)
	if [ -z "$pkg" ]; then
		warn "UPSTREAM KERNEL UNAVAILABLE: no linux-source-7.x in Debian sid"
		return 1
	fi
	ver=${pkg#linux-source-}
	dir=$SRC/linux-$ver
	if [ ! -f "$dir/.kite-unpacked" ]; then
		rm -rf "$dl" "$dir"
		mkdir -p "$dl"
		log "downloading $pkg from Debian sid"
		if ! (cd "$dl" && private_apt sid "$lines" apt-get download "$pkg" >/dev/null); then
			warn "UPSTREAM KERNEL UNAVAILABLE: download of $pkg failed"
			rm -rf "$dl"
			return 1
		fi
		dpkg-deb -x "$dl"/*.deb "$dl/x"
		mkdir -p "$dir"
		tar -C "$dir" --strip-components=1 -xJf "$dl/x/usr/src/$pkg.tar.xz"
		touch "$dir/.kite-unpacked"
		rm -rf "$dl"
	fi
	echo "$dir"
}

# NFS's user space for the guests (test-nfs.sh): rpc.nfsd, exportfs,
# rpc.mountd, mount.nfs4. Unpacked only, so that no NFS service is set up
# or started on the host. Prints the directory.
fetch_nfs_utils() {
	local dir=$SRC/nfs-utils dl=$SRC/nfs-utils-dl lines deb
	if [ ! -f "$dir/.kite-unpacked" ]; then
		lines="deb [signed-by=$KEYRING] $MIRROR bookworm main
deb [signed-by=$KEYRING] $SECURITY_MIRROR bookworm-security main"
		apt_list_fresh bookworm "$lines"
		rm -rf "$dl" "$dir"
		mkdir -p "$dl" "$dir"
		log "downloading nfs-common and nfs-kernel-server (bookworm)"
		(cd "$dl" && private_apt bookworm "$lines" apt-get download \
			nfs-common nfs-kernel-server >/dev/null)
		for deb in "$dl"/*.deb; do dpkg-deb -x "$deb" "$dir"; done
		touch "$dir/.kite-unpacked"
		rm -rf "$dl"
	fi
	echo "$dir"
}

[ $# -gt 0 ] || set -- qemu rdma-core linux-target linux-upstream
for what in "$@"; do
	case $what in
	qemu) fetch_qemu ;;
	rdma-core) fetch_rdma_core ;;
	linux-target) fetch_linux_target ;;
	linux-upstream) fetch_linux_upstream ;;
	nfs-utils) fetch_nfs_utils ;;
	*) die "unknown source: $what" ;;
	esac
done
