/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Containers by name or id (--container), and the container of a process
 * (its `container` and `pod_uid` labels): the cgroup tree read by the
 * runtimes' naming (lib/container_cgroup.h), names from the runtimes' own
 * state (Docker's /var/lib/docker/containers/ID/config.v2.json, podman's
 * `podman inspect`). */
#ifndef CONNSCOPE_CONTAINERS_H
#define CONNSCOPE_CONTAINERS_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include "container_cgroup.h"

#define CONTAINER_NAME_MAX 128

struct container_ref {
	struct cgroup_container c;	/* runtime, id, pod_uid */
	char name[CONTAINER_NAME_MAX];	/* "" when the runtime's state has none */
	char cgroup[PATH_MAX];		/* its cgroup v2 directory (absolute) */
};

/* --container NAME|ID: 0, or -1 after one message naming the problem and
 * the fix (no such container, an ambiguous id prefix, not running, no
 * runtime state to find a name in). */
int container_resolve(const char *arg, struct container_ref *out);

/* The label: the name where known, else the 12-digit short id. */
const char *container_label(const struct container_ref *r, char *buf, size_t len);

/* The container pid is in, from /proc/PID/cgroup ("0::" line): false when
 * none (or the process is gone). Names are looked up once an id. */
bool container_of_pid(pid_t pid, struct container_ref *out);

#endif
