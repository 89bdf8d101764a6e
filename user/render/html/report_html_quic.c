// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The QUIC part of a process's card in the HTML report: the figures with
 * their sources, connections over time, the handshake-time heatmap. */
#include <stdio.h>
#include <string.h>
#include "report.h"
#include "report_html_internal.h"
#include "report_quic.h"

#define ULLQ(v) ((unsigned long long)(v))

static void tile(FILE *out, const char *k, const char *key, uint64_t v, const char *sub,
		 bool bad)
{
	fprintf(out, "<div class=\"kpi%s\"><div class=\"k\">%s</div><div class=\"v\">"
		     "<span data-k=\"%s\">%llu</span></div><div class=\"s\">%s</div></div>\n",
		bad ? " bad" : "", k, key, ULLQ(v), sub);
}

int html_quic_label_chars(const struct run_info *run, pid_t pid, int at_least)
{
	const struct quic_proc *p = run->quic && run->quic->books ?
		quic_books_proc(run->quic->books, pid) : NULL;

	if (!p || !p->hm_ready)
		return at_least;
	return html_label_chars(&p->hm_handshake, html_label_chars(&p->hm_conns, at_least));
}

void html_quic_part(FILE *out, pid_t pid, const struct run_info *run, int labchars)
{
	const struct quic_proc *p = run->quic && run->quic->books ?
		quic_books_proc(run->quic->books, pid) : NULL;
	struct quic_view v;
	char srcs[64], sub[96];

	if (!p)
		return;
	quic_proc_view(p, &v);
	if (!v.c.connections && !v.c.version_negotiations)
		return;
	fprintf(out, "<div class=\"quicpart\" id=\"quic-%d\">\n<h3>QUIC</h3>\n<div class=\"kpis\">\n",
		pid);
	snprintf(sub, sizeof(sub), "%llu as client, %llu as server &middot; %s",
		 ULLQ(v.c.as_client), ULLQ(v.c.as_server), quic_source_name(v.lifecycle_src));
	tile(out, "connections", "quic_connections", v.c.connections, sub, false);
	tile(out, "handshakes done", "quic_handshakes_completed", v.c.handshakes_completed,
	     quic_source_name(v.lifecycle_src), false);
	tile(out, "handshakes failed", "quic_handshakes_failed", v.c.handshakes_failed,
	     quic_source_name(v.lifecycle_src), v.c.handshakes_failed > 0);
	tile(out, "Retry", "quic_retries", v.c.retries, "wire", false);
	tile(out, "version negotiation", "quic_version_negotiations", v.c.version_negotiations,
	     "wire", false);
	tile(out, "migrations", "quic_migrations", v.c.migrations,
	     p->sources & QSRC_NGTCP2 ? "wire rebinding + ngtcp2" : "wire rebinding", false);
	fputs("</div>\n", out);
	fprintf(out, "<p class=\"sub\">Sources: %s. Handshake (%s) mean %.3g ms, p50 &le; %.3g ms, "
		     "p90 &le; %.3g ms (upper edges of log2 buckets).",
		quic_sources_label(p->sources, srcs, sizeof(srcs)), quic_source_name(v.lifecycle_src),
		quic_handshake_mean_ms(&v.c), quic_hist_quantile_ms(v.c.handshake_us_hist, 0.5),
		quic_hist_quantile_ms(v.c.handshake_us_hist, 0.9));
	if ((p->sources & QSRC_WIRE) && (p->sources & QSRC_NGTCP2))
		fprintf(out, " Wire: %llu connections, %llu completed, %llu failed; ngtcp2: %llu, "
			     "%llu, %llu.", ULLQ(p->src[0].connections),
			ULLQ(p->src[0].handshakes_completed), ULLQ(p->src[0].handshakes_failed),
			ULLQ(p->src[1].connections), ULLQ(p->src[1].handshakes_completed),
			ULLQ(p->src[1].handshakes_failed));
	/* The stack as summary names it, and what can be measured there. */
	if (p->stack[0]) {
		fputs(" Stack: ", out);
		html_esc(out, p->stack);
		if (!strcmp(quic_stack_lifecycle(p), "wire"))
			fputs(": measured on the wire only (connections, handshakes, Retry, version "
			      "negotiation, migrations), not " QUIC_WIRE_ONLY_CANNOT ".", out);
		else
			fprintf(out, ": each connection's life from %s; Retry, version negotiation "
				     "and rebinding from the wire.", quic_stack_lifecycle(p));
	}
	if (v.lib_late)
		fprintf(out, " The ngtcp2 probes came late: %.1f s after its first connection; %llu "
			     "connection%s began before them, so the lifecycle comes from the %s.",
			v.lib_late_s, ULLQ(v.lib_missed), v.lib_missed == 1 ? "" : "s",
			quic_source_name(v.lifecycle_src));
	fputs("</p>\n", out);
	if (p->hm_ready) {
		html_heatmap(out, pid, &p->hm_conns, "rows: connections opened (first Initial), "
			     "handshakes completed (first 1-RTT packet from the client), failed",
			     "events in that interval", labchars);
		html_heatmap(out, pid, &p->hm_handshake, "rows: handshake time, in powers of two "
			     "of ms", "handshakes completed in that interval", labchars);
	}
	fputs("</div>\n", out);
}
