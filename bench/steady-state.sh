#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The steady state of equal CPU hogs on one CPU, RESCHED_INELIGIBLE off
# against on, in the instruction-counted guest (guests/x86_64-icount.conf:
# one vCPU, guest time follows the instructions executed, not host load).
#
# Usage: bench/steady-state.sh [-h] [-S SEEDS] [-r REPS] [-d SECS]
#                              [-s SLICES] [-n HOGS] [-o RESULTS]
#
#   -S SEEDS   one boot of the kernel per QEMU seed, comma-separated
#              (default 1,1).  The boots are deterministic (scripts/
#              run-guest.sh -D): boots with the same seed must print the
#              same runs (lib.sh's kv_same: numbers within DET_TOL
#              percent, default 0.1), and the script fails when they do
#              not; another seed is another sample
#   -r REPS    off/on pairs per setting in each boot (default 40: with
#              10, two hogs' mixture of schedules moved 6% between boots)
#   -d SECS    seconds of guest time per run (default 4)
#   -s SLICES  base slices in ns, comma-separated (default 700000,2800000:
#              the one-CPU value, which is the flag's quantum, and the
#              value of 8 CPUs online, set through debugfs)
#   -n HOGS    hog counts, comma-separated (default 2,3,4,8)
#   -o DIR     results directory (default results/steady-YYYYmmdd-HHMMSS)
#
# Each run is `schedbench runlen` (bench/schedbench.c): HOGS nice-0
# threads on one CPU under RUN_TO_PARITY; a gap in a hog's clock reads is
# a switch away.  The runs are made by the A/B engine, bench/ab.sh: A is
# the defaults (RESCHED_INELIGIBLE off), B RESCHED_INELIGIBLE, one cell
# per base slice and hog count (-V), each with a warm-up run and REPS
# rounds; unlike the driver of sections 1 and 2 of
# Documentation/harness/research/steady-state.md, the engine runs each
# command under perf stat -a and with schedstats on.
# DIR has ab.sh's results (summary.md: every figure's verdict per cell;
# boot-N/raw.txt: one line per run) and steady.md: the medians per boot,
# in the table of Documentation/harness/research/steady-state.md: context
# switches per second, the
# run-length distribution (10th, 50th, 90th percentile, mean), and the
# share of runs of 1 ms or less.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

usage() {
	sed -n '3,/^# share of runs of 1 ms or less\./s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
seeds=1,1 reps=40 secs=4 slices=700000,2800000 hogs=2,3,4,8 res=
while getopts hS:r:d:s:n:o: opt; do
	case $opt in
	h) usage 0 ;;
	S) seeds=$OPTARG ;;
	r) reps=$OPTARG ;;
	d) secs=$OPTARG ;;
	s) slices=$OPTARG ;;
	n) hogs=$OPTARG ;;
	o) res=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 0 ]] || usage 2
for v in "$reps" "$secs"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "bad -r or -d '$v' (a number > 0)"
done
[[ $seeds =~ ^[0-9]+(,[0-9]+)*$ ]] || die "bad -S '$seeds' (numbers, comma-separated)"
IFS=, read -ra seedv <<<"$seeds"
boots=${#seedv[@]}
[[ $slices =~ ^[0-9]+(,[0-9]+)*$ && $hogs =~ ^[0-9]+(,[0-9]+)*$ ]] ||
	die "bad -s '$slices' or -n '$hogs' (comma-separated numbers)"

res=${res:-$REPO/results/steady-$(date +%Y%m%d-%H%M%S)}
# Old boots there would be read into steady.md.
[[ ! -e $res || -z $(ls -A "$res") ]] || die "-o '$res' is not empty: give a new directory"
progress "steady state: seeds=$seeds reps=$reps secs=$secs slices=$slices hogs=$hogs, results in $res"
rc=0
# shellcheck disable=SC2016 # $slice and $hogs are the guest shell's
"$REPO/bench/ab.sh" -f RESCHED_INELIGIBLE -S "$seeds" -r "$reps" -t $((secs * 10 + 60)) \
	-V "slice=$slices" -V "hogs=$hogs" -o "$res" \
	'echo RUN_TO_PARITY >/sys/kernel/debug/sched/features && echo $slice >/sys/kernel/debug/sched/base_slice_ns && schedbench runlen -n $hogs -d '"$secs" ||
	rc=$?
[[ -s $res/base.txt ]] || die "bench/ab.sh failed before its first boot (exit $rc)"
res=$(realpath "$res")

# steady.md: per slice, hogs and flag, the median over the runs of each
# boot (lib.sh's kv_sel and kv_stats).
{
	echo "# Steady state: equal nice-0 hogs on one CPU, RUN_TO_PARITY"
	echo
	sed 's/^/    /' "$res/base.txt"
	echo
	echo "Medians over $reps runs of $secs s per boot; boots (QEMU seeds $seeds) separated by /."
	echo "Verdicts per figure and cell: summary.md."
	echo
	sed 's/^/- /' "$res/determinism.txt" 2>/dev/null || true
	for f in "$res"/boot-*/fail.txt; do
		[[ ! -f $f ]] || echo "- $(basename "$(dirname "$f")") failed, its table cells hold the runs before: $(cat "$f")"
	done
	echo
	echo "| base slice | hogs | RESCHED_INELIGIBLE | switches/s | p10 us | p50 us | p90 us | mean us | runs <= 1 ms (%) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for slice in ${slices//,/ }; do
		for n in ${hogs//,/ }; do
			for set in A B; do
				row="| $slice | $n | $([[ $set == B ]] && echo on || echo off)"
				for k in cs_per_s p10_us p50_us p90_us mean_us le_1ms_pct; do
					cell=
					for ((b = 1; b <= boots; b++)); do
						v=-
						[[ ! -s $res/boot-$b/raw.txt ]] ||
							v=$(kv_sel "$res/boot-$b/raw.txt" "cell=slice=$slice,hogs=$n setting=$set rc=0" "$k" |
								kv_stats | cut -d' ' -f1)
						cell+=${cell:+ / }$v
					done
					row+=" | $cell"
				done
				echo "$row |"
			done
		done
	done
} >"$res/steady.md"
cat "$res/steady.md"
[[ $rc -eq 0 ]] || die "bench/ab.sh failed (exit $rc), see $res"
progress "steady state done: $res/steady.md (verdicts: $res/summary.md)"
