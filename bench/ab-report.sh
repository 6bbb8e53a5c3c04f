#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The report of bench/ab.sh: summary.md, one PNG per figure, and one
# "ab: ..." line per figure on stdout.
#
# Usage: bench/ab-report.sh [-h] RESULTS
#
# Reads RESULTS/boot-*/raw.txt (one "key=value" line per run, see
# bench/guest/ab.sh), RESULTS/base.txt, the seeds in
# RESULTS/boot-*/qemu.cmd, the kernel of each boot with -k in
# RESULTS/boot-*/kernel, and RESULTS/determinism.txt.  For every figure:
# the median of A's runs and of B's, [min-max] and n, the B/A ratio of
# the medians with its 95% confidence interval (a bootstrap), the p of a
# two-sided Mann-Whitney U test and the verdict, all from SciPy
# (bench/ab-stats.py -h); and the noise: how far apart (in %) the
# medians of two samples of one setting's size, drawn from that
# setting's runs, come out 1 time in 20 (lib.sh's boot_noise), the
# larger of A's and B's.  Only runs that exited 0 count; a failed run is
# listed apart.  The verdict:
#   B_higher, B_lower    p <= 0.01 and the interval above or below 1
#                        (no ratio, where a run of A is 0 or below: p
#                        and the medians' difference)
#   no_difference_shown  not so: the interval says how large a change
#                        these runs leave possible
#   too_few_runs         fewer than 2 runs of a setting, or too few for
#                        any order of the runs to give p <= 0.01 (5 of
#                        each suffice, 4 do not)
#   not_measured         no run of a setting has the figure
# Runs of every boot are pooled, but for a repeated seed on a
# deterministic guest only its first boot's (with -k, per kernel);
# a figure that is 0 in every run that has it is left out.  The last
# lines, one per figure, are
#   ab: FIGURE A=MEDIAN B=MEDIAN ratio=B/A ci=LO..HI noise=N% p=P VERDICT
# ("-" where a field cannot be computed: the ratio and interval where a
# run of A is 0 or below or one of B below 0, the interval and p with
# fewer than 2 runs of a setting, the noise with fewer than 2),
# and with cells (bench/ab.sh -V) "ab: cell NAME=V,...: FIGURE ...", a
# table, verdicts and PNGs (FIGURE-cellN.png) per cell.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
# shellcheck source=../scripts/guest-lib.sh
. "$(dirname "$0")/../scripts/guest-lib.sh"

usage() {
	sed -n '3,/^# table, verdicts and PNGs/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
[[ ${1:-} == -h ]] && usage 0
[[ $# -eq 1 ]] || usage 2
res=$(realpath "$1")
[[ -d $res ]] || die "no results directory '$1'"
need_pkgs gnuplot-nox python3-scipy

all=$res/raw-all.txt
: >"$all"
# A seed repeated on the deterministic guest repeats its runs (ab.sh
# checks that): only its first boot (with -k, per kernel) counts.
declare -A seen=()
mapfile -t boots < <(find "$res" -maxdepth 1 -name 'boot-*' -type d | sort -V)
for d in "${boots[@]}"; do
	[[ -s $d/raw.txt ]] || continue
	b=$(basename "$d")
	seed=$(grep -o -- '-seed [0-9]*' "$d/qemu.cmd" 2>/dev/null | cut -d' ' -f2 || true)
	if grep -q 'deterministic=1' "$res/base.txt" && [[ -n $seed ]]; then
		key=$seed/$(cat "$d/kernel" 2>/dev/null || true)
		[[ -z ${seen[$key]:-} ]] || continue
		seen[$key]=1
	fi
	sed "s/^/boot=${b#boot-} seed=${seed:-none} /" "$d/raw.txt" >>"$all"
done
# The runs that count, and those that failed.
ok=$res/raw-ok.txt
grep ' rc=0 ' "$all" >"$ok" || true

md=$res/summary.md
lines=$res/verdicts.txt
plots=$res/plots.md
: >"$lines"
: >"$plots"
{
	echo "# A/B summary"
	echo
	echo '```'
	cat "$res/base.txt"
	echo '```'
	echo
	if grep -q 'deterministic=1' "$res/base.txt"; then
		echo "Instruction-counted guest: guest time follows the instructions executed, so"
		echo "each seed's boot is one sample free of host load, and a repeated seed must"
		echo "repeat its bytes. It shows the work the kernel did; it cannot show cache or"
		echo "memory effects. With one vCPU (x86_64-icount) it shows one runqueue only."
	elif grep -q '^ab: guest [^,]*, accel tcg,thread=single,' "$res/base.txt"; then
		echo "Single-threaded TCG: the vCPUs take turns on one host thread, so a busy"
		echo "vCPU runs a share of wall time and wall times carry the host's noise."
		echo "Counts (context switches, migrations, feat_stats) say more than times;"
		echo "bench/ab.sh -A tcg,thread=multi gives every vCPU a host thread. Capacities,"
		echo "if any, are declared to the kernel only: no little vCPU was slowed down."
	else
		echo "Multi-threaded TCG: every vCPU is a host thread, so wall times carry the"
		echo "host's noise. Counts (context switches, migrations, feat_stats) and the"
		echo "tools' own rates relative to each other say more than absolute times."
		g=$(sed -n 's/^ab: guest \([^,]*\),.*/\1/p' "$res/base.txt")
		caps=$( (guest_load "$g" && echo "$EXPECT_CAPACITY") 2>/dev/null || true)
		if [[ -n $caps && $(tr , '\n' <<<"$caps" | sort -u | wc -l) -gt 1 ]]; then
			if grep -q 'throttle=1' "$res/base.txt" && ! grep -qs '^not throttled' "${boots[@]/%//throttle.txt}"; then
				echo "Capacities ($caps): the vCPUs' host threads ran with CPU weights in the"
				echo "capacity ratio (boot-N/throttle.txt), which make a little slower only"
				echo "while more vCPUs are busy than host CPUs run them, and not quite down to"
				echo "the ratio (Documentation/harness/notes/throttled-littles.md): times"
				echo "follow capacity only roughly."
			else
				echo "Capacities ($caps) are declared to the kernel only: the little vCPUs"
				echo "were not weighted (make ab -N, or the host refused: boot-N/throttle.txt),"
				echo "so every CPU runs at host speed. It shows placement and counts, not what"
				echo "a little CPU costs a task."
			fi
		fi
	fi
	echo
	for d in "${boots[@]}"; do
		[[ ! -f $d/fail.txt ]] || echo "- $(basename "$d") failed: $(cat "$d/fail.txt")"
	done
	grep -v ' rc=0 ' "$all" | sed 's/^/- failed run, not counted: /' || true
	[[ ! -s $res/determinism.txt ]] || sed 's/^/- determinism: /' "$res/determinism.txt"
	echo
} >"$md"

if [[ ! -s $ok ]]; then
	{
		echo "| figure | A: median [min-max] (n) | B: median [min-max] (n) | B/A [95% CI] | noise | p | verdict |"
		echo "|---|---|---|---|---|---|---|"
	} >>"$md"
	why="no run was recorded"
	[[ ! -s $all ]] || why="no run exited 0 ($(wc -l <"$all") failed: raw-all.txt)"
	echo "${why^}." >>"$md"
	echo "ab: $why, see $res/boot-*/" | tee -a "$lines"
	exit 1
fi

# The cells (bench/ab.sh -V) in the order they first appear; one
# unnamed cell without -V.
# A cell of ab-cells without a run that exited 0 is reported too.
mapfile -t cellv < <({
	for d in "${boots[@]}"; do
		[[ ! -s $d/ab-cells ]] || tr ' ' , <"$d/ab-cells" | sed 's/^/cell=/'
	done
	cat "$ok"
} | awk '{ c = ""; for (i = 1; i <= NF; i++) if ($i ~ /^cell=/) c = substr($i, 6)
	if (!(c in seen)) { seen[c] = 1; print c } }')

# fstats S FIG: "median min max n" of setting S's runs, at full precision.
fstats() {
	kv_sel "$cur" "setting=$1" "$2" | sort -g | awk '$1 != "" && $1 != "nan" && $1 != "none" { v[n++] = $1 }
		END { if (!n) { print "- - - 0"; exit }
		      m = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
		      printf "%.10g %.10g %.10g %d\n", m, v[0], v[n - 1], n }'
}

# plot FIG: every run a dot, the median a bar, A and B side by side;
# FIG$sfx.png.
plot() {
	local fig=$1 pts=$res/$1$sfx.pts med=$res/$1$sfx.med i=0 s
	: >"$pts"
	: >"$med"
	for s in A B; do
		kv_sel "$cur" "setting=$s" "$fig" | awk -v x="$i" '{ print x, $1 }' >>"$pts"
		echo "$i $(fstats "$s" "$fig" | cut -d' ' -f1 | sed 's/^-$/NaN/')" >>"$med"
		i=$((i + 1))
	done
	gnuplot >"$res/$fig$sfx.gnuplot.log" 2>&1 <<-EOF || progress "gnuplot failed for $fig$sfx, see $res/$fig$sfx.gnuplot.log"
		set terminal pngcairo size 600,420 font ",10"
		set output "$res/$fig$sfx.png"
		set title "${cell:+$cell: }$fig"
		set xrange [-0.6:1.6]
		set xtics ("A" 0, "B" 1)
		set grid ytics
		set style fill solid 0.25
		set boxwidth 0.6
		plot "$med" using 1:2 with boxes title "median", \
		     "$pts" using 1:2 with points pt 7 ps 0.8 title "each run"
	EOF
	rm -f "$pts" "$med"
	if [[ -s $res/$fig$sfx.png ]]; then
		rm -f "$res/$fig$sfx.gnuplot.log"
	fi
}

for ci in "${!cellv[@]}"; do
	cell=${cellv[ci]} cur=$ok sfx=
	if [[ -n $cell ]]; then
		cur=$res/raw-ok-cell$((ci + 1)).txt sfx=-cell$((ci + 1))
		awk -v c="cell=$cell" '{ for (i = 1; i <= NF; i++) if ($i == c) { print; next } }' "$ok" >"$cur"
		printf '\n### Cell %s\n\n' "$cell" >>"$md"
		printf '\n### Cell %s\n\n' "$cell" >>"$plots"
	fi
	{
		echo "| figure | A: median [min-max] (n) | B: median [min-max] (n) | B/A [95% CI] | noise | p | verdict |"
		echo "|---|---|---|---|---|---|---|"
	} >>"$md"
	# The figures in the order they first appear.
	mapfile -t figs < <(awk '{ for (i = 1; i <= NF; i++) { k = substr($i, 1, index($i, "=") - 1)
		if (k !~ /^(boot|seed|cell|setting|rep|rc)$/ && !(k in seen)) { seen[k] = 1; print k } } }' "$cur")
	# Ratio, interval, p and verdict of every figure, in one SciPy run.
	for fig in "${figs[@]}"; do
		for s in A B; do
			kv_sel "$cur" "setting=$s" "$fig" | sed "s/^/$fig $s /"
		done
	done >"$res/stats-in.txt"
	"$REPO/bench/ab-stats.py" <"$res/stats-in.txt" >"$res/stats-out.txt" ||
		die "bench/ab-stats.py failed on $res/stats-in.txt"
	declare -A st=()
	while read -r f rest; do
		st[$f]=$rest
	done <"$res/stats-out.txt"
	rm -f "$res/stats-in.txt" "$res/stats-out.txt"
	pre="ab: ${cell:+cell $cell: }"
	if [[ ${#figs[@]} -eq 0 ]]; then
		echo "| (no run) | - | - | - | - | - | not_measured |" >>"$md"
		echo "${pre}no run exited 0 in this cell: not_measured" >>"$lines"
	fi
	for fig in "${figs[@]}"; do
		read -r am alo ahi an <<<"$(fstats A "$fig")"
		read -r bm blo bhi bn <<<"$(fstats B "$fig")"
		# A figure that never moves from 0 says nothing (a feat_stats counter
		# the workload does not reach, or that only one of two kernels has).
		if [[ ($an == 0 || ($alo == 0 && $ahi == 0)) && ($bn == 0 || ($blo == 0 && $bhi == 0)) ]]; then
			continue
		fi
		if [[ $an == 0 || $bn == 0 ]]; then
			echo "| $fig | - | - | - | - | - | not_measured (A n=$an, B n=$bn) |" >>"$md"
			echo "${pre}$fig A=- B=- ratio=- ci=- noise=- p=- not_measured" >>"$lines"
			continue
		fi
		[[ -n ${st[$fig]:-} ]] || die "bench/ab-stats.py gave no line for $fig"
		read -r ratio clo chi pval verdict <<<"${st[$fig]}"
		read -r na _ <<<"$(kv_sel "$cur" "setting=A" "$fig" | sed 's/^/0 /' | boot_noise)"
		read -r nb _ <<<"$(kv_sel "$cur" "setting=B" "$fig" | sed 's/^/0 /' | boot_noise)"
		noise=$(awk -v a="$na" -v b="$nb" 'BEGIN { if (a == "-" || b == "-") print "-"; else print (a + 0 > b + 0 ? a : b) }')
		nshow=${noise}%
		[[ $noise == - ]] && nshow=-
		ci=- cishow=
		[[ $clo == - ]] || ci=$clo..$chi cishow=" [$clo-$chi]"
		echo "| $fig | $am [$alo-$ahi] ($an) | $bm [$blo-$bhi] ($bn) | $ratio$cishow | $nshow | $pval | $verdict |" >>"$md"
		echo "${pre}$fig A=$am B=$bm ratio=$ratio ci=$ci noise=$nshow p=$pval $verdict" >>"$lines"
		plot "$fig"
		echo "![$fig]($fig$sfx.png)" >>"$plots"
	done
done
{
	echo
	echo "B/A: the ratio of the medians, [its 95% confidence interval] (SciPy's bootstrap)."
	echo "p: two-sided Mann-Whitney U test (SciPy). B_higher/B_lower: p <= 0.01 and the"
	echo "interval above or below 1; no_difference_shown: not so, and the interval bounds"
	echo "the change these runs allow; too_few_runs: no order of this many runs gives"
	echo "p <= 0.01 (5 runs of each suffice). bench/ab-stats.py -h says how."
	echo "Noise: how far apart the medians of two samples drawn from one setting's runs"
	echo "come out, 1 time in 20 (bootstrap), the larger of A's and B's."
	echo "Raw runs: raw-all.txt (failed ones too); each run's output: boot-N/logs/."
	echo
	cat "$plots"
} >>"$md"
rm -f "$plots"
cat "$lines"
