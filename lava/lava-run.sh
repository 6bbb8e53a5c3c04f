#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the LAVA kselftest job on this machine with lava-run (no LAVA server).
#
# Usage: lava-run.sh [-h] [-n] [-j JOB] [-d DEVICE] [-o OUTDIR] [-t TIMEOUT]
#                    KERNEL RAMDISK KSELFTEST_TAR
#
#   KERNEL         bzImage, e.g. $SCHED_CACHE/out/x86_64/arch/x86/boot/bzImage
#   RAMDISK        from mk-lava-ramdisk.sh (gzip'd newc cpio)
#   KSELFTEST_TAR  kselftest.tar.gz from
#                  scripts/kselftest-tarball.sh (make ... TARGETS=sched gen_tar)
#   -j JOB         job definition (default: job-x86_64.yaml next to this script)
#   -d DEVICE      rendered device YAML (default: device-x86_64.yaml here)
#   -o OUTDIR      results directory (default results/lava-STAMP in this repository)
#   -t TIMEOUT     seconds before lava-run is stopped (default 900)
#   -n             check only: schema, then lava-run --validate (no boot)
#
# Needs root and lava-dispatcher (apt-get install lava-dispatcher).  The
# job's three file:// URLs are pointed at KERNEL, RAMDISK and
# KSELFTEST_TAR in OUTDIR/job.yaml, which is checked with LAVA's schema
# (validate.py) and then run:
#   lava-run --job-id ID --output-dir OUTDIR/lava --device DEVICE \
#            --dispatcher dispatcher.yaml OUTDIR/job.yaml
# lava-run copies the images into /var/lib/lava/dispatcher/tmp/ID/ (fixed
# in lava-dispatcher, removed when the job ends).  OUTDIR gets lava.log
# (lava-run's YAML log: console as lvl "target", test cases as lvl
# "results"), lava/result.yaml (the job's pass/fail), lava/description.yaml,
# results.yaml and summary.txt (from lava-results.py).  Exit status 0 when
# the job passed and no test case failed.
set -euo pipefail

usage() {
	sed -n '4,33s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
die() {
	echo "lava-run.sh: $*" >&2
	exit 1
}

here=$(cd "$(dirname "$0")" && pwd)
job=$here/job-x86_64.yaml
device=$here/device-x86_64.yaml
outdir=
tmo=900
validate=()
while getopts hnj:d:o:t: opt; do
	case $opt in
	h) usage 0 ;;
	n) validate=(--validate) ;;
	j) job=$OPTARG ;;
	d) device=$OPTARG ;;
	o) outdir=$OPTARG ;;
	t) tmo=$OPTARG ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 3 ]] || usage 2
[[ $tmo =~ ^[1-9][0-9]*$ ]] || die "bad timeout '$tmo' (seconds, > 0)"
[[ $(id -u) -eq 0 ]] || die "lava-run must run as root"
command -v lava-run >/dev/null || die "no lava-run (apt-get install lava-dispatcher)"
[[ -f $job ]] || die "no job '$job'"
[[ -f $device ]] || die "no device '$device'"
# shellcheck source=job-lib.sh
. "$here/job-lib.sh"
dispatcher=$here/dispatcher.yaml
[[ -f $dispatcher ]] || die "no dispatcher configuration '$dispatcher'"

paths=()
for f in "$@"; do
	[[ -f $f ]] || die "no file '$f'"
	paths+=("$(realpath "$f")")
done

outdir=${outdir:-$here/../results/lava-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$outdir"
outdir=$(realpath "$outdir")
job_id=$(basename "$outdir" | tr -c 'A-Za-z0-9_.\n-' '_')
[[ ! -e /var/lib/lava/dispatcher/tmp/$job_id ]] ||
	die "job id '$job_id' in use (/var/lib/lava/dispatcher/tmp/$job_id): pick another -o"

job_urls "$job" "$outdir/job.yaml" "" "file://${paths[0]}" "file://${paths[1]}" \
	"file://${paths[2]}" || die "cannot write $outdir/job.yaml"

"$here/validate.py" --device "$device" "$outdir/job.yaml"

echo "lava-run.sh: lava-run --job-id $job_id, log in $outdir/lava.log" >&2
rc=0
timeout -k 30 "$tmo" lava-run "${validate[@]}" --job-id "$job_id" \
	--output-dir "$outdir/lava" --device "$device" --dispatcher "$dispatcher" \
	"$outdir/job.yaml" \
	>"$outdir/lava.log" 2>&1 || rc=$?
echo "lava-run exit status: $rc" >"$outdir/lava-run.rc"
[[ $rc -ne 124 ]] || echo "lava-run.sh: lava-run stopped after ${tmo}s" >&2
if [[ ${#validate[@]} -gt 0 ]]; then
	# --validate leaves its empty download directories behind.
	rm -rf "/var/lib/lava/dispatcher/tmp/$job_id"
	tail -n 3 "$outdir/lava.log"
	exit "$rc"
fi

src=0
"$here/lava-results.py" --job-result "$outdir/lava/result.yaml" \
	"$outdir/lava.log" "$outdir/results.yaml" | tee "$outdir/summary.txt" || src=$?
[[ $rc -eq 0 && $src -eq 0 ]]
