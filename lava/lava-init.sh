#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# /init of the LAVA kselftest ramdisk (mk-lava-ramdisk.sh copies it in).
# LAVA's deploy step unpacks the kselftest tarball (make gen_tar output)
# into /opt/kselftest of this ramdisk ("overlays" of the ramdisk image);
# this init mounts what the sched selftests need, runs
# /opt/kselftest/run_kselftest.sh with the console as its output, and
# powers off.  The LAVA job's "monitors" test action matches the TAP
# result lines ("ok N selftests: COLLECTION: TEST [# SKIP]",
# "not ok N ...") between the two marker lines printed here.
#
# Kernel command line knobs (dotted, so the kernel does not export them):
#   lava_kselftest.args=A,B,...  arguments for run_kselftest.sh, commas
#                                become spaces (e.g. -c,sched or
#                                -t,sched:features); default: every test
#                                in kselftest-list.txt
#   lava_kselftest.run=0         do not run the tests here (a LAVA
#                                lava-test-shell job runs them instead)
#   lava_kselftest.shell=1       drop to a shell at the end, no power off
#                                (the prompt is busybox ash's "/ # ")

/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin
# Does not replace files that exist: /usr/bin/timeout stays coreutils'
# (run_kselftest.sh's runner.sh calls "/usr/bin/timeout --foreground",
# which busybox's timeout rejects).
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/root

mkdir -p /proc /sys /dev /tmp /root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# devtmpfs has no /dev/std* links (udev makes them); runner.sh writes the
# tests' output to "$logfile", /dev/stdout, which would otherwise become a
# plain file and the output would never reach the console.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /sys/fs/cgroup
mount -t cgroup2 cgroup2 /sys/fs/cgroup || echo "lava-init: no cgroup2"
mount -t tmpfs tmpfs /tmp

arg() {
	local w line val=$2
	read -r line </proc/cmdline
	for w in $line; do
		case $w in
		lava_kselftest.$1=*) val=${w#*=} ;;
		esac
	done
	echo "$val"
}

echo "lava-init: $(uname -a)"
echo "lava-init: timeout is $(readlink -f /usr/bin/timeout): $(/usr/bin/timeout --version 2>&1 | head -n1)"
echo "lava-init: online CPUs $(cat /sys/devices/system/cpu/online)"

rc=0
if [ "$(arg run 1)" != 1 ]; then
	echo "lava-init: lava_kselftest.run=$(arg run 1): tests not run by init"
elif [ -x /opt/kselftest/run_kselftest.sh ]; then
	# shellcheck disable=SC2046 # the split is the point
	set -- $(arg args "" | tr , ' ')
	echo "LAVA-KSELFTEST-START args=$*"
	cd /opt/kselftest && ./run_kselftest.sh "$@" </dev/null 2>&1
	rc=$?
	cd /
else
	echo "LAVA-KSELFTEST-START args=none"
	echo "not ok 1 selftests: lava: ramdisk # /opt/kselftest/run_kselftest.sh missing"
	rc=1
fi
[ "$(arg run 1)" != 1 ] || echo "LAVA-KSELFTEST-END rc=$rc"
sync
if [ "$(arg shell 0)" = 1 ]; then
	setsid cttyhack sh
fi
reboot -f
while :; do sleep 60; done
