#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B any scheduler feature around any command: setting A is the kernel's
# defaults, setting B the same with FEATURES written, alternated in one
# boot; or (-k) two kernels at their defaults, in alternating boots; then
# a verdict per figure.
#
# Usage: bench/ab.sh [-h] (-f FEATURES | -k KERNEL_B) [-g GUEST] [-r REPS]
#                    [-S SEEDS] [-V NAME=V1,V2...]... [-t SECS] [-b DIR]
#                    [-N] [-P] [-W] [-A ACCEL] [-o RESULTS] CMD [ARG...]
#
#   -f FEATURES  what makes B, as the features file takes it, blank
#                separated: "NO_RUN_TO_PARITY", "RESCHED_INELIGIBLE
#                NO_LB_CLASSIFY"; any feature the booted kernel lists
#   -k KERNEL_B  B is another kernel, at its defaults, and A the test
#                kernel at its defaults: "base" (the unpatched base,
#                built with the test kernel's configs; x86_64 guests), or
#                the path of a kernel image for the guest's architecture
#                (its boots skip the guest's debugfs topology check, so it
#                needs no CONFIG_DEBUG_FS).  Each seed boots both kernels,
#                A then B for the 1st, 3rd, ... seed, B then A for the
#                others; each boot makes REPS runs after a warm-up run
#   CMD ARG...   the workload, run in the guest with sh -c (so quote
#                what the guest's shell must see); its program comes
#                from the Debian tool root (scripts/mk-rootfs.sh:
#                hackbench, cyclictest, perf, sysbench, stress-ng,
#                rt-app), from bench/schedbench.c (schedbench, always
#                there), bench/guest/*-load.sh (the seeds' workloads:
#                misfit, lu, pipe, eevdf, and the cost run's; always
#                there) or from -b
#   -g GUEST     guests/GUEST.conf (default x86_64-icount)
#   -r REPS      rounds per boot, after one warm-up run at A (default 4):
#                A B, then B A, ...; with -k, runs per boot
#   -S SEEDS     QEMU seeds, comma separated, one boot each (two with
#                -k; default 1,2,3,4 on an instruction-counted guest, 1
#                on others).  On an instruction-counted guest (QEMU_ICOUNT
#                in its conf) the boots are deterministic
#                (scripts/run-guest.sh -D): a repeated seed (with -k, for
#                one kernel) must give the same raw.txt (lib.sh's
#                kv_same: byte for byte, or numbers within DET_TOL
#                percent, default 0.1), and the script fails when it does
#                not; another seed is an independent sample
#   -V NAME=V1,V2...  a variable of the command, one cell per value: the
#                command sees $NAME; with several -V, every combination
#                (the first -V outermost).  Each cell has its own warm-up,
#                rounds and verdicts; names are shell names, values
#                letters, digits and . _ : + -
#   -t SECS      timeout of one run in the guest (default 300)
#   -b DIR       your own static programs: DIR's files go into the guest
#                (first in PATH).  On an instruction-counted guest the
#                programs a command starts are loaded into RAM; a script
#                names the programs it starts in a "# ab-programs: P1 P2"
#                line
#   -N           on a guest with asymmetric capacity (EXPECT_CAPACITY),
#                do not slow the little vCPUs down on the host: by
#                default each vCPU's QEMU thread gets a host CPU weight
#                in the capacity ratio, and the threads run on 2 host
#                CPUs, so that busy vCPUs contend (scripts/guest-lib.sh,
#                throttle_littles: the cgroup v1 cpu controller's
#                cpu.shares, else cgroup v2's cpu.weight;
#                boot-N/throttle.txt says what was done;
#                THROTTLE_CGROUP=v1|v2 takes only that one,
#                THROTTLE_CG2=DIR a delegated v2 cgroup of yours,
#                THROTTLE_HOST_CPUS=N another number of host CPUs).  A
#                little is slower only while the vCPUs contend.  Where
#                the host has neither hierarchy, the run stops before
#                its first boot, saying why, unless -N.  Only under
#                multi-threaded TCG (-A), where every vCPU is a host
#                thread
#   -P           no perf stat -a around each run (bench/guest/ab.sh
#                -p): perf's hooks on every context switch are work the
#                figures of the instruction-counted guest would include
#   -W           no warm-up runs (quicker; the first runs of a boot then
#                count, paging in the programs)
#   -A ACCEL     QEMU's -accel for the boots (scripts/run-guest.sh -A).
#                Default: the conf's on an instruction-counted guest
#                (single-threaded), else tcg,thread=multi, every vCPU a
#                host thread of its own, as timing needs and the little
#                vCPUs' throttling requires, although the guests' confs
#                say tcg,thread=single for the tests: under
#                multi-threaded TCG a flag write can now and then go
#                unseen or oops an x86 guest
#                (Documentation/harness/notes/qemu-stale-branch.md)
#   -o RESULTS   results directory (default results/ab-YYYYmmdd-HHMMSS)
#
# Kernel A is the guest architecture's test kernel
# (scripts/build-kernel.sh; or the image in the environment's AB_KERNEL,
# already built, which bench/bench.sh passes), so the series' features
# and upstream's are both there.  Each boot runs bench/guest/ab.sh (see there for what is
# measured: wall time, exit code, context switches and migrations, the
# figures the known tools print, any "key=number" line, every feat_stats
# counter's change).  RESULTS/boot-N/ has the boot's console.log, raw.txt
# and logs/; RESULTS/summary.md and RESULTS/*.png are the report
# (bench/ab-report.sh), which ends with one "ab: FIGURE ..." line per
# figure ("ab: cell NAME=V,...: FIGURE ..." per cell with -V).  An
# unknown feature, a command the guest lacks, or a run that fails or
# times out stops the boot with one "ab: FAIL" line; the runs so far are
# kept and reported.  Exits 1 when a boot failed or boots with the
# same seed (and kernel) differ.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
# shellcheck source=../scripts/guest-lib.sh
. "$(dirname "$0")/../scripts/guest-lib.sh"

usage() {
	sed -n '3,/^# same seed (and kernel) differ\./s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
feats=
kb=
vars=()
guest=x86_64-icount
reps=4
seeds=
tmo=300
bin=
res=
accel=
throttle=1
noperf=0
warm=1
while getopts hf:k:g:r:S:V:t:b:NPWA:o: opt; do
	case $opt in
	h) usage 0 ;;
	f) feats=$OPTARG ;;
	k) kb=$OPTARG ;;
	g) guest=$OPTARG ;;
	r) reps=$OPTARG ;;
	S) seeds=$OPTARG ;;
	V) vars+=("$OPTARG") ;;
	t) tmo=$OPTARG ;;
	b) bin=$OPTARG ;;
	N) throttle=0 ;;
	P) noperf=1 ;;
	W) warm=0 ;;
	A) accel=$OPTARG ;;
	o) res=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -ge 1 ]] || die "no command: bench/ab.sh -f FEATURES|-k KERNEL_B CMD [ARG...] (-h for help)"
cmd="$*"
[[ $cmd =~ [^[:space:]] ]] || die "empty command: bench/ab.sh -f FEATURES|-k KERNEL_B CMD [ARG...] (make ab: CMD=\"...\")"
if [[ -n $kb ]]; then
	[[ -z ${feats// /} ]] || die "-f and -k do not go together: -k compares two kernels, each at its defaults"
else
	[[ -n ${feats// /} ]] || die "no -f FEATURES or -k KERNEL_B: name what setting B writes (e.g. -f NO_RUN_TO_PARITY) or the kernel that makes it"
fi
for f in $feats; do
	[[ $f =~ ^[A-Z][A-Z0-9_]*$ ]] || die "bad feature '$f' (names as the features file lists them, e.g. NO_RUN_TO_PARITY)"
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "bad -r '$reps' (a number > 0)"
# The cells: every combination of the -V values, one line of NAME=VALUE
# words each.
cells=("")
for v in "${vars[@]}"; do
	[[ $v =~ ^([A-Za-z_][A-Za-z0-9_]*)=([A-Za-z0-9_.:+-]+(,[A-Za-z0-9_.:+-]+)*)$ ]] ||
		die "bad -V '$v' (NAME=V1,V2,...: a shell name; values of letters, digits and . _ : + -)"
	name=${BASH_REMATCH[1]}
	IFS=, read -ra vals <<<"${BASH_REMATCH[2]}"
	[[ " ${names:-} " != *" $name "* ]] || die "bad -V '$v': $name is given twice"
	names="${names:-} $name"
	[[ $(printf '%s\n' "${vals[@]}" | sort | uniq -d) == "" ]] || die "bad -V '$v': a value is given twice"
	next=()
	for c in "${cells[@]}"; do
		for x in "${vals[@]}"; do
			next+=("${c:+$c }$name=$x")
		done
	done
	cells=("${next[@]}")
done
ncells=${#cells[@]}
[[ $tmo =~ ^[1-9][0-9]*$ ]] || die "bad -t '$tmo' (seconds > 0)"
[[ -f $REPO/guests/$guest.conf ]] || die "unknown guest '$guest' (see guests/*.conf)"
[[ -z $bin || -d $bin ]] || die "bad -b '$bin': no such directory"
arch=$(guest_arch "$guest")
if [[ -n $kb && $kb != base ]]; then
	[[ -f $kb ]] || die "bad -k '$kb': no such kernel image (or 'base' for the unpatched base)"
	kb=$(realpath "$kb")
	# An image of another architecture would only time out.
	ktype=$(file -b "$kb")
	case $arch in
	x86_64) [[ $ktype == *"x86 boot executable"* ]] ;;
	arm64) [[ $ktype == *"ARM64 boot executable"* ]] ;;
	*) true ;;
	esac || die "bad -k '$kb': not an $arch kernel image for $guest (file: $ktype)"
fi
[[ $kb != base || $arch == x86_64 ]] || die "-k base: the unpatched base kernel is built for x86_64 guests only; give the path of an $arch image"
det=0
grep -q '^QEMU_ICOUNT=' "$REPO/guests/$guest.conf" && det=1
qaccel=$accel
if [[ -z $qaccel ]]; then
	qaccel=tcg,thread=multi
	[[ $det -eq 0 ]] || qaccel=$(sed -n 's/^QEMU_ACCEL=//p' "$REPO/guests/$guest.conf")
fi
accel_check "$qaccel"
[[ $det -eq 0 || $qaccel == tcg,thread=single ]] || die "-A $qaccel: $guest counts instructions, which needs tcg,thread=single"
# A guest on another suite's QEMU (QEMU_SUITE): which one, for base.txt
# (base_info's host line names the host's).
read -r qsuite qsuite_v < <(guest_load "$guest" && guest_qemu && [[ -n $QEMU_SUITE ]] &&
	echo "$QEMU_SUITE $("$QEMU" --version | head -n1)") || true
# Only a capacity guest on multi-threaded TCG has littles to slow down.
{ [[ $qaccel == tcg,thread=multi ]] && guest_asym "$guest"; } || throttle=0
if [[ $throttle -eq 1 ]] && ! why=$(throttle_how); then
	die "cannot slow $guest's little vCPUs down on this host: $why (THROTTLE_CG2=DIR: a delegated cgroup v2 of yours; -N, AB_OPTS=-N or BENCH_OPTS=-N: run them at the bigs' speed)"
fi
[[ -n $seeds ]] || { seeds=1; [[ $det -eq 1 ]] && seeds=1,2,3,4; }
[[ $seeds =~ ^[0-9]+(,[0-9]+)*$ ]] || die "bad -S '$seeds' (numbers, comma separated)"
IFS=, read -ra seedv <<<"$seeds"

res=${res:-$REPO/results/ab-$(date +%Y%m%d-%H%M%S)}
# Old boots in RESULTS would be pooled into the report.
[[ ! -e $res || -z $(ls -A "$res") ]] || die "-o '$res' is not empty: give a new directory"
mkdir -p "$res"
res=$(realpath "$res")
if [[ -n $kb ]]; then
	progress "ab: B = kernel $kb; '$cmd' on $guest, $reps runs per boot, seeds $seeds, results in $res"
else
	progress "ab: B = $feats; '$cmd' on $guest, $reps rounds, seeds $seeds, results in $res"
fi

need_pkgs qemu-system-x86 qemu-system-arm device-tree-compiler busybox-static cpio pax-utils \
	python3-pyelftools gnuplot-nox python3-scipy socat jq
if [[ -n ${AB_KERNEL:-} ]]; then
	[[ -f $AB_KERNEL ]] || die "AB_KERNEL '$AB_KERNEL': no such kernel image"
	kernel=$AB_KERNEL
else
	"$REPO/scripts/prepare-tree.sh"
	kernel=$("$REPO/scripts/build-kernel.sh" "$arch" | tee >(grep -v '^/' >&2) | tail -n1)
fi
declare -A kimg=([A]=$kernel)
if [[ $kb == base ]]; then
	kimg[B]=$(base_kernel)
elif [[ -n $kb ]]; then
	kimg[B]=$kb
fi
read -r rootfs initrd < <(tools_userland "$arch")
# schedbench (bench/schedbench.c) goes into every boot, beside -b's.
build_schedbench "$arch" "$res/schedbench"
# So are the seeds' workloads (bench/guest/*-load.sh).
loads=()
for f in "$REPO"/bench/guest/*-load.sh; do
	install -m 755 "$f" "$res/"
	loads+=("$res/${f##*/}")
done
# kernel_desc IMAGE: the image's version string (or path) and sha256.
kernel_desc() {
	echo "$(file -b "$1" | grep -o 'version [^ ]* [^,]*' || echo "$1"), sha256 $(sha256sum "$1" | cut -c1-16)"
}
{
	# A research kernel (bench/research.sh) says its own base below.
	if [[ -f $kernel.info ]]; then
		base_info | grep -v '^base: \|^series: '
	else
		base_info
	fi
	if [[ -n $kb ]]; then
		echo "ab: guest $guest, accel $qaccel, deterministic=$det, seeds $seeds, two kernels, $reps runs per boot, run timeout ${tmo}s, throttle=$throttle, perf_stat=$((1 - noperf)), warm_up=$warm"
		[[ -z $qsuite ]] || echo "ab: guest's QEMU ($qsuite): $qsuite_v"
		echo "ab: A = kernel ${kimg[A]} at its defaults"
		echo "ab: B = kernel ${kimg[B]} at its defaults$([[ $kb != base ]] || echo " (the unpatched base)")"
		for k in A B; do
			echo "ab: kernel $k: $(kernel_desc "${kimg[$k]}")"
		done
	else
		echo "ab: guest $guest, accel $qaccel, deterministic=$det, seeds $seeds, $reps rounds, run timeout ${tmo}s, throttle=$throttle, perf_stat=$((1 - noperf)), warm_up=$warm"
		[[ -z $qsuite ]] || echo "ab: guest's QEMU ($qsuite): $qsuite_v"
		echo "ab: A = the kernel's defaults; B = A with: $feats"
		if [[ -n ${AB_KERNEL:-} ]]; then
			echo "ab: kernel: $(kernel_desc "$kernel")"
			# bench/research.sh says what a research kernel is.
			[[ ! -f $kernel.info ]] || sed 's/^/ab: /' "$kernel.info"
		fi
	fi
	echo "ab: command: $cmd"
	[[ ${#vars[@]} -eq 0 ]] || echo "ab: cells: $ncells ($(printf '%s; ' "${cells[@]}" | sed 's/; $//'))"
} >"$res/base.txt"

# With -D the programs come from RAM: each program the command starts
# (its first word, the first after ; | && || and after nice, taskset,
# chrt, env, timeout and their options) that is an ELF program of the
# tool root and not one of -b's, and for a script (ours in bench/guest/ or
# one of -b's) the programs its "# ab-programs:" line names.  Busybox has
# the shell's other commands.
ram=
# is_tool P: P is an ELF program of the tool root.
is_tool() {
	local d f
	for d in usr/bin usr/sbin bin sbin; do
		f=$rootfs/$d/$1
		if [[ -x $f && ! -d $f && $(head -c4 "$f" | tr -d '\0') == $'\x7fELF' ]]; then
			return 0
		fi
	done
	return 1
}
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
		# A script of ours or of -b's names the programs it runs.
		for h in ${bin:+"$bin/$w"} "$REPO/bench/guest/$w"; do
			[[ -f $h && $w == *.sh ]] || continue
			read -ra progs < <(sed -n 's/^# ab-programs: //p' "$h"; echo)
			for p in "${progs[@]}"; do
				if is_tool "$p"; then ram+=${ram:+,}$p; fi
			done
			continue 2
		done
		[[ -n $bin && -e $bin/$w ]] && continue
		if is_tool "$w"; then ram+=${ram:+,}$w; fi
	done
fi

# On an interrupt, the boot's QEMU first (run-guest.sh stops it), then
# the groups.
qpid=
ab_stop() {
	[[ -z $qpid ]] || { kill "$qpid" && wait "$qpid"; } 2>/dev/null || true
	[[ $throttle -eq 0 ]] || unthrottle
}
trap 'ab_stop; exit 130' INT
trap 'ab_stop; exit 143' TERM
[[ $throttle -eq 0 ]] || trap unthrottle EXIT

# The boots: one per seed, or with -k two per seed, A B then B A.
bseed=() bkern=()
for i in "${!seedv[@]}"; do
	if [[ -z $kb ]]; then
		bseed+=("${seedv[i]}") bkern+=("")
	elif ((i % 2 == 0)); then
		bseed+=("${seedv[i]}" "${seedv[i]}") bkern+=(A B)
	else
		bseed+=("${seedv[i]}" "${seedv[i]}") bkern+=(B A)
	fi
done
failed=0
for i in "${!bseed[@]}"; do
	n=$((i + 1)) k=${bkern[i]}
	dir=$res/boot-$n
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$REPO/bench/guest/ab.sh" "$dir/guest-ab.sh"
	cp "$res/schedbench" "${loads[@]}" "$dir/"
	printf '%s\n' "$cmd" >"$dir/ab-cmd"
	printf '%s\n' "$feats" >"$dir/ab-features"
	[[ ${#vars[@]} -eq 0 ]] || printf '%s\n' "${cells[@]}" >"$dir/ab-cells"
	[[ -z $bin ]] || find "$bin" -maxdepth 1 -type f -exec cp -p {} "$dir/" \;
	ropts=(-s "${bseed[i]}" -A "$qaccel")
	if [[ $det -eq 1 ]]; then
		ropts+=(-D)
		[[ -z $ram ]] || ropts+=(-R "$ram")
	fi
	gopts="-r,$reps,-t,$tmo,-d,/results$([[ $noperf -eq 0 ]] || echo ,-p)$([[ $warm -eq 1 ]] || echo ,-w)" tmo_boot=$((240 + ncells * (2 * reps + 1) * tmo)) img=$kernel
	if [[ -n $k ]]; then
		gopts+=",-s,$k" tmo_boot=$((240 + ncells * (reps + 1) * tmo)) img=${kimg[$k]}
		echo "$k" >"$dir/kernel"
		# A user's kernel need not have debugfs, which the guest's
		# topology check reads: off (the last value counts).
		[[ $k == A || $kb == base ]] || ropts+=(-c "schedseries.asym= schedseries.numa_levels=")
	fi
	rc=0 sock=
	if [[ $throttle -eq 1 ]]; then
		sock=$(mktemp -u /tmp/schedseries-qmp.XXXXXX)
		ropts+=(-Q "$sock")
	fi
	progress "ab boot $n of ${#bseed[@]} (QEMU seed ${bseed[i]}${k:+, kernel $k})"
	"$REPO/scripts/run-guest.sh" -t "$tmo_boot" -T "" -r "$rootfs" -o "$dir" \
		"${ropts[@]}" -x "/results/guest-ab.sh,$gopts" \
		"$guest" "$img" "$initrd" >"$dir/run.out" 2>&1 &
	qpid=$!
	if [[ -n $sock ]] && ! throttle_littles "$guest" "$sock" "$dir"; then
		why=$(grep '^not throttled: ' "$dir/throttle.txt" | tail -n1)
		kill "$qpid" 2>/dev/null || true
		wait "$qpid" || true
		qpid=
		unthrottle "$dir"
		die "boot-$n: $why (-N runs the littles at the bigs' speed)"
	fi
	wait "$qpid" || rc=$?
	qpid=
	unthrottle "$dir"
	[[ -z $sock ]] || rm -f "$sock"
	tail -n1 "$dir/run.out"
	nw=$(tr -d '\r' <"$dir/cmd.out" 2>/dev/null | grep -c '^ab: warning: ' || true)
	if [[ $nw -gt 0 ]]; then
		progress "boot-$n: warning: $nw runs printed no figure of the command's own; the first: $(tr -d '\r' <"$dir/cmd.out" | grep -m1 '^ab: warning: ' | cut -c14-)"
	fi
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
		echo "${k:+kernel $k: }$why" >"$dir/fail.txt"
		# Bad input, or a boot that never started, fails every boot
		# alike: stop at the first.
		[[ $why == *"unknown feature"* || $why == *"no command"* || $why == *"no writable"* ||
		   $why == *"topology"* || ! -s $dir/console.log ]] && break
	fi
done

# Boots with the same seed (and kernel) on a deterministic guest must
# agree.
if [[ $det -eq 1 ]]; then
	: >"$res/determinism.txt"
	for i in "${!bseed[@]}"; do
		for ((j = i + 1; j < ${#bseed[@]}; j++)); do
			[[ ${bseed[i]} == "${bseed[j]}" && ${bkern[i]} == "${bkern[j]}" ]] || continue
			a=$res/boot-$((i + 1))/raw.txt b=$res/boot-$((j + 1))/raw.txt
			[[ -s $a && -s $b ]] || continue
			what="seed ${bseed[i]}${bkern[i]:+, kernel ${bkern[i]}}"
			if line=$(kv_same "$a" "$b"); then
				echo "boot-$((i + 1)) and boot-$((j + 1)) ($what): raw.txt $line" >>"$res/determinism.txt"
			else
				echo "boot-$((i + 1)) and boot-$((j + 1)) ($what): raw.txt $line FAIL" >>"$res/determinism.txt"
				failed=$((failed + 1))
			fi
		done
	done
	if [[ -s $res/determinism.txt ]]; then
		sed 's/^/ab: /' "$res/determinism.txt"
	fi
fi

rfail=0
"$REPO/bench/ab-report.sh" "$res" || rfail=1
[[ $failed -eq 0 && $rfail -eq 0 ]] ||
	die "$failed boot(s) failed or disagreed$([[ $rfail -eq 0 ]] || echo ", and no run counts"), see $res (logs in boot-N/)"
