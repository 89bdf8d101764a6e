// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Reports of many processes (a server that forks one per connection) and
 * figures that must add up on screen: synthetic books, every renderer. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "report.h"
#include "report_html.h"
#include "proc_view.h"
#include "reuse.h"

static const struct run_info base_run = {
	.hook = "tp_btf/inet_sock_set_state", .interval_s = 1, .elapsed_s = 26,
	.end_reason = "duration", .follow_children = true,
};

typedef void (*render_fn)(FILE *, const struct agg *, const struct run_info *);

static char *render(render_fn fn, const struct agg *a, const struct run_info *run, size_t *len)
{
	/* static: gcc's dangling-pointer analysis misreads open_memstream */
	static char *buf;
	static size_t n;
	FILE *f;

	buf = NULL;
	f = open_memstream(&buf, &n);
	fn(f, a, run);
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

static void html_fn(FILE *f, const struct agg *a, const struct run_info *run)
{
	format_report_html(f, a, run);
}

/* A postmaster (the target) and nbackends forked backends, each with one
 * accepted connection, all but the last exited; and nother processes of
 * as many names (the worst case for grouping by name), one connection
 * opened each. */
static void postgres_books(struct agg *a, int nbackends, int nother)
{
	struct proc_books *p;

	agg_init(a, 0);
	p = agg_proc(a, 100);
	p->target = true;
	strcpy(p->comm, "postgres");
	p->truth.state[CS_TCP_LISTEN] = 1;
	for (int i = 0; i < nbackends; i++) {
		p = agg_proc(a, 1000 + i);
		strcpy(p->comm, "postgres");
		p->ptgid = 100;
		p->total.accepted = 1;
		p->total.closed = 1;
		p->total.closed_passive = 1;
		p->exited = i != nbackends - 1;
	}
	for (int i = 0; i < nother; i++) {
		p = agg_proc(a, 200000 + i);
		snprintf(p->comm, sizeof(p->comm), "worker%d", i);
		p->total.opened = 1 + i % 3;
		p->total.tw_entered = i % 2;
		p->truth.state[CS_TCP_TIME_WAIT] = i % 2;
	}
}

/* The first KEY at or after s, by a plain scan: ASan's strstr measures the
 * whole rest of s on every call (StrstrCheck), so walking a JSON report of
 * 10,000 processes key by key with it was quadratic again (over 300 s under
 * ASan on a loaded machine). */
static const char *find(const char *s, const char *key)
{
	size_t n = strlen(key);

	for (; *s; s++)
		if (*s == *key && !strncmp(s, key, n))
			return s;
	return NULL;
}

/* The number after KEY at or after at; 0 when KEY is missing. strtoull,
 * not sscanf: glibc's sscanf measures its whole input string first, which
 * made this test quadratic in the JSON's size (9 s; minutes under ASan). */
static bool num_after(const char *at, const char *key, unsigned long long *v)
{
	const char *k = at ? find(at, key) : NULL;
	char *end;

	if (!k)
		return false;
	*v = strtoull(k + strlen(key), &end, 10);
	return end != k + strlen(key);
}

static size_t lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The JSON report has every process (1,024 was the cap: 1,022 accepted
 * shown of 1,201), and exact totals. */
TEST(json_keeps_every_process)
{
	struct agg a;
	unsigned long long accepted = 0, opened = 0, v, npids = 0;
	const char *at;
	char *out;

	postgres_books(&a, 9000, 999);
	out = render(format_report_json, &a, &base_run, NULL);
	for (at = out; (at = (char *)find(at, "\n      \"pid\": ")); at++)
		npids++;
	ASSERT_EQ(npids, 10000, "every_process");
	for (at = out; (at = (char *)find(at, "\"totals\": {")); at++) {
		ASSERT_TRUE(num_after(at, "\"connections_opened\": ", &v), "opened_key");
		opened += v;
		ASSERT_TRUE(num_after(at, "\"connections_accepted\": ", &v), "accepted_key");
		accepted += v;
	}
	ASSERT_EQ(accepted, 9000, "accepted_sum");
	ASSERT_EQ(opened, 333 * 6, "opened_sum");
	ASSERT_TRUE(strstr(out, "\"processes\": 10000,\n    \"processes_complete\": true") != NULL,
		    "run_processes");
	at = find(out, "\"process_totals\": {");
	ASSERT_TRUE(num_after(at, "\"connections_accepted\": ", &v) && v == 9000,
		    "totals_accepted");
	free(out);
	agg_free(&a);
}

/* The text report folds: under 200 lines at 10,000 processes, and the
 * group's rows add up to the group's sums. */
TEST(text_folds_and_adds_up)
{
	struct agg a;
	unsigned long long acc[4] = { 0 }, more = 0, grp = 0, all = 0;
	char *out, *g, *line;
	int k = 0;

	postgres_books(&a, 9000, 999);
	out = render(format_report_text, &a, &base_run, NULL);
	if (getenv("PV_DUMP"))
		fputs(out, stderr);
	ASSERT_TRUE(lines(out) < 200, "under_200_lines");
	ASSERT_TRUE(strstr(out, "10,000 processes in 1,001 groups by name and parent") != NULL,
		    "count_said");
	ASSERT_TRUE(sscanf(strstr(out, "all of them"), "all of them opened %*u, accepted %llu",
			   &all) == 1 && all == 9000, "all_accepted");
	g = strstr(out, "\npostgres x9,000 (children of 100 postgres; 8,999 exited during the "
			"run)\n");
	ASSERT_TRUE(g != NULL, "group_line");
	ASSERT_TRUE(sscanf(strstr(g, "connections"), "connections opened %*u (%*f/s), "
			   "accepted %llu", &grp) == 1 && grp == 9000, "group_accepted");
	ASSERT_TRUE(strstr(g, "per process   connections (opened + accepted) min 1, median 1, "
			      "max 1\n") != NULL, "spread");
	line = strstr(g, "  busiest ");
	ASSERT_TRUE(line != NULL, "busiest_header");
	for (line = strchr(line, '\n') + 1; k < 3; k++, line = strchr(line, '\n') + 1)
		ASSERT_TRUE(sscanf(line, "%*s %*u %llu", &acc[k]) == 1, "member_row");
	ASSERT_TRUE(sscanf(line, " 8,997 more %*u %llu", &more) == 1, "folded_row");
	ASSERT_EQ(acc[0] + acc[1] + acc[2] + more, grp, "rows_add_up");
	ASSERT_TRUE(strstr(out, "\nother: ") != NULL, "other_groups_line");
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		ASSERT_TRUE(strlen(line) <= 80, "80_columns");
	free(out);
	agg_free(&a);
}

/* The books learn a child's parent from its fork (CS_EV_FORK), before
 * the child has books (most of a server's children never touch a socket:
 * they get none), and from a joining (CS_EV_PROC). */
static struct cs_event proc_ev(uint8_t type, pid_t pid, uint64_t start_ns, pid_t ptgid)
{
	struct cs_event e = { .type = type, .ts_ns = 5, .ptgid = ptgid };

	e.owner.tgid = pid;
	e.owner.start_ns = start_ns;
	strcpy(e.owner.comm, "postgres");
	return e;
}

static bool gone_all(pid_t pid)
{
	return pid > 0;
}

TEST(books_learn_parent_at_fork)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *p;

	agg_init(&a, 0);
	e = proc_ev(CS_EV_FORK, 1001, 30000000, 100);
	agg_event(&a, &e);
	ASSERT_EQ(a.procs.count, 0, "no_books_at_fork");
	e = proc_ev(CS_EV_FORK, 1002, 30000000, 100);
	agg_event(&a, &e);
	/* The child's first socket event makes its books: the parent is there. */
	e = proc_ev(CS_EV_ADOPT, 1001, 30000000, 0);
	e.sk = 0x1000;
	agg_event(&a, &e);
	p = agg_find_proc(&a, 1001);
	ASSERT_TRUE(p != NULL, "books_made");
	ASSERT_EQ(p->ptgid, 100, "parent_from_fork");
	ASSERT_EQ(a.parents.count, 1, "note_taken");
	/* A reused pid: the newer child's parent, not the older's. */
	e = proc_ev(CS_EV_FORK, 1002, 50000000, 200);
	agg_event(&a, &e);
	e = proc_ev(CS_EV_ADOPT, 1002, 50000000, 0);
	e.sk = 0x2000;
	agg_event(&a, &e);
	ASSERT_EQ(agg_find_proc(&a, 1002)->ptgid, 200, "reused_pid");
	/* A joining (--comm) says its parent too. */
	e = proc_ev(CS_EV_PROC, 1003, 60000000, 300);
	agg_event(&a, &e);
	ASSERT_EQ(agg_find_proc(&a, 1003)->ptgid, 300, "parent_from_join");
	/* Children gone without books: their notes go. */
	e = proc_ev(CS_EV_FORK, 1004, 70000000, 100);
	agg_event(&a, &e);
	ASSERT_EQ(a.parents.count, 1, "one_note");
	/* Found gone at 100, but its events may still be in the ring: kept
	 * until an event from after 100 has been applied. */
	agg_parents_prune(&a, gone_all, 100);
	ASSERT_EQ(a.parents.count, 1, "kept_while_its_events_may_come");
	e = proc_ev(CS_EV_ADOPT, 1004, 70000000, 0);
	e.sk = 0x3000;
	e.ts_ns = 90;
	agg_event(&a, &e);
	ASSERT_EQ(agg_find_proc(&a, 1004)->ptgid, 100, "late_event_finds_parent");
	e = proc_ev(CS_EV_FORK, 1005, 80000000, 100);
	agg_event(&a, &e);
	agg_parents_prune(&a, gone_all, 100);
	e = proc_ev(CS_EV_ADOPT, 1006, 80000000, 0);
	e.sk = 0x4000;
	e.ts_ns = 101;
	agg_event(&a, &e);
	agg_parents_prune(&a, gone_all, 200);
	ASSERT_EQ(a.parents.count, 0, "pruned");
	agg_free(&a);
}

/* Two servers of one name (two PostgreSQL clusters): a group each, told
 * apart by parent, not one "postgres" group of both. */
TEST(groups_by_name_and_parent)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	agg_init(&a, 0);
	for (int s = 0; s < 2; s++) {
		p = agg_proc(&a, 100 + s * 400);
		p->target = true;
		strcpy(p->comm, "postgres");
		for (int i = 0; i < 20 + s * 10; i++) {
			p = agg_proc(&a, 1000 + s * 1000 + i);
			strcpy(p->comm, "postgres");
			p->ptgid = 100 + s * 400;
			p->total.accepted = 1;
			p->exited = true;
		}
	}
	/* A process of that name whose parent nobody told. */
	p = agg_proc(&a, 9000);
	strcpy(p->comm, "postgres");
	p->total.opened = 1;
	out = render(format_report_text, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "\npostgres x20 (children of 100 postgres; 20 exited during the "
				"run)\n") != NULL, "first_server");
	ASSERT_TRUE(strstr(out, "\npostgres x30 (children of 500 postgres; 30 exited during the "
				"run)\n") != NULL, "second_server");
	ASSERT_TRUE(strstr(out, "\nPID 9000 (postgres) child\n") != NULL, "unknown_parent_apart");
	ASSERT_TRUE(strstr(out, "53 processes in 5 groups by name and parent") != NULL,
		    "groups_counted");
	free(out);
	out = render(html_fn, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "postgres x30 (children of 500 postgres; 30 exited)") != NULL,
		    "html_group");
	ASSERT_TRUE(strstr(out, "data-group=\"postgres/500\"") != NULL, "html_key");
	free(out);
	out = render(format_report_json, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "\"ppid\": 500,") != NULL, "json_ppid");
	ASSERT_TRUE(strstr(out, "\"ppid\": null,") != NULL, "json_ppid_unknown");
	free(out);
	agg_free(&a);
}

/* Two programs of one name under one parent (python3 from /usr/bin and a
 * venv's, both run by one shell) are two groups, told apart by their
 * executable; a child gone before it was read ran its parent's when they
 * share a name (a fork), so a server's children stay one group. */
TEST(groups_by_executable)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	agg_init(&a, 0);
	p = agg_proc(&a, 100);
	p->target = true;
	strcpy(p->comm, "sh");
	for (int i = 0; i < 20; i++) {
		p = agg_proc(&a, 1000 + i);
		p->ptgid = 100;
		p->total.opened = 1;
		if (i < 3) {
			strcpy(p->comm, "python3");
			p->exe_id = 11;
			strcpy(p->exe, "python3");
		} else if (i < 5) {
			strcpy(p->comm, "python3");
			p->exe_id = 22;
			strcpy(p->exe, "python3.11");
		} else {
			strcpy(p->comm, "worker");
		}
	}
	/* A server read alive, two children: one read, one gone unread. */
	p = agg_proc(&a, 200);
	p->target = true;
	strcpy(p->comm, "postgres");
	p->exe_id = 33;
	strcpy(p->exe, "postgres");
	for (int i = 0; i < 2; i++) {
		p = agg_proc(&a, 2000 + i);
		strcpy(p->comm, "postgres");
		p->ptgid = 200;
		p->total.accepted = 1;
		if (!i) {
			p->exe_id = 33;
			strcpy(p->exe, "postgres");
		}
	}
	agg_inherit_exe(&a);
	ASSERT_EQ(agg_find_proc(&a, 2001)->exe_id, 33, "inherited_from_parent");
	ASSERT_EQ(agg_find_proc(&a, 1010)->exe_id, 0, "other_name_not_inherited");
	out = render(format_report_text, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "\npython3 x3 (children of 100 sh)\n") != NULL, "first_program");
	ASSERT_TRUE(strstr(out, "\npython3 x2 (children of 100 sh, executable python3.11)\n") !=
			    NULL, "second_program_apart");
	ASSERT_TRUE(strstr(out, "\npostgres x2 (children of 200 postgres)\n") != NULL,
		    "server_children_one_group");
	free(out);
	out = render(html_fn, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "data-group=\"python3/100/python3.11\"") != NULL, "html_key");
	ASSERT_TRUE(strstr(out, "data-group=\"python3/100\"") != NULL, "html_key_same_name");
	free(out);
	agg_free(&a);
}

/* 10,000 short-lived children of one parent: one group row whose sums
 * are its rows' sums, text under 200 lines, HTML under 5 MB. */
TEST(ten_thousand_children_of_one_parent)
{
	struct agg a;
	unsigned long long acc[3], more = 0, grp = 0;
	size_t len;
	char *out, *g, *line;

	postgres_books(&a, 10000, 0);
	out = render(format_report_text, &a, &base_run, NULL);
	ASSERT_TRUE(lines(out) < 200, "under_200_lines");
	g = strstr(out, "\npostgres x10,000 (children of 100 postgres; 9,999 exited during the "
			"run)\n");
	ASSERT_TRUE(g != NULL, "group_line");
	ASSERT_TRUE(sscanf(strstr(g, "connections"), "connections opened %*u (%*f/s), "
			   "accepted %llu", &grp) == 1 && grp == 10000, "group_accepted");
	line = strchr(strstr(g, "  busiest "), '\n') + 1;
	for (int k = 0; k < 3; k++, line = strchr(line, '\n') + 1)
		ASSERT_TRUE(sscanf(line, "%*s %*u %llu", &acc[k]) == 1, "member_row");
	ASSERT_TRUE(sscanf(line, " 9,997 more %*u %llu", &more) == 1, "folded_row");
	ASSERT_EQ(acc[0] + acc[1] + acc[2] + more, grp, "rows_add_up");
	free(out);
	agg_tick(&a, 1000000000ULL);
	out = render(html_fn, &a, &base_run, &len);
	ASSERT_TRUE(len < 5 * 1024 * 1024, "html_under_5mb");
	ASSERT_TRUE(strstr(out, "postgres x10,000 (children of 100 postgres; 9,999 exited)") != NULL,
		    "html_group_row");
	ASSERT_TRUE(strstr(out, "9,997 more postgres (folded)") != NULL, "html_folded_row");
	free(out);
	agg_free(&a);
}

/* Few processes: each in full, as before. */
TEST(few_processes_not_folded)
{
	struct agg a;
	char *out;

	postgres_books(&a, 3, 0);
	out = render(format_report_text, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "\nPID 1002 (postgres) child\n") != NULL, "each_in_full");
	ASSERT_TRUE(strstr(out, " x") == NULL || strstr(out, "postgres x") == NULL, "no_group");
	free(out);
	agg_free(&a);
}

/* HTML at 10,000 processes: under 5 MB (80 MB for 1,201 backends before). */
TEST(html_under_5mb)
{
	struct agg a;
	size_t len;
	char *out;

	postgres_books(&a, 9000, 999);
	agg_tick(&a, 1000000000ULL);
	out = render(html_fn, &a, &base_run, &len);
	ASSERT_TRUE(len < 5 * 1024 * 1024, "under_5mb");
	ASSERT_TRUE(strstr(out, "postgres x9,000") != NULL, "group_row");
	ASSERT_TRUE(strstr(out, "8,997 more postgres (folded)") != NULL, "folded_row");
	ASSERT_TRUE(strstr(out, "the JSON report (-j) has every process") != NULL, "json_named");
	free(out);
	agg_free(&a);
}

/* Fewer requests than connections: reuse 0%, not "-0%" or "-2%". */
TEST(reuse_ratio_in_range)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	ASSERT_TRUE(reuse_ratio(100, 98) == 0, "fewer_requests");
	ASSERT_TRUE(reuse_ratio(100, 200) == 0.5, "half");
	ASSERT_TRUE(reuse_ratio(0, 0) == 0, "none");
	agg_init(&a, 0);
	p = agg_proc(&a, 7);
	p->target = true;
	p->total.opened = 100;
	p->requests = 98;
	out = render(format_report_text, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "reuse 0%") != NULL, "zero");
	ASSERT_TRUE(strstr(out, "reuse -") == NULL, "never_negative");
	free(out);
	agg_free(&a);
}

/* "entered 3295, live 3239, expired 0, ended early 1": the 55 named. */
TEST(time_wait_line_adds_up)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	agg_init(&a, 0);
	p = agg_proc(&a, 7);
	p->target = true;
	p->total.opened = 3295;
	p->total.tw_entered = 3295;
	p->total.tw_killed = 1;
	p->truth.state[CS_TCP_TIME_WAIT] = 3239;
	a.tw_entered_during_dump = 55;
	out = render(format_report_text, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "live 3239, expired 0, ended early 1\n"
				"                55 more: not in the end's socket dump\n") != NULL,
		    "text_names_55");
	free(out);
	/* Ends unseen are a figure of the line (counted per process), not
	 * part of what it leaves unexplained. */
	p->total.tw_end_unseen = 5;
	out = render(format_report_text, &a, &base_run, NULL);
	/* 84 columns on one line: wrapped under the figures. */
	ASSERT_TRUE(strstr(out, "live 3239, expired 0, ended early 1, end\n"
				"                unseen 5\n"
				"                50 more: not in the end's socket dump\n") != NULL,
		    "end_unseen_on_the_line");
	ASSERT_TRUE(strstr(out, "TIME_WAIT entered while a socket dump ran 55") != NULL,
		    "agent_line");
	free(out);
	out = render(html_fn, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "ended early 1, end unseen 5; 50 more: not in the end&#39;s "
				"socket dump") ||
		    strstr(out, "ended early 1, end unseen 5; 50 more: not in the end's socket dump"),
		    "html_names_50");
	free(out);
	agg_free(&a);
}

/* Resets received and sent, both. */
TEST(resets_sent_and_received)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	agg_init(&a, 0);
	p = agg_proc(&a, 7);
	p->target = true;
	p->total.accepted = 20;
	p->total.resets = 2;
	p->total.resets_sent = 18;
	out = render(format_report_text, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "connect failed 0, resets received 2, sent 18\n") != NULL, "text");
	free(out);
	out = render(format_report_json, &a, &base_run, NULL);
	ASSERT_TRUE(strstr(out, "\"resets_sent\": 18") != NULL, "json");
	free(out);
	agg_free(&a);
}

static void live_fn(FILE *f, const struct agg *a, const struct run_info *run)
{
	format_live_rows(f, a, "12:00:01", NULL);
}

/* The live table: a row for each of 1,207 processes every interval (2,529
 * lines for a 3-second pgbench run) is now the 15 busiest and a row of
 * sums, whose columns add up to the interval's. */
TEST(live_rows_fold)
{
	struct agg a;
	unsigned long long acc, sum = 0, more = 0;
	char *out, *line, *save = NULL;
	size_t n = 0;

	postgres_books(&a, 1200, 6);
	agg_tick(&a, 1000000000ULL);
	out = render(live_fn, &a, &base_run, NULL);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		/* The " exited" mark alone goes past the header's 80 columns. */
		ASSERT_TRUE(strlen(line) <= 80 || strstr(line, " exited"), "80_columns");
		if (sscanf(line, "12:00:01 +%*u more %*u %llu", &acc) == 1)
			more++, sum += acc;
		else if (sscanf(line, "12:00:01 %*d %*s %*u %llu", &acc) == 1)
			sum += acc;
	}
	ASSERT_EQ(n, 16, "rows");
	ASSERT_EQ(more, 1, "sum_row");
	ASSERT_EQ(sum, 1200, "columns_add_up");
	free(out);
	agg_free(&a);
}

UNIT_MAIN()
