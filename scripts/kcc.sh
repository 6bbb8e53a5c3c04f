#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The compiler of our kernel builds (scripts/build-kernel.sh installs it
# as $SCHED_CACHE/bin/kcc, CC="kcc gcc"): runs the compile through
# ccache, unless the source file holds an .incbin.
#
# Usage: scripts/kcc.sh [-h] COMPILER [ARG...]
#
# ccache's depend mode (scripts/lib.sh) keys a result on the source, the
# command line and the headers in the compiler's dependency file.  The
# file an .incbin pulls in is none of those.  The x86 bzImage's
# arch/x86/boot/compressed/piggy.S is two sizes and an .incbin of the
# compressed vmlinux, and xz pads to 4 bytes: when a build came out with
# the sizes of an earlier one, ccache gave back the earlier piggy.o, and
# the guest booted an older kernel (seen here: a test mutant booted a
# bisect build of 90 minutes before).  So a source with .incbin compiles
# without ccache: piggy.S, the x86 realmode blob, the arm64 vDSO wrapper,
# the built-in initramfs, kernel/configs.c.
set -euo pipefail

if [[ $# -eq 0 || $1 == -h || $1 == --help ]]; then
	sed -n '3,19s/^# \{0,1\}//p' "$0"
	[[ $# -eq 0 ]] && exit 2
	exit 0
fi
for a in "$@"; do
	case $a in
	*.c | *.S | *.s)
		if [[ -f $a ]] && grep -qF .incbin "$a"; then
			exec "$@"
		fi
		;;
	esac
done
exec ccache "$@"
