#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The cost run's workload as one command for make ab (POSIX sh, for
# busybox), meant for the instruction-counted guest, where guest time is
# a function of the instructions executed: hackbench -T -g 2, perf bench
# sched pipe, and cyclictest -N on an otherwise idle CPU (the wakeup
# path alone).
#
# Usage: cost-load.sh [-h] [-l LOOPS]
#
#   -l LOOPS  hackbench's loops (default 30: about 2 s of guest time;
#             repeats spread by 1-2%, as 40 tasks interleave differently
#             every time; the pipe and cyclictest by under 0.5%)
#
# Prints one line of key=value words, integers so that medians keep
# every digit, which make ab records as figures: hackbench_ms,
# pipe_ns_per_op, lat_avg_ns, lat_max_ns.  The tools' output stays in
# /tmp/cost-load/.  Exits 1 when a tool fails.
# ab-programs: hackbench perf cyclictest
set -u

usage() {
	sed -n '5,/^# \/tmp\/cost-load\/\.  Exits/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
loops=30
while getopts hl: opt; do
	case $opt in
	h) usage 0 ;;
	l) loops=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage 2
case $loops in '' | *[!0-9]* | 0*) echo "cost-load: bad -l '$loops'" >&2; exit 2 ;; esac
for t in hackbench perf cyclictest; do
	command -v "$t" >/dev/null || { echo "cost-load: no $t in PATH" >&2; exit 1; }
done
D=/tmp/cost-load
rm -rf "$D"
mkdir -p "$D" /dev/shm
grep -q ' /dev/shm ' /proc/mounts || mount -t tmpfs shm /dev/shm ||
	{ echo "cost-load: no /dev/shm" >&2; exit 1; }
fail() {
	echo "cost-load: $1 failed, see $D/$1.log" >&2
	exit 1
}
hackbench -T -g 2 -l "$loops" >"$D/hackbench.log" 2>&1 || fail hackbench
perf bench sched pipe -l 10000 >"$D/pipe.log" 2>&1 || fail pipe
cyclictest -N -m -q -l 2000 -i 1000 >"$D/cyclictest.log" 2>&1 || fail cyclictest
hb=$(awk '/^Time:/ { printf "%.0f", $2 * 1000 }' "$D/hackbench.log")
pns=$(awk '/usecs\/op/ { printf "%.0f", $1 * 1000 }' "$D/pipe.log")
lat=$(sed -n 's/.*Avg: *\([0-9]*\).*Max: *\([0-9]*\).*/lat_avg_ns=\1 lat_max_ns=\2/p' "$D/cyclictest.log" | tail -n1)
if [ -z "$hb" ] || [ -z "$pns" ] || [ -z "$lat" ]; then
	echo "cost-load: a figure is missing, see $D" >&2
	exit 1
fi
echo "hackbench_ms=$hb pipe_ns_per_op=$pns $lat"
