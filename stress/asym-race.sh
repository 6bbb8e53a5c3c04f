#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# How often a run of asym_prev behaves as the other setting of
# SIS_ASYM_PREV (a flag write that a vCPU did not see: the stale
# translation of Documentation/harness/notes/qemu-stale-branch.md), on one
# guest and one QEMU, over thousands of short runs.
#
# Usage: stress/asym-race.sh [-h] [-n RUNS] [-m MS] [-o DIR] [-q SUITE]
#                             [-A ACCEL] [GUEST]
#
#   GUEST     a guest with asymmetric capacity (default arm64-juno)
#   -n RUNS   runs, half with the flag and half without, alternating
#             (default 5000)
#   -m MS     length of one run in ms (default 400)
#   -q SUITE  the guests' QEMU: a Debian suite as QEMU_SUITE takes it
#             (default bookworm-backports, QEMU 10), or "host" for this
#             machine's QEMU (bookworm: 7.2)
#   -A ACCEL  QEMU's -accel (run-guest.sh -A): tcg,thread=multi (default,
#             where the stale translation shows) or tcg,thread=single
#             (the guests' confs', which runs one vCPU at a time)
#   -o DIR    results (default results/asym-race-GUEST-DATE)
#
# tools/testing/selftests/sched/asym_prev.c is built static for the
# guest's arch with its run count and run length changed in a copy (sed;
# the script fails if they are not where it expects them), and runs as the
# guest command (run-guest.sh -x) on the kernel and initramfs of make
# test.  Each run reads the sis_asym_* counters before and after: a run
# with the flag that took no shortcut but scanned, or one without it that
# took more shortcuts than it scanned, "behaved as the other setting"
# (the test's rule, which then fails).  Prints "asym-race: GUEST QEMU
# (ACCEL): K of N runs behaved as the other setting (with the flag: A,
# without: B)" and keeps the guest's output in DIR/cmd.out.  A K above 0,
# fewer runs than asked for, a test that failed otherwise (DIR/cmd.rc),
# or a failed boot (a splat, a timeout) fails the script.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
# shellcheck source=../scripts/guest-lib.sh
. "$(dirname "$0")/../scripts/guest-lib.sh"

usage() {
	sed -n '3,/^# or a failed boot/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
runs=5000
ms=400
suite=bookworm-backports
res=
accel=
while getopts hn:m:o:q:A: opt; do
	case $opt in
	h) usage 0 ;;
	n) runs=$OPTARG ;;
	m) ms=$OPTARG ;;
	o) res=$OPTARG ;;
	q) suite=$OPTARG ;;
	A) accel=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -le 1 ]] || usage 2
g=${1:-arm64-juno}
[[ $runs =~ ^[1-9][0-9]*$ && $((runs % 2)) -eq 0 ]] || die "bad -n '$runs' (an even number of runs)"
[[ $ms =~ ^[1-9][0-9]*$ ]] || die "bad -m '$ms' (milliseconds)"
a=$(guest_arch "$g")
[[ $suite == host ]] && suite=
export QEMU_SUITE=$suite

res=${res:-$REPO/results/asym-race-$g-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$res"
res=$(realpath "$res")
"$REPO/scripts/prepare-tree.sh" >&2
base_info >"$res/base.txt"
guest_artifacts "$a" "$res" "$g" >&2

# The copy: RUNS/2 pairs of MS-long runs, and a timeout for all of them.
src=$res/asym_prev_race.c
tmo=$((runs * (ms + 200) / 1000 + 120))
sed -e "s/^#define RUN_LIMIT_MS\t.*\$/#define RUN_LIMIT_MS\t$ms/" \
	-e "s/^#define PAIRS\t\t5\$/#define PAIRS\t\t$((runs / 2))/" \
	-e "s/^#define TIMEOUT_S\t90\$/#define TIMEOUT_S\t$tmo/" \
	"$(tree_dir)/tools/testing/selftests/sched/asym_prev.c" >"$src"
if ! grep -q "^#define RUN_LIMIT_MS	$ms\$" "$src" || ! grep -q "^#define PAIRS		$((runs / 2))\$" "$src" ||
	! grep -q "^#define TIMEOUT_S	$tmo\$" "$src" || ! grep -q "pipe_pingpong, TIMEOUT_S)\$" "$src"; then
	die "asym_prev.c has changed: its RUN_LIMIT_MS, PAIRS, TIMEOUT_S or TEST_F_TIMEOUT line is not what this script edits"
fi
# kselftest's lib.mk defines _GNU_SOURCE; asym_prev.c includes pthread.h
# before sched_feat.h.
build_static "$a" "$src" "$res/asym_prev_race" -D_GNU_SOURCE= \
	-I "$(tree_dir)/tools/testing/selftests/sched"

acc=${accel:-tcg,thread=multi}
progress "asym-race: $g, $runs runs of ${ms} ms, QEMU ${suite:-of the host}, $acc"
rc=0
"$REPO/scripts/run-guest.sh" -T "" -t "$((tmo + 300))" -o "$res" -x /results/asym_prev_race \
	-A "$acc" "$g" "$KIMG" "$KINITRD" >"$res/run.out" 2>&1 || rc=$?
tail -n1 "$res/run.out"
tlog=$(tr -d '\r' <"$res/cmd.out" 2>/dev/null || true)
# TH_LOG lines: "# FILE:LINE:pipe_pingpong:[NO_]SIS_ASYM_PREV: ...".
first=$(grep -cE ':pipe_pingpong:(NO_)?SIS_ASYM_PREV: [0-9]+ trips' <<<"$tlog" || true)
with=$(grep -cE ':pipe_pingpong:SIS_ASYM_PREV: run [0-9]+ behaved as the other' <<<"$tlog" || true)
without=$(grep -cE ':pipe_pingpong:NO_SIS_ASYM_PREV: run [0-9]+ behaved as the other' <<<"$tlog" || true)
qv=$(guest_load "$g" && guest_qemu && "$QEMU" --version | head -n1)
echo "asym-race: $g $qv ($acc): $((with + without)) of $first runs behaved as the other setting (with the flag: $with, without: $without)" |
	tee "$res/race.txt"
[[ $first -eq $runs ]] || { echo "asym-race: $first runs of the $runs asked for finished" >&2; rc=1; }
[[ $((with + without)) -eq 0 ]] || rc=1
[[ $(cat "$res/cmd.rc" 2>/dev/null) == 0 ]] || { echo "asym-race: the test failed (cmd.rc: $(cat "$res/cmd.rc" 2>/dev/null || echo none))" >&2; rc=1; }
exit "$rc"
