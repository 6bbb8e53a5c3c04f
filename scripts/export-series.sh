#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Export the series as git-am-able patches with a cover letter.
#
# Usage: scripts/export-series.sh [-h] [-u | -c] [OUTDIR]
#
#   OUTDIR   where the patches go (default: export/ in the repository)
#   -u       write the patches back into patches/ instead (no cover
#            letter): the files of patches/new-files, edited as plain
#            files in this repository, go into their patch, so that
#            `quilt push -a` of patches/ alone gives the whole tree
#   -c       check that patches/ is what -u would write, and fail naming
#            each patch that differs (a plain file edited without -u)
#
# SIGNOFF="Name <mail>" makes that person the author of every patch and
# adds their Signed-off-by: the patches in patches/ carry none, since only
# a person can certify the Developer's Certificate of Origin, and whoever
# sends the series upstream signs it off.  Without SIGNOFF the export says
# that its patches must not be sent as they are.
#
# The tree is prepared first.  The original of every file the series
# touches is taken from quilt's backups, committed into a scratch git
# repository, and each patch is applied there with git am; the files listed
# in patches/new-files are added to their patch's commit.  git format-patch
# then writes OUTDIR with patches/cover-letter.txt as the cover letter, and
# the result is checked by applying it with git am to a second scratch copy
# of the originals.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,30s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
mode="export"
while getopts huc opt; do
	case $opt in
	h) usage 0 ;;
	u) mode=update ;;
	c) mode=check ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -le 1 ]] || usage 2
[[ $mode == export || $# -eq 0 ]] || usage 2
outdir=$(realpath -m "${1:-$REPO/export}")
signoff=()
author=()
if [[ -n ${SIGNOFF:-} && $mode == export ]]; then
	[[ $SIGNOFF =~ ^([^\<\>]*[^\<\>\ ])\ \<([^\<\>@\ ]+@[^\<\>\ ]+)\>$ ]] ||
		die "SIGNOFF='$SIGNOFF' is not of the form 'Name <mail@host>'"
	signoff=(--signoff)
	author=(--author="$SIGNOFF")
	export GIT_COMMITTER_NAME=${BASH_REMATCH[1]} GIT_COMMITTER_EMAIL=${BASH_REMATCH[2]}
fi
need_pkgs git quilt

"$REPO/scripts/prepare-tree.sh" >/dev/null
tree=$(tree_dir)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Originals: the earliest quilt backup of each file.  A backup of size
# zero stands for a file the series creates.
mkdir -p "$work/orig"
mapfile -t patches < <(series_list)
for p in "${patches[@]}"; do
	[[ -d $tree/.pc/$p ]] || die "patch $p is not applied in $tree"
	(cd "$tree/.pc/$p" && find . -type f ! -name .timestamp -printf '%P\n') |
	while read -r f; do
		[[ -e $work/orig/$f || -e $work/orig/.new/$f ]] && continue
		if [[ -s $tree/.pc/$p/$f ]]; then
			install -D -m644 "$tree/.pc/$p/$f" "$work/orig/$f"
		else
			install -D -m644 /dev/null "$work/orig/.new/$f"
		fi
	done
done
rm -rf "$work/orig/.new"

g() { git -C "$1" -c user.name="Sched Series Team" -c user.email=sched-series@example.org "${@:2}"; }
mkrepo() {
	cp -a "$work/orig" "$1"
	g "$1" init -q
	g "$1" add -A
	g "$1" commit -qm base
}

mkrepo "$work/a"
for p in "${patches[@]}"; do
	g "$work/a" am -q --keep-cr "$REPO/patches/$p" ||
		die "git am failed on $p"
	mapfile -t extra < <(awk -v p="$p" '$1 == p { for (i = 2; i <= NF; i++) print $i }' \
		"$REPO/patches/new-files")
	if [[ ${#extra[@]} -gt 0 ]]; then
		for f in "${extra[@]}"; do
			[[ -e $REPO/$f ]] || die "patches/new-files names missing $f"
			mkdir -p "$work/a/$(dirname "$f")"
			cp -a "$REPO/$f" "$work/a/$(dirname "$f")/"
		done
		g "$work/a" add -A -f
	fi
	g "$work/a" commit -q --amend --no-edit --allow-empty ${author[@]+"${author[@]}"}
done

# -u and -c: the series as patches/ should hold it.
if [[ $mode != export ]]; then
	g "$work/a" format-patch -q --no-signature --zero-commit -o "$work/fp" HEAD~${#patches[@]}
	bad=()
	for p in "${patches[@]}"; do
		[[ -f $work/fp/$p ]] || die "format-patch named a patch otherwise than $p (its subject changed?)"
		cmp -s "$work/fp/$p" "$REPO/patches/$p" && continue
		bad+=("$p")
		[[ $mode == update ]] && cp "$work/fp/$p" "$REPO/patches/$p"
	done
	if [[ $mode == update ]]; then
		progress "patches/: ${#bad[@]} of ${#patches[@]} patches written again${bad[*]:+: ${bad[*]}}"
	elif [[ ${#bad[@]} -gt 0 ]]; then
		for p in "${bad[@]}"; do
			diff -u "$REPO/patches/$p" "$work/fp/$p" | head -n 20 || true
		done
		die "patches/ is not what the plain files make (run scripts/export-series.sh -u): ${bad[*]}"
	else
		progress "patches/ holds every file of patches/new-files as it is here (${#patches[@]} patches)"
	fi
	exit 0
fi

rm -rf "$outdir"
mkdir -p "$outdir"
g "$work/a" format-patch -q --cover-letter --no-signature --zero-commit \
	${signoff[@]+"${signoff[@]}"} -o "$outdir" HEAD~${#patches[@]}
cover=$(find "$outdir" -name '0000-*.patch')
if [[ -f $REPO/patches/cover-letter.txt ]]; then
	subject=$(head -n1 "$REPO/patches/cover-letter.txt")
	body=$(tail -n +3 "$REPO/patches/cover-letter.txt")
	SUBJECT=$subject BODY=$body perl -0pi -e \
		's/\*\*\* SUBJECT HERE \*\*\*/$ENV{SUBJECT}/; s/\*\*\* BLURB HERE \*\*\*/$ENV{BODY}/' "$cover"
fi

mkrepo "$work/b"
mapfile -t out < <(find "$outdir" -name '*.patch' ! -name '0000-*' | sort)
g "$work/b" am -q "${out[@]}" || die "exported series does not apply with git am"
progress "exported ${#patches[@]} patches and a cover letter to $outdir (git am checked${SIGNOFF:+, signed off by $SIGNOFF})"
[[ -n ${SIGNOFF:-} ]] ||
	echo "warning: these patches carry no person's Signed-off-by and must not be sent as they are;" \
		"export them with SIGNOFF=\"Your Name <you@example.org>\"" >&2
