#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Make the x86_64 ramdisk the LAVA kselftest job boots.
#
# Usage: mk-lava-ramdisk.sh [-h] OUTFILE
#
#   OUTFILE   the gzip'd newc cpio to write (the job's "ramdisk" image)
#   -h        show this help
#
# The ramdisk holds the host's static busybox (busybox-static), lava-init.sh
# (next to this script) as /init, and coreutils' timeout with the two
# libraries it links (libc and the dynamic loader), because
# kselftest's runner.sh calls "/usr/bin/timeout --foreground".  The
# kselftest tarball is not in it: LAVA adds it at deploy time (the
# ramdisk's "overlays" in the job), under /opt/kselftest.
set -euo pipefail

usage() {
	sed -n '3,16s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
die() {
	echo "mk-lava-ramdisk: $*" >&2
	exit 1
}
while getopts h opt; do
	case $opt in
	h) usage 0 ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 1 ]] || usage 2
out=$1
here=$(cd "$(dirname "$0")" && pwd)
init=$here/lava-init.sh
[[ -f $init ]] || die "no $init"
for f in /bin/busybox /usr/bin/timeout /lib64/ld-linux-x86-64.so.2 \
	/lib/x86_64-linux-gnu/libc.so.6; do
	[[ -e $f ]] || die "missing $f (apt-get install busybox-static coreutils)"
done
command -v cpio >/dev/null || die "no cpio (apt-get install cpio)"
file -L /bin/busybox | grep -q 'statically linked' || die "/bin/busybox is not static"

stage=$(mktemp -d)
chmod 755 "$stage"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,lib64,lib/x86_64-linux-gnu,dev,proc,sys,tmp,root,opt/kselftest,etc}
cp /bin/busybox "$stage/bin/busybox"
cp "$init" "$stage/init"
chmod 755 "$stage/init"
cp /usr/bin/timeout "$stage/usr/bin/timeout"
cp -L /lib64/ld-linux-x86-64.so.2 "$stage/lib64/ld-linux-x86-64.so.2"
cp -L /lib/x86_64-linux-gnu/libc.so.6 "$stage/lib/x86_64-linux-gnu/libc.so.6"
# The kernel opens /dev/console before /init runs.
mknod -m 600 "$stage/dev/console" c 5 1
(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet -R 0:0) | gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
