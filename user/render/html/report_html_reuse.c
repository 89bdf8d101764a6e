/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The connection-reuse part of the HTML report: the churn findings as
 * boxes at the top of the page, and per process connections against
 * requests, handshake and lifetime, the endpoints and the lifetime and
 * requests-per-connection heatmaps.
 *
 * The numbers are the ones report_reuse.c prints in the text and JSON
 * reports, computed the same way (reuse_hist_quantile, the same endpoint
 * order and "other" sums); a number the books do not have (a quantile of
 * an empty histogram) is a dash here, not a zero. Where a value is shown
 * rounded, data-v carries it as the JSON has it. Endpoint labels and comm
 * are escaped like every string from a process or the network. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "report_html_internal.h"
#include "reuse.h"
#include "endpoint.h"

/* Churning endpoints marked in the table, at most. */
#define HTML_MAX_FINDINGS 32

const char html_reuse_css[] =
	"#findings{margin:18px 0}\n"
	"#findings h2{color:var(--warn);margin-bottom:8px}\n"
	".finding{background:var(--warnbg);border:1px solid #fed7aa;border-left:6px solid "
	"var(--warn);border-radius:10px;padding:12px 18px;margin:10px 0;"
	"box-shadow:0 1px 2px rgba(16,24,40,.05)}\n"
	".finding .fh{font-size:12.5px;color:var(--muted)}\n"
	".finding .fk{display:inline-block;padding:0 8px;margin-right:8px;border-radius:6px;"
	"background:var(--warn);color:#fff;font-size:11px;font-weight:700;line-height:19px;"
	"text-transform:uppercase;letter-spacing:.06em;vertical-align:1px}\n"
	".finding .fh a{color:var(--accent)}\n"
	".finding .ft{font-size:15.5px;font-weight:600;margin:6px 0 2px;color:var(--fg)}\n"
	".reusepart{margin-top:26px;padding-top:14px;border-top:1px solid var(--line)}\n"
	".reusepart .kpis{margin:10px 0 14px;grid-template-columns:repeat(auto-fit,"
	"minmax(150px,1fr))}\n"
	".reusepart .kpi{background:#fafbfc;padding:10px 14px}\n"
	".reusepart .kpi .v{font-size:18px}\n"
	".reusepart .kpi.bad{border-color:#fed7aa;background:var(--warnbg)}\n"
	".reusepart .kpi .s{color:var(--muted);font-size:12px}\n"
	"table.reuse tr.churn td{background:var(--warnbg)}\n"
	".badge.churn{background:#ffedd5;color:var(--warn);font-weight:650}\n";

static double ratio(uint64_t conns, uint64_t requests)
{
	return reuse_ratio(conns, requests);
}

static bool hist_empty(const uint64_t *h)
{
	for (int b = 0; b < REUSE_HIST_BUCKETS; b++)
		if (h[b])
			return false;
	return true;
}

/* ---- findings ------------------------------------------------------------- */

/* Whether pid's endpoint k is in a finding: its row is marked. */
static bool churns(const struct churn_finding *f, size_t n, pid_t pid,
		   const struct endpoint_key *k)
{
	for (size_t i = 0; i < n; i++)
		if (f[i].pid == pid && !memcmp(&f[i].ep, k, sizeof(*k)))
			return true;
	return false;
}

/* ---- the process's figures -------------------------------------------------- */

static void tile_begin(FILE *out, const char *k, bool bad)
{
	fprintf(out, "<div class=\"kpi%s\"><div class=\"k\">%s</div><div class=\"v\">",
		bad ? " bad" : "", k);
}

static void tile_end(FILE *out, const char *sub)
{
	fprintf(out, "</div><div class=\"s\">%s</div></div>\n", sub);
}

/* "≤ p50 / ≤ p99 unit" of a log2 histogram, a dash when it is empty. */
static void quantile_tile(FILE *out, const char *k, const char *key, const uint64_t *h,
			  const char *unit, const char *sub)
{
	tile_begin(out, k, false);
	if (hist_empty(h))
		fputs("<span class=\"none\">&ndash;</span>", out);
	else
		fprintf(out, "&le;&thinsp;<span data-k=\"%s_p50\">%llu</span> <small>/</small> "
			     "&le;&thinsp;<span data-k=\"%s_p99\">%llu</span> <small>%s</small>",
			key, ULL(reuse_hist_quantile(h, 0.5)), key,
			ULL(reuse_hist_quantile(h, 0.99)), unit);
	tile_end(out, sub);
}

static void figures(FILE *out, const struct proc_books *p, bool churn)
{
	uint64_t conns = p->total.opened + p->total.accepted;
	char sub[96];

	fputs("<section class=\"kpis\">\n", out);
	tile_begin(out, "connections", false);
	fprintf(out, "<span data-k=\"connections\">%llu</span>", ULL(conns));
	snprintf(sub, sizeof(sub), "opened %llu &middot; accepted %llu", ULL(p->total.opened),
		 ULL(p->total.accepted));
	tile_end(out, sub);
	tile_begin(out, "requests", false);
	fprintf(out, "<span data-k=\"requests\">%llu</span>", ULL(p->requests));
	tile_end(out, "request/response pairs");
	tile_begin(out, "per connection", churn);
	fprintf(out, "<span data-k=\"requests_per_conn\">%.1f</span>",
		conns ? (double)p->requests / conns : 0);
	tile_end(out, churn ? "churn: see the finding" : "requests, higher is better");
	tile_begin(out, "reuse ratio", churn);
	fprintf(out, "<span data-v=\"%.6f\" data-k=\"reuse_ratio\">%.0f%%</span>",
		ratio(conns, p->requests), 100 * ratio(conns, p->requests));
	tile_end(out, "1 &minus; conns / requests");
	quantile_tile(out, "handshake p50/p99", "handshake_us", p->handshake_us_hist,
		      "&micro;s", "connect handshakes");
	quantile_tile(out, "lifetime p50/p99", "lifetime_ms", p->lifetime_ms_hist, "ms",
		      "closed connections");
	fputs("</section>\n", out);
}

/* ---- endpoints ---------------------------------------------------------------- */


/* One row; label is text (escaped here), churn marks it. */
static void ep_row(FILE *out, const char *label, bool mono, const struct endpoint_stats *es,
		   double mean, bool churn)
{
	uint64_t c = es->opened + es->accepted;

	fprintf(out, "<tr%s><td class=\"l%s\"><span data-k=\"endpoint\">", churn ?
		" class=\"churn\"" : "", mono ? " mono" : "");
	html_esc(out, label);
	fprintf(out, "</span>%s</td><td data-k=\"opened\">%llu</td>"
		     "<td data-k=\"accepted\">%llu</td><td data-k=\"closed\">%llu</td>"
		     "<td data-k=\"requests\">%llu</td><td data-k=\"requests_per_conn\">%.1f</td>"
		     "<td data-v=\"%.6f\" data-k=\"reuse_ratio\">%.0f%%</td>"
		     "<td data-k=\"peak_concurrent\">%u</td><td data-k=\"mean_concurrent\">%.1f"
		     "</td>", churn ? "<span class=\"badge churn\">churn</span>" : "",
		ULL(es->opened), ULL(es->accepted), ULL(es->closed), ULL(es->requests),
		c ? (double)es->requests / c : 0, ratio(c, es->requests),
		100 * ratio(c, es->requests), es->live_peak, mean);
	if (hist_empty(es->lifetime_ms_hist))
		fputs("<td>&ndash;</td><td>&ndash;</td></tr>\n", out);
	else
		fprintf(out, "<td data-k=\"lifetime_ms_p50\">%llu</td>"
			     "<td data-k=\"lifetime_ms_p99\">%llu</td></tr>\n",
			ULL(reuse_hist_quantile(es->lifetime_ms_hist, 0.5)),
			ULL(reuse_hist_quantile(es->lifetime_ms_hist, 0.99)));
}

static double mean_live(const struct proc_books *p, const struct endpoint_stats *es)
{
	return reuse_mean_concurrency(p, es);
}

static void endpoints(FILE *out, const struct proc_books *p, int top,
		      const struct churn_finding *f, size_t nf)
{
	struct endpoint_stats other = { 0 };
	struct endpoint_use *rows;
	double other_mean = 0;
	size_t n = 0;
	char label[64];

	if (!p->endpoints.count)
		return;
	/* The endpoints the JSON lists. */
	rows = reuse_endpoints_by_conns(p, &n);
	if (!rows || !n) {
		free(rows);
		return;
	}
	fprintf(out, "<h3>Reuse by endpoint</h3>\n<div class=\"scroll\"><table class=\"ep reuse\" "
		     "id=\"reuse-ep-%d\">\n<thead>\n<tr class=\"grp\"><th></th>"
		     "<th colspan=\"3\">connections</th><th colspan=\"3\">requests</th>"
		     "<th colspan=\"2\">open at once</th><th colspan=\"2\">lifetime, ms</th></tr>\n"
		     "<tr><th class=\"l\">endpoint</th><th>opened</th><th>accepted</th>"
		     "<th>closed</th><th>total</th><th>per conn</th><th>reuse</th><th>peak</th>"
		     "<th>mean</th><th>p50 &le;</th><th>p99 &le;</th></tr>\n</thead>\n<tbody>\n",
		p->pid);
	for (size_t i = 0; i < n; i++) {
		const struct endpoint_stats *s = rows[i].st;

		if ((int)i < top) {
			endpoint_format(label, sizeof(label), &rows[i].key);
			ep_row(out, label, true, s, mean_live(p, s),
			       churns(f, nf, p->pid, &rows[i].key));
			continue;
		}
		/* Summed like the JSON's "other": its peak is an upper bound
		 * of the rest's joint peak, its mean their joint mean. */
		reuse_endpoint_add(&other, s);
		other_mean += mean_live(p, s);
	}
	if ((int)n > top) {
		snprintf(label, sizeof(label), "other (%zu endpoints)", n - top);
		ep_row(out, label, false, &other, other_mean, false);
	}
	fputs("</tbody></table></div>\n", out);
	free(rows);
}

/* ---- the part ------------------------------------------------------------------ */

int html_reuse_label_chars(const struct proc_books *p, int at_least)
{
	if (!p->hm_reuse_ready)
		return at_least;
	return html_label_chars(&p->hm_lifetime, html_label_chars(&p->hm_rpc, at_least));
}

void html_reuse_part(FILE *out, const struct agg *a, const struct proc_books *p, int top,
		     int labchars)
{
	struct churn_finding f[HTML_MAX_FINDINGS];
	size_t nf = reuse_findings(a, f, HTML_MAX_FINDINGS);
	uint64_t conns = p->total.opened + p->total.accepted;
	bool churn = false;

	for (size_t i = 0; i < nf; i++)
		churn |= f[i].pid == p->pid;
	fprintf(out, "<div class=\"reusepart\" id=\"reuse-%d\">\n<h3>Connection reuse</h3>\n",
		p->pid);
	/* The text report's condition for its reuse lines. */
	if (!conns && !p->requests) {
		fputs("<p class=\"note\">No connection opened or accepted during the run.</p>\n"
		      "</div>\n", out);
		return;
	}
	figures(out, p, churn);
	endpoints(out, p, top, f, nf);
	if (p->hm_reuse_ready) {
		html_heatmap(out, p->pid, &p->hm_lifetime, "rows: how long the connection "
			     "lived, in powers of two of ms",
			     "connections that closed in that interval", labchars);
		html_heatmap(out, p->pid, &p->hm_rpc, "rows: requests the connection carried, "
			     "in powers of two", "connections that closed in that interval",
			     labchars);
	} else {
		fputs("<p class=\"note\">No connection closed and no interval ended: no reuse "
		      "heatmaps.</p>\n", out);
	}
	fputs("<p class=\"sub\">Requests: request/response exchanges, (turns + 1) / 2 per "
	      "connection, a turn being a run of sends or of receives (sends and reads at "
	      "the hooks the run names: TCP's at tcp_sendmsg_locked or sock_send_length and "
	      "tcp_rcv_space_adjust where socket storage is used, else sock_send_length and "
	      "sock_recv_length); "
	      "connections still open at the end count their traffic so far. Open at once: per "
	      "endpoint at each interval, the mean over the intervals. Quantiles are the upper "
	      "edges of log2 buckets.</p>\n</div>\n", out);
}
