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
# Usage: eevdf-load.sh [-h] [-L LOAD] [-g GROUPS] [-f FDS] [-d SECS]
#                       [-G SECS] [-K] [-c CPUS]
#
#   -L LOAD    hackbench (default), or hogs: three nice-0 busy loops
#              (schedbench hog) in hackbench's place, whose schedule,
#              unlike hackbench's pipes, does not vary from run to run
#   -g GROUPS  hackbench groups (default 1)
#   -f FDS     hackbench senders and receivers per group (default 5: 10
#              tasks; 20 makes the seed's 40 tasks per CPU on one CPU)
#   -d SECS    cyclictest duration (default 6)
#   -G SECS    grace after it: a cyclictest still running then (a starved
#              nice 19 thread) gets SIGINT, writes its results and stops
#              (default 10); beside 40 hackbench tasks that took minutes
#   -K         a second after the grace, stop the load: a cyclictest
#              still running then gets no figures (niceN_late=1), since
#              what it measures after that is not latency beside the load
#   -c CPUS    CPU list for everything (default: all of them)
#
# Prints one line of key=value words, which make ab records as figures:
# for each nice level N (m19, 0, 19): niceN_min_us, niceN_avg_us and
# niceN_max_us (cyclictest's own, from --json), niceN_p50_us (the median
# of every sample, from -v) and niceN_samples; tasks (hackbench's or the
# hogs'), ncpus, base_slice_ns (when debugfs has it) and resched (with
# the series: feat_stats resched_ineligible over the cyclictests' run).
# A level whose cyclictest gave no result, or (-K) was still running
# when the load stopped, has no figures (niceN_late=1 for the latter),
# and a message on stderr.  Each tool's output stays in
# /tmp/eevdf-load/.  Exits 1 when a tool is missing.
# ab-programs: hackbench cyclictest
set -u

usage() {
	sed -n '5,/Exits 1 when a tool is missing\./s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
load=hackbench groups=1 fds=5 secs=6 grace=10 stop=0 cpus=
while getopts hL:g:f:d:G:Kc: opt; do
	case $opt in
	h) usage 0 ;;
	L) load=$OPTARG ;;
	g) groups=$OPTARG ;;
	f) fds=$OPTARG ;;
	d) secs=$OPTARG ;;
	G) grace=$OPTARG ;;
	K) stop=1 ;;
	c) cpus=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage 2
for v in "$groups" "$fds" "$secs" "$grace"; do
	case $v in '' | *[!0-9]* | 0*) echo "eevdf-load: bad -g, -f, -d or -G '$v'" >&2; exit 2 ;; esac
done
case $load in hackbench | hogs) ;; *) echo "eevdf-load: bad -L '$load' (hackbench or hogs)" >&2; exit 2 ;; esac
[ -n "$cpus" ] || cpus=0-$(($(grep -c '^processor' /proc/cpuinfo) - 1))
for t in hackbench cyclictest taskset schedbench killall; do
	command -v "$t" >/dev/null || { echo "eevdf-load: no $t in PATH" >&2; exit 1; }
done

D=/tmp/eevdf-load
rm -rf "$D"
mkdir -p "$D" /dev/shm
# cyclictest keeps its threads' shared memory there.
grep -q ' /dev/shm ' /proc/mounts || mount -t tmpfs shm /dev/shm ||
	{ echo "eevdf-load: no /dev/shm" >&2; exit 1; }

# Start on a whole second, the cyclictests half a second later and a
# third of their period apart: the same phases in every run.
schedbench align 1000
if [ "$load" = hogs ]; then
	# Equal hogs settle into one of a few periodic schedules, chosen by
	# where in the tick period they start: on a whole second.
	hb=
	for _ in 1 2 3; do
		taskset -c "$cpus" schedbench hog -a 1000 &
		hb="$hb $!"
	done
	tasks=3
else
	taskset -c "$cpus" hackbench -g "$groups" -f "$fds" -l 100000000 >"$D/hackbench.log" 2>&1 &
	hb=$!
	tasks=$((groups * fds * 2))
fi
# fstat NAME: a feat_stats counter, empty without the file or the name.
fstat() {
	awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/sched/feat_stats 2>/dev/null
}
r0=$(fstat resched_ineligible)
al=500000
for n in -19 0 19; do
	# A starved nice 19 thread may see the end of -D late: SIGINT makes
	# cyclictest write its results and stop.
	timeout -s INT $((secs + grace)) taskset -c "$cpus" nice -n "$n" \
		cyclictest -m -q -v -D "$secs" -i 1000 --secaligned="$al" \
		--json="$D/nice$n.json" >"$D/nice$n.log" 2>&1 &
	echo "$! $n" >>"$D/pids"
	al=$((al + 333))
done
stop_load() {
	if [ "$load" = hogs ]; then
		# shellcheck disable=SC2086 # PIDs, split on purpose
		kill $hb 2>/dev/null
	else
		# hackbench: the parent and every sender and receiver it forked.
		killall hackbench 2>/dev/null
	fi
}
# -K: a starved cyclictest needs the CPU to act on its SIGINT and write
# its results: the load stops a second after the grace, and the levels
# still running then are marked late.
reaper=
if [ "$stop" -eq 1 ]; then
	(
		sleep $((secs + grace + 1))
		while read -r p n; do
			! kill -0 "$p" 2>/dev/null || echo "$n"
		done <"$D/pids" >"$D/late"
		stop_load
	) &
	reaper=$!
fi
# shellcheck disable=SC2046 # PIDs, split on purpose
wait $(cut -d' ' -f1 "$D/pids")
[ -z "$reaper" ] || kill "$reaper" 2>/dev/null
r1=$(fstat resched_ineligible)
stop_load
# shellcheck disable=SC2086 # PIDs, split on purpose
wait $hb

out="tasks=$tasks ncpus=$(grep -c '^processor' /proc/cpuinfo)"
[ ! -r /sys/kernel/debug/sched/base_slice_ns ] ||
	out="$out base_slice_ns=$(cat /sys/kernel/debug/sched/base_slice_ns)"
[ -z "$r0" ] || [ -z "$r1" ] || out="$out resched=$((r1 - r0))"
for n in -19 0 19; do
	k=$(echo "nice$n" | sed 's/-/m/')
	if grep -qx -- "$n" "$D/late" 2>/dev/null; then
		echo "eevdf-load: the nice $n cyclictest was still running $((secs + grace + 1)) s in, when the load stopped: no figures" >&2
		out="$out ${k}_late=1"
		continue
	fi
	j=$(awk -v k="$k" '/^ *"(min|avg|max)": / { f = $1; v = $2; gsub(/[":]/, "", f); sub(/,$/, "", v)
		printf "%s_%s_us=%s ", k, f, v; m++ } END { if (m != 3) exit 1 }' "$D/nice$n.json") ||
		{ echo "eevdf-load: no result from the nice $n cyclictest, see $D/nice$n.log" >&2; continue; }
	sed -n 's/^ *[0-9][0-9]*: *[0-9][0-9]*: *\([0-9][0-9]*\)$/\1/p' "$D/nice$n.log" | sort -n >"$D/nice$n.sorted"
	c=$(wc -l <"$D/nice$n.sorted")
	p=
	[ "$c" -eq 0 ] || p=" ${k}_p50_us=$(sed -n "$(((c + 1) / 2))p" "$D/nice$n.sorted")"
	out="$out $j${k}_samples=$c$p"
done
echo "$out" | tr -s ' '
