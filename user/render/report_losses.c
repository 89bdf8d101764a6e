// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "json.h"
#include "report_losses.h"

void format_losses_headline(FILE *out, const struct agent_losses *l)
{
	const char *sep = "";

	if (!losses_total(l))
		return;
	fputs("LOST: ", out);
	for (int k = 0; k < LOSS_MAX; k++) {
		if (!l->n[k])
			continue;
		fprintf(out, "%s%llu %s", sep, (unsigned long long)l->n[k], loss_text(k));
		sep = ", ";
	}
	fputs("; counts below are low (see agent: losses)\n", out);
}

void format_losses_text(FILE *out, const struct agent_losses *l)
{
	if (!losses_total(l)) {
		fputs("losses: none (no record lost, no map full, all seeded and attached)\n",
		      out);
		return;
	}
	fputs("losses:\n", out);
	for (int k = 0; k < LOSS_MAX; k++)
		if (l->n[k])
			fprintf(out, "  %-20s %llu  %s\n", loss_key(k), (unsigned long long)l->n[k],
				loss_text(k));
}

void json_losses(struct json *j, const struct agent_losses *l)
{
	json_key(j, "losses");
	json_object_begin(j);
	json_kv_uint(j, "total", losses_total(l));
	for (int k = 0; k < LOSS_MAX; k++)
		json_kv_uint(j, loss_key(k), l->n[k]);
	json_object_end(j);
}

void format_losses_prom(FILE *out, const struct agent_losses *l)
{
	fputs("# HELP connscope_agent_losses_total What the agent missed, by kind (records "
	      "lost, maps full, seeds not stored, listings failed, sources not attached)\n"
	      "# TYPE connscope_agent_losses_total counter\n", out);
	for (int k = 0; k < LOSS_MAX; k++)
		fprintf(out, "connscope_agent_losses_total{what=\"%s\"} %llu\n", loss_key(k),
			(unsigned long long)l->n[k]);
}
