#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Summarise a results directory: one row per guest boot and per test
# program, and a last line "N passed, N failed, N skipped".
#
# Usage: scripts/summarize.sh [-h] RESULTS [DIR...]
#
#   RESULTS  a results directory from scripts/run-tests.sh or scripts/ci.sh
#   DIR      subdirectories to count (default: all of them, sorted)
#
# Each subdirectory is a guest (verdict.txt, TEST.tap, TEST.rc split from
# run_kselftest.sh's kselftest.tap by scripts/run-guest.sh) or the host
# checks (TEST.tap, TEST.rc).  A guest's boot counts as one case: it fails
# when the run failed for any reason but a failed test (panic, splat,
# timeout, topology mismatch).  Each TAP "ok"/"not ok" line at the top
# level of a TEST.tap counts as one case, "# SKIP" ones as skipped; a
# program that printed no result line counts once, by its exit status.
# Under the table, each failed case gets one "FAILED" line, in full (up
# to 20 of them), so that the tail of a CI log says what failed.
# Writes RESULTS/summary.txt; exits 1 when anything failed.
set -euo pipefail

usage() {
	sed -n '3,22s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
[[ ${1:-} == -h || ${1:-} == --help ]] && usage 0
[[ $# -ge 1 ]] || usage 2
res=$1
shift
[[ -d $res ]] || { echo "error: no results directory '$res'" >&2; exit 1; }
dirs=("$@")
if [[ ${#dirs[@]} -eq 0 ]]; then
	mapfile -t dirs < <(find "$res" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
fi

tp=0 tf=0 ts=0
failed=()
fmt='%-16s %-20s %5s %5s %5s  %s\n'
{
	# shellcheck disable=SC2059 # the format is ours
	printf "$fmt" WHERE TEST PASS FAIL SKIP NOTE
	for d in "${dirs[@]}"; do
		dir=$res/$d
		[[ -d $dir ]] || continue
		busy=
		[[ -f $dir/host-busy.txt ]] && busy="($(cat "$dir/host-busy.txt"))"
		if [[ -f $dir/verdict.txt ]]; then
			v=$(cat "$dir/verdict.txt")
			if [[ $v == PASS* || $v == *"tests failed:"* ]]; then
				# shellcheck disable=SC2059
				printf "$fmt" "$d" boot 1 0 0 "$busy"
				tp=$((tp + 1))
			else
				# shellcheck disable=SC2059
				printf "$fmt" "$d" boot 0 1 0 "${v#FAIL "$d": }"
				failed+=("$d boot: $v")
				tf=$((tf + 1))
			fi
		elif [[ -f $dir/qemu.cmd ]]; then
			# shellcheck disable=SC2059
			printf "$fmt" "$d" boot 0 1 0 "no verdict"
			failed+=("$d boot: no verdict.txt")
			tf=$((tf + 1))
		fi
		for tap in "$dir"/*.tap; do
			[[ -f $tap ]] || continue
			t=$(basename "$tap" .tap)
			# run_kselftest.sh's whole TAP: counted through the
			# TEST.tap files split from it.
			[[ $t == kselftest ]] && continue
			rc=$(cat "$dir/$t.rc" 2>/dev/null || echo missing)
			lines=$(tr -d '\r' <"$tap" | grep -E '^(not )?ok [0-9]+' || true)
			p=0 f=0 s=0 note=
			if [[ -n $lines ]]; then
				s=$(grep -ciE '^ok [0-9]+.*# *skip' <<<"$lines" || true)
				p=$(($(grep -c '^ok ' <<<"$lines" || true) - s))
				f=$(grep -c '^not ok ' <<<"$lines" || true)
				if [[ $f -eq 0 && $rc != 0 && $rc != 4 ]]; then
					f=1 note="exit $rc"
				fi
			else
				case $rc in
				0) p=1 ;;
				4) s=1 ;;
				*) f=1 note="exit $rc, no TAP result" ;;
				esac
			fi
			if [[ $f -gt 0 ]]; then
				# With the last "file.c:LINE:" message of the case, if any.
				mapfile -t -O "${#failed[@]}" failed < <(tr -d '\r' <"$tap" | awk -v p="$d/$t: " '
					/^# +RUN / { m = "" }
					/^# .*\.c:[0-9]+:/ { m = $0; sub(/^# .*\/?[^\/]*\.c:[0-9]+:/, "", m) }
					/^not ok / { print p $0 (m != "" ? " -- " m : ""); m = "" }')
				[[ -n $note ]] && failed+=("$d/$t: $note")
			fi
			# grep -m1 reads the file itself: behind a writer (tr) it
			# would end the pipe early, and pipefail would take the
			# writer's SIGPIPE for a failure.
			[[ $f -gt 0 && -z $note ]] &&
				note=$(grep -m1 '^not ok' "$tap" | tr -d '\r' | cut -c1-60)
			[[ $s -gt 0 && -z $note ]] &&
				note=$(grep -m1 -ioE 'skip.*' "$tap" | tr -d '\r' | cut -c1-60)
			# shellcheck disable=SC2059
			printf "$fmt" "$d" "$t" "$p" "$f" "$s" "$note"
			tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
		done
	done
	for ((i = 0; i < ${#failed[@]} && i < 20; i++)); do
		echo "FAILED ${failed[i]}" | cut -c1-400
	done
	[[ ${#failed[@]} -le 20 ]] || echo "FAILED ... and $((${#failed[@]} - 20)) more"
	echo "$tp passed, $tf failed, $ts skipped"
} >"$res/summary.txt"
cat "$res/summary.txt"
[[ $tf -eq 0 ]]
