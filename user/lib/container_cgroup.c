// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Path components are matched whole, from the leaf up, so the innermost
 * container wins (podman's systemd scope holds a "container" child with
 * runc; a pod's sandbox and its containers are siblings). Conmon's scopes
 * (libpod-conmon-ID.scope, crio-conmon-ID.scope) hold the monitor, not the
 * container: never a match. */
#define _GNU_SOURCE
#include <string.h>
#include "container_cgroup.h"

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool container_id_valid(const char *s, size_t len)
{
	if (len != CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_hex(s[i]))
			return false;
	return true;
}

/* comp[0..len) is PREFIX ID SUFFIX exactly: the id copied out. */
static bool match_id(const char *comp, size_t len, const char *prefix, const char *suffix,
		     char id[CONTAINER_ID_LEN + 1])
{
	size_t pl = strlen(prefix), sl = strlen(suffix);

	if (len != pl + CONTAINER_ID_LEN + sl || strncmp(comp, prefix, pl) ||
	    strncmp(comp + pl + CONTAINER_ID_LEN, suffix, sl) ||
	    !container_id_valid(comp + pl, CONTAINER_ID_LEN))
		return false;
	memcpy(id, comp + pl, CONTAINER_ID_LEN);
	id[CONTAINER_ID_LEN] = '\0';
	return true;
}

/* A pod level: "pod" UID (cgroupfs: 8-4-4-4-12 with '-') or
 * "kubepods[-QOS]-pod" UID ".slice" (systemd: '_' for '-', as systemd
 * escapes a dash in a slice name). */
static bool match_pod(const char *comp, size_t len, char uid[POD_UID_LEN + 1])
{
	const char *u = NULL;
	char sep = '-';

	if (len == 3 + POD_UID_LEN && !strncmp(comp, "pod", 3)) {
		u = comp + 3;
	} else if (len >= 9 + 3 + POD_UID_LEN + 6 && !strncmp(comp + len - 6, ".slice", 6) &&
		   memmem(comp, len, "kubepods-", 9)) {
		/* kubepods-QOS-podUID.slice; kind nests it as kubelet-kubepods-... */
		u = comp + len - 6 - POD_UID_LEN;
		if (strncmp(u - 3, "pod", 3))
			return false;
		sep = '_';
	}
	if (!u)
		return false;
	for (int i = 0; i < POD_UID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? u[i] != sep : !is_hex(u[i]))
			return false;
		uid[i] = dash ? '-' : u[i];
	}
	uid[POD_UID_LEN] = '\0';
	return true;
}

bool container_from_cgroup(const char *path, struct cgroup_container *c)
{
	const char *end = path + strlen(path), *start;
	bool found = false, kubepods = strstr(path, "kubepods") != NULL;

	memset(c, 0, sizeof(*c));
	while (end > path) {
		size_t len;

		start = end;
		while (start > path && start[-1] != '/')
			start--;
		len = (size_t)(end - start);
		if (!found && len) {
			if (match_id(start, len, "libpod-", ".scope", c->id) ||
			    match_id(start, len, "libpod-", "", c->id))
				c->runtime = "podman", found = true;
			else if (match_id(start, len, "docker-", ".scope", c->id))
				c->runtime = "docker", found = true;
			else if (match_id(start, len, "cri-containerd-", ".scope", c->id))
				c->runtime = "containerd", found = true;
			else if (match_id(start, len, "crio-", ".scope", c->id))
				c->runtime = "cri-o", found = true;
			else if (match_id(start, len, "", "", c->id)) {
				/* A bare id: Docker's cgroupfs driver (/docker/ID), or a
				 * CRI runtime's under a kubepods pod (cgroupfs driver). */
				size_t pl = (size_t)(start - path);

				if (pl >= 8 && !strncmp(start - 8, "/docker/", 8))
					c->runtime = "docker", found = true;
				else if (kubepods)
					c->runtime = "kubernetes", found = true;
				else
					c->id[0] = '\0';
			}
		}
		if (kubepods && !c->pod_uid[0] && len)
			match_pod(start, len, c->pod_uid);
		end = start > path ? start - 1 : path;
	}
	return found;
}

bool pod_uid_from_cgroup(const char *path, char uid[POD_UID_LEN + 1])
{
	struct cgroup_container c;

	container_from_cgroup(path, &c);
	memcpy(uid, c.pod_uid, sizeof(c.pod_uid));
	return uid[0] != '\0';
}
