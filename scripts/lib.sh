# SPDX-License-Identifier: GPL-2.0-only
# Common helpers for the Kite scripts. Source this file; do not run it.

KITE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KITE_CACHE=${KITE_CACHE:-$HOME/.cache/kite}
KITE_JOBS=${KITE_JOBS:-$(nproc)}
# Kernel used for the out-of-tree build and as the VM guest kernel.
KITE_KVER_SERIES=${KITE_KVER_SERIES:-6.12}
QEMU_DEB_VERSION=${QEMU_DEB_VERSION:-1:7.2+dfsg-7+deb12u18}
RDMA_CORE_VERSION=${RDMA_CORE_VERSION:-56.1}
export KITE_ROOT KITE_CACHE KITE_JOBS

mkdir -p "$KITE_CACHE"

log() { printf '[kite] %s\n' "$*" >&2; }
warn() { printf '[kite] WARNING: %s\n' "$*" >&2; }
die() { printf '[kite] ERROR: %s\n' "$*" >&2; exit 1; }

# The newest installed Debian 6.12 kernel release, e.g. 6.12.57+deb12-amd64.
guest_kver() {
	local v
	v=$(ls -1 /lib/modules 2>/dev/null | grep -E "^${KITE_KVER_SERIES//./\\.}\.[0-9]+\+deb[0-9]+-amd64$" | sort -V | tail -n 1)
	[ -n "$v" ] || die "no linux-image-${KITE_KVER_SERIES}-amd64 installed (run scripts/setup-host.sh)"
	echo "$v"
}

# Private apt configuration: sources outside the machine's own apt setup.
# usage: private_apt NAME 'sources.list lines' apt-get|apt-cache ARGS...
private_apt() {
	local name=$1 line=$2 cmd=$3 dir
	shift 3
	dir=$KITE_CACHE/apt/$name
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/parts"
	printf '%s\n' "$line" >"$dir/sources.list"
	"$cmd" -q -o Dir::Etc::SourceList="$dir/sources.list" \
		-o Dir::Etc::SourceParts="$dir/parts" \
		-o Dir::State::Lists="$dir/lists" \
		-o Dir::Cache="$dir/cache" \
		-o Dir::Cache::pkgcache="" -o Dir::Cache::srcpkgcache="" \
		-o APT::Sandbox::User=root "$@"
}

# A stamp that changes when any of the given files change.
inputs_hash() {
	# Paths relative to the checkout: every clone of one commit agrees.
	find "$@" -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum |
		sed "s|  $KITE_ROOT/|  |" | sha256sum | cut -c1-16
}

# overlay_changed STAMPFILE FILE...: whether FILEs (the part of this
# checkout a cached build takes in through symlinks) differ in content from
# those of the build's last success, recorded in STAMPFILE (overlay_built).
# ninja and make compare times only: the files of another checkout of the
# same cache (a clone, a worktree) can be older than the build's products
# and would not be compiled again.
overlay_changed() {
	local stamp=$1
	shift
	[ "$(cat "$stamp" 2>/dev/null)" != "$(inputs_hash "$@")" ]
}

# overlay_built STAMPFILE FILE...: record FILEs' content as built.
overlay_built() {
	local stamp=$1
	shift
	inputs_hash "$@" >"$stamp"
}

# KITE_COMPAT_BACKPORT: sources written for a kernel interface that the
# compat header cannot provide (struct members, op signatures), as "probe
# patch": a kernel without the probe's KITE_HAVE_* builds the source with
# the patch (compat/backport/) applied to the build's copy; the
# repository's source stays on the newest interface.
KITE_COMPAT_BACKPORT=("rdma_counter_init compat/backport/rdma_counter_init.patch")

# compat_backport AUTOCONF TREE: apply to the copy of the sources in TREE
# (the directory holding drivers/) the backports AUTOCONF's kernel needs.
# A patch already applied is left as it is.
compat_backport() {
	local entry probe patch
	for entry in "${KITE_COMPAT_BACKPORT[@]}"; do
		read -r probe patch <<<"$entry"
		grep -q "^#define KITE_HAVE_${probe^^} 1" "$1" && continue
		patch -p1 -R -s -f --dry-run -d "$2" <"$KITE_ROOT/$patch" >/dev/null 2>&1 && continue
		patch -p1 -s -N -d "$2" <"$KITE_ROOT/$patch" ||
			die "backport $patch does not apply to $2"
	done
}
