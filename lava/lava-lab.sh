#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A LAVA lab on this machine: lava-server on PostgreSQL, lava-scheduler and
# one lava-worker, from Debian bookworm's packages, and the kselftest job of
# lava/ submitted to it with lavacli.
#
# Usage: lava-lab.sh [-h] root | up
#        lava-lab.sh [-h] run [-a ARCH] [-o OUTDIR] [-x KARGS] [-q SECS]
#                             [-w SECS] KERNEL RAMDISK KSELFTEST_TAR [DTB]
#        lava-lab.sh [-h] check | status | down
#
#   root    build the lab's root, once (debootstrap bookworm, then
#           apt-get install lava-server lava-dispatcher lavacli postgresql
#           procps in it, and qemu-system-x86 and qemu-system-arm from
#           bookworm-backports: the QEMU of make test's guests, not 7.2,
#           whose multi-threaded TCG can run a stale int3 of a patched
#           static branch)
#   up      root, then start what is not running: PostgreSQL,
#           lava-server's web and API service (gunicorn on 127.0.0.1), the
#           scheduler and the worker "lab-worker".  Makes the admin user,
#           its API token, the device type "qemu" and the devices
#           "x86_64-numa" and "arm64-juno" from device-dict/, each tagged
#           with its own name.  Reuses a lab that is up.
#   run     submit job-ARCH.yaml (its file:// URLs pointed at copies of
#           the files; arm64 needs the DTB of scripts/mk-dtb.sh arm64-juno)
#           with `lavacli jobs submit`, follow it, read the results back
#           through the server's API and print the same summary as `make
#           lava`.  Exit status 0 only when the job completed and no test
#           case failed.
#     -a ARCH    x86_64 (default: the x86_64-numa device) or arm64
#                (arm64-juno); the job asks for the device's tag
#     -o OUTDIR  results (default results/lava-lab-STAMP in this repository)
#     -x KARGS   append KARGS to the job's kernel command line (this run only)
#     -q SECS    give up when the job is not running after SECS (default
#                180; 1800 with LAVA_URI)
#     -w SECS    give up when the job is not finished after SECS (default
#                2700: the job's own timeout is 40 minutes)
#   check   up, then the server validates the job (lavacli jobs validate)
#           and renders the device; no boot
#   status  what is running
#   down    cancel unfinished jobs, stop every process `up` started
#
# The lab lives in a chroot, $SCHED_CACHE/lava-lab/root, and its processes
# in their own PID and mount namespaces: nothing of LAVA is installed on
# this machine (only debootstrap; lavacli with LAVA_URI), no service of
# the machine is touched, and `down` leaves no process behind (the
# namespace's init is killed last).  Only gunicorn
# listens, on 127.0.0.1:$LAVA_LAB_PORT (default 8000); PostgreSQL has no
# TCP listener.  Needs root.
#
# Your own lab: with LAVA_URI set, `run` submits to it instead, with the
# lavacli of this machine (installed when missing):
#   LAVA_URI           the server's XML-RPC endpoint, https://HOST/RPC2
#   LAVA_USER          the user the token belongs to
#   LAVA_TOKEN         an API token (or LAVA_TOKEN_FILE, a file holding it)
#   LAVA_DEVICE_TYPE   the job's device_type (default qemu)
#   LAVA_TAGS          device tags the job asks for, comma separated
#                      (default none)
#   LAVA_ARTIFACT_URL  where your workers download the files from:
#                      LAVA_ARTIFACT_URL/x86_64/{bzImage,
#                      ramdisk.cpio.gz,kselftest.tar.gz}, and
#                      LAVA_ARTIFACT_URL/arm64/{Image,ramdisk.cpio.gz,
#                      kselftest.tar.gz,guest.dtb}; copy them there
#                      first (run says which file goes where; the job
#                      checks their sha256)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/lib.sh
. "$here/../scripts/lib.sh"
# shellcheck source=job-lib.sh
. "$here/job-lib.sh"

usage() {
	sed -n '4,/^set -euo/s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}

# realpath: lab_procs compares the processes' roots with $R.
S=$(realpath -m "$CACHE/lava-lab")
R=$S/root
PORT=${LAVA_LAB_PORT:-8000}
URL=http://127.0.0.1:$PORT
SUITE=bookworm
PKGS="postgresql lava-server lava-dispatcher lavacli procps"
# From $SUITE-backports, as the guests' QEMU (QEMU_SUITE).
BPO_PKGS="qemu-system-x86 qemu-system-arm"
# The device of each arch's job, and so the lab's devices.
declare -A DEVICE_OF=([x86_64]=x86_64-numa [arm64]=arm64-juno)
DEVICES="${DEVICE_OF[*]}"
WORKER=lab-worker
CHROOT_PATH=/usr/sbin:/usr/bin:/sbin:/bin

[[ $PORT =~ ^[1-9][0-9]*$ && $PORT -lt 65536 ]] || die "bad LAVA_LAB_PORT '$PORT'"

# Mounts of the lab's namespace, made on the chroot $r: nothing of this
# shows outside the namespace (private propagation).
# shellcheck disable=SC2016
MOUNTS='mount -t proc proc "$r/proc" &&
	mount --rbind /dev "$r/dev" &&
	mount -t tmpfs -o mode=1777 shm "$r/dev/shm" &&
	mount --rbind /sys "$r/sys" &&
	mount -t tmpfs -o mode=755 run "$r/run" &&
	mkdir -p "$r/run/lock" "$r/run/lava-lab"'

# ns_once ROOT CMD...: CMD in ROOT, in a namespace of its own that ends with it.
ns_once() {
	local root=$1
	shift
	unshare --pid --mount --propagation private --fork --kill-child -- \
		bash -c "r=\$1; shift; $MOUNTS && exec chroot \"\$r\" env -i PATH=$CHROOT_PATH \
			LANG=C.UTF-8 HOME=/root \"\$@\"" ns-once "$root" "$@"
}

anchor_pid() {
	local p
	p=$(cat "$S/anchor.pid" 2>/dev/null) || return 1
	[[ $p =~ ^[0-9]+$ ]] && [[ $(readlink "/proc/$p/root" 2>/dev/null) == / ]] &&
		[[ $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) == "bash -c "*" lava-lab-init "* ]] ||
		return 1
	echo "$p"
}

# ns_run CMD...: CMD in the running lab's root and namespaces.
ns_run() {
	local a
	a=$(anchor_pid) || die "the lab is not up (lava-lab.sh up, or make lava-lab)"
	# 9>&-: the daemons started here must not hold the lock of lock().
	nsenter --target "$a" --mount --pid -- chroot "$R" env -i PATH=$CHROOT_PATH \
		LANG=C.UTF-8 HOME=/root XDG_CONFIG_HOME=/srv/lava-lab "$@" 9>&-
}

manage() {
	ns_run runuser -u lavaserver -- lava-server manage "$@"
}

# lavacli, at most 60 s a call (its own timeout is per HTTP request).
L() {
	ns_run timeout 60 lavacli -i lab "$@"
}

root_hash() {
	echo "$SUITE $PKGS $BPO_PKGS $(debian_mirror) lava-lab-root 3" | sha256sum | cut -c1-16
}

# The chroot: debootstrap, the machine's own apt sources (read, not
# changed), invoke-rc.d told to start nothing, then the packages.
make_root() {
	local hash tmp t mirror
	hash=$(root_hash)
	[[ $(cat "$R/.lava-lab-root" 2>/dev/null) == "$hash" ]] && return 0
	! anchor_pid >/dev/null || die "the lab is up on an older root: lava-lab.sh down first"
	need_pkgs debootstrap debian-archive-keyring
	mirror=$(debian_mirror)
	tmp=$S/root.tmp
	rm -rf "$tmp"
	mkdir -p "$S"
	t=$(date +%s)
	progress "lava-lab: debootstrap $SUITE into $tmp (log $S/root.log)"
	run_logged "$S/root.log" debootstrap --variant=minbase "$SUITE" "$tmp" "$mirror" ||
		die "debootstrap failed, log $S/root.log"
	printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s-security %s-security main\ndeb %s %s-backports main\n' \
		"$mirror" "$SUITE" "$mirror" "$SUITE" "$mirror" "$SUITE" "$mirror" "$SUITE" >"$tmp/etc/apt/sources.list"
	cp -L /etc/resolv.conf "$tmp/etc/resolv.conf"
	printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
	chmod 755 "$tmp/usr/sbin/policy-rc.d"
	progress "lava-lab: apt-get install $PKGS, and $BPO_PKGS from $SUITE-backports (log $S/root-apt.log)"
	# Retried as a whole: a mirror mid-sync fails the update, and apt
	# goes on where a failed try stopped.
	# shellcheck disable=SC2086
	archive_retry run_logged "$S/root-apt.log" ns_once "$tmp" sh -c "apt-get update &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $PKGS &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
			-t $SUITE-backports $BPO_PKGS &&
		apt-get clean" || die "apt-get install in the lab's root failed, log $S/root-apt.log"
	echo "$hash" >"$tmp/.lava-lab-root"
	rm -rf "$R"
	mv "$tmp" "$R"
	progress "lava-lab: root $R: $(du -sh "$R" | cut -f1) in $(($(date +%s) - t))s"
}


lock() {
	mkdir -p "$S"
	exec 9>"$S/lock"
	flock -w 900 9 || die "another lava-lab.sh holds $S/lock"
}

# The namespace's init: makes the mounts, writes its pid as this machine
# sees it, then only reaps the daemons it adopts.  Killing it ends every
# process of the lab (the kernel kills a PID namespace with its init).
start_anchor() {
	local i a
	rm -f "$S/anchor.pid"
	setsid unshare --pid --mount --propagation private --fork --kill-child -- \
		bash -c "r=\$1; $MOUNTS || exit 1
			while read -r k v _; do
				[[ \$k == NSpid: ]] && { echo \"\$v\" >\"\$2.tmp\"; mv \"\$2.tmp\" \"\$2\"; break; }
			done </proc/self/status
			trap 'exit 0' TERM
			while :; do sleep 3600 & wait \$!; done" lava-lab-init "$R" "$S/anchor.pid" \
		</dev/null >"$S/anchor.log" 2>&1 9>&- &
	for ((i = 0; i < 100; i++)); do
		a=$(anchor_pid) && break
		sleep 0.1
	done
	a=$(anchor_pid) || die "the lab's namespace did not start: $(tail -n 3 "$S/anchor.log")"
	progress "lava-lab: namespace init is pid $a"
}

running() {
	ns_run start-stop-daemon --status --pidfile "/run/lava-lab/$1.pid"
}

# start NAME PROGRAM ARGS...: PROGRAM in the background, unless running.
start() {
	local name=$1
	shift
	running "$name" && return 0
	progress "lava-lab: starting $name"
	ns_run start-stop-daemon --start --background --make-pidfile \
		--pidfile "/run/lava-lab/$name.pid" --output "/var/log/lava-lab/$name.log" \
		--startas "$1" -- "${@:2}"
}

stop() {
	ns_run start-stop-daemon --stop --quiet --oknodo --pidfile "/run/lava-lab/$1.pid" \
		--remove-pidfile --retry TERM/20/KILL/5 >/dev/null 2>&1
}

http_ok() {
	ns_run python3 -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=5)' "$URL$1" 2>/dev/null
}

pg_cluster() {
	ns_run pg_lsclusters -h | awk 'NR == 1 { print $1, $2 }'
}

# PostgreSQL on its Unix socket only (no TCP listener), and lava-server's
# database on it: postinst.py, the package's own setup, once.
db_up() {
	local v c pw
	read -r v c <<<"$(pg_cluster)"
	[[ -n $c ]] || die "no PostgreSQL cluster in $R (pg_lsclusters)"
	echo "listen_addresses = ''" >"$R/etc/postgresql/$v/$c/conf.d/lava-lab.conf"
	ns_run install -d -o postgres -g postgres -m 2775 /run/postgresql
	ns_run install -d -m 755 /var/log/lava-lab
	if ! ns_run pg_isready -q; then
		progress "lava-lab: starting PostgreSQL $v/$c"
		ns_run pg_ctlcluster "$v" "$c" start || die "PostgreSQL did not start"
	fi
	local d=$R/etc/lava-server/settings.d
	if [[ ! -f $d/00-database.yaml ]]; then
		pw=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
		printf 'DATABASES:\n  default:\n    ENGINE: django.db.backends.postgresql\n    NAME: lavaserver\n    USER: lavaserver\n    PASSWORD: "%s"\n    HOST: /run/postgresql\n    PORT: 5432\n' \
			"$pw" >"$d/00-database.yaml.tmp"
		ns_run chown root:lavaserver /etc/lava-server/settings.d/00-database.yaml.tmp
		chmod 640 "$d/00-database.yaml.tmp"
		mv "$d/00-database.yaml.tmp" "$d/00-database.yaml"
	fi
	# Workers are added by name below, with their own token.
	printf 'WORKER_AUTO_REGISTER: false\n' >"$d/01-lava-lab.yaml"
	if [[ ! -f $R/var/lib/lava-server/.lava-lab-db ]]; then
		progress "lava-lab: lava-server's database (postinst.py: roles, migrate; log $S/postinst.log)"
		run_logged "$S/postinst.log" ns_run python3 /usr/share/lava-server/postinst.py ||
			die "lava-server's postinst.py failed, log $S/postinst.log"
		touch "$R/var/lib/lava-server/.lava-lab-db"
	fi
}

web_up() {
	local i
	if ! running gunicorn; then
		if ns_run python3 -c 'import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)' "$PORT" 2>/dev/null; then
			die "127.0.0.1:$PORT is taken by another program: set LAVA_LAB_PORT"
		fi
		start gunicorn /usr/bin/gunicorn3 lava_server.wsgi --bind "127.0.0.1:$PORT" \
			-u lavaserver -g lavaserver --worker-class eventlet --workers 2 \
			--log-level INFO --log-file /var/log/lava-server/gunicorn.log \
			--worker-tmp-dir /dev/shm
	fi
	for ((i = 0; i < 90; i++)); do
		http_ok /api/help/ && return 0
		running gunicorn || break
		sleep 1
	done
	tail -n 20 "$R/var/log/lava-server/gunicorn.log" "$R/var/log/lava-lab/gunicorn.log" >&2 || true
	die "lava-server's web service is not answering on $URL"
}

# The admin user, its token for lavacli, the device type, the worker and
# the device with its dictionary: made when missing, the files refreshed.
objects_up() {
	local tok d=$R/srv/lava-lab
	mkdir -p "$d/jobs"
	chmod 700 "$d"
	manage users details admin >/dev/null 2>&1 ||
		manage users add admin --superuser --staff >/dev/null
	# Python's csv module ends its lines with CRLF.
	tok=$(manage tokens list --user admin --csv |
		awk -F, '{ sub(/\r$/, "") } $3 == "lava-lab" { print $2; exit }')
	[[ -n $tok ]] || tok=$(manage tokens add --user admin --description lava-lab)
	[[ $tok =~ ^[A-Za-z0-9]+$ ]] || die "no API token for admin ('$tok')"
	(
		umask 077
		printf 'lab:\n  uri: "%s/RPC2"\n  username: admin\n  token: "%s"\n  timeout: 30\n' \
			"$URL" "$tok" >"$d/lavacli.yaml"
	)
	manage device-types details qemu >/dev/null 2>&1 ||
		manage device-types add qemu >/dev/null
	manage workers details "$WORKER" >/dev/null 2>&1 ||
		manage workers add "$WORKER" --description "lava-lab.sh" >/dev/null
	tok=$(manage workers details "$WORKER" | awk '$1 == "token" { print $3 }')
	[[ $tok =~ ^[A-Za-z0-9]+$ ]] || die "no token for worker $WORKER"
	(
		umask 077
		echo "$tok" >"$d/worker-token"
	)
	cp "$here/dispatcher.yaml" "$d/"
	L workers config set "$WORKER" /srv/lava-lab/dispatcher.yaml >/dev/null
	# One device type, so each device carries its name as a tag and each
	# job asks for its device's tag.
	for dev in $DEVICES; do
		cp "$here/device-dict/$dev.jinja2" "$d/"
		L tags show "$dev" >/dev/null 2>&1 || L tags add "$dev" >/dev/null
		manage devices details "$dev" >/dev/null 2>&1 ||
			manage devices add "$dev" --device-type qemu --worker "$WORKER" \
				--description "lava/device-dict/$dev.jinja2" >/dev/null
		L devices dict set "$dev" "/srv/lava-lab/$dev.jinja2" >/dev/null
		L devices tags list "$dev" 2>/dev/null | grep -qw "$dev" || L devices tags add "$dev" "$dev" >/dev/null
		manage devices update "$dev" --health GOOD >/dev/null
	done
}

worker_state() {
	local out
	out=$(L workers show "$WORKER" --yaml) || return 1
	yaml_field state <<<"$out"
}

worker_up() {
	local i
	start worker /usr/bin/lava-worker --name "$WORKER" --url "$URL/" \
		--ws-url http://127.0.0.1:9/ws/ --token-file /srv/lava-lab/worker-token \
		--ping-interval 5 --log-file /var/log/lava-dispatcher/lava-worker.log \
		--level INFO --exit-on-version-mismatch
	for ((i = 0; i < 60; i++)); do
		[[ $(worker_state) == Online ]] && return 0
		running worker || break
		sleep 1
	done
	tail -n 20 "$R/var/log/lava-dispatcher/lava-worker.log" >&2 || true
	die "worker $WORKER is not online"
}

up() {
	lock
	make_root
	anchor_pid >/dev/null || start_anchor
	db_up
	web_up
	start scheduler /usr/bin/lava-server manage lava-scheduler --level INFO \
		--log-file /var/log/lava-server/lava-scheduler.log
	objects_up
	worker_up
	running scheduler || die "lava-scheduler is not running, log $R/var/log/lava-lab/scheduler.log"
	progress "lava-lab: up at $URL (devices $DEVICES, worker $WORKER); lava-lab.sh down stops it"
}

# Every process whose root is the lab's: none once the lab is down.
lab_procs() {
	local p
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/root" 2>/dev/null) == "$R" ]] && echo "${p#/proc/}"
	done
	return 0
}

down() {
	local a v c ids st i out
	lock
	if ! a=$(anchor_pid); then
		rm -f "$S/anchor.pid"
		progress "lava-lab: not up"
		[[ -z $(lab_procs) ]] || die "processes in $R without the lab's init: $(lab_procs | tr '\n' ' ')"
		return 0
	fi
	if running gunicorn && http_ok /api/help/; then
		ids=()
		for st in SUBMITTED SCHEDULING SCHEDULED RUNNING CANCELING; do
			out=$(L jobs list --state "$st" --json) || die "lavacli jobs list failed: $out"
			mapfile -t -O "${#ids[@]}" ids < <(python3 -c 'import json, sys
for j in json.load(sys.stdin):
    print(j["id"])' <<<"$out")
		done
		for i in "${ids[@]}"; do
			progress "lava-lab: canceling job $i"
			L jobs cancel "$i" || true
		done
		[[ ${#ids[@]} -eq 0 ]] || wait_finished 150 "${ids[@]}" || true
	fi
	stop worker
	stop scheduler
	stop gunicorn
	read -r v c <<<"$(pg_cluster)"
	if ns_run pg_isready -q; then
		ns_run pg_ctlcluster "$v" "$c" stop -m fast || true
	fi
	kill -TERM "$a"
	for ((i = 0; i < 100; i++)); do
		[[ -d /proc/$a ]] || break
		sleep 0.1
	done
	[[ ! -d /proc/$a ]] || kill -KILL "$a"
	rm -f "$S/anchor.pid"
	sleep 0.5
	[[ -z $(lab_procs) ]] || die "left running in $R: $(lab_procs | tr '\n' ' ')"
	progress "lava-lab: down, no process left in $R"
}

status() {
	local a
	if ! a=$(anchor_pid); then
		echo "lava-lab: down"
		return 0
	fi
	echo "lava-lab: namespace init pid $a, root $R"
	for d in gunicorn scheduler worker; do
		if running "$d"; then echo "  $d: running"; else echo "  $d: not running"; fi
	done
	if ns_run pg_isready -q; then echo "  postgresql: running"; else echo "  postgresql: not running"; fi
	if http_ok /api/help/; then
		echo "  web: $URL answers"
		echo "  worker $WORKER: $(worker_state || echo unknown)"
		for dev in $DEVICES; do
			L devices show "$dev" --yaml 2>&1 |
				awk '$1 == "state:" || $1 == "health:" { print "  device '"$dev"' " $0 }' || true
		done
	fi
}

# kill_job ID: the lab's lava-run and QEMU of job ID, when its worker
# cannot stop them (they run in process groups of their own).
kill_job() {
	local p cmd
	for p in $(lab_procs); do
		cmd=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) || continue
		if [[ $cmd == *"--job-id $1 "* || $cmd == *"/dispatcher/tmp/$1/"* ]]; then
			echo "lava-lab.sh: killing pid $p: ${cmd:0:60}..." >&2
			kill -KILL "$p" 2>/dev/null || true
		fi
	done
}

# lc ARGS...: lavacli, at the lab or (LAVA_URI) at the user's server.
lc() {
	if [[ -n $remote ]]; then
		XDG_CONFIG_HOME=$remote timeout 60 lavacli -i remote "$@"
	else
		L "$@"
	fi
}

# yaml_field FIELD: a top-level field of lavacli's --yaml output on stdin.
yaml_field() {
	awk -v f="$1:" '$1 == f { $1 = ""; sub(/^ /, ""); print; exit }'
}

# wait_finished SECS ID...: 0 when every job is Finished within SECS.
wait_finished() {
	local secs=$1 end id left
	shift
	end=$(($(date +%s) + secs))
	while :; do
		left=0
		for id in "$@"; do
			[[ $(lc jobs show "$id" --yaml 2>/dev/null | yaml_field state) == Finished ]] || left=1
		done
		[[ $left -eq 0 ]] && return 0
		[[ $(date +%s) -lt $end ]] || return 1
		sleep 5
	done
}

# give_up ID REASON: cancel the job; a job that does not finish is failed
# on the server (local lab only: lava-server manage jobs fail).
give_up() {
	local id=$1
	echo "lava-lab.sh: job $id: $2: canceling it" >&2
	verdict=$2
	lc jobs cancel "$id" >/dev/null || true
	if [[ -z $remote ]]; then
		# A canceled job needs its worker to finish it.
		running worker && wait_finished 150 "$id" && return 0
		echo "lava-lab.sh: job $id not finished after the cancel: failing it on the server" >&2
		manage jobs fail "$id" >/dev/null 2>&1 || true
		wait_finished 30 "$id" || echo "lava-lab.sh: job $id is still not finished" >&2
		kill_job "$id"
	else
		wait_finished 150 "$id" && return 0
		echo "lava-lab.sh: job $id is not finished 150 s after the cancel; the server's admin can end it (lava-server manage jobs fail $id)" >&2
	fi
}

diagnose() {
	if [[ -z $remote ]]; then
		running worker || echo "lava-lab.sh: the worker process is not running" >&2
		L workers show "$WORKER" --yaml 2>&1 | grep -E '^(state|health|last_ping):' | sed 's/^/  worker: /' >&2 || true
		L devices show "$DEVICE" --yaml 2>&1 | grep -E '^(state|health):' | sed "s/^/  device $DEVICE: /" >&2 || true
	else
		echo "lava-lab.sh: devices of type ${LAVA_DEVICE_TYPE:-qemu} on $LAVA_URI:" >&2
		lc devices list 2>&1 | grep -F "(${LAVA_DEVICE_TYPE:-qemu})" | sed 's/^/  /' >&2 || true
	fi
}

run_job() {
	local outdir='' kargs='' qwait='' wmax=2700 opt id show state t0 now rc=0 src=0 jd='' cpath f
	local arch=x86_64 job tags i
	local -a urls names
	OPTIND=1
	while getopts ha:o:x:q:w: opt; do
		case $opt in
		h) usage 0 ;;
		a) arch=$OPTARG ;;
		o) outdir=$OPTARG ;;
		x) kargs=$OPTARG ;;
		q) qwait=$OPTARG ;;
		w) wmax=$OPTARG ;;
		*) usage 2 ;;
		esac
	done
	shift $((OPTIND - 1))
	case $arch in
	x86_64) names=(bzImage ramdisk.cpio.gz kselftest.tar.gz) ;;
	arm64) names=(Image ramdisk.cpio.gz kselftest.tar.gz guest.dtb) ;;
	*) die "bad -a '$arch' (x86_64 or arm64)" ;;
	esac
	[[ $# -eq ${#names[@]} ]] || die "run -a $arch takes ${#names[@]} files: ${names[*]}"
	DEVICE=${DEVICE_OF[$arch]}
	job=$here/job-$arch.yaml
	tags=$DEVICE
	# A shared lab's queue can be long.
	[[ -n $qwait ]] || qwait=$([[ -n ${LAVA_URI:-} ]] && echo 1800 || echo 180)
	[[ $qwait =~ ^[1-9][0-9]*$ && $wmax =~ ^[1-9][0-9]*$ ]] || die "bad -q or -w (seconds, > 0)"
	for f in "$@"; do
		[[ -f $f ]] || die "no file '$f'"
	done
	outdir=${outdir:-$REPO/results/lava-lab-$(date +%Y%m%d-%H%M%S)}
	mkdir -p "$outdir"
	outdir=$(realpath "$outdir")
	remote=
	if [[ -n ${LAVA_URI:-} ]]; then
		[[ -n ${LAVA_USER:-} ]] || die "LAVA_URI without LAVA_USER"
		[[ -n ${LAVA_ARTIFACT_URL:-} ]] ||
			die "LAVA_URI without LAVA_ARTIFACT_URL (where your workers fetch ${names[*]})"
		tags=${LAVA_TAGS:-}
		local tok=${LAVA_TOKEN:-}
		[[ -n $tok || -z ${LAVA_TOKEN_FILE:-} ]] || tok=$(cat "$LAVA_TOKEN_FILE")
		[[ -n $tok ]] || die "LAVA_URI without LAVA_TOKEN or LAVA_TOKEN_FILE"
		need_pkgs lavacli
		# The token stays out of the results: a directory removed on exit.
		remote=$(mktemp -d)
		trap 'rm -rf "$remote"' EXIT
		(
			umask 077
			printf 'remote:\n  uri: "%s"\n  username: "%s"\n  token: "%s"\n  timeout: 30\n' \
				"$LAVA_URI" "$LAVA_USER" "$tok" >"$remote/lavacli.yaml"
		)
		local a=${LAVA_ARTIFACT_URL%/}/$arch
		urls=("${names[@]/#/$a/}")
		echo "lava-lab.sh: the job downloads, and you copy there first:" >&2
		for ((i = 0; i < ${#urls[@]}; i++)); do
			echo "  ${urls[i]}  <-  $(realpath "${*:i+1:1}")" >&2
		done
		job_urls "$job" "$outdir/job.yaml.tmp" "$kargs" "${urls[@]}" ||
			die "cannot write the job"
		[[ ${LAVA_DEVICE_TYPE:-qemu} =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad LAVA_DEVICE_TYPE"
		# The job checks that the files it downloads are these ones: the
		# sha256 of each follows its url line.
		local sums=()
		for f in "$@"; do
			sums+=("$(sha256sum <"$f" | cut -d' ' -f1)")
		done
		awk -v sums="${sums[*]}" -v t="${LAVA_DEVICE_TYPE:-qemu}" '
			BEGIN { split(sums, s, " ") }
			/^device_type: qemu$/ { print "device_type: " t; next }
			{ print }
			$1 == "url:" {
				ind = $0; sub(/url:.*/, "", ind)
				print ind "sha256sum: " s[++i]
			}' "$outdir/job.yaml.tmp" >"$outdir/job.yaml.tmp2"
		rm -f "$outdir/job.yaml.tmp"
		[[ $(grep -c '^ *sha256sum: ' "$outdir/job.yaml.tmp2") -eq $# ]] || die "cannot add the sha256 sums to the job"
		job_tags "$outdir/job.yaml.tmp2" "$outdir/job.yaml" "$tags"
		rm -f "$outdir/job.yaml.tmp2"
		cpath=$outdir/job.yaml
	else
		if ! anchor_pid >/dev/null || ! http_ok /api/help/; then
			die "the lab is not up (lava-lab.sh up, or make lava-lab)"
		fi
		if ! running worker; then
			die "worker $WORKER is offline, its process is not running: lava-lab.sh up starts it"
		fi
		[[ $(worker_state) == Online ]] ||
			die "worker $WORKER is $(worker_state) on the server: lava-lab.sh up waits for it"
		jd=/srv/lava-lab/jobs/$(basename "$outdir")
		rm -rf "${R:?}$jd"
		mkdir -p "$R$jd"
		urls=()
		for ((i = 0; i < ${#names[@]}; i++)); do
			cp "${*:i+1:1}" "$R$jd/${names[i]}"
			urls+=("file://$jd/${names[i]}")
		done
		job_urls "$job" "$outdir/job.yaml.tmp" "$kargs" "${urls[@]}" ||
			die "cannot write the job"
		job_tags "$outdir/job.yaml.tmp" "$outdir/job.yaml" "$tags"
		rm -f "$outdir/job.yaml.tmp"
		cp "$outdir/job.yaml" "$R$jd/job.yaml"
		cpath=$jd/job.yaml
		local qv q=qemu-system-x86_64
		[[ $arch == x86_64 ]] || q=qemu-system-aarch64
		qv=$(ns_run "$q" --version 2>&1 | sed -n 1p) || qv="unknown ($qv)"
		echo "lab QEMU: $qv" | tee "$outdir/qemu.txt"
	fi

	lc jobs validate "$cpath" >"$outdir/validate.txt" 2>&1 ||
		die "the server rejects the job: $(cat "$outdir/validate.txt")"
	# lavacli prints an error for a rejected job, and exits 0 all the same.
	id=$(lc jobs submit "$cpath" 2>&1) || die "lavacli jobs submit failed: $id"
	[[ $id =~ ^[0-9]+$ ]] || die "the job was not submitted: $id"
	echo "$id" >"$outdir/job-id"
	progress "lava-lab: job $id submitted ($outdir)"
	# Interrupted: the job does not stay on the device.
	# shellcheck disable=SC2064 # the id is known now
	trap "give_up $id 'interrupted'; exit 130" INT TERM HUP

	verdict=
	t0=$(date +%s)
	local seen='' misses=0
	while :; do
		now=$(date +%s)
		if ((now - t0 >= wmax)); then
			give_up "$id" "not finished after ${wmax}s"
			break
		fi
		if ! show=$(lc jobs show "$id" --yaml 2>&1); then
			misses=$((misses + 1))
			[[ $misses -lt 12 ]] || { verdict="the server stopped answering"; break; }
			sleep 5
			continue
		fi
		misses=0
		state=$(yaml_field state <<<"$show")
		[[ $state == "$seen" ]] || progress "lava-lab: job $id $state"
		seen=$state
		case $state in
		Finished) break ;;
		Submitted | Scheduling | Scheduled)
			if ((now - t0 >= qwait)); then
				diagnose
				give_up "$id" "not running ${qwait}s after its submission"
				break
			fi
			;;
		esac
		if [[ -z $remote && $state =~ ^(Scheduled|Running)$ ]] && ! running worker; then
			give_up "$id" "the worker stopped while the job was $state"
			break
		fi
		sleep 5
	done
	trap - INT TERM HUP

	# Whatever happened, keep what the server has.
	lc jobs show "$id" --yaml >"$outdir/job-show.yaml" 2>&1 || true
	lc jobs logs --raw --no-follow "$id" >"$outdir/lava-raw.log" 2>&1 || true
	sed 's/^- //' "$outdir/lava-raw.log" >"$outdir/lava.log"
	lc results "$id" --yaml >"$outdir/results-api.yaml" 2>&1 || true
	local health
	health=$(yaml_field health <"$outdir/job-show.yaml")
	progress "lava-lab: job $id health ${health:-unknown}, log $outdir/lava.log"

	if [[ -z $remote ]]; then
		# python3-yaml is the lab's, not necessarily this machine's.
		cp "$here/lava-results.py" "$outdir/lava.log" "$outdir/results-api.yaml" "$R$jd/"
		ns_run python3 "$jd/lava-results.py" --api-results "$jd/results-api.yaml" \
			"$jd/lava.log" "$jd/results.yaml" >"$outdir/summary.txt" || src=$?
		mv "$R$jd/results.yaml" "$outdir/" 2>/dev/null || true
		rm -rf "${R:?}$jd"
	else
		"$here/lava-results.py" --api-results "$outdir/results-api.yaml" "$outdir/lava.log" \
			"$outdir/results.yaml" >"$outdir/summary.txt" || src=$?
	fi
	cat "$outdir/summary.txt"
	[[ -z $verdict ]] || echo "job $id: $verdict" | tee -a "$outdir/summary.txt"
	echo "job $id: health ${health:-unknown}" | tee -a "$outdir/summary.txt"
	[[ $health == Complete && $src -eq 0 && -z $verdict ]] || rc=1
	return "$rc"
}

check() {
	local out=$S/check jd=/srv/lava-lab/check a n
	up
	mkdir -p "$R$jd"
	for a in x86_64 arm64; do
		n=$(grep -cE '^ *url: ' "$here/job-$a.yaml")
		# shellcheck disable=SC2046 # n URLs
		job_urls "$here/job-$a.yaml" "$R$jd/job.yaml.tmp" "" \
			$(seq -f "file:///srv/lava-lab/check/f%g" "$n") || die "cannot write the job"
		job_tags "$R$jd/job.yaml.tmp" "$R$jd/job.yaml" "${DEVICE_OF[$a]}"
		L jobs validate "$jd/job.yaml" || die "the server rejects job-$a.yaml"
		echo "ok: the server validates $here/job-$a.yaml"
	done
	mkdir -p "$out"
	L devices dict get --render x86_64-numa >"$out/device.yaml"
	if ! diff -u <(sed 1,2d "$here/device-x86_64.yaml") "$out/device.yaml"; then
		die "the server renders x86_64-numa unlike lava/device-x86_64.yaml (diff above)"
	fi
	echo "ok: the server renders x86_64-numa as lava/device-x86_64.yaml"
	[[ $(worker_state) == Online ]] || die "worker $WORKER is not online"
	echo "ok: worker $WORKER online"
}

remote=
verdict=
[[ $# -ge 1 ]] || usage 2
cmd=$1
shift
case $cmd in
-h | help) usage 0 ;;
root)
	lock
	make_root
	;;
up) up ;;
run)
	[[ $(id -u) -eq 0 || -n ${LAVA_URI:-} ]] || die "lava-lab.sh run needs root"
	run_job "$@"
	;;
check) check ;;
status) status ;;
down) down ;;
*) usage 2 ;;
esac
