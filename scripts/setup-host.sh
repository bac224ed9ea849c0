#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Install every Debian package the Kite build and tests need, and the
# packages named as arguments (what one tool alone needs: the benchmark's
# gnuplot). Idempotent: does nothing when everything is already installed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKGS=(
	# kernel module builds, the guest kernel, checkpatch/kunit sources
	"linux-headers-${KITE_KVER_SERIES}-amd64" "linux-image-${KITE_KVER_SERIES}-amd64"
	"linux-source-${KITE_KVER_SERIES}" build-essential bc bison flex libelf-dev
	libssl-dev dwarves kmod sparse xz-utils python3 rsync perl
	# VM harness: initramfs and guest tools
	busybox-static cpio iproute2 ethtool pciutils ibverbs-utils rdmacm-utils
	perftest procps socat iputils-ping nvme-cli fio
	# VM harness: UCX, an application that picks transports by the verbs
	ucx-utils
	# VM harness: decoding the wire's packet captures
	tshark
	# VM harness: the libraries of the nfs-utils the NFS guests run
	# (fetch-sources.sh nfs-utils unpacks them; they are not installed)
	libtirpc3 libwrap0
	# QEMU 7.2 build
	dpkg-dev ninja-build pkg-config libglib2.0-dev libpixman-1-dev zlib1g-dev
	libattr1-dev libcap-ng-dev python3-venv seabios ipxe-qemu qemu-system-data meson
	libfdt-dev
	# rdma-core build
	cmake libnl-3-dev libnl-route-3-dev libudev-dev libsystemd-dev libdrm-dev
	python3-dev cython3
	# the kite-dkms package and its test (scripts/build-deb.sh, VM group dkms)
	dkms
	"$@"
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	log "host packages: all installed"
	exit 0
fi
log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The lists may be stale or absent on a fresh machine.
apt-get -q update >/dev/null
apt-get -q -y install --no-install-recommends "${missing[@]}"
