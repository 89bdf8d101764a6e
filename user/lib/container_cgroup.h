/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Which container a cgroup v2 path belongs to, by the runtimes' own
 * naming: podman (libpod-ID.scope, libpod_parent/libpod-ID), Docker
 * (docker-ID.scope, /docker/ID), containerd and CRI-O under Kubernetes
 * (cri-containerd-ID.scope, crio-ID.scope, kubepods/.../podUID/ID), and
 * the pod's UID from a kubepods path (cgroupfs and systemd drivers). Pure
 * string work: the paths come from /proc/PID/cgroup or the cgroup tree. */
#ifndef CONNSCOPE_CONTAINER_CGROUP_H
#define CONNSCOPE_CONTAINER_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

#define CONTAINER_ID_LEN 64	/* hex digits of a full id */
#define CONTAINER_SHORT_LEN 12	/* as `podman ps` / `docker ps` print it */
#define POD_UID_LEN 36		/* 8-4-4-4-12 */

struct cgroup_container {
	const char *runtime;	/* "podman", "docker", "containerd", "cri-o", "kubernetes" */
	char id[CONTAINER_ID_LEN + 1];
	char pod_uid[POD_UID_LEN + 1];	/* "" outside Kubernetes */
};

/* The innermost container named in path (as /proc/PID/cgroup shows it
 * after "0::"); false when none (a host process, a conmon, a systemd
 * service). pod_uid is set whenever a kubepods pod level is in the path,
 * even without a container level under it. */
bool container_from_cgroup(const char *path, struct cgroup_container *c);

/* The pod UID alone ("" when none); true when found. */
bool pod_uid_from_cgroup(const char *path, char uid[POD_UID_LEN + 1]);

/* A full id: 64 lowercase hex digits. */
bool container_id_valid(const char *s, size_t len);

#endif
