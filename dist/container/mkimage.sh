#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# mkimage.sh BINARY ARCHIVE: connscope's container image as an OCI archive,
# built by podman without any registry (make image runs it).
#
# The root filesystem is staged from this machine: BINARY as
# /usr/sbin/connscope, every shared library `ldd BINARY` names at the path
# the loader found it, the loader itself, and each library package's
# copyright file (Debian: dpkg -S). Nothing else is needed at run time: the
# agent reads the kernel's files (/proc, /sys/kernel/btf, /sys/fs/cgroup,
# tracefs), which the container runtime mounts, and no /etc file (no user
# names, no DNS; time zone UTC). The Containerfile is FROM scratch with one
# COPY, so the build runs nothing inside a container.
#
# podman works on a private store under the archive's directory (vfs
# driver, removed at the end), so the build leaves no image, layer or
# container behind in the machine's own store: `podman load -i ARCHIVE`
# puts the image where you want it.
#
# Environment: IMAGE_NAME (localhost/connscope), IMAGE_SOURCE (the
# org.opencontainers.image.source label; default: the git remote "origin",
# else the source tree's commit).
set -euo pipefail

die() {
	echo "mkimage.sh: $*" >&2
	exit 1
}

[[ $# -eq 2 ]] || die "usage: mkimage.sh BINARY ARCHIVE"
bin=$1 archive=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
[[ -x $bin ]] || die "$bin: no such executable (make first)"
command -v podman >/dev/null || die "podman missing (apt-get install podman; make image installs it)"

version=$("$bin" --version | awk '{print $2}')
[[ -n $version ]] || die "$bin --version printed no version"
revision=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
[[ -n $(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null) ]] && revision+=-dirty
source=${IMAGE_SOURCE:-$(git -C "$repo" remote get-url origin 2>/dev/null || echo "connscope source tree at $revision")}
name=${IMAGE_NAME:-localhost/connscope}

work=$(mktemp -d "$(dirname "$archive")/image-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/context/rootfs
mkdir -p "$root/usr/sbin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/etc" \
	"$root/run" "$root/usr/share/doc/connscope"
chmod 1777 "$root/tmp"
install -m 0755 "$bin" "$root/usr/sbin/connscope"
install -m 0644 "$repo/LICENSE" "$repo/LICENSES/GPL-2.0" "$repo/LICENSES/BSD-3-Clause" \
	"$root/usr/share/doc/connscope/"

# "libx.so.1 => /lib/.../libx.so.1 (0x...)" and the loader's "/lib64/ld-linux-x86-64.so.2 (0x...)".
libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}')
[[ -n $libs ]] || die "ldd $bin named no library"
for lib in $libs; do
	# The file itself (cp -L) at the path the loader looks up.
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
	pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1) || pkg=
	if [[ -n $pkg && -f /usr/share/doc/$pkg/copyright ]]; then
		mkdir -p "$root/usr/share/doc/$pkg"
		cp "/usr/share/doc/$pkg/copyright" "$root/usr/share/doc/$pkg/"
	fi
done
# Debian's /lib is a link to /usr/lib: the same in the image.
for d in lib lib64; do
	if [[ -L /$d && -d $root/$d && ! -L $root/$d ]]; then
		mkdir -p "$root/usr/$d"
		cp -a "$root/$d/." "$root/usr/$d/"
		rm -rf "${root:?}/$d"
		ln -s "usr/$d" "$root/$d"
	fi
done
cp "$here/Containerfile" "$work/context/"

store=(--root "$work/store" --runroot "$work/run" --storage-driver vfs --tmpdir "$work/tmp"
	--events-backend none --cgroup-manager cgroupfs)
podman "${store[@]}" build --quiet --file "$work/context/Containerfile" \
	--build-arg VERSION="$version" --build-arg REVISION="$revision" --build-arg SOURCE="$source" \
	--tag "$name:$version" "$work/context" >/dev/null
rm -f "$archive"
podman "${store[@]}" save --quiet --format oci-archive --output "$archive.tmp" "$name:$version"
mv "$archive.tmp" "$archive"
echo "mkimage.sh: $archive: $name:$version ($(du -k "$archive" | cut -f1) KiB; podman load -i $archive)"
