#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the seed experiments A/B, flag on against flag off in one boot, and
# write a report with tables and plots.
#
# Usage: scripts/bench.sh [-h] [-q] [-N] [-r REPS] [-o RESULTS]
#
#   -q          quick mode (CI): smaller workloads, misfit on one arm64
#               guest, the cost experiment in 1 boot per kernel
#   -N          do not slow the little vCPUs down on the host (declared
#               capacity only)
#   -r REPS     repeats of each flag setting, alternating (default 5)
#   -o RESULTS  results directory (default results/bench-YYYYmmdd-HHMMSS)
#
# Boots, each with scripts/guest-bench.sh (see there for the workloads):
#   arm64-dynamiq  misfit, pipe      (the seeds' Hikey960 shape)
#   arm64-juno     misfit, pipe      (the seeds' Juno shape; not with -q)
#   x86_64-numa    lu, pipe, eevdf   (NUMA, symmetric capacity)
#   x86_64-numa    cost, booting the patched kernel at its defaults and the
#                  unpatched base kernel in turn (5 boots each, 1 with -q)
# The base kernel is the tree with the series popped, built once into
# $SCHED_CACHE/out/x86_64-base.
#
# Under TCG every vCPU runs at the host's speed.  For the arm64 guests the
# QEMU threads of the little vCPUs (from QMP query-cpus-fast) go into host
# cgroup v1 cpu groups whose CFS quota makes them run at the capacity ratio:
# with all vCPUs busy on H host CPUs a big vCPU gets H / sum(cap/1024) of a
# CPU, and a little one cap/1024 of that.  If the host refuses, the run
# goes on with declared capacity only and the report says so.
#
# RESULTS/GUEST-RUN/ has each boot's console.log and bench/ (raw.txt, the
# tools' logs); RESULTS/summary.md and RESULTS/*.png are the report
# (scripts/bench-report.sh).  Exits 1 when a boot or experiment failed;
# the report is written either way.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-lib.sh
. "$(dirname "$0")/guest-lib.sh"

usage() {
	sed -n '3,35s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
quick=0
throttle=1
reps=5
res=
while getopts hqNr:o: opt; do
	case $opt in
	h) usage 0 ;;
	q) quick=1 ;;
	N) throttle=0 ;;
	r) reps=$OPTARG ;;
	o) res=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 0 ]] || usage 2
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "bad -r '$reps' (a number > 0)"

res=${res:-$REPO/results/bench-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$res"
res=$(realpath "$res")
progress "bench: quick=$quick reps=$reps throttle=$throttle, results in $res"

need_pkgs qemu-system-x86 qemu-system-arm device-tree-compiler busybox-static cpio \
	gnuplot-nox socat jq gcc-aarch64-linux-gnu libc6-dev-arm64-cross
"$REPO/scripts/prepare-tree.sh"
tree=$(tree_dir)
{
	base_info
	echo "mode: quick=$quick reps=$reps throttle=$throttle"
} >"$res/base.txt"

base_image=$(base_kernel)

declare -A kernel initrd rootfs
for a in x86_64 arm64; do
	kernel[$a]=$("$REPO/scripts/build-kernel.sh" "$a" | tee >(grep -v '^/' >&2) | tail -n1)
	read -r "rootfs[$a]" "initrd[$a]" < <(tools_userland "$a")
	mkdir -p "$res/bin-$a"
	build_schedbench "$a" "$res/bin-$a/schedbench"
done


# qmp SOCKET: query-cpus-fast as "cpu-index thread-id" lines.
qmp_threads() {
	printf '%s\n' '{"execute":"qmp_capabilities"}' '{"execute":"query-cpus-fast"}' |
		socat -t 3 - "UNIX-CONNECT:$1" |
		jq -r 'select(.return | type == "array") | .return[] | "\(."cpu-index") \(."thread-id")"'
}

# throttle_littles GUEST SOCKET DIR: put the little vCPU threads in host
# cgroups with a quota; writes DIR/throttle.txt either way.
CPUCG=/sys/fs/cgroup/cpu
throttle_littles() {
	local g=$1 sock=$2 dir=$3 caps sum i cpu tid quota n=0 why=
	caps=$(guest_load "$g" && echo "$EXPECT_CAPACITY")
	IFS=, read -ra capv <<<"$caps"
	sum=0
	for c in "${capv[@]}"; do sum=$((sum + c)); done
	for ((i = 0; i < 100; i++)); do
		[[ -S $sock ]] && break
		sleep 0.1
	done
	local threads
	threads=$(qmp_threads "$sock" 2>"$dir/qmp.err") || true
	if [[ -z $threads ]]; then
		why="QMP query-cpus-fast gave nothing ($(head -c 200 "$dir/qmp.err"))"
	elif [[ ! -d $CPUCG ]]; then
		why="no cgroup v1 cpu controller at $CPUCG"
	fi
	if [[ -z $why ]]; then
		while read -r cpu tid; do
			[[ ${capv[cpu]} -lt 1024 ]] || continue
			# quota = period * nproc * cap / sum(cap), in us per 100 ms.
			quota=$((100000 * $(nproc) * capv[cpu] / sum))
			[[ $quota -le 100000 ]] || continue
			local cg=$CPUCG/schedseries-bench-$g-cpu$cpu
			if mkdir -p "$cg" && echo 100000 >"$cg/cpu.cfs_period_us" &&
			   echo "$quota" >"$cg/cpu.cfs_quota_us" && echo "$tid" >"$cg/tasks"; then
				echo "cpu$cpu thread $tid capacity ${capv[cpu]}: quota $quota us per 100000 us" >>"$dir/throttle.txt"
				n=$((n + 1))
			else
				why="the host refused a cpu.cfs_quota_us group at $cg"
				break
			fi
		done <<<"$threads"
	fi
	if [[ -n $why ]]; then
		echo "not throttled: $why" >>"$dir/throttle.txt"
		progress "$g: little vCPUs NOT slowed down: $why"
	else
		progress "$g: $n little vCPU threads limited to the capacity ratio"
	fi
}
unthrottle() {
	local cg
	for cg in "$CPUCG"/schedseries-bench-*; do
		[[ -d $cg ]] && rmdir "$cg" 2>/dev/null
	done
	return 0
}
trap unthrottle EXIT
trap 'unthrottle; exit 143' TERM INT

failed=0
# boot NAME GUEST KERNEL ARCH TIMEOUT REPS EXPERIMENT...
boot() {
	local name=$1 g=$2 k=$3 a=$4 t=$5 n=$6 dir rc=0 qpid sock
	shift 6
	dir=$res/$name
	mkdir -p "$dir"
	cp "$REPO/scripts/guest-bench.sh" "$res/bin-$a/schedbench" "$dir/"
	local args=/results/guest-bench.sh,-r,$n
	[[ $quick -eq 1 ]] && args+=,-q
	args+=,$(IFS=,; echo "$*")
	local qopt=()
	sock=
	if [[ $a == arm64 && $throttle -eq 1 && " $* " == *" misfit "* ]]; then
		sock=$(mktemp -u /tmp/schedseries-qmp.XXXXXX)
		qopt=(-Q "$sock")
	fi
	progress "bench boot $name: $g, $*"
	"$REPO/scripts/run-guest.sh" -t "$t" -T "" -r "${rootfs[$a]}" -o "$dir" "${qopt[@]}" \
		-x "$args" "$g" "$k" "${initrd[$a]}" >"$dir/run.out" 2>&1 &
	qpid=$!
	[[ -n $sock ]] && throttle_littles "$g" "$sock" "$dir"
	wait "$qpid" || rc=$?
	unthrottle
	[[ -n $sock ]] && rm -f "$sock"
	tail -n1 "$dir/run.out"
	if [[ $rc -ne 0 ]]; then
		failed=$((failed + 1))
		tr -d '\r' <"$dir/cmd.out" 2>/dev/null | grep '^bench: FAIL' | tail -n1 || true
	fi
}

to=2400
[[ $quick -eq 1 ]] && to=900
boot dynamiq arm64-dynamiq "${kernel[arm64]}" arm64 "$to" "$reps" misfit pipe
[[ $quick -eq 1 ]] || boot juno arm64-juno "${kernel[arm64]}" arm64 "$to" "$reps" misfit pipe
boot numa x86_64-numa "${kernel[x86_64]}" x86_64 "$to" "$reps" lu pipe eevdf
# cost: alternate the two kernels; REPS measurements per kernel in all.
nboot=5
[[ $quick -eq 1 ]] && nboot=1
for ((b = 1; b <= nboot; b++)); do
	for k in patched base; do
		img=${kernel[x86_64]}
		[[ $k == base ]] && img=$base_image
		boot "cost-$k-$b" x86_64-numa "$img" x86_64 600 $(((reps + nboot - 1) / nboot)) cost
	done
done

"$REPO/scripts/bench-report.sh" "$res" || { progress "report failed"; failed=$((failed + 1)); }
progress "bench done: $res/summary.md"
[[ $failed -eq 0 ]] || die "$failed bench boot(s) failed, see $res"
