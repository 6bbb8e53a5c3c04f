# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the harness scripts.  Sourced, never run.
# shellcheck shell=bash
# shellcheck disable=SC2034 # variables set here are used by the sourcing scripts

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SCHED_CACHE:-/var/cache/schedseries}
BASE_TARBALL=${BASE_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
# Depend mode: a miss compiles once instead of preprocessing first, and
# kbuild's -Wp,-MMD gives ccache the headers.  Measured on kernel/ and mm/
# of the x86_64 config from an empty cache: 96-102 s against 110-115 s in
# the default mode and 78-97 s without ccache; a second O= directory still
# hit 214 of 214.  Depend mode never sees what an .incbin pulls in, so
# scripts/kcc.sh, our CC, keeps such sources away from ccache.
export CCACHE_DEPEND=${CCACHE_DEPEND:-1}
T0=${T0:-$(date +%s)}
export T0

# The kernel tree we build: KSRC when given, else our quilt tree.
tree_dir() {
	if [[ -n ${KSRC:-} ]]; then
		echo "$KSRC"
	else
		echo "$CACHE/tree"
	fi
}

progress() {
	printf '[%4ds] %s\n' "$(($(date +%s) - T0))" "$*"
}

die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}

# need_pkgs PKG... : install the Debian packages that are missing, saying so.
need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[[ ${#missing[@]} -eq 0 ]] && return 0
	progress "installing Debian packages: ${missing[*]}"
	[[ $(id -u) -eq 0 ]] || die "missing packages ${missing[*]} and not root to install them"
	if [[ ! -f $CACHE/.apt-updated ]] ||
	   [[ -n $(find "$CACHE/.apt-updated" -mmin +720 2>/dev/null) ]]; then
		apt-get update -qq >/dev/null || die "apt-get update failed"
		mkdir -p "$CACHE" && touch "$CACHE/.apt-updated"
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >"$CACHE/apt.log" 2>&1 ||
		die "apt-get install ${missing[*]} failed, see $CACHE/apt.log"
}

# Cross prefix and image name per architecture.
arch_vars() {
	case $1 in
	x86_64)
		KARCH=x86_64 CROSS='' KIMAGE=arch/x86/boot/bzImage ;;
	arm64)
		KARCH=arm64 CROSS=${CROSS_COMPILE_ARM64:-aarch64-linux-gnu-}
		KIMAGE=arch/arm64/boot/Image ;;
	*)
		die "unknown architecture '$1' (x86_64 or arm64)" ;;
	esac
}

# run_logged LOG CMD... : run CMD with output in LOG; on failure show its tail.
run_logged() {
	local log=$1
	shift
	if ! "$@" >"$log" 2>&1; then
		tail -n 25 "$log" >&2
		return 1
	fi
}

# The patch names listed in patches/series, one a line.
series_list() {
	grep -v '^[[:space:]]*\(#\|$\)' "$REPO/patches/series" | awk '{print $1}' || true
}

# Hash of patches/series and every patch it lists.
series_hash() {
	(
		cd "$REPO/patches" || exit
		cat series
		series_list | while read -r p; do cat "$p"; done
	) | sha256sum | cut -c1-16
}

# "patch sha256" for every patch of the series: what prepare-tree.sh records
# in the tree as applied.
series_stamp() {
	series_list | while read -r p; do
		echo "$p $(sha256sum <"$REPO/patches/$p" | cut -c1-16)"
	done
}

# guest_arch NAME: the GUEST_ARCH of guests/NAME.conf.
guest_arch() {
	[[ -f $REPO/guests/$1.conf ]] || die "unknown guest '$1' (see guests/*.conf)"
	sed -n 's/^GUEST_ARCH=//p' "$REPO/guests/$1.conf"
}

# host_busy_pct [SECS]: how busy the host's CPUs were over SECS (default
# 2) seconds, in percent of all CPUs, from /proc/stat.
host_busy_pct() {
	local a b
	a=$(head -n1 /proc/stat)
	sleep "${1:-2}"
	b=$(head -n1 /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN {
		na = split(a, x, " "); split(b, y, " ")
		for (i = 2; i <= na; i++) { d = y[i] - x[i]; tot += d; if (i == 5 || i == 6) idle += d }
		printf "%d", tot ? 100 * (tot - idle) / tot : 0 }'
}

# wait_host_idle WHAT: timed guest tests need the host to themselves.  Wait
# up to HOST_IDLE_WAIT (default 60) seconds for the host to be under
# HOST_BUSY_MAX (default 40) percent busy; print a warning and return 1
# when it never is (the caller goes on, and records it).  HOST_BUSY holds
# the last reading.
wait_host_idle() {
	local what=$1 waited=0 max=${HOST_IDLE_WAIT:-60}
	while :; do
		HOST_BUSY=$(host_busy_pct 2)
		[[ $HOST_BUSY -le ${HOST_BUSY_MAX:-40} ]] && return 0
		if [[ $waited -ge $max ]]; then
			progress "WARNING: host ${HOST_BUSY}% busy before $what after waiting ${waited}s: timing checks may flake"
			return 1
		fi
		[[ $waited -eq 0 ]] && progress "host ${HOST_BUSY}% busy before $what; waiting up to ${max}s for it to settle"
		sleep 3
		waited=$((waited + 5))
	done
}

# base_info: what every result records (base kernel, series, this
# repository, date, host), one "key: value" line each.  Needs the tree
# prepared by scripts/prepare-tree.sh.
base_info() {
	echo "base: $(head -n1 "$(tree_dir)/.schedseries-base")"
	echo "series: $(series_hash) ($(series_list | wc -l) patches)"
	echo "repo: $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -srm), $(nproc) CPUs, $(qemu-system-x86_64 --version | head -n1)"
}

# tools_userland ARCH: the Debian tools root (scripts/mk-rootfs.sh) and an
# initramfs without selftests, for guests that run programs from /tools
# (run-guest.sh -r).  Progress goes to stderr; prints "ROOTFS INITRAMFS".
tools_userland() {
	local root initrd=$CACHE/initramfs-$1-plain.cpio.gz
	root=$("$REPO/scripts/mk-rootfs.sh" "$1" | tee >(grep -v '^/' >&2) | tail -n1)
	"$REPO/scripts/mk-initramfs.sh" "$1" "$initrd" >&2
	echo "$root $initrd"
}

# base_kernel: the x86_64 bzImage of the unpatched base, for the bench and
# the SKIP check of test-mutations.sh.  The tree goes back to no patch
# applied, is built into out/x86_64-base, and gets the whole series again.
# Rebuilt only when the base or the configs change (the stamp records
# both).  Needs the tree prepared by scripts/prepare-tree.sh.  Progress
# goes to stderr; prints the image path.
base_kernel() {
	local tree bout=$CACHE/out/x86_64-base want rc=0
	tree=$(tree_dir)
	want="$(head -n1 "$tree/.schedseries-base") $(cat "$REPO"/configs/{common,x86_64}.config | sha256sum | cut -c1-16)"
	if [[ -f $bout/arch/x86/boot/bzImage && $(cat "$bout/.schedseries-base-built" 2>/dev/null) == "$want" ]]; then
		progress "base kernel $bout is up to date" >&2
		echo "$bout/arch/x86/boot/bzImage"
		return
	fi
	"$REPO/scripts/prepare-tree.sh" -n 0 >&2
	"$REPO/scripts/build-kernel.sh" -n x86_64-base x86_64 >&2 || rc=$?
	"$REPO/scripts/prepare-tree.sh" >&2
	[[ $rc -eq 0 ]] || die "base kernel build failed, log $bout/build.log"
	echo "$want" >"$bout/.schedseries-base-built"
	echo "$bout/arch/x86/boot/bzImage"
}
