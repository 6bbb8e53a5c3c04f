#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the research kernels of the RESCHED_INELIGIBLE matrix
# (Documentation/harness/research/eevdf-latency.md):
# bases and patches that are not the series (bench/research/kernels says
# which: v1 ported to Debian's 6.12 and 7.2, and two patches on the
# series' 7.3 tree), for bench/ab.sh's AB_KERNEL.  quantum-7.3 adds the
# debugfs knob /sys/kernel/debug/sched/resched_ineligible_quantum_ns
# (RESCHED_INELIGIBLE's quantum; 0: none), for make ab's CMD or VARS.
#
# Usage: bench/research.sh [-h] [-l] [-a ARCH] [NAME...]
#
#   NAME     research kernels to build (default: every one)
#   -l       list them and exit
#   -a ARCH  guest architecture (default x86_64)
#
# Each kernel's tree is $SCHED_CACHE/research/NAME (a copy of the
# unpacked package, or of the series' tree, with the patches applied;
# made again, and its build directory emptied, when the base, the series
# or a patch changed), built with
# scripts/build-kernel.sh's configs (SCHED_TREE) plus
# CONFIG_LOCALVERSION="-NAME", so that `uname -r` and bench/ab.sh's
# base.txt name it.  Prints "NAME IMAGE" per kernel, and writes
# IMAGE.info: the base (package and version, or the series' base and
# hash) and each patch's sha256.  Run one with, for example:
#   AB_KERNEL=IMAGE make ab FEATURES=RESCHED_INELIGIBLE CMD='...'
# Not while another job (CI, make test) prepares the series' tree: it
# may stand at another patch then, and the script stops.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

usage() {
	sed -n '3,/^set -euo/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
list=0
arch=x86_64
while getopts hla: opt; do
	case $opt in
	h) usage 0 ;;
	l) list=1 ;;
	a) arch=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
rdir=$REPO/bench/research
declare -A base patches
names=()
while read -r n b p; do
	[[ -n $n && $n != \#* ]] || continue
	base[$n]=$b
	patches[$n]=$p
	names+=("$n")
done <"$rdir/kernels"
if [[ $list -eq 1 ]]; then
	for n in "${names[@]}"; do
		echo "$n: ${base[$n]} + ${patches[$n]}"
	done
	exit 0
fi
[[ $# -gt 0 ]] || set -- "${names[@]}"
for n in "$@"; do
	[[ -n ${base[$n]:-} ]] || die "no research kernel '$n' in bench/research/kernels (-l lists them)"
done
need_pkgs patch xz-utils

# src_of BASE: prints "TREE DESCRIPTION" of an unpacked base: the
# package's source, unpacked once per version, or the series' tree.
src_of() {
	local pkg suite tarball ver d
	if [[ $1 == series ]]; then
		"$REPO/scripts/prepare-tree.sh" >&2
		grep -q ' of [0-9]* patches applied' "$(tree_dir)/.schedseries-base" &&
			die "$(tree_dir) has only part of the series applied (another job is using it?)"
		echo "$(tree_dir) $(head -n1 "$(tree_dir)/.schedseries-base") + series $(series_hash)"
		return
	fi
	pkg=${1%%:*}
	suite=${1#*:}
	read -r tarball ver < <(fetch_source_pkg "$pkg" "$suite")
	d=$CACHE/research/src-$pkg
	if [[ $(cat "$d/.unpacked" 2>/dev/null) != "$ver" ]]; then
		progress "unpacking $pkg $ver into $d" >&2
		rm -rf "$d"
		mkdir -p "$d"
		tar -xJf "$tarball" -C "$d" --strip-components=1
		echo "$ver" >"$d/.unpacked"
	fi
	echo "$d Debian $pkg $ver"
}

for n in "$@"; do
	read -r src desc < <(src_of "${base[$n]}")
	tree=$CACHE/research/$n
	want="copy; $desc;"
	for p in ${patches[$n]}; do
		[[ -f $rdir/$p ]] || die "$n: no bench/research/$p"
		want+=" $p $(sha256sum "$rdir/$p" | cut -c1-16)"
	done
	if [[ $(cat "$tree/.research" 2>/dev/null) != "$want" ]]; then
		progress "$n: copying $src and applying ${patches[$n]}" >&2
		# A copy, not hard links: quilt and prepare-tree.sh write some
		# files of the series' tree in place.  A new build directory:
		# copied files keep their times, so make would not see every
		# file that differs from the last build.
		rm -rf "$tree" "$tree.out"
		cp -a --reflink=auto "$src" "$tree"
		rm -rf "$tree/.pc" "$tree/patches"
		for p in ${patches[$n]}; do
			patch -d "$tree" -p1 -s --fuzz=0 --no-backup-if-mismatch <"$rdir/$p" >&2 ||
				die "$n: bench/research/$p does not apply to $desc"
		done
		echo "$want" >"$tree/.research"
	fi
	frag=$CACHE/research/$n.config
	echo "CONFIG_LOCALVERSION=\"-$n\"" >"$frag"
	image=$(SCHED_TREE=$tree "$REPO/scripts/build-kernel.sh" -n "$arch" "$arch" "$frag" | tail -n1)
	{
		echo "research kernel $n ($arch): $desc"
		for p in ${patches[$n]}; do
			echo "patch bench/research/$p sha256 $(sha256sum "$rdir/$p" | cut -d' ' -f1)"
		done
	} >"$image.info"
	echo "$n $image"
done
