#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Configure and build a guest kernel from the prepared tree.
#
# Usage: scripts/build-kernel.sh [-h] [-C] [-n NAME] [-t TARGET] ARCH [FRAGMENT...]
#
#   ARCH        x86_64, arm64, or i386 (32-bit)
#   FRAGMENT    extra Kconfig fragments, merged after configs/common.config,
#               configs/ARCH.config and the architecture's own extras
#               (configs/debug.config for i386) (later ones win)
#   -n NAME     output directory name under $SCHED_CACHE/out, or the KSRC
#               tree's own out directory (default ARCH)
#   -t TARGET   make target instead of the boot image (e.g. kernel/sched/)
#   -C          build with clang-19 (LLVM=-19, Debian's clang-19, lld-19 and
#               llvm-19), W=1 and KCFLAGS=-Wconditional-uninitialized, which
#               sees a variable used uninitialised on one path only (GCC
#               builds the kernel with -Wno-maybe-uninitialized)
#
# The config starts from tinyconfig.  After olddefconfig every option the
# fragments ask for is checked, and the build fails naming those that did
# not take effect.  Builds go through ccache (scripts/kcc.sh: not for a
# source with .incbin) into O= directories, so only what changed is
# rebuilt.  Every 30 s of a build a progress line goes to stderr.  Prints
# the image path on the last line.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,25s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
name=
target=
clang=0
while getopts hCn:t: opt; do
	case $opt in
	h) usage 0 ;;
	C) clang=1 ;;
	n) name=$OPTARG ;;
	t) target=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -ge 1 ]] || usage 2
arch=$1
shift
arch_vars "$arch"
name=${name:-$arch}

frags=("$REPO/configs/common.config" "$REPO/configs/$arch.config")
for f in $KFRAGS; do
	frags+=("$REPO/configs/$f")
done
for f in "$@"; do
	[[ -f $f ]] || die "no config fragment '$f'"
	frags+=("$(realpath "$f")")
done

need_pkgs make gcc flex bison bc libelf-dev libssl-dev cpio ccache
[[ -n $CROSS ]] && need_pkgs gcc-aarch64-linux-gnu
command -v "${CROSS}gcc" >/dev/null || die "no compiler ${CROSS}gcc"
kcc="${CROSS}gcc"
llvm=()
if [[ $clang -eq 1 ]]; then
	[[ $arch == x86_64 ]] || die "-C: clang builds are for x86_64 only"
	need_pkgs clang-19 lld-19 llvm-19
	kcc="clang-19"
	llvm=(LLVM=-19 W=1 KCFLAGS=-Wconditional-uninitialized)
fi

tree=$(tree_dir)
[[ -f $tree/Makefile ]] || die "no kernel tree at $tree (run scripts/prepare-tree.sh)"
out=$(out_root)/$name
mkdir -p "$out"
# CC is scripts/kcc.sh (ccache, but not for a source with .incbin), at a
# path of the cache, not of the clone: kbuild rebuilds every object whose
# command line changed, CC included.  A ccache filled before kcc.sh (up to
# 1ac90e6) may hold a stale piggy.o: it is cleared once, and a stamp in
# it marks it safe.
if [[ ! -f $CCACHE_DIR/.schedseries-incbin-safe ]]; then
	if [[ -d $CCACHE_DIR && -n $(ls -A "$CCACHE_DIR") ]]; then
		progress "clearing $CCACHE_DIR once: it may hold .incbin objects of older kernels (see scripts/kcc.sh)"
		ccache -C >/dev/null
	fi
	mkdir -p "$CCACHE_DIR"
	touch "$CCACHE_DIR/.schedseries-incbin-safe"
fi
mkdir -p "$CACHE/bin"
cmp -s "$REPO/scripts/kcc.sh" "$CACHE/bin/kcc" || install -m 755 "$REPO/scripts/kcc.sh" "$CACHE/bin/kcc"
mk=(make -C "$tree" O="$out" ARCH="$KARCH" CROSS_COMPILE="$CROSS" ${llvm[@]+"${llvm[@]}"}
    CC="$CACHE/bin/kcc $kcc" KBUILD_BUILD_USER=schedseries KBUILD_BUILD_HOST=guest)

fhash=$(cat "${frags[@]}" | sha256sum | cut -c1-16)
if [[ ! -f $out/.config || $(cat "$out/.frag-hash" 2>/dev/null) != "$fhash" ]]; then
	progress "configuring $name (tinyconfig + ${#frags[@]} fragments)"
	rm -f "$out/.frag-hash"
	run_logged "$out/config.log" "${mk[@]}" tinyconfig ||
		die "tinyconfig failed for $name, log $out/config.log"
	run_logged "$out/config.log" env ARCH="$KARCH" CROSS_COMPILE="$CROSS" \
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" ||
		die "merge_config.sh failed for $name, log $out/config.log"
	run_logged "$out/config.log" "${mk[@]}" olddefconfig ||
		die "olddefconfig failed for $name, log $out/config.log"
	# What the fragments ask for, the last fragment winning, as OPT=VAL
	# with "n" for "# CONFIG_X is not set".
	bad=()
	while IFS= read -r line; do
		opt=${line%%=*}
		val=${line#*=}
		if [[ $val == n ]]; then
			grep -qx "$opt=.*" "$out/.config" && bad+=("$line")
		else
			grep -qxF "$line" "$out/.config" || bad+=("$line")
		fi
	done < <(cat "${frags[@]}" | sed -nE 's/^# (CONFIG_[A-Za-z0-9_]+) is not set$/\1=n/p; /^CONFIG_[A-Za-z0-9_]+=/p' |
		awk -F= '{ v[$1] = $0; if (!($1 in o)) o[$1] = n++ } END { for (k in v) print o[k], v[k] }' |
		sort -n | cut -d' ' -f2-)
	if [[ ${#bad[@]} -gt 0 ]]; then
		die "config options did not take effect for $name: ${bad[*]} (config $out/.config)"
	fi
	echo "$fhash" >"$out/.frag-hash"
fi

target=${target:-${KIMAGE##*/}}
progress "building $name $target"
t=$(date +%s)
# A cold build takes minutes: every 30 s a line on stderr says how far it
# got (kbuild's CC and AS lines in the log so far).
objects() { grep -cE '^  (CC|AS) ' "$out/build.log" 2>/dev/null || true; }
(
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	while :; do
		sleep 30 &
		s=$!
		wait "$s"
		progress "building $name: $(objects) objects compiled, $(($(date +%s) - t))s"
	done
) >&2 &
ticker=$!
trap 'kill "$ticker" 2>/dev/null || true' EXIT
rc=0
run_logged "$out/build.log" "${mk[@]}" -j"$JOBS" "$target" || rc=$?
kill "$ticker" 2>/dev/null || true
wait "$ticker" 2>/dev/null || true
[[ $rc -eq 0 ]] ||
	die "kernel build failed for $name ($(grep -m1 -E 'error:|Error [0-9]' "$out/build.log" || echo 'see log')), log $out/build.log"
progress "built $name in $(($(date +%s) - t))s, $(objects) objects compiled"
echo "$out/$KIMAGE"
