#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The 2018 MISFIT shape as one command for make ab (POSIX sh, for
# busybox): one sysbench pinned to each big CPU, then one free sysbench
# per little CPU, four times as long; schedbench watch samples where the
# free ones run.  Needs asymmetric capacity (cpu_capacity).
#
# Usage: misfit-load.sh [-h] [-d SECS]
#
#   -d SECS   a free task's length on an idle big CPU (default 3); the
#             pinned ones take a quarter of that, as in the seed
#
# The first run of a boot measures sysbench's rate on an idle big CPU
# (kept in /tmp/misfit-load.rate for the runs after it).  Prints one
# line of key=value words, which make ab records as figures: ntasks,
# taskI_time_s and taskI_big_share for each free task I (left out when
# missing), longest_s, moved and waiting (free tasks that reached a big
# CPU after the pinned ones ended, of those still running then), when
# all of them did misfit_latency_ms (the last one's delay), and with
# the series misfit_migrations (feat_stats, over the tasks' run).  Each
# tool's output stays in /tmp/misfit-load/.  Exits 1 when the
# calibration fails, 4 without asymmetry.
# ab-programs: sysbench
set -u

usage() {
	sed -n '5,/^# calibration fails, 4 without asymmetry\./s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
secs=3
while getopts hd: opt; do
	case $opt in
	h) usage 0 ;;
	d) secs=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage 2
case $secs in '' | *[!0-9]* | 0*) echo "misfit-load: bad -d '$secs'" >&2; exit 2 ;; esac
for t in sysbench taskset schedbench; do
	command -v "$t" >/dev/null || { echo "misfit-load: no $t in PATH" >&2; exit 1; }
done

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
bigs=$(cpus_cap max)
littles=$(cpus_cap notmax)
[ -n "$littles" ] || { echo "misfit-load: no asymmetric capacity (all CPUs at the largest)" >&2; exit 4; }
big0=${bigs%%,*}
nbig=$(echo "$bigs" | tr , '\n' | wc -l)
prime=5000
D=/tmp/misfit-load
rm -rf "$D"
mkdir -p "$D"
# Let a feature just written settle.
sleep 1
rate=$(cat /tmp/misfit-load.rate 2>/dev/null)
if [ -z "$rate" ]; then
	rate=$(taskset -c "$big0" sysbench cpu --cpu-max-prime=$prime --threads=1 --time=2 run |
		tee "$D/calibrate.log" | awk '/events per second/ { printf "%d", $4 }')
	[ "${rate:-0}" -gt 0 ] || { echo "misfit-load: sysbench calibration failed" >&2; exit 1; }
	echo "$rate" >/tmp/misfit-load.rate
fi
# fstat NAME: a feat_stats counter, empty without the file or the name.
fstat() {
	awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/sched/feat_stats 2>/dev/null
}
long=$((rate * secs))
short=$((long / 4))
[ $short -gt 0 ] || short=1
echo "misfit-load: bigs $bigs littles $littles, $rate events/s on cpu$big0, long $long short $short" >"$D/shape.txt"
m0=$(fstat misfit_migrations)
pinned=
for b in $(echo "$bigs" | tr , ' '); do
	taskset -c "$b" sysbench cpu --cpu-max-prime=$prime --threads=1 \
		--events=$short --time=0 run >"$D/pinned$b.log" 2>&1 &
	pinned=$pinned${pinned:+,}$!
done
# sysbench takes 1-3 s to start under TCG: the pinned runs occupy the
# bigs before the others start, as they did in the seed.
i=0
while [ $i -lt 300 ]; do
	n=$(grep -l 'Threads started' "$D"/pinned*.log 2>/dev/null | wc -l)
	[ "$n" -ge "$nbig" ] && break
	sleep 0.1
	i=$((i + 1))
done
free=
i=0
for _ in $(echo "$littles" | tr , ' '); do
	sysbench cpu --cpu-max-prime=$prime --threads=1 \
		--events=$long --time=0 run >"$D/task$i.log" 2>&1 &
	free="$free $!"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # PIDs, split on purpose
schedbench watch -i 5 -b "$bigs" -P "$pinned" $free >"$D/watch.log" 2>&1
wait
m1=$(fstat misfit_migrations)
out=
i=0
for p in $free; do
	t=$(awk '/total time:/ { sub("s", "", $3); print $3 }' "$D/task$i.log")
	share=$(awk -v p="$p" '$1 == "task=" p { sub("big_share=", "", $4); print $4 }' "$D/watch.log")
	[ -n "$t" ] || echo "misfit-load: no time for free task $i, see $D/task$i.log" >&2
	[ -n "$share" ] || echo "misfit-load: no big share for free task $i, see $D/watch.log" >&2
	out="$out${t:+ task${i}_time_s=$t}${share:+ task${i}_big_share=$share}"
	i=$((i + 1))
done
out="ntasks=$i$out"
[ -z "$m0" ] || [ -z "$m1" ] || out="$out misfit_migrations=$((m1 - m0))"
longest=$(for i in $(seq 0 $((i - 1))); do
	awk '/total time:/ { sub("s", "", $3); print $3 }' "$D/task$i.log"
done | sort -g | tail -n1)
moved=$(sed -n 's/.* moved=\([0-9]*\)\/\([0-9]*\).*/moved=\1 waiting=\2/p' "$D/watch.log")
lat=$(sed -n 's/.*misfit_latency_ms=\([0-9.]*\)$/ misfit_latency_ms=\1/p' "$D/watch.log")
echo "$out${longest:+ longest_s=$longest} ${moved:-moved=0 waiting=0}$lat"
