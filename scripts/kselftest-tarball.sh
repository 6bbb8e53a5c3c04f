#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the sched kselftests with kbuild, as kernel CI farms do, and pack
# them with the selftests' own gen_tar.
#
# Usage: scripts/kselftest-tarball.sh [-h] [-g] [-n] [-o DIR] [ARCH...]
#
#   ARCH     x86_64, arm64 and/or i386 (default: x86_64 arm64)
#   -o DIR   where kselftest-ARCH.tar.gz goes (default results/)
#   -g       also make the guest root for it, for scripts/mk-initramfs.sh:
#            $SCHED_CACHE/kselftest/ARCH/guest, with the tarball unpacked
#            as shipped into opt/kselftest and Debian's coreutils timeout
#            with its C library (printed last, one line per ARCH)
#   -n       do not check the tarball's list of tests (for the mutation
#            that shows the guest run naming a test missing from it)
#   -h       show this help
#
# For each ARCH it copies the patched tree's Makefile, scripts/ and tools/
# to $SCHED_CACHE/kselftest/ARCH/src (the tree itself stays free of build
# output), then runs
#
#   make -C tools/testing/selftests TARGETS=sched ARCH=... CROSS_COMPILE=...
#        LDFLAGS=-static KHDR_INCLUDES= KSFT_INSTALL_PATH=... gen_tar
#
# Static binaries: the tarball runs on a busybox ramdisk as well as on a
# distribution, and make test's guests carry it in their initramfs with
# no Debian root over 9p (that root, scripts/mk-rootfs.sh, is a
# debootstrap of some 330 MB that only the bench and stress need; the
# test initramfs is 4 MB and boots in seconds).  KHDR_INCLUDES
# is empty: the tests need only the C library's kernel headers (libc6-dev,
# libc6-dev-arm64-cross, libc6-dev-i386-cross).  The tarball holds
# run_kselftest.sh, kselftest-list.txt and sched/ (our five tests, the
# upstream cs_prctl_test, config and settings).  On a board or VM booted
# with the patched kernel:
#
#   tar -xzf kselftest-x86_64.tar.gz -C /opt/kselftest
#   cd /opt/kselftest && ./run_kselftest.sh -c sched -S sched:cs_prctl_test
#
# (cs_prctl_test, upstream's, fails rather than skips without
# CONFIG_SCHED_CORE, which sched/config does not ask for.)
#
# run_kselftest.sh's runner calls /usr/bin/timeout --foreground, which
# needs coreutils' timeout (busybox's rejects --foreground): without it no
# timeout, the settings file's included, applies.  So -g puts coreutils'
# timeout of ARCH into the guest root (coreutils and libc6 .debs from
# apt-get download, cached in $SCHED_CACHE/debs).
#
# KSFT_DROP=TEST (a mutation, for CI): drop TEST from TEST_GEN_PROGS in
# the copy; the build must then fail, naming TEST (without -n), or the
# guest run must (with -n).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,51s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
outdir=$REPO/results
guest=0
check=1
while getopts hgno: opt; do
	case $opt in
	h) usage 0 ;;
	g) guest=1 ;;
	n) check=0 ;;
	o) outdir=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
archs=("$@")
[[ ${#archs[@]} -gt 0 ]] || archs=(x86_64 arm64)
for a in "${archs[@]}"; do
	[[ $a == x86_64 || $a == arm64 || $a == i386 ]] ||
		die "unknown architecture '$a' (x86_64, arm64 or i386)"
	arch_vars "$a"
	# shellcheck disable=SC2086 # a list of packages
	need_pkgs $UPKGS
done

need_pkgs make rsync
"$REPO/scripts/prepare-tree.sh" >/dev/null
tree=$(tree_dir)
mkdir -p "$outdir" || die "cannot create '$outdir'"
outdir=$(realpath "$outdir")

# guest_root ARCH TARBALL DIR : DIR/opt/kselftest with TARBALL unpacked,
# DIR/usr/bin/timeout (coreutils) with its interpreter and libraries.
guest_root() {
	local a=$1 tarball=$2 dir=$3 x lib f t to interp p
	x=$CACHE/debs/x-$a
	rm -rf "$dir" "$x"
	mkdir -p "$dir/opt/kselftest" "$dir/usr/bin" "$x"
	tar -xzf "$tarball" -C "$dir/opt/kselftest" || die "cannot unpack $tarball"
	for p in coreutils libc6; do
		dpkg -x "$(deb_get "$p" "$a")" "$x" || die "dpkg -x of $p:$a failed"
	done
	cp "$x/usr/bin/timeout" "$dir/usr/bin/timeout"
	# The interpreter, then each library the program needs, at the
	# paths the Debian root has them.
	interp=$(readelf -l "$x/usr/bin/timeout" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
	[[ -n $interp ]] || die "no interpreter in $a's timeout"
	for lib in $interp $(readelf -d "$x/usr/bin/timeout" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		f=
		for f in "$x$lib" "$x"/lib/*-linux-gnu/"$lib" "$x"/usr/lib/*-linux-gnu/"$lib"; do
			[[ -e $f || -L $f ]] && break
		done
		[[ -e $f || -L $f ]] || die "$a: $lib, which timeout needs, is not in libc6"
		# The file at the path the program asks for; a link inside the
		# package (absolute ones too) resolved within the package.
		to=$dir${f#"$x"}
		while [[ -L $f ]]; do
			t=$(readlink "$f")
			if [[ $t == /* ]]; then f=$x$t; else f=$(dirname "$f")/$t; fi
		done
		[[ -f $f ]] || die "$a: $lib is a dangling link in libc6"
		mkdir -p "$(dirname "$to")"
		cp "$f" "$to"
	done
	rm -rf "$x"
}

for a in "${archs[@]}"; do
	arch_vars "$a"
	work=$CACHE/kselftest/$a
	src=$work/src
	mkdir -p "$src"
	# --delete: a test dropped from the tree must not survive in the copy.
	rsync -a --delete "$tree/Makefile" "$tree/scripts" "$tree/tools" "$src/" ||
		die "cannot copy $tree to $src"
	if [[ -n ${KSFT_DROP:-} ]]; then
		mk=$src/tools/testing/selftests/sched/Makefile
		grep -q "^TEST_GEN_PROGS :=.* $KSFT_DROP\b" "$mk" ||
			die "KSFT_DROP: $KSFT_DROP is not in TEST_GEN_PROGS of $mk"
		sed -i "/^TEST_GEN_PROGS :=/s/ $KSFT_DROP\b//" "$mk"
		progress "mutation: $KSFT_DROP dropped from TEST_GEN_PROGS in $mk"
	fi
	# The build's inputs: the selftests' top-level files, kselftest/ and
	# sched/ as copied (KSFT_DROP included), and the compiler.  A build
	# of the same inputs stands, its tarball and log kept under their key
	# (a CI run asks for the same tarballs some ten times, and for one
	# with a test dropped).
	key=$( { cd "$src/tools/testing/selftests" &&
		 { find . -maxdepth 1 -type f; find kselftest sched -type f; } | LC_ALL=C sort |
		 xargs -d '\n' sha256sum
		 echo "$KARCH $UCROSS $("${UCROSS}gcc" --version | head -n1)"; } | sha256sum | cut -c1-16)
	inst=$work/install-$key
	log=$inst.log
	if [[ -f $inst/kselftest-packages/kselftest.tar.gz && -f $inst.done ]]; then
		progress "kselftest $a: the build of the same sources stands ($key), log $log"
	else
		rm -rf "$inst" "$inst.done"
		progress "kselftest $a: make TARGETS=sched gen_tar, log $log"
		make -C "$src/tools/testing/selftests" TARGETS=sched clean >"$log" 2>&1 ||
			die "make clean failed for $a, see $log"
		LC_ALL=C make -C "$src/tools/testing/selftests" TARGETS=sched ARCH="$KARCH" \
			CROSS_COMPILE="$UCROSS" LDFLAGS=-static KHDR_INCLUDES= \
			KSFT_INSTALL_PATH="$inst" gen_tar >>"$log" 2>&1 ||
			die "kselftest gen_tar failed for $a, see $log"
		touch "$inst.done"
	fi
	# Our tests build with -Wall -Wextra (the selftests Makefile): a
	# warning in them fails, as it would upstream's review.
	ours=$(find "$REPO/tools/testing/selftests/sched" -maxdepth 1 -name '*.[ch]' -printf '%f\n' |
		sed 's/\./\\./' | paste -sd'|' -)
	w=$(grep -E "(^|/)($ours):[0-9]+(:[0-9]+)?: warning:" "$log" || true)
	[[ -z $w ]] || die "warnings building the sched selftests for $a: $(head -n1 <<<"$w") (see $log)"
	# What the tarball must hold: a program for each test source this
	# repository ships, and the upstream cs_prctl_test, each also in
	# kselftest-list.txt, which run_kselftest.sh runs.  The list comes
	# from the sources, not from the Makefile, so that a test dropped
	# from TEST_GEN_PROGS is named here instead of silently not run.
	tar=$inst/kselftest-packages/kselftest.tar.gz
	[[ -f $tar ]] || die "gen_tar wrote no $tar, see $log"
	tests=cs_prctl_test
	for c in "$REPO"/tools/testing/selftests/sched/*.c; do
		tests+=" $(basename "$c" .c)"
	done
	members=$(tar -tzf "$tar")
	for t in $tests; do
		[[ $check -eq 1 ]] || break
		grep -qE "^(\./)?sched/$t\$" <<<"$members" ||
			die "kselftest-$a.tar.gz lacks sched/$t (is it in TEST_GEN_PROGS of tools/testing/selftests/sched/Makefile?)"
		grep -qx "sched:$t" "$inst/kselftest-list.txt" ||
			die "kselftest-list.txt of $a lacks sched:$t"
	done
	cp "$tar" "$outdir/kselftest-$a.tar.gz"
	progress "kselftest $a: $outdir/kselftest-$a.tar.gz ($(du -h "$tar" | cut -f1); tests: $tests)"
	[[ $guest -eq 1 ]] && guest_root "$a" "$outdir/kselftest-$a.tar.gz" "$work/guest"
done
[[ $guest -eq 0 ]] || for a in "${archs[@]}"; do echo "$CACHE/kselftest/$a/guest"; done
