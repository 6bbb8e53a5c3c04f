#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Make a Debian userland with real workload tools for the guests.
#
# Usage: scripts/mk-rootfs.sh [-h] [-f] [-p PKGS] ARCH [OUTDIR]
#
#   ARCH      x86_64 or arm64
#   OUTDIR    where the root goes (default $SCHED_CACHE/rootfs-ARCH)
#   -p PKGS   more packages, comma separated (e.g. trace-cmd)
#   -f        rebuild even when the inputs have not changed
#
# debootstrap --foreign --variant=minbase unpacks the base packages of
# bookworm for ARCH and downloads the tools (linux-perf, rt-tests, rt-app,
# sysbench, stress-ng, busybox-static and PKGS) with their dependencies; dpkg -x then unpacks
# every downloaded .deb into the root.  No ARCH code runs on the host, so
# the second debootstrap stage never happens: the root is for running
# programs, not for booting.  The mirror is the bookworm one named in
# /etc/apt/sources.list.d/debian.sources (MIRROR= overrides it).
#
# OUTDIR/.schedseries-rootfs holds the hash of the inputs (ARCH, packages,
# mirror, this script); nothing is redone while it matches.  scripts/
# run-guest.sh -r OUTDIR shares the root with a guest at /tools.  Prints
# OUTDIR on the last line.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,24s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
force=0
extra=
while getopts hfp: opt; do
	case $opt in
	h) usage 0 ;;
	f) force=1 ;;
	p) extra=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 1 || $# -eq 2 ]] || usage 2
arch=$1
arch_vars "$arch"
out=${2:-$CACHE/rootfs-$arch}
[[ $extra =~ ^[a-z0-9.+-]*(,[a-z0-9.+-]+)*$ ]] ||
	die "bad package list '$extra' (Debian package names, comma separated)"

suite=bookworm
pkgs=linux-perf,rt-tests,rt-app,sysbench,stress-ng,busybox-static${extra:+,$extra}
case $arch in
x86_64) debarch=amd64 triplet=x86_64-linux-gnu ldso=ld-linux-x86-64.so.2 elf=003e ;;
arm64) debarch=arm64 triplet=aarch64-linux-gnu ldso=ld-linux-aarch64.so.1 elf=00b7 ;;
*) die "unknown architecture '$arch' (x86_64 or arm64)" ;;
esac

# The first URIs of the deb822 stanza whose Suites has the suite itself.
sources_mirror() {
	local f=/etc/apt/sources.list.d/debian.sources
	[[ -f $f ]] || return 0
	awk -v s="$suite" '
		/^[[:space:]]*$/ { if (u != "" && hit) { print u; exit } u = ""; hit = 0; next }
		$1 == "URIs:" { u = $2 }
		$1 == "Suites:" { for (i = 2; i <= NF; i++) if ($i == s) hit = 1 }
		END { if (u != "" && hit) print u }' "$f" | head -n1
}
mirror=${MIRROR:-$(sources_mirror)}
[[ -n $mirror ]] || die "no $suite mirror in /etc/apt/sources.list.d/debian.sources (set MIRROR=)"

hash=$({
	echo "$arch $suite $pkgs $mirror"
	sha256sum <"$0"
} | sha256sum | cut -c1-16)
stamp=$out/.schedseries-rootfs
if [[ $force -eq 0 && $(cat "$stamp" 2>/dev/null) == "$hash" ]]; then
	progress "rootfs $out is up to date"
	echo "$out"
	exit 0
fi

need_pkgs debootstrap debian-archive-keyring
[[ $(id -u) -eq 0 ]] || die "debootstrap needs root"

tmp=$out.tmp
mkdir -p "$(dirname "$out")"
progress "debootstrap $suite $debarch into $tmp ($pkgs)"
t=$(date +%s)
# A try that failed (a mirror mid-sync) starts again from an empty $tmp.
bootstrap() {
	rm -rf "$tmp"
	run_logged "$CACHE/rootfs-$arch.log" debootstrap --arch="$debarch" --foreign \
		--variant=minbase --include="$pkgs" "$suite" "$tmp" "$mirror"
}
archive_retry bootstrap || die "debootstrap $debarch failed, log $CACHE/rootfs-$arch.log"

debs=("$tmp"/var/cache/apt/archives/*.deb)
[[ -f ${debs[0]} ]] || die "debootstrap left no .deb in $tmp/var/cache/apt/archives"
progress "unpacking ${#debs[@]} packages"
for d in "${debs[@]}"; do
	dpkg -x "$d" "$tmp" || die "dpkg -x $d failed"
done
rm -f "${debs[@]}"

# -f, not -e: the root has absolute symlinks, which would resolve on the host.
for f in usr/bin/perf usr/bin/cyclictest usr/bin/hackbench usr/bin/rt-app usr/bin/sysbench \
	 usr/bin/stress-ng "lib/$triplet/$ldso" \
	 "usr/lib/$triplet/libc.so.6"; do
	[[ -f $tmp/$f && ! -L $tmp/$f ]] || die "rootfs $tmp has no /$f"
done
machine=$(od -An -tx2 -j18 -N2 "$tmp/usr/bin/sysbench" | tr -d ' ')
[[ $machine == "$elf" ]] ||
	die "$tmp/usr/bin/sysbench is ELF machine 0x$machine, not $arch"
# Same architecture as the host: a cheap check that the tools really run.
if [[ $(uname -m) == "$arch" ]]; then
	for f in perf cyclictest hackbench rt-app sysbench stress-ng; do
		opt=--help
		[[ $f == perf ]] && opt=--version
		chroot "$tmp" "/usr/bin/$f" "$opt" >/dev/null 2>&1 ||
			[[ $? -le 1 ]] || die "/usr/bin/$f does not run in $tmp (chroot)"
	done
fi

echo "$hash" >"$tmp/.schedseries-rootfs"
rm -rf "$out"
mv "$tmp" "$out"
progress "rootfs $out: $(du -sh "$out" | cut -f1) in $(($(date +%s) - t))s"
echo "$out"
