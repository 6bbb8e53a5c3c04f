#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest benchmark driver: bench/bench.sh runs it with
# scripts/run-guest.sh -r ROOTFS -x.  POSIX sh, for busybox.
#
# Usage: guest-bench.sh [-h] [-q] [-r REPS] [-o DIR] EXPERIMENT...
#
#   EXPERIMENT  misfit     sysbench, bigs busy with pinned runs (MISFIT)
#               lu         barrier stand-in for NPB lu.C, GROUP and NORMAL
#                          cgroup cases (LB_CLASSIFY)
#               pipe       perf bench sched pipe -T (SIS_ASYM_PREV)
#               eevdf      hackbench plus cyclictest at nice -19/0/19,
#                          RESCHED_INELIGIBLE x RUN_TO_PARITY; on one CPU
#                          also 3 hogs in hackbench's place
#               cost       hackbench, perf bench sched pipe and cyclictest
#                          on an idle CPU: the kernel at its defaults (the
#                          patched one or the unpatched base), then each
#                          flag at its non-default setting (patched only)
#   -q          quick: smaller workloads
#   -r REPS     repeats of each setting, alternating (default 5)
#   -L LOADS    eevdf: its loads, comma-separated, from hackbench and hogs
#               (default hackbench, and hogs too on one CPU)
#   -o DIR      where results go (default /results/bench)
#
# Every measurement is one line of "key=value" words in DIR/raw.txt, with
# exp=, rep= and the flag settings first; each tool's own output is kept
# in DIR/logs/.  Settings alternate (on,off then off,on) so that drift in
# the host hits both alike.  Every flag is put back as found.  The tools
# come from the Debian root at /tools, or with run-guest.sh -D from the
# initramfs (RAM_PROGRAMS); the helpers (schedbench) from the directory
# this script is in.  Each raw.txt line goes to the console too.
set -u

usage() {
	sed -n '5,/^# this script is in\./s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
quick=0
reps=5
out=/results/bench
loads=
while getopts hqr:o:L: opt; do
	case $opt in
	h) usage 0 ;;
	q) quick=1 ;;
	L) loads=$(echo "$OPTARG" | tr , ' ') ;;
	r) reps=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage 2

HERE=$(cd "$(dirname "$0")" && pwd)
SB=$HERE/schedbench
FEATS=/sys/kernel/debug/sched/features
FSTATS=/sys/kernel/debug/sched/feat_stats
SLICE=/sys/kernel/debug/sched/base_slice_ns
STATS=/proc/sys/kernel/sched_schedstats
CG=/sys/fs/cgroup
RAW=$out/raw.txt
LOGS=$out/logs
mkdir -p "$LOGS"

die() {
	echo "bench: FAIL $*"
	exit 1
}
status() {
	echo "SCHEDSERIES-BENCH [$(cut -d' ' -f1 /proc/uptime)] $*" >/dev/console
	echo "bench: $*"
}
# record LINE: to raw.txt, and to the console, which keeps the results
# of a boot that does not finish (with run-guest.sh -D, raw.txt reaches
# the host only at the end).
record() {
	echo "$*" >>"$RAW"
	echo "SCHEDSERIES-RAW $*" >/dev/console
}
# need_tools PROGRAM...: each one on PATH, or the experiment stops.
need_tools() {
	for t in "$@"; do
		command -v "$t" >/dev/null ||
			die "no $t on PATH (is /tools mounted? with run-guest.sh -D, is it in RAM_PROGRAMS?)"
	done
}

[ -x "$SB" ] || die "no $SB"
for e in "$@"; do
	case $e in
	misfit) need_tools sysbench ;;
	lu) ;;
	pipe) need_tools perf ;;
	eevdf) need_tools hackbench cyclictest nice taskset timeout killall ;;
	cost) need_tools hackbench perf cyclictest ;;
	*) die "unknown experiment '$e'" ;;
	esac
done

FEATS0=
if [ -w "$FEATS" ]; then
	FEATS0=$(cat "$FEATS")
	read -r STATS0 <"$STATS"
	echo 1 >"$STATS"
fi
# Every flag back as this script found it: after each experiment, and at
# the end with schedstats.
restore_flags() {
	for f in $FEATS0; do
		echo "$f" >"$FEATS"
	done
}
trap '[ -z "$FEATS0" ] || { restore_flags; echo "$STATS0" >"$STATS"; }' EXIT

has_flag() {
	grep -qE "(^| )(NO_)?$1( |$)" "$FEATS" 2>/dev/null
}
need_flag() {
	has_flag "$1" || die "$1 is not in $FEATS (kernel without the series?)"
}
# setf FLAG on|off
setf() {
	if [ "$2" = on ]; then echo "$1" >"$FEATS"; else echo "NO_$1" >"$FEATS"; fi ||
		die "cannot set $1 $2"
}
# fstat NAME: a feat_stats counter (0 when the file or the name is missing).
fstat() {
	awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$FSTATS" 2>/dev/null ||
		echo 0
}
# order REP: "on off" for odd repeats, "off on" for even ones.
order() {
	if [ $(($1 % 2)) -eq 1 ]; then echo "on off"; else echo "off on"; fi
}
# cpus_cap max|notmax: the CPUs whose capacity is the largest (or not),
# comma separated; without cpu_capacity a CPU counts as 1024.
cpus_cap() {
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		echo "${c##*cpu} $(cat "$c/cpu_capacity" 2>/dev/null || echo 1024)"
	done | awk -v want="$1" '{ cpu[NR] = $1; cap[NR] = $2; if ($2 > max) max = $2 }
		END { for (i = 1; i <= NR; i++)
			if ((cap[i] == max) == (want == "max")) { printf "%s%s", sep, cpu[i]; sep = "," }
		      print "" }'
}
ncpus() {
	grep -c '^processor' /proc/cpuinfo
}

# ---- misfit: the 2018 sysbench shape ----
exp_misfit() {
	need_flag MISFIT
	bigs=$(cpus_cap max)
	littles=$(cpus_cap notmax)
	[ -n "$littles" ] || die "misfit: no asymmetric capacity (all CPUs at max)"
	prime=5000
	secs=3
	[ $quick -eq 1 ] && secs=1
	big0=${bigs%%,*}
	nbig=$(echo "$bigs" | tr , '\n' | wc -l)
	# Events per second of one sysbench on an idle big CPU, so that the
	# long runs take SECS there and the pinned ones a quarter of that,
	# as in the seed (REQUESTS and REQUESTS / 4).
	rate=$(taskset -c "$big0" sysbench cpu --cpu-max-prime=$prime --threads=1 --time=2 run |
		tee "$LOGS/misfit-calibrate.log" | awk '/events per second/ { printf "%d", $4 }')
	[ "${rate:-0}" -gt 0 ] || die "misfit: sysbench calibration failed"
	long=$((rate * secs))
	short=$((long / 4))
	[ $short -gt 0 ] || short=1
	status "misfit: bigs $bigs littles $littles, $rate events/s on cpu$big0, long $long short $short"
	r=1
	while [ $r -le "$reps" ]; do
		for s in $(order $r); do
			setf MISFIT "$s"
			sleep 1
			m0=$(fstat misfit_migrations)
			tag=misfit-$r-$s
			pinned=
			for b in $(echo "$bigs" | tr , ' '); do
				taskset -c "$b" sysbench cpu --cpu-max-prime=$prime --threads=1 \
					--events=$short --time=0 run >"$LOGS/$tag-pinned$b.log" 2>&1 &
				pinned=$pinned${pinned:+,}$!
			done
			# sysbench takes 1-3 s to start under TCG: let the pinned
			# runs really occupy the bigs before the others start, as
			# they did in the seed.
			i=0
			while [ $i -lt 300 ]; do
				n=$(grep -l 'Threads started' "$LOGS/$tag"-pinned*.log 2>/dev/null | wc -l)
				[ "$n" -ge "$nbig" ] && break
				sleep 0.1
				i=$((i + 1))
			done
			free=
			i=0
			for _ in $(echo "$littles" | tr , ' '); do
				sysbench cpu --cpu-max-prime=$prime --threads=1 \
					--events=$long --time=0 run >"$LOGS/$tag-task$i.log" 2>&1 &
				free="$free $!"
				i=$((i + 1))
			done
			# shellcheck disable=SC2086 # PIDs, split on purpose
			"$SB" watch -i 5 -b "$bigs" -P "$pinned" $free >"$LOGS/$tag-watch.log" 2>&1
			wait
			m1=$(fstat misfit_migrations)
			i=0
			for p in $free; do
				t=$(awk '/total time:/ { sub("s", "", $3); print $3 }' "$LOGS/$tag-task$i.log")
				share=$(awk -v p="$p" '$1 == "task=" p { sub("big_share=", "", $4); print $4 }' \
					"$LOGS/$tag-watch.log")
				record "exp=misfit rep=$r MISFIT=$s task=$i time_s=${t:-nan} big_share=${share:-nan}"
				i=$((i + 1))
			done
			lat=$(sed -n 's/.*misfit_latency_ms=//p' "$LOGS/$tag-watch.log")
			moved=$(sed -n 's/.* moved=\([0-9/]*\).*/\1/p' "$LOGS/$tag-watch.log")
			record "exp=misfit-run rep=$r MISFIT=$s misfit_latency_ms=${lat:-none}" \
				"moved=${moved:-?} misfit_migrations=$((m1 - m0))"
			status "misfit rep $r MISFIT=$s done"
		done
		r=$((r + 1))
	done
	restore_flags
}

# ---- lu: the 2019 lu.C shape, GROUP and NORMAL ----
exp_lu() {
	need_flag LB_CLASSIFY
	[ -d /sys/devices/system/node/node1 ] || die "lu: one NUMA node only"
	grep -q cgroup2 /proc/mounts || mount -t cgroup2 none "$CG" || die "lu: cannot mount cgroup2"
	echo +cpu >"$CG/cgroup.subtree_control" || die "lu: no cpu controller"
	mkdir -p "$CG/bench-a" "$CG/bench-b"
	# The workers' load per task below a node's CPU count, as the 76 lu
	# threads' (1024 / 76) was below the 20 CPUs of the seed's nodes.
	echo 1 >"$CG/bench-a/cpu.weight" || die "lu: cannot set cpu.weight"
	n=$(ncpus)
	threads=$((n - 2))
	iters=200
	[ $quick -eq 1 ] && iters=100
	status "lu: $threads spinning workers (cpu.weight 1), $iters iterations of 3 ms, 2 hogs, $n CPUs"
	r=1
	while [ $r -le "$reps" ]; do
		for case in GROUP NORMAL; do
			for s in $(order $r); do
				setf LB_CLASSIFY "$s"
				sleep 0.5
				hg=$CG/bench-b
				[ $case = NORMAL ] && hg=$CG/bench-a
				hogs=
				for _ in 1 2; do
					"$SB" hog &
					echo $! >"$hg/cgroup.procs"
					hogs=$hogs${hogs:+,}$!
				done
				tag=lu-$case-$r-$s
				# A bound well above the 10x TCG slowdown seen in probes.
				timeout $((iters + 120)) sh -c "echo \$\$ >$CG/bench-a/cgroup.procs &&
					exec $SB lu -S -t $threads -n $iters -w 3000 -s 100 -p $hogs" >"$LOGS/$tag.log" 2>&1 ||
					echo "lu: exit $? (timeout: 143)" >>"$LOGS/$tag.log"
				# shellcheck disable=SC2046 # PIDs, split on purpose
				kill $(echo "$hogs" | tr , ' ')
				wait
				line=$(grep '^threads=' "$LOGS/$tag.log") || die "lu: no result, see $LOGS/$tag.log"
				record "exp=lu rep=$r case=$case LB_CLASSIFY=$s $line"
				status "lu $case rep $r LB_CLASSIFY=$s: $line"
			done
		done
		r=$((r + 1))
	done
	rmdir "$CG/bench-a" "$CG/bench-b"
	restore_flags
}

# ---- pipe: the 2020 perf bench sched pipe -T shape ----
exp_pipe() {
	need_flag SIS_ASYM_PREV
	loops=20000
	[ $quick -eq 1 ] && loops=5000
	shape=symmetric
	[ -n "$(cpus_cap notmax)" ] && shape=asymmetric
	status "pipe: perf bench sched pipe -T -l $loops on a $shape guest"
	r=1
	while [ $r -le "$reps" ]; do
		for s in $(order $r); do
			setf SIS_ASYM_PREV "$s"
			sleep 1
			tag=pipe-$r-$s
			p0=$(fstat sis_asym_prev)
			c0=$(fstat sis_asym_scan)
			perf stat -x, -e cpu-migrations,context-switches -o "$LOGS/$tag.stat" \
				perf bench sched pipe -T -l $loops >"$LOGS/$tag.log" 2>&1 ||
				die "pipe: perf failed, see $LOGS/$tag.log"
			p1=$(fstat sis_asym_prev)
			c1=$(fstat sis_asym_scan)
			ops=$(awk '/ops\/sec/ { print $1 }' "$LOGS/$tag.log")
			mig=$(awk -F, '$3 == "cpu-migrations" { print $1 }' "$LOGS/$tag.stat")
			record "exp=pipe rep=$r shape=$shape SIS_ASYM_PREV=$s loops=$loops" \
				"ops_per_s=${ops:-nan} migrations=${mig:-nan}" \
				"sis_asym_prev=$((p1 - p0)) sis_asym_scan=$((c1 - c0))"
			status "pipe rep $r SIS_ASYM_PREV=$s: ${ops:-?} ops/s, ${mig:-?} migrations"
		done
		r=$((r + 1))
	done
	restore_flags
}

# ct_stats PREFIX: "min_us= avg_us= max_us= p50_us= samples=" of
# one cyclictest thread: min, avg and max from its PREFIX.json (its own
# figures, over every cycle), the median of the per-sample latencies
# that -v printed to PREFIX.log ("thread: cycle: latency"; a few of the
# last cycles may be missing there).  "nan" for what is missing.
ct_stats() {
	j=$(awk '/^ *"(min|avg|max)": / { k = $1; v = $2; gsub(/[":]/, "", k); sub(/,$/, "", v)
		printf "%s_us=%s ", k, v; n++ } END { if (n != 3) exit 1 }' "$1.json" 2>/dev/null) ||
		j="min_us=nan avg_us=nan max_us=nan "
	sed -n 's/^ *[0-9][0-9]*: *[0-9][0-9]*: *\([0-9][0-9]*\)$/\1/p' "$1.log" 2>/dev/null | sort -n >"$1.sorted"
	c=$(wc -l <"$1.sorted")
	if [ "$c" -gt 0 ]; then
		p="p50_us=$(sed -n "$(((c + 1) / 2))p" "$1.sorted")"
	else
		p="p50_us=nan"
	fi
	rm -f "$1.sorted"
	echo "$j$p samples=$c"
}

# ---- eevdf: the 2024 hackbench + cyclictest shape ----
exp_eevdf() {
	need_flag RESCHED_INELIGIBLE
	secs=6
	grace=10
	fds=10
	# Quick: half the hackbench tasks, so that the starved nice 19
	# cyclictest and the kill of hackbench take seconds less per column.
	[ $quick -eq 1 ] && secs=1 grace=3 fds=5
	cpus=0,1
	# One CPU (the instruction-counted guest): half the tasks, the same
	# load per CPU.
	# The base slice of the seed's machine (8 or more CPUs: 0.7 ms x 4) is
	# set through debugfs, since on one CPU the slice is the flag's 0.7 ms
	# quantum and the flag would have nothing to cut.
	slice0=
	if [ "$(ncpus)" -eq 1 ]; then
		cpus=0
		fds=$(((fds + 1) / 2))
		slice0=$(cat "$SLICE") || die "eevdf: no $SLICE"
		echo 2800000 >"$SLICE" || die "eevdf: cannot set $SLICE"
	fi
	# cyclictest keeps the shared memory of its threads' stats there.
	mkdir -p /dev/shm
	grep -q ' /dev/shm ' /proc/mounts || mount -t tmpfs shm /dev/shm || die "eevdf: no /dev/shm"
	# The seed's load is hackbench.  On one instruction-counted CPU also
	# 3 nice-0 hogs: hackbench's pipes interleave differently from run
	# to run, the hogs' schedule does not.  -L picks the loads.
	if [ -z "$loads" ]; then
		loads=hackbench
		[ "$(ncpus)" -eq 1 ] && loads="hackbench hogs"
	fi
	# The tools write their logs to tmpfs while they run and they are
	# moved to the 9p share after: no 9p round trip, whose length depends
	# on the host, inside a measured window.
	TLOGS=/tmp/bench-logs
	mkdir -p "$TLOGS" || die "eevdf: no $TLOGS"
	status "eevdf: $loads (hackbench -g 1 -f $fds) on CPUs $cpus, cyclictest at nice -19/0/19 for ${secs}s"
	r=1
	while [ $r -le "$reps" ]; do
		cols="RTP-off RTP-on NORTP-off NORTP-on"
		[ $((r % 2)) -eq 0 ] && cols="NORTP-on NORTP-off RTP-on RTP-off"
		for load in $loads; do
			for col in $cols; do
				case $col in
				RTP-*) setf RUN_TO_PARITY on ;;
				*) setf RUN_TO_PARITY off ;;
				esac
				setf RESCHED_INELIGIBLE "${col#*-}"
				tag=eevdf-$r-$load-$col
				hb=
				ctalign=500000
				if [ "$load" = hogs ]; then
					# Equal hogs settle into one of a few periodic
					# schedules, chosen by where in the tick period
					# they start: start them on a whole second and
					# the cyclictests half a second later, a third
					# of their period apart, the same phases in
					# every run.
					"$SB" align 1000
					for _ in 1 2 3; do
						taskset -c $cpus "$SB" hog -a 1000 &
						hb="$hb $!"
					done
				else
					# 2 * FDS tasks on 2 CPUs: the seed had 160 on 4, which
					# under TCG starves the nice 19 cyclictest for tens of
					# seconds.  Started on a whole second too.
					"$SB" align 1000
					taskset -c $cpus hackbench -g 1 -f $fds -l 100000000 >"$TLOGS/$tag-hackbench.log" 2>&1 &
					hb=$!
				fi
				r0=$(fstat resched_ineligible)
				ct=
				for n in -19 0 19; do
					al=--secaligned=$ctalign
					ctalign=$((ctalign + 333))
					# A starved nice 19 thread may see the end of -D late:
					# SIGINT makes cyclictest write its results and stop.
					# -q -v: every sample's latency, printed at the end;
					# --json: cyclictest's own min, avg and max.
					timeout -s INT $((secs + grace)) taskset -c $cpus nice -n $n \
						cyclictest -m -q -v -D "$secs" -i 1000 $al \
						--json="$TLOGS/$tag-nice$n.json" >"$TLOGS/$tag-nice$n.log" 2>&1 &
					ct="$ct $!"
				done
				# shellcheck disable=SC2086 # PIDs, split on purpose
				wait $ct
				r1=$(fstat resched_ineligible)
				# hackbench: the parent and every sender and receiver it forked.
				if [ "$load" = hogs ]; then
					# shellcheck disable=SC2086 # PIDs, split on purpose
					kill $hb
				else
					killall hackbench 2>/dev/null
				fi
				# shellcheck disable=SC2086 # PIDs, split on purpose
				wait $hb
				for n in -19 0 19; do
					lat=$(ct_stats "$TLOGS/$tag-nice$n")
					gzip -1 "$TLOGS/$tag-nice$n.log"
					record "exp=eevdf rep=$r ncpus=$(ncpus) base_slice_ns=$(cat "$SLICE") load=$load RUN_TO_PARITY=${col%%-*} RESCHED_INELIGIBLE=${col#*-}" \
						"hackbench_fds=$fds" \
						"nice=$n ${lat:-min_us=nan avg_us=nan max_us=nan}" \
						"resched=$((r1 - r0))"
				done
				mv "$TLOGS"/* "$LOGS/" || die "eevdf: cannot move $TLOGS to $LOGS"
				status "eevdf rep $r $load $col done"
			done
		done
		r=$((r + 1))
	done
	[ -z "$slice0" ] || echo "$slice0" >"$SLICE"
	restore_flags
}

# ---- cost: the series at its defaults against the base ----
# Meant for the instruction-counted guest (guests/x86_64-icount.conf), where
# guest time is a function of the instructions executed: hackbench time,
# the pipe round trip and the idle wakeup latency then measure the work the
# kernel did, and repeat across boots.  On the patched kernel every flag's
# non-default setting is measured too, one flag at a time; settings rotate
# from repeat to repeat.
exp_cost() {
	# hackbench -T -g 2 -l 30: about 2 s of guest time; repeats of one
	# boot spread by 1-2% (40 tasks interleave differently every time),
	# the pipe and cyclictest by under 0.5%.
	# Quick mode shortens hackbench only, so that the pipe and latency
	# figures of CI's quick run compare with the full run's.
	loops=30
	[ $quick -eq 1 ] && loops=20
	ploops=10000
	lloops=2000
	kernel=base
	settings=default
	if has_flag MISFIT; then
		kernel=patched
		settings="default NO_MISFIT NO_LB_CLASSIFY NO_SIS_ASYM_PREV RESCHED_INELIGIBLE"
	fi
	mkdir -p /dev/shm
	grep -q ' /dev/shm ' /proc/mounts || mount -t tmpfs shm /dev/shm || die "cost: no /dev/shm"
	# One untimed round first: the first pipe run of a boot was 2% slower
	# (the binaries still being paged in over 9p).
	hackbench -T -g 2 -l 2 >/dev/null 2>&1
	perf bench sched pipe -l 500 >/dev/null 2>&1
	cyclictest -N -m -q -l 50 -i 1000 >/dev/null 2>&1
	status "cost: $kernel kernel, $(ncpus) CPUs, hackbench -T -g 2 -l $loops, pipe -l $ploops, cyclictest -l $lloops, settings: $settings"
	r=1
	while [ $r -le "$reps" ]; do
		# Rotate the order: repeat r starts at setting r.
		# shellcheck disable=SC2086 # a list of words, split on purpose
		set -- $settings
		i=1
		while [ $i -lt $r ] && [ $# -gt 1 ]; do
			first=$1
			shift
			set -- "$@" "$first"
			i=$((i + 1))
		done
		for s in "$@"; do
			[ "$kernel" = patched ] && restore_flags
			[ "$s" = default ] || echo "$s" >"$FEATS" || die "cost: cannot set $s"
			tag=cost-$kernel-$s-$r
			hackbench -T -g 2 -l $loops >"$LOGS/$tag-hackbench.log" 2>&1 ||
				die "cost: hackbench failed, see $LOGS/$tag-hackbench.log"
			# Integers in ms and ns, so that the report's medians keep
			# every digit.
			hb=$(awk '/^Time:/ { printf "%.0f", $2 * 1000 }' "$LOGS/$tag-hackbench.log")
			perf bench sched pipe -l $ploops >"$LOGS/$tag-pipe.log" 2>&1 ||
				die "cost: perf failed, see $LOGS/$tag-pipe.log"
			pns=$(awk '/usecs\/op/ { printf "%.0f", $1 * 1000 }' "$LOGS/$tag-pipe.log")
			# -N: nanoseconds; an idle CPU, so this is the wakeup path alone.
			cyclictest -N -m -q -l $lloops -i 1000 >"$LOGS/$tag-cyclictest.log" 2>&1 ||
				die "cost: cyclictest failed, see $LOGS/$tag-cyclictest.log"
			lat=$(sed -n 's/.*Avg: *\([0-9]*\).*Max: *\([0-9]*\).*/lat_avg_ns=\1 lat_max_ns=\2/p' \
				"$LOGS/$tag-cyclictest.log" | tail -n1)
			record "exp=cost kernel=$kernel setting=$s rep=$r ncpus=$(ncpus)" \
				"hackbench_ms=${hb:-nan} pipe_ns_per_op=${pns:-nan}" \
				"${lat:-lat_avg_ns=nan lat_max_ns=nan}"
			status "cost $kernel $s rep $r: hackbench ${hb:-?} ms, pipe ${pns:-?} ns/op, ${lat:-no latency}"
		done
		r=$((r + 1))
	done
	[ "$kernel" = patched ] && restore_flags
	return 0
}

echo "guest: $(uname -r) $(ncpus) CPUs, quick=$quick reps=$reps" >>"$out/guest.txt"
for e in "$@"; do
	status "start $e"
	"exp_$e"
done
status "done"
