// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Formatters are pure functions of their input: exact output checks. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "report.h"
#include "summary.h"
#include "json.h"
#include "report_tw.h"
#include "report_cgroup.h"
#include "prom.h"

static char *render(void (*fn)(FILE *, const void *), const void *arg)
{
	/* static: gcc's dangling-pointer analysis misreads open_memstream */
	static char *buf;
	static size_t len;
	FILE *f;

	buf = NULL;
	f = open_memstream(&buf, &len);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void ss_fn(FILE *f, const void *arg)
{
	format_ss_summary(f, arg);
}

/* Numbers from a real /proc/net/sockstat, and what `ss -s` printed for it. */
TEST(ss_summary_matches_ss)
{
	struct sockstat st = { .sockets_used = 9, .tcp_inuse = 1, .tcp_tw = 1, .tcp_alloc = 1,
			       .curr_estab = 0, .udp_inuse = 2, .udp6_inuse = 1, .raw6_inuse = 3,
			       .frag_inuse = 4 };
	char *out = render(ss_fn, &st);

	ASSERT_STREQ(out,
		     "Total: 9\n"
		     "TCP:   2 (estab 0, closed 1, orphaned 0, timewait 1)\n"
		     "\n"
		     "Transport Total     IP        IPv6\n"
		     "RAW\t  3         0         3        \n"
		     "UDP\t  3         2         1        \n"
		     "TCP\t  1         1         0        \n"
		     "INET\t  7         3         4        \n"
		     "FRAG\t  4         4         0        \n"
		     "\n", "ss_block");
	free(out);
}

static struct summary sample_summary(void)
{
	static struct summary_proc procs[1];
	struct summary s = { .st = { .sockets_used = 5, .tcp_inuse = 3, .tcp_alloc = 3,
				     .curr_estab = 2 } };

	memset(procs, 0, sizeof(procs));
	procs[0].pid = 4242;
	strcpy(procs[0].comm, "nginx");
	procs[0].state[CS_TCP_ESTABLISHED] = 2;
	procs[0].state[CS_TCP_LISTEN] = 1;
	procs[0].total = 3;
	s.procs = procs;
	s.nprocs = 1;
	s.unattributed.state[CS_TCP_TIME_WAIT] = 7;
	s.unattributed.state[CS_TCP_FIN_WAIT2] = 1;
	s.unattributed.orphan = 1;
	s.unattributed.total = 8;
	return s;
}

static void sum_text_fn(FILE *f, const void *arg)
{
	format_summary_text(f, arg, true);
}

TEST(summary_table)
{
	struct summary s = sample_summary();
	char *out = render(sum_text_fn, &s), *table = strstr(out, "TCP sockets by process");

	ASSERT_TRUE(table != NULL, "table_present");
	ASSERT_STREQ(table,
		     "TCP sockets by process and state (sock_diag + /proc/PID/fd)\n"
		     "PID     COMM         ESTB SYNS SYNR FIN1 FIN2 TIMW CLOS CLSW LACK LSTN CLSG ORPH\n"
		     "4242    nginx           2    0    0    0    0    0    0    0    0    1    0    0\n"
		     "-       unattributed    0    0    0    0    1    7    0    0    0    0    0    1\n"
		     "unattributed: 8 sockets have no owning file (TIME_WAIT, orphaned,\n"
		     "  not yet accepted) or an owner not visible from here; `connscope\n"
		     "  attach` during the workload charges them to processes\n", "table");
	free(out);
}

static void sum_json_fn(FILE *f, const void *arg);

static void sum_prom_fn(FILE *f, const void *arg)
{
	format_prom_summary(f, arg);
}

/* summary --prom labels a process's series with its container and pod, as
 * the exporter's are, and leaves the labels out where there is none. */
TEST(summary_prom_container_labels)
{
	struct summary s = sample_summary();
	struct summary_proc procs[2];
	char *out;

	procs[0] = s.procs[0];
	strcpy(procs[0].container, "web");
	strcpy(procs[0].pod_uid, "0b2c0d4e-1f2a-4b3c-8d9e-0f1a2b3c4d5e");
	procs[1] = s.procs[0];
	procs[1].pid = 77;
	s.procs = procs;
	s.nprocs = 2;
	out = render(sum_prom_fn, &s);
	ASSERT_TRUE(strstr(out, "\nconnscope_process_tcp_sockets{pid=\"4242\",comm=\"nginx\","
				"container=\"web\",pod_uid=\"0b2c0d4e-1f2a-4b3c-8d9e-0f1a2b3c4d5e\","
				"state=\"established\"} 2\n") != NULL, "labelled");
	ASSERT_TRUE(strstr(out, "\nconnscope_process_tcp_sockets{pid=\"77\",comm=\"nginx\","
				"state=\"listen\"} 1\n") != NULL, "none_where_none");
	free(out);
	out = render(sum_json_fn, &s);
	ASSERT_TRUE(strstr(out, "\"container\": \"web\",\n") != NULL, "json_container");
	ASSERT_TRUE(strstr(out, "\"container\": null,\n") != NULL, "json_none");
	free(out);
}

static void sum_json_fn(FILE *f, const void *arg)
{
	format_summary_json(f, arg);
}

TEST(summary_json_keys)
{
	struct summary s = sample_summary();
	char *out = render(sum_json_fn, &s);

	ASSERT_TRUE(strstr(out, "\"summary\": {\n    \"total\": 5,") != NULL, "summary_total");
	ASSERT_TRUE(strstr(out, "\"estab\": 2") != NULL, "estab");
	ASSERT_TRUE(strstr(out, "\"name\": \"INET\"") != NULL, "transport");
	ASSERT_TRUE(strstr(out, "\"pid\": 4242") != NULL, "pid");
	ASSERT_TRUE(strstr(out, "\"established\": 2") != NULL, "established");
	ASSERT_TRUE(strstr(out, "\"time_wait\": 7") != NULL, "unattributed_tw");
	ASSERT_TRUE(strstr(out, "\"orphan\": 1") != NULL, "orphan");
	free(out);
}

static void live_fn(FILE *f, const void *arg)
{
	format_live_header(f);
	format_live_rows(f, arg, "12:00:01", NULL);
}

TEST(live_rows_fit_80_columns)
{
	struct agg a;
	struct proc_books *p;
	char *out, *line;

	agg_init(&a, 0);
	p = agg_proc(&a, 4194304);
	p->target = true;
	strcpy(p->comm, "averyveryverylongname");
	p->total.opened = 123456;
	p->total.tw_entered = 99999;
	p->truth.state[CS_TCP_ESTABLISHED] = 654321;
	p->truth.state[CS_TCP_TIME_WAIT] = 28000;
	agg_tick(&a, 1000000000ULL);
	out = render(live_fn, &a);
	ASSERT_STREQ(out,
		     "TIME     PID     COMM          OPEN  ACPT CLOSE   TW+  ESTAB  TIMEW  ORPH   FDS\n"
		     "12:00:01 4194304 averyveryver 123456     0     0 99999 654321  28000     0     -\n",
		     "live");
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		ASSERT_TRUE(strlen(line) <= 80, "width");
	free(out);
	agg_free(&a);
}

static void report_json_fn(FILE *f, const void *arg)
{
	struct run_info run = { .hook = "tp_btf/inet_sock_set_state", .interval_s = 1,
				.elapsed_s = 2, .end_reason = "duration" };

	run.stats[CS_STAT_RB_LOST] = 3;
	format_report_json(f, arg, &run);
}

TEST(report_json_has_totals_and_lost)
{
	struct agg a;
	struct proc_books *p;
	char *out;

	agg_init(&a, 0);
	p = agg_proc(&a, 7);
	p->target = true;
	p->total.opened = 5;
	p->total.tw_entered = 4;
	agg_tick(&a, 1000000000ULL);
	out = render(report_json_fn, &a);
	ASSERT_TRUE(strstr(out, "\"connections_opened\": 5") != NULL, "opened");
	ASSERT_TRUE(strstr(out, "\"time_wait_entered\": 4") != NULL, "tw_entered");
	ASSERT_TRUE(strstr(out, "\"events_lost\": 3") != NULL, "lost_shown");
	ASSERT_TRUE(strstr(out, "\"intervals\": [") != NULL, "intervals");
	free(out);
	agg_free(&a);
}

static void report_text_fexit_fn(FILE *f, const void *arg)
{
	struct run_info run = { .hook = "tp_btf/inet_sock_set_state", .interval_s = 1,
				.elapsed_s = 2, .end_reason = "duration",
				.accept_hook = "fexit/inet_csk_accept" };

	format_report_text(f, arg, &run);
}

/* Before 6.3 (Debian 12's 6.1) the text report names the accept hook, as
 * the JSON and the HTML footer do: where fexit loads, no syscall
 * tracepoint runs for the machine. */
TEST(report_text_names_the_accept_hook)
{
	struct agg a;
	char *out;

	agg_init(&a, 0);
	agg_proc(&a, 7)->target = true;
	agg_tick(&a, 1000000000ULL);
	out = render(report_text_fexit_fn, &a);
	ASSERT_TRUE(strstr(out, "\nhook: tp_btf/inet_sock_set_state\naccept: "
				"fexit/inet_csk_accept\n") != NULL, "accept_line");
	free(out);
	agg_free(&a);
}

static void tw_json_fn(FILE *f, const void *arg)
{
	struct json j;

	json_init(&j, f, false);
	json_object_begin(&j);
	json_tw(&j, arg, 1);
	json_object_end(&j);
	json_finish(&j);
}

/* Top-N endpoints: the rest folded into "other", in the table and the map. */
TEST(time_wait_endpoints_top_n_and_other)
{
	struct agg a;
	struct proc_books *p;
	struct endpoint_key k1 = { .family = 2, .side = EP_REMOTE, .port = 80, .addr = { 127, 0, 0, 1 } };
	struct endpoint_key k2 = k1, k3 = k1;
	struct endpoint_stats *es;
	char *out;

	k2.port = 81;
	k3.side = EP_LISTEN, k3.port = 8080, memset(k3.addr, 0, 16);
	agg_init(&a, 0);
	p = agg_proc(&a, 9);
	p->target = true;
	es = hmap_upsert(&p->endpoints, &k1, NULL), es->tw_entered = 7, es->tw_live = 7;
	es = hmap_upsert(&p->endpoints, &k2, NULL), es->tw_entered = 3, es->tw_live = 2;
	es = hmap_upsert(&p->endpoints, &k3, NULL), es->tw_entered = 2, es->tw_live = 1;
	agg_tick(&a, 1000000000ULL);
	out = render(tw_json_fn, p);
	ASSERT_TRUE(strstr(out, "\"time_wait_endpoints\":[{\"endpoint\":\"127.0.0.1:80\",\"side\":"
				"\"remote\",\"entered\":7,\"live\":7},{\"endpoint\":\"other\",\"side\":"
				"\"other\",\"entered\":5,\"live\":3}]") != NULL, "table_top1_other");
	ASSERT_TRUE(strstr(out, "\"rows\":[\"127.0.0.1:80\",\"other\"]") != NULL, "heatmap_top1_other");
	ASSERT_TRUE(strstr(out, "\"cells\":[[7],[3]]") != NULL, "other_cells_sum");
	free(out);
	agg_free(&a);
}

static const char *cg_path;

static void cgroup_text_fn(FILE *f, const void *arg)
{
	format_cgroup_text(f, cg_path, arg);
}

static void cgroup_json_fn(FILE *f, const void *arg)
{
	struct json j;

	json_init(&j, f, false);
	json_object_begin(&j);
	json_cgroup(&j, cg_path, arg);
	json_object_end(&j);
	json_finish(&j);
}

/* --cgroup's fate in the reports: nothing said when nothing happened; a
 * restart followed, then a removal with none made again; no --cgroup. */
TEST(cgroup_removed_and_recreated)
{
	struct cgroup_facts none = {}, gone = { .removed = true, .removed_s = 4.25 },
			    both = { .removed = true, .removed_s = 9.5, .recreated = 2,
				     .recreated_s = 7.125 },
			    back = { .recreated = 1, .recreated_s = 3 };
	char *out;

	cg_path = "/sys/fs/cgroup/a.service";
	out = render(cgroup_text_fn, &none);
	ASSERT_STREQ(out, "", "text_none");
	free(out);
	out = render(cgroup_json_fn, &none);
	ASSERT_STREQ(out, "{\"cgroup\":\"/sys/fs/cgroup/a.service\",\"cgroup_removed_s\":null,"
			  "\"cgroup_recreated\":0,\"cgroup_recreated_s\":null}\n", "json_none");
	free(out);
	out = render(cgroup_text_fn, &gone);
	ASSERT_STREQ(out, "cgroup /sys/fs/cgroup/a.service removed 4.2 s into the run: no "
			  "process joined through it after that\n", "text_removed");
	free(out);
	out = render(cgroup_text_fn, &both);
	ASSERT_STREQ(out, "cgroup /sys/fs/cgroup/a.service re-created 2 times (the last 7.1 s "
			  "into the run): the new one followed each time\ncgroup "
			  "/sys/fs/cgroup/a.service removed 9.5 s into the run: no process joined "
			  "through it after that\n", "text_recreated_then_removed");
	free(out);
	out = render(cgroup_json_fn, &both);
	ASSERT_STREQ(out, "{\"cgroup\":\"/sys/fs/cgroup/a.service\",\"cgroup_removed_s\":9.500,"
			  "\"cgroup_recreated\":2,\"cgroup_recreated_s\":7.125}\n",
		     "json_recreated_then_removed");
	free(out);
	out = render(cgroup_json_fn, &back);
	ASSERT_STREQ(out, "{\"cgroup\":\"/sys/fs/cgroup/a.service\",\"cgroup_removed_s\":null,"
			  "\"cgroup_recreated\":1,\"cgroup_recreated_s\":3.000}\n",
		     "json_recreated_there");
	free(out);
	cg_path = NULL;
	out = render(cgroup_text_fn, &both);
	ASSERT_STREQ(out, "", "text_no_cgroup");
	free(out);
	out = render(cgroup_json_fn, &both);
	ASSERT_STREQ(out, "{\"cgroup\":null,\"cgroup_removed_s\":null,\"cgroup_recreated\":0,"
			  "\"cgroup_recreated_s\":null}\n", "json_no_cgroup");
	free(out);
}

UNIT_MAIN()

/* The reports name where their "sockets now" came from: the census walk,
 * the sock_diag dump, or the walk with the dump's share of the reads. */
TEST(census_source_named_by_reads)
{
	struct run_info run = {};
	char buf[128];

	ASSERT_STREQ(run_census_source(&run, buf, sizeof(buf)), "sock_diag", "dumps_only");
	ASSERT_STREQ(run_census_short(&run), "sock_diag", "dumps_only_short");
	run.census_walked = 28;
	ASSERT_STREQ(run_census_source(&run, buf, sizeof(buf)),
		      "the iter/tcp walk of the kernel's socket tables", "walks_only");
	ASSERT_STREQ(run_census_short(&run), "iter/tcp", "walks_only_short");
	run.census_dumped = 2;
	ASSERT_STREQ(run_census_source(&run, buf, sizeof(buf)),
		      "the iter/tcp walk of the kernel's socket tables (sock_diag for 2 of 30 reads)",
		      "both");
	ASSERT_STREQ(run_census_short(&run), "iter/tcp + sock_diag", "both_short");
}

/* The limits heading names the longest census source within 80 columns
 * (57_live_tty read 84 once it named "iter/tcp + sock_diag"). */
TEST(limits_heading_fits_80_columns)
{
	struct run_info run = { .census_walked = 1, .census_dumped = 1 };
	struct limits_view v = { .valid = true, .warn_share = 0.8 };
	char *out = NULL, *line;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ASSERT_TRUE(f != NULL, "memstream");
	format_limits_text(f, &v, run_census_short(&run));
	fclose(f);
	ASSERT_TRUE(strstr(out, "iter/tcp + sock_diag") != NULL, "source_named");
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		ASSERT_TRUE(strlen(line) <= 80, "width");
	free(out);
}
