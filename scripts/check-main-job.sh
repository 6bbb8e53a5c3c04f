#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Did the main job run everything it set out to?  A job that dies before
# its first boot (a kernel that does not build, an archive that fails a
# download) leaves no guest rows, and a summary of the rest would pass.
#
# Usage: scripts/check-main-job.sh [-h] RESULTS [EXIT]
#
#   RESULTS  the results directory of scripts/run-tests.sh
#   EXIT     run-tests.sh's exit status, for the message (default 0)
#
# run-tests.sh writes RESULTS/guests.txt first: each guest it will boot
# and the tests it will run there.  Every guest must then have its
# verdict.txt (the boot happened and was judged) and every test its
# TEST.rc (run-guest.sh's split of the runner's result line; a test the
# runner gave no result gets one too, 127, and summarize.sh fails it).  Prints one line per guest, then a
# "FAIL:" line naming each missing guest or test; exits 1 when any is
# missing or guests.txt is.
set -euo pipefail

usage() {
	sed -n '3,19s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
[[ ${1:-} == -h || ${1:-} == --help ]] && usage 0
[[ $# -ge 1 && $# -le 2 ]] || usage 2
res=$1
rc=${2:-0}
if [[ ! -s $res/guests.txt ]]; then
	echo "FAIL: the main job (exit $rc) died before it chose its guests: no $res/guests.txt"
	exit 1
fi
missing=()
nguests=0
ncases=0
while read -r g tests; do
	[[ -n $g ]] || continue
	nguests=$((nguests + 1))
	if [[ ! -f $res/$g/verdict.txt ]]; then
		echo "$g: not booted"
		missing+=("$g (not booted)")
		continue
	fi
	n=0
	for t in $tests; do
		if [[ -s $res/$g/$t.rc ]]; then
			n=$((n + 1))
		else
			missing+=("$g/$t (no result)")
		fi
	done
	ncases=$((ncases + n))
	echo "$g: booted, $n of $(wc -w <<<"$tests") tests with results"
done <"$res/guests.txt"
if [[ $nguests -eq 0 ]]; then
	echo "FAIL: the main job (exit $rc) set out to boot no guest"
	exit 1
fi
if [[ ${#missing[@]} -gt 0 ]]; then
	echo "FAIL: the main job (exit $rc) left out ${missing[*]}"
	exit 1
fi
echo "ok: $nguests guests booted, $ncases tests with results"
