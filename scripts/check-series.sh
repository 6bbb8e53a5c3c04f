#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Check the series patch by patch: checkpatch.pl --strict on every patch,
# then a build after every patch (bisectability).
#
# Usage: scripts/check-series.sh [-h] [-c | -C] [-P] [-L] [-O] [-a ARCH]...
#                                 [-v VARIANT]...
#
#   -c          checkpatch only, no builds
#   -P          builds only, no checkpatch (CI runs it once, with -c)
#   -C          instead of checkpatch and the GCC builds: kernel/sched/
#               with clang-19, W=1 and -Wconditional-uninitialized
#               (scripts/build-kernel.sh -C) on the base and after every
#               patch; fails on any warning the base does not have
#   -L          build the variants other than default only after the last
#               patch that changes the kernel build (CI's cut: about 20 s
#               a patch); the default variant still builds after each
#   -O          the default variant too: after each patch but the last
#               that changes the kernel build, kernel/sched/ objects only
#               (no link, no image); the full image after that last one
#               (CI's cut for the arm64 and i386 builds, which the x86_64
#               build, linked after every patch, accompanies)
#   -a ARCH     architecture to build (x86_64, arm64, i386; repeatable;
#               default x86_64)
#   -v VARIANT  config variant (repeatable; default all three):
#                 default  common + ARCH configs (+ debug.config on i386), full image
#                 nostats  CONFIG_SCHEDSTATS=n, kernel/sched/ objects
#                 nodebugfs  CONFIG_DEBUG_FS=n (no features file), kernel/sched/ objects
#
# The default variant links vmlinux after each patch and the full image
# after the last that changes the kernel build.  The other two
# compile kernel/sched/, where every change of the series lives, so their
# #ifdef branches are checked without two more full builds per patch.
# After a patch that touches only Documentation/,
# tools/testing/selftests/ and MAINTAINERS nothing is built: every input
# of the kernel build is the previous patch's.
# The tree is left with the whole series applied.  Without git history in
# the tree checkpatch cannot resolve commit ids, so UNKNOWN_COMMIT_ID is
# ignored there (the ids in the changelogs were checked against upstream).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,/^# ignored there/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
only_checkpatch=0
no_checkpatch=0
clang=0
last_only=0
objects_only=0
archs=()
variants=()
while getopts hcCPLOa:v: opt; do
	case $opt in
	h) usage 0 ;;
	c) only_checkpatch=1 ;;
	C) clang=1 ;;
	P) no_checkpatch=1 ;;
	L) last_only=1 ;;
	O) objects_only=1 ;;
	a) archs+=("$OPTARG") ;;
	v) variants+=("$OPTARG") ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 0 ]] || usage 2
[[ $only_checkpatch -eq 0 || $clang -eq 0 ]] || die "-c and -C exclude each other"
[[ $only_checkpatch -eq 0 || $no_checkpatch -eq 0 ]] || die "-c and -P exclude each other"
[[ ${#archs[@]} -gt 0 ]] || archs=(x86_64)
[[ ${#variants[@]} -gt 0 ]] || variants=(default nostats nodebugfs)
for a in "${archs[@]}"; do arch_vars "$a"; done
for v in "${variants[@]}"; do
	case $v in
	default | nostats | nodebugfs) ;;
	*) die "unknown variant '$v' (default, nostats or nodebugfs)" ;;
	esac
done
[[ $last_only -eq 0 || " ${variants[*]} " == *" default "* ]] ||
	die "-L builds the default variant after every patch: give -v default too"

"$REPO/scripts/prepare-tree.sh"
tree=$(tree_dir)
cd "$tree"

# The patches carry no Signed-off-by: the person who sends them adds one
# (scripts/export-series.sh, SIGNOFF=), so checkpatch does not ask for it.
cp_opts=(--strict --quiet --show-types --no-signoff)
git -C "$tree" rev-parse --git-dir >/dev/null 2>&1 || cp_opts+=(--ignore UNKNOWN_COMMIT_ID)
fail=0
mapfile -t patches < <(series_list)
for p in "${patches[@]}"; do
	[[ $clang -eq 0 && $no_checkpatch -eq 0 ]] || break
	if out=$(scripts/checkpatch.pl "${cp_opts[@]}" "patches/$p" 2>&1); then
		progress "checkpatch ok: $p"
	else
		printf '%s\n' "$out"
		progress "checkpatch FAILED: $p"
		fail=1
	fi
done
[[ $fail -eq 0 ]] || die "checkpatch.pl --strict reported problems"
[[ $only_checkpatch -eq 1 ]] && exit 0

build() {
	local arch=$1 variant=$2 what=$3 objs=${4:-0}
	case $variant in
	default)
		if [[ $objs -eq 1 ]]; then
			"$REPO/scripts/build-kernel.sh" -t kernel/sched/ "$arch" >/dev/null
		elif [[ $objs -eq 2 ]]; then
			"$REPO/scripts/build-kernel.sh" -t vmlinux "$arch" >/dev/null
		else
			"$REPO/scripts/build-kernel.sh" "$arch" >/dev/null
		fi ;;
	*) "$REPO/scripts/build-kernel.sh" -n "$arch-$variant" -t kernel/sched/ \
		"$arch" "$REPO/configs/$variant.config" >/dev/null ;;
	esac || die "build failed for $arch/$variant after $what"
}

# kernel_patch P: P changes an input of the kernel build, i.e. one of
# its files (both sides of each diff, and the new files it installs) is
# outside Documentation/, the selftests and MAINTAINERS (which no build
# reads).  grep reads all of its input (no -q): under pipefail a writer
# cut off early would fail the test.
kernel_patch() {
	{ sed -n 's|^diff --git a/\([^ ]*\) b/\(.*\)$|\1\n\2|p' "patches/$1"
	  awk -v p="$1" '$1 == p { for (i = 2; i <= NF; i++) print $i }' "$REPO/patches/new-files"; } |
		grep -vE '^(Documentation/|tools/testing/selftests/|MAINTAINERS$)' >/dev/null
}
last_k=0
n=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	if kernel_patch "$p"; then last_k=$n; fi
done

# clang_warnings N: build kernel/sched/ with clang after the first N
# patches, every object compiled again (ccache gives back a hit's
# warnings), and print its warnings, one a line, without line and column,
# which the series moves.
clang_warnings() {
	local out
	"$REPO/scripts/prepare-tree.sh" -n "$1" >/dev/null
	out=$(out_root)/x86_64-clang
	rm -f "$out"/kernel/sched/*.o
	"$REPO/scripts/build-kernel.sh" -C -n x86_64-clang -t kernel/sched/ x86_64 >/dev/null ||
		die "clang build of kernel/sched/ failed after $1 patches, log $out/build.log"
	grep -E ': (warning|error):' "$out/build.log" |
		sed -E 's/^(.*[^:]+):[0-9]+:[0-9]+: /\1: /' | LC_ALL=C sort -u
}
if [[ $clang -eq 1 ]]; then
	base_w=$(clang_warnings 0)
	progress "clang: the base has $(grep -c . <<<"$base_w" || true) warnings in kernel/sched/ (W=1, -Wconditional-uninitialized)"
	n=0
	for p in "${patches[@]}"; do
		n=$((n + 1))
		if ! kernel_patch "$p"; then
			progress "clang ok: $n/${#patches[@]} $p (no kernel input)"
			continue
		fi
		new=$(comm -13 <(echo "$base_w") <(clang_warnings "$n"))
		if [[ -n $new ]]; then
			printf '%s\n' "$new"
			"$REPO/scripts/prepare-tree.sh" >/dev/null
			die "clang: patch $n/${#patches[@]} $p adds warnings the base does not have (above)"
		fi
		progress "clang ok: $n/${#patches[@]} $p (no warning beyond the base's)"
	done
	"$REPO/scripts/prepare-tree.sh" >/dev/null
	progress "clang-19 sees no new warning after any patch"
	exit 0
fi

# The x86_64 default config with no patch applied is the base kernel
# (lib.sh's base_kernel, for the bench and the mutation test).  When its
# image is not built yet, it is built here first, in the directory the
# patched builds use, so that patch 1 rebuilds only what it touches
# instead of the base taking a second full build of its own.
if [[ " ${archs[*]} " == *" x86_64 "* && " ${variants[*]} " == *" default "* && -z ${KSRC:-} ]] &&
	! base_kernel_current; then
	"$REPO/scripts/prepare-tree.sh" -n 0 >/dev/null
	img=$("$REPO/scripts/build-kernel.sh" x86_64 | tail -n1) ||
		die "build failed for x86_64/default with no patch applied (the base)"
	base_kernel_adopt "$img"
	progress "bisect ok: the base (x86_64; default), its image kept as the base kernel"
fi

# prepare-tree.sh -n N leaves the first N patches applied and touches what
# changed, so each step rebuilds only what patch N touches.  The last step
# leaves the whole series applied, as it was.
n=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	"$REPO/scripts/prepare-tree.sh" -n "$n" >/dev/null
	# A patch that changes nothing the kernel build reads leaves every
	# input as the patch before did.
	if ! kernel_patch "$p"; then
		progress "bisect ok: $n/${#patches[@]} $p (Documentation/, selftests, MAINTAINERS: the kernel build is the previous patch's)"
		continue
	fi
	# Before the last patch that changes the kernel build, vmlinux (every
	# object, linked) stands for the image: the boot wrapper around it
	# (x86's compressed bzImage) is no input the series changes.
	built=()
	objs=0
	[[ $n -ne $last_k ]] && objs=2
	[[ $objects_only -eq 1 && $n -ne $last_k ]] && objs=1
	for v in "${variants[@]}"; do
		[[ $last_only -eq 1 && $v != default && $n -ne $last_k ]] && continue
		if [[ $v == default && $objs -eq 1 ]]; then
			built+=("default: kernel/sched/")
		elif [[ $v == default && $objs -eq 2 ]]; then
			built+=("default: vmlinux")
		else
			built+=("$v")
		fi
		for a in "${archs[@]}"; do
			build "$a" "$v" "patch $n/${#patches[@]} ($p)" "$objs"
		done
	done
	progress "bisect ok: $n/${#patches[@]} $p (${archs[*]}; ${built[*]})"
done
progress "series builds after every patch"
