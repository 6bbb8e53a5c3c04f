#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: base tree plus series, kernels, selftests, initramfs, then
# each guest boots, shows its fair features, runs its selftests, and a
# summary table follows.
#
# Usage: scripts/run-tests.sh [-h] [-c] [-v] [-j N] [-o RESULTS]
#                             [-t TIMEOUT] [-T TESTS] [GUEST...]
#
#   GUEST       guests/NAME.conf to boot (default: every guest but the
#               large shapes, LARGE_SHAPE=1: make test-large)
#   -o RESULTS  results directory (default results/YYYYmmdd-HHMMSS)
#   -t TIMEOUT  seconds per guest before QEMU is killed (default 900)
#   -T TESTS    run only these selftests (space or comma separated), on the
#               guests whose GUEST_TESTS (with -c, CI_TESTS) name them; a
#               guest that runs none of them is not booted, and its kernel
#               not built
#   -c          CI's selection: a guest whose conf sets CI_TESTS runs
#               those instead of its GUEST_TESTS
#   -v          stream each guest's console to stdout as it runs
#   -j N        boot up to N guests at once (default 1).  Each guest runs
#               single-threaded TCG, one host CPU, so a 2-CPU host runs
#               two side by side; the tests' bounds allow for a busy host
#               (they flake on an overloaded one), but the wait for an
#               idle host before each boot is skipped.  Not with -v.
#
# Environment: KERNEL=IMAGE boots that bzImage or arm64 Image (a kernel
# you built) instead of building one, in the guests of its arch (the
# others are left out, saying so; none left is an error).  Its config
# (KCONFIG=FILE, else the .config of the O= directory it sits in,
# config-VERSION beside a vmlinuz-VERSION image, or its own
# CONFIG_IKCONFIG) must have, built in, what the tarball's sched/config
# and the harness need, or nothing boots and one error names each option
# missing; the base tree is still prepared, for the tarball.  base.txt
# names the image.  KSRC=/path uses that kernel tree
# instead of Debian's linux-source-7.3; SCHED_CACHE (default /var/cache/schedseries) holds the
# trees, builds, ccache and initramfs.  KSFT_DROP=TEST (a mutation) drops
# TEST from the selftests' TEST_GEN_PROGS unchecked, so that the guest
# run has to name it (scripts/kselftest-tarball.sh -n).
#
# The selftests are built with kbuild into kselftest-ARCH.tar.gz
# (scripts/kselftest-tarball.sh), which every guest's initramfs carries
# unpacked at /opt/kselftest; the guest runs them with run_kselftest.sh
# (scripts/guest/init.sh).  RESULTS gets guests.txt (each guest to boot
# and its tests, written first), base.txt (base kernel, series hash, git
# describe), the tarballs, a directory per guest (console.log,
# kselftest.tap as run_kselftest.sh printed it, TEST.tap and TEST.rc split
# from it, verdict.txt) and summary.txt.  The last line printed is
# "N passed, N failed, N skipped" over every test case and every guest
# boot; the exit status is 1 when anything failed.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,/^# boot; the exit status/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
res=
timeout=900
only=
ci=0
verbose=()
par=1
while getopts hcvj:o:t:T: opt; do
	case $opt in
	h) usage 0 ;;
	c) ci=1 ;;
	v) verbose=(-v) ;;
	j) par=$OPTARG ;;
	o) res=$OPTARG ;;
	t) timeout=$OPTARG ;;
	T) only=${OPTARG//,/ } ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $par =~ ^[1-9][0-9]*$ ]] || die "bad -j '$par' (a number > 0)"
[[ $par -eq 1 || ${#verbose[@]} -eq 0 ]] || die "-v streams one console: not with -j $par"
guests=("$@")
if [[ ${#guests[@]} -eq 0 ]]; then
	# The large shapes (LARGE_SHAPE=1) boot only when named.
	mapfile -t guests < <(grep -L '^LARGE_SHAPE=1$' "$REPO"/guests/*.conf |
		sed 's|.*/||; s/\.conf$//' | sort)
fi
for g in "${guests[@]}"; do
	[[ -f $REPO/guests/$g.conf ]] || die "unknown guest '$g' (see guests/*.conf)"
done
# A user's kernel boots in the guests of its arch; the others are left out.
if [[ -n ${KERNEL:-} ]]; then
	karch=$(user_kernel_arch "$KERNEL")
	same=() other=()
	for g in "${guests[@]}"; do
		if [[ $(guest_arch "$g") == "$karch" ]]; then same+=("$g"); else other+=("$g"); fi
	done
	[[ ${#same[@]} -gt 0 ]] ||
		die "KERNEL $KERNEL is $karch, and no guest of '${guests[*]}' is; the $karch guests: $(grep -l "^GUEST_ARCH=$karch\$" "$REPO"/guests/*.conf | sed 's|.*/||; s|\.conf$||' | tr '\n' ' ')(make test GUESTS=...)"
	[[ ${#other[@]} -eq 0 ]] || progress "KERNEL is $karch: not booting ${other[*]}"
	guests=("${same[@]}")
fi

# Each guest runs its GUEST_TESTS (with -c, its CI_TESTS where the conf
# sets them, even empty), less those that -T does not name.  A guest
# with neither -T nor CI_TESTS boots with run-guest.sh's own choice.
if [[ -n ${only// /} ]]; then
	known=$(find "$REPO/tools/testing/selftests/sched" -maxdepth 1 -name '*.c' -printf '%f\n' |
		sed 's/\.c$//' | sort | tr '\n' ' ')
	for t in $only; do
		[[ " $known" == *" $t "* ]] || die "unknown test '$t' (tests: ${known% })"
	done
fi
declare -A guest_tests planned
kept=()
for g in "${guests[@]}"; do
	# The conf is data in shell syntax, as run-guest.sh reads it.
	# shellcheck disable=SC1090
	gt=$(GUEST_TESTS=; unset CI_TESTS
		. "$REPO/guests/$g.conf"
		if [[ $ci -eq 1 && -n ${CI_TESTS+set} ]]; then
			echo "CI_TESTS $CI_TESTS"
		else
			echo "GUEST_TESTS $GUEST_TESTS"
		fi)
	key=${gt%% *}
	gt=${gt#* }
	if [[ -z ${only// /} && $key == GUEST_TESTS ]]; then
		kept+=("$g")
		planned[$g]=$gt
		continue
	fi
	sel=
	for t in $gt; do
		[[ -z ${only// /} || " $only " == *" $t "* ]] && sel+=${sel:+ }$t
	done
	if [[ -n $sel ]]; then
		kept+=("$g")
		guest_tests[$g]=$sel
		planned[$g]=$sel
	else
		progress "$g runs none of: ${only:-its $key, which is empty} (not booted)"
	fi
done
[[ ${#kept[@]} -gt 0 ]] ||
	die "no guest of '${guests[*]}' runs '${only:-a test}' (see GUEST_TESTS and CI_TESTS in guests/*.conf)"
guests=("${kept[@]}")

res=${res:-$REPO/results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$res"
res=$(realpath "$res")
progress "results in $res"
# What this run sets out to do, before anything that can fail: a guest and
# its tests a line.  scripts/check-main-job.sh holds the run to it.
for g in "${guests[@]}"; do
	echo "$g ${planned[$g]}"
done >"$res/guests.txt"

need_pkgs qemu-system-x86 qemu-system-arm device-tree-compiler busybox-static cpio
ksft_opts=
[[ -n ${KSFT_DROP:-} ]] && ksft_opts=-n
"$REPO/scripts/prepare-tree.sh"
base_info >"$res/base.txt"
sed 's/^/  /' "$res/base.txt"

archs=()
for g in "${guests[@]}"; do
	a=$(guest_arch "$g")
	[[ " ${archs[*]} " == *" $a "* ]] || archs+=("$a")
done
declare -A kernel initrd
for a in "${archs[@]}"; do
	mapfile -t ag < <(for g in "${guests[@]}"; do [[ $(guest_arch "$g") != "$a" ]] || echo "$g"; done)
	KSFT_OPT=$ksft_opts guest_artifacts "$a" "$res" "${ag[@]}"
	kernel[$a]=$KIMG initrd[$a]=$KINITRD
done
[[ -z ${KERNEL:-} ]] || grep '^kernel' "$res/base.txt" | sed 's/^/  /'

# run_one GUEST: boot it, its verdict in RESULTS/GUEST (run-guest.sh).
run_one() {
	local g=$1 a features tsel=()
	a=$(guest_arch "$g")
	mkdir -p "$res/$g"
	if [[ $par -eq 1 ]]; then
		wait_host_idle "$g" || echo "host busy before boot: $HOST_BUSY%" >"$res/$g/host-busy.txt"
	fi
	[[ -n ${guest_tests[$g]:-} ]] && tsel=(-T "${guest_tests[$g]}")
	"$REPO/scripts/run-guest.sh" "${verbose[@]}" "${tsel[@]}" -t "$timeout" -o "$res/$g" \
		"$g" "${kernel[$a]}" "${initrd[$a]}" || true
	features=$(tr -d '\r' <"$res/$g/console.log" 2>/dev/null |
		sed -n '/^=== sched features/{n;p;q}' |
		grep -oE '(NO_)?(MISFIT|LB_CLASSIFY|SIS_ASYM_PREV|RESCHED_INELIGIBLE|RUN_TO_PARITY|PREEMPT_SHORT)\b' |
		tr '\n' ' ' || true)
	progress "$g: fair features at boot: ${features:-<not shown>}"
}
# With -j N, up to N at once: a guest starts when one of the running
# ones has ended.
pids=()
for g in "${guests[@]}"; do
	if [[ $par -eq 1 ]]; then
		run_one "$g"
		continue
	fi
	wait_slot "$par"
	run_one "$g" &
	pids+=("$!")
done
for p in "${pids[@]}"; do
	wait "$p" || true
done

"$REPO/scripts/summarize.sh" "$res" "${guests[@]}"
