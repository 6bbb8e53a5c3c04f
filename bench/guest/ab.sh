#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest A/B driver: bench/ab.sh runs it with scripts/run-guest.sh -x.
# POSIX sh, for busybox.
#
# Usage: guest-ab.sh [-h] [-p] [-w] [-r REPS] [-t SECS] [-d DIR]
#                    [-s SETTING]
#
#   -r REPS   rounds (default 4); round i runs A then B for odd i, B then
#             A for even i, after one warm-up run at A that is not
#             counted; with -s, runs after the warm-up
#   -s SETTING  one setting only, for two kernels in alternating boots:
#             the kernel as booted, labelled SETTING (A or B), REPS runs
#             after a warm-up; no feature is written
#   -t SECS   timeout of one run (default 300)
#   -w        no warm-up runs
#   -p        no perf stat -a around the command (so no perf_cs and
#             perf_migrations): perf's hooks on every context switch are
#             work that the figures of the instruction-counted guest
#             then include
#   -d DIR    where ab-features and ab-cmd are, and where raw.txt and
#             logs/ go (default the directory of this script)
#
# DIR/ab-cells, when there, holds one cell a line: NAME=VALUE words,
# in the command's environment for every run of that cell (env, so
# they do not touch this script's own variables); each cell gets its
# own warm-up and rounds, and its runs carry cell=NAME=VALUE,NAME=VALUE.
# DIR/ab-features holds the features that make setting B, as the
# features file takes them (LB_CLASSIFY, NO_RUN_TO_PARITY, ...); A is
# the kernel's setting at boot (without -s).  DIR/ab-cmd holds the
# command, run with sh -c; DIR is first in PATH, so a user's programs
# copied there run by their names.  Each counted run is one line of "key=value" words in
# DIR/raw.txt and on the console ("SCHEDSERIES-RAW ..."):
#   [cell=] setting= rep= rc= wall_ms= ctxt=
#                                      always (ctxt: /proc/stat's
#                                      context switches in the run)
#   perf_cs= perf_migrations=          with perf, without -p: perf stat -a's
#                                      context-switches, cpu-migrations
#   hackbench_s pipe_usecs_per_op pipe_ops_per_sec perf_bench_total_s
#   cyclictest_avg_us cyclictest_max_us sysbench_events_per_s
#   stress_ng_<stressor>_ops_per_s     what the command printed, when it
#                                      is one of those tools (cyclictest:
#                                      each thread's last line, averaged;
#                                      stress-ng: --metrics-brief)
#   <key>=<number>                     any line made only of such words
#                                      (the last value of a key counts)
#   fs_<counter>=                      each feat_stats counter's change
#                                      (schedstats is on for every run,
#                                      A and B alike)
# Each run's output is DIR/logs/[cellN-]SETTING-REP.log.  Every feature is put
# back as found.  Exits 0, or 1 with "ab: FAIL reason" as the last line
# (an unknown feature, naming the kernel's; a command not in the guest;
# a run that exits non-zero or times out, with its exit code); the runs
# before the failure stay in raw.txt.
set -u

usage() {
	sed -n '5,/^# before the failure stay in raw.txt\./s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
reps=4
tmo=300
only=
dir=$(cd "$(dirname "$0")" && pwd)
noperf=0
warm=1
while getopts hpwr:t:d:s: opt; do
	case $opt in
	h) usage 0 ;;
	r) reps=$OPTARG ;;
	t) tmo=$OPTARG ;;
	d) dir=$OPTARG ;;
	s) only=$OPTARG ;;
	p) noperf=1 ;;
	w) warm=0 ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage 2

FEATS=/sys/kernel/debug/sched/features
FSTATS=/sys/kernel/debug/sched/feat_stats
SSTATS=/proc/sys/kernel/sched_schedstats
RAW=$dir/raw.txt
LOGS=$dir/logs
T=/tmp/ab
mkdir -p "$LOGS" "$T"
: >"$RAW"

die() {
	echo "ab: FAIL $*"
	echo "SCHEDSERIES-AB FAIL $*" >/dev/console
	exit 1
}
record() {
	echo "$*" >>"$RAW"
	echo "SCHEDSERIES-RAW $*" >/dev/console
}

case $reps in '' | *[!0-9]* | 0*) die "bad -r '$reps' (a number > 0)" ;; esac
case $tmo in '' | *[!0-9]* | 0*) die "bad -t '$tmo' (seconds > 0)" ;; esac
case $only in '' | A | B) ;; *) die "bad -s '$only' (A or B)" ;; esac
[ -r "$dir/ab-cmd" ] || die "no $dir/ab-cmd"
CMD=$(cat "$dir/ab-cmd")
[ -n "$CMD" ] || die "empty command"
B=$(cat "$dir/ab-features" 2>/dev/null)
[ -n "$B" ] || [ -n "$only" ] || die "no features for setting B in $dir/ab-features"
PATH=$dir:$PATH
export PATH

A=
if [ -n "$only" ]; then
	# Two kernels: each at its defaults; the features file may be
	# missing (a kernel without debugfs).
	[ ! -r "$FEATS" ] || A=$(cat "$FEATS")
	B=
else
	[ -w "$FEATS" ] ||
		die "no writable $FEATS: this kernel has no debugfs there (CONFIG_DEBUG_FS, mounted?), so there are no features to flip"
	A=$(cat "$FEATS")
fi
for f in $B; do
	n=${f#NO_}
	case " $A " in
	*" $n "* | *" NO_$n "*) ;;
	*) die "unknown feature '$f'; this kernel's are: $(echo "$A" | sed 's/NO_//g')" ;;
	esac
done
# The command runs with sh -c: it must parse, and a program it starts
# with must be in the guest.  A first word that is shell (an assignment,
# a keyword, a brace or parenthesis, anything with ;&|<>) is left to sh.
sh -n -c "$CMD" 2>/dev/null || die "the command does not parse as sh: $CMD"
set -f
# shellcheck disable=SC2086 # the first word of the command
set -- $CMD
set +f
[ $# -gt 0 ] || die "empty command"
case $1 in
env | nice | taskset | chrt | *=* | *[';&|<>(){}']* | if | for | while | until | case | '!') ;;
*)
	command -v "$1" >/dev/null ||
		die "no command '$1' in the guest (PATH=$PATH); a program of your own goes in AB_BIN" ;;
esac

restore() {
	[ -n "$B" ] || return 0
	for f in $A; do
		echo "$f" >"$FEATS"
	done
}
# feat_stats counts only with schedstats on: on for every run, A and B
# alike, and put back at the end.
SSTATS0=
if [ -w "$SSTATS" ]; then
	read -r SSTATS0 <"$SSTATS"
	echo 1 >"$SSTATS"
fi
trap 'restore; [ -z "$SSTATS0" ] || echo "$SSTATS0" >"$SSTATS"' EXIT
# setting A|B: the kernel's features at boot, or those with B's written.
setting() {
	restore
	if [ "$1" = B ]; then
		for f in $B; do
			echo "$f" >"$FEATS" || die "cannot write $f to $FEATS"
		done
	fi
}

what=round
[ -z "$only" ] || what=run
PERF=
[ "$noperf" -eq 1 ] || ! command -v perf >/dev/null || PERF=perf
# perf stat returns its child's exit status, 0 for a child killed by a
# signal; a second line keeps sh from exec'ing the command, so that sh
# reports such a death as 128 + the signal.
NL='
'

ctxt() {
	awk '$1 == "ctxt" { print $2 }' /proc/stat
}
# uptime in ms, from /proc/uptime (10 ms steps).
now_ms() {
	awk '{ printf "%d\n", int($1 * 1000 + 0.5) }' /proc/uptime
}
fstats() {
	if [ -r "$FSTATS" ]; then cat "$FSTATS"; else :; fi
}

# figures LOG: the figures of the tools we know, and any key=number line.
figures() {
	awk '
	function num(x) { return x ~ /^[-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ }
	/^Time: [0-9.]+$/ { out = out " hackbench_s=" $2 }
	/usecs\/op$/ && num($1) { out = out " pipe_usecs_per_op=" $1 }
	/ops\/sec$/ && num($1) { out = out " pipe_ops_per_sec=" $1 }
	/Total time: [0-9.]+ \[sec\]/ { out = out " perf_bench_total_s=" $3 }
	# cyclictest: the last "T:" line of each thread (without -q it
	# prints one now and then); "Avg:" and its number are one word when
	# the number is wide.
	/^T: *[0-9]+ .*Avg: *[0-9]+/ {
		t = $2
		if (!(t in tavg)) nt++
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^Avg:/) tavg[t] = $i == "Avg:" ? $(i + 1) : substr($i, 5)
			if ($i ~ /^Max:/) tmax[t] = $i == "Max:" ? $(i + 1) : substr($i, 5)
		}
	}
	/events per second:/ { out = out " sysbench_events_per_s=" $NF }
	# stress-ng --metrics-brief: stressor, bogo ops, real, usr and sys
	# time, then bogo ops/s over real time.
	/ metrc: / && num($5) && num($9) {
		out = out " stress_ng_" $4 "_ops_per_s=" $9
	}
	{
		ok = NF > 0
		for (i = 1; i <= NF; i++) {
			p = index($i, "=")
			if (p < 2 || !num(substr($i, p + 1)) || substr($i, 1, p - 1) !~ /^[A-Za-z_][A-Za-z0-9_]*$/)
				ok = 0
		}
		if (ok)
			for (i = 1; i <= NF; i++) {
				p = index($i, "=")
				k = substr($i, 1, p - 1)
				if (k ~ /^(setting|rep|rc|wall_ms|ctxt|perf_cs|perf_migrations|boot|seed)$/)
					continue
				if (!(k in kv)) order[nk++] = k
				kv[k] = substr($i, p + 1)
			}
	}
	END {
		if (nt) {
			for (t in tavg) { s += tavg[t]; if (tmax[t] + 0 > mx) mx = tmax[t] + 0 }
			out = out sprintf(" cyclictest_avg_us=%.1f cyclictest_max_us=%d", s / nt, mx)
		}
		for (i = 0; i < nk; i++) out = out " " order[i] "=" kv[order[i]]
		print substr(out, 2)
	}' "$1"
}

# fs_delta BEFORE AFTER: "fs_NAME=change" for every counter.
fs_delta() {
	awk 'NR == FNR { a[$1] = $2; next } NF == 2 { printf " fs_%s=%s", $1, $2 - a[$1] }' "$1" "$2"
}

# run SETTING REP: one run of the current cell; REP 0 is the warm-up,
# not recorded.
run() {
	s=$1 r=$2 log=$LOGS/$cpre$1-$2.log
	setting "$s"
	fstats >"$T/fs0"
	rm -f "$T/perf"
	c0=$(ctxt)
	t0=$(now_ms)
	# The cell's variables reach the command only (env), not this shell.
	# shellcheck disable=SC2086 # NAME=VALUE words, checked, no globs
	if [ -n "$PERF" ]; then
		timeout -s KILL "$tmo" perf stat -a -x, -e context-switches,cpu-migrations \
			-o "$T/perf" -- env $cenv sh -c "$CMD$NL"'exit $?' >"$log" 2>&1 </dev/null
	else
		timeout -s KILL "$tmo" env $cenv sh -c "$CMD" >"$log" 2>&1 </dev/null
	fi
	rc=$?
	t1=$(now_ms)
	c1=$(ctxt)
	fstats >"$T/fs1"
	[ "$rc" = 137 ] && rc=124
	line="${ctag:+cell=$ctag }setting=$s rep=$r rc=$rc wall_ms=$((t1 - t0)) ctxt=$((c1 - c0))"
	if [ -n "$PERF" ] && [ -s "$T/perf" ]; then
		line="$line $(awk -F, '$1 ~ /^[0-9]+$/ && $3 == "context-switches" { printf "perf_cs=%s ", $1 }
			$1 ~ /^[0-9]+$/ && $3 == "cpu-migrations" { printf "perf_migrations=%s", $1 }' "$T/perf")"
	fi
	fig=$(figures "$log")
	line="$line $fig$(fs_delta "$T/fs0" "$T/fs1")"
	[ "$r" = 0 ] || record "$line"
	rel=logs/$cpre$s-$r.log
	# A command whose last step succeeded can hide a workload that failed.
	if [ -z "$fig" ] && [ "$rc" = 0 ]; then
		echo "ab: warning: ${ctag:+cell $ctag, }setting $s, $what $r: the command printed no figure of its own (only wall time, context switches and counters): did the workload run? $rel: $(tail -n 2 "$log" | tr '\n' ' ')"
		echo "SCHEDSERIES-AB WARNING $s rep $r: no figure of the command's own" >/dev/console
	fi
	echo "SCHEDSERIES-AB ${ctag:+$ctag }$s rep $r rc=$rc" >/dev/console
	if [ "$rc" = 124 ]; then
		die "${ctag:+cell $ctag, }setting $s, $what $r: the command timed out after ${tmo}s (exit 124); $rel: $(tail -n 2 "$log" | tr '\n' ' ')"
	elif [ "$rc" != 0 ]; then
		die "${ctag:+cell $ctag, }setting $s, $what $r: the command exited $rc; $rel: $(tail -n 2 "$log" | tr '\n' ' ')"
	fi
}

# cell_runs: the warm-up and the rounds of the current cell.
cell_runs() {
	if [ -n "$only" ]; then
		[ "$warm" -eq 0 ] || run "$only" 0
		i=1
		while [ "$i" -le "$reps" ]; do
			run "$only" "$i"
			i=$((i + 1))
		done
		return
	fi
	[ "$warm" -eq 0 ] || run A 0
	i=1
	while [ "$i" -le "$reps" ]; do
		if [ $((i % 2)) -eq 1 ]; then
			run A "$i"
			run B "$i"
		else
			run B "$i"
			run A "$i"
		fi
		i=$((i + 1))
	done
}

if [ -n "$only" ]; then
	echo "SCHEDSERIES-AB start: this kernel is setting $only; command: $CMD; $reps runs per cell" >/dev/console
else
	echo "SCHEDSERIES-AB start: B = $B; command: $CMD; $reps rounds per cell" >/dev/console
fi
ctag='' cpre='' cenv=''
ncells=0
if [ -s "$dir/ab-cells" ]; then
	while IFS= read -r cell; do
		ncells=$((ncells + 1))
		ctag='' cpre=cell$ncells- cenv=''
		for w in $cell; do
			name=${w%%=*} val=${w#*=}
			case $name in '' | [!A-Za-z_]* | *[!A-Za-z0-9_]*) die "bad cell variable '$w'" ;; esac
			case $val in *[!A-Za-z0-9_.:+-]*) die "bad cell value '$w'" ;; esac
			cenv="$cenv $w"
			ctag=${ctag:+$ctag,}$w
		done
		echo "SCHEDSERIES-AB cell $ncells: $ctag" >/dev/console
		cell_runs
	done <"$dir/ab-cells"
else
	ncells=1
	cell_runs
fi
if [ -n "$B" ]; then
	restore
	[ "$(cat "$FEATS")" = "$A" ] || die "features not restored: $(cat "$FEATS")"
fi
n=$reps
[ -n "$only" ] || n=$((2 * reps))
echo "ab: done, $((n * ncells)) runs in $RAW"
