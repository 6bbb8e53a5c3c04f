#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Make the ramdisk the LAVA kselftest job boots.
#
# Usage: mk-lava-ramdisk.sh [-h] [-a ARCH] OUTFILE
#
#   OUTFILE   the gzip'd newc cpio to write (the job's "ramdisk" image)
#   -a ARCH   x86_64 (default) or arm64
#   -h        show this help
#
# The ramdisk holds a static busybox, lava-init.sh (next to this script)
# as /init, and coreutils' timeout with the two libraries it links (libc
# and the dynamic loader), because kselftest's runner.sh calls
# "/usr/bin/timeout --foreground".  x86_64 takes them from this machine
# (busybox-static, coreutils); arm64 from Debian's arm64 packages:
# busybox-static:arm64 (fetched when missing, as scripts/mk-initramfs.sh
# does) and the guest root of scripts/kselftest-tarball.sh -g arm64.  The kselftest tarball is not in it:
# LAVA adds it at deploy time (the ramdisk's "overlays" in the job),
# under /opt/kselftest.
set -euo pipefail

usage() {
	sed -n '3,21s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
arch=x86_64
while getopts ha: opt; do
	case $opt in
	h) usage 0 ;;
	a) arch=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 1 ]] || usage 2
out=$1
here=$(cd "$(dirname "$0")" && pwd)
init=$here/lava-init.sh
[[ -f $init ]] || die "no $init"
case $arch in
x86_64)
	src=/
	libs=(lib64/ld-linux-x86-64.so.2 lib/x86_64-linux-gnu/libc.so.6)
	hint="apt-get install busybox-static coreutils"
	;;
arm64)
	src=$CACHE/kselftest/arm64/guest
	libs=(lib/ld-linux-aarch64.so.1 lib/aarch64-linux-gnu/libc.so.6)
	hint="scripts/kselftest-tarball.sh -g arm64 makes them"
	;;
*) die "bad -a '$arch' (x86_64 or arm64)" ;;
esac
busybox=/bin/busybox
[[ $arch == x86_64 ]] || busybox=$(busybox_path "$arch")
for f in "$busybox" "$src/usr/bin/timeout" "${libs[@]/#/$src/}"; do
	[[ -e $f ]] || die "missing $f ($hint)"
done
command -v cpio >/dev/null || die "no cpio (apt-get install cpio)"
file -L "$busybox" | grep -q 'statically linked' || die "$busybox is not static"

stage=$(mktemp -d)
chmod 755 "$stage"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,root,opt/kselftest,etc}
cp "$busybox" "$stage/bin/busybox"
cp "$init" "$stage/init"
chmod 755 "$stage/init"
cp -L "$src/usr/bin/timeout" "$stage/usr/bin/timeout"
for f in "${libs[@]}"; do
	mkdir -p "$stage/${f%/*}"
	cp -L "$src/$f" "$stage/$f"
done
# The kernel opens /dev/console before /init runs.
mknod -m 600 "$stage/dev/console" c 5 1
(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet -R 0:0) | gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
