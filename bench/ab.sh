#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B any scheduler feature around any command: setting A is the kernel's
# defaults, setting B the same with FEATURES written, alternated in one
# boot; then a verdict per figure.
#
# Usage: bench/ab.sh [-h] -f FEATURES [-g GUEST] [-r REPS] [-S SEEDS]
#                    [-t SECS] [-b DIR] [-o RESULTS] CMD [ARG...]
#
#   -f FEATURES  what makes B, as the features file takes it, blank
#                separated: "NO_RUN_TO_PARITY", "RESCHED_INELIGIBLE
#                NO_LB_CLASSIFY"; any feature the booted kernel lists
#   CMD ARG...   the workload, run in the guest with sh -c (so quote
#                what the guest's shell must see); its program comes
#                from the Debian tool root (scripts/mk-rootfs.sh:
#                hackbench, cyclictest, perf, sysbench, stress-ng,
#                rt-app), from bench/schedbench.c (schedbench, always
#                there) or from -b
#   -g GUEST     guests/GUEST.conf (default x86_64-icount)
#   -r REPS      rounds per boot, after one warm-up run at A (default 4):
#                A B, then B A, ...
#   -S SEEDS     QEMU seeds, comma separated, one boot each (default
#                1,2,3,4 on an instruction-counted guest, 1 on others).
#                On an instruction-counted guest (QEMU_ICOUNT in its
#                conf) the boots are deterministic (scripts/run-guest.sh
#                -D): a repeated seed must give the same raw.txt (lib.sh's
#                kv_same), and the script fails when it does not; another
#                seed is an independent sample
#   -t SECS      timeout of one run in the guest (default 300)
#   -b DIR       your own static programs: DIR's files go into the guest
#                (first in PATH)
#   -o RESULTS   results directory (default results/ab-YYYYmmdd-HHMMSS)
#
# The kernel is the guest architecture's test kernel
# (scripts/build-kernel.sh), so the series' features and upstream's are
# both there.  Each boot runs bench/guest/ab.sh (see there for what is
# measured: wall time, exit code, context switches and migrations, the
# figures the known tools print, any "key=number" line, every feat_stats
# counter's change).  RESULTS/boot-N/ has the boot's console.log, raw.txt
# and logs/; RESULTS/summary.md and RESULTS/*.png are the report
# (bench/ab-report.sh), which ends with one "ab: FIGURE ..." line per
# figure.  An unknown feature, a command the guest lacks, or a run that
# fails or times out stops the boot with one "ab: FAIL" line; the runs so
# far are kept and reported.  Exits 1 when a boot failed or boots with the
# same seed differ.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
# shellcheck source=../scripts/guest-lib.sh
. "$(dirname "$0")/../scripts/guest-lib.sh"

usage() {
	sed -n '3,/^# same seed differ\./s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
feats=
guest=x86_64-icount
reps=4
seeds=
tmo=300
bin=
res=
while getopts hf:g:r:S:t:b:o: opt; do
	case $opt in
	h) usage 0 ;;
	f) feats=$OPTARG ;;
	g) guest=$OPTARG ;;
	r) reps=$OPTARG ;;
	S) seeds=$OPTARG ;;
	t) tmo=$OPTARG ;;
	b) bin=$OPTARG ;;
	o) res=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -ge 1 ]] || die "no command: bench/ab.sh -f FEATURES CMD [ARG...] (-h for help)"
cmd="$*"
[[ $cmd =~ [^[:space:]] ]] || die "empty command: bench/ab.sh -f FEATURES CMD [ARG...] (make ab: CMD=\"...\")"
[[ -n ${feats// /} ]] || die "no -f FEATURES: name what setting B writes, e.g. -f NO_RUN_TO_PARITY"
for f in $feats; do
	[[ $f =~ ^[A-Z][A-Z0-9_]*$ ]] || die "bad feature '$f' (names as the features file lists them, e.g. NO_RUN_TO_PARITY)"
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "bad -r '$reps' (a number > 0)"
[[ $tmo =~ ^[1-9][0-9]*$ ]] || die "bad -t '$tmo' (seconds > 0)"
[[ -f $REPO/guests/$guest.conf ]] || die "unknown guest '$guest' (see guests/*.conf)"
[[ -z $bin || -d $bin ]] || die "bad -b '$bin': no such directory"
arch=$(guest_arch "$guest")
det=0
grep -q '^QEMU_ICOUNT=' "$REPO/guests/$guest.conf" && det=1
[[ -n $seeds ]] || { seeds=1; [[ $det -eq 1 ]] && seeds=1,2,3,4; }
[[ $seeds =~ ^[0-9]+(,[0-9]+)*$ ]] || die "bad -S '$seeds' (numbers, comma separated)"
IFS=, read -ra seedv <<<"$seeds"

res=${res:-$REPO/results/ab-$(date +%Y%m%d-%H%M%S)}
# Old boots in RESULTS would be pooled into the report.
[[ ! -e $res || -z $(ls -A "$res") ]] || die "-o '$res' is not empty: give a new directory"
mkdir -p "$res"
res=$(realpath "$res")
progress "ab: B = $feats; '$cmd' on $guest, $reps rounds, seeds $seeds, results in $res"

need_pkgs qemu-system-x86 qemu-system-arm device-tree-compiler busybox-static cpio pax-utils \
	python3-pyelftools gnuplot-nox
"$REPO/scripts/prepare-tree.sh"
kernel=$("$REPO/scripts/build-kernel.sh" "$arch" | tee >(grep -v '^/' >&2) | tail -n1)
read -r rootfs initrd < <(tools_userland "$arch")
# schedbench (bench/schedbench.c) goes into every boot, beside -b's.
build_schedbench "$arch" "$res/schedbench"
{
	base_info
	echo "ab: guest $guest, deterministic=$det, seeds $seeds, $reps rounds, run timeout ${tmo}s"
	echo "ab: A = the kernel's defaults; B = A with: $feats"
	echo "ab: command: $cmd"
} >"$res/base.txt"

# With -D the programs come from RAM: each program the command starts
# (its first word, the first after ; | && || and after nice, taskset,
# chrt, env, timeout and their options) that is an ELF program of the
# tool root and not one of -b's.  Busybox has the shell's other commands.
ram=
if [[ $det -eq 1 ]]; then
	read -ra words <<<"$cmd"
	start=1
	for w in "${words[@]}"; do
		case $w in
		';' | '|' | '&&' | '||' | '&') start=1; continue ;;
		esac
		[[ $start -eq 1 ]] || continue
		case $w in
		nice | taskset | chrt | env | timeout | -* | [0-9]* | *=*) continue ;;
		esac
		start=0
		[[ $w =~ ^[A-Za-z][A-Za-z0-9_.+-]*$ ]] || continue
		[[ -n $bin && -e $bin/$w ]] && continue
		for d in usr/bin usr/sbin bin sbin; do
			f=$rootfs/$d/$w
			if [[ -x $f && ! -d $f && $(head -c4 "$f" | tr -d '\0') == $'\x7fELF' ]]; then
				ram+=${ram:+,}$w
				break
			fi
		done
	done
fi

failed=0
for i in "${!seedv[@]}"; do
	n=$((i + 1))
	dir=$res/boot-$n
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$REPO/bench/guest/ab.sh" "$dir/guest-ab.sh"
	cp "$res/schedbench" "$dir/"
	printf '%s\n' "$cmd" >"$dir/ab-cmd"
	printf '%s\n' "$feats" >"$dir/ab-features"
	[[ -z $bin ]] || find "$bin" -maxdepth 1 -type f -exec cp -p {} "$dir/" \;
	ropts=(-s "${seedv[i]}")
	if [[ $det -eq 1 ]]; then
		ropts+=(-D)
		[[ -z $ram ]] || ropts+=(-R "$ram")
	fi
	rc=0
	progress "ab boot $n of ${#seedv[@]} (QEMU seed ${seedv[i]})"
	"$REPO/scripts/run-guest.sh" -t $((240 + (2 * reps + 1) * tmo)) -T "" -r "$rootfs" -o "$dir" \
		"${ropts[@]}" -x "/results/guest-ab.sh,-r,$reps,-t,$tmo,-d,/results" \
		"$guest" "$kernel" "$initrd" >"$dir/run.out" 2>&1 || rc=$?
	tail -n1 "$dir/run.out"
	# A boot that did not finish: its runs from the console.
	if [[ ! -s $dir/raw.txt ]] && grep -q '^SCHEDSERIES-RAW ' "$dir/console.log" 2>/dev/null; then
		tr -d '\r' <"$dir/console.log" | sed -n 's/^SCHEDSERIES-RAW //p' >"$dir/raw.txt"
		progress "boot-$n: raw.txt recovered from the console ($(wc -l <"$dir/raw.txt") runs)"
	fi
	if [[ $rc -ne 0 ]]; then
		failed=$((failed + 1))
		why=$(tr -d '\r' <"$dir/cmd.out" 2>/dev/null | grep '^ab: FAIL' | tail -n1 || true)
		[[ -n $why ]] || why=$(tail -n1 "$dir/run.out")
		progress "boot-$n failed: $why"
		echo "$why" >"$dir/fail.txt"
		# Bad input, or a boot that never started, fails every boot
		# alike: stop at the first.
		[[ $why == *"unknown feature"* || $why == *"no command"* || $why == *"no writable"* ||
		   ! -s $dir/console.log ]] && break
	fi
done

# Boots with the same seed on a deterministic guest must agree.
if [[ $det -eq 1 ]]; then
	: >"$res/determinism.txt"
	for i in "${!seedv[@]}"; do
		for ((j = i + 1; j < ${#seedv[@]}; j++)); do
			[[ ${seedv[i]} == "${seedv[j]}" ]] || continue
			a=$res/boot-$((i + 1))/raw.txt b=$res/boot-$((j + 1))/raw.txt
			[[ -s $a && -s $b ]] || continue
			if line=$(kv_same "$a" "$b"); then
				echo "boot-$((i + 1)) and boot-$((j + 1)) (seed ${seedv[i]}): raw.txt $line" >>"$res/determinism.txt"
			else
				echo "boot-$((i + 1)) and boot-$((j + 1)) (seed ${seedv[i]}): raw.txt $line FAIL" >>"$res/determinism.txt"
				failed=$((failed + 1))
			fi
		done
	done
	[[ -s $res/determinism.txt ]] && sed 's/^/ab: /' "$res/determinism.txt"
fi

rfail=0
"$REPO/bench/ab-report.sh" "$res" || rfail=1
[[ $failed -eq 0 && $rfail -eq 0 ]] ||
	die "$failed boot(s) failed or disagreed$([[ $rfail -eq 0 ]] || echo ", and the report has no run"), see $res (logs in boot-N/)"
