#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The upstream submissions, as git format-patch series with cover letters:
#   linux/      the drivers against the newest kernel source (Debian sid's
#               linux-source-7.x), the files and their content being what
#               scripts/overlay-kernel.sh puts into a kernel tree;
#   rdma-core/  libkite against rdma-core $RDMA_CORE_VERSION, the content
#               being what scripts/overlay-rdma-core.py --copy puts into an
#               rdma-core tree.
# series/NAME/NN-*.txt describe the patches: the commit message, then a line
# "Files:" and the patch's files (paths, directories ending in "/", or
# globs). Every file the overlay adds or changes must belong to exactly one
# patch; series/NAME/cover.txt is the cover letter (subject, blank line,
# text). Author and Signed-off-by: the M: line of the repository's
# MAINTAINERS entry; dates: the repository's last commit, so the same
# sources give the same series.
#
# Prints the output directory as the last line on stdout.
# Exit status: 0 written, 1 failed, 2 the newest kernel source is
# unavailable (the rdma-core series is written all the same).
#
# usage: make-patches.sh [OUTDIR]   (default: out/patches)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

outdir=${1:-$KITE_ROOT/out/patches}

ident=$(sed -n 's/^M:\t//p' "$KITE_ROOT/MAINTAINERS" | head -n 1)
[ -n "$ident" ] || die "MAINTAINERS has no M: line"
date=$(git -C "$KITE_ROOT" log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)
export GIT_AUTHOR_NAME=${ident% <*} GIT_AUTHOR_EMAIL=${ident##*<}
GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL%>}
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date

# spec_files SPEC: the patterns after the "Files:" line.
spec_files() { sed -n '/^Files:$/,$p' "$1" | sed '1d;/^$/d'; }
# spec_message SPEC: the commit message before it.
spec_message() { sed '/^Files:$/,$d' "$1" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }
# matches FILE PATTERN: PATTERN is a glob, or a directory ending in "/".
# shellcheck disable=SC2053 # a glob
matches() {
	if [[ $2 == */ ]]; then
		[[ $1 == "$2"* ]]
	else
		[[ $1 == $2 ]]
	fi
}

# make_series NAME WORK PREFIX BASEDESC: the series from WORK/base (the
# files before) to WORK/final (after), with series/NAME's descriptions,
# into $outdir/NAME.
make_series() {
	local name=$1 work=$2 prefix=$3 basedesc=$4
	local base=$2/base final=$2/final repo=$2/repo specs=$KITE_ROOT/series/$1
	local changed spec f p n nspecs=0 orphans out=$outdir/$1 cover
	local -a pats
	local -A owner=()

	changed=$(cd "$final" && find . -type f | sed 's|^\./||' | LC_ALL=C sort |
		while read -r f; do cmp -s "$final/$f" "$base/$f" || echo "$f"; done)
	rm -rf "$repo"
	git init -q "$repo"
	cp -a "$base/." "$repo/"
	git -C "$repo" add -A
	git -C "$repo" commit -q -m "$basedesc: the files the series changes"
	git -C "$repo" tag base

	for spec in "$specs"/[0-9][0-9]-*.txt; do
		nspecs=$((nspecs + 1))
		mapfile -t pats < <(spec_files "$spec")
		[ ${#pats[@]} -gt 0 ] || die "$name/$(basename "$spec"): no Files:"
		while read -r f; do
			for p in "${pats[@]}"; do
				matches "$f" "$p" || continue
				[ -z "${owner[$f]:-}" ] ||
					die "$f belongs to both ${owner[$f]} and $(basename "$spec")"
				owner[$f]=$(basename "$spec")
			done
		done <<<"$changed"
		n=0
		for f in "${!owner[@]}"; do
			[ "${owner[$f]}" = "$(basename "$spec")" ] || continue
			mkdir -p "$repo/$(dirname "$f")"
			cp -p "$final/$f" "$repo/$f"
			git -C "$repo" add "$f"
			n=$((n + 1))
		done
		[ "$n" -gt 0 ] || die "$name/$(basename "$spec") has no files"
		{ spec_message "$spec"; printf '\nSigned-off-by: %s\n' "$ident"; } |
			git -C "$repo" commit -q -F -
	done
	[ "$nspecs" -gt 0 ] || die "no patch descriptions in $specs"
	orphans=$(while read -r f; do [ -n "${owner[$f]:-}" ] || echo "$f"; done <<<"$changed")
	[ -z "$orphans" ] || die "files in no patch of series/$name: $(echo "$orphans" | xargs)"
	# The series ends where the overlay does.
	diff -r -x .git "$repo" "$final" >&2 || die "series/$name does not end at the overlaid tree"

	rm -rf "$out"
	mkdir -p "$out"
	git -C "$repo" format-patch -q --cover-letter --no-signature \
		--subject-prefix="$prefix" -o "$out" base..HEAD
	cover=$(echo "$out"/0000-cover-letter.patch)
	[ -f "$cover" ] || die "format-patch wrote no cover letter"
	python3 - "$cover" "$specs/cover.txt" "$basedesc" <<'PY'
import sys
path, text, base = sys.argv[1:]
subject, _, blurb = open(text).read().partition("\n\n")
blurb = blurb.rstrip() + f"\n\nBased on {base}.\n"
s = open(path).read()
for old, new in (("*** SUBJECT HERE ***", subject.strip()), ("*** BLURB HERE ***", blurb.rstrip())):
    if old not in s:
        sys.exit(f"{path}: no '{old}'")
    s = s.replace(old, new)
open(path, "w").write(s)
PY
	log "$(find "$out" -name '*.patch' | wc -l) files in $out"
}

# prepare WORK TREE FILES OVERLAY...: WORK/base, TREE's FILES as they were
# before the overlay (the cached trees carry it; OVERLAY... --remove takes
# it out), and WORK/final, a copy of the base for the overlay to go into.
prepare() {
	local work=$1 tree=$2 files=$3 f
	shift 3
	rm -rf "$work/base" "$work/final"
	for f in $files; do
		mkdir -p "$work/base/$(dirname "$f")"
		cp "$tree/$f" "$work/base/$f"
	done
	"$@" --remove "$work/base"
	# shellcheck disable=SC2086 # files: one word per file
	if (cd "$work/base" && grep -qiw kite $files); then
		die "the base files still mention Kite after $* --remove"
	fi
	cp -a "$work/base" "$work/final"
}

mkdir -p "$outdir"
status=0

# --- rdma-core ---------------------------------------------------------------
"$KITE_ROOT/scripts/fetch-sources.sh" rdma-core
rtree=$KITE_CACHE/src/rdma-core-$RDMA_CORE_VERSION
work=$KITE_CACHE/build/series-rdma-core-$RDMA_CORE_VERSION
mkdir -p "$work"
exec 8>"$work.lock"
flock 8
# The files overlay-rdma-core.py edits in place.
RHOOKED="CMakeLists.txt kernel-headers/CMakeLists.txt kernel-headers/rdma/ib_user_ioctl_verbs.h
libibverbs/verbs.h README.md MAINTAINERS debian/control debian/copyright redhat/rdma-core.spec"
prepare "$work" "$rtree" "$RHOOKED" python3 "$KITE_ROOT/scripts/overlay-rdma-core.py"
python3 "$KITE_ROOT/scripts/overlay-rdma-core.py" --copy "$work/final"
make_series rdma-core "$work" "PATCH rdma-core" "rdma-core $RDMA_CORE_VERSION"

# --- linux -------------------------------------------------------------------
if tree=$("$KITE_ROOT/scripts/fetch-sources.sh" linux-upstream); then
	work=$KITE_CACHE/build/series-$(basename "$tree")
	mkdir -p "$work"
	exec 9>"$work.lock"
	flock 9
	# The files overlay-kernel.sh edits in place.
	HOOKED="MAINTAINERS drivers/net/ethernet/Kconfig drivers/net/ethernet/Makefile
drivers/infiniband/Kconfig drivers/infiniband/hw/Makefile
include/uapi/rdma/ib_user_ioctl_verbs.h Documentation/infiniband/index.rst
Documentation/networking/device_drivers/ethernet/index.rst"
	prepare "$work" "$tree" "$HOOKED" "$KITE_ROOT/scripts/overlay-kernel.sh"
	"$KITE_ROOT/scripts/overlay-kernel.sh" "$work/final"
	make_series linux "$work" "PATCH rdma-next" \
		"Linux $(make -s -C "$tree" kernelversion) (the source of Debian's linux-source package)"
else
	warn "no linux series: the newest kernel source is unavailable"
	status=2
fi
echo "$outdir"
exit "$status"
