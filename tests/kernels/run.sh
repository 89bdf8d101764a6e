#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# run.sh INITRAMFS [SERIES...]: boot Debian's own kernel packages in QEMU
# with the initramfs mkinitramfs.sh made, and relay the smoke tests' results
# (tests/kernels/guest.sh) as "ok - " / "not ok - " lines.
#
# SERIES is a kernel line of Debian 12 (default: 6.1 6.12): the newest
# linux-image-<series>.*-cloud-amd64 that apt-cache knows is fetched with
# apt-get download into $KERNEL_CACHE (default .output/kernels) once, and
# reused from there on later runs (also with no network: the newest cached
# one of the series). A guest that does not boot, hangs, or does not finish
# its tests is a failure, never a skip.
set -u
REPO_ROOT=${REPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KERNEL_CACHE=${KERNEL_CACHE:-$REPO_ROOT/.output/kernels}
# The downloads run in the cache: a relative path (make's) is made whole.
[[ $KERNEL_CACHE == /* ]] || KERNEL_CACHE=$PWD/$KERNEL_CACHE
# One guest's whole run, boot to poweroff, under TCG: 84 s (6.1) and 169 s
# (6.12) with other work beside it on 2 cores, 6.1 144 s in a loaded
# make test (2026-12-07; the cases have grown since the 32-57 s of a
# quiet machine once measured). A bound, not a wait: 95_kernels's own
# test-timeout holds two of them.
GUEST_TIMEOUT=${GUEST_TIMEOUT:-300}
# KERNEL_ACCEL: auto (KVM if a guest reaches /init under it within
# KVM_PROBE_TIMEOUT seconds, else TCG), kvm or tcg. On machines where
# KVM is nested and broken a KVM guest hangs: hence the probe.
KERNEL_ACCEL=${KERNEL_ACCEL:-auto}
# KERNEL_QEMU_ARGS: more for QEMU's command line (a bench's
# "-icount shift=2": the guest's clock counts its instructions).
KERNEL_QEMU_ARGS=${KERNEL_QEMU_ARGS:-}
KVM_PROBE_TIMEOUT=${KVM_PROBE_TIMEOUT:-8}
initramfs=${1:?usage: run.sh INITRAMFS [SERIES...]}
shift
series=("$@")
((${#series[@]})) || series=(6.1 6.12)
name=${LIB_SCRIPT:-95_kernels}

say() { printf '%s\n' "$*"; }
fail() { say "not ok - $name/$1: $2"; }

# What each series lacks of connscope's hooks, as connscope names the
# figures it turns off (user/kfeatures.c). The guest checks that exactly
# these are named in attach -j's run.unavailable[].
expect_unavailable() {
	case $1 in
	# sock_send_length/sock_recv_length came in 6.3; cgroup_skb may call
	# the current task helpers only after 6.12.
	6.1) echo connection_io,quic_send_owner ;;
	6.12) echo quic_send_owner ;;
	*) echo none ;;
	esac
}

pkg_pattern() {
	case $1 in
	6.1) echo '^linux-image-6\.1\.0-[0-9]+-cloud-amd64$' ;;
	*) echo "^linux-image-${1//./\\.}\\.[0-9]+\\+deb12-cloud-amd64\$" ;;
	esac
}

updated=0
newest_pkg() {
	local pat=$1 p
	p=$(apt-cache search --names-only "$pat" 2>/dev/null | awk '{print $1}' | sort -V | tail -n 1)
	if [[ -z $p && $updated -eq 0 ]]; then
		updated=1
		apt-get update >/dev/null 2>&1
		p=$(apt-cache search --names-only "$pat" 2>/dev/null | awk '{print $1}' | sort -V | tail -n 1)
	fi
	echo "$p"
}

# unpack PKG DIR: apt-get download PKG into the cache and keep the kernel,
# its config and the sock_diag modules in DIR (the rest of the modules is
# 100 MB the guests never load).
unpack() {
	local pkg=$1 dir=$2 deb
	mkdir -p "$KERNEL_CACHE" || return 1
	rm -rf "$dir" "$dir.tmp" "$KERNEL_CACHE"/"$pkg"_*.deb
	(cd "$KERNEL_CACHE" && apt-get download "$pkg" >/dev/null 2>"$KERNEL_CACHE/$pkg.log") ||
		{ echo "apt-get download $pkg failed: $(tail -n 3 "$KERNEL_CACHE/$pkg.log")" >&2; return 1; }
	deb=$(ls "$KERNEL_CACHE"/"$pkg"_*.deb | head -n 1)
	dpkg-deb -x "$deb" "$dir.tmp" &&
		find "$dir.tmp" -type f ! -path '*/boot/*' ! -name '*_diag.ko*' -delete &&
		mv "$dir.tmp" "$dir" && rm -f "$deb" "$KERNEL_CACHE/$pkg.log" ||
		{ rm -rf "$dir.tmp"; echo "dpkg-deb -x $deb failed" >&2; return 1; }
}

# fetch SERIES: prints the vmlinuz path of the series' kernel, from the
# cache or fetched into it.
fetch() {
	local pkg dir vmlinuz
	pkg=$(newest_pkg "$(pkg_pattern "$1")")
	if [[ -z $pkg ]]; then
		# Offline: the newest one already here.
		dir=$(ls -d "$KERNEL_CACHE"/linux-image-"$1"[.-]* 2>/dev/null | sort -V | tail -n 1)
		[[ -n $dir ]] || { echo "apt-cache knows no package matching $(pkg_pattern "$1") and none is cached in $KERNEL_CACHE" >&2; return 1; }
		pkg=$(basename "$dir")
	fi
	vmlinuz=$(ls "$KERNEL_CACHE/$pkg"/boot/vmlinuz-* 2>/dev/null | head -n 1)
	if [[ -z $vmlinuz ]]; then
		if ! unpack "$pkg" "$KERNEL_CACHE/$pkg"; then
			# Stale package lists name a version the archive dropped
			# (the security archive keeps only the newest): refresh, retry.
			((updated)) && return 1
			updated=1
			apt-get update >/dev/null 2>&1
			pkg=$(newest_pkg "$(pkg_pattern "$1")")
			[[ -n $pkg ]] && unpack "$pkg" "$KERNEL_CACHE/$pkg" || return 1
		fi
		vmlinuz=$(ls "$KERNEL_CACHE/$pkg"/boot/vmlinuz-* | head -n 1)
	fi
	echo "$vmlinuz"
}

# modules_cpio VMLINUZ OUT: the sock_diag modules of that kernel (=m in
# Debian's config; a real system loads them on the first dump through
# modprobe, the guest has no /lib/modules), uncompressed, in load order,
# as a second cpio archive that the kernel unpacks over the first.
modules_cpio() {
	local kdir m f i=0 d
	kdir=$(dirname "$(dirname "$1")")/lib/modules
	d=$tmp/mods
	rm -rf "$d" && mkdir -p "$d/modules" || return 1
	for m in ipv4/inet_diag ipv4/tcp_diag ipv4/udp_diag ipv4/raw_diag unix/unix_diag packet/af_packet_diag; do
		f=$(ls "$kdir"/*/kernel/net/$m.ko* 2>/dev/null | head -n 1)
		[[ -n $f ]] || continue
		i=$((i + 1))
		case $f in
		*.xz) xz -dc "$f" >"$d/modules/$i-${m#*/}.ko" ;;
		*.zst) zstd -dqc "$f" >"$d/modules/$i-${m#*/}.ko" ;;
		*) cp "$f" "$d/modules/$i-${m#*/}.ko" ;;
		esac || return 1
	done
	(cd "$d" && find . | LC_ALL=C sort | busybox cpio -o -H newc -R 0:0 2>/dev/null) | gzip -1 >"$2"
}

# boot VMLINUZ APPEND RESULTS CONSOLE ACCEL TIMEOUT INITRD
boot() {
	local accel_args=(-accel tcg)
	# -cpu host/max ask for MSRs a nested KVM may refuse: the default CPU.
	[[ $5 == kvm ]] && accel_args=(-accel kvm)
	# shellcheck disable=SC2206
	accel_args+=($KERNEL_QEMU_ARGS)
	timeout -k 5 "$6" qemu-system-x86_64 "${accel_args[@]}" -m 1536 -smp 1 -nographic -no-reboot \
		-nodefaults -serial "file:$4" -chardev "file,id=res,path=$3" -device isa-serial,chardev=res \
		-kernel "$1" -initrd "$7" -append "console=ttyS0 panic=-1 quiet $2" \
		</dev/null >/dev/null 2>"$4.qemu"
}

[[ -s $initramfs ]] || { fail setup "no initramfs at $initramfs (make test-kernels builds it)"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || { fail setup "qemu-system-x86_64 not found: apt-get install qemu-system-x86 (make test-deps)"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/connscope-kernels.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
rc=0

# pick_accel VMLINUZ INITRD: tcg or kvm, once per run.
accel=
pick_accel() {
	[[ -n $accel ]] && return
	accel=tcg
	case $KERNEL_ACCEL in
	tcg) return ;;
	kvm) accel=kvm; return ;;
	esac
	[[ -r /dev/kvm && -w /dev/kvm ]] || return
	# KVM needs the CPU's virtualisation extensions, which the kernel
	# lists as vmx or svm. Without them a /dev/kvm can still be there
	# (this VM kind has one, on which a guest hangs): the probe would only
	# spend its KVM_PROBE_TIMEOUT (8 s of each make test) to find that out.
	if ! grep -q -w -E 'vmx|svm' /proc/cpuinfo; then
		echo "kernels: /dev/kvm but no vmx or svm in /proc/cpuinfo: using tcg" >&2
		return
	fi
	boot "$1" connscope.probe=1 "$tmp/probe.res" "$tmp/probe.con" kvm "$KVM_PROBE_TIMEOUT" "$2"
	grep -a -q '^guest: booted' "$tmp/probe.res" 2>/dev/null && accel=kvm
	echo "kernels: KVM $( [[ $accel == kvm ]] && echo answers || echo "did not reach /init in ${KVM_PROBE_TIMEOUT}s" ): using $accel" >&2
}
# Each series made ready in turn (fetch, its modules, its initrd), then
# the guests booted side by side: each is one emulated CPU, and nothing
# else of make test runs while they do, so on 2 cores two take the time
# of the longer (101 s and 117 s under TCG, 220 s one after the other).
ready=()
declare -A vmlinuz_of start_of pid_of qrc_of
for s in "${series[@]}"; do
	vmlinuz=$(fetch "$s" 2>"$tmp/fetch.err") || { fail "$s/fetch" "$(tr '\n' ' ' <"$tmp/fetch.err")"; rc=1; continue; }
	modules_cpio "$vmlinuz" "$tmp/$s.mods.cpio.gz" || { fail "$s/modules" "cannot pack the sock_diag modules of $vmlinuz"; rc=1; continue; }
	cat "$initramfs" "$tmp/$s.mods.cpio.gz" >"$tmp/$s.initrd.gz"
	vmlinuz_of[$s]=$vmlinuz
	ready+=("$s")
done
for s in "${ready[@]}"; do
	pick_accel "${vmlinuz_of[$s]}" "$tmp/$s.initrd.gz"
	start_of[$s]=$SECONDS
	boot "${vmlinuz_of[$s]}" "connscope.unavailable=$(expect_unavailable "$s")" "$tmp/$s.results" \
		"$tmp/$s.console" "$accel" "$GUEST_TIMEOUT" "$tmp/$s.initrd.gz" &
	pid_of[$s]=$!
	# One at a time where there is one CPU to run them.
	if (($(nproc) < 2)); then
		wait "${pid_of[$s]}"
		qrc_of[$s]=$?
	fi
done
for s in "${ready[@]}"; do
	vmlinuz=${vmlinuz_of[$s]} res=$tmp/$s.results con=$tmp/$s.console
	if [[ -n ${qrc_of[$s]-} ]]; then
		qrc=${qrc_of[$s]}
	else
		wait "${pid_of[$s]}"
		qrc=$?
	fi
	grep -a -E '^(ok|not ok|skip) - |^# ' "$res" | tr -d '\r'
	echo "$(basename "$vmlinuz"): guest ran $((SECONDS - start_of[$s])) s (qemu exit $qrc, $accel)" >&2
	if ! grep -a -q '^guest: done' "$res"; then
		rc=1
		if ((qrc == 124 || qrc == 137)); then
			fail "$s/guest" "$(basename "$vmlinuz") did not finish in ${GUEST_TIMEOUT}s; console: $(tail -c 800 "$con" | tr '\n\r' '  ')"
		else
			fail "$s/guest" "$(basename "$vmlinuz") ended without finishing its tests (qemu exit $qrc: $(tail -c 300 "$con.qemu" | tr '\n' ' ')); console: $(tail -c 800 "$con" | tr '\n\r' '  ')"
		fi
	elif ! grep -a -q '^ok - ' "$res"; then
		rc=1
		fail "$s/guest" "$(basename "$vmlinuz") reported no results"
	fi
done
exit $rc
