#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Are the little vCPUs little on this host?  One arm64-juno boot under
# make ab's engine (bench/ab.sh, which weights every vCPU's QEMU thread by
# its capacity: scripts/guest-lib.sh, throttle_littles), every vCPU
# running sysbench's CPU test pinned to it at once, and the littles' speed
# against the bigs' checked.
#
# Usage: scripts/test-throttle.sh [-h] [-c auto|v1|v2 | -N] [-o RESULTS]
#
#   -c HIER     the cgroup hierarchy to weight through
#               (THROTTLE_CGROUP; default auto: v1's cpu controller
#               where mounted, else v2's cpu.weight).  With v2, the
#               cgroup2 mount's root or THROTTLE_CG2=DIR, a delegated
#               cgroup of yours with the cpu controller
#   -N          no weights (bench/ab.sh -N): the same boot and figures
#               as the reference, where the six share the host alike;
#               the ratios are printed, not checked
#   -o RESULTS  results directory (default results/throttle-YYYYmmdd-HHMMSS)
#
# The shape is the guest conf's (EXPECT_CAPACITY: 2 bigs at 1024, 4
# littles at 446), its vCPU threads on 2 host CPUs (THROTTLE_HOST_CPUS:
# another number).  With all six vCPUs busy, more than the host CPUs
# they run on, a little gets less host time than a big: 446/1024 = 0.44
# of it where the host spreads the weights evenly over its CPUs, other
# ratios where it cannot; unweighted, the six share the host alike
# (1.0).  The check, in each of the boot's two runs: the littles' mean
# events per second over the bigs' mean below the midpoint of the two,
# (0.44 + 1) / 2 = 0.72; and every vCPU's group weighted (throttle.txt)
# through the hierarchy asked for.  Where that hierarchy cannot weight,
# it stops before the boot with bench/ab.sh's one line saying why.  A
# weight limits nothing on an idle host CPU: the vCPUs must outnumber
# the host CPUs they run on (Documentation/harness/notes/throttled-littles.md).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-lib.sh
. "$(dirname "$0")/guest-lib.sh"

usage() {
	sed -n '3,/^# the host CPUs they run on/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
hier=auto
nothrottle=()
res=
while getopts hc:No: opt; do
	case $opt in
	h) usage 0 ;;
	c) hier=$OPTARG ;;
	N) nothrottle=(-N) ;;
	o) res=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 0 ]] || usage 2
[[ $hier =~ ^(auto|v1|v2)$ ]] || die "bad -c '$hier' (auto, v1 or v2)"
res=${res:-$REPO/results/throttle-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$res"
res=$(realpath "$res")

g=arm64-juno
IFS=, read -ra capv <<<"$(guest_load "$g" && echo "$EXPECT_CAPACITY")"
bigs=() littles=()
for i in "${!capv[@]}"; do
	if [[ ${capv[i]} -ge 1024 ]]; then bigs+=("$i"); else littles+=("$i"); fi
done
[[ ${#bigs[@]} -gt 0 && ${#littles[@]} -gt 0 ]] || die "$g has no littles and bigs (EXPECT_CAPACITY ${capv[*]})"
# The capacity ratio and the bound, midway to 1.0.
ratio=$(awk -v l="${capv[${littles[0]}]}" 'BEGIN { printf "%.3f", l / 1024 }')
bound=$(awk -v r="$ratio" 'BEGIN { printf "%.2f", (r + 1) / 2 }')

# One sysbench per vCPU, pinned, all at once: its events per second.
# shellcheck disable=SC2016 # the guest's shell expands them
cmd='for c in '"${!capv[*]}"'; do taskset -c $c sysbench cpu --threads=1 --time=4 run | awk -v c=$c "/events per second/ { print \"cpu\" c \"_eps=\" \$4 }" & done; wait'
THROTTLE_CGROUP=$hier "$REPO/bench/ab.sh" -g "$g" -f NO_MISFIT -r 1 -W -P -t 120 "${nothrottle[@]}" \
	-o "$res/ab" -- "$cmd" || die "the $g boot failed, see $res/ab"
how=none
if [[ ${#nothrottle[@]} -eq 0 ]]; then
	tt=$res/ab/boot-1/throttle.txt
	[[ -f $tt ]] || die "no $tt"
	cat "$tt"
	how=$(grep -oE '^cgroup v[12] at ' "$tt" | cut -d' ' -f2) || die "$tt names no cgroup hierarchy"
	[[ $hier == auto || $hier == "$how" ]] || die "asked for $hier, weighted through $how"
	n=$(throttle_weighted "$tt")
	[[ $n -eq ${#capv[@]} ]] || die "$n of the ${#capv[@]} vCPUs' threads were weighted, see $tt"
fi
raw=$res/ab/boot-1/raw.txt
runs=$(grep -c 'cpu0_eps=' "$raw" || true)
[[ $runs -eq 2 ]] || die "$runs runs with figures in $raw, 2 expected"
rc=0
awk -v how="$how" -v check=$((${#nothrottle[@]} == 0)) -v bigs="${bigs[*]}" -v littles="${littles[*]}" \
	-v ratio="$ratio" -v bound="$bound" '
function mean(list,	c, n, i, sum) {
	n = split(list, c, " ")
	for (i = 1; i <= n; i++) sum += v["cpu" c[i] "_eps"]
	return sum / n
}
/cpu0_eps=/ {
	delete v
	for (i = 1; i <= NF; i++) { p = index($i, "="); v[substr($i, 1, p - 1)] = substr($i, p + 1) }
	little = mean(littles)
	big = mean(bigs)
	r = big > 0 ? little / big : 1
	printf "cgroup %s, setting %s: bigs %.1f, littles %.1f events/s: littles/bigs %.3f (capacity ratio %s, bound %s) %s\n",
		how, v["setting"], big, little, r, ratio, bound, !check ? "(not checked)" : r < bound ? "ok" : "FAIL"
	bad += check && r >= bound
} END { exit bad > 0 }' "$raw" >"$res/ratios.txt" || rc=$?
cat "$res/ratios.txt"
[[ $rc -eq 0 ]] || die "the little vCPUs were not slowed down, see $res/ratios.txt"
[[ $how == none ]] || progress "PASS: little vCPUs slowed down by weights through cgroup $how ($res)"
