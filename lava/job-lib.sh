# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by lava-run.sh and lava-lab.sh: the job definition both run.

# job_urls JOB OUT KERNEL_URL RAMDISK_URL TAR_URL [KARGS]: write JOB to OUT
# with its three image URLs replaced, and KARGS appended to the kernel
# command line when given.  Fails when a URL or the command line is not
# found where job-x86_64.yaml has it.
job_urls() {
	local job=$1 out=$2 k=$3 r=$4 t=$5 kargs=${6:-} u
	for u in "$k" "$r" "$t"; do
		# The URL goes into a sed replacement and a QEMU command line unquoted.
		[[ $u =~ ^[A-Za-z0-9._/:+-]+$ ]] ||
			{ echo "job_urls: '$u': only [A-Za-z0-9._/:+-] in URLs" >&2; return 1; }
	done
	[[ -z $kargs || $kargs =~ ^[A-Za-z0-9._/=,:+\ -]+$ ]] ||
		{ echo "job_urls: kernel arguments '$kargs': only [A-Za-z0-9._/=,:+ -]" >&2; return 1; }
	sed -e "s#url: file:///var/cache/schedseries/lava/bzImage\$#url: $k#" \
		-e "s#url: file:///var/cache/schedseries/lava/lava-ramdisk-x86_64.cpio.gz\$#url: $r#" \
		-e "s#url: file:///var/cache/schedseries/lava/kselftest.tar.gz\$#url: $t#" \
		${kargs:+-e "s#^\( *image_arg: -kernel {kernel} -append \"[^\"]*\)\"\$#\1 $kargs\"#"} \
		"$job" >"$out" || return 1
	for u in "$k" "$r" "$t"; do
		grep -qF "url: $u" "$out" || { echo "job_urls: $job: cannot point a URL at $u" >&2; return 1; }
	done
	[[ -z $kargs ]] || grep -qF " $kargs\"" "$out" ||
		{ echo "job_urls: $job: no kernel command line to append '$kargs' to" >&2; return 1; }
}
