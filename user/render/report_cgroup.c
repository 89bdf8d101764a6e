// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "report_cgroup.h"
#include "json.h"

void format_cgroup_text(FILE *out, const char *path, const struct cgroup_facts *f)
{
	if (!path)
		return;
	if (f->recreated)
		fprintf(out, "cgroup %s re-created %u time%s (the last %.1f s into the run): the "
			     "new one followed each time\n", path, f->recreated,
			f->recreated == 1 ? "" : "s", f->recreated_s);
	if (f->removed)
		fprintf(out, "cgroup %s removed %.1f s into the run: no process joined through "
			     "it after that\n", path, f->removed_s);
}

void json_cgroup(struct json *j, const char *path, const struct cgroup_facts *f)
{
	json_key(j, "cgroup");
	if (path)
		json_string(j, path);
	else
		json_null(j);
	/* Removed during the run, none made again at its path: when (null:
	 * not, or made again since). */
	json_key(j, "cgroup_removed_s");
	if (path && f->removed)
		json_double(j, f->removed_s, 3);
	else
		json_null(j);
	/* A new cgroup at the same path followed (a restarted unit or
	 * container): how often, and the last one when. */
	json_kv_uint(j, "cgroup_recreated", path ? f->recreated : 0);
	json_key(j, "cgroup_recreated_s");
	if (path && f->recreated)
		json_double(j, f->recreated_s, 3);
	else
		json_null(j);
}
