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
