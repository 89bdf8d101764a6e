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
#include "report_html_sample.h"
#include "fdsession.h"
#include "report_html.h"

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
	run.losses.n[LOSS_TCP_EVENTS] = 7;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "tp_btf/inet_sock_set_state") != NULL, "hook");
	ASSERT_TRUE(strstr(out, "tw timer (inet_twsk_*)") != NULL, "tw_method");
	ASSERT_TRUE(strstr(out, "until Ctrl-C, 4.0 s ran") != NULL, "duration");
	ASSERT_TRUE(strstr(out, "<dt>interval</dt><dd>1 s</dd>") != NULL, "interval");
	ASSERT_TRUE(strstr(out, "<dt>end reason</dt><dd>interrupted</dd>") != NULL, "end_reason");
	ASSERT_TRUE(strstr(out, "<dt>events</dt><dd>1234</dd>") != NULL, "events");
	ASSERT_TRUE(strstr(out, ">7</dd>") != NULL, "events_lost");
	/* Said once, with its fix (it was said twice: LOST and "7 events
	 * were lost"; review s42 X2). */
	ASSERT_TRUE(strstr(out, "LOST: 7 TCP events (ring buffer full); counts below are low "
			   "(see Run: losses); raise --ringbuf-size</p>") != NULL, "lost_warning");
	ASSERT_EQ(count(out, "ring buffer full"), 1, "ring_loss_said_once");
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
	ASSERT_TRUE(strstr(out, "<dt>accept hook</dt>") == NULL, "no_accept_hook_unused");
	free(out);

	/* Before 6.3 (Debian 12's 6.1): the accept's hook named in Run, as
	 * the text report's accept: line names it; the io hooks too. */
	run.io_hook = "tp_btf/tcp_sendmsg_locked, tp_btf/tcp_rcv_space_adjust";
	run.accept_hook = "fexit/inet_csk_accept";
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "<dt>io hooks</dt><dd class=\"mono\">tp_btf/tcp_sendmsg_locked, "
				"tp_btf/tcp_rcv_space_adjust</dd>") != NULL, "io_hooks");
	ASSERT_TRUE(strstr(out, "<dt>accept hook</dt><dd class=\"mono\">fexit/inet_csk_accept"
				"</dd>") != NULL, "accept_hook");
	free(out);
	agg_free(&a);
}

/* The footer names the accept hook Run names (run->accept_hook), not the
 * one the program list says is loaded: where fexit on inet_csk_accept
 * loaded but did not attach, the accept() exits ran instead. */
TEST(footer_names_the_accept_hook_that_ran)
{
	struct agg a;
	struct run_info run = base_run;
	char *out, *footer;

	sample(&a);
	run.nprogs = 3;
	run.progs[0].name = "handle_accept_fexit";
	run.progs[0].attached = true;
	run.progs[1].name = "handle_accept4_exit";
	run.progs[2].name = "handle_accept_exit";
	run.accept_hook = "tracepoint/syscalls/sys_exit_accept, sys_exit_accept4";
	out = render(&a, &run);
	footer = strstr(out, "<footer");
	ASSERT_TRUE(footer != NULL, "footer");
	ASSERT_TRUE(strstr(footer, "accepts at <span class=\"mono\">tracepoint/syscalls/"
				   "sys_exit_accept, sys_exit_accept4</span>") != NULL,
		    "footer_accept_exits");
	ASSERT_TRUE(strstr(footer, "inet_csk_accept") == NULL, "footer_not_fexit");
	free(out);

	/* Socket storage: no accept hook, none named. */
	run.accept_hook = NULL;
	out = render(&a, &run);
	footer = strstr(out, "<footer");
	ASSERT_TRUE(footer != NULL && strstr(footer, "accept") == NULL, "footer_no_accept_hook");
	free(out);
	agg_free(&a);
}

/* A server's listener is an endpoint for reuse alone: no TIME_WAIT row of
 * zeros for it, and no TIME_WAIT table when it is the only one. */
TEST(reuse_only_endpoint_has_no_time_wait_row)
{
	struct agg a;
	struct proc_books *p;
	struct run_info run = base_run;
	struct endpoint_key k = { .family = AF_INET, .side = EP_LISTEN, .port = 8080 };
	struct endpoint_stats *es;
	bool created;
	char *out;

	p = sample(&a);
	es = hmap_upsert(&p->endpoints, &k, &created);
	ASSERT_TRUE(es != NULL, "endpoint");
	es->accepted = 7;
	es->requests = 7;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "<h3>TIME_WAIT by endpoint</h3>") == NULL, "no_table");
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


/* tcp_max_orphans unread (the agent in a network namespace of its own,
 * where the host-wide sysctl is not shown): unknown, no meter, not "of 0". */
TEST(limits_orphans_unknown)
{
	struct agg a;
	struct run_info run = base_run;
	struct limits_view v = { .valid = true, .warn_share = 0.8 };
	char *out;

	sample(&a);
	v.lim.port_lo = 40000;
	v.lim.port_hi = 40099;
	v.lim.max_tw_buckets = 1000;
	v.lim.max_orphans_unread = true;
	v.host_orphan = 3;
	v.host_orphan_peak = 8;
	run.limits = &v;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "of tcp_max_orphans 0") == NULL, "no_limit_of_0");
	ASSERT_TRUE(strstr(out, "3 (peak 8); tcp_max_orphans unknown (host-wide, readable in the "
			   "host&#39;s network namespace only)") != NULL, "unknown_said");
	free(out);
	agg_free(&a);
}

/* Every loss the text report leads with, the HTML report says too: it
 * said a full ring buffer alone, so a run under `ip netns exec` (the QUIC
 * wire source off, "LOST: 1 program or source not attached" first in
 * the text) or with a full TIME_WAIT map read as whole. Said before any
 * number, and each kind in the Run facts. */
TEST(every_loss_said)
{
	struct agg a;
	struct run_info run = base_run;
	char *out;

	sample(&a);
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "data-k=\"losses\"") == NULL, "no_losses_no_warning");
	ASSERT_TRUE(strstr(out, "<dt>losses</dt><dd class=\"good\">none") != NULL, "none_said");
	free(out);
	run.losses.n[LOSS_ATTACH_FAILED] = 1;
	run.losses.n[LOSS_TW_MAP_FULL] = 2;
	out = render(&a, &run);
	ASSERT_TRUE(strstr(out, "<p class=\"warn bad\" data-k=\"losses\">LOST: 1 program or "
			   "source not attached, 2 TIME_WAIT sockets not followed to their end")
		    != NULL, "headline");
	ASSERT_TRUE(strstr(out, "data-k=\"losses\"") < strstr(out, "id=\"summary\""),
		    "before_the_numbers");
	ASSERT_TRUE(strstr(out, "<dt>losses</dt><dd class=\"bad\">attach_failed 1, "
			   "time_wait_map_full 2</dd>") != NULL, "run_facts");
	assert_self_contained(out);
	free(out);
	agg_free(&a);
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
