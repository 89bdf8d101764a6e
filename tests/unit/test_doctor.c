// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The doctor's rules as pure functions of struct dr_facts: each case is a
 * snapshot of the books and the findings it must give (rule, severity,
 * pid, endpoint and an evidence number), including the cases just under a
 * threshold that must give nothing. Plus the books side: failure kinds
 * from recorded events, listen-queue samples, netstat parsing. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "unit.h"
#include "tcp_books.h"
#include "agentcost.h"
#include "doctor.h"
#include "doctor_books.h"
#include "netstat.h"
#include "inode_owners.h"

#define PID 100

/* One process with one endpoint, the rest zero; cases change fields. */
struct rcase {
	const char *name;
	void (*setup)(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e);
	const char *rule;	/* NULL: no finding at all */
	const char *severity;
	const char *ev_name;	/* an evidence number to check, or NULL */
	double ev_value;
};

static void base(struct dr_facts *f, struct dr_proc *p)
{
	memset(f, 0, sizeof(*f));
	memset(p, 0, sizeof(*p));
	f->window_s = 10;
	f->procs = p;
	f->nprocs = 1;
	f->lim_known = true;
	f->lim = (struct netlimits){ .port_lo = 32768, .port_hi = 60999, .max_tw_buckets = 262144,
				     .max_orphans = 65536, .tw_reuse = 2, .fin_timeout_s = 60 };
	p->pid = PID;
	strcpy(p->comm, "client");
	p->target = true;
	p->fd_limit = UINT64_MAX;
	p->fd_seconds_to_limit = -1;
	p->neps = 1;
	strcpy(p->eps[0].label, "127.0.0.1:8080");
}

/* ---- churn ---- */
static void churn(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	e->opened = 602, e->requests = 800, e->live_peak = 8;
}
static void churn_pool_sized(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	e->opened = 8, e->requests = 800, e->live_peak = 8;
}
static void churn_at_3x(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	e->opened = 24, e->requests = 30, e->live_peak = 8;	/* = 3x: not above */
}
/* pgbench -C: ~10 turns a transaction, a connection each, 4 clients. */
static void churn_pgbench(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	e->opened = 1201, e->requests = 12010, e->live_peak = 4;	/* 10.0 a connection */
}
/* A pool recycled every 25 requests: 4 % of round trips are handshakes. */
static void churn_cheap(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	e->opened = 400, e->requests = 10000, e->live_peak = 8;
}
static void churn_refused(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	e->opened = 20, e->refused = 20, e->live_peak = 1;	/* no requests */
}
/* ---- TIME_WAIT ---- */
static void tw_client(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	p->tw_peak = 1500, p->tw_entered = 1500, p->closed_active = 1500;
	e->tw_entered = 1500, e->opened = 1500, e->requests = 100000, e->live_peak = 1000;
	e->ports_known = true, e->ports_peak = 1500, e->port_share_peak = 1500.0 / 28232;
	f->window_s = 100;	/* 15/s: 900 ports in 60 s, never runs out */
}
static void tw_under(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	tw_client(f, p, e);
	p->tw_peak = 999;
	e->ports_peak = 999, e->port_share_peak = 999.0 / 28232;
}
static void tw_exhaust(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	tw_client(f, p, e);
	f->window_s = 3;	/* 500/s: 30000 ports a minute > 28232 */
}
/* The same rate, but the kernel reused TIME_WAIT ports for the connects
 * (tcp_tw_reuse = 2 on loopback, TcpExt TWRecycled rose) and none failed. */
static struct netstat_ns reused_ns;
static void tw_exhaust_reused(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	tw_exhaust(f, p, e);
	reused_ns = (struct netstat_ns){ .pid = PID, .valid = true, .tw_recycled_first = 100,
					 .tw_recycled_last = 25100 };
	f->ns = &reused_ns, f->nns = 1;
}
static void tw_exhaust_reused_but_failed(struct dr_facts *f, struct dr_proc *p,
					 struct dr_endpoint *e)
{
	tw_exhaust_reused(f, p, e);
	e->failed_other = 3;
}
static void tw_exhaust_reuse_off(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	tw_exhaust_reused(f, p, e);
	f->lim.tw_reuse = 0;
}
static void tw_exhaust_reuse_not_here(struct dr_facts *f, struct dr_proc *p,
				      struct dr_endpoint *e)
{
	tw_exhaust_reused(f, p, e);
	strcpy(e->label, "10.0.0.5:8080");	/* tcp_tw_reuse = 2: loopback only */
}
/* A dual-stack socket (Java's) to 127.0.0.1: the kernel's tcp_tw_reuse = 2
 * takes v4-mapped loopback as loopback (tcp_twsk_unique). */
static void tw_exhaust_reused_v4mapped(struct dr_facts *f, struct dr_proc *p,
				       struct dr_endpoint *e)
{
	tw_exhaust_reused(f, p, e);
	strcpy(e->label, "[::ffff:127.0.0.1]:8080");
}
static void tw_narrow_range(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	tw_client(f, p, e);
	f->lim.port_lo = 40000, f->lim.port_hi = 41999;
	p->tw_peak = 1200, e->ports_peak = 1200, e->port_share_peak = 0.6;
}
static void tw_server(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	strcpy(e->label, "listen 127.0.0.1:8080");
	e->listen = true;
	p->tw_peak = 1200, p->tw_entered = 1200, p->closed_active = 1200;
	e->tw_entered = 1200, e->accepted = 1200, e->requests = 1200, e->tw_peak = 1200;
}
static void tw_server_fast(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	tw_server(f, p, e);
	f->window_s = 1;	/* 1200/s: a client would run out; a server holds no ports */
}
/* ---- fds ---- */
static void leak(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	p->fd_known = true, p->fd_start = 10, p->fd_now = p->fd_peak = 90;
	p->fd_mid = 50, p->fd_listings = 10;	/* steady: half its growth by half way */
	p->fd_span_s = 10;
	p->fd_limit = 1024, p->fd_slope = 8, p->fd_seconds_to_limit = (1024 - 90) / 8.0;
	p->leak_old = 60, p->leak_age_s = 1;
	p->fd_sites = true;
	strcpy(p->leak_site, "leak_sockets (leakfix.c:42)");
}
/* The same growth seen in /proc listings alone (no --fd-sites): no site to
 * name, so the finding asks for them. */
static void leak_no_sites(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	leak(f, p, e);
	p->fd_sites = false, p->leak_old = 0, p->leak_site[0] = 0;
}
static void leak_slow(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	leak(f, p, e);
	p->fd_limit = 1000000, p->fd_slope = 0.6, p->fd_seconds_to_limit = 1e6;
}
/* A Node client under `connscope run` (97_clients under load): listed
 * just after its exec (7 fds), then with its runtime's fds and 8 sockets
 * in flight (33, 30, 30) on a 1.5 s run: a steep fit, 23 more fds, but
 * none of it in the second half. */
static void startup_ramp(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	leak_no_sites(f, p, e);
	p->fd_start = 7, p->fd_mid = 33, p->fd_now = 30, p->fd_peak = 33, p->fd_listings = 5;
	p->fd_limit = 20000, p->fd_slope = 22, p->fd_seconds_to_limit = (20000 - 30) / 22.0;
}
/* A Node client living 1.2 s (97_clients node_late under load): 8 fds
 * just after its exec, 8, then 30 and 33: its start-up fills half the
 * listings, whose half-way count is still the start's. */
static void short_life(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	leak_no_sites(f, p, e);
	p->fd_start = 8, p->fd_mid = 8, p->fd_now = p->fd_peak = 33, p->fd_listings = 4;
	p->fd_span_s = 0.9, p->fd_slope = 42;
}
/* Two listings cannot tell a ramp from a leak. */
static void two_listings(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	leak_no_sites(f, p, e);
	p->fd_mid = p->fd_start, p->fd_listings = 2;
}
/* Growth that slowed but goes on (a quarter of it in the second half). */
static void leak_slowing(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	leak_no_sites(f, p, e);
	p->fd_mid = 70;
}
static void churn_fds(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	p->fd_known = true, p->fd_start = 10, p->fd_now = 10, p->fd_peak = 400;
	p->fd_limit = 1024, p->fd_slope = 0;
}
static void fd_near(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	p->fd_known = true, p->fd_start = p->fd_now = 800, p->fd_peak = 820, p->fd_limit = 1024;
}
static void fd_emfile(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	p->fd_known = true, p->fd_start = 5, p->fd_now = p->fd_peak = 64, p->fd_limit = 64;
	p->fderr_known = true, p->emfile = 11;
}
/* ---- failures ---- */
static void refused(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	e->opened = 20, e->refused = 20;
}
static void few_refused(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	e->opened = 1000, e->requests = 1000, e->live_peak = 1000, e->refused = 4;
}
static void timeouts(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	e->opened = 1000, e->requests = 5000, e->live_peak = 1000, e->timeouts = 30;
}
static void rst_sent(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	strcpy(e->label, "listen 127.0.0.1:8080");
	e->listen = true, e->accepted = 20, e->resets_sent = 20;
}
/* ---- backlog, orphans, cost ---- */
static struct listen_sample full_listener = { .pid = PID, .family = 2, .port = 8080,
					      .backlog = 4, .queue_peak = 5, .samples = 6,
					      .samples_full = 5 };
static struct listen_sample calm_listener = { .pid = PID, .family = 2, .port = 8080,
					      .backlog = 4096, .queue_peak = 3, .samples = 6 };
static struct netstat_ns ns_ovf = { .ns_ino = 1, .pid = PID, .valid = true,
				    .overflows_first = 100, .overflows_last = 145,
				    .drops_first = 100, .drops_last = 145 };
static void backlog_full(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	f->listeners = &full_listener, f->nlisteners = 1, f->ns = &ns_ovf, f->nns = 1;
}
static void backlog_calm(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	/* Overflows elsewhere in the namespace, this queue never near full. */
	f->listeners = &calm_listener, f->nlisteners = 1, f->ns = &ns_ovf, f->nns = 1;
}
/* Handshakes that ended in the accept queue: a slow acceptor, even with
 * no queue sample near full; a few among many accepts are not. */
static void never_accepted(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	p->accepted = 500;
	p->never_accepted = 40;
}
static void never_accepted_few(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	p->accepted = 5000;
	p->never_accepted = 12;
}
static void orphans(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	p->orphan_peak = 70, p->orphan_now = 70, p->orphaned = 70;
}
static void orphans_passing(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	/* Every active close passes through an orphan state: normal. */
	p->orphaned = 50000, p->orphan_peak = 3;
}
static void cost(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	f->cost = (struct agent_cost){ .valid = true, .bpf_s = 0.45, .bpf_runs = 620000,
				       .agent_cpu_s = 0.02, .targets_cpu_s = 1.5,
				       .window_s = 10, .stats_s = 10, .every = 1 };
}
/* The same rate measured in 1 s of 10 (--cost-every 10): the same share. */
static void cost_sampled(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	f->cost = (struct agent_cost){ .valid = true, .bpf_s = 0.045, .bpf_runs = 62000,
				       .agent_cpu_s = 0.02, .targets_cpu_s = 1.5,
				       .window_s = 10, .stats_s = 1, .every = 10 };
}
static void cost_small(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	f->cost = (struct agent_cost){ .valid = true, .bpf_s = 0.07, .targets_cpu_s = 1.5,
				       .window_s = 10, .stats_s = 10, .every = 1 };
}
/* 10 %: a cost to show (a footer), not one that changes a verdict. */
static void cost_footer(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	f->cost = (struct agent_cost){ .valid = true, .bpf_s = 0.15, .targets_cpu_s = 1.5,
				       .window_s = 10, .stats_s = 10, .every = 1 };
}
static void cost_idle(struct dr_facts *f, struct dr_proc *p, struct dr_endpoint *e)
{
	/* 50 %, but of too little CPU to mean anything */
	f->cost = (struct agent_cost){ .valid = true, .bpf_s = 0.45, .targets_cpu_s = 0.9,
				       .window_s = 10, .stats_s = 10, .every = 1 };
}

static const struct rcase cases[] = {
	{ "churn", churn, "churn", "warning", "right_sized_pool_would_open", 8 },
	{ "churn_pool_sized_to_concurrency", churn_pool_sized, NULL, NULL, NULL, 0 },
	{ "churn_exactly_3x_is_not", churn_at_3x, NULL, NULL, NULL, 0 },
	{ "churn_judged_by_cost_not_by_a_hair", churn_pgbench, "churn", "warning",
	  "connections_per_slot", 1201 / 4.0 },
	{ "churn_of_few_handshakes_is_not", churn_cheap, NULL, NULL, NULL, 0 },
	{ "refused_connects_are_not_churn", churn_refused, "connect_failures", "critical",
	  "refused", 20 },
	{ "tw_client_names_client", tw_client, "time_wait", "warning", "time_wait_peak", 1500 },
	{ "tw_under_threshold", tw_under, NULL, NULL, NULL, 0 },
	{ "tw_rate_exhausts_ports", tw_exhaust, "port_exhaustion", "critical",
	  "seconds_to_exhaustion", (28232 - 1500) / 500.0 },
	{ "tw_reused_no_failure_is_no_exhaustion", tw_exhaust_reused, "port_exhaustion", "warning",
	  "time_wait_reused", 25000 },
	{ "tw_reused_but_connects_failed", tw_exhaust_reused_but_failed, "port_exhaustion",
	  "critical", "seconds_to_exhaustion", (28232 - 1500) / 500.0 },
	{ "tw_reuse_off", tw_exhaust_reuse_off, "port_exhaustion", "critical",
	  "seconds_to_exhaustion", (28232 - 1500) / 500.0 },
	{ "tw_reused_v4mapped_loopback", tw_exhaust_reused_v4mapped, "port_exhaustion", "warning",
	  "time_wait_reused", 25000 },
	{ "tw_reuse_2_not_on_loopback", tw_exhaust_reuse_not_here, "port_exhaustion", "critical",
	  "seconds_to_exhaustion", (28232 - 1500) / 500.0 },
	{ "tw_narrow_range", tw_narrow_range, "port_exhaustion", "critical", "ephemeral_ports",
	  2000 },
	{ "tw_on_server", tw_server, "time_wait", "warning", "time_wait_entered", 1200 },
	{ "tw_on_server_is_never_ports", tw_server_fast, "time_wait", "warning",
	  "time_wait_peak", 1200 },
	{ "fd_leak_near_limit", leak, "fd_leak", "critical", "old_fds_at_top_site", 60 },
	{ "fd_leak_without_sites_asks_for_them", leak_no_sites, "fd_leak", "critical", "fds_now", 90 },
	{ "fd_leak_far_from_limit", leak_slow, "fd_leak", "warning", "fds_now", 90 },
	{ "fd_churn_is_no_leak", churn_fds, NULL, NULL, NULL, 0 },
	{ "fd_start_up_ramp_is_no_leak", startup_ramp, NULL, NULL, NULL, 0 },
	{ "fd_two_listings_are_no_leak", two_listings, NULL, NULL, NULL, 0 },
	{ "fd_short_life_is_no_leak", short_life, NULL, NULL, NULL, 0 },
	{ "fd_leak_slowing_still_leaks", leak_slowing, "fd_leak", "critical", "fds_now", 90 },
	{ "fd_limit_near", fd_near, "fd_limit", "warning", "fds_peak", 820 },
	{ "fd_limit_emfile", fd_emfile, "fd_limit", "critical", "emfile", 11 },
	{ "refused", refused, "connect_failures", "critical", "refused", 20 },
	{ "few_refused_under_min", few_refused, NULL, NULL, NULL, 0 },
	{ "timeouts", timeouts, "connect_failures", "warning", "timed_out", 30 },
	{ "resets_sent", rst_sent, "resets", "critical", "resets_sent", 20 },
	{ "backlog_full", backlog_full, "listen_backlog", "critical", "listen_overflows", 45 },
	{ "backlog_calm_despite_ns_overflows", backlog_calm, NULL, NULL, NULL, 0 },
	{ "never_accepted", never_accepted, "listen_backlog", "warning", "never_accepted", 40 },
	{ "never_accepted_few", never_accepted_few, NULL, NULL, NULL, 0 },
	{ "orphans", orphans, "orphans", "warning", "orphans_peak", 70 },
	{ "orphans_passing_through", orphans_passing, NULL, NULL, NULL, 0 },
	{ "agent_cost", cost, "agent_cost", "warning", "bpf_run_time_s", 0.45 },
	{ "agent_cost_sampled", cost_sampled, "agent_cost", "warning", "bpf_run_time_s", 0.045 },
	{ "agent_cost_under_distortion_is_a_footer", cost_footer, NULL, NULL, NULL, 0 },
	{ "agent_cost_small", cost_small, NULL, NULL, NULL, 0 },
	{ "agent_cost_idle_target", cost_idle, NULL, NULL, NULL, 0 },
};

static const struct dr_evidence *ev_of(const struct finding *f, const char *name)
{
	for (int i = 0; i < f->nev; i++)
		if (!strcmp(f->ev[i].name, name))
			return &f->ev[i];
	return NULL;
}

TEST(rules_table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rcase *c = &cases[i];
		struct finding out[DR_MAX_FINDINGS];
		struct dr_facts f;
		struct dr_proc p;
		char label[128];
		size_t n;

		base(&f, &p);
		c->setup(&f, &p, &p.eps[0]);
		n = doctor_rules(&f, out, DR_MAX_FINDINGS);
		snprintf(label, sizeof(label), "%s/count", c->name);
		if (!c->rule) {
			ASSERT_EQ(n, 0, label);
			continue;
		}
		ASSERT_TRUE(n >= 1, label);
		snprintf(label, sizeof(label), "%s/rule", c->name);
		ASSERT_STREQ(out[0].rule, c->rule, label);
		snprintf(label, sizeof(label), "%s/severity", c->name);
		ASSERT_STREQ(dr_severity_name(out[0].severity), c->severity, label);
		snprintf(label, sizeof(label), "%s/verdict_and_fix", c->name);
		ASSERT_TRUE(out[0].verdict[0] && out[0].fix[0], label);
		if (strcmp(c->rule, "agent_cost")) {
			snprintf(label, sizeof(label), "%s/pid", c->name);
			ASSERT_EQ(out[0].pid, PID, label);
		}
		snprintf(label, sizeof(label), "%s/evidence_%s", c->name, c->ev_name);
		ASSERT_TRUE(ev_of(&out[0], c->ev_name) &&
			    fabs(ev_of(&out[0], c->ev_name)->value - c->ev_value) < 1e-9, label);
		snprintf(label, sizeof(label), "%s/every_number_has_a_source", c->name);
		for (int k = 0; k < out[0].nev; k++)
			ASSERT_TRUE(out[0].ev[k].source && out[0].ev[k].source[0], label);
	}
}

TEST(churn_text_is_attachs_sentence)
{
	struct finding out[4];
	struct dr_facts f;
	struct dr_proc p;

	base(&f, &p);
	churn(&f, &p, &p.eps[0]);
	ASSERT_EQ(doctor_rules(&f, out, 4), 1, "one");
	ASSERT_STREQ(out[0].verdict, "pool to 127.0.0.1:8080 churns: 602 connections for 800 "
		     "requests at concurrency 8; a pool that keeps >= 8 idle connections would "
		     "open 8", "text");
	/* A client of unknown software gets the generic fix alone
	 * (test_software has each software's words). */
	ASSERT_TRUE(strstr(out[0].fix, "keep at least 8 idle connections") == out[0].fix, "generic");
}

TEST(tw_fix_names_settings_and_tw_reuse_conditions)
{
	struct finding out[4];
	struct dr_facts f;
	struct dr_proc p;

	base(&f, &p);
	tw_client(&f, &p, &p.eps[0]);
	ASSERT_TRUE(doctor_rules(&f, out, 4) >= 1, "found");
	ASSERT_TRUE(strstr(out[0].fix, "net.ipv4.ip_local_port_range (now 32768-60999)") != NULL,
		    "port_range");
	ASSERT_TRUE(strstr(out[0].fix, "tcp_tw_reuse") && strstr(out[0].fix, "timestamps"),
		    "tw_reuse_with_conditions");
	ASSERT_TRUE(strstr(out[0].verdict, "PID 100 (client)") != NULL, "names_the_closer");
}

TEST(reused_time_wait_verdict_says_so)
{
	struct finding out[4];
	struct dr_facts f;
	struct dr_proc p;

	base(&f, &p);
	tw_exhaust_reused(&f, &p, &p.eps[0]);
	ASSERT_TRUE(doctor_rules(&f, out, 4) >= 1, "found");
	ASSERT_TRUE(strstr(out[0].verdict, "the kernel reused 25000 TIME_WAIT ports for new "
			   "connects (net.ipv4.tcp_tw_reuse = 2) and no connect failed") != NULL,
		    out[0].verdict);
	ASSERT_TRUE(!strstr(out[0].verdict, "run out"), out[0].verdict);
}

TEST(fd_limit_fix_names_ulimit_and_limitnofile)
{
	struct finding out[4];
	struct dr_facts f;
	struct dr_proc p;

	base(&f, &p);
	fd_emfile(&f, &p, &p.eps[0]);
	ASSERT_TRUE(doctor_rules(&f, out, 4) >= 1, "found");
	ASSERT_TRUE(strstr(out[0].fix, "ulimit -n") && strstr(out[0].fix, "LimitNOFILE="),
		    "settings");
}

/* The agent's own cost first, then worst first. */
TEST(sorted_by_severity_then_rule)
{
	struct finding out[8];
	struct dr_facts f;
	struct dr_proc p;

	base(&f, &p);
	churn(&f, &p, &p.eps[0]);		/* warning */
	fd_emfile(&f, &p, &p.eps[0]);		/* critical */
	cost(&f, &p, &p.eps[0]);		/* warning, ranked first of them */
	ASSERT_EQ(doctor_rules(&f, out, 8), 3, "three");
	ASSERT_STREQ(out[0].rule, "agent_cost", "cost_first");
	ASSERT_STREQ(out[1].rule, "fd_limit", "then_critical");
	ASSERT_STREQ(out[2].rule, "churn", "then_warning");
}

/* A cost that distorts names the findings whose verdict rests on a rate
 * or a time (how soon ports run out), not those made of counts (churn). */
TEST(agent_cost_names_the_verdicts_it_distorts)
{
	struct finding out[8];
	struct dr_facts f;
	struct dr_proc p;
	size_t n;

	base(&f, &p);
	tw_exhaust(&f, &p, &p.eps[0]);		/* port_exhaustion: seconds to run out */
	cost(&f, &p, &p.eps[0]);		/* 30 % */
	n = doctor_rules(&f, out, 8);
	ASSERT_TRUE(n >= 2, "two");
	ASSERT_STREQ(out[0].rule, "agent_cost", "cost_first");
	ASSERT_TRUE(strstr(out[0].verdict, "port_exhaustion") != NULL, out[0].verdict);
	ASSERT_TRUE(ev_of(&out[0], "cost_share") && fabs(ev_of(&out[0], "cost_share")->value - 30) < 1e-9,
		    "share");
	base(&f, &p);
	churn(&f, &p, &p.eps[0]);
	cost(&f, &p, &p.eps[0]);
	n = doctor_rules(&f, out, 8);
	ASSERT_EQ(n, 2, "cost_and_churn");
	ASSERT_TRUE(!strstr(out[0].verdict, "churn") &&
		    strstr(out[0].verdict, "no finding here rests on a rate or a time") != NULL,
		    out[0].verdict);
}

/* The footer: the share, whether it distorts, said for every run. */
TEST(fd_leak_without_sites_asks_for_them)
{
	struct finding out[4];
	struct dr_facts f;
	struct dr_proc p;

	base(&f, &p);
	leak_no_sites(&f, &p, &p.eps[0]);
	ASSERT_EQ(doctor_rules(&f, out, 4), 1, "one");
	ASSERT_TRUE(strstr(out[0].fix, "--fd-sites") != NULL, out[0].fix);
	ASSERT_TRUE(strstr(out[0].verdict, "no leak sites traced") != NULL, out[0].verdict);
	ASSERT_TRUE(!ev_of(&out[0], "old_fds_at_top_site"), "no_site_evidence");
}

TEST(agent_cost_share)
{
	struct dr_facts f;
	struct dr_proc p;

	base(&f, &p);
	cost_footer(&f, &p, &p.eps[0]);
	ASSERT_TRUE(fabs(dr_cost_share(&f.cost) - 0.10) < 1e-9, "ten_percent");
	cost_idle(&f, &p, &p.eps[0]);
	ASSERT_TRUE(dr_cost_share(&f.cost) < 0, "too_little_cpu_to_say");
}

TEST(healthy_states_key_numbers)
{
	struct dr_facts f;
	struct dr_proc p;
	char buf[512];

	base(&f, &p);
	churn_pool_sized(&f, &p, &p.eps[0]);
	p.opened = 8, p.requests = 800, p.tw_peak = 8;
	doctor_healthy_text(&f, buf, sizeof(buf));
	ASSERT_STREQ(buf, "healthy: no rule fired. PID 100 (client): 8 connections opened and 0 "
		     "accepted for 800 requests (100.0 per connection), TIME_WAIT peak 8, 0 "
		     "connect failures, 0 resets.", "text");
}

/* ---- a server judged by its listener ---- */

/* Four pre-forked workers accepting on one listener, each closing first:
 * 400 TIME_WAIT each at the peak (under the 1000 of one process), 1600 at
 * the listener. Their peaks come at different intervals: the listener's
 * peak is the largest sum at one interval, not the sum of the peaks. */
static uint32_t pool_cols[4][3] = {
	{ 400, 300, 0 }, { 300, 400, 0 }, { 390, 380, 0 }, { 400, 390, 0 },
};

static void pool_base(struct dr_facts *f, struct dr_proc *p, size_t n)
{
	base(f, &p[0]);
	f->nprocs = n;
	f->procs = p;
	for (size_t i = 0; i < n; i++) {
		struct dr_endpoint *e = &p[i].eps[0];

		if (i)
			p[i] = p[0];
		p[i].pid = 200 + i;
		strcpy(p[i].comm, "apache2");
		strcpy(e->label, "listen *:8080");
		e->listen = true;
		e->tw_cols = pool_cols[i];
		e->tw_ncols = 3;
		e->tw_peak = p[i].tw_peak = 400;
		e->tw_entered = p[i].tw_entered = p[i].closed_active = 400;
		e->closed_active = 400;
		e->accepted = e->requests = 400;
	}
}

TEST(server_time_wait_judged_by_its_listener)
{
	struct finding out[8];
	struct dr_facts f;
	struct dr_proc p[4];
	size_t n;

	pool_base(&f, p, 4);
	n = doctor_rules(&f, out, 8);
	ASSERT_EQ(n, 1, "one_finding_for_the_listener");
	ASSERT_STREQ(out[0].rule, "time_wait", "rule");
	ASSERT_STREQ(out[0].endpoint, "listen *:8080", "endpoint");
	ASSERT_EQ(out[0].pid, 0, "no_one_child");
	ASSERT_STREQ(out[0].comm, "apache2", "service_comm");
	ASSERT_EQ(out[0].npids, 4, "every_acceptor");
	ASSERT_EQ(out[0].pids[0], 200, "pids_listed");
	ASSERT_EQ(out[0].pids[3], 203, "pids_listed_all");
	ASSERT_TRUE(ev_of(&out[0], "time_wait_peak") &&
		    ev_of(&out[0], "time_wait_peak")->value == 400 + 300 + 390 + 400,
		    "peak_is_the_largest_sum_at_one_interval");
	ASSERT_TRUE(ev_of(&out[0], "time_wait_entered") &&
		    ev_of(&out[0], "time_wait_entered")->value == 1600, "entered_summed");
	ASSERT_TRUE(ev_of(&out[0], "processes") && ev_of(&out[0], "processes")->value == 4,
		    "processes");
	ASSERT_TRUE(ev_of(&out[0], "time_wait_peak_one_process") &&
		    ev_of(&out[0], "time_wait_peak_one_process")->value == 400, "busiest_child");
	ASSERT_TRUE(strstr(out[0].verdict, "apache2 on *:8080 (4 processes accepting") != NULL,
		    out[0].verdict);
}

/* The same listener, but its workers' peaks sum to under 1000 at every
 * interval: nothing, though the sum of their peaks is 1000. */
TEST(listener_under_threshold_at_every_interval)
{
	static uint32_t cols[4][2] = { { 250, 0 }, { 0, 250 }, { 250, 0 }, { 0, 250 } };
	struct finding out[8];
	struct dr_facts f;
	struct dr_proc p[4];

	pool_base(&f, p, 4);
	for (int i = 0; i < 4; i++) {
		p[i].eps[0].tw_cols = cols[i];
		p[i].eps[0].tw_ncols = 2;
		p[i].eps[0].tw_peak = p[i].tw_peak = 250;
	}
	ASSERT_EQ(doctor_rules(&f, out, 8), 0, "no_finding");
}

/* Two services on two listeners are two findings, each naming its own. */
TEST(listeners_pooled_apart)
{
	struct finding out[8];
	struct dr_facts f;
	struct dr_proc p[4];
	size_t n;

	pool_base(&f, p, 4);
	for (int i = 2; i < 4; i++) {
		strcpy(p[i].eps[0].label, "listen *:9090");
		strcpy(p[i].comm, "nginx");
		p[i].eps[0].tw_cols = NULL;
		p[i].eps[0].tw_peak = p[i].tw_peak = 600;
	}
	n = doctor_rules(&f, out, 8);
	ASSERT_EQ(n, 1, "only_the_listener_over_the_threshold");
	ASSERT_STREQ(out[0].endpoint, "listen *:9090", "the_nginx_listener");
	ASSERT_STREQ(out[0].comm, "nginx", "named");
	ASSERT_EQ(out[0].npids, 2, "its_two_workers");
	ASSERT_TRUE(ev_of(&out[0], "time_wait_peak")->value == 1200, "peaks_summed_without_series");
}

/* A server that also connects out: 1,500 connections accepted on its
 * listener, each closed first by it (its TIME_WAIT), and 3,000 to a
 * database whose peer closed first. The listener's finding quotes the
 * listener's closes (1500 of 1500), not the process's over both ports
 * (1500 of 4500, which read as a third of the listener's closes). */
static void listener_and_client(struct dr_facts *f, struct dr_proc *p)
{
	struct dr_endpoint *l = &p->eps[0], *db = &p->eps[1];

	base(f, p);
	strcpy(p->comm, "server");
	p->neps = 2;
	strcpy(l->label, "listen *:8080");
	l->listen = true;
	l->accepted = l->requests = 1500;
	l->tw_entered = l->tw_peak = 1500;
	l->closed_active = 1500;
	strcpy(db->label, "10.0.0.5:5432");
	db->opened = db->requests = 3000;
	db->live_peak = 8;
	db->closed_passive = 3000;
	p->accepted = 1500, p->opened = 3000;
	p->tw_entered = p->tw_peak = 1500;
	p->closed_active = 1500, p->closed_passive = 3000;
}

TEST(listener_quotes_its_own_closes)
{
	struct finding out[8];
	struct dr_facts f;
	struct dr_proc p;
	const struct finding *x = NULL;
	size_t n;

	listener_and_client(&f, &p);
	n = doctor_rules(&f, out, 8);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(out[i].rule, "time_wait"))
			x = &out[i];
	ASSERT_TRUE(x != NULL, "listener_time_wait_found");
	ASSERT_STREQ(x->endpoint, "listen *:8080", "on_the_listener");
	ASSERT_TRUE(strstr(x->verdict, "closes first (1500 of 1500 closes), most of them on "
			   "listen *:8080") != NULL, x->verdict);
	ASSERT_TRUE(ev_of(x, "closed_first_by_this_side") &&
		    ev_of(x, "closed_first_by_this_side")->value == 1500, "its_closes_first");
	ASSERT_TRUE(ev_of(x, "closed_first_by_peer") &&
		    ev_of(x, "closed_first_by_peer")->value == 0, "not_the_databases");
}

/* Two listeners of one process, one closing first, the other's peers
 * closing first: each pooled with its own closes. */
TEST(two_listeners_each_their_closes)
{
	struct finding out[8];
	struct dr_facts f;
	struct dr_proc p;
	const struct finding *x = NULL;
	size_t n;

	listener_and_client(&f, &p);
	strcpy(p.eps[1].label, "listen *:9090");
	p.eps[1].listen = true;
	p.eps[1].opened = 0;
	p.eps[1].accepted = 3000;
	p.opened = 0, p.accepted = 4500;
	n = doctor_rules(&f, out, 8);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(out[i].rule, "time_wait"))
			x = &out[i];
	ASSERT_TRUE(x != NULL, "listener_time_wait_found");
	ASSERT_STREQ(x->endpoint, "listen *:8080", "the_one_that_closes_first");
	ASSERT_TRUE(strstr(x->verdict, "(1500 of 1500 closes)") != NULL, x->verdict);
}

/* ---- books side ---- */

static struct cs_tuple tup(uint16_t sport, uint16_t dport)
{
	struct cs_tuple t = { .family = 2, .sport = sport, .dport = dport };

	t.saddr[0] = t.daddr[0] = 127;
	t.saddr[3] = t.daddr[3] = 1;
	return t;
}

static void ev(struct agg *a, uint64_t sk, struct cs_tuple t, int old, int new, uint64_t ts,
	       int err)
{
	struct cs_event e = { .type = CS_EV_STATE, .sk = sk, .ts_ns = ts, .oldstate = old,
			      .newstate = new, .sk_err = err, .tuple = t };

	e.owner.tgid = PID;
	e.owner.flags = CS_OWNER_CONNECT;
	e.cur_tgid = PID;
	agg_event(a, &e);
}

TEST(failure_kinds_from_events)
{
	struct agg a;
	struct proc_books *p;
	struct endpoint_key k = { .family = 2, .side = EP_REMOTE, .port = 8080 };
	struct endpoint_stats *es;

	k.addr[0] = 127, k.addr[3] = 1;
	agg_init(&a, 0);
	/* refused, timed out, a reset received, an abort sent, a clean close */
	ev(&a, 1, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT, 1, 0);
	ev(&a, 1, tup(40001, 8080), CS_TCP_SYN_SENT, CS_TCP_CLOSE, 2, ECONNREFUSED);
	ev(&a, 2, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT, 3, 0);
	ev(&a, 2, tup(40002, 8080), CS_TCP_SYN_SENT, CS_TCP_CLOSE, 4, ETIMEDOUT);
	ev(&a, 3, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT, 5, 0);
	ev(&a, 3, tup(40003, 8080), CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED, 6, 0);
	ev(&a, 3, tup(40003, 8080), CS_TCP_ESTABLISHED, CS_TCP_CLOSE, 7, ECONNRESET);
	ev(&a, 4, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT, 8, 0);
	ev(&a, 4, tup(40004, 8080), CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED, 9, 0);
	ev(&a, 4, tup(40004, 8080), CS_TCP_ESTABLISHED, CS_TCP_CLOSE, 10, 0);
	ev(&a, 5, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT, 11, 0);
	ev(&a, 5, tup(40005, 8080), CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED, 12, 0);
	ev(&a, 5, tup(40005, 8080), CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1, 13, 0);
	ev(&a, 5, tup(40005, 8080), CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2, 14, 0);
	ev(&a, 5, tup(40005, 8080), CS_TCP_FIN_WAIT2, CS_TCP_CLOSE, 15, 0);
	p = agg_find_proc(&a, PID);
	ASSERT_TRUE(p != NULL, "books");
	es = hmap_get(&p->endpoints, &k);
	ASSERT_TRUE(es != NULL, "endpoint");
	ASSERT_EQ(es->connect_refused, 1, "refused");
	ASSERT_EQ(es->connect_timeout, 1, "timeout");
	ASSERT_EQ(es->connect_other, 0, "other");
	ASSERT_EQ(es->resets_recv, 1, "reset_received");
	ASSERT_EQ(es->resets_sent, 1, "reset_sent");
	agg_free(&a);
}

TEST(listen_queue_samples)
{
	struct doctor_run d = { 0 };
	struct inode_map owners;
	struct sd_sock socks[2] = {
		{ .family = 2, .state = CS_TCP_LISTEN, .sport = 8080, .rqueue = 5, .wqueue = 4,
		  .inode = 77 },
		{ .family = 2, .state = CS_TCP_LISTEN, .sport = 9090, .rqueue = 0, .wqueue = 128,
		  .inode = 78 },	/* not a target's */
	};

	inode_map_init(&owners);
	inode_map_put(&owners, 77, PID);
	doctor_observe_listeners(&d, socks, 2, &owners);
	socks[0].rqueue = 2;
	doctor_observe_listeners(&d, socks, 2, &owners);
	ASSERT_EQ(d.nlisteners, 1, "targets_only");
	ASSERT_EQ(d.listeners[0].port, 8080, "port");
	ASSERT_EQ(d.listeners[0].backlog, 4, "backlog_from_wqueue");
	ASSERT_EQ(d.listeners[0].queue_peak, 5, "peak_kept");
	ASSERT_EQ(d.listeners[0].queue_now, 2, "now");
	ASSERT_EQ(d.listeners[0].samples, 2, "samples");
	ASSERT_EQ(d.listeners[0].samples_full, 1, "full_once");
	inode_map_free(&owners);
}

TEST(netstat_observe_keeps_the_largest_rise)
{
	struct doctor_run d = { 0 };
	struct listen_counters c = { 10, 12, 0 };

	doctor_observe_netstat(&d, PID, 4026531840ULL, &c);
	c = (struct listen_counters){ 25, 27, 0 };
	doctor_observe_netstat(&d, PID, 4026531840ULL, &c);
	c = (struct listen_counters){ 30, 33, 0 };
	doctor_observe_netstat(&d, PID, 4026531840ULL, &c);
	ASSERT_EQ(d.nns, 1, "one_namespace");
	ASSERT_EQ(d.ns[0].overflows_last - d.ns[0].overflows_first, 20, "overflows");
	ASSERT_EQ(d.ns[0].drops_last - d.ns[0].drops_first, 21, "drops");
	ASSERT_EQ(d.ns[0].overflows_peak_interval, 15, "peak_rise");
}

TEST(netstat_parse_tcpext)
{
	const char *text =
		"TcpExt: SyncookiesSent SyncookiesRecv ListenOverflows ListenDrops TCPTimeouts\n"
		"TcpExt: 0 0 45 47 3\n"
		"IpExt: InNoRoutes ListenOverflows\n"
		"IpExt: 1 999\n";
	uint64_t v = 0;

	ASSERT_EQ(netstat_parse(text, "TcpExt", "ListenOverflows", &v), 0, "found");
	ASSERT_EQ(v, 45, "overflows");
	ASSERT_EQ(netstat_parse(text, "TcpExt", "ListenDrops", &v), 0, "found_drops");
	ASSERT_EQ(v, 47, "drops");
	ASSERT_EQ(netstat_parse(text, "TcpExt", "NoSuch", &v), -ENOENT, "absent");
	ASSERT_EQ(netstat_parse("TcpExt: A B\n", "TcpExt", "A", &v), -ENOENT, "no_values_line");
}

UNIT_MAIN()
