#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Make the device tree blob for an arm64 QEMU virt guest.
#
# Usage: scripts/mk-dtb.sh [-h] GUEST OUTFILE
#
#   GUEST      a name from guests/ (arm64-juno) or the path of a .conf
#   OUTFILE    where to write the DTB
#
# Dumps QEMU virt's own DTB for the guest's machine, CPU and -smp options
# (-machine dumpdtb=), sets capacity-dmips-mhz on every /cpus/cpu@N from
# CPU_DMIPS_MHZ, and rewrites /cpus/cpu-map as socket0 with one cluster per
# entry of CPU_CLUSTERS (QEMU only makes equal clusters).  The result is
# cached under $SCHED_CACHE/dtb by a hash of the conf, this script and the
# QEMU version, so repeated runs only copy.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-lib.sh
. "$(dirname "$0")/guest-lib.sh"

usage() {
	sed -n '3,17s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}
while getopts h opt; do
	case $opt in
	h) usage 0 ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $# -eq 2 ]] || usage 2
guest_load "$1"
# The QEMU that boots the guest dumps its DTB.
guest_qemu
outfile=$2

[[ $DTB == yes ]] || die "guest '$GUEST_NAME' has DTB=$DTB: it does not use a device tree"
[[ -n ${CPU_DMIPS_MHZ:-} ]] || die "$GUEST_CONF: CPU_DMIPS_MHZ is not set"
[[ -n ${CPU_CLUSTERS:-} ]] || die "$GUEST_CONF: CPU_CLUSTERS is not set"
need_pkgs device-tree-compiler
command -v "$QEMU" >/dev/null || die "no $QEMU (install qemu-system-arm, or QEMU_SUITE=)"

hash=$( (cat "$GUEST_CONF" "$0" "$(dirname "$0")/guest-lib.sh"; "$QEMU" --version) |
	sha256sum | cut -c1-16)
cached=$CACHE/dtb/$GUEST_NAME-$hash.dtb
if [[ -f $cached ]]; then
	cp "$cached" "$outfile"
	exit 0
fi

mkdir -p "$CACHE/dtb"
tmp=$(mktemp "$CACHE/dtb/.tmp.XXXXXX")
trap 'rm -f "$tmp"' EXIT

"$QEMU" -machine "$QEMU_MACHINE,dumpdtb=$tmp" -cpu "$QEMU_CPU" -smp "$QEMU_SMP" \
	-m "$QEMU_MEM" -nodefaults -display none >"$tmp.log" 2>&1 ||
	die "$QEMU could not dump the virt DTB: $(tail -n1 "$tmp.log")"
rm -f "$tmp.log"

read -ra dmips <<<"$CPU_DMIPS_MHZ"
ncpus=${QEMU_SMP%%,*}
[[ ${#dmips[@]} -eq $ncpus ]] ||
	die "$GUEST_CONF: CPU_DMIPS_MHZ has ${#dmips[@]} values for $ncpus CPUs"

# Every CPU node's phandle, before the cpu-map that points at them goes.
declare -a phandle
for ((cpu = 0; cpu < ncpus; cpu++)); do
	phandle[cpu]=$(fdtget -t x "$tmp" "/cpus/cpu@$cpu" phandle) ||
		die "no phandle on /cpus/cpu@$cpu in QEMU's DTB"
	fdtput -t i "$tmp" "/cpus/cpu@$cpu" capacity-dmips-mhz "${dmips[cpu]}"
done

fdtput -r "$tmp" /cpus/cpu-map 2>/dev/null || true
seen=()
cl=0
for range in $CPU_CLUSTERS; do
	core=0
	for cpu in $(cpulist_expand "$range"); do
		[[ $cpu -lt $ncpus ]] || die "$GUEST_CONF: CPU_CLUSTERS names cpu$cpu, have $ncpus"
		[[ -z ${seen[cpu]:-} ]] || die "$GUEST_CONF: cpu$cpu is in two clusters"
		seen[cpu]=1
		node=/cpus/cpu-map/socket0/cluster$cl/core$core
		fdtput -p -c "$tmp" "$node"
		fdtput -t x "$tmp" "$node" cpu "${phandle[cpu]}"
		core=$((core + 1))
	done
	cl=$((cl + 1))
done
[[ ${#seen[@]} -eq $ncpus ]] ||
	die "$GUEST_CONF: CPU_CLUSTERS '$CPU_CLUSTERS' covers ${#seen[@]} of $ncpus CPUs"

# Round-trip through dtc: it rejects a tree we broke.
dtc -q -I dtb -O dtb -o "$tmp.chk" "$tmp" || die "dtc rejects the edited DTB $tmp"
rm -f "$tmp.chk"
mv "$tmp" "$cached"
trap - EXIT
cp "$cached" "$outfile"
