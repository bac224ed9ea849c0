#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Check the upstream series (scripts/make-patches.sh) patch by patch, as a
# maintainer applying them would.
#
# linux/: on a copy of the newest kernel source as Debian ships it (hard
# links to the cached tree, with the overlay and the debug kernel's patches
# taken out), each patch must
#   - apply (git apply),
#   - pass checkpatch --strict of the newest kernel and of the target
#     kernel (6.12) with no finding,
#   - build at W=1 with no warning: every C file and header the patch adds
#     is compiled (a header on its own), against the tree as it stands
#     after the patch; the patch that hooks the drivers into Kconfig and
#     the Makefiles builds both driver directories in the tree, KUnit
#     tests included.
# checkpatch's "does MAINTAINERS need updating?" is answered by the patch
# that adds the MAINTAINERS entry: before it, that one warning is not
# counted; instead every file the series adds must be covered by one of the
# entry's F: patterns.
#
# rdma-core/: on a copy of the rdma-core source (overlay taken out), each
# patch must apply, and each patch that changes more than packaging must
# leave a tree that configures and builds (cmake, ninja) with no warning;
# the provider's man page must format without a groff warning.
#
# Prints TAP lines (no plan); exit status 0 when all passed, 1 when any
# failed, 2 when the newest kernel source is unavailable (the rdma-core
# series is checked all the same).
#
# usage: check-patches.sh DIR   (DIR/linux and DIR/rdma-core, as written by
#                                make-patches.sh)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

dir=$(realpath "${1:?usage: $0 DIR}")
failed=0
result() {
	if [ "$1" = 0 ]; then
		echo "ok - $2"
	else
		echo "not ok - $2"
		failed=1
	fi
}
# unlink FILE...: give the copy its own FILEs (they are hard links to the
# cached tree), so that nothing written here reaches it.
unlink_files() {
	local f
	for f; do
		[ -f "$st/$f" ] || continue
		cp -p "$st/$f" "$st/$f.kite-own"
		mv "$st/$f.kite-own" "$st/$f"
	done
}
# patch_files PATCH: the files PATCH touches.
patch_files() { sed -n 's|^+++ b/||p; s|^--- a/||p' "$1" | sort -u; }
# patch_subject PATCH: "N/M subject", from its (possibly folded) Subject:.
patch_subject() {
	awk '/^Subject: / { s = $0; getline; while (/^ /) { s = s $0; getline } print s; exit }' "$1" |
		sed 's/^Subject: \[PATCH[^]]* \([0-9]*\/[0-9]*\)\] /\1 /'
}
# new_files PATCH: the files PATCH creates.
new_files() { awk '/^diff --git / { f = substr($4, 3) } /^new file mode/ { print f }' "$1"; }

check_linux() {
	local series=$dir/linux tree target work st out p i name rc t cp_out blog
	local maint_at applied heading f ok pat scratch b objs sym
	local -a files new added patches ignore srcs pats
	tree=$("$KITE_ROOT/scripts/fetch-sources.sh" linux-upstream) || return 2
	target=$("$KITE_ROOT/scripts/fetch-sources.sh" linux-target) ||
		die "linux-source-$KITE_KVER_SERIES unavailable (its checkpatch is needed)"
	work=$KITE_CACHE/build/series-$(basename "$tree")
	st=$work/tree out=$work/out
	mkdir -p "$work"
	exec 9>"$work.check.lock"
	flock 9

	# The pristine tree, as hard links.
	log "copying $(basename "$tree") to $st (hard links)"
	rm -rf "$st"
	cp -al "$tree" "$st"
	rm -f "$st/.kite-unpacked"
	"$KITE_ROOT/scripts/overlay-kernel.sh" --remove "$st"
	for p in $(printf '%s\n' "$KITE_ROOT"/patches/linux/*.patch | sort -r); do
		[ -f "$p" ] || continue
		mapfile -t files < <(patch_files "$p")
		unlink_files "${files[@]}"
		if patch -d "$st" -p1 -R --dry-run -s -f <"$p" >/dev/null 2>&1; then
			patch -d "$st" -p1 -R -s -f <"$p"
		fi
	done

	if [ ! -f "$out/.config" ] || [ ! -x "$out/scripts/mod/modpost" ]; then
		log "configuring and preparing $out"
		rm -rf "$out"
		mkdir -p "$out"
		make -C "$st" O="$out" x86_64_defconfig >/dev/null
		"$st/scripts/config" --file "$out/.config" -e PCI -e NET -e INET \
			-e ETHERNET -m INFINIBAND -e INFINIBAND_USER_ACCESS -e KUNIT
		make -C "$st" O="$out" olddefconfig >/dev/null
		make -C "$st" O="$out" -j"$KITE_JOBS" modules_prepare >"$work/prepare.log" 2>&1 ||
			{ tail -n 30 "$work/prepare.log" >&2; die "modules_prepare failed"; }
	fi

	mapfile -t patches < <(find "$series" -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-*' | sort)
	[ ${#patches[@]} -gt 0 ] || die "no patches in $series"
	maint_at=
	for i in "${!patches[@]}"; do
		grep -q '^+++ b/MAINTAINERS$' "${patches[i]}" && maint_at=$i
	done
	[ -n "$maint_at" ] || result 1 "patches: the series adds a MAINTAINERS entry"
	applied=0

	added=()
	for i in "${!patches[@]}"; do
		p=${patches[i]}
		name=$(patch_subject "$p")
		mapfile -t files < <(patch_files "$p")
		mapfile -t new < <(new_files "$p")
		added+=("${new[@]}")

		unlink_files "${files[@]}"
		rc=0
		(cd "$st" && git apply --whitespace=error-all "$p") >"$work/apply.log" 2>&1 || rc=1
		sed 's/^/# /' "$work/apply.log"
		result "$rc" "patches: $name: applies to $(basename "$tree")"
		[ "$rc" = 0 ] || break
		applied=$((applied + 1))

		ignore=()
		[ -n "$maint_at" ] && [ "$i" -lt "$maint_at" ] && ignore=(--ignore FILE_PATH_CHANGES)
		rc=0
		for t in "$target" "$tree"; do
			cp_out=$(cd "$st" && perl "$t/scripts/checkpatch.pl" --strict --terse \
				--show-types "${ignore[@]}" "$p" 2>&1) || rc=1
			if echo "$cp_out" | grep -qE '(ERROR|WARNING|CHECK):'; then
				rc=1
				echo "$cp_out" | grep -E '(ERROR|WARNING|CHECK):' | sed "s|^|# $(basename "$t"): |"
			fi
		done
		result "$rc" "patches: $name: checkpatch --strict ($(basename "$target") and $(basename "$tree"))"

		blog=$work/build-$i.log
		if grep -q '^+++ b/drivers/.*/kite/Makefile$' "$p"; then
			# The drivers are in the build now: both directories, in tree.
			"$st/scripts/config" --file "$out/.config" -e NET_VENDOR_KITE -m KITE_EN \
				-m INFINIBAND_KITE -e KITE_EN_KUNIT_TEST -e INFINIBAND_KITE_KUNIT_TEST
			rc=0
			(
				make -C "$st" O="$out" olddefconfig &&
				for sym in KITE_EN INFINIBAND_KITE KITE_EN_KUNIT_TEST INFINIBAND_KITE_KUNIT_TEST; do
					grep -E "^CONFIG_$sym=[ym]" "$out/.config" ||
						{ echo "error: CONFIG_$sym is not enabled"; exit 1; }
				done &&
				rm -rf "$out/drivers/net/ethernet/kite" "$out/drivers/infiniband/hw/kite" &&
				make -C "$st" O="$out" -j"$KITE_JOBS" W=1 \
					drivers/net/ethernet/kite/ drivers/infiniband/hw/kite/
			) >"$blog" 2>&1 || rc=1
			grep -E '(warning|error):' "$blog" | sed 's/^/# /' && rc=1
			[ "$rc" = 0 ] || tail -n 20 "$blog" | sed 's/^/# /'
			result "$rc" "patches: $name: both drivers build in tree, W=1, KUnit tests included, no warnings"
			continue
		fi
		# Otherwise: each new C file and header on its own, as objects of a
		# scratch module in a copy of its directory.
		mapfile -t srcs < <(printf '%s\n' "${new[@]}" | grep -E '\.[ch]$' || :)
		[ ${#srcs[@]} -gt 0 ] || continue
		rc=0
		: >"$blog"
		for dir in $(printf '%s\n' "${srcs[@]}" | xargs -n 1 dirname | sort -u); do
			scratch=$work/step/$dir
			rm -rf "$scratch"
			mkdir -p "$scratch"
			find "$st/$dir" -maxdepth 1 -type f -name '*.[ch]' -exec cp -t "$scratch" {} +
			objs=()
			for f in "${srcs[@]}"; do
				[ "$(dirname "$f")" = "$dir" ] || continue
				b=$(basename "$f")
				case $f in
				*.c) objs+=("${b%.c}.o") ;;
				include/uapi/*) echo "#include <${f#include/uapi/}>" >"$scratch/hdrtest_${b%.h}.c"
					objs+=("hdrtest_${b%.h}.o") ;;
				include/*) echo "#include <${f#include/}>" >"$scratch/hdrtest_${b%.h}.c"
					objs+=("hdrtest_${b%.h}.o") ;;
				*) echo "#include \"$b\"" >"$scratch/hdrtest_${b%.h}.c"
					objs+=("hdrtest_${b%.h}.o") ;;
				esac
			done
			printf 'obj-m := kite_step.o\nkite_step-y := %s\n' "${objs[*]}" >"$scratch/Kbuild"
			make -C "$st" O="$out" M="$scratch" -j"$KITE_JOBS" W=1 "${objs[@]}" >>"$blog" 2>&1 || rc=1
		done
		grep -E '(warning|error):' "$blog" | sed 's/^/# /' && rc=1
		[ "$rc" = 0 ] || tail -n 20 "$blog" | sed 's/^/# /'
		result "$rc" "patches: $name: its ${#srcs[@]} new C files and headers compile, W=1, no warnings"
	done

	# The MAINTAINERS entry covers every file the series adds.
	if [ -n "$maint_at" ] && [ "$applied" = ${#patches[@]} ]; then
		heading=$(head -n 1 "$KITE_ROOT/MAINTAINERS")
		mapfile -t pats < <(awk -v h="$heading" '$0 == h { in_e = 1; next }
			in_e && $0 == "" { exit } in_e && /^F:\t/ { print substr($0, 4) }' "$st/MAINTAINERS")
		rc=0
		for f in "${added[@]}"; do
			ok=0
			for pat in "${pats[@]}"; do
				# shellcheck disable=SC2053 # MAINTAINERS patterns are globs
				if [[ $pat == */ && $f == "$pat"* ]] || [[ $f == $pat ]]; then
					ok=1
					break
				fi
			done
			[ "$ok" = 1 ] || { echo "# $f: no F: pattern of '$heading' covers it"; rc=1; }
		done
		[ ${#pats[@]} -gt 0 ] || rc=1
		result "$rc" "patches: the MAINTAINERS entry covers all ${#added[@]} files the series adds"
	fi
	rm -rf "$work/step"
}

check_rdma_core() {
	local series=$dir/rdma-core rtree work st build p name rc blog
	local -a patches files
	"$KITE_ROOT/scripts/fetch-sources.sh" rdma-core
	rtree=$KITE_CACHE/src/rdma-core-$RDMA_CORE_VERSION
	work=$KITE_CACHE/build/series-rdma-core-$RDMA_CORE_VERSION
	st=$work/tree build=$work/build
	mkdir -p "$work"
	exec 8>"$work.check.lock"
	flock 8
	# The pristine tree: a copy (mtimes kept, so the build stays
	# incremental) with the overlay taken out.
	mkdir -p "$st"
	rsync -a --delete "$rtree/" "$st/"
	python3 "$KITE_ROOT/scripts/overlay-rdma-core.py" --remove "$st"

	mapfile -t patches < <(find "$series" -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-*' | sort)
	[ ${#patches[@]} -gt 0 ] || { result 1 "patches: rdma-core: the series has patches"; return; }
	for p in "${patches[@]}"; do
		name=$(patch_subject "$p")
		rc=0
		(cd "$st" && git apply --whitespace=error-all "$p") >"$work/apply.log" 2>&1 || rc=1
		sed 's/^/# /' "$work/apply.log"
		result "$rc" "patches: rdma-core $name: applies to rdma-core $RDMA_CORE_VERSION"
		[ "$rc" = 0 ] || return
		mapfile -t files < <(patch_files "$p" | grep -vE '^(debian|redhat|suse)/' || :)
		[ ${#files[@]} -gt 0 ] || continue
		blog=$work/build.log
		rc=0
		(
			mkdir -p "$build"
			cd "$build"
			if [ ! -f build.ninja ]; then
				cmake -GNinja -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 -DENABLE_STATIC=0 \
					"$st" >cmake.log 2>&1 || { cat cmake.log; exit 1; }
			fi
			ninja -j "$KITE_JOBS"
		) >"$blog" 2>&1 || rc=1
		grep -E '(warning|error):' "$blog" | sed 's/^/# /' && rc=1
		[ "$rc" = 0 ] || tail -n 20 "$blog" | sed 's/^/# /'
		result "$rc" "patches: rdma-core $name: rdma-core builds, no warnings"
	done
	compgen -G "$build/lib/libkite-rdmav*.so" >/dev/null
	result $? "patches: rdma-core: the series builds libkite"
	rc=0
	out=$(LC_ALL=C groff -man -ww -z "$st/providers/kite/man/kite.7" 2>&1) || rc=1
	[ -z "$out" ] || { echo "$out" | sed 's/^/# /'; rc=1; }
	result "$rc" "patches: rdma-core: kite(7) formats without a groff warning"
}

rc=0
check_rdma_core
if [ -d "$dir/linux" ]; then
	check_linux || rc=$?
fi
[ "$rc" = 2 ] && exit 2
exit "$failed"
