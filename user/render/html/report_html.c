/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The attach report as one HTML page; see report_html.h. The heatmaps
 * are drawn by report_html_heatmap.c, the fd part by report_html_fd.c,
 * the churn findings and the reuse part by report_html_reuse.c, the
 * limits, the run and the footer by report_html_run.c.
 *
 * Self-contained on purpose: the file is mailed, attached to tickets and
 * opened on machines without network access, and a report that phones a
 * CDN would leak who looked at which host. So there is no external
 * resource of any kind (system fonts only), and a Content-Security-Policy
 * of default-src 'none' makes the browser refuse one should it ever slip
 * in. Inline SVG needs no xmlns in HTML, so the page holds no URL at all.
 *
 * Every string that may come from a process or the network (comm,
 * endpoint labels, warnings quoting them) is escaped. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap_top.h"
#include "kfeatures.h"
#include "proc_view.h"
#include "report_html.h"
#include "report_cost.h"
#include "report_findings.h"
#include "report_html_internal.h"
#include "report_losses.h"
#include "text_wrap.h"
#include "tcp_state_names.h"

#define TOP_DEFAULT 10

static double per_s(uint64_t n, const struct run_info *run)
{
	return run->elapsed_s > 0 ? n / run->elapsed_s : 0;
}


/* ---- page frame ------------------------------------------------------------ */

static const char css[] =
	":root{--fg:#1d2330;--muted:#5d6878;--line:#e4e8ee;--bg:#f5f6f8;--card:#fff;"
	"--accent:#3e4a89;--warn:#b45309;--warnbg:#fff7ed;--bad:#b91c1c;--good:#15803d;"
	"--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',"
	"'Liberation Mono',monospace}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;background:var(--bg);color:var(--fg);"
	"font:14px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans','DejaVu Sans',"
	"sans-serif}\n"
	"main{max-width:1180px;margin:0 auto;padding:28px 20px 56px}\n"
	"h1{font-size:22px;margin:0 0 2px;letter-spacing:-.01em}\n"
	"h2{font-size:17px;margin:0 0 12px}\n"
	"h3{font-size:15px;margin:18px 0 6px}\n"
	"p{margin:6px 0}\n"
	".sub{color:var(--muted)}\n"
	".mono{font-family:var(--mono);font-size:13px}\n"
	".card{background:var(--card);border:1px solid var(--line);border-radius:12px;"
	"padding:18px 22px;margin:18px 0;box-shadow:0 1px 2px rgba(16,24,40,.05)}\n"
	".kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(130px,1fr));gap:12px;"
	"margin:18px 0}\n"
	".kpi{background:var(--card);border:1px solid var(--line);border-radius:12px;"
	"padding:10px 14px}\n"
	".kpi .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}\n"
	".kpi .v{font-size:20px;font-weight:650;font-variant-numeric:tabular-nums}\n"
	".kpi .v small{font-size:13px;font-weight:400;color:var(--muted)}\n"
	".good{color:var(--good)}.bad{color:var(--bad)}\n"
	".scroll{overflow-x:auto}\n"
	"table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}\n"
	"th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:right;"
	"white-space:nowrap;vertical-align:top}\n"
	"th{font-size:12px;color:var(--muted);font-weight:600}\n"
	"thead tr.grp th{border-bottom:2px solid var(--line);text-align:center}\n"
	"th.l,td.l{text-align:left}\n"
	"td.states{white-space:normal;text-align:left;min-width:180px}\n"
	"tbody tr:hover{background:#fafbfc}\n"
	"tr.unattr td{color:var(--muted)}\n"
	".chip{display:inline-block;padding:0 8px;margin:1px 4px 1px 0;border-radius:999px;"
	"background:#eef1f6;font-size:12px;line-height:20px}\n"
	".chip b{font-weight:650}\n"
	".badge{display:inline-block;padding:0 7px;margin-left:6px;border-radius:6px;"
	"font-size:11px;line-height:18px;background:#eef0fb;color:var(--accent);"
	"vertical-align:1px}\n"
	".badge.ex{background:#fdecec;color:var(--bad)}\n"
	".none{color:var(--muted)}\n"
	".proc h2 .pid{font-family:var(--mono)}\n"
	".facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 22px;margin:4px 0 8px}\n"
	".facts dt{color:var(--muted)}\n"
	".facts dd{margin:0;font-variant-numeric:tabular-nums}\n"
	"#run .facts{grid-template-columns:max-content minmax(0,1fr) max-content minmax(0,1fr)}\n"
	"#run .facts dd{min-width:0;overflow-wrap:anywhere}\n"
	"#run .facts dt.wide{grid-column:1}#run .facts dd.wide{grid-column:2/-1}\n"
	"@media (max-width:760px){#run .facts{grid-template-columns:max-content 1fr}}\n"
	"table.ep{width:auto;min-width:420px;margin:6px 0 4px}\n"
	".note{color:var(--muted);font-style:italic;margin:14px 0 4px}\n"
	".warn{border-left:4px solid var(--warn);background:var(--warnbg);padding:8px 12px;"
	"border-radius:6px;margin:8px 0}\n"
	".warn.bad{border-color:var(--bad);background:#fdecec;color:var(--fg)}\n"
	".meter{display:inline-block;width:160px;height:8px;border-radius:4px;background:#eceff3;"
	"overflow:hidden;vertical-align:middle;margin-right:8px}\n"
	".meter>span{display:block;height:100%;background:var(--accent)}\n"
	".meter.hot>span{background:var(--warn)}\n"
	"footer{color:var(--muted);font-size:12.5px;margin-top:24px}\n";

/* ---- small pieces ----------------------------------------------------------- */

static void comm(FILE *out, const struct proc_books *p)
{
	html_esc_n(out, p->comm, sizeof(p->comm));
}

static void kpi(FILE *out, const char *k, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void kpi(FILE *out, const char *k, const char *cls, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, "<div class=\"kpi\"><div class=\"k\">%s</div><div class=\"v%s%s\">", k,
		cls ? " " : "", cls ? cls : "");
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputs("</div></div>\n", out);
}

/* Sockets by state as chips, in the order of the text report; "none". */
static void state_chips(FILE *out, const uint32_t *state, uint32_t orphan)
{
	bool any = false;

	for (int i = 0; i < TCP_STATE_ORDER_LEN; i++) {
		uint32_t v = state[tcp_state_order[i]];

		if (!v)
			continue;
		fprintf(out, "<span class=\"chip\" data-state=\"%s\">%s <b>%u</b></span>",
			tcp_state_name(tcp_state_order[i]), tcp_state_name(tcp_state_order[i]), v);
		any = true;
	}
	if (orphan)
		fprintf(out, "<span class=\"chip\" data-state=\"orphan\">orphan <b>%u</b></span>",
			orphan);
	if (!any && !orphan)
		fputs("<span class=\"none\">none</span>", out);
}

static void td_u(FILE *out, const char *key, uint64_t v)
{
	fprintf(out, "<td data-k=\"%s\">%llu</td>", key, ULL(v));
}

/* ---- header and summary ----------------------------------------------------- */

static void head(FILE *out, const struct proc_books **procs, size_t n,
		 const struct run_info *run)
{
	size_t shown = 0;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"generator\" content=\"connscope\">\n<title>connscope attach", out);
	for (size_t i = 0; i < n && shown < 4; i++) {
		if (!procs[i]->target)
			continue;
		fprintf(out, "%s %d ", shown ? "," : ":", procs[i]->pid);
		comm(out, procs[i]);
		shown++;
	}
	fprintf(out, "</title>\n<style>\n%s%s%s%s%s</style>\n</head>\n<body>\n<main>\n", css,
		html_heatmap_css, html_reuse_css, html_findings_css,
		run->fds.procs ? html_fd_css : "");
}

static void overview(FILE *out, const struct agg *a, const struct run_info *run,
		     const struct proc_books **procs, size_t n)
{
	uint64_t lost = run->stats[CS_STAT_RB_LOST];
	size_t findings;
	char b1[32];

	fputs("<header>\n<h1>connscope attach report</h1>\n<p class=\"sub\">", out);
	for (size_t i = 0, shown = 0; i < n; i++) {
		if (!procs[i]->target)
			continue;
		fprintf(out, "%sPID %d (", shown++ ? ", " : "", procs[i]->pid);
		comm(out, procs[i]);
		fputs(")", out);
	}
	fprintf(out, "%s%.1f s, ended: ", n ? " &middot; " : "", run->elapsed_s);
	html_esc(out, run->end_reason);
	fputs("</p>\n</header>\n", out);

	/* Every loss, in the text report's words, before any number. */
	if (losses_total(&run->losses)) {
		char text[TEXT_WRAP_MAX];

		fputs("<p class=\"warn bad\" data-k=\"losses\">", out);
		html_esc(out, losses_headline(text, sizeof(text), &run->losses, LOSSES_BELOW,
					      "Run: losses"));
		/* The ring's loss has a fix of its own: said here, once. */
		if (run->losses.n[LOSS_TCP_EVENTS])
			fputs("; raise --ringbuf-size", out);
		fputs("</p>\n", out);
	} else if (lost) {
		fprintf(out, "<p class=\"warn bad\"><b>%llu events were lost</b> (ring buffer "
			     "full): event counts are low; raise --ringbuf-size</p>\n", ULL(lost));
	}
	if (a->mismatch_last)
		fprintf(out, "<p class=\"warn\">books and kernel <b>disagree by %llu "
			     "sockets</b> at the end (largest gap %llu)</p>\n",
			ULL(a->mismatch_last),
			ULL(a->mismatch_max));
	/* Connections nobody here counts, worded as the text report words it. */
	for (size_t i = 0; i < run->nuntraced; i++) {
		char line[512];

		untraced_line(line, sizeof(line), &run->untraced[i]);
		fputs("<p class=\"warn bad\" data-k=\"untraced_acceptor\"><b>warning:</b> ", out);
		html_esc(out, line);
		fputs("</p>\n", out);
	}
	/* What to act on first, before any number. */
	findings = html_findings_section(out, a, run);

	fputs("<section class=\"kpis\">\n", out);
	kpi(out, "elapsed", NULL, "%.1f <small>s</small>", run->elapsed_s);
	kpi(out, "interval", NULL, "%s <small>s</small>",
	    html_fmt_s(b1, sizeof(b1), (uint64_t)(run->interval_s * 1e9 + 0.5)));
	kpi(out, "processes", NULL, "%zu", n);
	kpi(out, "events", NULL, "%llu", ULL(run->stats[CS_STAT_EVENTS]));
	kpi(out, "events lost", lost ? "bad" : "good", "%llu", ULL(lost));
	kpi(out, "findings", findings ? "bad" : "good", "%zu", findings);
	if (a->mismatch_last)
		kpi(out, "books vs kernel", "bad", "differ <small>by %llu</small>",
		    ULL(a->mismatch_last));
	else
		kpi(out, "books vs kernel", "good", "agree");
	fputs("</section>\n", out);
}

/* With fd tracking on, two more columns before the states: fds now and
 * their growth; without, the table is as it always was. */
static void summary_head(FILE *out, const struct run_info *run)
{
	fputs("<section class=\"card\" id=\"summary\">\n<h2>Processes</h2>\n"
	      "<div class=\"scroll\"><table>\n<thead>\n"
	      "<tr class=\"grp\"><th colspan=\"2\"></th><th colspan=\"3\">connections</th>"
	      "<th colspan=\"4\">TIME_WAIT</th><th>orphans</th>", out);
	if (run->fds.procs)
		fputs("<th colspan=\"2\">fds</th>", out);
	fputs("<th></th></tr>\n"
	      "<tr><th>PID</th><th class=\"l\">comm</th><th>opened</th><th>accepted</th>"
	      "<th>closed</th><th>entered</th><th>live</th><th>expired</th>"
	      "<th>ended early</th><th>now</th>", out);
	if (run->fds.procs)
		fputs("<th>now</th><th>growth /s</th>", out);
	fputs("<th class=\"l\">sockets now by state</th></tr>\n</thead>\n<tbody>\n", out);
}

static void proc_row(FILE *out, const struct proc_books *p, const struct run_info *run,
		     const char *cls)
{
	const struct proc_counters *t = &p->total;

	fprintf(out, "<tr id=\"proc-%d\"%s%s%s><td data-k=\"pid\">%d</td><td class=\"l\">"
		     "<span data-k=\"comm\">", p->pid, cls ? " class=\"" : "", cls ? cls : "",
		cls ? "\"" : "", p->pid);
	comm(out, p);
	fputs("</span>", out);
	if (!p->target)
		fputs("<span class=\"badge\">child</span>", out);
	if (p->exited)
		fputs("<span class=\"badge ex\">exited</span>", out);
	fputs("</td>", out);
	td_u(out, "connections_opened", t->opened);
	td_u(out, "connections_accepted", t->accepted);
	td_u(out, "connections_closed", t->closed);
	td_u(out, "time_wait_entered", t->tw_entered);
	td_u(out, "time_wait", p->truth.state[CS_TCP_TIME_WAIT]);
	td_u(out, "time_wait_expired", t->tw_expired);
	td_u(out, "time_wait_ended_early", t->tw_killed);
	td_u(out, "orphans_now", p->truth.orphan);
	if (run->fds.procs)
		html_fd_summary_cells(out, run, p->pid);
	fputs("<td class=\"states\">", out);
	state_chips(out, p->truth.state, p->truth.orphan);
	fputs("</td></tr>\n", out);
}

/* A row of sums: a group, its folded members, the groups not shown.
 * key names the row for a reader of the page (data-group). */
static void sums_row(FILE *out, const char *cls, const char *key, const char *label,
		     const struct proc_group *g, const struct run_info *run)
{
	const struct proc_counters *t = &g->total;
	uint32_t st[CS_TCP_MAX_STATES];

	for (int s = 0; s < CS_TCP_MAX_STATES; s++)
		st[s] = g->state[s] > UINT32_MAX ? UINT32_MAX : g->state[s];
	fprintf(out, "<tr class=\"%s\" data-group=\"", cls);
	html_esc(out, key);
	fputs("\"><td>&ndash;</td><td class=\"l\">", out);
	html_esc(out, label);
	fputs("</td>", out);
	td_u(out, "connections_opened", t->opened);
	td_u(out, "connections_accepted", t->accepted);
	td_u(out, "connections_closed", t->closed);
	td_u(out, "time_wait_entered", t->tw_entered);
	td_u(out, "time_wait", g->state[CS_TCP_TIME_WAIT]);
	td_u(out, "time_wait_expired", t->tw_expired);
	td_u(out, "time_wait_ended_early", t->tw_killed);
	td_u(out, "orphans_now", g->orphan);
	if (run->fds.procs)
		fputs("<td>&ndash;</td><td>&ndash;</td>", out);
	fputs("<td class=\"states\">", out);
	state_chips(out, st, g->orphan > UINT32_MAX ? UINT32_MAX : (uint32_t)g->orphan);
	fputs("</td></tr>\n", out);
}

/* A group: its sums, its busiest members, the rest of it folded. */
static void group_rows(FILE *out, const struct proc_group *g, const struct run_info *run)
{
	struct proc_group folded = { 0 };
	char n[32], ex[32], label[256], role[96], key[48];
	size_t shown = g->n < PROC_VIEW_MEMBERS ? g->n : PROC_VIEW_MEMBERS;

	snprintf(label, sizeof(label), "%.16s x%s (%s%s%s%s); connections per process min %llu, "
		 "median %llu, max %llu", g->comm, proc_view_count(n, sizeof(n), g->n),
		 proc_group_role(role, sizeof(role), g), g->exited ? "; " : "",
		 g->exited ? proc_view_count(ex, sizeof(ex), g->exited) : "",
		 g->exited ? " exited" : "", ULL(g->conns_min), ULL(g->conns_p50),
		 ULL(g->conns_max));
	/* Two servers of one name: one group each, told apart by parent (and
	 * by executable when the name does not say it). */
	if (g->exe[0] && strncmp(g->exe, g->comm, sizeof(g->comm) - 1))
		snprintf(key, sizeof(key), "%.16s/%d/%.16s", g->comm, (int)g->ptgid, g->exe);
	else
		snprintf(key, sizeof(key), "%.16s/%d", g->comm, (int)g->ptgid);
	sums_row(out, "group", key, label, g, run);
	for (size_t i = 0; i < g->n; i++) {
		if (i < shown) {
			proc_row(out, g->members[i], run, "member");
			continue;
		}
		folded.n++;
		folded.exited += g->members[i]->exited;
		folded.total.opened += g->members[i]->total.opened;
		folded.total.accepted += g->members[i]->total.accepted;
		folded.total.never_accepted += g->members[i]->total.never_accepted;
		folded.total.closed += g->members[i]->total.closed;
		folded.total.tw_entered += g->members[i]->total.tw_entered;
		folded.total.tw_expired += g->members[i]->total.tw_expired;
		folded.total.tw_killed += g->members[i]->total.tw_killed;
		folded.total.tw_end_unseen += g->members[i]->total.tw_end_unseen;
		folded.total.tw_not_made += g->members[i]->total.tw_not_made;
		for (int s = 0; s < CS_TCP_MAX_STATES; s++)
			folded.state[s] += g->members[i]->truth.state[s];
		folded.orphan += g->members[i]->truth.orphan;
	}
	if (folded.n) {
		snprintf(label, sizeof(label), "%s more %.16s (folded)",
			 proc_view_count(n, sizeof(n), folded.n), g->comm);
		sums_row(out, "folded", key, label, &folded, run);
	}
}

static void summary_tail(FILE *out, const struct agg *a, const struct run_info *run)
{
	/* Dashes, not zeros: nothing counts events for these sockets. */
	fputs("<tr class=\"unattr\" id=\"unattributed\"><td>&ndash;</td><td class=\"l\">"
	      "unattributed</td><td>&ndash;</td><td>&ndash;</td><td>&ndash;</td><td>&ndash;</td>"
	      "<td>&ndash;</td><td>&ndash;</td><td>&ndash;</td>", out);
	td_u(out, "orphans_now", a->unattributed.orphan);
	if (run->fds.procs)
		fputs("<td>&ndash;</td><td>&ndash;</td>", out);
	fputs("<td class=\"states\">", out);
	state_chips(out, a->unattributed.state, a->unattributed.orphan);
	fprintf(out, "</td></tr>\n</tbody>\n</table></div>\n"
		     "<p class=\"sub\">Counters from BPF events during the run; TIME_WAIT live, "
		     "orphans and sockets now from %s + /proc/PID/fd at the end. Unattributed: "
		     "sockets with no owning file, not seen being made by this run.</p>\n",
		run_census_short(run));
}

static void summary(FILE *out, const struct agg *a, const struct proc_view *v,
		    const struct run_info *run)
{
	char n[32], label[96];

	summary_head(out, run);
	if (!v->folded) {
		for (size_t i = 0; i < v->nall; i++)
			proc_row(out, v->all[i], run, NULL);
		summary_tail(out, a, run);
		fputs("</section>\n", out);
		return;
	}
	/* Many processes: the sums of all first, so every row below is a
	 * part of it; then the busiest targets, the groups, the rest. */
	snprintf(label, sizeof(label), "all %s processes", proc_view_count(n, sizeof(n), v->nall));
	sums_row(out, "all", "all", label, &v->sum, run);
	for (size_t i = 0; i < v->nsingles; i++)
		proc_row(out, v->singles[i], run, NULL);
	for (size_t i = 0; i < v->nshown; i++)
		group_rows(out, &v->groups[i], run);
	if (v->ngroups > v->nshown) {
		snprintf(label, sizeof(label), "other: %s processes in %zu more groups",
			 proc_view_count(n, sizeof(n), v->rest.n), v->ngroups - v->nshown);
		sums_row(out, "folded", "other", label, &v->rest, run);
	}
	summary_tail(out, a, run);
	fprintf(out, "<p class=\"sub\">%s processes: processes of one name, parent and "
		     "role are folded into a group (its sums, its %d busiest, the rest in one row); the "
		     "JSON report (-j) has every process.</p>\n</section>\n",
		proc_view_count(n, sizeof(n), v->nall), PROC_VIEW_MEMBERS);
}

/* ---- per process ------------------------------------------------------------ */

struct ep_row {
	struct endpoint_key key;
	struct endpoint_stats st;
};

/* Most TIME_WAIT entered first, ties by key: the text report's order. */
static int ep_cmp(const void *a, const void *b)
{
	const struct ep_row *x = a, *y = b;

	if (x->st.tw_entered != y->st.tw_entered)
		return x->st.tw_entered < y->st.tw_entered ? 1 : -1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

/* The upper edge of the log2(ms) bucket holding the q quantile, as the
 * text report computes it. */
static uint64_t quantile_ms(const uint64_t *hist, uint64_t n, double q)
{
	uint64_t want = (uint64_t)(q * n + 0.5), seen = 0;

	for (int b = 0; b < ORPHAN_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= want && hist[b])
			return 2ULL << b;
	}
	return 0;
}

static void endpoints_table(FILE *out, const struct proc_books *p, int top)
{
	const struct endpoint_key *k;
	struct endpoint_stats *es;
	struct ep_row *rows;
	uint64_t oe = 0, ol = 0, op = 0;
	size_t n = 0;
	char label[64];

	if (!p->endpoints.count)
		return;
	rows = calloc(p->endpoints.count, sizeof(*rows));
	if (!rows)
		return;
	/* The map also holds reuse-only endpoints (a server's listener): as
	 * in the text report, TIME_WAIT rows only, and no table without one
	 * (`make demo`'s server showed "listen ...:N 0 0 0"). */
	for (size_t i = 0; hmap_next(&p->endpoints, &i, (const void **)&k, (void **)&es);)
		if (n < p->endpoints.count && (es->tw_entered || es->tw_live_peak))
			rows[n++] = (struct ep_row){ .key = *k, .st = *es };
	if (!n) {
		free(rows);
		return;
	}
	qsort(rows, n, sizeof(*rows), ep_cmp);
	fprintf(out, "<h3>TIME_WAIT by endpoint</h3>\n<div class=\"scroll\"><table class=\"ep\" "
		     "id=\"ep-%d\">\n<thead><tr><th class=\"l\">endpoint</th><th>entered</th>"
		     "<th>live</th><th>peak</th></tr></thead>\n<tbody>\n", p->pid);
	for (size_t i = 0; i < n; i++) {
		if ((int)i >= top) {
			oe += rows[i].st.tw_entered;
			ol += rows[i].st.tw_live;
			op += rows[i].st.tw_live_peak;
			continue;
		}
		endpoint_format(label, sizeof(label), &rows[i].key);
		fputs("<tr><td class=\"l mono\">", out);
		html_esc(out, label);
		fprintf(out, "</td><td>%llu</td><td>%u</td><td>%u</td></tr>\n",
			ULL(rows[i].st.tw_entered), rows[i].st.tw_live, rows[i].st.tw_live_peak);
	}
	/* Like the text report: the peaks of the rest are summed, an upper
	 * bound of their joint peak. */
	if ((int)n > top)
		fprintf(out, "<tr><td class=\"l\">other (%zu endpoints)</td><td>%llu</td>"
			     "<td>%llu</td><td>%llu</td></tr>\n", n - top, ULL(oe), ULL(ol),
			ULL(op));
	fputs("</tbody></table></div>\n", out);
	free(rows);
}

static void facts(FILE *out, const struct proc_books *p, const struct run_info *run)
{
	const struct proc_counters *t = &p->total;
	char rest[128];

	fputs("<dl class=\"facts\">\n", out);
	fprintf(out, "<dt>connections</dt><dd>opened %llu (%.1f/s), accepted %llu (%.1f/s), "
		     "closed %llu</dd>\n", ULL(t->opened), per_s(t->opened, run), ULL(t->accepted),
		per_s(t->accepted, run), ULL(t->closed));
	if (t->connect_failed || t->resets || t->resets_sent)
		fprintf(out, "<dt>failures</dt><dd>connect failed %llu, resets received %llu, "
			     "sent %llu</dd>\n", ULL(t->connect_failed), ULL(t->resets),
			ULL(t->resets_sent));
	if (t->never_accepted)
		fprintf(out, "<dt>never accepted</dt><dd>%llu handshakes completed, ended in the "
			     "accept queue before accept()</dd>\n", ULL(t->never_accepted));
	fprintf(out, "<dt>TIME_WAIT</dt><dd>entered %llu (%.1f/s), live %u, expired %llu, "
		     "ended early %llu", ULL(t->tw_entered), per_s(t->tw_entered, run),
		p->truth.state[CS_TCP_TIME_WAIT], ULL(t->tw_expired), ULL(t->tw_killed));
	if (t->tw_end_unseen)
		fprintf(out, ", end unseen %llu", ULL(t->tw_end_unseen));
	/* Figures that add up, or the difference named: the text's words. */
	if (tw_balance_rest(rest, sizeof(rest), t, p->truth.state[CS_TCP_TIME_WAIT])) {
		fputs("; ", out);
		html_esc(out, rest);
	}
	fputs("</dd>\n", out);
	if (t->tw_not_made)
		fprintf(out, "<dt>TIME_WAIT not made</dt><dd>%llu clean closes (bucket table full: "
			     "net.ipv4.tcp_max_tw_buckets)</dd>\n", ULL(t->tw_not_made));
	fprintf(out, "<dt>closed first</dt><dd>by this side %llu, by the peer %llu</dd>\n",
		ULL(t->closed_active), ULL(t->closed_passive));
	if (p->orphan_ended || p->truth.orphan)
		fprintf(out, "<dt>orphans</dt><dd>now %u; %llu ended, stayed &le; %llu ms "
			     "(median), &le; %llu ms (max)</dd>\n", p->truth.orphan,
			ULL(p->orphan_ended),
			ULL(quantile_ms(p->orphan_ms_hist, p->orphan_ended, 0.5)),
			ULL(quantile_ms(p->orphan_ms_hist, p->orphan_ended, 1.0)));
	if (p->seeded)
		fprintf(out, "<dt>held at start</dt><dd>%u sockets (from the start-up "
			     "snapshot)</dd>\n", p->seeded);
	fputs("</dl>\n", out);
}

/* The TIME_WAIT and orphan maps; returns the label column, widened to
 * their labels. */
static int socket_maps(FILE *out, const struct proc_books *p, int top, int labchars)
{
	struct heatmap tw;
	char rows[96];

	if (!p->hm_ready) {
		fputs("<p class=\"note\">No interval ended: no heatmaps.</p>\n", out);
		return labchars;
	}
	labchars = html_label_chars(&p->hm_orphan, labchars);
	/* The JSON report's rows: the top endpoints by peak, the rest as
	 * "other". */
	if (!heatmap_top(&p->hm_tw, &tw, top)) {
		labchars = html_label_chars(&tw, labchars);
		snprintf(rows, sizeof(rows), "rows: the %d busiest endpoints, the rest as "
			 "\"" HEATMAP_OTHER_LABEL "\"", top);
		html_heatmap(out, p->pid, &tw, rows, NULL, labchars);
	} else {
		fputs("<p class=\"note\">TIME_WAIT heatmap: cannot draw it (out of memory).</p>\n",
		      out);
	}
	heatmap_free(&tw);
	html_heatmap(out, p->pid, &p->hm_orphan, "rows: the states an orphan can linger in",
		     NULL, labchars);
	return labchars;
}

static void proc_section(FILE *out, const struct agg *a, const struct proc_books *p,
			 const struct run_info *run)
{
	int top = run->tw.top > 0 ? run->tw.top : TOP_DEFAULT;
	int labchars;

	fprintf(out, "<section class=\"card proc\" id=\"pid-%d\">\n<h2>PID <span class=\"pid\">%d"
		     "</span> &middot; ", p->pid, p->pid);
	comm(out, p);
	if (!p->target)
		fputs("<span class=\"badge\">child</span>", out);
	if (p->joined_ns && !p->target)
		fputs("<span class=\"badge\">joined at the start (--children)</span>", out);
	else if (p->joined_ns)
		fprintf(out, "<span class=\"badge\">joined %.1f s into the run</span>",
			(p->joined_ns - p->t0_ns) / 1e9);
	if (p->exited)
		fputs("<span class=\"badge ex\">exited during the run</span>", out);
	fputs("</h2>\n", out);
	facts(out, p, run);
	endpoints_table(out, p, top);
	/* One label column for the socket, reuse and fd maps: their time
	 * axes line up. */
	labchars = html_reuse_label_chars(p, html_fd_label_chars(run, p->pid, 4));
	labchars = html_quic_label_chars(run, p->pid, labchars);
	labchars = socket_maps(out, p, top, labchars);
	html_reuse_part(out, a, p, top, labchars);
	html_fd_part(out, p->pid, run, labchars);
	html_quic_part(out, p->pid, run, labchars);
	fputs("</section>\n", out);
}

int format_report_html(FILE *out, const struct agg *a, const struct run_info *run)
{
	struct proc_view v;

	if (proc_view_build(&v, a))
		return -ENOMEM;
	head(out, v.all, v.nall, run);
	overview(out, a, run, v.all, v.nall);
	summary(out, a, &v, run);
	if (!v.folded) {
		for (size_t i = 0; i < v.nall; i++)
			proc_section(out, a, v.all[i], run);
	} else {
		/* Sections (maps, tables) for those shown in full and each
		 * shown group's busiest member: the page stays small. */
		for (size_t i = 0; i < v.nsingles; i++)
			proc_section(out, a, v.singles[i], run);
		for (size_t i = 0; i < v.nshown; i++)
			proc_section(out, a, v.groups[i].members[0], run);
	}
	proc_view_free(&v);
	html_limits_section(out, run->limits, run_census_short(run));
	html_run_section(out, a, run);
	html_footer(out, run);
	fputs("</main>\n<script>\n", out);
	fputs(html_heatmap_script, out);
	fputs("</script>\n</body>\n</html>\n", out);
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}
