/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The connection-reuse part of the HTML report: the churn findings at the
 * top, the per-process figures and endpoint table with the books' numbers,
 * the lifetime and requests-per-connection maps cell for cell, escaping.
 * The books come from recorded event sequences (agg_event / agg_tick) or
 * are filled by hand; no kernel, no browser. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "unit.h"
#include "report_html_fixture.h"
#include "report_html.h"
#include "reuse.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define US 1000ULL
#define CLIENT 100

static const struct run_info base_run = {
	.hook = "tp_btf/inet_sock_set_state",
	.tw_method = "tw timer (inet_twsk_*)",
	.elapsed_s = 3.0,
	.interval_s = 1,
	.end_reason = "interrupted",
	.tw = { .top = 10 },
};

/* ---- books from events ------------------------------------------------------ */

static struct cs_tuple tup(uint16_t sport, uint16_t dport)
{
	struct cs_tuple t = { .family = AF_INET, .sport = sport, .dport = dport };

	inet_pton(AF_INET, "127.0.0.1", t.saddr);
	inet_pton(AF_INET, "127.0.0.1", t.daddr);
	return t;
}

static void state(struct agg *a, uint64_t sk, uint16_t sport, int old, int new, uint64_t ts,
		  uint32_t turns)
{
	struct cs_event e = { .type = CS_EV_STATE, .sk = sk, .tuple = tup(sport, 8080),
			      .oldstate = old, .newstate = new, .ts_ns = ts };

	e.owner.tgid = CLIENT;
	e.owner.flags = CS_OWNER_CONNECT;
	strcpy(e.owner.comm, "client");
	if (new == CS_TCP_FIN_WAIT2 || new == CS_TCP_CLOSE)
		e.flags = CS_F_ORPHAN;
	if (new == CS_TCP_CLOSE) {
		e.sk_shutdown = 3;
		e.io.turns = turns;
	}
	agg_event(a, &e);
}

/* connect() at t, handshake hs_ns later; with life_ns > 0, closed by this
 * side (FIN_WAIT1, FIN_WAIT2, TIME_WAIT) at t + life_ns with its turns,
 * as the kernel orders these events on loopback. */
static void conn(struct agg *a, uint64_t sk, uint16_t sport, uint64_t t, uint64_t hs_ns,
		 uint64_t life_ns, uint32_t turns)
{
	state(a, sk, 0, CS_TCP_CLOSE, CS_TCP_SYN_SENT, t, 0);
	state(a, sk, sport, CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED, t + hs_ns, 0);
	if (!life_ns)
		return;
	state(a, sk, sport, CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1, t + life_ns, 0);
	state(a, sk, sport, CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2, t + life_ns, 0);
	state(a, sk, sport, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE, t + life_ns, turns);
}

/* A client that churns to 127.0.0.1:8080, one connection after another:
 *	0 s:	6 connections, 100 us handshake, 3 ms, 1 request each
 *	1 s:	3 connections, 1.5 ms handshake, 20 ms, 4 requests each
 *	1.5 s:	1 connection opened and still open at the end
 * ticks at 1, 2, 3 s. Time-weighted concurrency: 6 x 3 ms + 3 x 20 ms +
 * 1.5 s = 1.578 connection-seconds over 3 s = 0.526. */
static struct proc_books *churner(struct agg *a)
{
	struct proc_books *p;
	uint64_t sk = 0xffff000000001000ULL;

	agg_init(a, 0);
	a->bucket_ns = SEC;
	for (int i = 0; i < 6; i++)
		conn(a, sk + i * 64, 40000 + i, i * 100 * MS, 100 * US, 3 * MS, 1);
	agg_tick(a, 1 * SEC);
	for (int i = 0; i < 3; i++)
		conn(a, sk + (6 + i) * 64, 40006 + i, SEC + i * 100 * MS, 1500 * US, 20 * MS, 7);
	conn(a, sk + 9 * 64, 40009, SEC + SEC / 2, 100 * US, 0, 0);
	agg_tick(a, 2 * SEC);
	/* The run's end: concurrency applied in full (final_tick). */
	a->final_tick = true;
	agg_tick(a, 3 * SEC);
	p = agg_find_proc(a, CLIENT);
	ASSERT_TRUE(p != NULL, "client_books");
	p->target = true;
	/* The books as this test reads them. */
	ASSERT_EQ(p->total.opened, 10, "books_opened");
	ASSERT_EQ(p->total.closed, 9, "books_closed");
	ASSERT_EQ(p->requests, 6 + 3 * 4, "books_requests");
	ASSERT_TRUE(p->hm_reuse_ready, "books_maps");
	return p;
}

/* ---- reading the page ---------------------------------------------------------- */

/* The table row (one line) whose endpoint cell reads label. */
static char *row_of(char *table, const char *label, char **ret_end)
{
	char start[96];
	char *r, *b;

	snprintf(start, sizeof(start), "<span data-k=\"endpoint\">%s</span>", label);
	r = strstr(table, start);
	ASSERT_TRUE(r != NULL, label);
	while (r > table && strncmp(r, "<tr", 3))
		r--;
	b = strchr(r, '\n');
	ASSERT_TRUE(b != NULL, "row_end");
	*b = '\0';
	*ret_end = b;
	return r;
}

static void assert_map_equals_books(char *out, const char *id, const struct heatmap *h)
{
	char start[64], want[96], *svg, *end;

	snprintf(start, sizeof(start), "<svg class=\"hm\" id=\"%s\"", id);
	svg = cut(out, start, "</svg>", &end);
	snprintf(want, sizeof(want), "data-rows=\"%d\" data-cols=\"%zu\" data-max=\"%llu\"",
		 h->nrows, heatmap_ncols(h), (unsigned long long)heatmap_max(h));
	ASSERT_TRUE(strstr(svg, want) != NULL, id);
	ASSERT_EQ(count(svg, "<rect class=\"c\""), h->nrows * (int)heatmap_ncols(h),
		  "rows_x_cols_cells");
	for (int r = 0; r < h->nrows; r++) {
		snprintf(want, sizeof(want), "data-row=\"%d\" data-label=\"%s\"", r,
			 heatmap_label(h, r));
		ASSERT_TRUE(strstr(svg, want) != NULL, want);
		for (size_t c = 0; c < heatmap_ncols(h); c++) {
			snprintf(want, sizeof(want), "data-row=\"%d\" data-col=\"%zu\" "
				 "data-value=\"%llu\"", r, c,
				 (unsigned long long)heatmap_cell(h, r, c));
			ASSERT_TRUE(strstr(svg, want) != NULL, want);
		}
	}
	*end = '<';
	snprintf(want, sizeof(want), "id=\"readout-%s\"", id);
	ASSERT_TRUE(strstr(out, want) != NULL, "readout");
}

/* ---- tests -------------------------------------------------------------------- */

TEST(finding_box_at_the_top)
{
	struct churn_finding f[4];
	struct agg a;
	char *out, *box, *end, text[256], b[256];

	churner(&a);
	ASSERT_EQ(reuse_findings(&a, f, 4), 1, "one_finding");
	churn_finding_text(text, sizeof(text), &f[0]);
	ASSERT_STREQ(text, "pool to 127.0.0.1:8080 churns: 10 connections for 18 requests at "
		     "concurrency 1; a pool that keeps >= 1 idle connections would open 1",
		     "finding_text");
	out = render(&a, &base_run);
	/* Before the numbers: after the header, ahead of KPIs and table. */
	ASSERT_TRUE(strstr(out, "<section id=\"findings\"") != NULL, "findings_section");
	ASSERT_TRUE(strstr(out, "<section id=\"findings\"") < strstr(out, "class=\"kpis\""),
		    "before_kpis");
	ASSERT_TRUE(strstr(out, "</header>") < strstr(out, "<section id=\"findings\""),
		    "after_header");
	ASSERT_TRUE(strstr(out, "<h2>1 finding</h2>") != NULL, "heading");
	ASSERT_EQ(count(out, "<div class=\"finding\""), 1, "one_box");
	box = cut(out, "<div class=\"finding\" id=\"finding-1\"", "</p>\n</div>", &end);
	ASSERT_TRUE(strstr(box, "data-kind=\"churn\" data-pid=\"100\" "
				"data-endpoint=\"127.0.0.1:8080\"") != NULL, "box_data");
	/* The JSON's text, escaped once. */
	ASSERT_STREQ(td(box, "text", b, sizeof(b)), "pool to 127.0.0.1:8080 churns: 10 "
		     "connections for 18 requests at concurrency 1; a pool that keeps &gt;= 1 "
		     "idle connections would open 1", "box_text");
	ASSERT_TRUE(strstr(box, "<a href=\"#reuse-100\">PID 100 (client)</a>") != NULL,
		    "box_links_to_process");
	*end = '<';
	ASSERT_TRUE(strstr(out, "id=\"reuse-100\"") != NULL, "link_target");
	ASSERT_TRUE(strstr(out, "<div class=\"k\">findings</div><div class=\"v bad\">1</div>") !=
		    NULL, "kpi");
	free(out);
	agg_free(&a);
}

TEST(process_figures)
{
	struct agg a;
	char *out, *part, *end, b[64];

	churner(&a);
	out = render(&a, &base_run);
	part = cut(out, "<div class=\"reusepart\" id=\"reuse-100\">", "<h3>Reuse by endpoint",
		   &end);
	ASSERT_STREQ(td(part, "connections", b, sizeof(b)), "10", "connections");
	ASSERT_TRUE(strstr(part, "opened 10 &middot; accepted 0") != NULL, "opened_accepted");
	ASSERT_STREQ(td(part, "requests", b, sizeof(b)), "18", "requests");
	ASSERT_STREQ(td(part, "requests_per_conn", b, sizeof(b)), "1.8", "per_conn");
	/* 1 - 10/18, shown as the text report rounds it, data-v as the JSON. */
	ASSERT_STREQ(td(part, "reuse_ratio", b, sizeof(b)), "44%", "reuse_ratio");
	ASSERT_TRUE(strstr(part, "data-v=\"0.444444\" data-k=\"reuse_ratio\"") != NULL,
		    "reuse_ratio_json");
	/* 100 us: log2 bucket 64-127; 1.5 ms: 1024-2047. */
	ASSERT_STREQ(td(part, "handshake_us_p50", b, sizeof(b)), "127", "handshake_p50");
	ASSERT_STREQ(td(part, "handshake_us_p99", b, sizeof(b)), "2047", "handshake_p99");
	/* 3 ms: bucket 2-3; 20 ms: 16-31. */
	ASSERT_STREQ(td(part, "lifetime_ms_p50", b, sizeof(b)), "3", "lifetime_p50");
	ASSERT_STREQ(td(part, "lifetime_ms_p99", b, sizeof(b)), "31", "lifetime_p99");
	/* The process churns: its figures are marked. */
	ASSERT_EQ(count(part, "<div class=\"kpi bad\">"), 2, "marked");
	*end = '<';
	free(out);
	agg_free(&a);
}

TEST(endpoint_row_from_events)
{
	struct agg a;
	char *out, *tab, *tend, *row, *rend, b[64];

	churner(&a);
	out = render(&a, &base_run);
	tab = cut(out, "<table class=\"ep reuse\" id=\"reuse-ep-100\">", "</table>", &tend);
	ASSERT_EQ(count(tab, "<tr"), 3, "two_header_rows_one_endpoint");
	row = row_of(tab, "127.0.0.1:8080", &rend);
	ASSERT_TRUE(!strncmp(row, "<tr class=\"churn\">", 18), "row_marked");
	ASSERT_TRUE(strstr(row, "<span class=\"badge churn\">churn</span>") != NULL, "badge");
	ASSERT_STREQ(td(row, "opened", b, sizeof(b)), "10", "opened");
	ASSERT_STREQ(td(row, "accepted", b, sizeof(b)), "0", "accepted");
	ASSERT_STREQ(td(row, "closed", b, sizeof(b)), "9", "closed");
	ASSERT_STREQ(td(row, "requests", b, sizeof(b)), "18", "requests");
	ASSERT_STREQ(td(row, "requests_per_conn", b, sizeof(b)), "1.8", "per_conn");
	ASSERT_STREQ(td(row, "reuse_ratio", b, sizeof(b)), "44%", "reuse");
	ASSERT_STREQ(td(row, "peak_concurrent", b, sizeof(b)), "1", "peak");
	ASSERT_STREQ(td(row, "mean_concurrent", b, sizeof(b)), "0.5", "mean");
	ASSERT_STREQ(td(row, "lifetime_ms_p50", b, sizeof(b)), "3", "lifetime_p50");
	ASSERT_STREQ(td(row, "lifetime_ms_p99", b, sizeof(b)), "31", "lifetime_p99");
	*rend = '\n';
	*tend = '<';
	free(out);
	agg_free(&a);
}

TEST(heatmaps_are_the_books)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	p = churner(&a);
	out = render(&a, &base_run);
	assert_map_equals_books(out, "hm-100-lifetime", &p->hm_lifetime);
	assert_map_equals_books(out, "hm-100-requests_per_conn", &p->hm_rpc);
	/* Known by hand: rows 0-1 .. 16-31 ms, three columns. */
	ASSERT_TRUE(strstr(out, "id=\"hm-100-lifetime\" viewBox") != NULL, "lifetime_id");
	ASSERT_TRUE(strstr(out, "data-rows=\"5\" data-cols=\"3\" data-max=\"6\"") != NULL,
		    "lifetime_dims");
	ASSERT_TRUE(strstr(out, "data-row=\"1\" data-label=\"2-3 ms\"") != NULL, "row_2_3_ms");
	ASSERT_TRUE(strstr(out, "<title>2-3 ms &middot; 0&#8211;1 s &middot; 6 conns</title>") !=
		    NULL, "lifetime_tooltip");
	ASSERT_TRUE(strstr(out, "<title>16-31 ms &middot; 1&#8211;2 s &middot; 3 conns</title>") !=
		    NULL, "lifetime_long");
	ASSERT_TRUE(strstr(out, "<title>4-7 req &middot; 1&#8211;2 s &middot; 3 conns</title>") !=
		    NULL, "rpc_cell");
	/* Counts, not samples: the row column is a total. */
	ASSERT_TRUE(strstr(out, "Each cell: connections that closed in that interval") != NULL,
		    "cell_wording");
	/* After the socket maps, inside the process's section. */
	ASSERT_TRUE(strstr(out, "id=\"hm-100-lifetime\"") > strstr(out, "id=\"hm-100-time_wait\""),
		    "after_socket_maps");
	ASSERT_TRUE(strstr(out, "id=\"hm-100-requests_per_conn\"") < strstr(out, "id=\"limits\""),
		    "in_section");
	free(out);
	agg_free(&a);
}

/* Hand-filled endpoints: the JSON's order and top N, the rest as "other". */
TEST(top_endpoints_and_other)
{
	static const struct {
		const char *addr;
		uint64_t opened, requests;
		uint32_t peak;
	} eps[] = {
		/* 25 requests a connection: 4 % of round trips are handshakes,
		 * no churn (dr_churn_costs). */
		{ "10.0.0.1", 40, 1000, 4 }, { "10.0.0.2", 3, 9, 1 }, { "10.0.0.3", 20, 21, 2 },
		{ "10.0.0.4", 2, 2, 1 },
	};
	struct run_info run = base_run;
	struct endpoint_key k = { .family = AF_INET, .side = EP_REMOTE, .port = 443 };
	struct endpoint_stats *es;
	struct proc_books *p;
	struct agg a;
	char *out, *tab, *tend, *row, *rend, b[64];

	agg_init(&a, 0);
	p = agg_proc(&a, 7);
	p->target = true;
	strcpy(p->comm, "pool");
	p->ticks = 4;
	/* A 4 s run: the mean is the area under live over those 4 s. */
	p->rows = calloc(1, sizeof(*p->rows));
	p->rows_cap = p->nrows = 1;
	p->rows[0].t_ns = 4 * SEC;
	for (size_t i = 0; i < sizeof(eps) / sizeof(eps[0]); i++) {
		inet_pton(AF_INET, eps[i].addr, k.addr);
		es = hmap_upsert(&p->endpoints, &k, NULL);
		es->opened = eps[i].opened;
		es->closed = eps[i].opened;
		es->requests = eps[i].requests;
		es->live_peak = eps[i].peak;
		es->live_area = 2 * (uint64_t)eps[i].peak * SEC;	/* mean peak / 2 */
		es->lifetime_ms_hist[5] = eps[i].opened;
		p->total.opened += eps[i].opened;
		p->total.closed += eps[i].opened;
		p->requests += eps[i].requests;
	}
	/* An accepting side: listen *:9090 (a wildcard listener), 5 accepted, nothing closed yet. */
	memset(&k, 0, sizeof(k));
	k.family = AF_INET;
	k.side = EP_LISTEN;
	k.port = 9090;
	es = hmap_upsert(&p->endpoints, &k, NULL);
	es->accepted = 5;
	es->requests = 50;
	es->live_peak = 5;
	p->total.accepted = 5;
	p->requests += 50;
	/* TIME_WAIT only: not a reuse endpoint. */
	k.port = 9191;
	es = hmap_upsert(&p->endpoints, &k, NULL);
	es->tw_entered = 3;
	run.tw.top = 2;
	out = render(&a, &run);
	tab = cut(out, "<table class=\"ep reuse\" id=\"reuse-ep-7\">", "</table>", &tend);
	ASSERT_EQ(count(tab, "<span data-k=\"endpoint\">"), 3, "two_and_other");
	ASSERT_TRUE(!strstr(tab, ":9191"), "tw_only_left_out");
	/* Most connections first. */
	ASSERT_TRUE(strstr(tab, ">10.0.0.1:443<") < strstr(tab, ">10.0.0.3:443<"), "order");
	row = row_of(tab, "10.0.0.1:443", &rend);
	ASSERT_STREQ(td(row, "requests_per_conn", b, sizeof(b)), "25.0", "per_conn");
	ASSERT_STREQ(td(row, "reuse_ratio", b, sizeof(b)), "96%", "reuse");
	ASSERT_STREQ(td(row, "mean_concurrent", b, sizeof(b)), "2.0", "mean");
	ASSERT_STREQ(td(row, "lifetime_ms_p99", b, sizeof(b)), "63", "lifetime");
	ASSERT_TRUE(strncmp(row, "<tr class=\"churn\">", 18), "no_churn_here");
	*rend = '\n';
	/* 10.0.0.3 opens 20 at peak 2 for 21 requests: a churn finding. */
	row = row_of(tab, "10.0.0.3:443", &rend);
	ASSERT_TRUE(!strncmp(row, "<tr class=\"churn\">", 18), "churn_marked");
	*rend = '\n';
	/* other: listen *:9090, 10.0.0.2, 10.0.0.4 summed as the JSON sums them. */
	row = row_of(tab, "other (3 endpoints)", &rend);
	ASSERT_TRUE(strstr(row, "<td class=\"l\">") != NULL, "other_not_mono");
	ASSERT_STREQ(td(row, "opened", b, sizeof(b)), "5", "other_opened");
	ASSERT_STREQ(td(row, "accepted", b, sizeof(b)), "5", "other_accepted");
	ASSERT_STREQ(td(row, "closed", b, sizeof(b)), "5", "other_closed");
	ASSERT_STREQ(td(row, "requests", b, sizeof(b)), "61", "other_requests");
	ASSERT_STREQ(td(row, "peak_concurrent", b, sizeof(b)), "7", "other_peak_sum");
	ASSERT_STREQ(td(row, "mean_concurrent", b, sizeof(b)), "1.0", "other_mean_sum");
	ASSERT_STREQ(td(row, "lifetime_ms_p50", b, sizeof(b)), "63", "other_lifetime");
	*rend = '\n';
	*tend = '<';
	free(out);

	/* With room for all: the listener has no closed connection, so no
	 * lifetime, a dash rather than a 0. */
	run.tw.top = 10;
	out = render(&a, &run);
	tab = cut(out, "<table class=\"ep reuse\" id=\"reuse-ep-7\">", "</table>", &tend);
	row = row_of(tab, "listen *:9090", &rend);
	ASSERT_STREQ(td(row, "requests_per_conn", b, sizeof(b)), "10.0", "listen_per_conn");
	ASSERT_TRUE(!strstr(row, "lifetime_ms_p50"), "no_lifetime");
	ASSERT_TRUE(strstr(row, "<td>&ndash;</td><td>&ndash;</td></tr>") != NULL, "dashes");
	*rend = '\n';
	*tend = '<';
	ASSERT_TRUE(!strstr(out, "other ("), "no_other");
	/* No handshake was seen: a dash, not "0 us". */
	ASSERT_TRUE(!strstr(out, "data-k=\"handshake_us_p50\""), "no_handshake");
	free(out);
	agg_free(&a);
}

TEST(hostile_comm_escaped_in_finding)
{
	struct agg a;
	struct proc_books *p;
	char *out, *box, *end;

	p = churner(&a);
	/* 15 characters: what a comm holds. */
	strcpy(p->comm, "<b>x</b>'\"&\033");
	out = render(&a, &base_run);
	ASSERT_TRUE(!strstr(out, "<b>x</b>"), "comm_not_raw");
	ASSERT_TRUE(!strchr(out, '\033'), "no_control_char");
	box = cut(out, "<div class=\"finding\"", "</p>\n</div>", &end);
	ASSERT_TRUE(strstr(box, "PID 100 (&lt;b&gt;x&lt;/b&gt;&#39;&quot;&amp;?)</a>") != NULL,
		    "comm_escaped");
	ASSERT_TRUE(!strstr(box, ">="), "text_escaped");
	*end = '<';
	ASSERT_EQ(count(out, "<script"), 1, "one_script");
	/* Links stay on the page. */
	for (const char *h = out; (h = strstr(h, "href=\"")); h += 6)
		ASSERT_TRUE(h[6] == '#', "href_local");
	ASSERT_EQ(count(out, "<section"), count(out, "</section>"), "sections_balanced");
	ASSERT_EQ(count(out, "<div"), count(out, "</div>"), "divs_balanced");
	ASSERT_EQ(count(out, "<table"), count(out, "</table>"), "tables_balanced");
	free(out);
	agg_free(&a);
}

/* A pool that reuses: no finding, no box, and nothing marked. */
TEST(no_finding_no_box)
{
	struct agg a;
	struct proc_books *p;
	char *out, b[32];

	agg_init(&a, 0);
	a.bucket_ns = SEC;
	conn(&a, 0x1000, 40000, 0, 100 * US, 900 * MS, 99);
	agg_tick(&a, SEC);
	p = agg_find_proc(&a, CLIENT);
	p->target = true;
	out = render(&a, &base_run);
	ASSERT_TRUE(!strstr(out, "id=\"findings\""), "no_section");
	ASSERT_TRUE(!strstr(out, "class=\"finding\""), "no_box");
	ASSERT_TRUE(!strstr(out, "class=\"churn\""), "no_churn_row");
	ASSERT_TRUE(!strstr(out, "kpi bad"), "no_bad_tile");
	ASSERT_TRUE(strstr(out, "<div class=\"k\">findings</div><div class=\"v good\">0</div>") !=
		    NULL, "kpi_zero");
	ASSERT_STREQ(td(out, "requests", b, sizeof(b)), "50", "requests");
	ASSERT_STREQ(td(out, "reuse_ratio", b, sizeof(b)), "98%", "reuse");
	ASSERT_STREQ(td(out, "lifetime_ms_p50", b, sizeof(b)), "1023", "lifetime");
	free(out);
	agg_free(&a);
}

TEST(idle_process_note)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	agg_init(&a, 0);
	p = agg_proc(&a, 5);
	p->target = true;
	strcpy(p->comm, "idle");
	out = render(&a, &base_run);
	ASSERT_TRUE(strstr(out, "<div class=\"reusepart\" id=\"reuse-5\">\n<h3>Connection reuse"
				"</h3>\n<p class=\"note\">No connection opened or accepted during "
				"the run.</p>\n</div>") != NULL, "note");
	ASSERT_TRUE(!strstr(out, "reuse-ep-5"), "no_table");
	ASSERT_EQ(count(out, "<svg"), 0, "no_maps");
	free(out);
	agg_free(&a);
}

UNIT_MAIN()
