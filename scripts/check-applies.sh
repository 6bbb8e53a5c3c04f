#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Does the series still apply, and build, on newer kernels?
#
# Usage: scripts/check-applies.sh [-h] [-b] [-s SUITE]... [-p PKG=SUITE]...
#
#   -s SUITE      try the newest linux-source-X.Y of this Debian suite
#                 (repeatable; default: sid experimental trixie-backports)
#   -p PKG=SUITE  try exactly this package, e.g. linux-source-7.2=sid
#                 (repeatable; with -p, -s adds suites, else none is tried)
#   -b            build an x86_64 kernel (tinyconfig + configs/) of every
#                 tree on which the whole series applied
#
# KSRC=/path adds that kernel tree (copied, never written to).  Each tree
# gets the series with patch(1), patch by patch, and every patch is
# reported as it applied: "clean" (no offset, no fuzz), "offset", "fuzz"
# (applies only with fuzz, as quilt at fuzz 0 would refuse), or "REJECT".
# A patch that rejects does not stop the later ones from being tried.
# The report is results/applies-<stamp>/report.txt; the last line counts
# the trees on which the series applied at fuzz 0 (and built, with -b).
# Packages are fetched as scripts/prepare-tree.sh fetches the base, with a
# private apt configuration under the cache.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,23s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
build=0
suites=()
pkgs=()
while getopts hbs:p: opt; do
	case $opt in
	h) usage 0 ;;
	b) build=1 ;;
	s) suites+=("$OPTARG") ;;
	p) [[ $OPTARG == linux-source-*=* ]] || die "-p takes PKG=SUITE, e.g. linux-source-7.2=sid"
	   pkgs+=("$OPTARG") ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 0 ]] || usage 2
[[ ${#suites[@]} -gt 0 || ${#pkgs[@]} -gt 0 ]] || suites=(sid experimental trixie-backports)
need_pkgs patch xz-utils

res=$REPO/results/applies-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$res"
report=$res/report.txt
progress "report in $report"

# newest_source SUITE: the linux-source-X.Y package of SUITE with the
# highest X.Y, from the suite's private package lists.
newest_source() {
	apt_suite "$1"
	{ apt-cache "${APT_OPT[@]}" pkgnames linux-source- || true; } |
		grep -E '^linux-source-[0-9][0-9.]*$' | sort -u -V | tail -n1 || true
}

targets=()
for s in "${suites[@]}"; do
	p=$(newest_source "$s")
	if [[ -z $p ]]; then
		echo "$s: no linux-source-X.Y package" | tee -a "$report"
		continue
	fi
	targets+=("$p=$s")
done
targets+=("${pkgs[@]}")
[[ -n ${KSRC:-} ]] && targets+=("KSRC=$KSRC")
[[ ${#targets[@]} -gt 0 ]] || die "nothing to try"

ok=0 tried=0
for t in "${targets[@]}"; do
	what=${t%%=*} where=${t#*=}
	tried=$((tried + 1))
	# Each tree is unpacked where tree_dir puts a KSRC tree, so that
	# build-kernel.sh builds it into its own out directory.
	if [[ $what == KSRC ]]; then
		src=$(realpath "$where")
		[[ -f $src/kernel/sched/fair.c ]] || die "KSRC=$where is not a kernel tree"
		label="KSRC $src ($(git -C "$src" describe --always --dirty 2>/dev/null || echo no git))"
		# Not KSRC's own path: that names prepare-tree.sh's checkout.
		name=$CACHE/applies/ksrc$src
	else
		got=$(fetch_source_pkg "$what" "$where")
		label="$what ${got#* } ($where)"
		name=$CACHE/applies/$what
	fi
	tree=$(KSRC=$name tree_dir)
	progress "$label: unpacking into $tree"
	rm -rf "$tree" "$tree.out"
	mkdir -p "$tree"
	if [[ $what == KSRC ]]; then
		(cd "$src" && tar --exclude=.git --exclude=.pc --exclude=./patches -cf - .) | tar -C "$tree" -xf -
	else
		tar -C "$tree" --strip-components=1 -xf "${got%% *}"
	fi
	label="$label, $(make -s -C "$tree" kernelversion)"
	echo "== $label" >>"$report"
	rejects=0 fuzz=0
	while read -r p; do
		log=$res/$(basename "$tree")-$p.log
		if (cd "$tree" && patch -p1 -F3 --no-backup-if-mismatch -r - <"$REPO/patches/$p") >"$log" 2>&1; then
			if grep -q 'with fuzz' "$log"; then
				how=fuzz fuzz=$((fuzz + 1))
			elif grep -q 'offset' "$log"; then
				how=offset
			else
				how=clean
			fi
		else
			how=REJECT rejects=$((rejects + 1))
		fi
		printf '%-7s %s\n' "$how" "$p" | tee -a "$report"
		[[ $how == clean ]] || grep -E 'Hunk|FAILED' "$log" | sed 's/^/          /' >>"$report" || true
	done < <(series_list)
	verdict="applies"
	[[ $fuzz -eq 0 ]] || verdict="applies only with fuzz ($fuzz patches)"
	[[ $rejects -eq 0 ]] || verdict="does NOT apply ($rejects patches reject)"
	if [[ $rejects -eq 0 && $build -eq 1 ]]; then
		install_new_files "$tree" >/dev/null
		if KSRC=$name "$REPO/scripts/build-kernel.sh" x86_64 >"$res/$(basename "$tree")-build.log" 2>&1; then
			verdict="$verdict, builds (x86_64)"
		else
			verdict="$verdict, does NOT build (x86_64): $(grep -m1 -E 'error' "$res/$(basename "$tree")-build.log" || echo see log)"
			rejects=1
		fi
	fi
	[[ $rejects -eq 0 && $fuzz -eq 0 ]] && ok=$((ok + 1))
	echo "=> $verdict" | tee -a "$report"
done
echo "$ok of $tried trees: the series applies at fuzz 0$([[ $build -eq 1 ]] && echo " and builds")" | tee -a "$report"
