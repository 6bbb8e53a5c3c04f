#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of the harness's failure paths: each fault must end in a
# clear one-line error, a non-zero exit and a kept log, within a time bound.
#
# Usage: scripts/test-faults.sh [-h] [-k]
#
#   -k   keep the scratch directory with every log (a run with a failed
#        case keeps it anyway)
#
# Faults: a patch that does not apply, a KSRC that is not a kernel tree, a
# config option that does not take effect, a kernel build failure, a
# missing cross compiler, a missing QEMU, a program of a deterministic
# run (run-guest.sh -D) missing from the tools root, a main job that dies
# before its first boot (CI's main-job check must fail, naming the guest),
# an archive download that fails for good (archive_retry gives up after
# its tries) or fails once (it passes on the next try), a guest that
# panics and a guest that hangs.  The guest faults need the x86_64 kernel and initramfs that
# scripts/run-tests.sh builds; without them they are skipped.  Prints TAP.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,/Prints TAP\./s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
keep=0
while getopts hk opt; do
	case $opt in
	h) usage 0 ;;
	k) keep=1 ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 0 ]] || usage 2

scratch=$(mktemp -d)
# A failed case keeps its logs (a guest's console.log among them).
trap 'if [[ $keep -eq 1 || $nfail -gt 0 ]]; then echo "# logs kept in $scratch"; else rm -rf "$scratch"; fi' EXIT
n=0
nfail=0

# expect_fail NAME LIMIT PATTERN CMD...: CMD must exit non-zero within LIMIT
# seconds and print PATTERN (an ERE) on stderr or stdout.
expect_fail() {
	local name=$1 limit=$2 pattern=$3 rc=0 log t
	shift 3
	n=$((n + 1))
	log=$scratch/$name.log
	t=$(date +%s)
	timeout -k 5 "$limit" "$@" >"$log" 2>&1 </dev/null || rc=$?
	t=$(($(date +%s) - t))
	if [[ $rc -eq 0 ]]; then
		echo "not ok $n $name # exited 0"
	elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
		echo "not ok $n $name # hung: killed after ${limit}s"
	elif ! grep -qE "$pattern" "$log"; then
		echo "not ok $n $name # no message matching '$pattern'; got: $(tail -n1 "$log")"
	else
		echo "ok $n $name # exit $rc in ${t}s: $(grep -m1 -E "$pattern" "$log" | cut -c1-120)"
		return 0
	fi
	sed 's/^/# /' "$log" | tail -n 15
	nfail=$((nfail + 1))
}

skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

echo "TAP version 13"
echo "1..12"

# A tree that looks like a kernel but where no patch applies.
fake=$scratch/fake-tree
mkdir -p "$fake/kernel/sched"
echo 'VERSION = 0' >"$fake/Makefile"
for f in fair.c features.h sched.h core.c debug.c; do
	echo "/* not the file the series expects */" >"$fake/kernel/sched/$f"
done
expect_fail patch-does-not-apply 60 '^error: patch .* does not apply' \
	env KSRC="$fake" SCHED_CACHE="$scratch/cache" "$REPO/scripts/prepare-tree.sh"
[[ -e $fake/.pc || -e $fake/patches ]] &&
	echo "# warning: KSRC was written to: $fake has .pc or patches"

mkdir -p "$scratch/not-a-tree"
expect_fail ksrc-not-a-kernel-tree 30 '^error: KSRC=.* is not a kernel tree' \
	env KSRC="$scratch/not-a-tree" "$REPO/scripts/prepare-tree.sh"

echo 'CONFIG_SCHEDSERIES_NO_SUCH_OPTION=y' >"$scratch/bad.config"
expect_fail config-not-taken 300 '^error: config options did not take effect.*CONFIG_SCHEDSERIES_NO_SUCH_OPTION=y' \
	"$REPO/scripts/build-kernel.sh" -n fault-config x86_64 "$scratch/bad.config"

expect_fail kernel-build-fails 300 '^error: kernel build failed' \
	"$REPO/scripts/build-kernel.sh" -n fault-config -t kernel/sched/schedseries-no-such-file.o x86_64

expect_fail no-cross-compiler 60 '^error: no compiler schedseries-none-gcc' \
	env CROSS_COMPILE_ARM64=schedseries-none- "$REPO/scripts/build-kernel.sh" -n fault-arm64 arm64

kernel=$(out_root)/x86_64/arch/x86/boot/bzImage
initrd=$CACHE/initramfs-x86_64.cpio.gz
sed 's/^QEMU=.*/QEMU=qemu-system-schedseries-none/' "$REPO/guests/x86_64-numa.conf" >"$scratch/noqemu.conf"
touch "$scratch/Image" "$scratch/initrd"
expect_fail no-qemu 30 '^error: no qemu-system-schedseries-none' \
	env QEMU_SUITE= "$REPO/scripts/run-guest.sh" -o "$scratch/noqemu" "$scratch/noqemu.conf" \
	"$scratch/Image" "$scratch/initrd"

mkdir -p "$scratch/emptyroot/usr/bin"
expect_fail ram-program-missing 30 "^error: RAM_PROGRAMS: no program 'hackbench'" \
	"$REPO/scripts/run-guest.sh" -D -r "$scratch/emptyroot" -o "$scratch/noprog" x86_64-icount \
	"$scratch/Image" "$scratch/initrd"

# The main job dies before its first boot (no base to unpack): CI's
# main-job check must fail and name the guest that never booted.
# shellcheck disable=SC2016 # expanded by the inner bash
expect_fail main-job-dies-before-boot 120 '^FAIL: the main job \(exit [1-9][0-9]*\) left out x86_64-numa \(not booted\)' \
	bash -c 'rc=0
		env SCHED_CACHE="$1/cache-nobase" BASE_TARBALL="$1/no-such-base.tar.xz" \
			"$2/scripts/run-tests.sh" -c -T features -o "$1/mainjob" x86_64-numa || rc=$?
		"$2/scripts/check-main-job.sh" "$1/mainjob" "$rc"' _ "$scratch" "$REPO"

# archive_retry: a download that always fails gives up after its tries,
# saying each; one that fails once passes on the next try.
# shellcheck disable=SC2016 # expanded by the inner bash
expect_fail archive-fails-for-good 30 'archive: try 2 of 3 failed' \
	env ARCHIVE_TRIES=3 ARCHIVE_PAUSE=0 bash -c '. "$1/scripts/lib.sh"; archive_retry false' _ "$REPO"
n=$((n + 1))
rm -f "$scratch/flaky"
# shellcheck disable=SC2016 # expanded by the inner bash
if out=$(ARCHIVE_TRIES=3 ARCHIVE_PAUSE=0 bash -c '. "$1/scripts/lib.sh"
	archive_retry bash -c "[[ -f $2 ]] || { touch $2; exit 1; }"' _ "$REPO" "$scratch/flaky" 2>&1) &&
   grep -q 'archive: try 1 of 3 failed' <<<"$out"; then
	echo "ok $n archive-fails-once # passed on try 2"
else
	echo "not ok $n archive-fails-once # $out"
	nfail=$((nfail + 1))
fi

if [[ -f $kernel && -f $initrd ]]; then
	expect_fail guest-panics 300 '^FAIL x86_64-numa: kernel panic' \
		"$REPO/scripts/run-guest.sh" -t 240 -T "" -o "$scratch/panic" \
		-c "rdinit=/schedseries-no-such-init" x86_64-numa "$kernel" "$initrd"
	[[ -s $scratch/panic/console.log ]] || echo "# warning: panic run kept no console.log"
	expect_fail guest-hangs 300 '^FAIL x86_64-numa: timeout after 15s' \
		"$REPO/scripts/run-guest.sh" -t 15 -T "" -o "$scratch/hang" \
		-x /bin/sleep,100000 x86_64-numa "$kernel" "$initrd"
else
	skip guest-panics "no x86_64 kernel and initramfs yet (run make test)"
	skip guest-hangs "no x86_64 kernel and initramfs yet (run make test)"
fi

echo "# $((n - nfail)) passed, $nfail failed"
[[ $nfail -eq 0 ]]
