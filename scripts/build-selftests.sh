#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the sched_feat selftests as static binaries for a guest initramfs.
#
# Usage: scripts/build-selftests.sh [-h] ARCH OUTDIR
#
#   ARCH        x86_64 (gcc) or arm64 (aarch64-linux-gnu-gcc)
#   OUTDIR      directory for the binaries (created if missing)
#   -h          show this help
#
# Environment:
#   KSRC        kernel tree whose tools/testing/selftests provides
#               kselftest.h and kselftest_harness.h
#               (default: $SCHED_CACHE/tree)
#   CC          compiler override (default: per ARCH above)
#
# Every program is built with -O2 -Wall -Wextra -Werror -static -pthread;
# any warning fails the build.  Without CC, the compiler and the static C
# library for ARCH are installed with apt when missing (arm64:
# gcc-aarch64-linux-gnu and libc6-dev-arm64-cross, which has the kernel
# headers).  Prints one line per binary built.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,22s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}

while getopts h opt; do
	case $opt in
	h) usage 0 ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 2 ]] || usage 2
arch=$1
out=$2

case $arch in
x86_64) cc=${CC:-gcc} pkgs=(gcc libc6-dev) ;;
arm64) cc=${CC:-aarch64-linux-gnu-gcc} pkgs=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross) ;;
*) die "unknown architecture '$arch' (x86_64 or arm64)" ;;
esac
[[ -n ${CC:-} ]] || need_pkgs "${pkgs[@]}" >&2
command -v "$cc" >/dev/null || die "compiler '$cc' not found for $arch"

src=$REPO/tools/testing/selftests/sched
ksrc=$(tree_dir)
inc=$ksrc/tools/testing/selftests
[[ -f $inc/kselftest_harness.h ]] ||
	die "KSRC '$ksrc' has no tools/testing/selftests/kselftest_harness.h"

# Keep in sync with TEST_GEN_PROGS in tools/testing/selftests/sched/Makefile.
progs=(features misfit asym_prev lb_classify eevdf_ineligible)

mkdir -p "$out" || die "cannot create OUTDIR '$out'"
# The sources include "../kselftest_harness.h": give them a parent that has it.
# -iquote for the kernel tree's selftests/sched dir makes that resolve.
cflags=(-O2 -Wall -Wextra -Werror -static -pthread -D_GNU_SOURCE=
	-iquote "$inc/sched" -I "$inc" -I "$src")
for p in "${progs[@]}"; do
	"$cc" "${cflags[@]}" -o "$out/$p" "$src/$p.c" ||
		die "building $p for $arch failed"
	printf '%s\n' "$out/$p"
done
