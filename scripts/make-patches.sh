#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The upstream submission: a git format-patch series of the drivers against
# the newest kernel source (Debian sid's linux-source-7.x), one patch per
# layer as series/linux/NN-*.txt describe them (the commit message, then
# "Files:" and the patch's files: paths, directories ending in "/" or
# globs). The files and their final content are what scripts/overlay-kernel.sh
# puts into a kernel tree; every file it adds or changes must belong to
# exactly one patch. series/linux/cover.txt is the cover letter. Author and
# Signed-off-by: the M: line of the repository's MAINTAINERS entry; dates:
# the repository's last commit, so the same sources give the same series.
#
# Prints the output directory as the last line on stdout.
# Exit status: 0 written, 1 failed, 2 the upstream source is unavailable.
#
# usage: make-patches.sh [OUTDIR]   (default: out/patches/linux)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$("$KITE_ROOT/scripts/fetch-sources.sh" linux-upstream) || exit 2
outdir=${1:-$KITE_ROOT/out/patches/linux}
work=$KITE_CACHE/build/series-$(basename "$tree")
specs=$KITE_ROOT/series/linux

# The files overlay-kernel.sh edits in place in a tree.
HOOKED="MAINTAINERS drivers/net/ethernet/Kconfig drivers/net/ethernet/Makefile
drivers/infiniband/Kconfig drivers/infiniband/hw/Makefile
include/uapi/rdma/ib_user_ioctl_verbs.h Documentation/infiniband/index.rst
Documentation/networking/device_drivers/ethernet/index.rst"

ident=$(sed -n 's/^M:\t//p' "$KITE_ROOT/MAINTAINERS" | head -n 1)
[ -n "$ident" ] || die "MAINTAINERS has no M: line"
date=$(git -C "$KITE_ROOT" log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)
export GIT_AUTHOR_NAME=${ident% <*} GIT_AUTHOR_EMAIL=${ident##*<}
GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL%>}
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date

mkdir -p "$work"
exec 9>"$work.lock"
flock 9

# The base: the tree's versions of the files the overlay edits, as they
# were before it (the tree in the cache carries the overlay).
base=$work/base final=$work/final repo=$work/repo
rm -rf "$base" "$final" "$repo"
for f in $HOOKED; do
	mkdir -p "$base/$(dirname "$f")"
	cp "$tree/$f" "$base/$f"
done
"$KITE_ROOT/scripts/overlay-kernel.sh" --remove "$base"
# shellcheck disable=SC2086 # HOOKED: one word per file
if (cd "$base" && grep -qiw kite $HOOKED); then
	die "the base files still mention Kite after overlay-kernel.sh --remove"
fi
cp -a "$base" "$final"
"$KITE_ROOT/scripts/overlay-kernel.sh" "$final"

# Every file the overlay adds or changes.
changed=$(cd "$final" && find . -type f | sed 's|^\./||' | LC_ALL=C sort |
	while read -r f; do cmp -s "$final/$f" "$base/$f" || echo "$f"; done)

git init -q "$repo"
cp -a "$base/." "$repo/"
git -C "$repo" add -A
git -C "$repo" commit -q -m "Linux $(basename "$tree"): the files the series changes"
git -C "$repo" tag base

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

declare -A owner
nspecs=0
for spec in "$specs"/[0-9][0-9]-*.txt; do
	nspecs=$((nspecs + 1))
	mapfile -t pats < <(spec_files "$spec")
	[ ${#pats[@]} -gt 0 ] || die "$(basename "$spec"): no Files:"
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
		cp "$final/$f" "$repo/$f"
		git -C "$repo" add "$f"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || die "$(basename "$spec") has no files"
	{ spec_message "$spec"; printf '\nSigned-off-by: %s\n' "$ident"; } |
		git -C "$repo" commit -q -F -
done
[ "$nspecs" -gt 0 ] || die "no patch descriptions in $specs"
orphans=$(while read -r f; do [ -n "${owner[$f]:-}" ] || echo "$f"; done <<<"$changed")
[ -z "$orphans" ] || die "files in no patch of series/linux: $(echo $orphans)"
# The series ends where the overlay does.
diff -r -x .git "$repo" "$final" >&2 || die "the series does not end at the overlaid tree"

rm -rf "$outdir"
mkdir -p "$outdir"
git -C "$repo" format-patch -q --cover-letter --no-signature \
	--subject-prefix="PATCH rdma-next" -o "$outdir" base..HEAD
cover=$(echo "$outdir"/0000-cover-letter.patch)
[ -f "$cover" ] || die "format-patch wrote no cover letter"
python3 - "$cover" "$specs/cover.txt" "$(make -s -C "$tree" kernelversion)" <<'PY'
import sys
path, text, tree = sys.argv[1:]
subject, _, blurb = open(text).read().partition("\n\n")
blurb = blurb.rstrip() + f"\n\nBased on Linux {tree} (the source of Debian's linux-source package).\n"
s = open(path).read()
for old, new in (("*** SUBJECT HERE ***", subject.strip()), ("*** BLURB HERE ***", blurb.rstrip())):
    if old not in s:
        sys.exit(f"{path}: no '{old}'")
    s = s.replace(old, new)
open(path, "w").write(s)
PY
log "$(ls "$outdir" | wc -l) files in $outdir"
echo "$outdir"
