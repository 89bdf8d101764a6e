// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdbool.h>
#include "json.h"
#include "report_losses.h"
#include "text_wrap.h"

void format_losses_headline(FILE *out, const char *first, const struct agent_losses *l)
{
	format_losses_headline_see(out, first, l, LOSSES_BELOW, "agent: losses");
}

/* Which counts are low, in the words of where they are read. A QUIC
 * source alone (the wire off under ip netns exec): the TCP and fd figures
 * a reader came for are whole, said so. */
static const char *low_counts(enum losses_where where, bool quic_only)
{
	switch (where) {
	case LOSSES_IN_REPORT:
		return quic_only ? "the QUIC counts in the report are low, its TCP and fd "
				   "counts are not" : "the counts in the report are low";
	case LOSSES_EXPORTED:
		return quic_only ? "the exported QUIC counts are low, the TCP and fd counts "
				   "are not" : "the exported counts are low";
	case LOSSES_BELOW:
	default:
		return quic_only ? "QUIC counts below are low, TCP and fd counts are not" :
				   "counts below are low";
	}
}

char *losses_headline(char *buf, size_t len, const struct agent_losses *l,
		      enum losses_where where, const char *see)
{
	size_t used;

	buf[0] = '\0';
	if (!losses_total(l))
		return buf;
	used = snprintf(buf, len, "LOST:");
	for (int k = 0; k < LOSS_MAX && used < len; k++)
		if (l->n[k])
			used += snprintf(buf + used, len - used, "%s %llu %s",
					 used > 5 ? "," : "", (unsigned long long)l->n[k],
					 loss_text_n(k, l->n[k]));
	if (used < len)
		snprintf(buf + used, len - used, "; %s (see %s)",
			 low_counts(where, losses_quic_only(l)), see);
	return buf;
}

void format_losses_headline_see(FILE *out, const char *first, const struct agent_losses *l,
				enum losses_where where, const char *see)
{
	char text[TEXT_WRAP_MAX];

	if (!losses_total(l))
		return;
	/* Every kind at once runs to many lines: wrapped like a finding. */
	text_wrap(out, first, "  ", losses_headline(text, sizeof(text), l, where, see));
}

void format_losses_text(FILE *out, const struct agent_losses *l)
{
	if (!losses_total(l)) {
		fputs("losses: none (no record lost, no map full, all seeded and attached)\n",
		      out);
		return;
	}
	fputs("losses:\n", out);
	for (int k = 0; k < LOSS_MAX; k++) {
		char key[64], under[41];
		int col;

		if (!l->n[k])
			continue;
		col = snprintf(key, sizeof(key), "  %-20s %llu  ", loss_key(k),
			       (unsigned long long)l->n[k]);
		/* Continuations under the words, as far as that leaves room. */
		snprintf(under, sizeof(under), "%*s", col < 40 ? col : 40, "");
		text_wrap(out, key, under, loss_text(k));
	}
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
