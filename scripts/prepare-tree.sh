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
# linux-source-7.3 (BASE_PKG, from BASE_SUITE trixie-backports, fetched
# with a private apt configuration under the cache), or from BASE_TARBALL.
# With KSRC=/path the tree is a checkout of KSRC's HEAD under
# $SCHED_CACHE/ksrc/ (a copy when KSRC is not a git tree; KSRC_FRESH=1
# copies again): KSRC itself is never written to.  A git KSRC whose last
# 1000 commits carry every patch's subject (git am of make export's
# patches) is built as it is, without quilt (and -n below all refuses).
# The tree's patches/ is
# a symlink to this repository's patches/, so `quilt refresh` in the tree
# edits the repository.  The series is only popped and pushed again when
# it changed; files the old or new series touch are touched so that make
# rebuilds them.  Writes the base description on the first line of
# $tree/.schedseries-base.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,24s/^# \{0,1\}//p' "$0"
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

[[ -z ${SCHED_TREE:-} ]] ||
	die "SCHED_TREE=$SCHED_TREE names a tree that is built as it is (bench/research.sh); unset it to prepare the series' tree"
need_pkgs quilt
mkdir -p "$CACHE"

tree=$(tree_dir)
if [[ -n ${KSRC:-} ]]; then
	[[ -f $KSRC/Makefile && -f $KSRC/kernel/sched/fair.c && -f $KSRC/kernel/sched/features.h ]] ||
		die "KSRC=$KSRC is not a kernel tree (no Makefile or kernel/sched/fair.c)"
	# The series goes into a checkout of KSRC's HEAD (a git tree: a
	# --shared clone, nothing is written into KSRC) or into a copy of it,
	# made again when KSRC_FRESH=1.  The user's tree stays as it is.
	ksrc=$(realpath "$KSRC")
	if head=$(git -C "$ksrc" rev-parse --verify -q HEAD 2>/dev/null); then
		need_pkgs git
		desc=$(git -C "$ksrc" describe --always --dirty 2>/dev/null || echo "$head")
		[[ $desc == *-dirty ]] &&
			progress "warning: KSRC=$ksrc has uncommitted changes; the series goes onto its HEAD $head without them"
		want_src="git $ksrc $head"
		if [[ $(cat "$tree/.schedseries-unpacked" 2>/dev/null) != "$want_src" ]]; then
			progress "checking out $ksrc at $head into $tree"
			rm -rf "$tree" "$tree.new"
			git clone -q --shared --no-checkout "$ksrc" "$tree.new"
			git -C "$tree.new" -c advice.detachedHead=false checkout -q --detach "$head"
			mv "$tree.new" "$tree"
			echo "$want_src" >"$tree/.schedseries-unpacked"
		fi
		base="KSRC $ksrc git describe $desc (HEAD $head)"
		# A HEAD that has the series already (git am of make export's
		# patches, as the README shows) is built as it is: by the
		# patches' subjects in its last 1000 commits.
		in_head=0 subj=''
		logs=$(git -C "$tree" log --format=%s -n 1000 HEAD)
		while read -r p; do
			# The header, unfolded, without its [PATCH n/m].
			subj=$(awk '/^Subject: / { s = substr($0, 10); f = 1; next }
				f && /^[ \t]/ { sub(/^[ \t]+/, " "); s = s $0; next }
				f { sub(/^\[[^]]*\] /, "", s); print s; exit }' "$REPO/patches/$p")
			grep -qxF -- "$subj" <<<"$logs" && in_head=$((in_head + 1))
		done < <(series_list)
		if [[ $in_head -eq $npatch ]]; then
			[[ $upto -eq $npatch ]] ||
				die "KSRC=$ksrc has the series in its history: a build of its first $upto patches needs a HEAD without it (e.g. tip/sched/core)"
			rm -rf "$tree/.pc" "$tree/.schedseries-applied"
			[[ -L $tree/patches ]] && rm -f "$tree/patches"
			printf '%s\nseries in its history (its %d commits; patches/ not applied)\n' "$base" "$npatch" >"$tree/.schedseries-base"
			progress "KSRC=$ksrc has the series' $npatch commits in its history: building it as it is"
			exit 0
		fi
		[[ $in_head -eq 0 ]] ||
			die "KSRC=$ksrc has $in_head of the series' $npatch commits in its history: give a HEAD with all of them or none"
	else
		if [[ ${KSRC_FRESH:-0} == 1 || ! -f $tree/.schedseries-unpacked ]]; then
			progress "copying $ksrc into $tree"
			rm -rf "$tree" "$tree.new"
			mkdir -p "$(dirname "$tree")"
			cp -a "$ksrc" "$tree.new"
			rm -rf "$tree.new/.pc" "$tree.new/patches"
			mv "$tree.new" "$tree"
			echo "copy $ksrc $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$tree/.schedseries-unpacked"
		fi
		base="KSRC $ksrc ($(cat "$tree/.schedseries-unpacked"), $(make -s -C "$tree" kernelversion 2>/dev/null || echo unknown))"
	fi
else
	# The stamp names what the tree was unpacked from: "PKG VERSION", or
	# "tarball PATH".  A tree of another base is unpacked anew.
	want_src=${BASE_TARBALL:+tarball $BASE_TARBALL}
	want_src=${want_src:-$BASE_PKG}
	have_src=$(cat "$tree/.schedseries-unpacked" 2>/dev/null || true)
	if [[ $have_src != "$want_src" && $have_src != "$want_src "* ]]; then
		if [[ -n ${BASE_TARBALL:-} ]]; then
			[[ -f $BASE_TARBALL ]] || die "no base tarball at $BASE_TARBALL"
			tarball=$BASE_TARBALL pkgver="tarball $BASE_TARBALL"
		else
			got=$(fetch_source_pkg "$BASE_PKG" "$BASE_SUITE")
			tarball=${got%% *} pkgver="$BASE_PKG ${got#* }"
		fi
		progress "unpacking $(basename "$tarball")"
		rm -rf "$tree" "$CACHE/unpack"
		mkdir -p "$CACHE/unpack"
		tar -C "$CACHE/unpack" -xf "$tarball"
		mv "$CACHE/unpack"/linux-source-* "$tree"
		rmdir "$CACHE/unpack"
		echo "$pkgver" >"$tree/.schedseries-unpacked"
	fi
	base="$(cat "$tree/.schedseries-unpacked") ($(make -s -C "$tree" kernelversion))"
fi

cd "$tree"
if [[ -e patches && ! -L patches ]]; then
	die "$tree/patches exists and is not our symlink; move it away"
fi
ln -sfn "$REPO/patches" patches
export QUILT_PATCHES=patches QUILT_PC=.pc

# pc_pop KEEP: undo every applied patch after the first KEEP from quilt's
# backups in .pc, for when quilt refuses because a pushed patch was renamed
# or dropped from the series.  An empty backup stands for a file the patch
# created.
pc_pop() {
	local keep=$1 i p f
	local -a ap
	mapfile -t ap < <(cat .pc/applied-patches 2>/dev/null || true)
	for ((i = ${#ap[@]} - 1; i >= keep; i--)); do
		p=${ap[i]}
		[[ -d .pc/$p ]] || die "cannot undo $p: no .pc/$p in $tree (quilt state broken; unpack the tree again)"
		while IFS= read -r f; do
			if [[ -s .pc/$p/$f ]]; then
				cp -p ".pc/$p/$f" "$f"
			else
				rm -f "$f"
			fi
		done < <(cd ".pc/$p" && find . -type f ! -name .timestamp -printf '%P\n')
		rm -rf ".pc/$p"
	done
	printf '%s\n' "${ap[@]:0:keep}" | grep . >.pc/applied-patches.new || true
	mv .pc/applied-patches.new .pc/applied-patches
	progress "undid patches $((keep + 1))-${#ap[@]} from quilt's backups (the series changed under them)"
}

# The stamp lists "patch sha256" for every applied patch.  Only the patches
# from the first one that differs on are popped and pushed again, so an
# edit of a late patch rebuilds only what that patch touches.
stamp=.schedseries-applied
want=$(series_stamp | awk -v n="$upto" 'NR <= n')
have=$(cat "$stamp" 2>/dev/null || true)
# A stamp that does not count what quilt has applied is not to be trusted.
[[ $(grep -c . <<<"$have") -eq $(grep -c . .pc/applied-patches 2>/dev/null || true) ]] || have="?"
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
	# What quilt has applied, from its own list: `quilt applied` refuses
	# once a pushed patch was renamed or dropped from the series.
	mapfile -t applied < <(cat .pc/applied-patches 2>/dev/null || true)
	touched=()
	for ((i = keep; i < ${#applied[@]}; i++)); do
		p=${applied[i]#patches/}
		[[ -d .pc/$p ]] && mapfile -t -O "${#touched[@]}" touched < <(
			cd ".pc/$p" && find . -type f ! -name .timestamp -printf '%P\n')
	done
	if [[ ${#applied[@]} -gt $keep ]]; then
		if [[ $keep -eq 0 ]]; then
			quilt pop -afq >/dev/null 2>&1 || pc_pop "$keep"
		else
			quilt pop -fq "${applied[keep - 1]}" >/dev/null 2>&1 || pc_pop "$keep"
		fi
	fi
	if [[ $upto -gt $keep ]]; then
		progress "applying patches $((keep + 1))-$upto of $npatch to $tree"
	else
		progress "popping $tree to the first $upto of $npatch patches"
	fi
	# The files a patch to be pushed creates (patches/new-files) are not
	# the base's: a tree of a series whose patches lacked them (before
	# they carried their files) still has the copies install_new_files
	# made, on which the push would fail.
	npush=0
	while read -r p; do
		npush=$((npush + 1))
		[[ $npush -gt $keep && $npush -le $upto ]] || continue
		awk -v p="$p" '$1 == p { for (i = 2; i <= NF; i++) print $i }' "$REPO/patches/new-files" |
			while read -r f; do rm -rf "${f:?}"; done
	done < <(series_list)
	log=$CACHE/quilt-push.log
	if [[ $upto -gt $keep ]] && ! quilt push "$(series_list | sed -n "${upto}p")" >"$log" 2>&1; then
		failed=$(grep -o 'Applying patch [^ ]*' "$log" | tail -n1 | sed 's/Applying patch //' || true)
		hunk=$(awk '/^patching file/ { f = $3 }
			/FAILED|malformed|can.t find file/ { print (f ? f ": " : "") $0; exit }' "$log")
		quilt pop -afq >/dev/null 2>&1 || true
		die "patch ${failed:-?} does not apply: ${hunk:-see $log} (tree left unpatched, log $log${KSRC:+; a KSRC that has the series already must be a git tree, whose history is checked for it})"
	fi
	mapfile -t applied < <(cat .pc/applied-patches 2>/dev/null || true)
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
# The patches carry the files they add; the plain files here are what is
# edited.  One edited without scripts/export-series.sh -u still reaches
# the build, with a warning (CI's export check fails on it).
[[ $upto -lt $npatch ]] || install_new_files . | while read -r f; do
	progress "warning: $f differs from its patch (scripts/export-series.sh -u writes it in)"
done
partial=
[[ $upto -eq $npatch ]] || partial=" (first $upto of $npatch patches applied)"
printf '%s\nseries %s%s\n' "$base" "$series_hash" "$partial" >.schedseries-base
