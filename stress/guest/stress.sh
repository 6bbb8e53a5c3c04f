#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest stress driver for the debug kernels: stress/stress.sh runs it
# with scripts/run-guest.sh -r ROOTFS -x.  POSIX sh, for busybox.
#
# Usage: guest-stress.sh [-h] [-d SECS] [-s SEED] [-o OUTFILE]
#
#   -d SECS     seconds of stress (default 300)
#   -s SEED     seed of every random choice (default from /dev/urandom)
#   -o OUTFILE  the counters, KEY=VALUE lines (default /results/stress.txt)
#
# Workloads, from the Debian root at /tools (scripts/mk-rootfs.sh):
# hackbench -g 2 -f 5 -l 100 run again and again, two shell spinners that
# start on the smallest-capacity CPUs (asymmetric systems) or the last node,
# sysbench cpu with 1 thread and stress-ng --switch 1, all bounded by SECS.
# Meanwhile four chaos loops at nice -10, each with its own random stream:
#   flips     flipper (flipper.c, next to this script): one of MISFIT
#             LB_CLASSIFY (twice as often) SIS_ASYM_PREV RESCHED_INELIGIBLE
#             RUN_TO_PARITY or schedstats set on or off after a random
#             gap of 0-5 ms, checked in the features file; feat_stats
#             read every 16th;
#   hotplug   offline, hold 0.1-1 s, online: one CPU, every CPU of one
#             capacity (asymmetric systems) or one NUMA node, or all of them;
#             never CPU0; then a rest of 50-250 ms, or as long as the
#             offline and online writes (with cpu_online's retries) took
#             if longer, up to 20 s (hotplug_busy_ms in all), since a
#             flip waits for them (flip_write_ms);
#   cgroups   cgroup v2 groups under the cpu (and cpuset, when there) controller
#             made, weighted, made idle, bandwidth-limited, given CPUs,
#             filled with workload processes, emptied and removed;
#   affinity  a workload process (all its threads) gets a random CPU mask.
# Then every CPU comes back online, flags and schedstats are restored, each
# workload must finish with its expected output ("Time:", "total time:",
# "successful run completed"), the groups go, a task must run on every CPU,
# and the kernel must not be tainted.  Exits 0, or 1 with "stress: FAIL
# reason" as the last line.  Status lines go to the console as
# "SCHEDSERIES-STRESS ..." so that kernel messages can be placed in time.
# The first RCU stall, workqueue lockup or hung task in the kernel log
# also writes stall-snapshot.txt next to OUTFILE: every process's state,
# CPU, allowed CPUs, cgroup, cpu.weight and cpu.idle, and every group.
set -u

usage() {
	sed -n '5,/^# CPU, allowed CPUs/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
dur=300
seed=
out=/results/stress.txt
while getopts hd:s:o: opt; do
	case $opt in
	h) usage 0 ;;
	d) dur=$OPTARG ;;
	s) seed=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage 2

W=/tmp/stress
T=/tools/usr/bin
FEATS=/sys/kernel/debug/sched/features
FSTATS=/sys/kernel/debug/sched/feat_stats
STATS=/proc/sys/kernel/sched_schedstats
CG=/sys/fs/cgroup
SYS=/sys/devices/system/cpu
KNOBS="MISFIT LB_CLASSIFY SIS_ASYM_PREV RESCHED_INELIGIBLE RUN_TO_PARITY"
FLIPPER=${0%/*}/flipper

die() {
	echo "stress: FAIL $*"
	exit 1
}

# Record a failure from any loop; the first one becomes the verdict.
err() {
	echo "$*" >>"$W/errors"
	echo "SCHEDSERIES-STRESS error: $*" >/dev/console
}

status() {
	echo "SCHEDSERIES-STRESS $*" >/dev/console
	echo "stress: $*"
}

uptime_s() {
	read -r _u _ </proc/uptime
	echo "${_u%.*}"
}

# expand LIST : "0-2,5" -> " 0 1 2 5"
expand() {
	_out=
	for _r in $(echo "$1" | tr , ' '); do
		case $_r in
		*-*)
			_i=${_r%-*}
			while [ "$_i" -le "${_r#*-}" ]; do
				_out="$_out $_i"
				_i=$((_i + 1))
			done
			;;
		*) _out="$_out $_r" ;;
		esac
	done
	echo "$_out"
}

# mask CPU... : the hex affinity mask of those CPUs
mask() {
	_m=0
	for _c in "$@"; do
		_m=$((_m | (1 << _c)))
	done
	printf '%x' "$_m"
}

# alive PID : true while PID runs; a zombie (not reaped yet) has ended.
alive() {
	read -r _s 2>/dev/null </proc/"$1"/stat || return 1
	case ${_s##*) } in
	Z*) return 1 ;;
	esac
	return 0
}

# An endless stream of random numbers, reproducible from its seed.
rng() {
	awk -v s="$1" 'BEGIN { srand(s); for (;;) print int(rand() * 2147483647) }'
}

# Sets TARGETS to the PIDs of the workload processes alive now.
targets() {
	TARGETS=$SPINNERS
	for _d in /proc/[0-9]*; do
		read -r _c 2>/dev/null <"$_d/comm" || continue
		case $_c in
		hackbench | sysbench | stress-ng*) TARGETS="$TARGETS ${_d#/proc/}" ;;
		esac
	done
}

# Sets FLAGS to the state of the knobs in the features file: NAME or NO_NAME.
read_flags() {
	read -r _line <"$FEATS"
	FLAGS=
	for _k in $KNOBS; do
		case " $_line " in
		*" NO_$_k "*) FLAGS="$FLAGS NO_$_k" ;;
		*" $_k "*) FLAGS="$FLAGS $_k" ;;
		*) FLAGS="$FLAGS missing-$_k" ;;
		esac
	done
}

# cpu_online CPU : bring CPU back, a few tries; 0 when it is online.
cpu_online() {
	for _try in 1 2 3 4 5; do
		echo 1 2>>"$W/hotplug.err" >"$SYS/cpu$1/online" && return 0
		[ "$(cat "$SYS/cpu$1/online")" = 1 ] && return 0
		usleep 200000
	done
	return 1
}

# uptime_cs: the uptime in hundredths of a second (/proc/uptime has
# two decimals), without starting a program.
uptime_cs() {
	read -r _u _ </proc/uptime
	_f=${_u#*.}
	echo $((${_u%.*} * 100 + ${_f#0}))
}

hotplugger() {
	cycles=0 offs=0 refused=0 singles=0 groups=0 alls=0 busy=0
	while read -r r && read -r r2 && [ ! -e "$W/stop" ]; do
		a=$((r % 10))
		if [ "$a" -lt 6 ]; then
			# shellcheck disable=SC2086 # split on purpose
			set -- $HOT
			shift $((r2 % $#))
			set=$1
			singles=$((singles + 1))
		elif [ "$a" -lt 9 ] && [ "$NGROUPS" -gt 0 ]; then
			set=$(sed -n "$((r2 % NGROUPS + 1))p" "$W/groups")
			set=${set#* }
			groups=$((groups + 1))
		else
			set=$HOT
			alls=$((alls + 1))
		fi
		down=
		hp0=$(uptime_cs)
		for c in $set; do
			if echo 0 2>>"$W/hotplug.err" >"$SYS/cpu$c/online"; then
				down="$down $c"
				offs=$((offs + 1))
			else
				refused=$((refused + 1))
			fi
		done
		hp1=$(uptime_cs)
		usleep $((100000 + r2 / 7 % 900001))
		hp2=$(uptime_cs)
		for c in $down; do
			cpu_online "$c" || err "cpu$c does not come back online"
		done
		this=$((hp1 - hp0 + $(uptime_cs) - hp2))
		busy=$((busy + this))
		[ -n "$down" ] && cycles=$((cycles + 1))
		echo "hotplug_cycles=$cycles cpu_offlines=$offs hotplug_refused=$refused" \
			"hotplug_single=$singles hotplug_group=$groups hotplug_all=$alls" \
			"hotplug_busy_ms=$((busy * 10))" >"$W/count.hotplug"
		# Rest as long as the offline and online writes took (up to
		# 20 s): a flip waits for them, and on x86_64 with KASAN one
		# online write took over a minute, so back to back they left
		# the flipper little of the soak.
		rest=$((50000 + r / 10 % 200001))
		[ $((this * 10000)) -gt "$rest" ] && rest=$((this * 10000))
		[ "$rest" -gt 20000000 ] && rest=20000000
		# In slices of at most 1 s, so that the end is not held up.
		while [ "$rest" -gt 0 ] && [ ! -e "$W/stop" ]; do
			slice=$rest
			[ "$slice" -gt 1000000 ] && slice=1000000
			usleep "$slice"
			rest=$((rest - slice))
		done
	done
}

# cg_empty DIR : move every process of DIR to the root group.
cg_empty() {
	while read -r p; do
		echo "$p" 2>/dev/null >"$CG/cgroup.procs"
	done <"$1/cgroup.procs"
}

cgrouper() {
	ops=0 fails=0 made=0 removed=0 moves=0
	while read -r r && read -r r2 && [ ! -e "$W/stop" ]; do
		g=$CG/stress$((r % 6))
		ok=1
		if [ ! -d "$g" ]; then
			if mkdir "$g"; then
				made=$((made + 1))
			else
				ok=0
			fi
		else
			case $((r / 6 % 8)) in
			0) echo $((r2 % 10000 + 1)) >"$g/cpu.weight" || ok=0 ;;
			1) echo $((r2 % 2)) >"$g/cpu.idle" || ok=0 ;;
			2)
				if [ -f "$g/cpu.max" ]; then
					if [ $((r2 % 3)) = 0 ]; then
						echo max >"$g/cpu.max" || ok=0
					else
						echo "$((r2 % 90000 + 10000)) 100000" >"$g/cpu.max" || ok=0
					fi
				fi
				;;
			3)
				if [ -f "$g/cpuset.cpus" ]; then
					lo=$((r2 % NCPUS))
					hi=$((lo + r2 / NCPUS % (NCPUS - lo)))
					if [ $((r2 % 4)) = 0 ]; then
						echo "" >"$g/cpuset.cpus" || ok=0
					else
						echo "$lo-$hi" >"$g/cpuset.cpus" || ok=0
					fi
				fi
				;;
			4 | 5 | 6)
				targets
				# shellcheck disable=SC2086 # split on purpose
				set -- $TARGETS
				if [ $# -gt 0 ]; then
					shift $((r2 % $#))
					if echo "$1" 2>/dev/null >"$g/cgroup.procs"; then
						moves=$((moves + 1))
					else
						ok=0
					fi
				fi
				;;
			7)
				cg_empty "$g"
				if rmdir "$g" 2>/dev/null || { cg_empty "$g" && rmdir "$g"; }; then
					removed=$((removed + 1))
				else
					ok=0
				fi
				;;
			esac
		fi
		if [ "$ok" = 1 ]; then
			ops=$((ops + 1))
		else
			fails=$((fails + 1))
		fi
		echo "cgroup_ops=$ops cgroup_failed=$fails cgroup_made=$made" \
			"cgroup_removed=$removed cgroup_moves=$moves" >"$W/count.cgroups"
		usleep $((20000 + r2 / 5 % 80001))
	done 2>>"$W/cgroups.err"
}

affiner() {
	changes=0 fails=0
	while read -r r && read -r r2 && [ ! -e "$W/stop" ]; do
		targets
		# shellcheck disable=SC2086 # split on purpose
		set -- $TARGETS
		if [ $# -gt 0 ]; then
			shift $((r % $#))
			case $((r2 % 4)) in
			0) m=$ALLMASK ;;
			1) m=$STARTMASK ;;
			*) m=$(printf '%x' $((r2 / 4 % ALLBITS + 1))) ;;
			esac
			if taskset -ap "$m" "$1" >/dev/null 2>&1; then
				changes=$((changes + 1))
			else
				fails=$((fails + 1))
			fi
		fi
		echo "affinity_changes=$changes affinity_failed=$fails" >"$W/count.affinity"
		usleep $((20000 + r / 7 % 80001))
	done
}

hackbench_loop() {
	n=0
	while [ ! -e "$W/stop" ]; do
		n=$((n + 1))
		"$T/hackbench" -g 2 -f 5 -l 100 >"$W/hackbench.out" 2>&1
		rc=$?
		if [ "$rc" = 0 ] && grep -q '^Time:' "$W/hackbench.out"; then
			echo ok >>"$W/hackbench.runs"
		else
			echo "fail rc=$rc" >>"$W/hackbench.runs"
			cp "$W/hackbench.out" "$W/hackbench.fail.$n"
		fi
	done
}

[ -z "${dur##*[!0-9]*}" ] || [ "$dur" = 0 ] && die "bad -d '$dur' (seconds, > 0)"
[ -n "$seed" ] || seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
[ -z "${seed##*[!0-9]*}" ] && die "bad -s '$seed' (a number)"
rm -rf "$W"
mkdir -p "$W" || die "cannot make $W"
cd "$W" || die "cannot cd to $W"

# Tools, flags, counters and controllers must all be there.
for t in hackbench sysbench stress-ng; do
	[ -x "$T/$t" ] || die "no $T/$t (is the tools root shared, run-guest.sh -r?)"
done
[ -x "$FLIPPER" ] || die "no $FLIPPER (stress/stress.sh builds it from flipper.c)"
{ "$T/hackbench" -g 1 -f 1 -l 1 >"$W/smoke" 2>&1 && grep -q '^Time:' "$W/smoke"; } ||
	die "hackbench does not run: $(head -n1 "$W/smoke")"
"$T/sysbench" --version >"$W/smoke" 2>&1 || die "sysbench does not run: $(head -n1 "$W/smoke")"
echo "stress: $(cat "$W/smoke")"
"$T/stress-ng" --version >"$W/smoke" 2>&1 || die "stress-ng does not run: $(head -n1 "$W/smoke")"
echo "stress: $(cat "$W/smoke")"
[ -w "$FEATS" ] || die "no $FEATS"
[ -r "$FSTATS" ] || die "no $FSTATS"
[ -w "$STATS" ] || die "no $STATS"
read_flags
ORIG_FLAGS=$FLAGS
case $ORIG_FLAGS in *missing-*) die "features lacks a knob: $ORIG_FLAGS" ;; esac
read -r ORIG_STATS <"$STATS"
read -r TAINT0 </proc/sys/kernel/tainted
grep -qw cpu "$CG/cgroup.controllers" 2>/dev/null || die "no cpu controller in $CG"
echo +cpu >"$CG/cgroup.subtree_control" || die "cannot enable the cpu controller"
cpuset=no
grep -qw cpuset "$CG/cgroup.controllers" && echo +cpuset >"$CG/cgroup.subtree_control" &&
	cpuset=yes

# CPUs: the hotpluggable ones, and the groups to take down together.
PRESENT=$(expand "$(cat "$SYS/present")")
# shellcheck disable=SC2086 # split on purpose
set -- $PRESENT
NCPUS=$#
ALLBITS=$(((1 << NCPUS) - 1))
ALLMASK=$(printf '%x' "$ALLBITS")
HOT=
for c in $PRESENT; do
	[ "$c" != 0 ] && [ -f "$SYS/cpu$c/online" ] && HOT="$HOT $c"
done
[ -n "$HOT" ] || die "no hotpluggable CPU (CONFIG_HOTPLUG_CPU?)"
: >"$W/groups"
# Capacity groups on asymmetric systems only: x86_64 has cpu_capacity
# too, with one value for every CPU, and its groups are the nodes.
caps=
[ -f "$SYS/cpu0/cpu_capacity" ] && caps=$(cat "$SYS"/cpu[0-9]*/cpu_capacity | sort -nu)
if [ "$(echo "$caps" | wc -w)" -gt 1 ]; then
	for cap in $caps; do
		l=
		for c in $HOT; do
			[ "$(cat "$SYS/cpu$c/cpu_capacity")" = "$cap" ] && l="$l $c"
		done
		[ -n "$l" ] && echo "capacity$cap$l" >>"$W/groups"
	done
	small=$(echo "$caps" | head -n1)
	start=
	for c in $PRESENT; do
		[ "$(cat "$SYS/cpu$c/cpu_capacity")" = "$small" ] && start="$start $c"
	done
else
	start=
	for n in /sys/devices/system/node/node[0-9]*; do
		[ -d "$n" ] || continue
		l=
		for c in $(expand "$(cat "$n/cpulist")"); do
			[ "$c" != 0 ] && l="$l $c"
		done
		[ -n "$l" ] && echo "${n##*/}$l" >>"$W/groups"
		start=$(expand "$(cat "$n/cpulist")")
	done
	[ -n "$start" ] || start=$PRESENT
fi
NGROUPS=$(wc -l <"$W/groups")
# shellcheck disable=SC2086 # split on purpose
STARTMASK=$(mask $start)
status "seed=$seed secs=$dur cpus=$NCPUS hotpluggable=$HOT groups=$(paste -sd';' "$W/groups")" \
	"spinners on $STARTMASK cpuset=$cpuset flags=$ORIG_FLAGS schedstats=$ORIG_STATS"

# Workloads.
hackbench_loop &
HB=$!
SPINNERS=
for _ in 1 2; do
	# shellcheck disable=SC2016 # expanded by the spinner's own sh
	sh -c 'while [ ! -e "$1" ]; do i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; done' \
		spin "$W/stop" &
	taskset -p "$STARTMASK" $! >/dev/null
	SPINNERS="$SPINNERS $!"
done
( "$T/sysbench" cpu --threads=1 --cpu-max-prime=2000 --time="$dur" run >"$W/sysbench.out" 2>&1
  echo $? >"$W/sysbench.rc" ) &
SB=$!
( "$T/stress-ng" --switch 1 --timeout "${dur}s" --metrics-brief >"$W/stress-ng.out" 2>&1
  echo $? >"$W/stress-ng.rc" ) &
SN=$!

# Chaos, at nice -10 (inherited from this shell): under TCG with KASAN the
# workloads would otherwise starve the loops that do the flipping.
renice -n -10 -p $$ >/dev/null || err "cannot renice the chaos loops"
# The flipper is C (flipper.c, built by stress/stress.sh): a shell loop
# that shares the slow guest with the workloads flips far too rarely.
( "$FLIPPER" -s "$seed" -c "$W/count.flips" "$W/stop" 2>"$W/flipper.err"
  rc=$?
  [ "$rc" = 0 ] || err "flipper exit $rc: $(cat "$W/flipper.err")" ) &
L_FLIP=$!
(rng $((seed + 1)) | hotplugger) &
L_HOT=$!
(rng $((seed + 2)) | cgrouper) &
L_CG=$!
(rng $((seed + 3)) | affiner) &
L_AFF=$!
LOOPS="$L_FLIP $L_HOT $L_CG $L_AFF"

counters() {
	cat "$W"/count.* 2>/dev/null | tr '\n' ' '
}

# snapshot FILE: every process's state, CPU, allowed CPUs, cgroup and that
# group's cpu.weight and cpu.idle, so that a stall is explained rather
# than guessed at from the console afterwards.
snapshot() {
	{
		echo "# uptime=$(uptime_s) online=$(cat "$SYS/online") $(counters)"
		echo "# pid state cpu allowed cgroup weight idle comm"
		for d in /proc/[0-9]*; do
			st=$(cat "$d/stat" 2>/dev/null) || continue
			comm=${st#*(}
			comm=${comm%)*}
			# shellcheck disable=SC2086 # split on purpose
			set -- ${st##*) }
			cg=$(sed -n 's/^0:://p' "$d/cgroup" 2>/dev/null)
			w=- idle=-
			if [ -n "$cg" ] && [ "$cg" != / ]; then
				w=$(cat "$CG$cg/cpu.weight" 2>/dev/null || echo -)
				idle=$(cat "$CG$cg/cpu.idle" 2>/dev/null || echo -)
			fi
			echo "${d#/proc/} $1 ${37} $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$d/status" 2>/dev/null)" \
				"${cg:-?} $w $idle $comm"
		done
		for g in "$CG"/stress[0-9]*; do
			[ -d "$g" ] || continue
			echo "# group ${g#"$CG"} weight=$(cat "$g/cpu.weight" 2>/dev/null)" \
				"idle=$(cat "$g/cpu.idle" 2>/dev/null) max=$(cat "$g/cpu.max" 2>/dev/null)" \
				"cpus=$(cat "$g/cpuset.cpus" 2>/dev/null) procs=$(wc -l <"$g/cgroup.procs")"
		done
	} >"$1" 2>/dev/null
}
STALL_RE='detected stalls? on CPUs|self-detected stall|workqueue lockup|blocked for more than'

t0=$(uptime_s)
next=30
while :; do
	sleep 5
	el=$(($(uptime_s) - t0))
	[ "$el" -ge "$dur" ] && break
	for p in $LOOPS; do
		alive "$p" || { err "chaos loop $p ended early"; break 2; }
	done
	if [ "$el" -ge "$next" ]; then
		status "t=${el}s $(counters)"
		next=$((next + 30))
	fi
	# The console scan fails the run on a stall; this records who waited.
	if [ ! -e "$W/snapped" ] && dmesg | grep -qE "$STALL_RE"; then
		touch "$W/snapped"
		snapshot "${out%/*}/stall-snapshot.txt"
		status "t=${el}s stall in the kernel log: tasks, groups and weights in ${out%/*}/stall-snapshot.txt"
	fi
done
touch "$W/stop"
status "t=$(($(uptime_s) - t0))s stopping: $(counters)"

# wait_gone SECS PID... : wait for the PIDs to end; prints those left.
wait_gone() {
	_end=$(($(uptime_s) + $1))
	shift
	while :; do
		_left=
		for _p in "$@"; do
			alive "$_p" && _left="$_left $_p"
		done
		[ -z "$_left" ] || [ "$(uptime_s)" -ge "$_end" ] && break
		sleep 1
	done
	echo "$_left"
}

# shellcheck disable=SC2086 # split on purpose
left=$(wait_gone 120 $LOOPS)
for p in $left; do
	err "chaos loop $p still running 120s after the end: $(tr '\n' ' ' <"/proc/$p/stack" 2>/dev/null)"
	kill -9 "$p" 2>/dev/null
done

# Restore: CPUs, flags, schedstats, groups, affinity.
for c in $HOT; do
	[ "$(cat "$SYS/cpu$c/online")" = 1 ] || cpu_online "$c" || err "cpu$c stays offline"
done
for f in $ORIG_FLAGS; do
	echo "$f" >"$FEATS" || err "cannot restore $f"
done
echo "$ORIG_STATS" >"$STATS" || err "cannot restore schedstats $ORIG_STATS"
read_flags
[ "$FLAGS" = "$ORIG_FLAGS" ] || err "flags are '$FLAGS' after restoring '$ORIG_FLAGS'"
targets
for p in $TARGETS; do
	taskset -ap "$ALLMASK" "$p" >/dev/null 2>&1
done

# The workloads must end by themselves, with their expected output.
# shellcheck disable=SC2086 # split on purpose
left=$(wait_gone 240 $HB $SB $SN $SPINNERS)
for p in $left; do
	err "workload $p ($(cat "/proc/$p/comm" 2>/dev/null)) still running 240s after the end"
	kill -9 "$p" 2>/dev/null
done
# The groups go once the workloads are gone: while hackbench still forks,
# a child can land in a group just emptied, and rmdir rightly fails with
# EBUSY (seen once in CI).  A group that stays busy is reported with what
# is still in it.
for g in "$CG"/stress[0-9]*; do
	[ -d "$g" ] || continue
	i=0
	while [ $i -lt 10 ]; do
		cg_empty "$g"
		rmdir "$g" 2>/dev/null && break
		sleep 1
		i=$((i + 1))
	done
	[ -d "$g" ] && err "cannot remove $g: procs '$(tr '\n' ' ' <"$g/cgroup.procs")'," \
		"events '$(tr '\n' ' ' <"$g/cgroup.events")'"
done
hb_ok=$(grep -c '^ok' "$W/hackbench.runs" 2>/dev/null)
hb_fail=$(grep -c '^fail' "$W/hackbench.runs" 2>/dev/null)
[ "${hb_ok:-0}" -gt 0 ] || err "no hackbench run finished"
if [ "${hb_fail:-0}" != 0 ]; then
	cp "$W"/hackbench.fail.* "${out%/*}/" 2>/dev/null
	err "hackbench failed $hb_fail of $((hb_ok + hb_fail)) runs: $(cat "$W"/hackbench.fail.* | head -n1)"
fi
{ [ "$(cat "$W/sysbench.rc" 2>/dev/null)" = 0 ] && grep -q 'total time:' "$W/sysbench.out"; } ||
	err "sysbench: rc=$(cat "$W/sysbench.rc" 2>/dev/null), $(tail -n1 "$W/sysbench.out")"
{ [ "$(cat "$W/stress-ng.rc" 2>/dev/null)" = 0 ] &&
	grep -q 'successful run completed' "$W/stress-ng.out"; } ||
	err "stress-ng: rc=$(cat "$W/stress-ng.rc" 2>/dev/null), $(tail -n1 "$W/stress-ng.out")"

# Still answering: a task on every CPU, and no taint.
for c in $PRESENT; do
	taskset -c "$c" true || err "cannot run a task on cpu$c"
done
read -r taint </proc/sys/kernel/tainted
[ "$taint" = "$TAINT0" ] || err "kernel tainted $taint (was $TAINT0)"

{
	echo "seed=$seed"
	echo "seconds=$(($(uptime_s) - t0))"
	echo "stress_seconds=$dur"
	counters | tr ' ' '\n' | sed '/^$/d'
	echo "hackbench_runs=${hb_ok:-0}"
	echo "hackbench_failed=${hb_fail:-0}"
	echo "sysbench_events_per_s=$(sed -n 's/.*events per second: *//p' "$W/sysbench.out")"
	echo "stress_ng=$(grep -m1 -o 'successful run completed.*' "$W/stress-ng.out")"
	echo "cpuset=$cpuset"
	echo "tainted=$taint"
	if [ -s "$W/errors" ]; then
		echo "errors=$(wc -l <"$W/errors")"
		echo "verdict=FAIL $(head -n1 "$W/errors")"
	else
		echo "errors=0"
		echo "verdict=PASS"
	fi
} >"$W/stress.txt"
cp "$W/stress.txt" "$out" || echo "stress: cannot write $out"
cat "$W/hotplug.err" "$W/cgroups.err" 2>/dev/null | sort | uniq -c | sort -rn | head -n 5 |
	sed 's/^/stress: refused: /'
sed 's/^/stress: /' "$W/stress.txt"
[ -s "$W/errors" ] && die "$(head -n1 "$W/errors")"
status "PASS"
exit 0
