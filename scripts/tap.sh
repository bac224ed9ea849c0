# SPDX-License-Identifier: GPL-2.0-only
# Test result bookkeeping for the Kite runners. Source this file.
# Every result is printed and appended, as a TAP line, to $TAP_FILE.

: "${TAP_N:=0}" "${TAP_PASS:=0}" "${TAP_FAIL:=0}" "${TAP_SKIP:=0}" "${TAP_TODO:=0}"

tap_init() {
	TAP_FILE=$1
	TAP_N=0 TAP_PASS=0 TAP_FAIL=0 TAP_SKIP=0 TAP_TODO=0
	mkdir -p "$(dirname "$TAP_FILE")"
	echo "TAP version 13" >"$TAP_FILE"
}

tap_line() { echo "$1" | tee -a "$TAP_FILE"; }
tap_ok() { TAP_N=$((TAP_N + 1)); TAP_PASS=$((TAP_PASS + 1)); tap_line "ok $TAP_N - $1"; }
tap_not_ok() { TAP_N=$((TAP_N + 1)); TAP_FAIL=$((TAP_FAIL + 1)); tap_line "not ok $TAP_N - $1"; }
tap_skip() { TAP_N=$((TAP_N + 1)); TAP_SKIP=$((TAP_SKIP + 1)); tap_line "ok $TAP_N - $1 # SKIP $2"; }
# tap_todo STATUS NAME REASON: a known gap (TAP's TODO directive): shown
# and counted on its own, not as a failure; STATUS 0 when it passes anyway.
tap_todo() {
	local r=ok
	[ "${1:-0}" = 0 ] || r="not ok"
	TAP_N=$((TAP_N + 1))
	TAP_TODO=$((TAP_TODO + 1))
	tap_line "$r $TAP_N - $2 # TODO $3"
}

# tap_result STATUS NAME: ok when STATUS is 0.
tap_result() {
	if [ "${1:-0}" = 0 ]; then tap_ok "$2"; else tap_not_ok "$2"; fi
}

# tap_import FILE PREFIX: record the "[not ]ok [N] - X" lines of FILE, with
# their SKIP and TODO directives, and its "# " comment lines (figures).
tap_import() {
	local line re='^(not )?ok( [0-9]+)? - (.*)$'
	[ -f "$1" ] || return 0
	while IFS= read -r line; do
		case $line in "# "*) tap_line "# $2${line#\# }"; continue ;; esac
		[[ $line =~ $re ]] || continue
		case ${BASH_REMATCH[3]} in
		*"# SKIP"*) tap_skip "$2${BASH_REMATCH[3]%% # SKIP*}" "${BASH_REMATCH[3]#*# SKIP }" ;;
		*"# TODO"*) tap_todo "${BASH_REMATCH[1]:+1}" "$2${BASH_REMATCH[3]%% # TODO*}" \
			"${BASH_REMATCH[3]#*# TODO }" ;;
		*) tap_result "${BASH_REMATCH[1]:+1}" "$2${BASH_REMATCH[3]}" ;;
		esac
	done <"$1"
}

# tap_finish: close the TAP file; print the summary line; fail if any failed.
tap_finish() {
	local summary="$TAP_PASS passed, $TAP_FAIL failed"
	[ "$TAP_SKIP" -gt 0 ] && summary="$summary, $TAP_SKIP skipped"
	[ "$TAP_TODO" -gt 0 ] && summary="$summary, $TAP_TODO todo (known gaps, # TODO)"
	echo "1..$TAP_N" >>"$TAP_FILE"
	# The failures again at the end, where a reader of only the output's
	# tail (a CI log cut short) still finds them.
	if [ "$TAP_FAIL" -gt 0 ]; then
		echo "# the $TAP_FAIL failed:"
		grep '^not ok' "$TAP_FILE" | grep -v ' # TODO' | sed 's/^/#   /'
	fi
	echo "# results (TAP): $TAP_FILE"
	echo "$summary"
	[ "$TAP_FAIL" = 0 ]
}
