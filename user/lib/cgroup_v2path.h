/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Cgroup v2 paths as strings: a process's path from the text of
 * /proc/PID/cgroup, and whether one directory lies under another (a
 * program attached at a cgroup runs for its descendants too). Pure string
 * work, so the QUIC wire unit's choice of where to attach is testable
 * without root. */
#ifndef CONNSCOPE_CGROUP_V2PATH_H
#define CONNSCOPE_CGROUP_V2PATH_H

#include <stdbool.h>
#include <stddef.h>

/* The "0::" line of /proc/PID/cgroup text into out ("/a/b", "/" for the
 * root). 0; -ENOENT: no v2 line (a v1-only host); -EXDEV: a path the
 * reader cannot resolve (outside its cgroup namespace: "/../x", or
 * "(deleted)"); -ENAMETOOLONG. */
int cgroup_v2_rel(const char *text, char *out, size_t len);

/* Whether path is anc itself or a directory below it ("/a" holds "/a" and
 * "/a/b", not "/ab"). Absolute paths without a trailing slash, but the
 * mount point "/" which holds every path. */
bool cgroup_path_within(const char *anc, const char *path);

#endif
