#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The 2020 SIS_ASYM_PREV shape as one command for make ab (POSIX sh, for
# busybox): perf bench sched pipe -T, two threads passing a token, under
# perf stat -a.
#
# Usage: pipe-load.sh [-h] [-l LOOPS]
#
#   -l LOOPS  round trips (default 20000)
#
# Prints one line of key=value words, which make ab records as figures:
# ops_per_s (perf bench's), migrations (every CPU's task migrations
# while perf bench ran, perf stat -a: the benchmark's, and the few of the
# guest's kernel threads), asym (1 when the CPUs' capacities differ)
# and, with the series, sis_asym_prev and sis_asym_scan (feat_stats,
# over perf bench's run).
# perf's output stays in /tmp/pipe-load.{log,stat}.  Exits 1 when perf
# fails.
#
# The count is system-wide because a per-task perf stat crashed an
# arm64-dynamiq guest twice in CI, in perf's task-context switch
# (Documentation/harness/notes/perf-oops.md); system-wide events put no
# perf context on any task, so that path does not run.
# ab-programs: perf
set -u

usage() {
	sed -n '5,/^# fails\./s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
loops=20000
while getopts hl: opt; do
	case $opt in
	h) usage 0 ;;
	l) loops=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage 2
case $loops in '' | *[!0-9]* | 0*) echo "pipe-load: bad -l '$loops'" >&2; exit 2 ;; esac
command -v perf >/dev/null || { echo "pipe-load: no perf in PATH" >&2; exit 1; }
asym=$(cat /sys/devices/system/cpu/cpu[0-9]*/cpu_capacity 2>/dev/null | sort -u | wc -l)
if [ "$asym" -gt 1 ]; then asym=1; else asym=0; fi
# fstat NAME: a feat_stats counter, empty without the file or the name.
fstat() {
	awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/sched/feat_stats 2>/dev/null
}
# Let a feature just written settle.
sleep 1
p0=$(fstat sis_asym_prev)
c0=$(fstat sis_asym_scan)
perf stat -a -x, -e cpu-migrations -o /tmp/pipe-load.stat -- \
	perf bench sched pipe -T -l "$loops" >/tmp/pipe-load.log 2>&1 ||
	{ echo "pipe-load: perf failed, see /tmp/pipe-load.log" >&2; exit 1; }
p1=$(fstat sis_asym_prev)
c1=$(fstat sis_asym_scan)
ops=$(awk '/ops\/sec/ { print $1 }' /tmp/pipe-load.log)
mig=$(awk -F, '$3 == "cpu-migrations" { print $1 }' /tmp/pipe-load.stat)
if [ -z "$ops" ] || [ -z "$mig" ]; then
	echo "pipe-load: no result, see /tmp/pipe-load.log" >&2
	exit 1
fi
fs=
[ -z "$p0" ] || [ -z "$p1" ] || fs=" sis_asym_prev=$((p1 - p0)) sis_asym_scan=$((c1 - c0))"
echo "ops_per_s=$ops migrations=$mig asym=$asym$fs"
