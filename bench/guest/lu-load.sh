#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The 2019 LB_CLASSIFY shape (NPB lu.C) as one command for make ab
# (POSIX sh, for busybox): barrier-synchronised workers (schedbench lu),
# two fewer than the CPUs, in a cgroup of cpu.weight 1, beside
# two nice-0 hogs.  Needs two NUMA nodes and cgroup v2's cpu controller.
#
# Usage: lu-load.sh [-h] [-c CASE] [-n ITERS]
#
#   -c CASE    GROUP: the hogs in a cgroup of their own, as the seed's
#              "group imbalance" case; NORMAL: in the workers' (default
#              GROUP)
#   -n ITERS   barrier iterations of 3 ms work each (default 200)
#
# The workers' load per task is below a node's CPU count, as the 76 lu
# threads' (1024 / 76) was below the 20 CPUs of the seed's nodes.  Prints
# one line of key=value words, which make ab records as figures:
# threads, time (s), ops_per_s, samples, workers_nodeN and hogs_nodeN
# (mean tasks on node N over the samples), worker_node_moves and
# hog_node_moves.  The output of schedbench lu stays in
# /tmp/lu-load.log.  Exits 1 when it fails, 4 on one node.
set -u

usage() {
	sed -n '5,/^# \/tmp\/lu-load.log\.  Exits/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
case=GROUP
iters=200
while getopts hc:n: opt; do
	case $opt in
	h) usage 0 ;;
	c) case=$OPTARG ;;
	n) iters=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage 2
case $case in GROUP | NORMAL) ;; *) echo "lu-load: bad -c '$case' (GROUP or NORMAL)" >&2; exit 2 ;; esac
case $iters in '' | *[!0-9]* | 0*) echo "lu-load: bad -n '$iters'" >&2; exit 2 ;; esac
command -v schedbench >/dev/null || { echo "lu-load: no schedbench in PATH" >&2; exit 1; }
[ -d /sys/devices/system/node/node1 ] || { echo "lu-load: one NUMA node only" >&2; exit 4; }
CG=/sys/fs/cgroup
fail() {
	echo "lu-load: $*" >&2
	exit 1
}
grep -q cgroup2 /proc/mounts || mount -t cgroup2 none "$CG" || fail "cannot mount cgroup2"
echo +cpu >"$CG/cgroup.subtree_control" || fail "no cpu controller"
mkdir -p "$CG/lu-load-a" "$CG/lu-load-b"
echo 1 >"$CG/lu-load-a/cpu.weight" || fail "cannot set cpu.weight"
# Let a feature just written settle.
sleep 0.5
n=$(grep -c '^processor' /proc/cpuinfo)
threads=$((n - 2))
hg=$CG/lu-load-b
[ "$case" = NORMAL ] && hg=$CG/lu-load-a
hogs=
for _ in 1 2; do
	schedbench hog &
	echo $! >"$hg/cgroup.procs"
	hogs=$hogs${hogs:+,}$!
done
sb=$(command -v schedbench)
rc=0
# A bound well above the 10x TCG slowdown seen in probes.
timeout $((iters + 120)) sh -c "echo \$\$ >$CG/lu-load-a/cgroup.procs &&
	exec $sb lu -S -t $threads -n $iters -w 3000 -s 100 -p $hogs" >/tmp/lu-load.log 2>&1 || rc=$?
# shellcheck disable=SC2046 # PIDs, split on purpose
kill $(echo "$hogs" | tr , ' ')
wait
rmdir "$CG/lu-load-a" "$CG/lu-load-b" 2>/dev/null
[ "$rc" -eq 0 ] || fail "schedbench lu exited $rc (busybox timeout: 143), see /tmp/lu-load.log"
grep '^threads=' /tmp/lu-load.log | awk '{
	for (i = 1; i <= NF; i++) {
		p = index($i, "="); k = substr($i, 1, p - 1); v = substr($i, p + 1)
		if (k == "workers_per_node" || k == "hogs_per_node") {
			m = split(v, a, "/")
			for (j = 1; j <= m; j++)
				out = out sprintf(" %s_node%d=%s", k == "hogs_per_node" ? "hogs" : "workers", j - 1, a[j])
		} else
			out = out " " $i
	}
	print substr(out, 2); f = 1 } END { exit !f }' || fail "no result, see /tmp/lu-load.log"
