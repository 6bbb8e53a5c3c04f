# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by lava-run.sh and lava-lab.sh: the job definitions both run.

# job_urls JOB OUT KARGS URL...: write JOB to OUT with its image URLs (the
# "url:" lines, in order: kernel, ramdisk, kselftest tarball, and for
# arm64 the dtb) replaced by the URLs given, one each, and KARGS (when
# not empty) appended to the kernel command line.  Fails when the counts
# differ or the command line is not where the jobs have it.
job_urls() {
	local job=$1 out=$2 kargs=$3 u n
	shift 3
	for u in "$@"; do
		# The URL goes into a QEMU command line unquoted.
		[[ $u =~ ^[A-Za-z0-9._/:+-]+$ ]] ||
			{ echo "job_urls: '$u': only [A-Za-z0-9._/:+-] in URLs" >&2; return 1; }
	done
	[[ -z $kargs || $kargs =~ ^[A-Za-z0-9._/=,:+\ -]+$ ]] ||
		{ echo "job_urls: kernel arguments '$kargs': only [A-Za-z0-9._/=,:+ -]" >&2; return 1; }
	n=$(grep -cE '^ *url: ' "$job")
	[[ $n -eq $# ]] || { echo "job_urls: $job has $n image URLs, $# given" >&2; return 1; }
	awk -v urls="$*" -v kargs="$kargs" '
		BEGIN { split(urls, u, " ") }
		/^ *url: / { sub(/url: .*/, "url: " u[++i]) }
		kargs != "" && /^ *image_arg: -kernel \{kernel\} -append "[^"]*"$/ { sub(/"$/, " " kargs "\""); k = 1 }
		{ print }
		END { exit (kargs != "" && !k) }' "$job" >"$out" ||
		{ echo "job_urls: $job: no kernel command line to append '$kargs' to" >&2; return 1; }
}

# job_tags JOB OUT TAGS: JOB with a "tags:" list of TAGS (comma
# separated; none: JOB as it is) after its device_type line, so that the
# scheduler gives it only a device with those tags.
job_tags() {
	local job=$1 out=$2 tags=$3
	[[ $tags =~ ^[A-Za-z0-9_.,-]*$ ]] || { echo "job_tags: bad tags '$tags'" >&2; return 1; }
	awk -v tags="$tags" '
		{ print }
		/^device_type: / && tags != "" {
			print "tags:"
			n = split(tags, t, ",")
			for (i = 1; i <= n; i++) print "- " t[i]
		}' "$job" >"$out"
}
