/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The books the HTML report's unit tests render (test_report_html.c,
 * test_report_html_fd.c): a run, one sampled process, and the checks that
 * read a page back. Include after unit.h and report_html_fixture.h. */
#ifndef CONNSCOPE_REPORT_HTML_SAMPLE_H
#define CONNSCOPE_REPORT_HTML_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
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
static inline struct proc_books *sample(struct agg *a)
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
static inline bool in_tag(const char *start, const char *p)
{
	while (p > start && *p != '<' && *p != '>')
		p--;
	return *p == '<';
}

/* Every src=, href=, url( and @import in markup points inside the page
 * (#...) or at a data: URI, and no absolute or scheme-relative URL appears
 * anywhere, text included. */
static inline void assert_self_contained(const char *out)
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




#endif
