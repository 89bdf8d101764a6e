/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The agent's losses (losses.h) in each output: the text report's first
 * line and its agent block, JSON agent.losses, Prometheus. */
#ifndef CONNSCOPE_REPORT_LOSSES_H
#define CONNSCOPE_REPORT_LOSSES_H

#include <stdio.h>
#include "losses.h"

struct json;

/* Where the counts the headline speaks of are, so that its words are true
 * where it is read: "below" only where a report follows it. */
enum losses_where {
	LOSSES_BELOW,		/* a report under it: the text report's first line,
				 * the doctor's, the HTML page's warning */
	LOSSES_IN_REPORT,	/* a report written before it: attach's warning on
				 * stderr after the text report or the -j JSON */
	LOSSES_EXPORTED,	/* no report, the exporter's series: its warning on
				 * stderr when it stops */
};

/* first, then "LOST: 12 TCP events (ring buffer full), ...; counts below
 * are low (see agent: losses)" when anything was lost, nothing otherwise.
 * The text report's first line. */
void format_losses_headline(FILE *out, const char *first, const struct agent_losses *l);
/* The same, the counts where says, naming where the kinds are told (the
 * doctor has no agent block; JSON has agent.losses, the exporter
 * connscope_agent_losses_total). */
void format_losses_headline_see(FILE *out, const char *first, const struct agent_losses *l,
				enum losses_where where, const char *see);
/* The headline's text unwrapped into buf (len bytes): "LOST: ...; counts
 * below are low (see SEE)" (the counts as where says), or "" with nothing
 * lost. The HTML report's warning. Returns buf. */
char *losses_headline(char *buf, size_t len, const struct agent_losses *l,
		      enum losses_where where, const char *see);
/* "losses: none", or one line per kind that lost something. */
void format_losses_text(FILE *out, const struct agent_losses *l);
/* "losses": { "total": N, "<key>": n, ... } with every kind. */
void json_losses(struct json *j, const struct agent_losses *l);
/* connscope_agent_losses_total{what="<key>"}: PROM_LOSSES_SERIES lines. */
#define PROM_LOSSES_SERIES LOSS_MAX
void format_losses_prom(FILE *out, const struct agent_losses *l);

#endif
