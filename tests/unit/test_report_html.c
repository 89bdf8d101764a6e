/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The HTML report: self-contained, escaped, and showing the books' own
 * numbers (cells as data-value, totals in the table). Rendered from hand-
 * built books into a memstream; no kernel, no browser. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "unit.h"
#include "report_html_fixture.h"
#include "fdsession.h"
#include "report_html.h"

#define SEC 1000000000ULL
#define HOSTILE "<script>alert(1)</script>"

static const struct run_info base_run = {
	.hook = "tp_btf/inet_sock_set_state",
	.tw_method = "tw timer (inet_twsk_*)",
	.duration_s = 0,
	.elapsed_s = 4.0,
	.interval_s = 1,
	.end_reason = "interrupted",
	.tw = { .top = 10 },
};

/* A process with a hand-filled TIME_WAIT map (2 endpoints x 4 columns) and
 * an orphan map with one nonzero cell. */
static struct proc_books *sample(struct agg *a)
{
	static const uint64_t tw[2][4] = { { 3, 30, 12, 0 }, { 0, 1, 0, 5 } };
	struct proc_books *p;

	agg_init(a, 0);
	p = agg_proc(a, 4242);
	ASSERT_TRUE(p != NULL, "proc");
	p->target = true;
	strcpy(p->comm, "tcpfix");
	p->total.opened = 31;
	p->total.accepted = 2;
	p->total.closed = 29;
	p->total.tw_entered = 30;
	p->total.tw_expired = 4;
	p->total.tw_killed = 1;
	p->truth.valid = true;
	p->truth.state[CS_TCP_ESTABLISHED] = 2;
	p->truth.state[CS_TCP_TIME_WAIT] = 25;
	p->truth.orphan = 1;
	p->truth.orphan_state[CS_TCP_FIN_WAIT1] = 1;

	ASSERT_EQ(heatmap_init(&p->hm_tw, "time_wait", "TIME_WAIT sockets by endpoint", "sockets",
			       0, SEC), 0, "hm_tw");
	ASSERT_EQ(heatmap_row(&p->hm_tw, "127.0.0.1:8080"), 0, "row0");
	ASSERT_EQ(heatmap_row(&p->hm_tw, HOSTILE), 1, "row1");
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 4; c++)
			ASSERT_EQ(heatmap_set(&p->hm_tw, r, c * SEC + 1, tw[r][c]), 0, "set");
	ASSERT_EQ(heatmap_init(&p->hm_orphan, "orphan", "orphaned sockets by state", "sockets",
			       0, SEC), 0, "hm_orphan");
	heatmap_row(&p->hm_orphan, "fin_wait1");
	heatmap_row(&p->hm_orphan, "fin_wait2");
	heatmap_set(&p->hm_orphan, 0, 2 * SEC, 1);
	heatmap_set(&p->hm_orphan, 1, 3 * SEC, 0);
	p->hm_ready = true;
	return p;
}

/* Whether p is inside a tag (markup, not text): escaped text holds no '<'
 * or '>', so the nearest of the two before p tells. */
static bool in_tag(const char *start, const char *p)
{
	while (p > start && *p != '<' && *p != '>')
		p--;
	return *p == '<';
}

/* Every src=, href=, url( and @import in markup points inside the page
 * (#...) or at a data: URI, and no absolute or scheme-relative URL appears
 * anywhere, text included. */
static void assert_self_contained(const char *out)
{
	/* Attributes count in markup only (a comm may read "src=x" as text);
	 * CSS references count anywhere. */
	static const struct {
		const char *s;
		bool markup_only;
	} refs[] = {
		{ "src=", true }, { "href=", true }, { "action=", true }, { "url(", false },
		{ "@import", false },
	};

	ASSERT_TRUE(!strstr(out, "http://"), "no_http");
	ASSERT_TRUE(!strstr(out, "https://"), "no_https");
	ASSERT_TRUE(!strstr(out, "<link"), "no_link");
	ASSERT_TRUE(!strstr(out, "<iframe"), "no_iframe");
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		size_t n = strlen(refs[i].s);

		for (const char *p = out; (p = strstr(p, refs[i].s)); p += n) {
			const char *v = p + n;

			if (refs[i].markup_only && !in_tag(out, p))
				continue;
			if (*v == '"' || *v == '\'')
				v++;
			ASSERT_TRUE(*v == '#' || !strncmp(v, "data:", 5), refs[i].s);
		}
	}
	/* No scheme-relative URL either: the page has no "//" at all. */
	for (const char *p = out; (p = strstr(p, "//")); p += 2)
		ASSERT_TRUE(0, "no_double_slash");
}

TEST(self_contained)
{
	struct agg a;
	char *out;

	sample(&a);
	out = render(&a, &base_run);
	assert_self_contained(out);
	/* The policy that makes the browser refuse any fetch. */
	ASSERT_TRUE(strstr(out, "content=\"default-src 'none';") != NULL, "csp");
	free(out);
	agg_free(&a);
}

TEST(complete_document)
{
	struct agg a;
	char *out;
	size_t n;

	sample(&a);
	out = render(&a, &base_run);
	n = strlen(out);
	ASSERT_TRUE(!strncmp(out, "<!DOCTYPE html>\n", 16), "doctype");
	ASSERT_TRUE(n > 8 && !strcmp(out + n - 8, "</html>\n"), "ends_with_html");
	ASSERT_EQ(count(out, "<script>"), 1, "one_inline_script");
	ASSERT_EQ(count(out, "</script>"), 1, "one_script_end");
	ASSERT_EQ(count(out, "<svg"), count(out, "</svg>"), "svg_balanced");
	ASSERT_EQ(count(out, "<section"), count(out, "</section>"), "sections_balanced");
	ASSERT_EQ(count(out, "<table"), count(out, "</table>"), "tables_balanced");
	free(out);
	agg_free(&a);
}

TEST(escapes_hostile_comm_and_label)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	p = sample(&a);
	/* 15 characters: what a comm holds. */
	strcpy(p->comm, "<img src=x '\"&");
	out = render(&a, &base_run);
	ASSERT_TRUE(!strstr(out, HOSTILE), "label_not_raw");
	ASSERT_TRUE(!strstr(out, "<img"), "comm_not_raw");
	ASSERT_TRUE(strstr(out, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL, "label_escaped");
	ASSERT_TRUE(strstr(out, "data-label=\"&lt;script&gt;alert(1)&lt;/script&gt;\"") != NULL,
		    "label_attr_escaped");
	ASSERT_TRUE(strstr(out, "&lt;img src=x &#39;&quot;&amp;") != NULL, "comm_escaped");
	/* Still exactly one script element: ours. */
	ASSERT_EQ(count(out, "<script"), 1, "one_script");
	assert_self_contained(out);
	free(out);
	agg_free(&a);
}

TEST(control_characters_replaced)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	p = sample(&a);
	strcpy(p->comm, "a\033[31mb\r\n");
	out = render(&a, &base_run);
	ASSERT_TRUE(!strchr(out, '\033'), "no_escape_char");
	ASSERT_TRUE(!strchr(out, '\r'), "no_cr");
	ASSERT_TRUE(strstr(out, "a?[31mb??") != NULL, "replaced");
	free(out);
	agg_free(&a);
}

TEST(cells_carry_their_values)
{
	struct agg a;
	char *out, *svg, *end;
	char want[128];

	sample(&a);
	out = render(&a, &base_run);
	svg = strstr(out, "<svg class=\"hm\" id=\"hm-4242-time_wait\"");
	ASSERT_TRUE(svg != NULL, "tw_svg_id");
	end = strstr(svg, "</svg>");
	ASSERT_TRUE(end != NULL, "svg_end");
	*end = '\0';
	ASSERT_EQ(count(svg, "<rect class=\"c\""), 2 * 4, "rows_x_cols_cells");
	ASSERT_TRUE(strstr(svg, "data-rows=\"2\" data-cols=\"4\" data-max=\"30\"") != NULL, "dims");
	ASSERT_TRUE(strstr(svg, "data-bucket-s=\"1\"") != NULL, "bucket");
	ASSERT_TRUE(strstr(svg, "data-row=\"0\" data-col=\"1\" data-value=\"30\"") != NULL, "r0c1");
	ASSERT_TRUE(strstr(svg, "data-row=\"0\" data-col=\"3\" data-value=\"0\"") != NULL, "r0c3");
	ASSERT_TRUE(strstr(svg, "data-row=\"1\" data-col=\"3\" data-value=\"5\"") != NULL, "r1c3");
	/* The native tooltip: label, time range, value. */
	snprintf(want, sizeof(want), "<title>127.0.0.1:8080 &middot; 1&#8211;2 s &middot; 30 "
		 "sockets</title>");
	ASSERT_TRUE(strstr(svg, want) != NULL, "title_tooltip");
	/* The row peak column of a sampled map. */
	ASSERT_TRUE(strstr(svg, ">peak</text>") != NULL, "peak_header");
	/* Zero is grey, outside the ramp; the max is the ramp's dark end. */
	ASSERT_TRUE(strstr(svg, "data-value=\"0\" x=\"") != NULL, "zero_cell");
	ASSERT_TRUE(strstr(svg, "fill=\"#eceff3\"><title>127.0.0.1:8080 &middot; 3") != NULL,
		    "zero_grey");
	ASSERT_TRUE(strstr(svg, "fill=\"#440154\"><title>127.0.0.1:8080 &middot; 1") != NULL,
		    "max_dark");
	ASSERT_TRUE(strstr(svg, "fill=\"#fde725\"><title>&lt;script&gt;alert(1)&lt;/script&gt; "
				"&middot; 1") != NULL, "one_lightest");
	*end = '<';
	ASSERT_TRUE(strstr(out, "id=\"readout-hm-4242-time_wait\"") != NULL, "tw_readout");
	ASSERT_TRUE(strstr(out, "id=\"hm-4242-orphan\"") != NULL, "orphan_svg");
	ASSERT_TRUE(strstr(out, "id=\"readout-hm-4242-orphan\"") != NULL, "orphan_readout");
	/* The orphan map is drawn as a whole, rows as given. */
	ASSERT_TRUE(strstr(out, "data-label=\"fin_wait1\"") != NULL, "orphan_row");
	ASSERT_TRUE(strstr(out, "data-row=\"0\" data-col=\"2\" data-value=\"1\"") != NULL,
		    "orphan_cell");
	/* The hover test hook is there. */
	ASSERT_TRUE(strstr(out, "#hover=") != NULL, "hover_hook");
	ASSERT_TRUE(strstr(out, "new MouseEvent('mouseover'") != NULL, "mouseover");
	free(out);
	agg_free(&a);
}

static const char *td(const char *row, const char *key, char *buf, size_t len)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "data-k=\"%s\">", key);
	p = strstr(row, pat);
	ASSERT_TRUE(p != NULL, key);
	p += strlen(pat);
	while (p[n] && p[n] != '<' && n + 1 < len)
		n++;
	snprintf(buf, len, "%.*s", (int)n, p);
	return buf;
}

TEST(summary_numbers)
{
	struct agg a;
	char *out, *row, *eol, b[32];

	sample(&a);
	out = render(&a, &base_run);
	row = strstr(out, "<tr id=\"proc-4242\">");
	ASSERT_TRUE(row != NULL, "row");
	eol = strchr(row, '\n');
	ASSERT_TRUE(eol != NULL, "one_line");
	*eol = '\0';
	ASSERT_STREQ(td(row, "pid", b, sizeof(b)), "4242", "pid");
	ASSERT_STREQ(td(row, "comm", b, sizeof(b)), "tcpfix", "comm");
	ASSERT_STREQ(td(row, "connections_opened", b, sizeof(b)), "31", "opened");
	ASSERT_STREQ(td(row, "connections_accepted", b, sizeof(b)), "2", "accepted");
	ASSERT_STREQ(td(row, "connections_closed", b, sizeof(b)), "29", "closed");
	ASSERT_STREQ(td(row, "time_wait_entered", b, sizeof(b)), "30", "tw_entered");
	ASSERT_STREQ(td(row, "time_wait", b, sizeof(b)), "25", "tw_live");
	ASSERT_STREQ(td(row, "time_wait_expired", b, sizeof(b)), "4", "tw_expired");
	ASSERT_STREQ(td(row, "time_wait_ended_early", b, sizeof(b)), "1", "tw_killed");
	ASSERT_STREQ(td(row, "orphans_now", b, sizeof(b)), "1", "orphans_now");
	ASSERT_TRUE(strstr(row, "established <b>2</b>") != NULL, "state_estab");
	ASSERT_TRUE(strstr(row, "time_wait <b>25</b>") != NULL, "state_tw");
	ASSERT_TRUE(strstr(row, "orphan <b>1</b>") != NULL, "state_orphan");
	*eol = '\n';
	/* The per-process facts say what the text report says. */
	ASSERT_TRUE(strstr(out, "opened 31 (7.8/s), accepted 2 (0.5/s), closed 29") != NULL,
		    "facts_connections");
	ASSERT_TRUE(strstr(out, "entered 30 (7.5/s), live 25, expired 4, ended early 1") != NULL,
		    "facts_tw");
	free(out);
	agg_free(&a);
}

TEST(run_parameters)
{
	struct agg a;
	struct run_info run = base_run;
	char *out;

	sample(&a);
	a.mismatch_max = 3;
	run.stats[CS_STAT_EVENTS] = 1234;
	run.stats[CS_STAT_RB_LOST] = 7;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "tp_btf/inet_sock_set_state") != NULL, "hook");
	ASSERT_TRUE(strstr(out, "tw timer (inet_twsk_*)") != NULL, "tw_method");
	ASSERT_TRUE(strstr(out, "until Ctrl-C, 4.0 s ran") != NULL, "duration");
	ASSERT_TRUE(strstr(out, "<dt>interval</dt><dd>1 s</dd>") != NULL, "interval");
	ASSERT_TRUE(strstr(out, "<dt>end reason</dt><dd>interrupted</dd>") != NULL, "end_reason");
	ASSERT_TRUE(strstr(out, "<dt>events</dt><dd>1234</dd>") != NULL, "events");
	ASSERT_TRUE(strstr(out, ">7</dd>") != NULL, "events_lost");
	ASSERT_TRUE(strstr(out, "7 events were lost") != NULL, "lost_warning");
	ASSERT_TRUE(strstr(out, "agree at the end</span> (largest gap during the run 3)") != NULL,
		    "books");
	free(out);

	a.mismatch_last = 2;
	run.duration_s = 2.5;
	run.interval_s = 0.5;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "disagree by 2 sockets at the end</span> (largest gap 3)") != NULL,
		    "books_disagree");
	ASSERT_TRUE(strstr(out, "2.5 s asked") != NULL, "duration_asked");
	ASSERT_TRUE(strstr(out, "<dt>interval</dt><dd>0.5 s</dd>") != NULL, "interval_half");
	free(out);
	agg_free(&a);
}

/* Rows bounded like the JSON report: the top N, the rest as "other". */
TEST(top_rows_and_other)
{
	struct agg a;
	struct proc_books *p;
	struct run_info run = base_run;
	char *out, label[32];

	p = sample(&a);
	heatmap_free(&p->hm_tw);
	heatmap_init(&p->hm_tw, "time_wait", "TIME_WAIT sockets by endpoint", "sockets", 0, SEC);
	for (int r = 0; r < 6; r++) {
		snprintf(label, sizeof(label), "10.0.0.%d:443", r + 1);
		heatmap_row(&p->hm_tw, label);
		heatmap_set(&p->hm_tw, r, 0, 10 + r);
	}
	run.tw.top = 3;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "data-rows=\"4\" data-cols=\"1\"") != NULL, "3_plus_other");
	ASSERT_TRUE(strstr(out, "data-label=\"other\"") != NULL, "other_row");
	ASSERT_TRUE(strstr(out, "data-label=\"10.0.0.6:443\"") != NULL, "top_kept");
	ASSERT_TRUE(!strstr(out, "data-label=\"10.0.0.1:443\""), "small_folded");
	/* other = 10 + 11 + 12 at that moment */
	ASSERT_TRUE(strstr(out, "data-row=\"3\" data-col=\"0\" data-value=\"33\"") != NULL,
		    "other_sum");
	free(out);
	agg_free(&a);
}

/* The books' own path: endpoints sampled by agg_tick at each interval. */
TEST(sampled_by_agg_tick)
{
	struct agg a;
	struct proc_books *p;
	struct endpoint_key k = { .family = 2, .side = EP_REMOTE, .port = 8080 };
	struct endpoint_stats *es;
	char *out;

	agg_init(&a, 0);
	a.bucket_ns = SEC / 2;
	p = agg_proc(&a, 77);
	p->target = true;
	strcpy(p->comm, "client");
	inet_pton(2, "127.0.0.1", k.addr);
	es = hmap_upsert(&p->endpoints, &k, NULL);
	ASSERT_TRUE(es != NULL, "endpoint");
	es->tw_entered = 9;
	es->tw_live = 4;
	es->tw_live_peak = 9;
	agg_tick(&a, SEC / 2);
	es = hmap_get(&p->endpoints, &k);
	es->tw_live = 9;
	agg_tick(&a, SEC);
	out = render(&a, &base_run);
	ASSERT_TRUE(strstr(out, "id=\"hm-77-time_wait\"") != NULL, "svg");
	ASSERT_TRUE(strstr(out, "data-bucket-s=\"0.5\"") != NULL, "bucket");
	ASSERT_TRUE(strstr(out, "data-label=\"127.0.0.1:8080\"") != NULL, "label");
	ASSERT_TRUE(strstr(out, "data-row=\"0\" data-col=\"0\" data-value=\"4\"") != NULL, "c0");
	ASSERT_TRUE(strstr(out, "data-row=\"0\" data-col=\"1\" data-value=\"9\"") != NULL, "c1");
	ASSERT_TRUE(strstr(out, "0.5&#8211;1 s &middot; 9 sockets") != NULL, "title_half_s");
	/* Endpoint table as in the text report. */
	ASSERT_TRUE(strstr(out, "127.0.0.1:8080</td><td>9</td><td>9</td><td>9</td>") != NULL,
		    "endpoint_row");
	/* Nothing was orphaned: a note, not a grid of zeros. */
	ASSERT_TRUE(strstr(out, "id=\"hm-77-orphan-none\"") != NULL, "orphan_none");
	ASSERT_TRUE(!strstr(out, "id=\"hm-77-orphan\""), "no_orphan_svg");
	free(out);
	agg_free(&a);
}

/* Long runs: columns merged to fit, samples keeping their maximum. */
TEST(many_columns_merged)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	p = sample(&a);
	heatmap_free(&p->hm_tw);
	heatmap_init(&p->hm_tw, "time_wait", "TIME_WAIT sockets by endpoint", "sockets", 0, SEC);
	heatmap_row(&p->hm_tw, "127.0.0.1:8080");
	for (int c = 0; c < 600; c++)
		heatmap_set(&p->hm_tw, 0, c * SEC, c == 4 ? 99 : 1);
	out = render(&a, &base_run);
	ASSERT_TRUE(strstr(out, "data-rows=\"1\" data-cols=\"200\" data-max=\"99\" "
				"data-merged=\"3\"") != NULL, "merged");
	ASSERT_TRUE(strstr(out, "data-row=\"0\" data-col=\"1\" data-value=\"99\"") != NULL,
		    "max_kept");
	ASSERT_TRUE(strstr(out, "3 intervals merged per column") != NULL, "said");
	free(out);
	agg_free(&a);
}

TEST(no_intervals_no_heatmaps)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	agg_init(&a, 0);
	p = agg_proc(&a, 5);
	p->target = true;
	strcpy(p->comm, "idle");
	out = render(&a, &base_run);
	ASSERT_TRUE(strstr(out, "No interval ended: no heatmaps.") != NULL, "note");
	ASSERT_EQ(count(out, "<svg"), 0, "no_svg");
	ASSERT_TRUE(strstr(out, "<tr id=\"proc-5\">") != NULL, "still_in_table");
	ASSERT_TRUE(strstr(out, "<span class=\"none\">none</span>") != NULL, "no_sockets");
	ASSERT_TRUE(strstr(out, "Not observed in this run.") != NULL, "no_limits");
	free(out);
	agg_free(&a);
}

TEST(limits_and_warnings)
{
	struct agg a;
	struct run_info run = base_run;
	struct limits_view v = { .valid = true, .warn_share = 0.8 };
	char *out;

	sample(&a);
	v.lim.port_lo = 40000;
	v.lim.port_hi = 40099;
	v.lim.max_tw_buckets = 1000;
	v.lim.max_orphans = 500;
	v.host_tw = 850;
	v.host_tw_peak = 900;
	v.host_orphan = 3;
	v.host_orphan_peak = 4;
	v.ndests = 1;
	v.dests[0].family = 2;
	inet_pton(2, "127.0.0.1", v.dests[0].saddr);
	inet_pton(2, "127.0.0.2", v.dests[0].daddr);
	v.dests[0].dport = 8080;
	v.dests[0].time_wait = 85;
	v.dests[0].established = 5;
	v.dests[0].share = 0.9;
	v.peak_share = 0.9;
	run.limits = &v;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "40000&ndash;40099 (100), tcp_tw_reuse 0") != NULL, "ports");
	ASSERT_TRUE(strstr(out, "850 (peak 900) of tcp_max_tw_buckets 1000 (90.0%)") != NULL, "tw");
	ASSERT_TRUE(strstr(out, "3 (peak 4) of tcp_max_orphans 500 (0.8%)") != NULL, "orphans");
	ASSERT_TRUE(strstr(out, "port exhaustion: 127.0.0.1 -&gt; 127.0.0.2:8080 used 90 of 100") !=
		    NULL, "port_warning_escaped");
	ASSERT_TRUE(strstr(out, "TIME_WAIT sockets reached 900 of net.ipv4.tcp_max_tw_buckets") !=
		    NULL, "tw_warning");
	ASSERT_EQ(count(out, "<b>warning:</b>"), 2, "two_warnings");
	ASSERT_TRUE(strstr(out, "<td>90</td><td>85</td><td>5</td><td>0</td>") != NULL, "dest_row");
	assert_self_contained(out);
	free(out);
	agg_free(&a);
}

/* ---- the fd part ---------------------------------------------------------- */

#define HOSTILE_FUNC "<script>alert(2)</script>"

/* The fd session of one process, pid 4242 of sample(): real books (events
 * and /proc listings through fd_books_*, so the heatmaps are the books'
 * own), the analysis filled in as fd_session_analyze would, and hand-made
 * frames for the one suspect site. */
struct fd_fixture {
	struct fd_books books;
	struct fdleak_proc proc;
	struct fd_report s;
};

static void fd_ev(struct fd_books *b, uint8_t type, int fd, uint64_t site, uint8_t how,
		  uint64_t ts)
{
	struct fd_event e = { .type = type, .fd = fd, .fd2 = -1, .site = site, .ts_ns = ts,
			      .tgid = 4242, .tid = 4242, .stack_id = -1, .how = how };

	fd_books_event(b, &e);
}

static void fd_list(struct fd_books *b, int n, uint64_t t, bool final)
{
	static const char *const types[] = { "chr", "chr", "chr", "tcp", "tcp", "tcp" };
	static const int32_t fds[] = { 0, 1, 2, 3, 4, 5 };

	fd_books_reconcile(b, 4242, fds, n, types, t, final);
}

static struct fd_fixture *fd_sample(void)
{
	static struct fd_fixture x;
	struct fdleak_proc *p = &x.proc;
	struct site_frames *f;

	memset(&x, 0, sizeof(x));
	fd_books_init(&x.books, 0, SEC);
	/* 0-2 held at start; sockets 3, 4, 5 made and kept by one site, a
	 * file opened and closed by another. */
	fd_list(&x.books, 3, 1 * SEC, false);
	fd_ev(&x.books, FD_EV_OPEN, 3, 0x1eaf, FD_HOW_SOCKET, 1 * SEC + SEC / 5);
	fd_ev(&x.books, FD_EV_OPEN, 4, 0x1eaf, FD_HOW_SOCKET, 1 * SEC + SEC / 2);
	fd_list(&x.books, 5, 2 * SEC, false);
	fd_ev(&x.books, FD_EV_OPEN, 5, 0x1eaf, FD_HOW_SOCKET, 2 * SEC + SEC / 2);
	fd_ev(&x.books, FD_EV_OPEN, 6, 0xc105e, FD_HOW_OPEN, 2 * SEC + SEC * 6 / 10);
	fd_ev(&x.books, FD_EV_CLOSE, 6, 0, 0, 2 * SEC + SEC * 7 / 10);
	fd_list(&x.books, 6, 3 * SEC, false);
	fd_list(&x.books, 6, 4 * SEC, true);

	p->pid = 4242;
	strcpy(p->comm, "tcpfix");
	p->inv.pid = 4242;
	p->inv.total = 6;
	p->inv.max_fd = 5;
	p->inv.by_type[FDT_CHR] = 3;
	p->inv.by_type[FDT_TCP] = 3;
	p->inv.tcp_state[CS_TCP_ESTABLISHED] = 3;
	p->lim.soft = 1024;
	p->lim.hard = 4096;
	p->books = fd_books_proc(&x.books, 4242);
	ASSERT_TRUE(p->books != NULL && p->books->hm_ready, "fd_books");
	p->slope = fd_proc_slope(p->books);
	p->seconds_to_limit = (p->lim.soft - p->inv.total) / p->slope;
	p->nsus = fd_books_suspects(&x.books, 4242, 4 * SEC, 2 * SEC, p->sus, FDLEAK_MAX_SITES);
	ASSERT_EQ(p->nsus, 1, "one_suspect");
	f = &p->frames[0];
	f->n = 3;
	f->site_idx = 1;
	f->method = "dwarf";
	f->frames[0] = (struct sym_frame){ .ip = 0x7f0000001000, .func = "__socket",
					   .offset = 0xb, .module = "libc.so.6" };
	f->frames[1] = (struct sym_frame){ .ip = 0x401234, .func = "open_conn", .offset = 0x1c,
					   .module = "leakfix", .file = "/src/leakfix.c",
					   .line = 42 };
	f->frames[2] = (struct sym_frame){ .ip = 0x401300, .func = HOSTILE_FUNC, .offset = 4,
					   .module = "leakfix" };
	x.s.procs = p;
	x.s.n = 1;
	x.s.leak_age_s = 2;
	return &x;
}

/* The part of out from the first match of start up to the next end,
 * terminated there; the caller puts back *ret_end. */
static char *cut(char *out, const char *start, const char *end, char **ret_end)
{
	char *a = strstr(out, start), *b;

	ASSERT_TRUE(a != NULL, start);
	b = strstr(a, end);
	ASSERT_TRUE(b != NULL, end);
	*b = '\0';
	*ret_end = b;
	return a;
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
		  "fd_rows_x_cols_cells");
	for (int r = 0; r < h->nrows; r++)
		for (size_t c = 0; c < heatmap_ncols(h); c++) {
			snprintf(want, sizeof(want), "data-row=\"%d\" data-col=\"%zu\" "
				 "data-value=\"%llu\"", r, c,
				 (unsigned long long)heatmap_cell(h, r, c));
			ASSERT_TRUE(strstr(svg, want) != NULL, want);
		}
	*end = '<';
	snprintf(want, sizeof(want), "id=\"readout-%s\"", id);
	ASSERT_TRUE(strstr(out, want) != NULL, "fd_readout");
}

TEST(fd_heatmaps_are_the_books)
{
	struct fd_fixture *x = fd_sample();
	struct run_info run = base_run;
	struct agg a;
	char *out;

	sample(&a);
	run.fds = x->s;
	out = render(&a, &run);
	assert_map_equals_books(out, "hm-4242-fd_type", &x->proc.books->hm_type);
	assert_map_equals_books(out, "hm-4242-fd_age", &x->proc.books->hm_age);
	/* Known by hand: chr held throughout, the third socket from 3 s on. */
	ASSERT_TRUE(strstr(out, "data-label=\"chr\"") != NULL, "type_row_chr");
	ASSERT_TRUE(strstr(out, "data-row=\"1\" data-col=\"2\" data-value=\"3\"") != NULL,
		    "tcp_at_3s");
	ASSERT_TRUE(strstr(out, "<title>tcp &middot; 1&#8211;2 s &middot; 2 fds</title>") != NULL,
		    "fd_title_tooltip");
	/* The youngest age row is "<1 s": a label that needs its escaping. */
	ASSERT_TRUE(strstr(out, "data-label=\"&lt;1 s\"") != NULL, "age_label_escaped");
	ASSERT_TRUE(!strstr(out, "<1 s"), "age_label_not_raw");
	ASSERT_TRUE(strstr(out, "Each cell: fds open at the /proc listing of that interval") !=
		    NULL, "fd_cell_wording");
	/* The socket maps keep their own wording. */
	ASSERT_TRUE(strstr(out, "Each cell: sockets alive at the sample") != NULL, "tw_wording");
	free(out);
	agg_free(&a);
	fd_books_free(&x->books);
}

TEST(fd_facts_and_summary)
{
	struct fd_fixture *x = fd_sample();
	struct run_info run = base_run;
	struct limits_view v = { .warn_share = 0.8 };
	struct agg a;
	struct proc_books *child;
	char *out, *row, *eol, b[32];

	sample(&a);
	child = agg_proc(&a, 4243);
	strcpy(child->comm, "tcpfix");
	run.fds = x->s;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "<th colspan=\"2\">fds</th>") != NULL, "summary_group");
	row = strstr(out, "<tr id=\"proc-4242\">");
	ASSERT_TRUE(row != NULL, "row");
	eol = strchr(row, '\n');
	*eol = '\0';
	ASSERT_STREQ(td(row, "fds_now", b, sizeof(b)), "6", "summary_fds_now");
	ASSERT_STREQ(td(row, "fds_growth_per_s", b, sizeof(b)), "+1.0", "summary_growth");
	*eol = '\n';
	/* The child is not traced for fds: dashes, no numbers. */
	row = strstr(out, "<tr id=\"proc-4243\">");
	ASSERT_TRUE(row != NULL, "child_row");
	eol = strchr(row, '\n');
	*eol = '\0';
	ASSERT_TRUE(!strstr(row, "fds_now"), "child_no_fds");
	ASSERT_TRUE(strstr(row, "<td>&ndash;</td><td>&ndash;</td><td class=\"states\">") != NULL,
		    "child_dashes");
	*eol = '\n';
	ASSERT_TRUE(strstr(out, "id=\"fd-4242\"") != NULL, "fd_part");
	ASSERT_TRUE(!strstr(out, "id=\"fd-4243\""), "no_child_fd_part");
	ASSERT_TRUE(strstr(out, "<span data-k=\"fds_now\">6</span> of RLIMIT_NOFILE 1024 (0.6%), "
				"hard 4096") != NULL, "fds_vs_limit");
	ASSERT_TRUE(strstr(out, "<span style=\"width:0.6%\">") != NULL, "usage_bar");
	ASSERT_TRUE(strstr(out, "data-fdtype=\"chr\">chr <b>3</b>") != NULL, "by_type_chr");
	ASSERT_TRUE(strstr(out, "data-fdtype=\"tcp\">tcp <b>3</b>") != NULL, "by_type_tcp");
	ASSERT_TRUE(strstr(out, "established <b>3</b>") != NULL, "tcp_states");
	ASSERT_TRUE(strstr(out, "+1.0</span> fds/s (least squares over 4 listings); "
				"<span class=\"bad\">at this rate the limit is reached in 1018 s "
				"(about 17 min)") != NULL, "growth_and_limit");
	ASSERT_TRUE(strstr(out, "<dt>events</dt><dd>created 4, closed 1</dd>") != NULL, "events");
	ASSERT_TRUE(strstr(out, "0 closed unseen, 0 made unseen; 3 held at start") != NULL,
		    "books_vs_proc");
	ASSERT_EQ(count(out, "<b>warning:</b>"), 0, "no_fd_warning");
	ASSERT_EQ(count(out, "<section"), count(out, "</section>"), "sections_balanced");
	ASSERT_EQ(count(out, "<div"), count(out, "</div>"), "divs_balanced");
	ASSERT_EQ(count(out, "<details"), count(out, "</details>"), "details_balanced");
	assert_self_contained(out);
	free(out);

	/* Near the limit: the warning as the text report words it. */
	x->proc.lim.soft = 7;
	x->proc.seconds_to_limit = -1;
	run.limits = &v;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "<b>warning:</b> pid 4242 (tcpfix) holds 6 fds, 86% of its "
				"RLIMIT_NOFILE 7") != NULL, "fd_warning");
	ASSERT_TRUE(strstr(out, "<span class=\"meter hot\"><span style=\"width:85.7%\">") != NULL,
		    "hot_bar");
	ASSERT_TRUE(strstr(out, "; not growing towards the limit") != NULL, "not_growing");
	ASSERT_TRUE(!strstr(out, "Exited during the run"), "not_exited");
	free(out);

	/* Exited: no more listings, and the page says so. */
	x->proc.exited = true;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "Exited during the run: fds as of its last listing.") != NULL,
		    "exited_note");
	free(out);
	agg_free(&a);
	fd_books_free(&x->books);
}

TEST(fd_leak_sites)
{
	struct fd_fixture *x = fd_sample();
	struct run_info run = base_run;
	struct agg a;
	char *out, *tab, *end, b[32];

	sample(&a);
	run.fds = x->s;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "fds open longer than 2 s") != NULL, "leak_age");
	tab = cut(out, "<table class=\"ep fdsites\" id=\"fdsites-4242\">", "</table>", &end);
	ASSERT_EQ(count(tab, "<tr data-rank="), 1, "one_site_row");
	ASSERT_STREQ(td(tab, "old", b, sizeof(b)), "2", "old");
	ASSERT_STREQ(td(tab, "opened", b, sizeof(b)), "3", "opened");
	ASSERT_STREQ(td(tab, "closed", b, sizeof(b)), "0", "closed");
	snprintf(b, sizeof(b), "%.1f", x->proc.sus[0].per_s);
	ASSERT_TRUE(strstr(tab, b) != NULL, "rate");
	/* Site name and line, as fdsite_name gives them. */
	ASSERT_TRUE(strstr(tab, "<span class=\"mono\" data-k=\"site\">open_conn (leakfix.c:42)"
				"</span>") != NULL, "site_name_and_line");
	ASSERT_TRUE(strstr(tab, "data-k=\"made_by\">socket()</td>") != NULL, "made_by");
	ASSERT_TRUE(strstr(tab, "data-k=\"stack_method\">dwarf</td>") != NULL, "stack_method");
	/* Every frame, the site marked, the top suspect's stack open. */
	ASSERT_TRUE(strstr(tab, "<details open><summary>stack, 3 frames</summary>") != NULL,
		    "details_open");
	ASSERT_EQ(count(tab, "<li"), 3, "three_frames");
	ASSERT_EQ(count(tab, "<li class=\"site\""), 1, "one_site_frame");
	ASSERT_TRUE(strstr(strstr(tab, "<li class=\"site\""), "open_conn+0x1c (leakfix)") != NULL,
		    "site_frame_is_open_conn");
	ASSERT_TRUE(strstr(tab, "__socket+0xb (libc.so.6)") != NULL, "libc_frame");
	/* A hostile function name is text, never markup. */
	ASSERT_TRUE(!strstr(out, HOSTILE_FUNC), "func_not_raw");
	ASSERT_TRUE(strstr(tab, "&lt;script&gt;alert(2)&lt;/script&gt;") != NULL, "func_escaped");
	*end = '<';
	ASSERT_EQ(count(out, "<script"), 1, "one_script");
	free(out);

	/* The same for the site name itself (a C++ site holds '<' anyway). */
	strcpy(x->proc.frames[0].frames[1].func, "f<int>&\"'");
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "data-k=\"site\">f&lt;int&gt;&amp;&quot;&#39; (leakfix.c:42)") !=
		    NULL, "site_escaped");
	ASSERT_TRUE(!strstr(out, "f<int>"), "site_not_raw");
	free(out);

	/* No suspects: a note, no table. */
	x->proc.nsus = 0;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "id=\"fdsites-4242-none\">No leak suspects: no fd made during the "
				"run is older than 2 s.") != NULL, "no_suspects");
	ASSERT_TRUE(!strstr(out, "id=\"fdsites-4242\""), "no_sites_table");
	free(out);
	agg_free(&a);
	fd_books_free(&x->books);
}

/* fd tracking off: not a trace of it, and the page as without fds. */
TEST(fd_nothing_when_off)
{
	struct fd_fixture *x = fd_sample();
	struct run_info run = base_run;
	struct agg a;
	char *off, *on;

	sample(&a);
	off = render(&a, &base_run);
	ASSERT_TRUE(!strstr(off, "fdpart"), "no_fd_part");
	ASSERT_TRUE(!strstr(off, "fd_type"), "no_fd_type_map");
	ASSERT_TRUE(!strstr(off, "fd_age"), "no_fd_age_map");
	ASSERT_TRUE(!strstr(off, "fds_now"), "no_fd_cells");
	ASSERT_TRUE(!strstr(off, "File descriptors"), "no_fd_heading");
	ASSERT_TRUE(!strstr(off, ">fds<"), "no_fd_columns");
	ASSERT_TRUE(!strstr(off, "RLIMIT_NOFILE"), "no_fd_limit");
	run.fds = x->s;
	on = render(&a, &run);
	ASSERT_TRUE(strstr(on, "fdpart") != NULL, "fd_part_when_on");
	/* Where the fd part is, it comes after the socket maps, inside the
	 * process's section. */
	ASSERT_TRUE(strstr(on, "id=\"fd-4242\"") > strstr(on, "id=\"hm-4242-orphan\""),
		    "after_socket_maps");
	ASSERT_TRUE(strstr(on, "id=\"fd-4242\"") < strstr(on, "id=\"limits\""), "in_proc_section");
	free(off);
	free(on);
	agg_free(&a);
	fd_books_free(&x->books);
}

TEST(write_error_is_eio)
{
	struct agg a;
	FILE *f = fopen("/dev/full", "w");

	if (!f)
		SKIP("no /dev/full");
	sample(&a);
	ASSERT_EQ(format_report_html(f, &a, &base_run), -EIO, "eio");
	fclose(f);
	agg_free(&a);
}

UNIT_MAIN()
