#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The 2024 RESCHED_INELIGIBLE shape as one command for make ab (POSIX sh,
# for busybox): hackbench in the background and three cyclictest threads
# at nice -19, 0 and 19 on the same CPUs.  The seed ran `hackbench -g 4
# -l 100000000` (160 tasks on 4 CPUs, about 40 per CPU) beside one
# cyclictest.
#
# Usage: eevdf-shape.sh [-h] [-g GROUPS] [-f FDS] [-d SECS] [-c CPUS]
#
#   -g GROUPS  hackbench groups (default 1)
#   -f FDS     hackbench senders and receivers per group (default 5: 10
#              tasks; 20 makes the seed's 40 tasks per CPU on one CPU)
#   -d SECS    cyclictest duration (default 6)
#   -c CPUS    CPU list for everything (default: all of them)
#
# Prints one line of key=value words, which make ab records as figures:
# for each nice level N (m19, 0, 19): niceN_avg_us and niceN_max_us
# (cyclictest's own, from --json), niceN_p50_us (the median of every
# sample, from -v) and niceN_samples; and tasks (hackbench's).  Each
# tool's output stays in /tmp/eevdf-shape/.  Exits 1 when a tool fails
# or a cyclictest thread has no result.
# ab-programs: hackbench cyclictest
set -u

usage() {
	sed -n '5,/^# or a cyclictest thread has no result\./s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
groups=1 fds=5 secs=6 cpus=
while getopts hg:f:d:c: opt; do
	case $opt in
	h) usage 0 ;;
	g) groups=$OPTARG ;;
	f) fds=$OPTARG ;;
	d) secs=$OPTARG ;;
	c) cpus=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage 2
for v in "$groups" "$fds" "$secs"; do
	case $v in '' | *[!0-9]* | 0*) echo "eevdf-shape: bad -g, -f or -d '$v'" >&2; exit 2 ;; esac
done
[ -n "$cpus" ] || cpus=0-$(($(grep -c '^processor' /proc/cpuinfo) - 1))
for t in hackbench cyclictest taskset schedbench killall; do
	command -v "$t" >/dev/null || { echo "eevdf-shape: no $t in PATH" >&2; exit 1; }
done

D=/tmp/eevdf-shape
rm -rf "$D"
mkdir -p "$D" /dev/shm
# cyclictest keeps its threads' shared memory there.
grep -q ' /dev/shm ' /proc/mounts || mount -t tmpfs shm /dev/shm ||
	{ echo "eevdf-shape: no /dev/shm" >&2; exit 1; }

# Start on a whole second, the cyclictests half a second later and a
# third of their period apart: the same phases in every run.
schedbench align 1000
taskset -c "$cpus" hackbench -g "$groups" -f "$fds" -l 100000000 >"$D/hackbench.log" 2>&1 &
hb=$!
ct=
al=500000
for n in -19 0 19; do
	# A starved nice 19 thread may see the end of -D late: SIGINT makes
	# cyclictest write its results and stop.
	timeout -s INT $((secs + 10)) taskset -c "$cpus" nice -n "$n" \
		cyclictest -m -q -v -D "$secs" -i 1000 --secaligned="$al" \
		--json="$D/nice$n.json" >"$D/nice$n.log" 2>&1 &
	ct="$ct $!"
	al=$((al + 333))
done
# shellcheck disable=SC2086 # PIDs, split on purpose
wait $ct
# hackbench: the parent and every sender and receiver it forked.
killall hackbench 2>/dev/null
wait "$hb"

out="tasks=$((groups * fds * 2))"
rc=0
for n in -19 0 19; do
	k=$(echo "nice$n" | sed 's/-/m/')
	j=$(awk -v k="$k" '/^ *"(avg|max)": / { f = $1; v = $2; gsub(/[":]/, "", f); sub(/,$/, "", v)
		printf "%s_%s_us=%s ", k, f, v; m++ } END { if (m != 2) exit 1 }' "$D/nice$n.json") ||
		{ echo "eevdf-shape: no result from the nice $n cyclictest, see $D/nice$n.log" >&2; rc=1; continue; }
	sed -n 's/^ *[0-9][0-9]*: *[0-9][0-9]*: *\([0-9][0-9]*\)$/\1/p' "$D/nice$n.log" | sort -n >"$D/nice$n.sorted"
	c=$(wc -l <"$D/nice$n.sorted")
	p=
	[ "$c" -eq 0 ] || p=" ${k}_p50_us=$(sed -n "$(((c + 1) / 2))p" "$D/nice$n.sorted")"
	out="$out $j${k}_samples=$c$p"
done
echo "$out" | tr -s ' '
exit "$rc"
