#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Everything CI checks, in one results directory, with one summary line.
#
# Usage: scripts/ci.sh [-h] [-o RESULTS]
#
#   -o RESULTS  results directory (default results/ci-YYYYmmdd-HHMMSS)
#
# Host checks first, each recorded as RESULTS/host/NAME.{tap,rc,log}: the
# shell linter on every script, checkpatch.pl --strict on every patch, the
# export for git am and a build after every patch: x86_64, arm64 and
# 32-bit i386 in the default config, and x86_64's two other variants
# (nostats, nodebugfs) after the last patch (-L; their #ifdefs are the
# same C on every arch); that patches/ carries the files the series adds
# as they are here (export-series.sh -c); kernel/sched/ with clang-19
# and -Wconditional-uninitialized after every patch, failing on a warning
# the base does not have (check-series.sh -C).  Then the main job,
# scripts/run-tests.sh -c, boots every guest into the same RESULTS
# (CI_TESTS where a conf sets them), and scripts/check-main-job.sh fails
# CI ("main-job") when it booted fewer guests or ran fewer tests than it
# set out to; it boots two guests at a time (-j 2), each on a host
# CPU of its own.  Then the harness fault tests, the determinism test
# (scripts/test-determinism.sh: the instruction-counted guest under
# run-guest.sh -D), the mutation test (the behaviour tests must fail on a
# kernel whose flags do nothing, the eevdf latency check on one whose
# RESCHED_INELIGIBLE delays waking tasks, the features cases on one whose
# features file misbehaves; every test must SKIP on the unpatched base),
# make shell with commands on standard input (shell_check), make test
# with KERNEL= (kernel_var_check: a config that lacks options is refused,
# naming them; the i386 image boots as a user's kernel),
# a short stress on the test kernel (stress/stress.sh -q -T: the i386
# guest's kernel is the debug kernel of CI, lockdep included, so no other
# kernel is built) and the quick benchmark (bench/bench.sh -q, which
# asserts that every experiment ran and that the instruction-counted cost
# of the series at its defaults stays within 1% of the base, 4% for
# hackbench: its cost gate), the vCPUs' capacity weights in its capacity
# boots, the littles measured slower (scripts/test-throttle.sh), and
# THROTTLE_CGROUP=v2's refusal where v2 has no cpu controller
# (throttle_check), and one short `make ab` whose verdict line
# is checked (ab_check), and the LAVA job through a lab on this machine
# (make lava-lab, with features, misfit and asym_prev, then make
# lava-lab-stop).  The last line is "N passed, N failed, N
# skipped" over all of it; the exit status is 1 when anything failed.  A
# failed host check does not stop the rest.  The Debian roots that the
# stress, the benchmark, the determinism test and the cost mutant need
# (scripts/mk-rootfs.sh) are made in the background from the start, and
# waited for (check "rootfs") before the determinism test.
# RESULTS/times.txt has one "STAGE SECONDS EXIT" line per stage as it
# ends (the main job's run as "guests"), and "total" last.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-lib.sh
. "$(dirname "$0")/guest-lib.sh"

usage() {
	sed -n '3,/^# waited for/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
res=
while getopts ho: opt; do
	case $opt in
	h) usage 0 ;;
	o) res=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 0 ]] || usage 2
res=${res:-$REPO/results/ci-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$res/host"
res=$(realpath "$res")
t_ci=$(date +%s)
: >"$res/times.txt"
progress "CI results in $res"

# host_check NAME CMD...: run CMD, log it, record one TAP case.
host_check() {
	local name=$1 rc=0 t log tap
	shift
	log=$res/host/$name.log
	tap=$res/host/$name.tap
	t=$(date +%s)
	progress "host check $name: $*"
	"$@" >"$log" 2>&1 || rc=$?
	echo "$rc" >"$res/host/$name.rc"
	echo "$name $(($(date +%s) - t)) $rc" >>"$res/times.txt"
	if grep -qE '^(not )?ok [0-9]+' "$log"; then
		# A check that prints TAP counts case by case.
		grep -E '^(TAP version|[0-9]+\.\.[0-9]+|(not )?ok [0-9]+)' "$log" >"$tap"
		[[ $rc -eq 0 ]] || grep -q '^not ok' "$tap" ||
			echo "not ok 999 $name # exit $rc" >>"$tap"
	elif [[ $rc -eq 0 ]]; then
		printf '1..1\nok 1 %s\n' "$name" >"$tap"
	else
		printf '1..1\nnot ok 1 %s # %s\n' "$name" \
			"$(grep -m1 -E '^(error|FAIL)' "$log" || tail -n1 "$log")" >"$tap"
	fi
	if [[ $rc -eq 0 ]]; then
		progress "host check $name passed in $(($(date +%s) - t))s"
	else
		progress "host check $name FAILED in $(($(date +%s) - t))s, log $log"
		tail -n 5 "$log" | sed 's/^/    /'
	fi
}

# ab_check: one short `make ab` on the instruction-counted guest, whose
# verdict line must say what Documentation/harness/research/steady-state.md
# (section 2) measured: 4
# equal hogs at a 2.8 ms base slice switch more often with
# RESCHED_INELIGIBLE: B_higher, with the 95% interval of B/A above 1.
ab_check() {
	local out line
	out=$(make -C "$REPO" --no-print-directory ab FEATURES=RESCHED_INELIGIBLE SEEDS=1 REPS=5 \
		CMD='echo 2800000 >/sys/kernel/debug/sched/base_slice_ns && schedbench runlen -n 4 -d 2' \
		AB_OPTS="-o $res/ab" 2>&1) || { echo "$out"; echo "FAIL: make ab failed"; return 1; }
	echo "$out"
	line=$(grep '^ab: cs_per_s ' <<<"$out") || { echo "FAIL: no verdict line for cs_per_s"; return 1; }
	[[ $line =~ ^ab:\ cs_per_s\ A=[0-9.]+\ B=[0-9.]+\ ratio=([0-9.]+)\ ci=([0-9.]+)\.\.([0-9.]+)\ noise=[0-9.]+%\ p=[0-9.e-]+\ ([A-Za-z_]+)$ ]] ||
		{ echo "FAIL: malformed verdict line: $line"; return 1; }
	if [[ ${BASH_REMATCH[4]} != B_higher ]] || ! awk -v lo="${BASH_REMATCH[2]}" 'BEGIN { exit !(lo > 1) }'; then
		echo "FAIL: expected cs_per_s B_higher with its interval above 1: $line"
		return 1
	fi
	echo "ab: verdict line as expected: $line"
}

# shell_check: make shell with commands on standard input: a flag
# written and read back, figures the guest computes (its typed commands
# echo too, so the checks match whole output lines), and the verdict.
shell_check() {
	local out=$res/shell.out
	# shellcheck disable=SC2016 # the guest's shell expands them
	printf '%s\n' 'echo NO_LB_CLASSIFY >$F/features' 'tr " " "\n" <$F/features | grep -x NO_LB_CLASSIFY' \
		'echo "feat_stats lines: $(grep -c . $F/feat_stats)"' 'echo "shell sum: $((6 * 7))"' |
		make -C "$REPO" --no-print-directory shell GUEST=x86_64-numa SHELL_OPTS="-o $res/shell -t 300" \
		>"$out" 2>&1 || { tail -n 5 "$out"; echo "FAIL: make shell exited non-zero, log $out"; return 1; }
	tr -d '\r' <"$out" | grep -x NO_LB_CLASSIFY || { echo "FAIL: NO_LB_CLASSIFY not read back, log $out"; return 1; }
	tr -d '\r' <"$out" | grep -E '^feat_stats lines: [1-9]' || { echo "FAIL: no feat_stats, log $out"; return 1; }
	tr -d '\r' <"$out" | grep -x 'shell sum: 42' || { echo "FAIL: the last command's output is missing, log $out"; return 1; }
	tail -n1 "$out" | grep '^PASS x86_64-numa: shell left' || { echo "FAIL: verdict $(tail -n1 "$out")"; return 1; }
}

# kernel_var_check: make test KERNEL=: an image whose config (KCONFIG)
# lacks needed options is refused before any boot, each option named;
# the i386 debug kernel of the main job (another arch, another config)
# boots as a user's kernel and passes.
kernel_var_check() {
	local d=$res/user-kernel img cfg out
	mkdir -p "$d"
	img=$(out_root)/x86_64/arch/x86/boot/bzImage
	cfg=$d/missing.config
	sed -e '/^CONFIG_SCHEDSTATS=/d' -e 's/^CONFIG_9P_FS=y/CONFIG_9P_FS=m/' "$(out_root)/x86_64/.config" >"$cfg"
	if out=$(make -C "$REPO" --no-print-directory test KERNEL="$img" KCONFIG="$cfg" TESTS=features \
		GUESTS=x86_64-numa 2>&1); then
		echo "$out"; echo "FAIL: a kernel without CONFIG_SCHEDSTATS booted"; return 1
	fi
	grep 'lacks what the tests and the harness need' <<<"$out" | grep 'CONFIG_SCHEDSTATS (absent)' |
		grep 'CONFIG_9P_FS (CONFIG_9P_FS=m)' || { echo "$out"; echo "FAIL: the missing options are not named"; return 1; }
	! grep -q 'starting QEMU' <<<"$out" || { echo "FAIL: it booted before refusing"; return 1; }
	make -C "$REPO" --no-print-directory test KERNEL="$(out_root)/i386/arch/x86/boot/bzImage" \
		GUESTS=i386 TESTS=features 2>&1 | tee "$d/i386.out" | tail -n 4
	grep -q '^kernel: KERNEL=.*/i386/arch/x86/boot/bzImage' "$(sed -n 's/.*results in \(\/.*\)$/\1/p' "$d/i386.out" | head -n1)/base.txt" ||
		{ echo "FAIL: base.txt does not name the i386 image"; return 1; }
	tail -n1 "$d/i386.out" | grep -E '^[1-9][0-9]* passed, 0 failed' || { echo "FAIL: the i386 image as KERNEL"; return 1; }
}

# throttle_check: the bench's capacity boots ran with every vCPU thread
# weighted by its capacity (each throttle.txt names the hierarchy and one
# weight per vCPU of the guest), the littles measured slower than the
# bigs with every vCPU busy (scripts/test-throttle.sh: littles/bigs
# below the midpoint of the capacity ratio and 1), and where cgroup v2
# has no cpu controller, THROTTLE_CGROUP=v2 stops make ab before any
# boot with one line saying why.
throttle_check() {
	local f n=0 why out nv
	nv=$( (guest_load arm64-dynamiq && tr , '\n' <<<"$EXPECT_CAPACITY") | grep -c .)
	for f in "$res"/bench/ab/dynamiq-*/boot-*/throttle.txt; do
		[[ -f $f ]] || { echo "FAIL: no throttle.txt in the bench's dynamiq boots"; return 1; }
		n=$((n + 1))
		echo "== $f"
		cat "$f"
		grep -qE '^cgroup v[12] at ' "$f" || { echo "FAIL: $f names no cgroup hierarchy"; return 1; }
		[[ $(throttle_weighted "$f") -eq $nv ]] ||
			{ echo "FAIL: not all $nv vCPU threads weighted in $f"; return 1; }
	done
	echo "$n bench boots weighted their vCPUs"
	"$REPO/scripts/test-throttle.sh" -o "$res/throttle-ratio" || { echo "FAIL: scripts/test-throttle.sh"; return 1; }
	if why=$(THROTTLE_CGROUP=v2 throttle_how); then
		echo "cgroup v2 has a cpu controller on this host ($why): no refusal to show"
		return 0
	fi
	if out=$(THROTTLE_CGROUP=v2 "$REPO/bench/ab.sh" -g arm64-juno -f NO_MISFIT -r 1 \
		-o "$res/throttle-v2" -- true 2>&1); then
		echo "$out"; echo "FAIL: make ab went on without a way to throttle"; return 1
	fi
	echo "$out"
	grep -qx "error: cannot slow arm64-juno's little vCPUs down on this host: .* (THROTTLE_CG2=DIR: .*; -N, .*: run them at the bigs' speed)" <<<"$out" ||
		{ echo "FAIL: not the one-line refusal"; return 1; }
	[[ ! -e $res/throttle-v2/boot-1 ]] || { echo "FAIL: it booted before refusing"; return 1; }
}

need_pkgs shellcheck git quilt debootstrap debian-archive-keyring
# The Debian roots of the benchmark and the stress (debootstrap's
# downloads, dpkg -x) do not touch the kernel tree: they are made while
# the series builds, and waited for before the first guest that needs one.
# Its exit status goes to a file: bash forgets a background job's status
# once enough other children have come and gone ("wait: pid N is not a
# child of this shell" after the guest runs).
rootfs_log=$res/host/rootfs-build.log
rm -f "$rootfs_log.rc"
# The LAVA lab's root (lava/lava-lab.sh root: debootstrap, then
# lava-server, lava-dispatcher and PostgreSQL in it) follows, for the
# lab check at the end.
lab_log=$res/host/lava-lab-root.log
rm -f "$lab_log.rc"
{
	rc=0
	"$REPO/scripts/mk-rootfs.sh" x86_64 && "$REPO/scripts/mk-rootfs.sh" arm64 || rc=$?
	echo "$rc" >"$rootfs_log.rc"
	rc=0
	"$REPO/lava/lava-lab.sh" root >"$lab_log" 2>&1 || rc=$?
	echo "$rc" >"$lab_log.rc"
} >"$rootfs_log" 2>&1 &
rootfs_pid=$!
# Not left running when CI ends early: the next run's mk-rootfs.sh would
# share its .tmp directory.
trap 'kill "$rootfs_pid" 2>/dev/null || true
	[[ -z ${lab_started:-} ]] || "$REPO/lava/lava-lab.sh" down || true' EXIT
rootfs_wait() {
	while [[ ! -f $rootfs_log.rc ]] && kill -0 "$rootfs_pid" 2>/dev/null; do
		sleep 2
	done
	cat "$rootfs_log"
	[[ $(cat "$rootfs_log.rc" 2>/dev/null) == 0 ]] ||
		{ echo "error: the Debian roots were not made (exit $(cat "$rootfs_log.rc" 2>/dev/null || echo 'unknown: killed?'))"; return 1; }
}
# make lava-lab, the README's command: the job submitted to lava-server,
# run by its worker, its cases read back through the server's API.  A lab
# started here is stopped after the job, whatever its result (and when CI
# ends early); one that was up already is left up.
lab_started=
lab_check() {
	local rc=0
	while [[ ! -f $lab_log.rc ]] && kill -0 "$rootfs_pid" 2>/dev/null; do
		sleep 2
	done
	cat "$lab_log" 2>/dev/null || true
	if [[ $("$REPO/lava/lava-lab.sh" status | head -n1) == "lava-lab: down" ]]; then
		lab_started=1
	fi
	# The three tests the lab must show (misfit and asym_prev pass on
	# arm64-juno only); the main job ran every test in the same shapes.
	make -C "$REPO" --no-print-directory lava-lab LAVA_LAB_OUT="$res/lava-lab" \
		LAVA_LAB_OPTS="-x lava_kselftest.args=-t,sched:features,-t,sched:misfit,-t,sched:asym_prev" || rc=$?
	# The reason goes first, where the summary reads it (the lab's
	# shutdown prints after it).
	if [[ $rc -ne 0 ]]; then
		echo "FAIL: make lava-lab exited $rc:$(for a in x86_64 arm64; do
			echo " $a: $(grep -E '^(job [0-9]+:|fail )' "$res/lava-lab/$a/summary.txt" 2>/dev/null |
				paste -sd';' -)$(grep -m1 '^failure_comment:' "$res/lava-lab/$a/job-show.yaml" 2>/dev/null |
				sed 's/^/; /')"
		done | paste -sd';' -)"
	fi
	# Both jobs ran, and each ran the arch's tests (the lab's own summary
	# already failed the run on a failed case).
	for a in x86_64 arm64; do
		grep -qE '^job [0-9]+: health Complete$' "$res/lava-lab/$a/summary.txt" 2>/dev/null ||
			{ echo "FAIL: no completed $a job in $res/lava-lab/$a"; rc=1; }
	done
	grep -E '^pass .*(misfit|asym_prev)' "$res/lava-lab/arm64/summary.txt" 2>/dev/null | grep -c . |
		grep -qx 2 || { echo "FAIL: misfit and asym_prev did not both pass in the arm64 job"; rc=1; }
	if [[ -n $lab_started ]]; then
		make -C "$REPO" --no-print-directory lava-lab-stop || rc=1
		lab_started=
	fi
	return "$rc"
}
mapfile -t scripts < <(cd "$REPO" && find scripts bench stress lava .ci -type f \( -name '*.sh' -o -name run \) | sort)
host_check shellcheck bash -c "cd '$REPO' && shellcheck ${scripts[*]}"
host_check checkpatch "$REPO/scripts/check-series.sh" -c
host_check export "$REPO/scripts/export-series.sh" "$res/export"
# patches/ carries the files of patches/new-files as they are here.
host_check patches-files "$REPO/scripts/export-series.sh" -c
# The README's and the cover letter's results tables are the benchmark
# reference's, as bench/results-table.py prints them.
host_check results-tables "$REPO/bench/results-table.py" --check "$REPO/README.md" "$REPO/patches/cover-letter.txt"
# checkpatch ran above: the builds do not run it again.  x86_64 links an
# image after every patch; arm64 and i386 compile kernel/sched/, where all
# of the series' kernel code is, after every patch and link the last.
host_check bisect "$REPO/scripts/check-series.sh" -P -a x86_64 -L
host_check bisect-arm64 "$REPO/scripts/check-series.sh" -P -O -a arm64 -v default
host_check bisect-i386 "$REPO/scripts/check-series.sh" -P -O -a i386 -v default
host_check clang "$REPO/scripts/check-series.sh" -C
host_check kselftest-tarball "$REPO/scripts/kselftest-tarball.sh" -o "$res"
# The tarball's check must name a test that the Makefile no longer builds.
host_check kselftest-dropped bash -c "out=\$(KSFT_DROP=lb_classify '$REPO/scripts/kselftest-tarball.sh' \
	-o '$res/kselftest-dropped' x86_64 2>&1) && { echo 'FAIL: built without lb_classify'; exit 1; }
	grep 'lacks sched/lb_classify' <<<\"\$out\" || { echo \"FAIL: \$out\"; exit 1; }"

# The main job's failed tests count in the summary; a job that died, or
# booted fewer guests or ran fewer tests than it set out to, fails here.
# Two guests at once, one host CPU each (single-threaded TCG).
main_rc=0 t=$(date +%s)
"$REPO/scripts/run-tests.sh" -c -j 2 -o "$res" || main_rc=$?
echo "guests $(($(date +%s) - t)) $main_rc" >>"$res/times.txt"
host_check main-job "$REPO/scripts/check-main-job.sh" "$res" "$main_rc"
# Two checks side by side where neither's verdict depends on host load
# and they share no file that either writes: the fault tests (scratch
# caches, failing boots) beside the dropped test's boot and the
# deterministic boots, and the stress (arm64, flag flips watched for
# splats) beside make ab (the instruction-counted x86_64 guest).
host_check faults "$REPO/scripts/test-faults.sh" &
bg=$!
# The same drop for the guest run: a test dropped from TEST_GEN_PROGS,
# with the tarball's check off, must fail make test's path, named by the
# summary.
host_check kselftest-dropped-guest bash -c "KSFT_DROP=lb_classify '$REPO/scripts/run-tests.sh' \
	-T lb_classify -o '$res/kselftest-dropped-guest' x86_64-numa >/dev/null 2>&1 && { echo 'FAIL: passed without lb_classify'; exit 1; }
	grep \"^FAILED x86_64-numa/lb_classify: .*No such test .sched:lb_classify.\" \
		'$res/kselftest-dropped-guest/summary.txt' || { echo 'FAIL: lb_classify not named'; exit 1; }"
host_check rootfs rootfs_wait
host_check determinism "$REPO/scripts/test-determinism.sh" -o "$res/determinism"
wait "$bg" || true
host_check shell shell_check
host_check user-kernel kernel_var_check
host_check mutations "$REPO/scripts/test-mutations.sh" -o "$res/mutations"
host_check bench "$REPO/bench/bench.sh" -q -o "$res/bench"
host_check throttle throttle_check
host_check stress "$REPO/stress/stress.sh" -q -T -o "$res/stress" &
bg=$!
host_check ab ab_check
wait "$bg" || true
host_check lava-lab lab_check
"$REPO/scripts/summarize.sh" "$res" >/dev/null || true
echo "total $(($(date +%s) - t_ci)) -" >>"$res/times.txt"
progress "CI done"
tail -n +1 "$res/summary.txt"
tail -n1 "$res/summary.txt" | grep -q ' 0 failed'
