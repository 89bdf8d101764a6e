/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The HTML report's fd part: heatmaps that are the fd books' own, the
 * facts and summary, the leak sites, and nothing when fd tracing is off.
 * Rendered from hand-built books into a memstream; no kernel, no browser. */
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

UNIT_MAIN()
