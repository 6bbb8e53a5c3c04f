#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare the kernel tree and apply patches/series to it with quilt.
#
# Usage: scripts/prepare-tree.sh [-h] [-n N]
#
#   -n N    apply only the first N patches of the series (0: the plain
#           base), e.g. to build the base or bisect; without -n, all
#
# Without KSRC the tree is $SCHED_CACHE/tree, unpacked from Debian's
# linux-source-6.12 tarball.  With KSRC=/path an existing kernel tree is used
# in place.  The tree's patches/ is a symlink to this repository's patches/,
# so `quilt refresh` in the tree edits the repository.  The series is only
# popped and pushed again when it changed; files the old or new series touch
# are touched so that make rebuilds them.  Writes the base description on
# the first line of $tree/.schedseries-base.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,17s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
npatch=$(series_list | wc -l)
upto=$npatch
while getopts hn: opt; do
	case $opt in
	h) usage 0 ;;
	n) upto=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 0 ]] || usage 2
[[ $upto =~ ^[0-9]+$ && $upto -le $npatch ]] || die "bad -n '$upto' (0 to $npatch)"

need_pkgs quilt
mkdir -p "$CACHE"

tree=$(tree_dir)
if [[ -n ${KSRC:-} ]]; then
	[[ -f $KSRC/Makefile && -f $KSRC/kernel/sched/fair.c && -f $KSRC/kernel/sched/features.h ]] ||
		die "KSRC=$KSRC is not a kernel tree (no Makefile or kernel/sched/fair.c)"
	base="KSRC $(cd "$KSRC" && git describe --always --dirty 2>/dev/null ||
		make -s kernelversion 2>/dev/null || echo unknown)"
else
	if [[ ! -f $tree/.schedseries-unpacked ]]; then
		[[ -f $BASE_TARBALL ]] || need_pkgs linux-source-6.12
		[[ -f $BASE_TARBALL ]] || die "no base tarball at $BASE_TARBALL"
		progress "unpacking $(basename "$BASE_TARBALL")"
		rm -rf "$tree" "$CACHE/unpack"
		mkdir -p "$CACHE/unpack"
		tar -C "$CACHE/unpack" -xf "$BASE_TARBALL"
		mv "$CACHE/unpack"/linux-source-* "$tree"
		rmdir "$CACHE/unpack"
		touch "$tree/.schedseries-unpacked"
	fi
	pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo "?")
	base="linux-source-6.12 $pkgver ($(make -s -C "$tree" kernelversion))"
fi

cd "$tree"
if [[ -e patches && ! -L patches ]]; then
	die "$tree/patches exists and is not our symlink; move it away"
fi
ln -sfn "$REPO/patches" patches
export QUILT_PATCHES=patches QUILT_PC=.pc

# The stamp lists "patch sha256" for every applied patch.  Only the patches
# from the first one that differs on are popped and pushed again, so an
# edit of a late patch rebuilds only what that patch touches.
stamp=.schedseries-applied
want=$(series_stamp | awk -v n="$upto" 'NR <= n')
have=$(cat "$stamp" 2>/dev/null || true)
# A stamp that does not count what quilt has applied is not to be trusted.
[[ $(grep -c . <<<"$have") -eq $(quilt applied 2>/dev/null | wc -l) ]] || have="?"
if [[ $have == "$want" ]]; then
	if [[ $upto -eq $npatch ]]; then
		progress "series already applied to $tree"
	else
		progress "first $upto of $npatch patches already applied to $tree"
	fi
else
	keep=0
	if [[ $have != "?" ]]; then
		mapfile -t a <<<"$have"
		mapfile -t b <<<"$want"
		while [[ $keep -lt ${#a[@]} && $keep -lt ${#b[@]} &&
			 -n ${a[keep]} && ${a[keep]} == "${b[keep]}" ]]; do
			keep=$((keep + 1))
		done
	fi
	rm -f "$stamp"
	mapfile -t applied < <(quilt applied 2>/dev/null || true)
	touched=()
	for ((i = keep; i < ${#applied[@]}; i++)); do
		p=${applied[i]#patches/}
		[[ -d .pc/$p ]] && mapfile -t -O "${#touched[@]}" touched < <(
			cd ".pc/$p" && find . -type f ! -name .timestamp -printf '%P\n')
	done
	if [[ ${#applied[@]} -gt $keep ]]; then
		if [[ $keep -eq 0 ]]; then
			quilt pop -afq >/dev/null 2>&1 || true
		else
			quilt pop -fq "${applied[keep - 1]}" >/dev/null 2>&1 || true
		fi
	fi
	if [[ $upto -gt $keep ]]; then
		progress "applying patches $((keep + 1))-$upto of $npatch to $tree"
	else
		progress "popping $tree to the first $upto of $npatch patches"
	fi
	log=$CACHE/quilt-push.log
	if [[ $upto -gt $keep ]] && ! quilt push "$(series_list | sed -n "${upto}p")" >"$log" 2>&1; then
		failed=$(grep -o 'Applying patch [^ ]*' "$log" | tail -n1 | sed 's/Applying patch //')
		hunk=$(awk '/^patching file/ { f = $3 }
			/FAILED|malformed|can.t find file/ { print (f ? f ": " : "") $0; exit }' "$log")
		quilt pop -afq >/dev/null 2>&1 || true
		die "patch ${failed:-?} does not apply: ${hunk:-see $log} (tree left unpatched, log $log)"
	fi
	mapfile -t applied < <(quilt applied 2>/dev/null || true)
	for ((i = keep; i < ${#applied[@]}; i++)); do
		p=${applied[i]#patches/}
		mapfile -t -O "${#touched[@]}" touched < <(
			cd ".pc/$p" && find . -type f ! -name .timestamp -printf '%P\n')
	done
	for f in "${touched[@]}"; do
		[[ -e $f ]] && touch "$f"
	done
	echo "$want" >"$stamp"
fi
series_hash=$(series_hash)
# Files the series adds, kept as plain files in this repository.
grep -v '^\s*\(#\|$\)' "$REPO/patches/new-files" | cut -d' ' -f2- | tr ' ' '\n' |
while read -r f; do
	[[ -n $f ]] || continue
	[[ -e $REPO/$f ]] || die "patches/new-files names missing $f"
	(cd "$REPO" && find "$f" -type f) | while read -r g; do
		cmp -s "$REPO/$g" "$g" 2>/dev/null || install -D -m644 "$REPO/$g" "$g"
	done
done
partial=
[[ $upto -eq $npatch ]] || partial=" (first $upto of $npatch patches applied)"
printf '%s\nseries %s%s\n' "$base" "$series_hash" "$partial" >.schedseries-base
