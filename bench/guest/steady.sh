#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# In-guest half of bench/steady-state.sh (busybox sh, not bash): the
# "steady state" of Peter Zijlstra's objection to rescheduling an
# ineligible current, measured with RESCHED_INELIGIBLE off and on.
#
# Usage (in the guest): guest-steady.sh REPS SECS SLICES HOGS
#
#   REPS     alternating off/on pairs per setting
#   SECS     seconds of measurement per run
#   SLICES   base slices in ns to set in debugfs, colon-separated
#   HOGS     numbers of equal nice-0 hogs on one CPU, colon-separated
#
# For every base slice and hog count it runs `schedbench runlen` REPS
# times with the flag off and REPS times on, alternating (off,on then
# on,off), under RUN_TO_PARITY, and prints one line per run:
# "slice_ns=S hogs=N ri=0|1 rep=R" and schedbench's key=value words.
# Every flag and the base slice are restored at the end.
# shellcheck disable=SC3040 # busybox ash has pipefail
set -euo pipefail

[ $# -eq 4 ] || { sed -n '3,19s/^# \{0,1\}//p' "$0"; exit 2; }
reps=$1 secs=$2 slices=$3 hogs=$4
HERE=$(dirname "$0")
F=/sys/kernel/debug/sched/features
S=/sys/kernel/debug/sched/base_slice_ns
if [ ! -w "$F" ] || [ ! -w "$S" ]; then
	echo "error: no $F or $S"
	exit 1
fi
grep -qw 'NO_RESCHED_INELIGIBLE\|RESCHED_INELIGIBLE' "$F" ||
	{ echo "error: no RESCHED_INELIGIBLE in $F: not a patched kernel"; exit 4; }
saved_feat=$(cat "$F")
saved_slice=$(cat "$S")
restore() {
	for f in $saved_feat; do
		echo "$f" >"$F" 2>/dev/null || true
	done
	echo "$saved_slice" >"$S"
}
trap restore EXIT

echo RUN_TO_PARITY >"$F"
echo "features: $(cat "$F")"
for slice in $(echo "$slices" | tr : ' '); do
	echo "$slice" >"$S"
	for n in $(echo "$hogs" | tr : ' '); do
		r=0
		while [ "$r" -lt "$reps" ]; do
			order="0 1"
			[ $((r % 2)) -eq 1 ] && order="1 0"
			for ri in $order; do
				if [ "$ri" = 1 ]; then
					echo RESCHED_INELIGIBLE >"$F"
				else
					echo NO_RESCHED_INELIGIBLE >"$F"
				fi
				out=$("$HERE/schedbench" runlen -n "$n" -d "$secs")
				echo "slice_ns=$slice hogs=$n ri=$ri rep=$r $out"
				# The console keeps it if the boot does not finish.
				echo "SCHEDSERIES-RAW slice_ns=$slice hogs=$n ri=$ri rep=$r $out" >/dev/console
			done
			r=$((r + 1))
		done
	done
done
