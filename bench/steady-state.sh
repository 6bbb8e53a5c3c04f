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
#              same runs (lib.sh's kv_same), and the script fails when
#              they do not; another seed is another sample
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
# a switch away.  DIR/bootN/cmd.out has one line per run, DIR/summary.md
# the medians per boot: context switches per second and the run-length
# distribution (10th, 50th, 90th percentile, mean), and the share of
# runs of 1 ms or less.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

usage() {
	sed -n '3,/^# runs of 1 ms or less\./s/^# \{0,1\}//p' "$0"
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
mkdir -p "$res/bin"
res=$(realpath "$res")
progress "steady state: seeds=$seeds reps=$reps secs=$secs slices=$slices hogs=$hogs, results in $res"
need_pkgs qemu-system-x86 busybox-static cpio gcc libc6-dev pax-utils python3-pyelftools

"$REPO/scripts/prepare-tree.sh" >/dev/null
kernel=$("$REPO/scripts/build-kernel.sh" x86_64 | tail -n1)
{
	base_info
	echo "guest: x86_64-icount ($(grep '^QEMU_ICOUNT=' "$REPO/guests/x86_64-icount.conf"))"
	echo "mode: seeds=$seeds reps=$reps secs=$secs slices=$slices hogs=$hogs"
} >"$res/base.txt"
build_schedbench x86_64 "$res/bin/schedbench"
cp "$REPO/bench/guest/steady.sh" "$res/bin/guest-steady.sh"
initrd=$CACHE/initramfs-x86_64-steady.cpio.gz
"$REPO/scripts/mk-initramfs.sh" x86_64 "$initrd" "$res/bin:/bench" >/dev/null

# Guest time per boot: every run plus half a second of settling each.
nrun=$(( $(tr , '\n' <<<"$slices" | wc -l) * $(tr , '\n' <<<"$hogs" | wc -l) * 2 * reps ))
timeout=$(( nrun * (secs + 1) * 10 + 120 ))
for ((b = 1; b <= boots; b++)); do
	progress "boot $b of $boots: $nrun runs"
	"$REPO/scripts/run-guest.sh" -t "$timeout" -T "" -o "$res/boot$b" -D -s "${seedv[b - 1]}" \
		-x "/bench/guest-steady.sh,$reps,$secs,${slices//,/:},${hogs//,/:}" \
		x86_64-icount "$kernel" "$initrd" >"$res/boot$b.log" 2>&1 ||
		die "boot $b failed: $(tail -n1 "$res/boot$b.log"), results in $res/boot$b (the runs it finished: SCHEDSERIES-RAW lines of its console.log)"
	[[ $(cat "$res/boot$b/cmd.rc" 2>/dev/null) == 0 ]] ||
		die "boot $b: guest-steady.sh failed, see $res/boot$b/cmd.out"
done

# Boots with the same seed ran the same instructions: the same runs.
det=0
for ((i = 1; i <= boots; i++)); do
	for ((j = i + 1; j <= boots; j++)); do
		[[ ${seedv[i - 1]} == "${seedv[j - 1]}" ]] || continue
		if line=$(kv_same "$res/boot$i/cmd.out" "$res/boot$j/cmd.out"); then
			echo "boot$i and boot$j (seed ${seedv[i - 1]}): cmd.out $line"
		else
			echo "boot$i and boot$j (seed ${seedv[i - 1]}): cmd.out $line FAIL"
			det=1
		fi
	done
done >"$res/determinism.txt"

# summary.md: per slice, hogs and flag, the median over the runs of each
# boot (lib.sh's kv_sel and kv_stats).
{
	echo "# Steady state: equal nice-0 hogs on one CPU, RUN_TO_PARITY"
	echo
	sed 's/^/    /' "$res/base.txt"
	echo
	echo "Medians over $reps runs of $secs s per boot; boots (QEMU seeds $seeds) separated by /."
	echo
	sed 's/^/- /' "$res/determinism.txt"
	echo
	echo "| base slice | hogs | RESCHED_INELIGIBLE | switches/s | p10 us | p50 us | p90 us | mean us | runs <= 1 ms (%) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for slice in ${slices//,/ }; do
		for n in ${hogs//,/ }; do
			for ri in 0 1; do
				row="| $slice | $n | $([[ $ri == 1 ]] && echo on || echo off)"
				for k in cs_per_s p10_us p50_us p90_us mean_us le_1ms_pct; do
					cell=
					for ((b = 1; b <= boots; b++)); do
						v=$(kv_sel "$res/boot$b/cmd.out" "slice_ns=$slice hogs=$n ri=$ri" "$k" |
							kv_stats | cut -d' ' -f1)
						cell+=${cell:+ / }$v
					done
					row+=" | $cell"
				done
				echo "$row |"
			done
		done
	done
} >"$res/summary.md"
cat "$res/summary.md"
[[ $det -eq 0 ]] || die "boots with the same seed gave different runs, see $res/determinism.txt"
progress "steady state done: $res/summary.md"
