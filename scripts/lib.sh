# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the harness scripts.  Sourced, never run.
# shellcheck shell=bash
# shellcheck disable=SC2034 # variables set here are used by the sourcing scripts

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SCHED_CACHE:-/var/cache/schedseries}
# The default base: Debian's newest mainline source package, from a suite
# that bookworm's apt sources do not list (scripts/prepare-tree.sh fetches it
# with a private apt configuration under $CACHE).  BASE_TARBALL=/path skips
# the fetch.
BASE_PKG=${BASE_PKG:-linux-source-7.3}
BASE_SUITE=${BASE_SUITE:-trixie-backports}
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

# The kernel tree we build: our quilt tree, or with KSRC a checkout (git)
# or copy of KSRC under the cache, one per KSRC path, so that the user's
# tree is never touched (scripts/prepare-tree.sh makes it).  SCHED_TREE
# names a tree that is built as it is (bench/research.sh's research
# kernels); scripts/prepare-tree.sh does not take it.
tree_dir() {
	if [[ -n ${SCHED_TREE:-} ]]; then
		echo "$SCHED_TREE"
	elif [[ -n ${KSRC:-} ]]; then
		echo "$CACHE/ksrc/$(realpath -m "$KSRC" | sha256sum | cut -c1-12)"
	else
		echo "$CACHE/tree"
	fi
}

# Where the kernels of tree_dir are built, one O= directory per name: a
# build directory never sees two source trees.
out_root() {
	if [[ -n ${SCHED_TREE:-} ]]; then
		echo "$SCHED_TREE.out"
	elif [[ -n ${KSRC:-} ]]; then
		echo "$(tree_dir).out"
	else
		echo "$CACHE/out"
	fi
}

progress() {
	printf '[%4ds] %s\n' "$(($(date +%s) - T0))" "$*"
}

die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}

# archive_retry CMD... : run CMD, a download from Debian's archive, up to
# ARCHIVE_TRIES (default 4) times, ARCHIVE_PAUSE (default 20) s apart, so
# that a mirror mid-sync ("File has unexpected size ... Mirror sync in
# progress?") or a timeout passes.
# Each failed try says so on stderr; the last failure is CMD's.
archive_retry() {
	local i n=${ARCHIVE_TRIES:-4}
	for ((i = 1; ; i++)); do
		"$@" && return 0
		[[ $i -lt $n ]] || return 1
		printf '[%4ds] archive: try %d of %d failed (%s), again in %s s\n' \
			"$(($(date +%s) - T0))" "$i" "$n" "$*" "${ARCHIVE_PAUSE:-20}" >&2
		sleep "${ARCHIVE_PAUSE:-20}"
	done
}

# debian_mirror: the Debian mirror this machine's apt already uses, from
# /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list.
debian_mirror() {
	local m
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }')
	[[ -n $m ]] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\/.*\/debian\/?$/) { print $i; exit } }')
	[[ -n $m ]] || die "no Debian mirror found in /etc/apt/sources.list{,.d/}"
	echo "${m%/}"
}

# apt_suite SUITE: a private apt configuration for the Debian SUITE under
# $CACHE/apt-SUITE (its own sources list, lists and cache, the mirror of
# debian_mirror; /etc/apt is not touched), with fresh lists.  Sets APT_OPT
# to the apt-get options that use it.
apt_suite() {
	local d=$CACHE/apt-$1
	need_pkgs apt debian-archive-keyring dpkg >&2
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/pkg"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_mirror) $1 main" >"$d/sources.list"
	APT_OPT=(-o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts=/dev/null
		 -o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache"
		 -o APT::Sandbox::User=root)
	archive_retry run_logged "$d/update.log" apt-get "${APT_OPT[@]}" update ||
		die "apt-get update of $1 failed, log $d/update.log"
}

# fetch_source_pkg PKG SUITE: download Debian's PKG (a linux-source-X.Y)
# from SUITE with apt_suite and unpack it in $CACHE/apt-SUITE.  Prints
# "TARBALL VERSION".  Progress goes to stderr.
fetch_source_pkg() {
	local pkg=$1 suite=$2 d=$CACHE/apt-$2 deb ver
	progress "fetching $pkg from $suite (private apt configuration in $d)" >&2
	apt_suite "$suite"
	rm -f "$d/pkg"/*.deb
	(cd "$d/pkg" && archive_retry run_logged "$d/download.log" apt-get "${APT_OPT[@]}" download "$pkg") ||
		die "$pkg is not in $suite (any more?), log $d/download.log"
	deb=$(ls "$d/pkg"/*.deb)
	ver=$(dpkg-deb -f "$deb" Version)
	rm -rf "$d/x"
	dpkg -x "$deb" "$d/x"
	[[ -f $d/x/usr/src/$pkg.tar.xz ]] || die "no usr/src/$pkg.tar.xz in $deb"
	echo "$d/x/usr/src/$pkg.tar.xz $ver"
}

# qemu_from_suite SUITE BINARY: BINARY (qemu-system-x86_64 or
# qemu-system-aarch64) from Debian's QEMU of SUITE, e.g.
# bookworm-backports for a QEMU newer than the host's: its
# qemu-system-x86 or -arm, -common and -data packages, downloaded with
# apt_suite and unpacked once into $CACHE/qemu-SUITE/PACKAGE
# (QEMU_SUITE_FRESH=1: again, at every call).  It runs with the host's
# libraries and, for the firmware its -data does not carry (SeaBIOS),
# the host's /usr/share/qemu, so the host's package of the same name
# is installed too.  Prints the binary's path; progress goes to
# stderr.  Callers check its status: it runs in $(...).
qemu_from_suite() {
	local suite=$1 bin=$2 d=$CACHE/qemu-$1 pkg deb
	case $bin in
	qemu-system-x86_64 | qemu-system-i386) pkg=qemu-system-x86 ;;
	qemu-system-aarch64 | qemu-system-arm) pkg=qemu-system-arm ;;
	*) die "no Debian package known for $bin (QEMU_SUITE)" ;;
	esac
	need_pkgs "$pkg" >&2 || return 1
	mkdir -p "$d" || return 1
	{
		flock 9 || die "cannot lock $d/.lock"
		if [[ ${QEMU_SUITE_FRESH:-0} == 1 || ! -x $d/$pkg/usr/bin/$bin ]]; then
			progress "fetching $pkg from $suite (private apt configuration in $CACHE/apt-$suite)" >&2
			apt_suite "$suite" || return 1
			rm -rf "${d:?}/${pkg:?}" "$d/$pkg.tmp" "$d/debs-$pkg"
			mkdir -p "$d/debs-$pkg" || return 1
			(cd "$d/debs-$pkg" && archive_retry run_logged "$d/download-$pkg.log" apt-get "${APT_OPT[@]}" download \
				"$pkg" qemu-system-common qemu-system-data) ||
				die "cannot download $pkg from $suite, log $d/download-$pkg.log"
			for deb in "$d/debs-$pkg"/*.deb; do
				dpkg -x "$deb" "$d/$pkg.tmp" || die "cannot unpack $deb"
			done
			[[ -x $d/$pkg.tmp/usr/bin/$bin && -d $d/$pkg.tmp/usr/share/qemu ]] ||
				die "$pkg of $suite has no usr/bin/$bin or usr/share/qemu"
			mv "$d/$pkg.tmp" "$d/$pkg" || die "cannot move $d/$pkg.tmp"
		fi
	} 9>"$d/.lock" || return 1
	"$d/$pkg/usr/bin/$bin" --version >/dev/null 2>&1 ||
		die "$d/$pkg/usr/bin/$bin does not run here (a library it needs?)"
	echo "$d/$pkg/usr/bin/$bin"
}

# apt_update_failed: after every try of `apt-get update` failed.  One index
# of many that a mirror serves inconsistently (seen: bookworm-security's
# i386 Packages.xz, "File has unexpected size ... Mirror sync in
# progress?", for longer than the tries) fails the whole update, while
# apt keeps the others, fresh or old: go on with those, saying so, and
# let the install or download that follows fail if they lack the package.
apt_update_failed() {
	progress "warning: apt-get update failed ${ARCHIVE_TRIES:-4} times; going on with the package lists apt has"
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
	mkdir -p "$CACHE"
	local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}")
	# With the lists the machine has first: an update is only needed when
	# they lack a package or point at files the archive no longer has.
	"${install[@]}" >"$CACHE/apt.log" 2>&1 && return 0
	archive_retry apt-get update -qq >/dev/null || apt_update_failed >&2
	archive_retry "${install[@]}" >"$CACHE/apt.log" 2>&1 ||
		die "apt-get install ${missing[*]} failed, see $CACHE/apt.log"
}

# deb_get PKG ARCH : print the path of PKG's .deb for ARCH (x86_64 or
# arm64), downloaded once with apt-get download into $SCHED_CACHE/debs.
# For arm64, dpkg's foreign architecture arm64 is added when missing (apt
# then lists arm64 packages of the machine's own sources).  Progress goes
# to stderr.
deb_get() {
	local pkg=$1 darch debs
	case $2 in
	x86_64) darch=amd64 ;;
	arm64) darch=arm64 ;;
	i386) darch=i386 ;;
	*) die "deb_get: unknown architecture '$2'" ;;
	esac
	mkdir -p "$CACHE/debs"
	debs=("$CACHE/debs/${pkg}_"*"_$darch.deb")
	if [[ ! -f ${debs[-1]} ]]; then
		if [[ $darch != "$(dpkg --print-architecture)" ]] &&
		   ! dpkg --print-foreign-architectures | grep -qx "$darch"; then
			progress "adding dpkg architecture $darch" >&2
			dpkg --add-architecture "$darch"
		fi
		progress "downloading $pkg:$darch" >&2
		# With the lists apt has first; an update (a foreign
		# architecture's lists may not be there yet) only when that fails.
		local dl=(apt-get download -qq -o APT::Sandbox::User=root "$pkg:$darch")
		if ! (cd "$CACHE/debs" && "${dl[@]}") 2>/dev/null; then
			archive_retry apt-get update -qq >/dev/null || apt_update_failed >&2
			(cd "$CACHE/debs" && archive_retry "${dl[@]}") >&2 ||
				die "apt-get download $pkg:$darch failed"
		fi
		debs=("$CACHE/debs/${pkg}_"*"_$darch.deb")
		[[ -f ${debs[-1]} ]] || die "apt-get download left no $pkg .deb for $darch in $CACHE/debs"
	fi
	echo "${debs[-1]}"
}

# Per architecture: KARCH, CROSS (the kernel's cross prefix), UCROSS (the
# guest programs' compiler prefix, with the packages that give it in
# UPKGS), KIMAGE, and KFRAGS: fragments under configs/ that every kernel
# of the architecture merges after ARCH.config.
arch_vars() {
	case $1 in
	x86_64)
		KARCH=x86_64 CROSS='' UCROSS='' UPKGS='gcc libc6-dev'
		KIMAGE=arch/x86/boot/bzImage KFRAGS='' ;;
	arm64)
		KARCH=arm64 CROSS=${CROSS_COMPILE_ARM64:-aarch64-linux-gnu-} UCROSS=$CROSS
		UPKGS='gcc-aarch64-linux-gnu libc6-dev-arm64-cross'
		KIMAGE=arch/arm64/boot/Image KFRAGS='' ;;
	i386)
		# 32-bit x86: the kernel with the host's compiler (-m32), the
		# static guest programs with Debian's i686 cross compiler.
		# The 32-bit kernel is a debug kernel (configs/debug.config:
		# lockdep, preemption, proxy execution), so that CI runs the
		# features and eevdf_ineligible tests under lockdep without
		# another kernel to build.
		KARCH=i386 CROSS='' UCROSS=i686-linux-gnu-
		UPKGS='gcc-i686-linux-gnu libc6-dev-i386-cross'
		KIMAGE=arch/x86/boot/bzImage KFRAGS='debug.config' ;;
	*)
		die "unknown architecture '$1' (x86_64, arm64 or i386)" ;;
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

# Hash of the series' code: patches/series, the diffs of every patch it
# lists (from the first "diff --git" on: a changelog edit leaves it as
# is, so a figure stays tied to the code it ran on) and the files the
# series adds (patches/new-files).
series_hash() {
	(
		cd "$REPO/patches" || exit
		cat series
		series_list | while read -r p; do sed -n '/^diff --git /,$p' "$p"; done
		cat new-files
		{ grep -v '^[[:space:]]*\(#\|$\)' new-files || true; } | cut -d' ' -f2- | tr ' ' '\n' |
			while read -r f; do
				[[ -z $f ]] || find "$REPO/$f" -type f | LC_ALL=C sort | xargs -r cat
			done
	) | sha256sum | cut -c1-16
}

# "patch sha256" for every patch of the series: what prepare-tree.sh records
# in the tree as applied.
series_stamp() {
	series_list | while read -r p; do
		echo "$p $(sha256sum <"$REPO/patches/$p" | cut -c1-16)"
	done
}

# install_new_files TREE: copy the files the series adds (patches/new-files,
# kept as plain files in this repository) into TREE, where they differ,
# and print the name of each one copied.
install_new_files() {
	local f g
	grep -v '^\s*\(#\|$\)' "$REPO/patches/new-files" | cut -d' ' -f2- | tr ' ' '\n' |
	while read -r f; do
		[[ -n $f ]] || continue
		[[ -e $REPO/$f ]] || die "patches/new-files names missing $f"
		(cd "$REPO" && find "$f" -type f) | while read -r g; do
			cmp -s "$REPO/$g" "$1/$g" 2>/dev/null && continue
			install -D -m644 "$REPO/$g" "$1/$g"
			echo "$g"
		done
	done
}

# build_static ARCH SRC OUT [CFLAG...]: the guest program SRC (relative
# to the repository, or absolute), static, for ARCH, with CFLAGs.
build_static() {
	local src=$2
	[[ $src == /* ]] || src=$REPO/$src
	arch_vars "$1"
	# shellcheck disable=SC2086 # a list of packages
	need_pkgs $UPKGS
	"${UCROSS}gcc" -O2 -Wall -Wextra -Werror -static -pthread "${@:4}" -o "$3" \
		"$src" || die "$2 does not build for $1"
}

# build_schedbench ARCH OUT: bench/schedbench.c, static, for ARCH.
build_schedbench() {
	build_static "$1" bench/schedbench.c "$2"
}

# kv_sel FILE FILTER KEY: the KEY values of the "k=v ..." lines of FILE
# that match every k=v in FILTER.
kv_sel() {
	awk -v filt="$2" -v key="$3" '
		BEGIN { nf = split(filt, f, " ") }
		{ delete kv
		  for (i = 1; i <= NF; i++) { p = index($i, "="); kv[substr($i, 1, p - 1)] = substr($i, p + 1) }
		  for (i = 1; i <= nf; i++) { p = index(f[i], "="); if (kv[substr(f[i], 1, p - 1)] != substr(f[i], p + 1)) next }
		  if (key in kv) print kv[key] }' "$1"
}

# kv_stats: read numbers, print "median min max n" (or "- - - 0").
kv_stats() {
	sort -g | awk '$1 != "nan" && $1 != "none" && $1 != "" { v[n++] = $1 }
		END { if (!n) { print "- - - 0"; exit }
		      m = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
		      print f(m), f(v[0]), f(v[n - 1]), n }
		function f(x) { return sprintf(x >= 1000 || x <= -1000 ? "%.0f" : "%.4g", x) }'
}

# kv_same A B: do two deterministic runs' "key=value" files agree?  Prints
# "identical, N lines", or how many lines differ and by how much at most
# (the largest |a - b| / max(|a|, |b|) of a numeric value, in %); returns
# 1 when a line differs in anything but numbers or a number moves by more
# than DET_TOL percent (default 0.1: the largest move seen between boots
# with the same seed was 0.007%; see Documentation/harness/harness.md,
# "Deterministic boots").
kv_same() {
	if cmp -s "$1" "$2"; then
		echo "identical, $(wc -l <"$1") lines"
		return 0
	fi
	awk -v tol="${DET_TOL:-0.1}" '
		function num(x) { return x ~ /^[-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ }
		function abs(x) { return x < 0 ? -x : x }
		FILENAME == ARGV[1] { a[FNR] = $0; na = FNR; next }
		{ nb = FNR
		  if (a[FNR] == $0) next
		  nd++
		  n1 = split(a[FNR], x, " "); n2 = split($0, y, " ")
		  if (n1 != n2) { bad = 1; next }
		  for (i = 1; i <= n1; i++) {
			if (x[i] == y[i]) continue
			p = index(x[i], "="); q = index(y[i], "=")
			k1 = substr(x[i], 1, p - 1); k2 = substr(y[i], 1, q - 1)
			v1 = substr(x[i], p + 1); v2 = substr(y[i], q + 1)
			if (!p || k1 != k2 || !num(v1) || !num(v2)) { bad = 1; continue }
			m = abs(v1) > abs(v2) ? abs(v1) : abs(v2)
			if (m == 0) continue
			r = 100 * abs(v1 - v2) / m
			if (r > worst) { worst = r; wk = k1 }
		  } }
		END {
		  if (na != nb) { printf "DIFFERS: %d lines against %d\n", na, nb; exit 1 }
		  if (bad) { printf "DIFFERS in %d of %d lines, not only in numbers\n", nd, na; exit 1 }
		  printf "%d of %d lines differ, by at most %.4f%%%s", nd, na, worst, wk == "" ? "" : " (" wk ")"
		  if (worst > tol) { printf ", over %s%%\n", tol; exit 1 }
		  printf ", within %s%%\n", tol }' "$1" "$2"
}

# boot_noise: reads "BOOT VALUE" lines (one value per run; one boot per
# QEMU seed, boot 0 first) and prints "NOISE REPS".  NOISE: how far
# apart, in % as "apart" counts it, the medians of two independent boots
# with boot 0's number of runs come out by run-to-run spread alone, 1
# time in 20: the 95th percentile over 2000 draws (fixed seed) of two
# samples, with replacement, from the runs of every boot pooled.  REPS:
# the runs per boot that would bring NOISE to 2%, scaling it by
# 1/sqrt(runs).  "- -" when boot 0 has fewer than 2 runs.
# The draws are reproducible for one awk build (rand() differs between
# awks), and with few runs (4) the band is coarse.
boot_noise() {
	awk '$2 != "nan" && $2 != "none" && $2 != "" { n[$1]++; v[m++] = $2 }
		function draw(   k) { k = int(rand() * m); return v[k < m ? k : m - 1] }
		function isort(k,   i, j, t) {
			for (i = 1; i < k; i++) {
				t = d[i]
				for (j = i - 1; j >= 0 && d[j] > t; j--)
					d[j + 1] = d[j]
				d[j + 1] = t
			}
		}
		function med(k) {
			isort(k)
			return k % 2 ? d[(k - 1) / 2] : (d[k / 2 - 1] + d[k / 2]) / 2
		}
		END {
			if (n[0] < 2) { print "- -"; exit }
			srand(1)
			for (r = 0; r < 2000; r++) {
				for (i = 0; i < n[0]; i++) d[i] = draw()
				a = med(n[0])
				for (i = 0; i < n[0]; i++) d[i] = draw()
				b = med(n[0])
				lo = a < b ? a : b
				g[r] = lo > 0 ? 100 * (a > b ? a - b : b - a) / lo : 0
			}
			for (i = 0; i < 2000; i++) d[i] = g[i]
			isort(2000)
			q = d[1899]
			reps = int(n[0] * (q / 2) ^ 2) + 1
			if (reps < 2) reps = 2
			printf "%.1f %d\n", q, reps
		}'
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
	if grep -q '^series in its history' "$(tree_dir)/.schedseries-base"; then
		echo "series: in KSRC's history (patches/ not applied)"
	else
		echo "series: $(series_hash) ($(series_list | wc -l) patches)"
	fi
	echo "repo: $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -srm), $(nproc) CPUs, $(qemu-system-x86_64 --version | head -n1)"
	local suite=${QEMU_SUITE-bookworm-backports} v
	if [[ -z $suite ]]; then
		echo "guests' QEMU: the host's (QEMU_SUITE empty)"
	else
		v=$(for q in "$CACHE/qemu-$suite"/qemu-system-*/usr/bin/qemu-system-*; do
			[[ -x $q ]] && "$q" --version | head -n1 && break
		done 2>/dev/null || true)
		echo "guests' QEMU: QEMU_SUITE=$suite, ${v:-fetched at the first boot}"
	fi
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

# wait_slot N: wait until fewer than N of this shell's background jobs
# run (a pool of N: call it before starting each job with &).
wait_slot() {
	while [[ $(jobs -pr | wc -l) -ge $1 ]]; do
		wait -n || true
	done
}

# base_stamp: what an image of the base kernel was built from (the base
# and the configs).
base_stamp() {
	echo "$(head -n1 "$(tree_dir)/.schedseries-base") $(cat "$REPO"/configs/{common,x86_64}.config | sha256sum | cut -c1-16)"
}

# base_kernel_current: out/x86_64-base holds the base's image, built
# from the base and configs as they are now.
base_kernel_current() {
	[[ -f $(out_root)/x86_64-base/arch/x86/boot/bzImage &&
	   $(cat "$(out_root)/x86_64-base/.schedseries-base-built" 2>/dev/null) == "$(base_stamp)" ]]
}

# base_kernel_adopt IMAGE: IMAGE, the x86_64 default config built with no
# patch applied, becomes base_kernel's image (scripts/check-series.sh
# builds it so before patch 1, in the same directory as the patched ones,
# instead of a second full build into out/x86_64-base).
base_kernel_adopt() {
	local bout
	bout=$(out_root)/x86_64-base
	mkdir -p "$bout/arch/x86/boot" "$bout/include/generated"
	rm -f "$bout/.schedseries-base-built"
	cp "$1" "$bout/arch/x86/boot/bzImage.tmp"
	mv "$bout/arch/x86/boot/bzImage.tmp" "$bout/arch/x86/boot/bzImage"
	# Its version, which run-guest.sh checks the booted kernel against.
	cp "${1%/arch/*}/include/generated/utsversion.h" "$bout/include/generated/"
	base_stamp >"$bout/.schedseries-base-built"
}

# base_kernel: the x86_64 bzImage of the unpatched base, for the bench and
# the SKIP check of test-mutations.sh.  The tree goes back to no patch
# applied, is built into out/x86_64-base, and gets the whole series again.
# Rebuilt only when the base or the configs change (the stamp records
# both; scripts/check-series.sh may have adopted an image built so
# already).  Needs the tree prepared by scripts/prepare-tree.sh.  Progress
# goes to stderr; prints the image path.
base_kernel() {
	local bout rc=0
	bout=$(out_root)/x86_64-base
	if base_kernel_current; then
		progress "base kernel $bout is up to date" >&2
		echo "$bout/arch/x86/boot/bzImage"
		return
	fi
	"$REPO/scripts/prepare-tree.sh" -n 0 >&2
	"$REPO/scripts/build-kernel.sh" -n x86_64-base x86_64 >&2 || rc=$?
	"$REPO/scripts/prepare-tree.sh" >&2
	[[ $rc -eq 0 ]] || die "base kernel build failed, log $bout/build.log"
	base_stamp >"$bout/.schedseries-base-built"
	echo "$bout/arch/x86/boot/bzImage"
}

# guest_artifacts ARCH RES GUEST...: what the GUESTs of ARCH boot, made
# for the results directory RES: the kernel (built by
# scripts/build-kernel.sh, or KERNEL, a user's image, checked against
# the tarball and the GUESTs by user_kernel_check), the kselftest
# tarball (KSFT_OPT: one more option of kselftest-tarball.sh) and the
# initramfs that carries it.  Sets KIMG and KINITRD.
guest_artifacts() {
	local a=$1 res=$2 opt=${KSFT_OPT:-}
	shift 2
	if [[ -n ${KERNEL:-} ]]; then
		KIMG=$(realpath "$KERNEL")
	else
		"$REPO/scripts/build-kernel.sh" "$a" >"$res/build-$a.out" ||
			{ cat "$res/build-$a.out"; die "kernel build failed for $a"; }
		grep -v '^/' "$res/build-$a.out" || true
		KIMG=$(tail -n1 "$res/build-$a.out")
	fi
	progress "building the kselftest tarball for $a"
	# shellcheck disable=SC2086 # one option or none
	run_logged "$res/kselftest-$a.log" "$REPO/scripts/kselftest-tarball.sh" -g $opt \
		-o "$res" "$a" || die "kselftest tarball failed for $a, log $res/kselftest-$a.log"
	[[ -z ${KERNEL:-} ]] || user_kernel_check "$a" "$KIMG" "$res/kselftest-$a.tar.gz" "$@" >>"$res/base.txt"
	KINITRD=$CACHE/initramfs-$a.cpio.gz
	"$REPO/scripts/mk-initramfs.sh" "$a" "$KINITRD" "$(tail -n1 "$res/kselftest-$a.log")"
}

# user_kernel_arch IMAGE: the guest arch of a user's kernel image
# (KERNEL=): arm64 for an arm64 Image; for a bzImage x86_64 when its
# boot header's xloadflags (offset 0x236) has XLF_KERNEL_64, else i386.
user_kernel_arch() {
	local img=$1 what
	[[ -f $img ]] || die "KERNEL: no file '$img'"
	need_pkgs file binutils
	what=$(file -bL "$img")
	case $what in
	"Linux kernel ARM64 boot executable Image"*) echo arm64 ;;
	"Linux kernel x86 boot executable bzImage"*)
		if (($(od -An -tu2 -j$((0x236)) -N2 "$img") & 1)); then
			echo x86_64
		else
			echo i386
		fi
		;;
	*) die "KERNEL: '$img' is not a bzImage or an arm64 Image (file: ${what:0:80})" ;;
	esac
}

# user_kernel_config IMAGE: the path of the config IMAGE was built with:
# KCONFIG, else the .config of the O= directory the image sits in
# (O/arch/*/boot/IMAGE), else config-VERSION beside vmlinuz-VERSION (as
# in /boot), else the image's own (CONFIG_IKCONFIG), extracted with the
# tree's scripts/extract-ikconfig into the cache.
user_kernel_config() {
	local img=$1 d cfg
	img=$(realpath "$img")
	d=${img%/arch/*/boot/*}
	if [[ -n ${KCONFIG:-} ]]; then
		[[ -f $KCONFIG ]] || die "KCONFIG: no file '$KCONFIG'"
		realpath "$KCONFIG"
	elif [[ $d != "$img" && -f $d/.config ]]; then
		echo "$d/.config"
	elif [[ ${img##*/} == vmlinuz-* && -f ${img%/*}/config-${img##*/vmlinuz-} ]]; then
		echo "${img%/*}/config-${img##*/vmlinuz-}"
	else
		cfg=$CACHE/user-kernel-$(sha256sum "$img" | cut -c1-16).config
		[[ -s $cfg ]] || "$(tree_dir)/scripts/extract-ikconfig" "$img" >"$cfg" 2>/dev/null ||
			{ rm -f "$cfg"; die "KERNEL: no config for $img: not in an O= directory with .config, no config-VERSION beside it, no CONFIG_IKCONFIG; name it with KCONFIG="; }
		echo "$cfg"
	fi
}

# user_kernel_check ARCH IMAGE TARBALL GUEST...: a user's kernel must
# have, built in (=y: the initramfs has no modules), what the tarball's
# sched/config asks for and what the harness needs (the initramfs, the 9p
# shares, the console, SMP); NUMA only when a GUEST has NUMA nodes (a
# test of a NUMA behaviour skips on one node).  Dies naming every option
# it lacks.  Prints what base.txt records of it.
user_kernel_check() {
	local a=$1 img=$2 tar=$3 cfg o missing=() need ver g numa=0
	shift 3
	for g in "$@"; do
		[[ $(sed -n 's/^EXPECT_NODES=//p' "$REPO/guests/$g.conf") -le 1 ]] || numa=1
	done
	cfg=$(user_kernel_config "$img")
	need=$(tar -xzOf "$tar" ./sched/config 2>/dev/null | sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=y$/\1/p') ||
		die "no sched/config in $tar"
	[[ $numa -eq 1 ]] || need=$(grep -vx CONFIG_NUMA <<<"$need")
	need+=" CONFIG_SMP CONFIG_PRINTK CONFIG_TTY CONFIG_BLK_DEV_INITRD CONFIG_RD_GZIP"
	need+=" CONFIG_BINFMT_ELF CONFIG_BINFMT_SCRIPT CONFIG_PROC_FS CONFIG_SYSFS"
	need+=" CONFIG_DEVTMPFS CONFIG_TMPFS CONFIG_FUTEX CONFIG_POSIX_TIMERS CONFIG_NET"
	need+=" CONFIG_VIRTIO CONFIG_NET_9P CONFIG_NET_9P_VIRTIO CONFIG_9P_FS"
	case $a in
	arm64) need+=" CONFIG_ARM_PSCI_FW CONFIG_VIRTIO_MMIO CONFIG_SERIAL_AMBA_PL011_CONSOLE" ;;
	x86_64) need+=" CONFIG_PCI CONFIG_VIRTIO_PCI CONFIG_SERIAL_8250_CONSOLE" ;;
	i386) need+=" CONFIG_PCI CONFIG_VIRTIO_PCI CONFIG_SERIAL_8250_CONSOLE" ;;
	esac
	[[ $numa -eq 0 || $a != x86_64 ]] || need+=" CONFIG_ACPI_NUMA"
	for o in $need; do
		grep -qx "$o=y" "$cfg" || missing+=("$o ($(grep -m1 -E "^($o=|# $o is not set)" "$cfg" || echo absent))")
	done
	[[ ${#missing[@]} -eq 0 ]] ||
		die "KERNEL $img lacks what the tests and the harness need, built in (config $cfg): ${missing[*]}"
	ver=$(file -bL "$img" | sed -n 's/.*, version \([^,]*\),.*/\1/p')
	[[ -n $ver ]] || ver=$(strings "$img" | grep -m1 '^Linux version ' | cut -c15- || true)
	echo "kernel: KERNEL=$img, sha256 $(sha256sum "$img" | cut -c1-16), ${ver:-version unknown}"
	echo "kernel config: $cfg, sha256 $(sha256sum "$cfg" | cut -c1-16); checked for$(tr '\n' ' ' <<<" $need" | tr -s ' ')"
}

# busybox_path ARCH: the path of a static busybox for ARCH: the host's
# busybox-static for x86_64, else busybox-static:ARCH unpacked under the
# cache.
busybox_path() {
	local deb dir=$CACHE/busybox-$1
	case $1 in
	x86_64)
		need_pkgs busybox-static
		echo /bin/busybox
		;;
	arm64 | i386)
		if [[ ! -x $dir/bin/busybox ]]; then
			deb=$(deb_get busybox-static "$1")
			rm -rf "$dir.tmp"
			dpkg -x "$deb" "$dir.tmp" || die "dpkg -x $deb failed"
			rm -rf "$dir"
			mv "$dir.tmp" "$dir"
		fi
		echo "$dir/bin/busybox"
		;;
	esac
}
