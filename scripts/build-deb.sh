#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the Debian package of the drivers for a host with a Kite NIC:
# kite-dkms, the sources of kite_en and kite_ib with their compat layer
# under /usr/src/kite-VERSION, built and installed by DKMS for every
# kernel with headers (and again for each new one). Into
# $KITE_CACHE/build/deb; prints the package's path as its last line.
#
# usage: build-deb.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# 0.1+git<commit>: a Debian version that orders by nothing but stays
# unique per commit; KITE_VERSION overrides it.
ver=${KITE_VERSION:-0.1+git$(git -C "$KITE_ROOT" rev-parse --short=8 HEAD 2>/dev/null || echo 0)}
out=$KITE_CACHE/build/deb
root=$out/kite-dkms
src=$root/usr/src/kite-$ver
rm -rf "$root"
mkdir -p "$src/scripts" "$root/DEBIAN" "$root/usr/share/doc/kite-dkms"

# The sources DKMS builds: what Kbuild reaches, the compat layer and the
# scripts that run the probes and apply the backports.
cp -a "$KITE_ROOT/Kbuild" "$KITE_ROOT/include" "$KITE_ROOT/compat" "$src/"
mkdir -p "$src/drivers/net/ethernet" "$src/drivers/infiniband/hw"
cp -a "$KITE_ROOT/drivers/net/ethernet/kite" "$src/drivers/net/ethernet/"
cp -a "$KITE_ROOT/drivers/infiniband/hw/kite" "$src/drivers/infiniband/hw/"
cp -a "$KITE_ROOT/scripts/lib.sh" "$KITE_ROOT/scripts/compat-probe.sh" \
	"$KITE_ROOT/scripts/dkms-make.sh" "$src/scripts/"
sed "s/@VERSION@/$ver/" "$KITE_ROOT/packaging/dkms/dkms.conf.in" >"$src/dkms.conf"

cat >"$root/DEBIAN/control" <<CONTROL
Package: kite-dkms
Version: $ver
Architecture: all
Section: kernel
Priority: optional
Maintainer: Kite developers <kite@localhost>
Depends: dkms (>= 3.0), bash, make
Description: Kite RoCEv2 NIC drivers in DKMS source form
 kite_en, the PCI and Ethernet driver of the Kite RoCEv2 NIC, and kite_ib,
 its RDMA driver on the auxiliary bus. DKMS builds them against the
 headers of each installed kernel (Linux 6.12 or newer) into
 /lib/modules/<release>/updates/dkms.
CONTROL
# Debian's dh_dkms maintainer scripts, written out.
cat >"$root/DEBIAN/postinst" <<POSTINST
#!/bin/sh
set -e
case "\$1" in
configure)
	/usr/lib/dkms/common.postinst kite $ver "" "" "\$2"
	;;
esac
POSTINST
cat >"$root/DEBIAN/prerm" <<PRERM
#!/bin/sh
set -e
case "\$1" in
remove|upgrade|deconfigure)
	if [ "\$(dkms status -m kite -v $ver)" ]; then
		dkms remove -m kite -v $ver --all
	fi
	;;
esac
PRERM
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm"
cat >"$root/usr/share/doc/kite-dkms/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: kite

Files: *
License: GPL-2.0-only
 On Debian systems the full text of the GNU General Public License
 version 2 is in /usr/share/common-licenses/GPL-2.
COPYRIGHT
find "$root" -name '*.o' -o -name '*.ko' -o -name '.*.cmd' | xargs -r rm -f
deb=$out/kite-dkms_${ver}_all.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
