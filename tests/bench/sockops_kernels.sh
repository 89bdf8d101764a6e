#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# sockops_kernels.sh [SERIES...]: tests/bench/sockops_ab.sh's coverage check
# inside other kernels: Debian's 6.1 and 6.12 (default), booted under QEMU
# (TCG, one CPU) from the packages tests/kernels/run.sh keeps in
# KERNEL_CACHE (default .output/kernels; `make test-kernels` fills it).
# In each guest: `sockops_ab cover` and `sockops_ab -L cover` (the
# transitions the tracepoint and sock_ops see, scenario by scenario), then
# a churn of GUEST_N connections in a cgroup with both hooks and their
# bodies attached (transitions each saw, recursion_misses, nested sock_ops
# runs). Prints the guests' output as it is. A measurement, not a test.
#
# Needs `make .output/bench/sockops_ab .output/bench/loadgen`,
# busybox-static and qemu-system-x86.
set -u
export LC_ALL=C
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$REPO_ROOT/.output/bench
KERNEL_CACHE=${KERNEL_CACHE:-$REPO_ROOT/.output/kernels}
GUEST_TIMEOUT=${GUEST_TIMEOUT:-300} GUEST_N=${GUEST_N:-2000}
series=("$@")
((${#series[@]})) || series=(6.1 6.12)

for b in "$B/sockops_ab" "$B/loadgen"; do
	[[ -x $b ]] || { echo "sockops_kernels.sh: $b missing: make $b" >&2; exit 1; }
done
busybox=$(command -v busybox) || { echo "sockops_kernels.sh: apt-get install busybox-static" >&2; exit 1; }
command -v qemu-system-x86_64 >/dev/null || { echo "sockops_kernels.sh: apt-get install qemu-system-x86" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/connscope-sockops-kernels.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root"/{bin,proc,sys,dev,tmp,run}
cp "$busybox" "$root/bin/busybox"
cp "$B/sockops_ab" "$B/loadgen" "$root/bin/"
for b in "$B/sockops_ab" "$B/loadgen"; do
	ldd "$b" | awk '/=> \// {print $3} /^\t\/[^ ]*ld-linux/ {print $1}'
done | sort -u | while read -r lib; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
cat >"$root/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /sys/fs/cgroup && mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo 1 >/proc/sys/kernel/printk
ip link set lo up
exec >/dev/ttyS1 2>&1
echo "guest: booted \$(uname -r)"
mkdir /sys/fs/cgroup/so
sockops_ab cover /sys/fs/cgroup/so
echo "-L:"
sockops_ab -L cover /sys/fs/cgroup/so
echo "churn: $GUEST_N connections, both hooks with their bodies"
mkfifo /tmp/ld.in
sockops_ab -b -a -s both /sys/fs/cgroup/so </tmp/ld.in >/tmp/ld.out &
ld=\$!
exec 3>/tmp/ld.in
i=0
while ! grep -q ready /tmp/ld.out && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i + 1)); done
echo go | sh -c 'echo \$\$ >/sys/fs/cgroup/so/cgroup.procs && exec loadgen run -n $GUEST_N -c 16 -r 1' | grep result
exec 3>&-
wait \$ld
grep -v '^ready' /tmp/ld.out
echo "guest: done"
sync
poweroff -f
EOF
chmod 0755 "$root/init"
(cd "$root" && find . | LC_ALL=C sort | "$busybox" cpio -o -H newc -R 0:0 2>/dev/null) | gzip -1 >"$tmp/initrd.gz"

for s in "${series[@]}"; do
	vmlinuz=$(ls "$KERNEL_CACHE"/linux-image-"$s"[.-]*/boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)
	[[ -n $vmlinuz ]] || { echo "sockops_kernels.sh: no $s kernel in $KERNEL_CACHE (make test-kernels fetches them)" >&2; continue; }
	: >"$tmp/res"
	timeout -k 5 "$GUEST_TIMEOUT" qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -nographic -no-reboot \
		-nodefaults -serial "file:$tmp/con" -chardev "file,id=res,path=$tmp/res" \
		-device isa-serial,chardev=res -kernel "$vmlinuz" -initrd "$tmp/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet" </dev/null >/dev/null 2>"$tmp/qemu.err"
	echo "== $(basename "$vmlinuz") (qemu exit $?)"
	tr -d '\r' <"$tmp/res"
	grep -q '^guest: done' "$tmp/res" || tail -c 1500 "$tmp/con"
done
