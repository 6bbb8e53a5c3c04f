#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn the raw results of bench/bench.sh into summary.md and PNG plots.
#
# Usage: bench/bench-report.sh [-h] RESULTS
#
# Reads RESULTS/*/bench/raw.txt (one "key=value" line per measurement,
# written by bench/bench.sh from its bench/ab.sh runs), RESULTS/base.txt,
# RESULTS/*/throttle.txt, the seeds in RESULTS/*/qemu.cmd,
# RESULTS/determinism.txt and RESULTS/ab/*/ (the runs' own verdicts).
# For every experiment it writes a table with the median and the spread
# (min-max) over the repeats, the on/off ratio of the medians and the
# seed's published figure beside ours, and a plot, RESULTS/EXP.png, with
# every repeat as a point and the median as a bar.  Nothing is dropped or
# smoothed: every repeat counts, and a missing figure shows as "-".
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

usage() {
	sed -n '3,/^# smoothed/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
[[ ${1:-} == -h ]] && usage 0
[[ $# -eq 1 ]] || usage 2
res=$(realpath "$1")
[[ -d $res ]] || die "no results directory '$1'"
need_pkgs gnuplot-nox python3-scipy

all=$res/raw-all.txt
: >"$all"
for f in "$res"/*/bench/raw.txt; do
	[[ -f $f ]] || continue
	b=$(basename "$(dirname "$(dirname "$f")")")
	sed "s/^/boot=$b /" "$f" >>"$all"
done
md=$res/summary.md

# seed_of BOOT: the QEMU -seed of RESULTS/BOOT/qemu.cmd ("none" without).
seed_of() {
	grep -o -- '-seed [0-9]*' "$res/$1/qemu.cmd" 2>/dev/null | cut -d' ' -f2 | grep . || echo none
}
# seeds PREFIX: "BOOT (seed N), ..." for the boots RESULTS/PREFIX-*.
seeds() {
	local d out=
	for d in "$res/$1"-*/; do
		[[ -f $d/qemu.cmd ]] || continue
		out+="${out:+, }$(basename "$d") (QEMU seed $(seed_of "$(basename "$d")"))"
	done
	echo "$out"
}
# apart V...: (max - min) / min of the numbers V (not "-"), in %, or "-"
# for fewer than two.
apart() {
	printf '%s\n' "$@" | awk '$1 != "-" { v[n++] = $1; if (n == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
		END { if (n < 2 || lo <= 0) print "-"; else printf "%.1f", 100 * (hi - lo) / lo }'
}
# determinism PREFIX: the lines of determinism.txt about PREFIX boots, as
# a list.
determinism() {
	grep "^$1-" "$res/determinism.txt" 2>/dev/null | sed 's/^/- /' || true
}

# stats, sel FILTER KEY: lib.sh's kv_stats, and kv_sel over all runs.
stats() { kv_stats; }
sel() { kv_sel "$all" "$1" "$2"; }
# med FILTER KEY -> "median [min-max] (n)"
cell() {
	local s
	s=$(sel "$1" "$2" | stats)
	read -r m lo hi n <<<"$s"
	if [[ $n == 0 ]]; then echo "-"; else echo "$m [$lo-$hi] (n=$n)"; fi
}
median() {
	sel "$1" "$2" | stats | cut -d' ' -f1
}
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.3f", a / b }'
}

# distinct PREFIX: the boots RESULTS/PREFIX-* that have results, the
# first of each QEMU seed only: boots with the same seed are the same
# sample (they must give the same figures), not two.
distinct() {
	local d b seen=,
	for d in "$res/$1"-*/; do
		[[ -f $d/bench/raw.txt ]] || continue
		b=$(basename "$d")
		[[ $seen == *",$(seed_of "$b"),"* ]] && continue
		seen+=$(seed_of "$b"),
		echo "$b"
	done
}
# vals FILTER KEY: sel, or with SEP_BOOTS (boot names) set, sel over
# those boots only.
vals() {
	local b
	if [[ -z ${SEP_BOOTS:-} ]]; then
		sel "$1" "$2"
		return
	fi
	for b in $SEP_BOOTS; do
		sel "boot=$b $1" "$2"
	done
}
# sep WHAT FILTER_A FILTER_B KEY: the two settings' repeats compared by
# bench/ab-stats.py (SciPy: Mann-Whitney U, a bootstrap interval of the
# ratio of the medians), the first setting's over the second's, as the
# tables' ratios.  One line, which bench/results-table.py reads:
#   - WHAT: VERDICT, first/second RATIO [LO-HI], p=P (medians A vs B,
#     [min-max] vs [min-max], nA+nB repeats)
sep() {
	local out ratio lo hi p v am alo ahi an bm blo bhi bn
	read -r am alo ahi an <<<"$(vals "$2" "$4" | stats)"
	read -r bm blo bhi bn <<<"$(vals "$3" "$4" | stats)"
	if [[ $an == 0 || $bn == 0 ]]; then
		echo "- $1: not measured"
		return
	fi
	out=$({ vals "$3" "$4" | sed 's/^/x A /'; vals "$2" "$4" | sed 's/^/x B /'; } |
		"$REPO/bench/ab-stats.py") || die "bench/ab-stats.py failed for $1"
	[[ -n $out ]] || die "bench/ab-stats.py gave nothing for $1"
	read -r _ ratio lo hi p v <<<"$out"
	case $v in
	B_higher) v="first higher" ;;
	B_lower) v="first lower" ;;
	no_difference_shown) v="no difference shown" ;;
	too_few_runs) v="too few repeats to tell" ;;
	esac
	echo "- $1: $v, first/second $ratio$([[ $lo == - ]] || echo " [$lo-$hi]"), p=$p (medians $am vs $bm, [$alo-$ahi] vs [$blo-$bhi], $an+$bn repeats)"
}

# plot NAME TITLE YLABEL LABEL=FILTER|KEY...: one column of points per label.
plot() {
	local name=$1 title=$2 ylabel=$3 i=0 spec label filt key tics=
	shift 3
	local pts=$res/$name.pts med=$res/$name.med
	: >"$pts"
	: >"$med"
	for spec in "$@"; do
		label=${spec%%=*}
		filt=${spec#*=}
		key=${filt##*|}
		filt=${filt%|*}
		sel "$filt" "$key" | awk -v x="$i" '$1 != "nan" && $1 != "none" { print x, $1 }' >>"$pts"
		echo "$i $(median "$filt" "$key" | sed 's/^-$/NaN/')" >>"$med"
		tics+="${tics:+, }\"$label\" $i"
		i=$((i + 1))
	done
	gnuplot >"$res/$name.gnuplot.log" 2>&1 <<-EOF || progress "gnuplot failed for $name, see $res/$name.gnuplot.log"
		set terminal pngcairo size 900,480 font ",10"
		set output "$res/$name.png"
		set title "$title"
		set ylabel "$ylabel"
		set xrange [-0.6:$((i - 1)).6]
		set xtics ($tics) rotate by -20
		set yrange [0:*]
		set grid ytics
		set style fill solid 0.25
		set boxwidth 0.6
		plot "$med" using 1:2 with boxes title "median", \
		     "$pts" using 1:2 with points pt 7 ps 0.8 title "each repeat"
	EOF
}

{
	echo "# Benchmark summary"
	echo
	echo "Each figure is the median over the repeats, with [min-max] and the count;"
	echo "settings alternated within one boot (on,off then off,on).  Ratios are"
	echo "median(flag on) / median(flag off).  Under QEMU TCG on a 2-CPU host every"
	echo "figure carries host noise; placement and counts say more than times."
	echo
	echo '```'
	cat "$res/base.txt"
	echo '```'
	echo
} >"$md"

# ---- 1. misfit ----
{
	echo "## 1. Misfit migration (MISFIT), 2018 sysbench workload"
	echo
	echo "Mode: multi-threaded TCG, every vCPU a host thread on 2 host CPUs.  Can show: placement"
	echo "(which CPU class a task ran on, migrations).  Cannot show: times free of"
	echo "host noise, or times that follow capacity exactly (see Limits below)."
	echo
	echo "Bigs busy with pinned sysbench runs of a quarter of the work; one"
	echo "unpinned sysbench per little CPU.  \"longest\" is the completion time of"
	echo "the slowest unpinned task in a run (the seed's headline), \"big share\" the"
	echo "share of its running samples (5 ms) an unpinned task spent on a big CPU,"
	echo "\"latency\" the time from the last pinned run's exit until every unpinned"
	echo "task still running then had been seen on a big CPU (runs where one never"
	echo "was are counted below the table, not in the median)."
	echo
} >>"$md"
for g in dynamiq juno; do
	[[ -n $(sel "boot=$g exp=misfit" time_s | head -n1) ]] || continue
	# Per run, the longest task.
	for s in on off; do
		sel "boot=$g exp=misfit MISFIT=$s" rep | sort -u | while read -r r; do
			sel "boot=$g exp=misfit MISFIT=$s rep=$r" time_s | sort -g | tail -n1 |
				sed "s/^/boot=$g exp=misfit-longest MISFIT=$s rep=$r longest_s=/"
		done
	done >"$res/misfit-$g.longest"
	cat "$res/misfit-$g.longest" >>"$all"
	seed="Hikey960: 2.5997 s (tip) -> 1.8506 s (misfit)"
	[[ $g == juno ]] && seed="Juno: 1.7465 s (tip) -> 1.6016 s (misfit)"
	lon=$(median "boot=$g exp=misfit-longest MISFIT=on" longest_s)
	loff=$(median "boot=$g exp=misfit-longest MISFIT=off" longest_s)
	{
		echo "### arm64-$g"
		echo
		sed 's/^/    /' "$res/$g/throttle.txt" 2>/dev/null || echo "    (no throttle record)"
		echo
		echo "| | MISFIT on | MISFIT off | on/off | seed (avg of longest, 10 runs) |"
		echo "|---|---|---|---|---|"
		echo "| longest task (s) | $(cell "boot=$g exp=misfit-longest MISFIT=on" longest_s) | $(cell "boot=$g exp=misfit-longest MISFIT=off" longest_s) | $(ratio "$lon" "$loff") | $seed |"
		echo "| every task (s) | $(cell "boot=$g exp=misfit MISFIT=on" time_s) | $(cell "boot=$g exp=misfit MISFIT=off" time_s) | $(ratio "$(median "boot=$g exp=misfit MISFIT=on" time_s)" "$(median "boot=$g exp=misfit MISFIT=off" time_s)") | |"
		echo "| big share | $(cell "boot=$g exp=misfit MISFIT=on" big_share) | $(cell "boot=$g exp=misfit MISFIT=off" big_share) | | |"
		echo "| latency (ms) | $(cell "boot=$g exp=misfit-run MISFIT=on" misfit_latency_ms) | $(cell "boot=$g exp=misfit-run MISFIT=off" misfit_latency_ms) | | |"
		echo "| misfit migrations | $(cell "boot=$g exp=misfit-run MISFIT=on" misfit_migrations) | $(cell "boot=$g exp=misfit-run MISFIT=off" misfit_migrations) | | |"
		echo
		echo "Runs in which some unpinned task never reached a big CPU after the pinned" \
			"runs ended: MISFIT on $(sel "boot=$g exp=misfit-run MISFIT=on" misfit_latency_ms | grep -c none || true)," \
			"off $(sel "boot=$g exp=misfit-run MISFIT=off" misfit_latency_ms | grep -c none || true)" \
			"(tasks moved per run, on: $(sel "boot=$g exp=misfit-run MISFIT=on" moved | paste -sd' ' -);" \
			"off: $(sel "boot=$g exp=misfit-run MISFIT=off" moved | paste -sd' ' -))."
		echo
		sep "$g longest task, MISFIT on vs off" "boot=$g exp=misfit-longest MISFIT=on" "boot=$g exp=misfit-longest MISFIT=off" longest_s
		sep "$g big share, on vs off" "boot=$g exp=misfit MISFIT=on" "boot=$g exp=misfit MISFIT=off" big_share
		echo
		echo "Limits: under TCG a vCPU runs as fast as the host runs its thread.  The"
		echo "host CPU weights above make a little slower only while more vCPUs are"
		echo "busy than host CPUs run them, and then not quite down to the capacity"
		echo "ratio (arm64-juno's littles, at 0.44, ran at 0.51-0.59 of a big's speed:"
		echo "Documentation/harness/notes/throttled-littles.md).  Completion times"
		echo "follow capacity only roughly; placement (big share, latency,"
		echo "migrations) shows the effect best.  With 2 host CPUs for 4-8 busy"
		echo "vCPUs, times also carry the host's own scheduling noise."
		echo
		echo "![misfit $g](misfit-$g.png)"
		echo
	} >>"$md"
	plot "misfit-$g" "arm64-$g: longest unpinned sysbench (s)" "seconds" \
		"MISFIT on=boot=$g exp=misfit-longest MISFIT=on|longest_s" \
		"MISFIT off=boot=$g exp=misfit-longest MISFIT=off|longest_s"
done

# ---- 2. lu ----
if [[ -n $(sel "exp=lu" time | head -n1) ]]; then
	# per-node averages: mean over repeats of each node's figure.
	pernode() {
		sel "$1" "$2" | awk -F/ '{ for (i = 1; i <= NF; i++) s[i] += $i; n++; if (NF > m) m = NF }
			END { if (!n) { print "-"; exit } for (i = 1; i <= m; i++) printf "%s%.2f", (i > 1 ? " / " : ""), s[i] / n; print "" }'
	}
	# imbalance per run: max - min over the nodes of the tasks (workers
	# and hogs) per node; with one task per CPU it is 0.
	awk '/exp=lu / { delete v; for (i = 1; i <= NF; i++) if ($i ~ /^(workers|hogs)_per_node=/) {
			n = split(substr($i, index($i, "=") + 1), t, "/"); for (j = 1; j <= n; j++) v[j] += t[j] }
		mx = v[1]; mn = v[1]; for (j in v) { if (v[j] > mx) mx = v[j]; if (v[j] < mn) mn = v[j] }
		line = $0; sub(/exp=lu /, "exp=lu-imb ", line); printf "%s imbalance=%.2f\n", line, mx - mn }' "$all" >"$res/lu.imb"
	cat "$res/lu.imb" >>"$all"
	{
		echo "## 2. Load balance classification (LB_CLASSIFY), 2019 lu.C workload"
		echo
		echo "Mode: multi-threaded TCG, every vCPU a host thread on 2 host CPUs.  Can show: where the"
		echo "workers ran, per node.  Cannot show: completion times free of host noise."
		echo
		echo "x86_64-numa (4 nodes x 2 CPUs).  A barrier-synchronised stand-in for lu.C"
		echo "(bench/schedbench.c lu -S: N-2 workers, 3 ms of CPU per iteration, a"
		echo "spinning barrier) with 2 CPU hogs; the workers' cgroup has cpu.weight 1,"
		echo "so that a worker's load is below a node's CPU count as the lu threads'"
		echo "was in the seed; GROUP puts the hogs in their own cgroup (weight 100),"
		echo "NORMAL in the workers' one.  Workers per node are sampled every 100 ms"
		echo "(last CPU of each worker, as ps did in the seed); \"imbalance\" is max - min"
		echo "over the nodes of the mean tasks (workers and hogs) per node, 0 with one"
		echo "task per CPU; \"node changes\" how often a worker was on another node than at"
		echo "the sample before."
		echo
		echo "| case | | LB_CLASSIFY on | LB_CLASSIFY off | on/off | seed after (v5.5) | seed before |"
		echo "|---|---|---|---|---|---|---|"
		for c in GROUP NORMAL; do
			if [[ $c == GROUP ]]; then
				sa="18.91/18.36/18.91/19.82 per node; 59.89 s" sb="30.45/6.95/4.52/34.08 per node; 750.66 s"
			else
				sa="19.08/20.00/18.62/18.31 per node; 63.24 s" sb="18.54/19.23/19.69/18.54 per node; 64.84 s"
			fi
			echo "| $c | workers per node (mean) | $(pernode "exp=lu case=$c LB_CLASSIFY=on" workers_per_node) | $(pernode "exp=lu case=$c LB_CLASSIFY=off" workers_per_node) | | $sa | $sb |"
			echo "| $c | hogs per node (mean) | $(pernode "exp=lu case=$c LB_CLASSIFY=on" hogs_per_node) | $(pernode "exp=lu case=$c LB_CLASSIFY=off" hogs_per_node) | | | |"
			echo "| $c | imbalance (tasks) | $(cell "exp=lu-imb case=$c LB_CLASSIFY=on" imbalance) | $(cell "exp=lu-imb case=$c LB_CLASSIFY=off" imbalance) | | | |"
			echo "| $c | node changes (workers) | $(cell "exp=lu case=$c LB_CLASSIFY=on" worker_node_moves) | $(cell "exp=lu case=$c LB_CLASSIFY=off" worker_node_moves) | | | |"
			echo "| $c | time (s) | $(cell "exp=lu case=$c LB_CLASSIFY=on" time) | $(cell "exp=lu case=$c LB_CLASSIFY=off" time) | $(ratio "$(median "exp=lu case=$c LB_CLASSIFY=on" time)" "$(median "exp=lu case=$c LB_CLASSIFY=off" time)") | | |"
			echo "| $c | iterations/s | $(cell "exp=lu case=$c LB_CLASSIFY=on" ops_per_s) | $(cell "exp=lu case=$c LB_CLASSIFY=off" ops_per_s) | $(ratio "$(median "exp=lu case=$c LB_CLASSIFY=on" ops_per_s)" "$(median "exp=lu case=$c LB_CLASSIFY=off" ops_per_s)") | | |"
		done
		echo
		for c in GROUP NORMAL; do
			sep "$c time, on vs off" "exp=lu case=$c LB_CLASSIFY=on" "exp=lu case=$c LB_CLASSIFY=off" time
			sep "$c imbalance, on vs off" "exp=lu-imb case=$c LB_CLASSIFY=on" "exp=lu-imb case=$c LB_CLASSIFY=off" imbalance
			sep "$c node changes, on vs off" "exp=lu case=$c LB_CLASSIFY=on" "exp=lu case=$c LB_CLASSIFY=off" worker_node_moves
		done
		echo
		echo "Limits: the seed ran 76 threads on 4 x 20 CPUs, where the pre-v5.5"
		echo "avg_load policy left 30-34 threads on two nodes and 5-9 on the others."
		echo "Here 6 workers and 2 hogs fill 8 vCPUs on 2 host CPUs, and the barrier"
		echo "waits for the slowest vCPU thread, which the host decides: completion"
		echo "times carry host noise, placement and node changes do not."
		echo
		echo "![lu](lu.png)"
		echo
	} >>"$md"
	plot lu "lu stand-in: completion time (s)" "seconds" \
		"GROUP on=exp=lu case=GROUP LB_CLASSIFY=on|time" \
		"GROUP off=exp=lu case=GROUP LB_CLASSIFY=off|time" \
		"NORMAL on=exp=lu case=NORMAL LB_CLASSIFY=on|time" \
		"NORMAL off=exp=lu case=NORMAL LB_CLASSIFY=off|time"
fi

# ---- 3. pipe ----
if [[ -n $(sel "exp=pipe" ops_per_s | head -n1) ]]; then
	{
		echo "## 3. Previous CPU in the asymmetric wakeup path (SIS_ASYM_PREV), 2020 workload"
		echo
		echo "Mode: multi-threaded TCG, every vCPU a host thread on 2 host CPUs.  Can show: migrations"
		echo "(exact counts).  Cannot show: throughput free of host noise."
		echo
		echo "\`perf stat -a -e cpu-migrations perf bench sched pipe -T -l N\`: every CPU's"
		echo "migrations while the benchmark ran (its own and a few of kernel threads').  The seed's"
		echo "\"mainline\" is the flag off, \"w/ patch\" the flag on."
		echo
		echo "| guest | | SIS_ASYM_PREV on | SIS_ASYM_PREV off | on/off | seed (w/ patch vs mainline) |"
		echo "|---|---|---|---|---|---|"
	} >>"$md"
	specs=()
	sepl=()
	for g in dynamiq juno numa; do
		[[ -n $(sel "boot=$g exp=pipe" ops_per_s | head -n1) ]] || continue
		if [[ $g == numa ]]; then
			sm="0 vs 0 migrations" so="47899 vs 47721 ops/s (+0.4%), symmetric hikey"
		else
			sm="0 vs 999364 migrations (-l 50000)" so="182587 vs 149313 ops/s (+22%), hikey960"
		fi
		{
			echo "| $g | migrations | $(cell "boot=$g exp=pipe SIS_ASYM_PREV=on" migrations) | $(cell "boot=$g exp=pipe SIS_ASYM_PREV=off" migrations) | | $sm |"
			echo "| $g | ops/s | $(cell "boot=$g exp=pipe SIS_ASYM_PREV=on" ops_per_s) | $(cell "boot=$g exp=pipe SIS_ASYM_PREV=off" ops_per_s) | $(ratio "$(median "boot=$g exp=pipe SIS_ASYM_PREV=on" ops_per_s)" "$(median "boot=$g exp=pipe SIS_ASYM_PREV=off" ops_per_s)") | $so |"
			echo "| $g | sis_asym_prev exits | $(cell "boot=$g exp=pipe SIS_ASYM_PREV=on" sis_asym_prev) | $(cell "boot=$g exp=pipe SIS_ASYM_PREV=off" sis_asym_prev) | | |"
		} >>"$md"
		sepl+=("$(sep "$g migrations, on vs off" "boot=$g exp=pipe SIS_ASYM_PREV=on" "boot=$g exp=pipe SIS_ASYM_PREV=off" migrations)"
		       "$(sep "$g ops/s, on vs off" "boot=$g exp=pipe SIS_ASYM_PREV=on" "boot=$g exp=pipe SIS_ASYM_PREV=off" ops_per_s)")
		specs+=("$g on=boot=$g exp=pipe SIS_ASYM_PREV=on|migrations"
			"$g off=boot=$g exp=pipe SIS_ASYM_PREV=off|migrations")
	done
	{
		echo
		printf '%s\n' "${sepl[@]}"
		echo
		echo "Limits: migrations are the placement effect and are exact counts."
		echo "Throughput under TCG depends on which host thread runs which vCPU, so"
		echo "the seed's +22% (a task kept on a big core instead of bouncing to"
		echo "littles) cannot show here: the pipe's two busy vCPUs do not contend for"
		echo "the 2 host CPUs, so the littles run at a big's speed."
		printf '\n![pipe](pipe.png)\n\n'
	} >>"$md"
	plot pipe "perf bench sched pipe -T: migrations per run" "migrations" "${specs[@]}"
fi

# ---- 4. eevdf ----
if [[ -n $(sel "boot=numa exp=eevdf" avg_us | head -n1) ]]; then
	# Runs before hackbench_fds was recorded all used -f 10.
	fds=$(sel "boot=numa exp=eevdf" hackbench_fds | head -n1)
	fds=${fds:-10}
	cols=("RUN_TO_PARITY=RTP RESCHED_INELIGIBLE=off" "RUN_TO_PARITY=RTP RESCHED_INELIGIBLE=on"
	      "RUN_TO_PARITY=NORTP RESCHED_INELIGIBLE=off" "RUN_TO_PARITY=NORTP RESCHED_INELIGIBLE=on")
	{
		echo "## 4. Reschedule when current is ineligible (RESCHED_INELIGIBLE), 2024 workload"
		echo
		echo "Mode: multi-threaded TCG, every vCPU a host thread on 2 host CPUs.  Can show: whether the"
		echo "mechanism acted (reschedule counters).  Cannot show: latencies, which the"
		echo "vCPU stalls set (section 4b has them on one instruction-counted CPU)."
		echo
		echo "x86_64-numa, CPUs 0-1: \`hackbench -g 1 -f $fds\` in the background and three"
		echo "\`cyclictest -m -q -i 1000\` at nice -19, 0 and 19 at once (the seed ran one"
		echo "nice level at a time on 4 isolated cores).  Latencies in us; the seed's"
		echo "figure follows ours in each cell as \"seed: X\"."
		echo
		echo "| nice | | EEVDF (RTP, off) | PATCH (RTP, on) | EEVDF-NO_PARITY (off) | PATCH-NO_PARITY (on) |"
		echo "|---|---|---|---|---|---|"
	} >>"$md"
	declare -A seedv=(
		[-19 min_us]="6 6 6 6" [-19 avg_us]="191 122 89 66" [-19 max_us]="15442 7648 14133 7713"
		[0 min_us]="6 10 6 6" [0 avg_us]="466 277 289 257" [0 max_us]="38917 32391 32665 17710"
		[19 min_us]="19 53 10 13" [19 avg_us]="37151 31045 18293 23035" [19 max_us]="2688299 7031295 426196 425708")
	for n in -19 0 19; do
		for k in min_us avg_us max_us; do
			read -ra sv <<<"${seedv[$n $k]}"
			row="| $n | ${k%_us}"
			for i in 0 1 2 3; do
				row+=" | $(median "boot=numa exp=eevdf nice=$n ${cols[i]}" "$k") [$(sel "boot=numa exp=eevdf nice=$n ${cols[i]}" "$k" | stats | awk '{ print $2 "-" $3 }')] seed: ${sv[i]}"
			done
			echo "$row |" >>"$md"
		done
	done
	{
		row="| | RESCHED_INELIGIBLE reschedules per run"
		for i in 0 1 2 3; do
			row+=" | $(median "boot=numa exp=eevdf nice=0 ${cols[i]}" resched)"
		done
		echo "$row |"
		echo
		for n in -19 0 19; do
			for r in RTP NORTP; do
				echo "- nice $n, ${r/NORTP/NO_RUN_TO_PARITY}: avg on/off = $(ratio "$(median "boot=numa exp=eevdf nice=$n RUN_TO_PARITY=$r RESCHED_INELIGIBLE=on" avg_us)" "$(median "boot=numa exp=eevdf nice=$n RUN_TO_PARITY=$r RESCHED_INELIGIBLE=off" avg_us)")"
			done
		done
		echo
		for r in RTP NORTP; do
			sep "nice 0 avg, ${r/NORTP/NO_RUN_TO_PARITY}, on vs off" "boot=numa exp=eevdf nice=0 RUN_TO_PARITY=$r RESCHED_INELIGIBLE=on" \
				"boot=numa exp=eevdf nice=0 RUN_TO_PARITY=$r RESCHED_INELIGIBLE=off" avg_us
		done
		echo
		echo "Limits: under TCG a vCPU thread that the host preempts stalls the guest"
		echo "for milliseconds to tens of milliseconds, far above the 6-466 us the seed"
		echo "measured on bare metal; those stalls set the latencies here.  The resched"
		echo "counters show whether the mechanism acted."
		echo
		echo "Seed: avg at nice 0 went 466 -> 277 us (RUN_TO_PARITY) and 289 -> 257 us"
		echo "(NO_RUN_TO_PARITY)."
		echo
		echo "![eevdf](eevdf.png)"
		echo
	} >>"$md"
	plot eevdf "cyclictest avg latency at nice 0 (us)" "us" \
		"RTP off=exp=eevdf nice=0 ${cols[0]}|avg_us" "RTP on=exp=eevdf nice=0 ${cols[1]}|avg_us" \
		"NO_RTP off=exp=eevdf nice=0 ${cols[2]}|avg_us" "NO_RTP on=exp=eevdf nice=0 ${cols[3]}|avg_us"
fi

# ---- 4b. eevdf on one instruction-counted CPU ----
if [[ -n $(sel "exp=eevdf ncpus=1" avg_us | head -n1) ]]; then
	ib=()
	for d in "$res"/icount-eevdf-*/; do
		[[ -f $d/bench/raw.txt ]] && ib+=("$(basename "$d")")
	done
	fds1=$(sel "exp=eevdf ncpus=1" hackbench_fds | head -n1)
	{
		echo "## 4b. RESCHED_INELIGIBLE, 2024 workload, on one instruction-counted CPU"
		echo
		echo "Mode: instruction counting, one vCPU (see the end of the section)."
		echo
		echo "x86_64-icount (one vCPU, \`-icount $(sed -n 's/^QEMU_ICOUNT=//p' "$REPO/guests/x86_64-icount.conf")\`): guest time follows"
		echo "the instructions executed, not host load.  Three \`cyclictest -m -q -v -i 1000\`"
		echo "at nice -19, 0 and 19 on CPU 0 beside a load, with the base slice"
		echo "set to $(sel "exp=eevdf ncpus=1" base_slice_ns | head -n1) ns through debugfs (the value of 8 or more CPUs, the"
		echo "seed's; one CPU's own is the flag's 0.7 ms quantum, and it would cut nothing).  Per"
		echo "boot (${ib[*]}), the median over its repeats of each run's"
		echo "average latency (us) (each run's median latency is in raw-all.txt, p50_us);"
		echo "how far the boots with the first boot's QEMU seed are apart, and"
		echo "the first boots of different QEMU seeds; how far the spread of single runs"
		echo "alone puts two boots with different QEMU seeds apart, 1 time in 20 (noise: two"
		echo "boots drawn from the runs of one boot per QEMU seed, 2000 times), and how many"
		echo "repeats per boot would bring that"
		echo "to 2%; the seed's average last.  Two loads: the seed's, \`hackbench -g 1 -f $fds1\`,"
		echo "and three nice-0 CPU hogs (\`schedbench hog\`), whose runs repeat where"
		echo "hackbench's pipes interleave differently from run to run."
		echo
		# The seed's averages (v1's table), beside both loads.
		declare -A seedavg=([-19 RTP off]=191 [-19 RTP on]=122 [-19 NORTP off]=89 [-19 NORTP on]=66
			[0 RTP off]=466 [0 RTP on]=277 [0 NORTP off]=289 [0 NORTP on]=257
			[19 RTP off]=37151 [19 RTP on]=31045 [19 NORTP off]=18293 [19 NORTP on]=23035)
		for l in hackbench hogs; do
			[[ -n $(sel "exp=eevdf ncpus=1 load=$l" avg_us | head -n1) ]] || continue
			# The boots that ran this load, and their seeds.
			lb=()
			lseed=()
			for b in "${ib[@]}"; do
				[[ -n $(sel "boot=$b exp=eevdf load=$l" avg_us | head -n1) ]] || continue
				lb+=("$b")
				lseed+=("$(seed_of "$b")")
			done
			# The runs' median latencies (p50_us) are in raw-all.txt; the
			# table gives their averages, as the seed did.
			echo "Load: $l, $(sel "boot=${lb[0]} exp=eevdf load=$l nice=0 RUN_TO_PARITY=RTP RESCHED_INELIGIBLE=off" rep | sort -u | wc -l) repeats per boot.  Average latency (cyclictest's Avg):"
			echo
			echo "| nice | RUN_TO_PARITY | RESCHED_INELIGIBLE | $(printf '%s | ' "${lb[@]}")same QEMU seed apart (%) | QEMU seeds apart (%) | noise (%) | repeats for 2% | on/off per boot | seed (avg) |"
			echo "|---|---|---|$(printf -- '---|%.0s' "${lb[@]}")---|---|---|---|---|---|"
			for n in -19 0 19; do
				for rtp in RTP NORTP; do
					for ri in off on; do
						row="| $n | $rtp | $ri"
						vals=()
						onoff=()
						runs=
						for i in "${!lb[@]}"; do
							b=${lb[i]}
							# This cell's runs, read once: its median here, and
							# for boot_noise the runs of one boot per seed.
							rv=$(sel "boot=$b exp=eevdf load=$l nice=$n RUN_TO_PARITY=$rtp RESCHED_INELIGIBLE=$ri" avg_us)
							[[ " ${lseed[*]:0:i} " == *" ${lseed[i]} "* ]] ||
								runs+=$(awk -v i="$i" '{ print i, $0 }' <<<"$rv")$'\n'
							v=$(stats <<<"$rv" | cut -d' ' -f1)
							vals+=("$v")
							row+=" | $v"
							onoff+=("$(ratio "$(median "boot=$b exp=eevdf load=$l nice=$n RUN_TO_PARITY=$rtp RESCHED_INELIGIBLE=on" avg_us)" \
								"$(median "boot=$b exp=eevdf load=$l nice=$n RUN_TO_PARITY=$rtp RESCHED_INELIGIBLE=off" avg_us)")")
						done
						# The boots of the first boot's seed, and the
						# first boot of each seed.
						same=() firsts=() seen=,
						for i in "${!lb[@]}"; do
							[[ ${lseed[i]} == "${lseed[0]}" ]] && same+=("${vals[i]}")
							[[ $seen == *",${lseed[i]},"* ]] && continue
							seen+=${lseed[i]},
							firsts+=("${vals[i]}")
						done
						noise=$(printf '%s' "$runs" | boot_noise)
						echo "$row | $(apart "${same[@]}") | $(apart "${firsts[@]}") | ${noise% *} | ${noise#* } | $(IFS=/; echo "${onoff[*]}") | ${seedavg[$n $rtp $ri]} |"
					done
				done
			done
			echo
		done
		for l in hackbench hogs; do
			[[ -n $(sel "exp=eevdf ncpus=1 load=$l" avg_us | head -n1) ]] || continue
			for r in RTP NORTP; do
				SEP_BOOTS=$(distinct "icount-eevdf-$l") sep "icount $l nice 0 avg, $([[ $r == RTP ]] && echo RUN_TO_PARITY || echo NO_RUN_TO_PARITY), on vs off" \
					"exp=eevdf load=$l nice=0 RUN_TO_PARITY=$r RESCHED_INELIGIBLE=on" \
					"exp=eevdf load=$l nice=0 RUN_TO_PARITY=$r RESCHED_INELIGIBLE=off" avg_us
			done
		done
		echo "(The first boot of each QEMU seed only.)"
		echo
		for l in hackbench hogs; do
			for b in $(distinct "icount-eevdf-$l"); do
				[[ -n $(sel "boot=$b exp=eevdf load=$l" resched | head -n1) ]] || continue
				echo "- $b, $l: RESCHED_INELIGIBLE reschedules per run (median, flag on): $(median "boot=$b exp=eevdf load=$l nice=0 RUN_TO_PARITY=RTP RESCHED_INELIGIBLE=on" resched) (RUN_TO_PARITY), $(median "boot=$b exp=eevdf load=$l nice=0 RUN_TO_PARITY=NORTP RESCHED_INELIGIBLE=on" resched) (NO_RUN_TO_PARITY); with the flag off: $(median "boot=$b exp=eevdf load=$l nice=0 RUN_TO_PARITY=RTP RESCHED_INELIGIBLE=off" resched)"
			done
		done
		echo
		echo "Boots: $(seeds icount-eevdf-hackbench); $(seeds icount-eevdf-hogs)."
		echo "They use no 9p until the end (run-guest.sh -D), so a boot is a function"
		echo "of its kernel, initramfs and QEMU seed: the same seed must give the same"
		echo "figures (within DET_TOL), another QEMU seed is another sample."
		echo
		determinism icount-eevdf
		echo
		echo "What this mode can show: the scheduling decisions on one runqueue, free of"
		echo "host stalls, so that a change of the median beyond the noise is the"
		echo "flag's.  What it cannot: cache and memory effects (instructions are"
		echo "not cycles), and anything that needs several CPUs."
		echo
	} >>"$md"
fi

# ---- 5. cost, on one instruction-counted CPU ----
if [[ -n $(sel "exp=cost setting=default" pipe_ns_per_op | head -n1) ]]; then
	cf=(hackbench_ms pipe_ns_per_op lat_avg_ns)
	declare -A cname=([hackbench_ms]="hackbench -T -g 2 (ms)" [pipe_ns_per_op]="pipe round trip (ns)"
		[lat_avg_ns]="idle wakeup latency, avg (ns)")
	# spread FILTER KEY: (max - min) / median of the repeats, in %.
	spread() {
		sel "$1" "$2" | stats | awk '$4 > 0 && $1 > 0 { printf "%.2f", 100 * ($3 - $2) / $1; exit } { print "-" }'
	}
	{
		echo "## 5. Cost of the series, on one instruction-counted CPU"
		echo
		echo "Mode: instruction counting, one vCPU.  Can show: the work the kernel did,"
		echo "to a fraction of a percent.  Cannot show: cache and memory effects, or"
		echo "anything that needs several CPUs (the capacity and load-balance paths)."
		echo
		echo "x86_64-icount: the unpatched base kernel and the patched kernel, booted in"
		echo "turn.  Guest time there is a function of the instructions executed (16 ns"
		echo "each), so these figures measure the work the kernel did, whatever the host"
		echo "was doing.  \`hackbench -T -g 2\`, \`perf bench sched pipe\` (one round trip)"
		echo "and \`cyclictest -N\` on the otherwise idle CPU (wakeup from idle); lower is"
		echo "better.  Cells: median [min-max] (n) over every repeat of every boot."
		echo
		echo "| figure | base | patched, defaults | patched/base | spread of repeats (%) |"
		echo "|---|---|---|---|---|"
		for k in "${cf[@]}"; do
			echo "| ${cname[$k]} | $(cell "exp=cost kernel=base setting=default" "$k") | $(cell "exp=cost kernel=patched setting=default" "$k") | $(ratio "$(median "exp=cost kernel=patched setting=default" "$k")" "$(median "exp=cost kernel=base setting=default" "$k")") | $(spread "exp=cost kernel=base setting=default" "$k") / $(spread "exp=cost kernel=patched setting=default" "$k") |"
		done
		echo
		if [[ -n $(sel "exp=cost kernel=patched" setting | grep '^ref-' | head -n1) ]]; then
			echo "Each flag at its non-default setting, against the patched kernel at its"
			echo "defaults in the same boot (ratio of medians; one boot per flag, the first"
			echo "seed).  On one CPU MISFIT, LB_CLASSIFY and SIS_ASYM_PREV sit on paths that"
			echo "do not run (no asymmetry, no domains), so theirs measure only the static"
			echo "key; RESCHED_INELIGIBLE acts here."
			echo
			echo "| figure | NO_MISFIT | NO_LB_CLASSIFY | NO_SIS_ASYM_PREV | RESCHED_INELIGIBLE |"
			echo "|---|---|---|---|---|"
			for k in "${cf[@]}"; do
				row="| ${cname[$k]}"
				for st in NO_MISFIT NO_LB_CLASSIFY NO_SIS_ASYM_PREV RESCHED_INELIGIBLE; do
					row+=" | $(ratio "$(median "exp=cost kernel=patched setting=$st" "$k")" "$(median "exp=cost kernel=patched setting=ref-$st" "$k")")"
				done
				echo "$row |"
			done
		else
			echo "Each flag's own cost (bench.sh without -q) was not run."
		fi
		echo
		for k in "${cf[@]}"; do
			SEP_BOOTS="$(distinct cost-patched) $(distinct cost-base)" sep "cost ${cname[$k]}, patched vs base" \
				"exp=cost kernel=patched setting=default" "exp=cost kernel=base setting=default" "$k"
		done
		echo "(The first boot of each QEMU seed only.)"
		echo
		echo "Per boot (median of the boot's repeats), to show that the figures repeat:"
		echo
		for d in "$res"/cost-*/; do
			b=$(basename "$d")
			[[ -f $d/bench/raw.txt ]] || continue
			row="- $b:"
			for k in "${cf[@]}"; do
				row+=" $k $(median "boot=$b exp=cost setting=default" "$k")"
			done
			echo "$row"
		done
		echo
		if [[ -f $res/cost-gate.txt ]]; then
			echo "The CI gate (bench/bench.sh):"
			echo
			sed 's/^/    /' "$res/cost-gate.txt"
			echo
		fi
		echo "Boots: $(seeds cost-patched); $(seeds cost-base)."
		echo
		determinism cost
		echo
		echo "Resolution: a difference is resolved when it exceeds the spread of the"
		echo "repeats above.  The pipe round trip and the wakeup latency repeat within"
		echo "a fraction of a percent; hackbench's 40 tasks interleave differently"
		echo "from run to run, so its repeats spread by 1-2%, and its median is the"
		echo "figure.  Instructions are not cycles: cache and memory effects of the"
		echo "series do not show here."
		echo
	} >>"$md"
fi

# The reading: the headline comparisons in one table, as the README and
# the cover letter print them from the reference (bench/results-table.py).
reading=$("$REPO/bench/results-table.py" --summary "$md" --partial --md 2>&1) ||
	reading="(no headline comparison in this run: $reading)"
{
	echo "## Reading"
	echo
	echo "The headline figures of the sections above, from their comparison lines:"
	echo "medians with the flag on and off (for cost: patched at its defaults and"
	echo "the base), on/off with its 95% bootstrap interval, the Mann-Whitney U p,"
	echo "and the verdict (\"on higher\" or \"on lower\": p <= 0.01 and the interval"
	echo "off 1; Documentation/harness/benchmarks.md says how to read them).  A"
	echo "time under TCG carries host noise; placement and counts do not."
	echo
	echo "$reading"
	echo
} >>"$md"

# Boots that failed, with their verdicts.
{
	echo "## Boots"
	echo
	# Every boot's verdict is in ab/EXP/boot-N/verdict.txt: the passed
	# ones are counted, the failed ones listed with their reason.
	npass=0
	for v in "$res"/ab/*/boot-*/verdict.txt; do
		[[ -f $v ]] || continue
		d=$(dirname "$v")
		if grep -q '^PASS' "$v"; then
			npass=$((npass + 1))
			continue
		fi
		echo "- ${d#"$res"/}: $(cat "$v")"
		f=$(tr -d '\r' <"$d/cmd.out" 2>/dev/null | grep '^ab: FAIL' | tail -n1 || true)
		[[ -n $f ]] && echo "  - $f"
	done
	echo "- $npass boots passed (each boot's verdict: ab/EXPERIMENT/boot-N/verdict.txt)."
	# A boot pair of one QEMU seed that did not give the same bytes.
	grep ' FAIL$' "$res/determinism.txt" 2>/dev/null | sed 's/^/- determinism gate failed: /' || true
	echo "- Each experiment's own make ab report, with a verdict per figure:" \
		"ab/EXPERIMENT/summary.md ($(find "$res/ab" -name verdicts.txt | wc -l) experiments)."
	echo
} >>"$md"
progress "report: $md"
