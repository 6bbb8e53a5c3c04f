#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Show that the instruction-counted guest runs deterministically under
# scripts/run-guest.sh -D, and that the comparison can tell when it does
# not.  Five boots of x86_64-icount with the x86_64 kernel, each running
# the same short load (three hackbench runs, then a 2-s cyclictest beside
# three CPU hogs), compared with lib.sh's kv_same:
#
#   same-seed      -D, QEMU seed 1, twice: the results must agree (the
#                  same bytes, or numbers within DET_TOL percent)
#   other-seed     -D, seed 2 against seed 1: they must not be the same
#                  bytes (the seed is an input: another seed is another
#                  sample)
#   without-D      seed 1 twice, the tools and the results over 9p while
#                  the load runs, as before -D: they must not be the same
#                  bytes (the mutant: 9p round trips take host time)
#
# Usage: scripts/test-determinism.sh [-h] [-o RESULTS]
#
#   -o RESULTS  results directory (default results/determinism-YYYYmmdd-HHMMSS)
#
# Needs the kernel of scripts/build-kernel.sh x86_64 and the Debian root of
# scripts/mk-rootfs.sh x86_64 (both cached; built when missing).  Prints
# TAP, one case per comparison; a boot that fails fails its cases.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,/^# TAP, one case/s/^# \{0,1\}//p' "$0"
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
res=${res:-$REPO/results/determinism-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$res"
res=$(realpath "$res")

need_pkgs qemu-system-x86 busybox-static cpio gcc libc6-dev pax-utils python3-pyelftools
"$REPO/scripts/prepare-tree.sh" >/dev/null
kernel=$("$REPO/scripts/build-kernel.sh" x86_64 | tail -n1)
read -r rootfs initrd < <(tools_userland x86_64)
[[ -d $rootfs && -f $initrd ]] || die "no Debian root or initramfs for x86_64 (scripts/mk-rootfs.sh)"

# One static schedbench for every boot (the boots must get the same bytes).
build_schedbench x86_64 "$res/schedbench"

# boot NAME RUN-GUEST-OPTION...: one boot; DIR/NAME/out.txt is what is
# compared: the load's output, as key=value lines.
boot() {
	local name=$1 dir=$res/$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$res/schedbench" "$dir/"
	cat >"$dir/load.sh" <<-'EOF'
	#!/bin/sh
	# The load of scripts/test-determinism.sh: its output is compared.
	cd "$(dirname "$0")" || exit 1
	for r in 1 2 3; do
		echo "run=$r hackbench_s=$(hackbench -g 1 -f 5 -l 200 | sed -n 's/^Time: //p')"
	done
	for _ in 1 2 3; do
		./schedbench hog &
		hogs="$hogs $!"
	done
	cyclictest -m -q -D 2 -i 1000 --json=/tmp/ct.json >/dev/null 2>&1
	# shellcheck disable=SC2086 # PIDs, split on purpose
	kill $hogs
	echo "cyclictest $(sed -nE 's/^ *"(min|avg|max)": *([0-9.]+).*/\1_us=\2/p' /tmp/ct.json | tr '\n' ' ')"
	echo "uptime_s=$(cut -d' ' -f1 /proc/uptime)"
	EOF
	chmod 755 "$dir/load.sh"
	if ! "$REPO/scripts/run-guest.sh" -t 300 -T "" -r "$rootfs" -o "$dir" "$@" \
		-x /results/load.sh x86_64-icount "$kernel" "$initrd" >"$dir/run.out" 2>&1; then
		echo "# boot $name failed: $(tail -n1 "$dir/run.out")"
		return 0
	fi
	grep '=' "$dir/cmd.out" >"$dir/out.txt" || echo "# boot $name: no results in $dir/cmd.out"
}

n=0
nfail=0
# expect same|differ NAME A B: compare two boots' out.txt: "same" when
# kv_same accepts them, "differ" when they are not the same bytes.
expect() {
	local want=$1 name=$2 a=$res/$3/out.txt b=$res/$4/out.txt line got
	n=$((n + 1))
	if [[ ! -s $a || ! -s $b ]]; then
		echo "not ok $n $name # no results from $3 or $4 (see their run.out)"
		nfail=$((nfail + 1))
		return
	fi
	line=$(kv_same "$a" "$b") && got=same || got=differ
	[[ $want == differ ]] && { cmp -s "$a" "$b" && got=same || got=differ; }
	if [[ $got == "$want" ]]; then
		echo "ok $n $name # $3 and $4: $line"
	else
		echo "not ok $n $name # $3 and $4 should $want: $line"
		nfail=$((nfail + 1))
	fi
}

echo "TAP version 13"
echo "1..3"
boot d-seed1-a -D -s 1
boot d-seed1-b -D -s 1
boot d-seed2 -D -s 2
boot 9p-seed1-a -s 1
boot 9p-seed1-b -s 1
expect same same-seed d-seed1-a d-seed1-b
expect differ other-seed d-seed1-a d-seed2
expect differ without-D 9p-seed1-a 9p-seed1-b
echo "# $((n - nfail)) passed, $nfail failed"
[[ $nfail -eq 0 ]]
