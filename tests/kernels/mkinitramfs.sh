#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# mkinitramfs.sh OUT.cpio.gz: the initramfs the kernel guests boot
# (tests/kernels/run.sh). It holds busybox-static (the guest's coreutils),
# bash, jq and ss with every library ldd names (and the dynamic loader),
# the connscope binary, the C fixtures, tests/lib.sh + tests/fixture.sh (the
# same helpers as the host's tests) and tests/kernels/guest.sh, run by
# tests/kernels/init as /init. The guest has no disk: this is its root.
# For a bench in the guests (tests/bench/getpid_kernels.sh): GUEST_SCRIPT
# runs in place of tests/kernels/guest.sh, and EXTRA_BINS (paths, spaces
# between) join the fixtures, with their libraries.
set -euo pipefail
out=$1
REPO_ROOT=${REPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$REPO_ROOT"

busybox=$(command -v busybox) || { echo "mkinitramfs: busybox not found: apt-get install busybox-static" >&2; exit 1; }
# A dynamic busybox would need its libraries; the static one stands alone.
if ldd "$busybox" >/dev/null 2>&1; then
	echo "mkinitramfs: $busybox is dynamically linked: apt-get install busybox-static" >&2
	exit 1
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/connscope-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,etc} \
	"$root/connscope/.output/fixtures" "$root/connscope/tests/kernels"

bins=("$(command -v bash)" "$(command -v jq)" "$(command -v ss)")
cp "$busybox" "$root/bin/busybox"
for b in "${bins[@]}"; do
	cp "$b" "$root/bin/"
done
cp .output/connscope "$root/connscope/.output/"
for f in .output/fixtures/* ${EXTRA_BINS:-}; do
	[[ -f $f && -x $f ]] && cp "$f" "$root/connscope/.output/fixtures/"
done
cp tests/lib.sh tests/fixture.sh "$root/connscope/tests/"
cp "${GUEST_SCRIPT:-tests/kernels/guest.sh}" "$root/connscope/tests/kernels/guest.sh"
install -m 0755 tests/kernels/init "$root/init"

# Every library of every dynamic binary, at the path ldd resolves it to,
# so the guest's loader finds it where the host's would.
for b in "${bins[@]}" .output/connscope "$root"/connscope/.output/fixtures/*; do
	ldd "$b" | awk '/=> \// {print $3} /^\t\/[^ ]*ld-linux/ {print $1}'
done | sort -u | while read -r lib; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done

tmp_out=$out.tmp
(cd "$root" && find . | LC_ALL=C sort | "$busybox" cpio -o -H newc -R 0:0 2>/dev/null) | gzip -6 > "$tmp_out"
mv "$tmp_out" "$out"
