#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A shell inside one of the test shapes: boot GUEST with the series
# kernel (or a kernel you built), the test initramfs and the Debian tool
# root, and give its console a shell.
#
# Usage: scripts/shell.sh [-h] [-N] [-k KERNEL] [-o DIR] [-t TIMEOUT] GUEST
#
#   GUEST       a name from guests/ (arm64-juno, x86_64-numa2x4, ...)
#   -k KERNEL   boot this bzImage or arm64 Image instead of building the
#               series kernel (default: $KERNEL), checked as make test
#               checks it (scripts/run-tests.sh -h, KERNEL and KCONFIG)
#   -N          no tool root (no perf, stress-ng, rt-tests, ...): the
#               first start then skips its debootstrap of some 330 MB
#   -o DIR      results directory (default results/shell-GUEST-DATE),
#               the guest's /results
#   -t TIMEOUT  with commands on standard input, seconds before QEMU is
#               killed (default 600)
#
# The guest boots, checks its topology, prints its fair features, and
# starts a shell on the console; leaving the shell ("exit") powers it
# off.  On a terminal the console is yours (Ctrl-A X quits QEMU, Ctrl-A C
# gives its monitor).  Otherwise standard input is read to its end
# first, then typed into the shell a line at a time, each once the
# shell's prompt ("DIR # ") is back, followed by "exit"
# (</dev/null: boot, show the topology and power off), as in
#
#   printf 'echo NO_MISFIT >$F/features\ncat $F/feat_stats\n' |
#           scripts/shell.sh arm64-juno
#
# The littles of a capacity shape run at the host's speed here (only
# bench/ab.sh weights them): placement and counters mean something,
# times on littles do not.
# In the guest, $F is /sys/kernel/debug/sched (features, feat_stats,
# base_slice_ns, domains/), the selftests are in /opt/kselftest
# (./run_kselftest.sh -t sched:misfit), and with the tool root the
# programs of /tools (perf, stress-ng, hackbench, cyclictest, sysbench,
# rt-app) are on PATH.  The console goes to DIR/console.log; the last
# line printed is run-guest.sh's verdict on the boot (a splat fails it).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,/^# line printed is/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
res=
timeout=600
tools=1
while getopts hNk:o:t: opt; do
	case $opt in
	h) usage 0 ;;
	N) tools=0 ;;
	k) KERNEL=$OPTARG ;;
	o) res=$OPTARG ;;
	t) timeout=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 1 ]] || usage 2
g=$1
a=$(guest_arch "$g")
if [[ -n ${KERNEL:-} ]]; then
	ka=$(user_kernel_arch "$KERNEL")
	[[ $ka == "$a" ]] || die "guest $g is $a, KERNEL $KERNEL is $ka"
fi
[[ $tools -eq 0 || $a == x86_64 || $a == arm64 ]] ||
	{ progress "no tool root for $a (scripts/mk-rootfs.sh makes x86_64 and arm64 ones)"; tools=0; }

res=${res:-$REPO/results/shell-$g-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$res"
res=$(realpath "$res")
need_pkgs qemu-system-x86 qemu-system-arm device-tree-compiler busybox-static cpio
"$REPO/scripts/prepare-tree.sh" >&2
base_info >"$res/base.txt"
guest_artifacts "$a" "$res" "$g" >&2
ropts=()
if [[ $tools -eq 1 ]]; then
	ropts=(-r "$("$REPO/scripts/mk-rootfs.sh" "$a" | tee >(grep -v '^/' >&2) | tail -n1)")
fi
exec "$REPO/scripts/run-guest.sh" -i -T "" -t "$timeout" -o "$res" "${ropts[@]}" "$g" "$KIMG" "$KINITRD"
