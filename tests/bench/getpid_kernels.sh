#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# getpid_kernels.sh BEFORE AFTER [SERIES...]: what two connscope binaries'
# default hooks cost every other task's syscalls, in Debian's kernels
# booted under QEMU (default 6.1, whose default mode has no socket storage):
# `loadgen getpid` unattached and with each binary attached to an idle
# pair (tests/bench/getpid_kernels_guest.sh, 8 rounds alternated in one
# boot, the agent stopped during each loop). QEMU runs with
# "-icount shift=2": the guest's clock counts its instructions (4 ns
# each), so the host's load does not move the figures; a syscall
# tracepoint's cost shows as calls a second of guest time. Prints each
# kind's calls_per_s min / median / max and its median over unattached's.
# A measurement, not a test.
#
# Needs make test-kernels's kernels (KERNEL_CACHE, default .output/kernels)
# and its initramfs's parts (make test-build), and .output/bench/loadgen.
set -u
export LC_ALL=C
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if (($# < 2)) || [[ ! -x $1 || ! -x $2 ]]; then
	echo "usage: getpid_kernels.sh BEFORE AFTER [SERIES...] (two connscope binaries)" >&2
	exit 2
fi
before=$1 after=$2
shift 2
loadgen=$REPO_ROOT/.output/bench/loadgen
[[ -x $loadgen ]] || { echo "getpid_kernels.sh: $loadgen missing: make $loadgen" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/connscope-getpid-kernels.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cp "$before" "$tmp/cs_before" && cp "$after" "$tmp/cs_after" && cp "$loadgen" "$tmp/" || exit 1
(cd "$REPO_ROOT" && GUEST_SCRIPT=tests/bench/getpid_kernels_guest.sh \
	EXTRA_BINS="$tmp/cs_before $tmp/cs_after $tmp/loadgen" \
	tests/kernels/mkinitramfs.sh "$tmp/initramfs.cpio.gz") || exit 1
# Under icount the guest runs ~1.5 times longer than its 2-3 minutes.
KERNEL_ACCEL=tcg KERNEL_QEMU_ARGS="-icount shift=2" GUEST_TIMEOUT=${GUEST_TIMEOUT:-600} \
	LIB_SCRIPT=getpid "$REPO_ROOT/tests/kernels/run.sh" "$tmp/initramfs.cpio.gz" "${@:-6.1}" \
	>"$tmp/out"
rc=$?
grep -E '^not ok|hooks' "$tmp/out"
# "ok - getpid/KERNEL/KIND rN calls_per_s=R": min / median / max a kind.
for k in $(sed -n 's|^ok - getpid/\([^/]*\)/.*|\1|p' "$tmp/out" | sort -u); do
	base=
	for kind in unattached before after; do
		mapfile -t v < <(sed -n "s|^ok - getpid/$k/$kind r[0-9]* calls_per_s=||p" "$tmp/out" | sort -n)
		n=${#v[@]}
		((n)) || continue
		if ((n % 2)); then med=${v[n / 2]}; else med=$(((v[n / 2 - 1] + v[n / 2]) / 2)); fi
		[[ $kind == unattached ]] && base=$med
		printf '%s %-10s calls_per_s min %d median %d max %d (%d rounds)%s\n' "$k" "$kind" \
			"${v[0]}" "$med" "${v[n - 1]}" "$n" \
			"$([[ $kind != unattached && -n $base ]] && awk -v a="$med" -v b="$base" \
				'BEGIN {printf ", %.3f of unattached", a / b}')"
	done
done
exit $rc
