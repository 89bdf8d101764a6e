/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What became of the --cgroup directory during a run, as attach's and
 * fdleak's reports say it: text lines and JSON run members. */
#ifndef CONNSCOPE_REPORT_CGROUP_H
#define CONNSCOPE_REPORT_CGROUP_H

#include <stdio.h>
#include "cgroup_facts.h"

struct json;

/* A line for each that happened: the cgroup made again at its path
 * (followed), the cgroup removed with none made again; nothing when
 * neither did or path is NULL. */
void format_cgroup_text(FILE *out, const char *path, const struct cgroup_facts *f);
/* "cgroup" (the path, null: none), "cgroup_removed_s" (null: there at the
 * end), "cgroup_recreated" (count), "cgroup_recreated_s" (null: none). */
void json_cgroup(struct json *j, const char *path, const struct cgroup_facts *f);

#endif
