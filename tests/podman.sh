# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# shellcheck shell=bash
# Real containers for the tests (source after lib.sh): Debian's podman
# with no registry, as KERNEL-FACTS.md found it works on this machine kind:
# runc and cgroupfs (crun refuses hybrid cgroups), a containers.conf whose
# ulimits fit the machine's hard RLIMIT_NOFILE (20000; podman asks for
# 1048576), no event log. Everything lives in a store of the test's own
# (vfs: plain directories, no mounts to undo), removed at exit with every
# container in it, and the cgroup directories podman made are removed.
#
# pm_setup DIR: the store in DIR; then `pm ARGS...` is podman on it.

# What the agent needs in a container (docs/image.md says why each).
PM_AGENT_CAPS=bpf,perfmon,sys_ptrace,dac_read_search,syslog,net_admin,setuid,setgid
PM_AGENT_MOUNTS=(-v /sys/kernel/tracing:/sys/kernel/tracing:ro -v /sys/fs/cgroup:/sys/fs/cgroup:ro)

PM_ARGS=()

pm_setup() {
	local dir=$1

	mkdir -p "$dir" || return 1
	cat >"$dir/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
events_logger = "none"
CONF
	export CONTAINERS_CONF=$dir/containers.conf
	PM_ARGS=(--root "$dir/store" --runroot "$dir/run" --storage-driver vfs --tmpdir "$dir/tmp"
		--runtime runc --cgroup-manager cgroupfs)
	on_exit "_pm_teardown '$dir'"
}

pm() {
	podman "${PM_ARGS[@]}" "$@"
}

# pm_track_pods: remember the pods there are now, so that their cgroups
# are removed at exit even if the test took the pods down itself.
_pm_pods=
pm_track_pods() {
	_pm_pods+=" $(pm pod ps -q --no-trunc 2>/dev/null | tr '\n' ' ')"
}

# pm_pod_cgroups_remove ID...: a pod's own cgroup stays behind in the named
# systemd and the v2 hierarchies once the pod is gone (podman 4.3, cgroupfs,
# hybrid cgroups): removed here (rmdir: only if empty of processes). Prints
# those still there.
pm_pod_cgroups_remove() {
	local id d

	for id in "$@"; do
		for d in /sys/fs/cgroup/*/libpod_parent/"$id" /sys/fs/cgroup/libpod_parent/"$id"; do
			[[ -d $d ]] || continue
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
			[[ -d $d ]] && echo "$d"
		done
	done
	return 0
}

_pm_teardown() {
	local d pods i

	pods="$_pm_pods $(pm pod ps -q --no-trunc 2>/dev/null)"
	pm pod rm -af -t 2 >/dev/null 2>&1
	pm rm -af -t 2 >/dev/null 2>&1
	pm rmi -af >/dev/null 2>&1
	rm -rf "$1"
	pm_pod_cgroups_remove $pods
	# The parent cgroups podman makes for its containers and their conmon
	# (cgroupfs), once empty: a conmon may still be on its way out, so for
	# up to 2 s. rmdir leaves one in use (another podman's) alone.
	for ((i = 0; i < 100; i++)); do
		for d in /sys/fs/cgroup/*/libpod_parent /sys/fs/cgroup/libpod_parent; do
			[[ -d $d ]] || continue
			[[ -d $d/conmon ]] && rmdir "$d/conmon" 2>/dev/null
			rmdir "$d" 2>/dev/null
		done
		compgen -G '/sys/fs/cgroup/*/libpod_parent/conmon' >/dev/null || break
		sleep 0.02
	done
	return 0
}
