#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# /init of the test initramfs (scripts/mk-initramfs.sh copies it in).
# Runs under busybox sh as PID 1; every knob comes from the kernel command
# line (dotted names, so the kernel neither complains nor exports them):
#
#   schedseries.ncpus=N            expected number of online CPUs
#   schedseries.nodes=N            expected number of NUMA nodes
#   schedseries.node_cpus=L:L:...  expected cpulist of node 0, node 1, ...
#   schedseries.numa_levels=N      expected NUMA sched domain levels (cpu0)
#   schedseries.capacity=C,C,...   expected cpu_capacity of cpu0, cpu1, ...
#   schedseries.asym=0|1           expect SD_ASYM_CPUCAPACITY on some domain
#   schedseries.tests=T,T,...      run_kselftest.sh -t sched:T for each T
#   schedseries.cmd=PATH[,ARG...]  run one more command (commas become
#                                  spaces); output in /results/cmd.out
#   schedseries.shell=1            a shell on the console at the end
#                                  (scripts/shell.sh); its exit powers off
#   schedseries.tools=1            mount the 9p share "tools" (a Debian
#                                  root from scripts/mk-rootfs.sh) at /tools
#   schedseries.late=1             no 9p until the end (run-guest.sh -D):
#                                  /results is the initramfs' own
#                                  directory, copied to the 9p share at
#                                  the end
#
# The host's results directory is mounted over 9p (tag "results") at
# /results.  The tests are the kselftest install tree (the tarball of
# scripts/kselftest-tarball.sh, unpacked) at /opt/kselftest, run by its
# run_kselftest.sh: its TAP goes to /results/kselftest.tap, its exit
# status to /results/kselftest.rc; the host splits the TAP test by test
# (guest-lib.sh's ktap_split).  The topology check
# writes /results/topology.txt and topology.rc.  With schedseries.tools=1
# the tools share is mounted read-only at /tools with cache=loose (the
# guest keeps what it read in its page cache: a program started again is
# not read again over 9p, which under load took tens of seconds), and
# /lib, /lib64 and
# /usr/lib point into it, so its dynamically linked programs
# (/tools/usr/bin/hackbench, ...) run as they are; the /tools directories
# come last in PATH, after busybox's.  At the end /results/guest.done
# holds "rc=N" and the console gets "SCHEDSERIES-GUEST-EXIT rc=N"; rc is 0
# when the topology matched and run_kselftest.sh gave a result for every
# test asked for, none of them "not ok".
# Console lines starting with SCHEDSERIES- are what scripts/run-guest.sh
# parses; test output is echoed as "SCHEDSERIES-OUT T: line" so that the
# host's scan for kernel badness skips it.

/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
KSFT=/opt/kselftest
export HOME=/root

mkdir -p /proc /sys /dev /tmp /root /results
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# What udev would add: kselftest's runner appends each test's output to
# /dev/stdout, which without the link is a new regular file in /dev.
for f in 0:stdin 1:stdout 2:stderr; do
	[ -e "/dev/${f#*:}" ] || ln -s "/proc/self/fd/${f%%:*}" "/dev/${f#*:}"
done
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /sys/fs/cgroup
mount -t cgroup2 cgroup2 /sys/fs/cgroup || echo "SCHEDSERIES-WARN: no cgroup2"
mount -t tmpfs tmpfs /tmp

echo "SCHEDSERIES-GUEST-START uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r)"

# The value of the last schedseries.KEY on the command line, or $2.
arg() {
	local w line val=$2
	read -r line </proc/cmdline
	for w in $line; do
		case $w in
		schedseries.$1=*) val=${w#*=} ;;
		esac
	done
	echo "$val"
}

rc=0
fail() {
	echo "SCHEDSERIES-FAIL: $*"
	rc=1
}

NINEP=trans=virtio,version=9p2000.L,msize=262144
late=$(arg late 0)
if [ "$late" = 1 ]; then
	# An instruction-counted guest sees a 9p round trip as its clock
	# jumping by the host time it took: the share waits for the end.
	# What the host put in /results is older than the mark (its times
	# are zeroed), and only what is newer goes back.
	touch /tmp/.late-mark
	results_ok=1
elif mount -t 9p -o "$NINEP" results /results; then
	results_ok=1
else
	echo "SCHEDSERIES-FAIL: cannot mount the 9p results share (tag 'results')"
	results_ok=0
	rc=1
fi

if [ "$(arg tools 0)" = 1 ]; then
	mkdir -p /tools
	if mount -t 9p -o "ro,$NINEP,cache=loose" tools /tools; then
		for d in /lib /lib64 /usr/lib; do
			[ -e "$d" ] || [ -L "$d" ] || ln -s "/tools$d" "$d"
		done
		PATH=$PATH:/tools/usr/sbin:/tools/usr/bin:/tools/sbin:/tools/bin
	else
		echo "SCHEDSERIES-WARN: cannot mount the 9p tools share (tag 'tools')"
	fi
fi

echo "=== sched features"
cat /sys/kernel/debug/sched/features
echo Y >/sys/kernel/debug/sched/verbose 2>/dev/null

# Topology: print it, then compare with what the command line expects.
topo() {
	local c d n
	echo "online: $(cat /sys/devices/system/cpu/online)"
	for n in /sys/devices/system/node/node[0-9]*; do
		[ -d "$n" ] && echo "${n##*/}: cpus $(cat "$n/cpulist") distance $(cat "$n/distance")"
	done
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		[ -d "$c/topology" ] || continue
		echo "${c##*/}: capacity $(cat "$c/cpu_capacity" 2>/dev/null || echo -)" \
			"package $(cat "$c/topology/physical_package_id")" \
			"cluster $(cat "$c/topology/cluster_id" 2>/dev/null || echo -)" \
			"core $(cat "$c/topology/core_id")"
	done
	for d in /sys/kernel/debug/sched/domains/cpu0/domain*; do
		[ -d "$d" ] && echo "cpu0 ${d##*/}: $(cat "$d/name") flags: $(cat "$d/flags")"
	done
}

check_topology() {
	local want got i n cap asym levels ncpus
	ncpus=$(arg ncpus "")
	if [ -n "$ncpus" ]; then
		got=0
		for i in /sys/devices/system/cpu/cpu[0-9]*; do
			[ "$(cat "$i/online" 2>/dev/null || echo 1)" = 1 ] && got=$((got + 1))
		done
		[ "$got" = "$ncpus" ] || fail "topology: $got CPUs online, expected $ncpus"
	fi

	want=$(arg nodes "")
	if [ -n "$want" ]; then
		if [ -d /sys/devices/system/node/node0 ]; then
			set -- /sys/devices/system/node/node[0-9]*
			got=$#
		else
			got=1
		fi
		[ "$got" = "$want" ] || fail "topology: $got NUMA nodes, expected $want"
	fi

	want=$(arg node_cpus "")
	if [ -n "$want" ]; then
		i=0
		for n in $(echo "$want" | tr : ' '); do
			got=$(cat /sys/devices/system/node/node$i/cpulist 2>/dev/null ||
			      cat /sys/devices/system/cpu/online)
			[ "$got" = "$n" ] || fail "topology: node$i has CPUs '$got', expected '$n'"
			i=$((i + 1))
		done
	fi

	want=$(arg capacity "")
	if [ -n "$want" ]; then
		i=0
		for cap in $(echo "$want" | tr , ' '); do
			got=$(cat /sys/devices/system/cpu/cpu$i/cpu_capacity 2>/dev/null || echo missing)
			[ "$got" = "$cap" ] || fail "topology: cpu$i capacity $got, expected $cap"
			i=$((i + 1))
		done
	fi

	want=$(arg asym "")
	if [ -n "$want" ]; then
		[ -d /sys/kernel/debug/sched/domains/cpu0 ] ||
			fail "topology: no /sys/kernel/debug/sched/domains/cpu0 (DEBUG_FS, verbose?)"
		asym=0
		grep -qw SD_ASYM_CPUCAPACITY /sys/kernel/debug/sched/domains/cpu*/domain*/flags 2>/dev/null &&
			asym=1
		[ "$asym" = "$want" ] ||
			fail "topology: SD_ASYM_CPUCAPACITY present=$asym, expected $want"
	fi

	want=$(arg numa_levels "")
	if [ -n "$want" ]; then
		levels=0
		for i in /sys/kernel/debug/sched/domains/cpu0/domain*/name; do
			[ "$(cat "$i" 2>/dev/null)" = NUMA ] && levels=$((levels + 1))
		done
		[ "$levels" = "$want" ] ||
			fail "topology: cpu0 has $levels NUMA domain levels, expected $want"
	fi
}

echo "=== topology"
topo | tee /tmp/topology.txt
check_topology
if [ "$rc" = 0 ]; then
	echo "SCHEDSERIES-TOPOLOGY ok"
else
	echo "SCHEDSERIES-TOPOLOGY FAIL"
fi
if [ "$results_ok" = 1 ]; then
	cp /tmp/topology.txt /results/topology.txt
	echo "$rc" >/results/topology.rc
fi

# run_one NAME OUTFILE RCFILE TIMEOUT CMD... : run with a timeout, record.
run_one() {
	local name=$1 out=$2 rcf=$3 tmo=$4 r
	shift 4
	echo "SCHEDSERIES-TEST-START $name uptime=$(cut -d' ' -f1 /proc/uptime)"
	if [ "$tmo" -gt 0 ]; then
		timeout -s KILL "$tmo" "$@" >"$out" 2>&1 </dev/null
	else
		"$@" >"$out" 2>&1 </dev/null
	fi
	r=$?
	# busybox timeout -s KILL leaves 137; call it what coreutils would.
	[ "$tmo" -gt 0 ] && [ "$r" = 137 ] && r=124 && echo "# timed out after ${tmo}s" >>"$out"
	echo "$r" >"$rcf"
	sed "s/^/SCHEDSERIES-OUT $name: /" "$out"
	echo "SCHEDSERIES-TEST-END $name rc=$r uptime=$(cut -d' ' -f1 /proc/uptime)"
	return "$r"
}

if [ "$rc" = 0 ]; then
	outdir=/results
	[ "$results_ok" = 1 ] || outdir=/tmp
	tests=$(arg tests "" | tr , ' ')
	if [ -z "$tests" ]; then
		:
	elif [ -x "$KSFT/run_kselftest.sh" ]; then
		# The way kselftest runs on a farm: run_kselftest.sh of the
		# installed tree, one -t sched:T per test, its settings
		# timeout (coreutils' timeout is in the initramfs).  The whole
		# TAP goes to kselftest.tap, and to the console as it comes.
		set --
		for t in $tests; do
			set -- "$@" -t "sched:$t"
		done
		echo "SCHEDSERIES-KSELFTEST-START $* uptime=$(cut -d' ' -f1 /proc/uptime)"
		{
			cd "$KSFT" && ./run_kselftest.sh "$@" </dev/null 2>&1
			echo $? >"$outdir/kselftest.rc"
			cd /
		} | tee "$outdir/kselftest.tap" | while IFS= read -r l || [ -n "$l" ]; do
			echo "SCHEDSERIES-OUT kselftest: $l"
		done
		r=$(cat "$outdir/kselftest.rc" 2>/dev/null || echo missing)
		echo "SCHEDSERIES-KSELFTEST-END rc=$r uptime=$(cut -d' ' -f1 /proc/uptime)"
		# What failed is judged on the host, test by test, from the TAP.
		grep -q '^not ok ' "$outdir/kselftest.tap" && rc=1
		n=$(grep -cE '^(not )?ok [0-9]' "$outdir/kselftest.tap")
		[ "$n" = "$(echo "$tests" | wc -w)" ] ||
			fail "run_kselftest.sh gave $n results for the $(echo "$tests" | wc -w) tests asked for"
	else
		fail "no $KSFT/run_kselftest.sh in the initramfs"
	fi
	cmd=$(arg cmd "")
	if [ -n "$cmd" ]; then
		# shellcheck disable=SC2046 # the split is the point
		run_one cmd "$outdir/cmd.out" "$outdir/cmd.rc" 0 $(echo "$cmd" | tr , ' ') || rc=1
	fi
else
	echo "SCHEDSERIES-FAIL: topology does not match, tests not run"
fi

if [ "$late" = 1 ]; then
	# Everything to the share, then guest.done: the host takes a missing
	# guest.done for a run that did not finish.
	mkdir -p /mnt/results
	if mount -t 9p -o "$NINEP" results /mnt/results; then
		(cd /results && find . ! -type d -newer /tmp/.late-mark) >/tmp/.late-list
		while IFS= read -r f; do
			if ! mkdir -p "/mnt/results/${f%/*}" || ! cp "/results/$f" "/mnt/results/$f"; then
				fail "copying /results/$f to the 9p results share failed"
			fi
		done </tmp/.late-list
		echo "rc=$rc" >/mnt/results/guest.done
		sync
		umount /mnt/results
	else
		fail "cannot mount the 9p results share (tag 'results') at the end"
	fi
elif [ "$results_ok" = 1 ]; then
	echo "rc=$rc" >/results/guest.done
	sync
fi
echo "SCHEDSERIES-GUEST-EXIT rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
if [ "$(arg shell 0)" = 1 ]; then
	# scripts/shell.sh waits for the READY line before it types.
	F=/sys/kernel/debug/sched
	export F
	echo "=== shell: \$F is $F (features, feat_stats, base_slice_ns, ...);"
	echo "=== /results is the host's results directory; exit powers off"
	echo "SCHEDSERIES-SHELL-READY"
	setsid cttyhack sh
	sync
fi
[ "$late" = 1 ] || [ "$results_ok" != 1 ] || umount /results
reboot -f
while :; do sleep 60; done
