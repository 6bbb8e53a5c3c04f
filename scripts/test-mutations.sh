#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Show that the behaviour tests can fail: build the kernel with every flag
# neutered (each sched_feat() test of the four flags replaced by the
# flag's default, so toggling it changes nothing), boot the guests and
# expect each behaviour test to FAIL while the features test still passes.
# The tree and kernels are restored afterwards, also on error.
#
# Usage: scripts/test-mutations.sh [-h] [-o RESULTS] [GUEST...]
#
#   GUEST       guests to boot (default: arm64-juno x86_64-numa)
#   -o RESULTS  results directory (default results/mutations-YYYYmmdd-HHMMSS)
#
# Then a second mutant for the one assertion the first cannot reach, the
# eevdf_ineligible latency check: the flags are restored, and with
# RESCHED_INELIGIBLE on place_entity() pushes a waking task 8 slices of
# virtual time back, so that it sits out several hogs' slices on every
# wakeup.  On the last GUEST of the list only eevdf_ineligible runs; its
# latency case must fail, and the flag-off counter case, which the mutant
# does not reach, must pass.  The flag-on counter case is not judged: the
# waker, queued far right, drags the average vruntime along, and in 1 of
# 6 runs (and in a kernel with the features mutant too) the hogs then
# never became ineligible: tick +0, wakeup +0.  Last, a
# features mutant on the same guest, one fault per assertion of the
# features test: RESCHED_INELIGIBLE defaults to on; sched_feat_set()
# accepts unknown names, ignores writes of MISFIT and NO_MISFIT, of
# NO_SIS_ASYM_PREV and of RESCHED_INELIGIBLE, and flips SIS_ASYM_PREV on
# every LB_CLASSIFY write; and sched_feat_write() truncates to 63 bytes
# again (patch 0002 undone).  features.defaults and last_toggles, the
# four toggle cases, bad_write.unknown and the three 4 KiB bad_write cases
# must fail.  Last, not a fault: a kernel with 40 features (seven more,
# false) must pass the features test, list 40 and toggle the 40th.
#
# Prints TAP: one case per guest and test, "ok" when the outcome is the
# expected one (FAIL for misfit, asym_prev, lb_classify, eevdf_ineligible;
# PASS for features), one for eevdf_ineligible's mechanism case on the last
# guest (cut.ineligible_current_at_tick must fail by itself), then, when an x86_64 guest is in the list, one case
# per test on the unpatched base kernel (lib.sh's base_kernel, shared
# with the bench), which must SKIP, then the two cases of the latency
# mutant, the ten of the features mutant and the four of the 40-feature
# kernel.  When the last GUEST is an x86_64 one, last of all the cost
# mutant: update_curr() spins 64 times on every call, and the cost gate
# of bench/bench.sh -q -e cost (patched at defaults against the base,
# on the instruction-counted guest) must fail on the pipe round trip.
# The plan line comes last.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '3,46s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
res=
while getopts ho: opt; do
	case $opt in
	h) usage 0 ;;
	o) res=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
guests=("$@")
[[ ${#guests[@]} -gt 0 ]] || guests=(arm64-juno x86_64-numa)
res=${res:-$REPO/results/mutations-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$res"

"$REPO/scripts/prepare-tree.sh" >/dev/null
tree=$(tree_dir)
tests="features misfit asym_prev lb_classify eevdf_ineligible"
# The unpatched base first, while the tree is still untouched.
xg=
for g in "${guests[@]}"; do
	[[ $(guest_arch "$g") == x86_64 ]] && xg=$g
done
[[ -n $xg ]] && base_image=$(base_kernel)
fair=$tree/kernel/sched/fair.c
backup=$res/fair.c.orig
cp -p "$fair" "$backup"
dbg=$tree/kernel/sched/debug.c
feats=$tree/kernel/sched/features.h
cp -p "$dbg" "$res/debug.c.orig"
cp -p "$feats" "$res/features.h.orig"

archs=()
for g in "${guests[@]}"; do
	a=$(guest_arch "$g")
	[[ " ${archs[*]} " == *" $a "* ]] || archs+=("$a")
done

# restore_sources: the three mutated files as the series has them.
restore_sources() {
	cp "$backup" "$fair"
	cp "$res/debug.c.orig" "$dbg"
	cp "$res/features.h.orig" "$feats"
	touch "$fair" "$dbg" "$feats"
}
restore() {
	restore_sources
	for a in "${archs[@]}"; do
		"$REPO/scripts/build-kernel.sh" "$a" >/dev/null 2>&1 ||
			echo "# warning: rebuilding the $a kernel after the mutation failed" >&2
	done
}
trap restore EXIT

declare -A default=([MISFIT]=1 [LB_CLASSIFY]=1 [SIS_ASYM_PREV]=1 [RESCHED_INELIGIBLE]=0)
for f in "${!default[@]}"; do
	n=$(grep -c "sched_feat($f)" "$fair" || true)
	[[ $n -gt 0 ]] || die "no sched_feat($f) in $fair to mutate"
	sed -i "s/sched_feat($f)/${default[$f]}/g" "$fair"
	progress "neutered $n sched_feat($f) tests"
done

echo "TAP version 13"
n=0 nfail=0
declare -A kernel initrd
for a in "${archs[@]}"; do
	kernel[$a]=$("$REPO/scripts/build-kernel.sh" "$a" | tail -n1)
	groot=$("$REPO/scripts/kselftest-tarball.sh" -g -o "$res" "$a" | tail -n1)
	initrd[$a]=$CACHE/initramfs-$a.cpio.gz
	"$REPO/scripts/mk-initramfs.sh" "$a" "${initrd[$a]}" "$groot" >/dev/null
done
# result TAP CASE: "ok", "not ok" or "absent", CASE's result in a
# kselftest TAP file.
result() {
	local r
	r=$(grep -m1 -E "^(not )?ok [0-9]+ $2\$" "$1" 2>/dev/null | sed -E 's/ [0-9]+ .*//')
	echo "${r:-absent}"
}
# verdict DIR: the guest run's one-line verdict.
verdict() {
	cat "$1/verdict.txt" 2>/dev/null || echo "no verdict.txt in $1"
}
# boot DIR GUEST IMAGE TESTS: one guest run into DIR.
boot() {
	"$REPO/scripts/run-guest.sh" -T "$4" -o "$1" "$2" "$3" "${initrd[$(guest_arch "$2")]}" >/dev/null || true
}
# The neutered boots and the base's boot do not depend on each other: two
# at a time (each a single-threaded TCG guest, a host CPU each).  The
# images are copied first: the mutants below rebuild the same files.
imgs=$res/images
mkdir -p "$imgs"
bdir=() bguest=() bimg=()
for g in "${guests[@]}"; do
	a=$(guest_arch "$g")
	[[ -f $imgs/$a ]] || cp "${kernel[$a]}" "$imgs/$a"
	bdir+=("$res/$g") bguest+=("$g") bimg+=("$imgs/$a")
done
[[ -z $xg ]] || { bdir+=("$res/$xg-base") bguest+=("$xg") bimg+=("$base_image"); }
for i in "${!bdir[@]}"; do
	wait_slot 2
	boot "${bdir[i]}" "${bguest[i]}" "${bimg[i]}" "$tests" &
done
wait
for g in "${guests[@]}"; do
	for t in $tests; do
		n=$((n + 1))
		rc=$(cat "$res/$g/$t.rc" 2>/dev/null || echo missing)
		case $t:$rc in
		features:0)
			echo "ok $n $g $t: rc=$rc as expected" ;;
		*:4)
			echo "ok $n $g $t # SKIP not applicable on this guest" ;;
		features:*)
			echo "not ok $n $g $t: rc=$rc, features must still pass; $(verdict "$res/$g")"; nfail=$((nfail + 1)) ;;
		*:0)
			echo "not ok $n $g $t: passed with the flag neutered"; nfail=$((nfail + 1)) ;;
		*:missing | *:124)
			echo "not ok $n $g $t: rc=$rc, did not run to the end; $(verdict "$res/$g")"; nfail=$((nfail + 1)) ;;
		*)
			echo "ok $n $g $t: failed (rc=$rc) with the flag neutered: $(grep -m1 '^not ok' "$res/$g/$t.tap" | cut -c1-80)" ;;
		esac
	done
done
# The mechanism case of eevdf_ineligible on its own: on the last guest the
# neutered flag must leave the ineligible current its whole slice.
g=${guests[-1]}
n=$((n + 1))
r=$(result "$res/$g/eevdf_ineligible.tap" cut.ineligible_current_at_tick)
if [[ $r == "not ok" ]]; then
	echo "ok $n $g eevdf_ineligible cut.ineligible_current_at_tick: not ok with the flag neutered: $(grep -m1 'runs cut short' "$res/$g/eevdf_ineligible.tap" | sed 's/.*tick://')"
else
	echo "not ok $n $g eevdf_ineligible cut.ineligible_current_at_tick: $r, want not ok; $(verdict "$res/$g")"
	nfail=$((nfail + 1))
fi
# The unpatched base on the (last) x86_64 guest: every test must SKIP.
if [[ -n $xg ]]; then
	for t in $tests; do
		n=$((n + 1))
		rc=$(cat "$res/$xg-base/$t.rc" 2>/dev/null || echo missing)
		if [[ $rc == 4 ]]; then
			echo "ok $n $xg unpatched base: $t skipped: $(grep -m1 -o 'SKIP.*' "$res/$xg-base/$t.tap" | cut -c1-70)"
		else
			echo "not ok $n $xg unpatched base: $t rc=$rc, must SKIP without the series; $(verdict "$res/$xg-base")"; nfail=$((nfail + 1))
		fi
	done
fi
# mutant NAME TEST WHAT WANT:CASE...: boot the last guest with only TEST
# into $res/$g-NAME and print one TAP line per CASE, "ok" when its result
# is WANT ("ok" or "not ok"), else with the result and the run's verdict.
mutant() {
	local t=$2 what=$3 dir=$res/$g-$1 c r
	shift 3
	boot "$dir" "$g" "${kernel[$a]}" "$t"
	for c in "$@"; do
		n=$((n + 1))
		r=$(result "$dir/$t.tap" "${c#*:}")
		if [[ $r == "${c%%:*}" ]]; then
			echo "ok $n $g $what: ${c#*:} $r as expected"
		else
			echo "not ok $n $g $what: ${c#*:} $r, want ${c%%:*}; $(verdict "$dir")"; nfail=$((nfail + 1))
		fi
	done
}

# The latency mutant.
g=${guests[-1]}
a=$(guest_arch "$g")
cp "$backup" "$fair"
anchor='se->vruntime = vruntime - lag;'
[[ $(grep -cF "$anchor" "$fair") -eq 1 ]] || die "no single '$anchor' in $fair to mutate"
sed -i "s/se->vruntime = vruntime - lag;/se->vruntime = vruntime - lag + (sched_feat(RESCHED_INELIGIBLE) \&\& (flags \& ENQUEUE_WAKEUP) ? 8 * vslice : 0);/" "$fair"
progress "RESCHED_INELIGIBLE now delays every waking task by 8 slices"
kernel[$a]=$("$REPO/scripts/build-kernel.sh" "$a" | tail -n1)
mutant latency eevdf_ineligible "latency mutant" \
	ok:ineligible.off_no_parity.counters "not ok:latency.worst_delay_parity"
grep -m1 'worst delay grew' "$res/$g-latency/eevdf_ineligible.tap" 2>/dev/null |
	sed 's/.*worst_delay_parity:/# /' || true

# The features mutant, see the head of this file.
cp "$backup" "$fair"
touch "$fair"
sed -i 's/^SCHED_FEAT(RESCHED_INELIGIBLE, false)/SCHED_FEAT(RESCHED_INELIGIBLE, true)/' "$feats"
grep -q '^SCHED_FEAT(RESCHED_INELIGIBLE, true)' "$feats" || die "cannot flip the RESCHED_INELIGIBLE default in $feats"
# mutate_dbg WHAT PERL: one perl -0 substitution of debug.c that must hit.
mutate_dbg() {
	cp -p "$dbg" "$res/debug.c.prev"
	perl -0pi -e "$2" "$dbg"
	cmp -s "$dbg" "$res/debug.c.prev" && die "cannot $1 in $dbg"
	rm -f "$res/debug.c.prev"
}
# shellcheck disable=SC2016 # $1 is perl's
mutate_dbg "accept unknown names" \
	's/(__SCHED_FEAT_NR, cmp\);\n\tif \(i < 0\)\n\t\treturn) i;/$1 0;/'
# shellcheck disable=SC2016
mutate_dbg "ignore or cross-wire flag writes" \
	's/\n(\tif \(neg\) \{\n\t\tWRITE_ONCE\(sysctl_sched_features,)/
	if (i == __SCHED_FEAT_MISFIT ||
	    (i == __SCHED_FEAT_SIS_ASYM_PREV && neg) ||
	    (i == __SCHED_FEAT_RESCHED_INELIGIBLE && !neg))
		return 0;
	if (i == __SCHED_FEAT_LB_CLASSIFY)
		sysctl_sched_features ^= BIT_ULL(__SCHED_FEAT_SIS_ASYM_PREV);
\n$1/'
mutate_dbg "undo the length check of patch 0002" \
	's/\tif \(cnt >= sizeof\(buf\)\)\n\t\treturn -EINVAL;/\tif (cnt > 63)\n\t\tcnt = 63;/'
progress "features: RESCHED_INELIGIBLE on by default, flag writes ignored or cross-wired, unknown and long writes accepted"
kernel[$a]=$("$REPO/scripts/build-kernel.sh" "$a" | tail -n1)
checks=("not ok:features.defaults" "not ok:features.last_toggles")
for f in misfit lb_classify sis_asym_prev resched_ineligible; do
	checks+=("not ok:toggle.$f.set_and_read_back")
done
for w in unknown page_of_junk page_valid_prefix page_valid_then_blanks; do
	checks+=("not ok:bad_write.$w.einval_and_unchanged")
done
mutant features features "features mutant" "${checks[@]}"

# The wide kernel: not a fault but the acceptance of patch 0001's 64-bit
# feature word.  Seven false features after the series' four make 40; the
# features test must pass, list all 40 and toggle the 40th (bit 39).
restore_sources
for i in 1 2 3 4 5 6 7; do
	printf '\nSCHED_FEAT(SCHEDSERIES_PAD_%d, false)\n' "$i" >>"$feats"
done
progress "features: 40, the last one SCHEDSERIES_PAD_7"
kernel[$a]=$("$REPO/scripts/build-kernel.sh" "$a" | tail -n1)
mutant wide features "40 features" ok:features.defaults ok:features.last_toggles \
	ok:toggle.resched_ineligible.set_and_read_back
n=$((n + 1))
if grep -q '40 features, last SCHEDSERIES_PAD_7$' "$res/$g-wide/features.tap" 2>/dev/null; then
	echo "ok $n $g 40 features: the file lists 40, the last SCHEDSERIES_PAD_7"
else
	echo "not ok $n $g 40 features: no '40 features, last SCHEDSERIES_PAD_7' in $res/$g-wide/features.tap; $(verdict "$res/$g-wide")"
	nfail=$((nfail + 1))
fi

# The cost mutant: work added to a hot path at the defaults, a loop in
# update_curr().  The quick cost run (bench/bench.sh -q -e cost, one
# boot each of this kernel and the base on the instruction-counted guest)
# must fail its gate, and on the pipe round trip at least.
if [[ $a == x86_64 ]]; then
	restore_sources
	anchor='static void update_curr(struct cfs_rq *cfs_rq)'
	[[ $(grep -cxF "$anchor" "$fair") -eq 1 ]] || die "no single '$anchor' in $fair to mutate"
	perl -0pi -e 's/(\nstatic void update_curr\(struct cfs_rq \*cfs_rq\)\n\{\n)/$1\tfor (int schedseries_i = 0; schedseries_i < 64; schedseries_i++)\n\t\tbarrier();\n/' "$fair"
	grep -q 'schedseries_i < 64' "$fair" || die "cannot add the loop to update_curr() in $fair"
	progress "cost: update_curr() now spins 64 times on every call"
	"$REPO/scripts/build-kernel.sh" x86_64 >/dev/null
	n=$((n + 1))
	rc=0
	# bench.sh takes only a new or empty results directory.
	rm -rf "$res/cost-mutant"
	"$REPO/bench/bench.sh" -q -e cost -o "$res/cost-mutant" >"$res/cost-mutant.log" 2>&1 || rc=$?
	gate=$(grep -h ' FAIL$' "$res/cost-mutant/cost-gate.txt" 2>/dev/null | tr '\n' ';' || true)
	if [[ $rc -ne 0 && $gate == *pipe_ns_per_op*FAIL* ]]; then
		echo "ok $n $a cost mutant: the cost gate failed: $gate"
	else
		echo "not ok $n $a cost mutant: bench.sh rc=$rc, gate: ${gate:-$(cat "$res/cost-mutant/cost-gate.txt" 2>/dev/null || echo 'no cost-gate.txt')}, see $res/cost-mutant.log"
		nfail=$((nfail + 1))
	fi
fi

echo "1..$n"
echo "# $((n - nfail)) as expected, $nfail not"
[[ $nfail -eq 0 ]]
