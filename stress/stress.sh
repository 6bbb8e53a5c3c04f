#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress the series on debug kernels (with -T, the test kernels): flag
# flipping, CPU hotplug, cgroups and affinity changes under load, with
# zero kernel splats allowed.
#
# Usage: stress/stress.sh [-h] [-q] [-T] [-M] [-m MIN] [-s SEED] [-t SECS]
#                        [-o RESULTS] [GUEST...]
#
#   GUEST       guests/NAME.conf to boot, one after the other (default:
#               every x86_64 and arm64 guest with more than one CPU, since
#               the stress takes CPUs offline and needs a Debian tools
#               root, scripts/mk-rootfs.sh, and not instruction-counted
#               or on another suite's QEMU, nor a large shape; with -q,
#               arm64-dynamiq).
#               make stress passes GUESTS as these, but with -q only a
#               GUESTS set on make's command line or in the environment
#   -m MIN      minutes of stress per guest (default 5; 1 with -q)
#   -q          quick mode for CI: 1 minute on one guest
#   -T          boot the guests' test kernels (make test's), not the debug
#               kernels: no debug build, and no lock, RCU or memory
#               checking, no lockup or hung-task panics, no CFS_BANDWIDTH
#               (the driver skips cpu.max).  CI runs -q -T
#   -M          the guests under multi-threaded TCG (run-guest.sh -A).
#               Without it they run their conf's single-threaded TCG: under
#               multi-threaded TCG, QEMU 10.0.2 and 11.1.3 alike, an x86
#               vCPU now and then runs an int3 that a static-key patch has
#               already replaced, which the kernel reports as "Oops: int3"
#               (within 1.5 to 5 minutes of flips, with CPU hotplug or
#               without), and an arm64 vCPU can run a flag's old branch;
#               Documentation/harness/notes/qemu-stale-branch.md
#   -s SEED     seed of the in-guest random choices (default random; it is
#               printed, and the same seed repeats the same choices)
#   -t SECS     seconds each guest may take beyond MIN before QEMU is
#               killed: boot, wind-down (default 900)
#   -o RESULTS  results directory (default results/stress-YYYYmmdd-HHMMSS)
#
# For each guest, stress/guest/flipper.c is built static for its
# architecture into RESULTS/GUEST, where the guest's driver runs it.
# For each architecture: the ARCH-debug kernel (configs/debug.config over
# common and ARCH: lockdep, atomic-sleep and list checks, lockup and
# hung-task panics; plus configs/debug-kasan.config on x86_64 only, as
# KASAN made the arm64 guest too slow under TCG), or with -T the test
# kernel; the Debian tools root (scripts/mk-rootfs.sh) and a plain
# initramfs.  Each guest boots with scripts/run-guest.sh -r ROOT and
# runs stress/guest/stress.sh (copied to RESULTS/GUEST, the guest's
# /results).  A guest fails on a kernel splat (run-guest.sh's console scan:
# BUG, WARNING, lockdep, KASAN, UBSAN, RCU stall, Oops), a panic, a
# timeout, or when the driver fails (a workload without its output, a CPU
# that stays offline, a flag not restored, a taint).  RESULTS/GUEST has
# console.log, cmd.out and stress.txt (the counters); RESULTS/base.txt the
# base, series and host; RESULTS/summary.txt
# one line per guest.  The last line is "N passed, N failed"; the exit
# status is 1 when a guest failed, after a "FAIL GUEST: reason" line.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
# shellcheck source=../scripts/guest-lib.sh
. "$(dirname "$0")/../scripts/guest-lib.sh"

usage() {
	sed -n '3,/^# status is 1 when a guest failed/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
minutes=
quick=0
kind=debug
mttcg=0
seed=
extra=900
res=
while getopts hqTMm:s:t:o: opt; do
	case $opt in
	h) usage 0 ;;
	q) quick=1 ;;
	T) kind="test" ;;
	M) mttcg=1 ;;
	m) minutes=$OPTARG ;;
	s) seed=$OPTARG ;;
	t) extra=$OPTARG ;;
	o) res=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
if [[ -z $minutes ]]; then
	minutes=5
	[[ $quick -eq 1 ]] && minutes=1
fi
[[ $minutes =~ ^[1-9][0-9]*$ ]] || die "bad -m '$minutes' (whole minutes, > 0)"
[[ $extra =~ ^[1-9][0-9]*$ ]] || die "bad -t '$extra' (seconds, > 0)"
seed=${seed:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
[[ $seed =~ ^[0-9]+$ ]] || die "bad -s '$seed' (a number)"
# The architectures with a Debian tools root (scripts/mk-rootfs.sh).
tool_archs='x86_64|arm64'
guests=("$@")
if [[ ${#guests[@]} -eq 0 ]]; then
	if [[ $quick -eq 1 ]]; then
		guests=(arm64-dynamiq)
	else
		mapfile -t guests < <(grep -LE '^(QEMU_SMP=1|QEMU_ICOUNT=.*|QEMU_SUITE=.*|LARGE_SHAPE=1)$' "$REPO"/guests/*.conf |
			xargs grep -lE "^GUEST_ARCH=($tool_archs)\$" |
			sed 's|.*/||; s/\.conf$//' | sort)
	fi
fi
for g in "${guests[@]}"; do
	[[ -f $REPO/guests/$g.conf ]] || die "unknown guest '$g' (see guests/*.conf)"
	[[ $(guest_arch "$g") =~ ^($tool_archs)$ ]] ||
		die "guest '$g': the stress needs a Debian tools root, which exists for ${tool_archs/|/ and } guests only"
done

res=${res:-$REPO/results/stress-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$res"
res=$(realpath "$res")
secs=$((minutes * 60))
progress "stress: ${minutes} min per guest on ${guests[*]} ($kind kernels), seed $seed, results in $res"

need_pkgs qemu-system-x86 qemu-system-arm device-tree-compiler busybox-static cpio
"$REPO/scripts/prepare-tree.sh"
{
	base_info
	echo "stress kernels: $kind"
	if [[ $mttcg -eq 1 ]]; then
		echo "guests: multi-threaded TCG (-M)"
	else
		echo "guests: their conf's TCG, single-threaded (multi-threaded with -M)"
	fi
} >"$res/base.txt"

declare -A kernel initrd rootfs
for g in "${guests[@]}"; do
	a=$(guest_arch "$g")
	[[ -n ${kernel[$a]:-} ]] && continue
	# The test kernel is build-kernel.sh's default; the debug kernel
	# its own O= directory with the debug fragments.
	args=("$a")
	if [[ $kind == debug ]]; then
		args=(-n "$a-debug" "$a" "$REPO/configs/debug.config")
		[[ $a == x86_64 ]] && args+=("$REPO/configs/debug-kasan.config")
	fi
	kernel[$a]=$("$REPO/scripts/build-kernel.sh" "${args[@]}" | tee >(cat >&2) | tail -n1)
	read -r "rootfs[$a]" "initrd[$a]" < <(tools_userland "$a")
done

# field FILE KEY : the value of KEY=value in FILE, or "?".
field() {
	local v
	v=$(sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n1)
	echo "${v:-?}"
}

passed=0
failed=0
: >"$res/summary.txt"
for g in "${guests[@]}"; do
	a=$(guest_arch "$g")
	dir=$res/$g
	mkdir -p "$dir"
	cp "$REPO/stress/guest/stress.sh" "$dir/guest-stress.sh"
	build_static "$a" stress/guest/flipper.c "$dir/flipper"
	# KASAN on x86_64 with 5-level paging (QEMU's -cpu max has LA57)
	# now and then reports a false wild-memory-access in an interrupt
	# that hits identify_cpu() at boot, and the taint turns lockdep off
	# for the whole soak.  Upstream knows it: "kasan: Fix false-positive
	# wild-memory-access on x86 under 5-level paging", June 2026,
	# https://lkml.iu.edu/2606.1/07330.html.  So those boots keep 4 levels.
	copt=()
	[[ $kind == debug && $a == x86_64 ]] && copt=(-c no5lvl)
	# Multi-threaded TCG only with -M.
	if [[ $mttcg -eq 1 ]]; then
		copt+=(-A "tcg,thread=multi")
		progress "$g: multi-threaded TCG (-M)"
	fi
	rc=0
	"$REPO/scripts/run-guest.sh" -t $((secs + extra)) -T "" -r "${rootfs[$a]}" -o "$dir" "${copt[@]}" \
		-x "/results/guest-stress.sh,-d,$secs,-s,$seed" "$g" "${kernel[$a]}" "${initrd[$a]}" ||
		rc=$?
	st=$dir/stress.txt
	splats=$(console_badness "$dir/console.log" | wc -l)
	nums="flips=$(field "$st" flips) hotplug_cycles=$(field "$st" hotplug_cycles)"
	nums+=" cpu_offlines=$(field "$st" cpu_offlines) cgroup_ops=$(field "$st" cgroup_ops)"
	nums+=" affinity_changes=$(field "$st" affinity_changes) hackbench_runs=$(field "$st" hackbench_runs)"
	nums+=" flip_write_ms=$(field "$st" flip_write_ms) hotplug_busy_ms=$(field "$st" hotplug_busy_ms)"
	nums+=" seconds=$(field "$st" seconds) splats=$splats"
	if [[ $rc -eq 0 ]]; then
		passed=$((passed + 1))
		line="PASS $g: $minutes min, $nums"
	else
		failed=$((failed + 1))
		# The driver's own reason says more than "tests failed: cmd=rc1".
		why=$(tr -d '\r' <"$dir/cmd.out" 2>/dev/null | sed -n 's/^stress: FAIL //p' | tail -n1)
		[[ -n $why ]] || why=$(sed "s/^FAIL $g: //" "$dir/verdict.txt" 2>/dev/null || echo "no verdict")
		line="FAIL $g: $why ($nums)"
	fi
	echo "$line" | tee -a "$res/summary.txt"
done
echo "$passed passed, $failed failed" | tee -a "$res/summary.txt"
[[ $failed -eq 0 ]]
