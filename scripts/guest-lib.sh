# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the guest-side scripts (mk-dtb.sh, run-guest.sh).
# Sourced after lib.sh, never run.
# shellcheck shell=bash
# shellcheck disable=SC2034 # GUEST_* are used by the sourcing scripts

# Console lines that fail a run: kernel splats of any kind.  GUEST_BENIGN
# are lines that match but are no splat: the boot banner of CONFIG_PROVE_RCU.
# The taint line: the kernel prints it at its first taint of any kind (an
# i386 guest on QEMU's AMD-like max CPU model was tainted with no other
# line to show it).
GUEST_BADNESS='BUG:|WARNING:|lockdep|possible recursive locking|INFO: rcu_.*stall|KASAN|UBSAN|Oops|due to kernel taint'
GUEST_BENIGN='RCU lockdep checking is enabled'

# console_badness FILE : the splat lines of a console log, in order (not
# our own SCHEDSERIES- lines, which carry test output).
console_badness() {
	tr -d '\r' <"$1" | grep -v '^SCHEDSERIES-' | grep -v -E "$GUEST_BENIGN" |
		grep -E "$GUEST_BADNESS" || true
}

# guest_load NAME|PATH : source guests/NAME.conf (or PATH) and check that the
# keys every guest needs are there.  Sets GUEST_NAME and GUEST_CONF.
guest_load() {
	local g=$1 k
	if [[ -f $g ]]; then
		GUEST_CONF=$(realpath "$g")
	elif [[ -f $REPO/guests/$g.conf ]]; then
		GUEST_CONF=$REPO/guests/$g.conf
	else
		local have=("$REPO"/guests/*.conf)
		have=("${have[@]##*/}")
		die "no guest '$g' (have: ${have[*]%.conf})"
	fi
	GUEST_NAME=$(basename "$GUEST_CONF" .conf)
	# shellcheck source=/dev/null
	. "$GUEST_CONF"
	for k in GUEST_ARCH QEMU QEMU_MACHINE QEMU_ACCEL QEMU_CPU QEMU_SMP QEMU_MEM \
		 QEMU_9P_DEVICE KERNEL_CONSOLE DTB EXPECT_NCPUS EXPECT_NODES; do
		[[ -n ${!k:-} ]] || die "$GUEST_CONF: $k is not set"
	done
}

# accel_check ACCEL: die unless ACCEL is an -accel the guests take
# (TCG, single- or multi-threaded: there is no KVM here).
accel_check() {
	[[ $1 =~ ^tcg,thread=(single|multi)$ ]] ||
		die "bad accelerator '$1' (tcg,thread=single or tcg,thread=multi: there is no KVM here)"
}

# guest_qemu : after guest_load, for a guest that boots or whose DTB is
# dumped: with QEMU_SUITE, QEMU becomes that Debian suite's binary (lib.sh,
# qemu_from_suite) instead of the host's, and QEMU_DATA its data
# directory, then the host's, as -L options; with QEMU_SUITE set empty,
# the host's QEMU and an empty QEMU_DATA.  QEMU_SUITE defaults to
# bookworm-backports (QEMU 10): bookworm's QEMU 7.2 under multi-threaded
# TCG let a vCPU run stale code across a static-key patch
# (Documentation/harness/notes/qemu-stale-branch.md).
guest_qemu() {
	QEMU_DATA=()
	QEMU_SUITE=${QEMU_SUITE-bookworm-backports}
	[[ -n $QEMU_SUITE ]] || return 0
	QEMU=$(qemu_from_suite "$QEMU_SUITE" "$QEMU") ||
		die "$GUEST_CONF: no QEMU from $QEMU_SUITE"
	QEMU_DATA=(-L "${QEMU%/bin/*}/share/qemu" -L /usr/share/qemu)
}

# cpulist_expand LIST : "0-2,5" -> "0 1 2 5"
cpulist_expand() {
	local part out=() i
	local -a parts
	IFS=, read -ra parts <<<"$1"
	for part in "${parts[@]}"; do
		if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
			for ((i = BASH_REMATCH[1]; i <= BASH_REMATCH[2]; i++)); do
				out+=("$i")
			done
		elif [[ $part =~ ^[0-9]+$ ]]; then
			out+=("$part")
		else
			die "bad CPU list '$1' (at '$part')"
		fi
	done
	echo "${out[*]}"
}

# ktap_split TAP DIR TEST... : split the TAP that run_kselftest.sh printed
# into DIR/T.tap (the test's own TAP, the runner's "# " taken off) and
# DIR/T.rc (the exit status the runner's result line gives: 0 for ok,
# 4 for "# SKIP", 124 for "# TIMEOUT", N for "# exit=N", 1 otherwise)
# for each TEST.  A TEST with no result line gets a "not ok" T.tap naming
# it and rc 127, once the run ended (TAP's .rc file is there): a test
# missing from the install list fails the run.
ktap_split() {
	local tap=$1 dir=$2 t
	shift 2
	# The runner prints a header only after the previous result line, so
	# a header inside a test is the test's own output.  A test whose
	# last line has no newline gets the result line appended to it.
	tr -d '\r' <"$tap" | awk -v dir="$dir" '
		t == "" && /^# selftests: [^:]+: / {
			t = $0; sub(/^# selftests: [^:]+: /, "", t)
			f = dir "/" t ".tap"; printf "" >f; next
		}
		match($0, /(not )?ok [0-9]+ selftests: [^:]+: /) && (RSTART == 1 || t != "") {
			if (RSTART > 1) {
				pre = substr($0, 1, RSTART - 1)
				if (pre ~ /^# /) print substr(pre, 3) >f
			}
			r = substr($0, RSTART)
			n = r; sub(/^(not )?ok [0-9]+ selftests: [^:]+: /, "", n); sub(/ .*/, "", n)
			rc = 1
			if (r ~ /^ok/) rc = r ~ /# *SKIP/ ? 4 : 0
			else if (r ~ /# TIMEOUT/) rc = 124
			else if (match(r, /# exit=[0-9]+/)) rc = substr(r, RSTART + 7, RLENGTH - 7)
			print rc >(dir "/" n ".rc")
			if (n == t) close(f)
			t = ""; next
		}
		t != "" && /^# / { print substr($0, 3) >f }'
	[[ -f ${tap%.tap}.rc ]] || return 0
	local why other
	# What else it said: "No such test 'sched:T'" for a test not in its
	# kselftest-list.txt, and then it runs none.
	other=$(tr -d '\r' <"$tap" | grep -m1 -vE '^(#|TAP version|[0-9]+\.\.[0-9]+|(not )?ok [0-9])' || true)
	for t in "$@"; do
		[[ -f $dir/$t.rc ]] && continue
		if grep -q "^No such test 'sched:$t'" "$tap"; then
			why="run_kselftest.sh: No such test 'sched:$t' (not in its kselftest-list.txt)"
		else
			why="no result from run_kselftest.sh -t sched:$t${other:+; it said: $other}"
		fi
		echo "not ok 1 $t: $why" >>"$dir/$t.tap"
		echo 127 >"$dir/$t.rc"
	done
}

# Under TCG every vCPU runs at the host's speed.  For a guest with
# asymmetric capacity (EXPECT_CAPACITY) each vCPU's QEMU thread (from QMP
# query-cpus-fast) goes into a host cgroup of its own whose CPU weight is
# the vCPU's capacity: while the vCPUs contend for the host's CPUs (more
# of them busy than host CPUs run them) a little one then gets less host
# time than a big one, cap/1024 of it where the host spreads the weights
# evenly over its CPUs (measured with 446/1024 on 2 host CPUs: 0.51-0.59,
# scripts/test-throttle.sh).  A weight limits nothing on an idle host
# CPU: a little vCPU with a host CPU to itself runs at full speed.  So
# the vCPU threads run on the last H of QEMU's host CPUs, H = 2 unless
# THROTTLE_HOST_CPUS=N: the 2-CPU shape every figure of
# Documentation/harness/notes/throttled-littles.md was measured in, the
# same on a large host.  How the host places the threads on those H CPUs
# decides the rest.  A quota (CFS bandwidth) would limit a lone little
# too, but a stopped vCPU thread stalls the running ones (the note).
# Instruction counting cannot make a CPU slower.
#
# The cgroups: the v1 cpu controller (cpu.shares = capacity, tasks) where
# the host mounts one, else the unified v2 hierarchy with the cpu
# controller (cpu.weight = capacity * 100 / 1024): QEMU moves into a group
# of its own whose vCPU threads each get a threaded child (cgroup.type
# "threaded", cgroup.threads), the v2 way to give threads of one process
# their own weights.  The v2 parent is the root of the cgroup2 mount
# (QEMU then leaves its systemd unit for the boot), or THROTTLE_CG2: a
# cgroup with cpu among its controllers and no processes of its own,
# inside whose subtree the harness already runs, so that it may move
# QEMU there.  THROTTLE_CGROUP=v1 or v2 takes only that one (default:
# auto, v1 first).  The v2 path has not run on this project's hosts,
# where v1 holds the cpu controller.

# guest_asym GUEST: true when its EXPECT_CAPACITY values differ.
guest_asym() {
	local caps
	caps=$(guest_load "$1" && echo "${EXPECT_CAPACITY:-}")
	[[ $(tr , '\n' <<<"$caps" | grep . | sort -u | wc -l) -gt 1 ]]
}

# qmp_threads SOCKET: query-cpus-fast as "cpu-index thread-id" lines.
qmp_threads() {
	printf '%s\n' '{"execute":"qmp_capabilities"}' '{"execute":"query-cpus-fast"}' |
		socat -t 3 - "UNIX-CONNECT:$1" |
		jq -r 'select(.return | type == "array") | .return[] | "\(."cpu-index") \(."thread-id")"'
}

# The v1 cpu controller's mount, and the v2 parent of the groups:
# THROTTLE_CG2, else the cgroup2 mount.
THROTTLE_V1=/sys/fs/cgroup/cpu
throttle_v2() {
	echo "${THROTTLE_CG2:-$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)}"
}

# cg2_cpu DIR: the cpu controller enabled for DIR's children.
cg2_cpu() {
	grep -qw cpu "$1/cgroup.subtree_control" || echo +cpu >"$1/cgroup.subtree_control"
}

# throttle_how: where vCPU threads can be weighted: prints "v1 DIR" or
# "v2 DIR" (the parent of throttle_littles' groups), or fails printing
# why neither works, or why THROTTLE_CGROUP or THROTTLE_HOST_CPUS is bad.
throttle_how() {
	local want=${THROTTLE_CGROUP:-auto} v1=$THROTTLE_V1 v2 why=''
	case $want in auto | v1 | v2) ;; *) echo "THROTTLE_CGROUP='$want' is none of auto v1 v2"; return 1 ;; esac
	[[ ${THROTTLE_HOST_CPUS:-2} =~ ^[1-9][0-9]{0,3}$ ]] ||
		{ echo "THROTTLE_HOST_CPUS='$THROTTLE_HOST_CPUS' is no number of host CPUs"; return 1; }
	if [[ $want != v2 ]]; then
		if [[ -f $v1/cpu.shares && -w $v1 ]]; then
			echo "v1 $v1"
			return 0
		fi
		why="no writable cgroup v1 cpu controller at $v1"
	fi
	if [[ $want != v1 ]]; then
		v2=$(throttle_v2)
		if [[ -z $v2 ]]; then
			why+="${why:+; }no cgroup2 hierarchy mounted"
		elif ! grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null; then
			why+="${why:+; }the cgroup v2 hierarchy at $v2 has no cpu controller (its cgroup.controllers: $(cat "$v2/cgroup.controllers" 2>/dev/null)); where v1 holds it, v2 cannot"
		elif [[ ! -w $v2 || ! -w $v2/cgroup.subtree_control ]]; then
			why+="${why:+; }$v2 is not writable (THROTTLE_CG2: a delegated cgroup of yours)"
		elif [[ -n ${THROTTLE_CG2:-} && -s $v2/cgroup.procs ]]; then
			why+="${why:+; }THROTTLE_CG2=$v2 holds processes (it must hold none: give a cgroup beside them)"
		else
			echo "v2 $v2"
			return 0
		fi
	fi
	echo "$why"
	return 1
}

# throttle_littles GUEST SOCKET DIR: put each vCPU thread of the guest
# QEMU serves at SOCKET (run-guest.sh -Q) in a host cgroup weighted by its
# capacity (throttle_how says where); writes DIR/throttle.txt either way,
# "not throttled: why" when the host refuses, and returns 1 then.
throttle_littles() {
	local g=$1 sock=$2 dir=$3 caps i cpu tid w n=0 why='' threads cg how base pid hcpus=() h pin=''
	caps=$(guest_load "$g" && echo "$EXPECT_CAPACITY")
	IFS=, read -ra capv <<<"$caps"
	for ((i = 0; i < 100; i++)); do
		[[ -S $sock ]] && break
		sleep 0.1
	done
	threads=$(qmp_threads "$sock" 2>"$dir/qmp.err") || true
	if [[ -z $threads ]]; then
		why="QMP query-cpus-fast gave nothing ($(head -c 200 "$dir/qmp.err"))"
	elif ! how=$(throttle_how); then
		why=$how
	fi
	if [[ -z $why ]]; then
		base=${how#* }
		echo "cgroup ${how%% *} at $base" >>"$dir/throttle.txt"
		pid=$(awk '/^Tgid:/ { print $2 }' "/proc/$(head -n1 <<<"$threads" | cut -d' ' -f2)/status")
		# QEMU's host CPUs, and the last H of them (all where it has no
		# more).  Set on every vCPU thread after any cgroup move, which
		# a v2 cpuset may follow with a reset of their affinity.
		mapfile -t hcpus < <(awk '/^Cpus_allowed_list:/ { n = split($2, r, ",")
			for (i = 1; i <= n; i++) { m = split(r[i], ab, "-"); for (c = ab[1]; c <= ab[m]; c++) print c } }' "/proc/$pid/status")
		h=${THROTTLE_HOST_CPUS:-2}
		if [[ ${#hcpus[@]} -eq 0 ]]; then
			why="no Cpus_allowed_list in /proc/$pid/status"
		else
			[[ $h -le ${#hcpus[@]} ]] || h=${#hcpus[@]}
			pin=$(IFS=,; echo "${hcpus[*]: -h}")
			echo "vCPU threads on host CPUs $pin of ${#hcpus[@]}" >>"$dir/throttle.txt"
		fi
		if [[ $how == v2* ]]; then
			# QEMU's own group, a threaded root for the vCPU groups.
			cg2_cpu "$base" ||
				why="cannot enable cpu in $base/cgroup.subtree_control (a cgroup with processes of its own cannot)"
			base=$base/schedseries-bench-$g
			[[ -n $why ]] || mkdir -p "$base" || why="mkdir $base failed"
		fi
	fi
	if [[ -z $why ]]; then
		while read -r cpu tid; do
			[[ -n ${capv[cpu]:-} ]] || { why="cpu$cpu has no capacity in EXPECT_CAPACITY"; break; }
			if [[ $how == v1* ]]; then
				# cpu.shares: 1024 is a nice-0 task's weight, a big's.
				w=${capv[cpu]}
				cg=$base/schedseries-bench-$g-cpu$cpu
				mkdir -p "$cg" && echo "$w" >"$cg/cpu.shares" && echo "$tid" >"$cg/tasks"
			else
				# cpu.weight: 100 is the default, a big's.
				w=$(((capv[cpu] * 100 + 512) / 1024))
				[[ $w -ge 1 ]] || w=1
				cg=$base/cpu$cpu
				mkdir -p "$cg" && echo threaded >"$cg/cgroup.type" &&
					{ grep -qx "$pid" "$base/cgroup.procs" || echo "$pid" >"$base/cgroup.procs"; } &&
					cg2_cpu "$base" &&
					echo "$w" >"$cg/cpu.weight" && echo "$tid" >"$cg/cgroup.threads"
			fi || { why="the host refused a weighted group at $cg"; break; }
			taskset -pc "$pin" "$tid" >/dev/null || { why="taskset -pc $pin $tid failed"; break; }
			echo "cpu$cpu thread $tid capacity ${capv[cpu]}: weight $w ($cg)" >>"$dir/throttle.txt"
			n=$((n + 1))
		done <<<"$threads"
	fi
	if [[ -n $why ]]; then
		echo "not throttled: $why" >>"$dir/throttle.txt"
		progress "$g: little vCPUs NOT slowed down: $why"
		return 1
	fi
	progress "$g: $n vCPU threads weighted by capacity (cgroup ${how%% *}) on host CPUs $pin"
}

# throttle_weighted FILE: how many vCPU threads a throttle.txt records as
# weighted (the lines throttle_littles writes for them).
throttle_weighted() {
	grep -cE '^cpu[0-9]+ thread [0-9]+ capacity [0-9]+: weight [0-9]+ ' "$1" || true
}

# unthrottle [DIR]: remove throttle_littles' groups once their threads
# have ended (waiting up to 10 s for QEMU to exit), first adding each v2
# group's CPU time (cpu.stat usage_usec) to DIR/throttle.txt; a group
# that cannot be removed is named there, or on stderr.
unthrottle() {
	local cg d=${1:-} v2 u i
	v2=$(throttle_v2)
	for cg in "$THROTTLE_V1"/schedseries-bench-* "$v2"/schedseries-bench-*/cpu* "$v2"/schedseries-bench-*; do
		[[ -d $cg ]] || continue
		for ((i = 0; i < 100; i++)); do
			if [[ -f $cg/cgroup.events ]]; then
				grep -qx 'populated 0' "$cg/cgroup.events" && break
			else
				[[ -s $cg/tasks ]] || break
			fi
			sleep 0.1
		done
		u=$(grep -E '^usage_usec ' "$cg/cpu.stat" 2>/dev/null) || true
		[[ -z $d || -z $u ]] || echo "${cg##*/}: $u" >>"$d/throttle.txt"
		rmdir "$cg" 2>/dev/null ||
			if [[ -n $d ]]; then echo "${cg##*/}: not removed ($cg)" >>"$d/throttle.txt"; else echo "unthrottle: $cg not removed" >&2; fi
	done
	return 0
}
