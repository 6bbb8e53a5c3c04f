#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one test guest under QEMU (TCG) and judge the run.
#
# Usage: scripts/run-guest.sh [-h] [-v] [-t TIMEOUT] [-o RESULTDIR] [-c CMDLINE]
#                             [-T TESTS] [-x CMD] [-r ROOTDIR] [-Q SOCKET]
#                             [-D] [-R PROGS] [-s SEED] [-A ACCEL] [-i]
#                             GUEST KERNEL INITRAMFS
#
#   GUEST       a name from guests/ (guests/NAME.conf)
#               or the path of a .conf
#   KERNEL      bzImage or Image, e.g. from scripts/build-kernel.sh
#   INITRAMFS   from scripts/mk-initramfs.sh
#   -t TIMEOUT  seconds before QEMU is killed (default 300)
#   -o DIR      results directory (default results/GUEST-YYYYmmdd-HHMMSS);
#               shared with the guest over 9p as /results
#   -c CMDLINE  extra kernel command line, appended last
#   -T TESTS    tests to run, comma or space separated (default GUEST_TESTS
#               from the conf; "" runs none)
#   -x CMD      also run CMD in the guest: a path, arguments after commas
#   -r ROOTDIR  share ROOTDIR read-only over 9p (tag "tools"), e.g. from
#               scripts/mk-rootfs.sh; the guest mounts it at /tools and runs
#               its programs with their own libraries (see scripts/guest/init.sh)
#   -Q SOCKET   open a QMP server on the unix SOCKET (for query-cpus-fast)
#   -D          deterministic run, for instruction-counted guests: the
#               guest uses no 9p until its tests and command are done.  The
#               files already in DIR, and with -r the conf's RAM_PROGRAMS
#               of ROOTDIR with their libraries (lddtree), go into a cpio
#               archive that the guest gets after INITRAMFS (the two make
#               DIR/initramfs-ram.img, removed afterwards); the guest
#               writes /results in RAM and copies it to DIR over 9p at the
#               end.  A 9p round trip takes host time, which such a guest
#               sees as its clock jumping, so 9p made its boots differ;
#               without it, boots with the same kernel, initramfs and seed
#               run the same (Documentation/harness/harness.md,
#               "Deterministic boots").  A guest
#               that does not finish leaves only its console (where
#               bench/guest/ab.sh echoes each result line too)
#   -R PROGS    with -D and -r, these programs of ROOTDIR too (names,
#               comma separated), besides the conf's RAM_PROGRAMS
#   -s SEED     QEMU's -seed (the guest's random numbers, RDRAND included;
#               default QEMU_SEED of the conf, if any): with -D, another seed
#               is another sample, the same seed the same run
#   -A ACCEL    QEMU's -accel instead of the conf's QEMU_ACCEL:
#               tcg,thread=single or tcg,thread=multi (bench/ab.sh's
#               default, a host thread per vCPU)
#   -v          copy the guest console to stdout as it comes
#   -i          a shell on the guest console (scripts/shell.sh): the
#               console is this terminal, and leaving the shell powers the
#               guest off.  On a terminal, no timeout, and Ctrl-A X quits
#               QEMU.  Otherwise the guest gets standard input, then
#               "exit", a line each time its shell prompts, within TIMEOUT
#
# QEMU_SUITE (environment): the Debian suite whose QEMU the guest runs,
# fetched under SCHED_CACHE (default bookworm-backports); empty: the
# host's own qemu-system-*.
#
# The console goes to DIR/console.log, run_kselftest.sh's TAP to
# DIR/kselftest.tap, and from it each test's own TAP to DIR/TEST.tap and
# its exit status to DIR/TEST.rc.  The run fails, with one "FAIL GUEST:
# reason" line and exit status 1, on a kernel that is not the last build
# of KERNEL's O= directory, a kernel panic, a BUG/WARNING/Oops/
# lockdep/RCU stall/KASAN/UBSAN line, a timeout, a topology mismatch, a
# missing DIR/guest.done or a test that neither passed nor skipped.
# Otherwise it prints "PASS GUEST: ..." and exits 0.  DIR/verdict.txt keeps
# the verdict and DIR/qemu.cmd the QEMU command line.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-lib.sh
. "$(dirname "$0")/guest-lib.sh"

usage() {
	sed -n '3,/^# the verdict and/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
timeout=300
outdir=
extra_cmdline=
tests=
tests_given=0
guestcmd=
rootdir=
qmp=
verbose=0
late=0
seed=
ram_extra=
shell=0
accel=
while getopts hvit:o:c:T:x:r:Q:DR:s:A: opt; do
	case $opt in
	h) usage 0 ;;
	v) verbose=1 ;;
	i) shell=1 ;;
	t) timeout=$OPTARG ;;
	o) outdir=$OPTARG ;;
	c) extra_cmdline=$OPTARG ;;
	T) tests=$OPTARG tests_given=1 ;;
	x) guestcmd=$OPTARG ;;
	r) rootdir=$OPTARG ;;
	Q) qmp=$OPTARG ;;
	D) late=1 ;;
	R) ram_extra=$OPTARG ;;
	s) seed=$OPTARG ;;
	A) accel=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 3 ]] || usage 2
[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "bad timeout '$timeout' (seconds, > 0)"
[[ -z $seed || $seed =~ ^[0-9]+$ ]] || die "bad -s '$seed' (a number)"
[[ $guestcmd != *[[:space:]]* ]] || die "bad -x '$guestcmd': no spaces, separate arguments with commas"
[[ $ram_extra =~ ^[A-Za-z0-9_.+,-]*$ ]] || die "bad -R '$ram_extra' (program names, comma separated)"
[[ -z $ram_extra || ( $late -eq 1 && -n $rootdir ) ]] || die "-R needs -D and -r (programs of ROOTDIR into RAM)"
[[ $shell -eq 0 || $late -eq 0 ]] || die "-i and -D do not go together (the shell needs the 9p share)"
guest_load "$1"
guest_qemu
[[ -z $accel ]] || QEMU_ACCEL=$accel
accel_check "$QEMU_ACCEL"
RAM_PROGRAMS="${RAM_PROGRAMS:-} ${ram_extra//,/ }"
seed=${seed:-${QEMU_SEED:-}}
[[ -z $seed || $seed =~ ^[0-9]+$ ]] || die "$GUEST_CONF: bad QEMU_SEED '$seed' (a number)"
kernel=$2
initramfs=$3
[[ -f $kernel ]] || die "no kernel image '$kernel'"
[[ -f $initramfs ]] || die "no initramfs '$initramfs'"
if [[ -n $rootdir ]]; then
	[[ -d $rootdir ]] || die "bad -r '$rootdir': no such directory"
	rootdir=$(realpath "$rootdir")
	[[ $rootdir != *,* ]] || die "bad -r '$rootdir': QEMU cannot take a path with a comma"
fi
[[ $tests_given -eq 1 ]] || tests=${GUEST_TESTS:-}
tests=$(echo "$tests" | tr ' ' ',' | tr -s ',' | sed 's/^,//; s/,$//')
[[ $tests =~ ^[A-Za-z0-9_.,-]*$ ]] || die "bad test list '$tests'"
# shellcheck disable=SC2153 # QEMU comes from the guest conf
command -v "$QEMU" >/dev/null || die "no $QEMU"

outdir=${outdir:-$REPO/results/$GUEST_NAME-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$outdir"
outdir=$(realpath "$outdir")
rm -f "$outdir"/{console.log,qemu.log,qemu.cmd,guest.done,verdict.txt,topology.rc,topology.txt} \
      "$outdir"/*.tap "$outdir"/*.rc "$outdir"/cmd.out "$outdir"/kselftest.* \
      "$outdir"/initramfs-ram.img "$outdir"/lddtree.out
# -D: the archive of what the guest would otherwise read over 9p, DIR's
# own files at /results (regular files at its top, not what the harness
# writes there: run.out is the caller's log) and RAM_PROGRAMS of -r's
# root with the libraries lddtree finds for them there, appended to
# INITRAMFS (the kernel unpacks one archive after the other).
if [[ $late -eq 1 ]]; then
	ram=$outdir/initramfs-ram.img
	stage=$(mktemp -d "${TMPDIR:-/tmp}/initramfs-ram.XXXXXX")
	trap 'rm -rf "$stage"' EXIT
	# The archive's "." is the guest's /: not mktemp's 0700.
	chmod 755 "$stage"
	mkdir -p "$stage/results"
	find "$outdir" -maxdepth 1 -type f ! -name run.out ! -name console.log ! -name 'qemu.*' \
		! -name verdict.txt ! -name lddtree.out ! -name guest.done ! -name 'topology.*' \
		! -name '*.tap' ! -name '*.rc' ! -name cmd.out ! -name 'kselftest.*' \
		-exec cp -p {} "$stage/results/" \;
	if [[ -n $rootdir ]]; then
		[[ -n ${RAM_PROGRAMS// /} ]] || die "$GUEST_CONF: -D with -r needs RAM_PROGRAMS (or -R), the programs to take from $rootdir"
		progs=()
		for p in $RAM_PROGRAMS; do
			found=
			for d in usr/bin usr/sbin bin sbin; do
				[[ -x $rootdir/$d/$p && ! -d $rootdir/$d/$p ]] && found=/$d/$p && break
			done
			[[ -n $found ]] || die "RAM_PROGRAMS: no program '$p' in $rootdir/{usr/bin,usr/sbin,bin,sbin}"
			progs+=("$found")
		done
		need_pkgs pax-utils python3-pyelftools cpio
		# Debian's python3 has pyelftools; another python3 first on PATH may not.
		/usr/bin/python3 /usr/bin/lddtree -R "$rootdir" --copy-to-tree "$stage" "${progs[@]}" \
			>"$outdir/lddtree.out" 2>&1 ||
			die "lddtree could not gather ${progs[*]} from $rootdir: $(tail -n1 "$outdir/lddtree.out")"
	fi
	# The same bytes for the same inputs: times zeroed, names sorted.  Not
	# compressed, so the guest unpacks it in less of its time; the kernel
	# takes an uncompressed archive only at a 4-byte boundary, and skips
	# the zeros before it.
	find "$stage" -exec touch -h -d @0 {} +
	{
		cat "$initramfs"
		head -c $(((4 - $(stat -c %s "$initramfs") % 4) % 4)) /dev/zero
		(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
			cpio --null -o -H newc --owner=0:0 --reproducible --quiet)
	} >"$ram" || die "could not write $ram"
	rm -rf "$stage"
	trap 'rm -f "$ram"' EXIT
	initramfs=$ram
fi
console=$outdir/console.log
: >"$console"

# Kernel command line: console, panic handling, and what the guest checks.
cmdline="console=$KERNEL_CONSOLE panic=-1 printk.time=1 rdinit=/init"
cmdline+=" schedseries.ncpus=$EXPECT_NCPUS schedseries.nodes=$EXPECT_NODES"
[[ -n ${EXPECT_NODE_CPUS:-} ]] && cmdline+=" schedseries.node_cpus=${EXPECT_NODE_CPUS// /:}"
[[ -n ${EXPECT_NUMA_LEVELS:-} ]] && cmdline+=" schedseries.numa_levels=$EXPECT_NUMA_LEVELS"
[[ -n ${EXPECT_CAPACITY:-} ]] && cmdline+=" schedseries.capacity=$EXPECT_CAPACITY"
[[ -n ${EXPECT_ASYM:-} ]] && cmdline+=" schedseries.asym=$EXPECT_ASYM"
[[ -n $tests ]] && cmdline+=" schedseries.tests=$tests"
[[ -n $guestcmd ]] && cmdline+=" schedseries.cmd=$guestcmd"
[[ -n $rootdir && $late -eq 0 ]] && cmdline+=" schedseries.tools=1"
[[ $late -eq 1 ]] && cmdline+=" schedseries.late=1"
[[ $shell -eq 1 ]] && cmdline+=" schedseries.shell=1"
[[ -n $extra_cmdline ]] && cmdline+=" $extra_cmdline"

qemu=("$QEMU" "${QEMU_DATA[@]}" -machine "$QEMU_MACHINE" -accel "$QEMU_ACCEL" -cpu "$QEMU_CPU"
      -smp "$QEMU_SMP" -m "$QEMU_MEM" -nodefaults -display none -no-reboot
      -kernel "$kernel" -initrd "$initramfs" -append "$cmdline"
      -fsdev "local,id=results,path=$outdir,security_model=none"
      -device "$QEMU_9P_DEVICE,fsdev=results,mount_tag=results")
# Instruction counting: deterministic guest time.  With more than one
# vCPU only on QEMU 8.1 or later: before, the round robin gave a busy
# vCPU the time up to the next deadline and an idle vCPU's timers came
# up to a second late (Documentation/harness/notes/icount-smp.md).
if [[ -n ${QEMU_ICOUNT:-} ]]; then
	[[ $QEMU_ACCEL == tcg,thread=single ]] ||
		die "$GUEST_CONF: QEMU_ICOUNT needs QEMU_ACCEL=tcg,thread=single"
	if [[ $QEMU_SMP != 1 ]]; then
		qv=$("$QEMU" --version | sed -n '1s/^QEMU emulator version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
		read -r qmaj qmin <<<"${qv:-0 0}"
		qdesc="of unknown version"
		[[ -z $qv ]] || qdesc="version ${qv/ /.}"
		((qmaj > 8 || (qmaj == 8 && qmin >= 1))) ||
			die "$GUEST_CONF: QEMU_ICOUNT with $QEMU_SMP vCPUs needs QEMU 8.1 or later, $QEMU is $qdesc (QEMU_SUITE=bookworm-backports has one; notes/icount-smp.md)"
	fi
	qemu+=(-icount "$QEMU_ICOUNT")
fi
# Further options of the guest's own, split on blanks.
if [[ -n ${QEMU_EXTRA:-} ]]; then
	read -ra extra <<<"$QEMU_EXTRA"
	qemu+=("${extra[@]}")
fi
[[ -n $seed ]] && qemu+=(-seed "$seed")
[[ -n $rootdir && $late -eq 0 ]] &&
	qemu+=(-fsdev "local,id=tools,path=$rootdir,security_model=none,readonly=on"
	       -device "$QEMU_9P_DEVICE,fsdev=tools,mount_tag=tools")

if [[ -n ${NUMA_NODES:-} ]]; then
	read -ra sockets <<<"$NUMA_NODE_SOCKETS"
	read -ra slit <<<"$NUMA_SLIT"
	[[ ${#sockets[@]} -eq $NUMA_NODES ]] ||
		die "$GUEST_CONF: NUMA_NODE_SOCKETS '$NUMA_NODE_SOCKETS' is not $NUMA_NODES entries"
	[[ ${#slit[@]} -eq $NUMA_NODES ]] ||
		die "$GUEST_CONF: NUMA_SLIT has ${#slit[@]} rows for $NUMA_NODES nodes"
	for ((n = 0; n < NUMA_NODES; n++)); do
		qemu+=(-object "memory-backend-ram,id=m$n,size=$NUMA_NODE_MEM"
		       -numa "node,nodeid=$n,memdev=m$n"
		       -numa "cpu,node-id=$n,socket-id=${sockets[n]}")
	done
	for ((n = 0; n < NUMA_NODES; n++)); do
		IFS=, read -ra row <<<"${slit[n]}"
		[[ ${#row[@]} -eq $NUMA_NODES ]] ||
			die "$GUEST_CONF: NUMA_SLIT row $n '${slit[n]}' is not $NUMA_NODES entries"
		for ((m = 0; m < NUMA_NODES; m++)); do
			[[ $m -eq $n ]] && continue
			qemu+=(-numa "dist,src=$n,dst=$m,val=${row[m]}")
		done
	done
fi
if [[ $DTB == yes ]]; then
	"$REPO/scripts/mk-dtb.sh" "$GUEST_CONF" "$outdir/guest.dtb"
	qemu+=(-dtb "$outdir/guest.dtb")
fi
[[ -n $qmp ]] && qemu+=(-qmp "unix:$qmp,server=on,wait=off")
# The console: a file, or with -i this terminal (and QEMU's monitor behind
# Ctrl-A) or standard input, logged to the same file.
if [[ $shell -eq 0 ]]; then
	qemu+=(-monitor none -serial "file:$console")
elif [[ -t 0 ]]; then
	qemu+=(-chardev "stdio,id=con,mux=on,signal=off,logfile=$console"
	       -serial chardev:con -mon "chardev=con,mode=readline")
else
	qemu+=(-monitor none -chardev "stdio,id=con,signal=off,logfile=$console"
	       -serial chardev:con)
fi
printf '%q ' "${qemu[@]}" >"$outdir/qemu.cmd"
echo >>"$outdir/qemu.cmd"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

verdict() {
	echo "$1" | tee "$outdir/verdict.txt"
	[[ $1 == PASS* ]] && exit 0
	progress "logs in $outdir"
	exit 1
}

# judge: the verdict from the console and the results, most telling
# reason first.
judge() {
	clean=$(tr -d '\r' <"$console" | grep -v '^SCHEDSERIES-' || true)
	if ! grep -q 'Linux version' <<<"$clean" && [[ $rc -ne 0 && $rc -ne 124 && $rc -ne 137 ]]; then
		verdict "FAIL $GUEST_NAME: QEMU failed (exit $rc): $(tail -n1 "$outdir/qemu.log")"
	fi
	# The kernel that booted must be the last one built in KERNEL's O=
	# directory (a stale image once came out of ccache, see scripts/kcc.sh).
	kout=${kernel%/arch/*/boot/*}
	if [[ $kout != "$kernel" && -f $kout/include/generated/utsversion.h ]]; then
		want=$(sed -n 's/^#define UTS_VERSION "\(.*\)"$/\1/p' "$kout/include/generated/utsversion.h")
		line=$(grep -m1 -o 'Linux version .*' <<<"$clean" || true)
		[[ -z $want || -z $line || $line == *" $want" ]] ||
			verdict "FAIL $GUEST_NAME: stale kernel image: it booted '${line##*) }', the last build in $kout is '$want'"
	fi
	line=$(grep -m1 'Kernel panic' <<<"$clean" || true)
	[[ -n $line ]] && verdict "FAIL $GUEST_NAME: kernel panic: ${line#\[*\] }"
	line=$(console_badness "$console" | sed -n 1p)
	[[ -n $line ]] && verdict "FAIL $GUEST_NAME: kernel badness: ${line#\[*\] }"
	if [[ $rc -eq 124 || $rc -eq 137 ]]; then
		last=$(tr -d '\r' <"$console" | sed '/^$/d' | tail -n1)
		verdict "FAIL $GUEST_NAME: timeout after ${timeout}s, last console line: ${last:-<none>}"
	fi
	line=$(tr -d '\r' <"$console" | sed -n 's/^SCHEDSERIES-FAIL: topology: //p' | paste -sd';' - | sed 's/;/; /g')
	[[ -n $line ]] && verdict "FAIL $GUEST_NAME: topology mismatch: $line"
	if [[ ! -f $outdir/guest.done ]]; then
		# With -D the guest may have finished and failed to hand its results over.
		line=$(tr -d '\r' <"$console" | grep -m1 '^SCHEDSERIES-FAIL: .*9p results share' || true)
		[[ -n $line ]] && verdict "FAIL $GUEST_NAME: no guest.done: ${line#SCHEDSERIES-FAIL: }"
		verdict "FAIL $GUEST_NAME: no guest.done (QEMU exit $rc), guest did not finish"
	fi
	failed=()
	summary=()
	for t in ${tests//,/ } ${guestcmd:+cmd}; do
		trc=$(cat "$outdir/$t.rc" 2>/dev/null || echo missing)
		case $trc in
		0) summary+=("$t=ok") ;;
		4) summary+=("$t=skip") ;;
		124) failed+=("$t=timeout") ;;
		*) failed+=("$t=rc$trc") ;;
		esac
	done
	[[ ${#failed[@]} -eq 0 ]] ||
		verdict "FAIL $GUEST_NAME: tests failed: ${failed[*]} (see $outdir/TEST.tap)"
	done_rc=$(sed -n 's/^rc=//p' "$outdir/guest.done")
	[[ $done_rc == 0 ]] ||
		verdict "FAIL $GUEST_NAME: guest reported rc=$done_rc: $(tr -d '\r' <"$console" | grep -m1 '^SCHEDSERIES-FAIL' || echo 'see console.log')"
	what=${summary[*]:-no tests}
	[[ $shell -eq 0 || -n ${summary[*]} ]] || what="shell left"
	verdict "PASS $GUEST_NAME: $what (${boot_wall:+boot ${boot_wall}s wall/${boot_guest:-?}s guest, }total ${wall}s)"
}


# shell_prompts: how many prompts of the guest's shell the console shows
# (busybox ash's "DIR # ", with what was typed after it).
shell_prompts() {
	tr -d '\r' <"$console" | sed -n '/^SCHEDSERIES-SHELL-READY/,$p' | grep -cE '^(/[^ ]*|~) # ' || true
}

# shell_run: QEMU with the console on this terminal (no timeout), or
# with standard input typed into the guest's shell once it is up, then
# "exit" (the guest's tty echoes it into the console).  Sets rc.
shell_run() {
	local input fifo line typed
	rc=0
	if [[ -t 0 ]]; then
		progress "$GUEST_NAME: starting QEMU ($QEMU_SMP), results in $outdir; the shell comes after the boot, 'exit' powers off, Ctrl-A X quits QEMU"
		"${qemu[@]}" 2>"$outdir/qemu.log" || rc=$?
		return 0
	fi
	input=$(mktemp "${TMPDIR:-/tmp}/shell-in.XXXXXX")
	fifo=$input.fifo
	trap 'rm -f "$input" "$fifo"' EXIT
	cat >"$input"
	printf '\nexit\n' >>"$input"
	mkfifo "$fifo"
	progress "$GUEST_NAME: starting QEMU ($QEMU_SMP, timeout ${timeout}s), results in $outdir; standard input goes to its shell"
	timeout -k 10 "$timeout" "${qemu[@]}" <"$fifo" 2>"$outdir/qemu.log" &
	qpid=$!
	# timeout runs QEMU in a process group of its own: Ctrl-C does not
	# reach it, this trap does.
	trap 'kill "$qpid" 2>/dev/null || true; rm -f "$input" "$fifo"' EXIT
	exec 3>"$fifo"
	n=0
	while kill -0 "$qpid" 2>/dev/null && ! grep -q '^SCHEDSERIES-SHELL-READY' "$console"; do
		# An initramfs of an older scripts/guest/init.sh has no READY.
		grep -q '^SCHEDSERIES-GUEST-EXIT' "$console" && n=$((n + 1))
		if [[ $n -gt 150 ]]; then
			progress "$GUEST_NAME: no SCHEDSERIES-SHELL-READY 30 s after the guest's exit line (an initramfs older than scripts/guest/init.sh?)"
			kill "$qpid"
			break
		fi
		sleep 0.2
	done
	# One line at a time, each once the shell's prompt ("DIR # ") is back:
	# ash's line editing drops or mangles what is typed ahead of it (it
	# asks the terminal for the cursor position, and reads the answer
	# from the same input).
	typed=0
	while IFS= read -r line || [[ -n $line ]]; do
		while kill -0 "$qpid" 2>/dev/null && [[ $(shell_prompts) -le $typed ]]; do
			sleep 0.2
		done
		kill -0 "$qpid" 2>/dev/null || break
		printf '%s\n' "$line" >&3 || break
		typed=$((typed + 1))
	done <"$input"
	exec 3>&-
	wait "$qpid" || rc=$?
	rm -f "$input" "$fifo"
	trap - EXIT
}

# follow: the console's new lines, one progress line per stage.
seen=0
follow() {
	local total line
	total=$(wc -l <"$console")
	[[ $total -gt $seen ]] || return 0
	while IFS= read -r line; do
		line=${line%$'\r'}
		[[ $verbose -eq 1 ]] && printf '%s\n' "$line"
		case $line in
		SCHEDSERIES-GUEST-START*)
			boot_wall=$(since "$start")
			boot_guest=$(sed -n 's/.*uptime=\([0-9.]*\).*/\1/p' <<<"$line")
			progress "$GUEST_NAME: init running after ${boot_wall}s wall, ${boot_guest}s guest uptime"
			;;
		SCHEDSERIES-TOPOLOGY*|SCHEDSERIES-FAIL*|SCHEDSERIES-GUEST-EXIT*)
			progress "$GUEST_NAME: ${line#SCHEDSERIES-}" ;;
		SCHEDSERIES-TEST-START*)
			progress "$GUEST_NAME: running $(awk '{print $2}' <<<"$line")" ;;
		SCHEDSERIES-TEST-END*)
			progress "$GUEST_NAME: ${line#SCHEDSERIES-TEST-END }" ;;
		SCHEDSERIES-KSELFTEST-*)
			progress "$GUEST_NAME: run_kselftest.sh ${line#SCHEDSERIES-KSELFTEST-}" ;;
		"SCHEDSERIES-OUT kselftest: # selftests: "*)
			progress "$GUEST_NAME: running ${line#*# selftests: }" ;;
		"SCHEDSERIES-OUT kselftest: ok "* | "SCHEDSERIES-OUT kselftest: not ok "*)
			progress "$GUEST_NAME: ${line#SCHEDSERIES-OUT kselftest: }" ;;
		*"Kernel panic"*)
			progress "$GUEST_NAME: ${line#*\] }" ;;
		esac
	done < <(head -n "$total" "$console" | tail -n +$((seen + 1)))
	seen=$total
}

start=$(now)
boot_wall=
boot_guest=
if [[ $shell -eq 1 ]]; then
	shell_run
else
	progress "$GUEST_NAME: starting QEMU ($QEMU_SMP, timeout ${timeout}s), results in $outdir"
	timeout -k 10 "$timeout" "${qemu[@]}" </dev/null >"$outdir/qemu.log" 2>&1 &
	qpid=$!
	trap 'kill "$qpid" 2>/dev/null || true; [[ $late -eq 0 ]] || rm -f "$ram"' EXIT
	while kill -0 "$qpid" 2>/dev/null; do
		follow
		sleep 0.3
	done
	rc=0
	wait "$qpid" || rc=$?
	trap - EXIT
	[[ $late -eq 0 ]] || rm -f "$ram"
	follow
fi
wall=$(since "$start")
progress "$GUEST_NAME: QEMU exited with $rc after ${wall}s"
# run_kselftest.sh's TAP, test by test, before any verdict: a run that
# fails on a splat or a timeout keeps the results of its tests.
# shellcheck disable=SC2086 # the list splits on purpose
[[ -f $outdir/kselftest.tap ]] && ktap_split "$outdir/kselftest.tap" "$outdir" ${tests//,/ }
judge
