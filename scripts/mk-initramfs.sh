#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Make the gzip'd cpio initramfs the test guests boot.
#
# Usage: scripts/mk-initramfs.sh [-h] [-f] ARCH OUTFILE [EXTRA...]
#
#   ARCH       x86_64, arm64 or i386: which static busybox goes in
#   OUTFILE    the .cpio.gz to write; OUTFILE.hash records its inputs
#   EXTRA      DIR       copy DIR's contents over the initramfs root
#                        (so DIR/opt/kselftest becomes /opt/kselftest,
#                        e.g. scripts/kselftest-tarball.sh -g's guest root)
#              DIR:DEST  copy DIR's contents into DEST (e.g. out:/opt/x)
#   -f         rebuild even when the inputs have not changed
#
# The initramfs holds /bin/busybox (applets installed at boot),
# scripts/guest/init.sh as /init and whatever EXTRA adds.  The
# x86_64 busybox comes from the host's busybox-static package; the arm64
# and i386 ones from busybox-static:ARCH, downloaded once with apt-get
# download (after dpkg --add-architecture) and cached under
# $SCHED_CACHE/debs.
# Nothing is rebuilt when the hash of all inputs matches OUTFILE.hash.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,/^# Nothing is rebuilt/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
force=0
while getopts hf opt; do
	case $opt in
	h) usage 0 ;;
	f) force=1 ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -ge 2 ]] || usage 2
arch=$1
outfile=$2
shift 2
arch_vars "$arch"
init=$REPO/scripts/guest/init.sh
[[ -f $init ]] || die "no guest init at $init"

extras=()
for e in "$@"; do
	src=${e%%:*}
	dest=/
	[[ $e == *:* ]] && dest=${e#*:}
	[[ -d $src ]] || die "extra '$e': no directory '$src'"
	[[ $dest == /* ]] || die "extra '$e': destination '$dest' is not absolute"
	extras+=("$(realpath "$src"):$dest")
done

need_pkgs cpio gzip

busybox=$(busybox_path "$arch")
[[ -x $busybox ]] || die "no busybox at '$busybox'"

# ELF e_machine must match: 0x3e x86_64, 0xb7 aarch64, 0x03 i386.
machine=$(od -An -tx2 -j18 -N2 "$busybox" | tr -d ' ')
case $arch:$machine in
x86_64:003e | arm64:00b7 | i386:0003) ;;
*) die "$busybox is ELF machine 0x$machine, not $arch" ;;
esac

# Everything that decides the output, hashed.
inputs_hash() {
	local x
	sha256sum "$busybox" "$init" "$0"
	for x in "${extras[@]}"; do
		echo "extra $x"
		(
			cd "${x%%:*}"
			find . -printf '%P %y %m %l\n' | LC_ALL=C sort
			find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum
		)
	done
}
hash=$(inputs_hash | sha256sum | cut -c1-16)
if [[ $force -eq 0 && -f $outfile && $(cat "$outfile.hash" 2>/dev/null) == "$hash" ]]; then
	progress "initramfs $outfile is up to date"
	exit 0
fi

progress "making $arch initramfs $outfile"
stage=$(mktemp -d "${TMPDIR:-/tmp}/initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,root,results,etc}
cp "$busybox" "$stage/bin/busybox"
cp "$init" "$stage/init"
chmod 755 "$stage/init" "$stage/bin/busybox"
[[ $(id -u) -eq 0 ]] && mknod -m 600 "$stage/dev/console" c 5 1
for x in "${extras[@]}"; do
	mkdir -p "$stage/${x#*:}"
	cp -a "${x%%:*}/." "$stage/${x#*:}/"
done

# The same bytes from the same inputs (times zeroed; cpio --reproducible,
# gzip -n): an instruction-counted guest's boot depends on them.
find "$stage" -exec touch -h -d @0 {} +
chmod 755 "$stage"
mkdir -p "$(dirname "$outfile")"
(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --reproducible --quiet) |
	gzip -9n >"$outfile.tmp" || die "cpio/gzip failed writing $outfile.tmp"
mv "$outfile.tmp" "$outfile"
echo "$hash" >"$outfile.hash"
progress "initramfs $outfile: $(du -h "$outfile" | cut -f1)"
