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
#               (default: /var/cache/schedseries/tree)
#   CC          compiler override (default: per ARCH above)
#
# Every program is built with -O2 -Wall -Wextra -Werror -static -pthread;
# any warning fails the build.  Prints one line per binary built.
set -euo pipefail

usage() {
	sed -n '3,19s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}

die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
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
x86_64) cc=${CC:-gcc} ;;
arm64) cc=${CC:-aarch64-linux-gnu-gcc} ;;
*) die "unknown architecture '$arch' (x86_64 or arm64)" ;;
esac
command -v "$cc" >/dev/null || die "compiler '$cc' not found for $arch"

repo=$(cd "$(dirname "$0")/.." && pwd)
src=$repo/tools/testing/selftests/sched
ksrc=${KSRC:-/var/cache/schedseries/tree}
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
