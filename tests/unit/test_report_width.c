// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Every line of the text reports fits 80 columns, with the texts the run
 * brings: a source's reason for being off (the agent under `ip netns exec`
 * has no cgroup2 mount: "QUIC wire: off: ..." was 96 columns, and the
 * "LOST: ..." line it causes 82), every kind of loss at once, the reason
 * the packet programs went on, the fd report's lines. The words stay the
 * same: joined again, the wrapped text is the unwrapped one. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "json.h"
#include "fd_books.h"
#include "fdleak_report.h"
#include "tcp_limits.h"
#include "losses.h"
#include "quic_books.h"
#include "report.h"
#include "report_losses.h"
#include "report_findings.h"
#include "report_quic.h"
#include "report_tw.h"
#include "html_text.h"
#include "run_info.h"
#include "run_notes.h"

/* quic_tracer.c's reason when no cgroup2 hierarchy is mounted (the
 * sysfs `ip netns exec` mounts has none). */
#define NO_CGROUP2 "no cgroup v2 hierarchy is mounted (mount -t cgroup2 none " \
	"/sys/fs/cgroup/unified)"

static char *buf;
static size_t buflen;

static FILE *open_out(void)
{
	buf = NULL;
	return open_memstream(&buf, &buflen);
}

/* The longest line of s (its columns: bytes, the reports are ASCII). */
static int widest(const char *s, char *line, size_t len)
{
	int most = 0;

	for (const char *p = s; *p;) {
		int n = strcspn(p, "\n");

		if (n > most) {
			most = n;
			snprintf(line, len, "%.*s", n, p);
		}
		p += n + (p[n] == '\n');
	}
	return most;
}

#define ASSERT_FITS(s, name)                                                         \
	do {                                                                         \
		char at_[512] = "";                                                  \
		int w_ = widest((s), at_, sizeof(at_));                              \
		if (w_ > 80)                                                         \
			fprintf(stderr, "# %d columns: %s\n", w_, at_);              \
		ASSERT_TRUE(w_ <= 80, name);                                         \
	} while (0)

/* s with each line break and the indent after it made one space: the
 * text as it was before wrapping (the lines of a report run together, so
 * a wanted text says no line end). Returns a static copy. */
static const char *joined(const char *s)
{
	static char out[65536];
	size_t o = 0;

	for (const char *p = s; *p && o + 1 < sizeof(out); p++) {
		if (*p == '\n' && p[1] && p[1] != '\n') {
			out[o++] = ' ';
			while (p[1] == ' ')
				p++;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
	return out;
}

static bool has_joined(const char *s, const char *want)
{
	bool yes = strstr(joined(s), want) != NULL;

	if (!yes)
		fprintf(stderr, "# wanted \"%s\" in:\n%s\n", want, s);
	return yes;
}

/* The agent run as `ip netns exec NS connscope attach`: the QUIC wire
 * source off for want of cgroup2, one source not attached. */
TEST(netns_agent_report_fits_80)
{
	struct run_info run = {
		.hook = "tp_btf/inet_sock_set_state", .interval_s = 0.5, .elapsed_s = 3,
		.end_reason = "duration",
	};
	struct quic_run q = { .wire_on = false, .wire_error = NO_CGROUP2 };
	struct agg a;
	FILE *f;

	agg_init(&a, 0);
	run.quic = &q;
	run.losses.n[LOSS_ATTACH_FAILED] = 1;
	run.losses.quic_attach_failed = 1;
	f = open_out();
	format_report_text(f, &a, &run);
	fclose(f);
	ASSERT_FITS(buf, "report_fits_80");
	ASSERT_TRUE(has_joined(buf, "QUIC wire: off: " NO_CGROUP2), "quic_reason_whole");
	/* The QUIC source alone is off: the TCP counts are whole, and the
	 * line says which are low (it said "counts below are low"). */
	ASSERT_TRUE(has_joined(buf, "LOST: 1 program or source not attached; QUIC counts below "
				    "are low, TCP and fd counts are not (see agent: losses)"),
		    "lost_line_whole");
	free(buf);
	/* A TCP loss beside it: every count may be low again. */
	run.losses.n[LOSS_OWNER_MAP_FULL] = 2;
	f = open_out();
	format_report_text(f, &a, &run);
	fclose(f);
	ASSERT_TRUE(has_joined(buf, "not attached; counts below are low (see agent: losses)"),
		    "tcp_loss_all_low");
	free(buf);
	run.losses.n[LOSS_OWNER_MAP_FULL] = 0;
	run.losses.n[LOSS_ATTACH_FAILED] = 2;	/* and an fd program */
	f = open_out();
	format_report_text(f, &a, &run);
	fclose(f);
	ASSERT_TRUE(has_joined(buf, "2 programs or sources not attached; counts below are low"),
		    "fd_program_all_low");
	free(buf);
	agg_free(&a);
}

/* Sends counted at tcp_sendmsg_locked, a birth pass that missed a
 * namespace: the report says the open connections' io there is low
 * (review S2); under sock_send_length it says nothing. */
TEST(birth_pass_failed_io_said)
{
	struct run_info run = {
		.hook = "tp_btf/inet_sock_set_state", .interval_s = 0.5, .elapsed_s = 3,
		.end_reason = "duration",
		.io_hook = "tp_btf/tcp_sendmsg_locked, tp_btf/tcp_rcv_space_adjust",
	};
	struct agg a;
	FILE *f;

	agg_init(&a, 0);
	a.birth_pass_failed = 2;
	f = open_out();
	format_report_text(f, &a, &run);
	fclose(f);
	ASSERT_FITS(buf, "report_fits_80");
	ASSERT_TRUE(has_joined(buf, "2 birth passes missed a namespace: connections still "
				    "open there lack the sends since their last look"),
		    "wseq_said");
	free(buf);
	run.io_hook = "tp_btf/sock_send_length, tp_btf/tcp_rcv_space_adjust";
	f = open_out();
	format_report_text(f, &a, &run);
	fclose(f);
	ASSERT_TRUE(!strstr(buf, "birth passes missed"), "send_length_silent");
	free(buf);
	agg_free(&a);
}

/* A busy process's own lines: `connscope attach` on two nginx workers
 * behind ab (60,000 requests, tcp_tw_reuse on loopback) printed its
 * "TIME_WAIT entered ..." and "reuse ... connections for ... requests"
 * lines 82 columns wide; ten-digit counts and rates run longer still.
 * Wrapped under the figures, the words the same. */
TEST(busy_process_lines_fit_80)
{
	struct run_info run = {
		.hook = "tp_btf/inet_sock_set_state", .interval_s = 1, .elapsed_s = 10,
		.end_reason = "duration",
	};
	struct proc_books *p;
	struct agg a;
	FILE *f;

	agg_init(&a, 0);
	p = agg_proc(&a, 4194304);
	p->target = true;
	strcpy(p->comm, "nginx");
	p->total.opened = 1564000000;
	p->total.accepted = 3112300000;
	p->total.closed = 4676300000;
	p->total.tw_entered = 3112500000;
	p->total.tw_killed = 1847400000;
	p->total.tw_expired = 1265100000;
	p->total.connect_failed = 1000000000;
	p->total.resets = 2000000000;
	p->total.resets_sent = 3000000000;
	p->total.never_accepted = 4000000000;
	p->truth.state[CS_TCP_TIME_WAIT] = 1264100;
	p->requests = 46763000000;
	p->bytes_sent = 5982995000000;
	p->bytes_recv = 5005706000000;
	f = open_out();
	format_report_text(f, &a, &run);
	fclose(f);
	ASSERT_FITS(buf, "busy_fits_80");
	ASSERT_TRUE(has_joined(buf, "connections   opened 1564000000 (156400000.0/s), accepted "
				    "3112300000 (311230000.0/s), closed 4676300000"), "conns_whole");
	ASSERT_TRUE(has_joined(buf, "TIME_WAIT     entered 3112500000 (311250000.0/s), live "
				    "1264100, expired 1265100000, ended early 1847400000"),
		    "tw_whole");
	ASSERT_TRUE(has_joined(buf, "reuse         4676300000 connections for 46763000000 requests: "
				    "10.0 per connection, reuse 90%"), "reuse_whole");
	ASSERT_TRUE(has_joined(buf, "failures      connect failed 1000000000, resets received "
				    "2000000000, sent 3000000000"), "failures_whole");
	free(buf);
	/* The orphans' times carry their unit on both figures ("ended <= 2
	 * ms median, max 2": 2 what?). */
	p->total.orphaned = p->orphan_ended = 100;
	p->orphan_ms_hist[1] = 60;	/* 2-4 ms */
	p->orphan_ms_hist[5] = 40;	/* 32-64 ms */
	f = open_out();
	format_report_text(f, &a, &run);
	fclose(f);
	ASSERT_FITS(buf, "orphans_fit_80");
	ASSERT_TRUE(has_joined(buf, "100 passed through (normal), ended <= 4 ms median, <= 64 ms "
				    "at most"), "orphan_times_with_units");
	/* 49464 of them (attach on an nginx worker): 84 columns. */
	p->total.orphaned = 4676300000;
	free(buf);
	f = open_out();
	format_report_text(f, &a, &run);
	fclose(f);
	ASSERT_FITS(buf, "many_orphans_fit_80");
	free(buf);
	agg_free(&a);
}

/* Many processes, folded: the sums of all of them and a group's spread
 * per process. Twenty PostgreSQL backends of 1,234,567 connections each
 * (seven digits; their sums eight) ran "all of them opened ..." to 85
 * columns and "per process connections (opened + accepted) min ..." to
 * 88. Wrapped under the figures, the words the same. */
TEST(folded_sums_fit_80)
{
	struct run_info run = {
		.hook = "tp_btf/inet_sock_set_state", .interval_s = 1, .elapsed_s = 10,
		.end_reason = "duration",
	};
	struct agg a;
	FILE *f;

	agg_init(&a, 0);
	for (int i = 0; i < 20; i++) {
		struct proc_books *p = agg_proc(&a, 1000 + i);

		strcpy(p->comm, "postgres");
		p->ptgid = 100;
		p->total.accepted = 1234567;
		p->total.opened = 1234567;
		p->total.closed = 2469134;
		p->total.tw_entered = 1234567;
	}
	f = open_out();
	format_report_text(f, &a, &run);
	fclose(f);
	ASSERT_FITS(buf, "folded_fits_80");
	ASSERT_TRUE(has_joined(buf, "all of them   opened 24691340, accepted 24691340, closed "
				    "49382680, TIME_WAIT 24691340"), "sums_whole");
	ASSERT_TRUE(has_joined(buf, "per process   connections (opened + accepted) min 2469134, "
				    "median 2469134, max 2469134"), "spread_whole");
	free(buf);
	agg_free(&a);
}

/* How many times word is in s. */
static int count_of(const char *s, const char *word)
{
	int n = 0;

	for (const char *p = strstr(s, word); p; p = strstr(p + 1, word))
		n++;
	return n;
}

/* The doctor's text of a and run into buf (free it). */
static void doctor_text(struct agg *a, struct run_info *run)
{
	FILE *f = open_out();

	format_doctor_text(f, a, run);
	fclose(f);
}

/* The doctor under the same run, and a full ring buffer: its findings
 * rest on the same counts, so it says every loss (it said only the ring
 * buffer's), once, with the fix, in 80 columns. */
TEST(doctor_says_every_loss)
{
	struct run_info run = {
		.hook = "tp_btf/inet_sock_set_state", .interval_s = 0.5, .elapsed_s = 3,
		.end_reason = "duration",
	};
	struct agg a;

	agg_init(&a, 0);
	run.losses.n[LOSS_ATTACH_FAILED] = 1;
	doctor_text(&a, &run);
	ASSERT_FITS(buf, "doctor_fits_80");
	ASSERT_TRUE(has_joined(buf, "LOST: 1 program or source not attached; counts below "
				    "are low (see -j: agent.losses)"), "doctor_attach_loss_said");
	ASSERT_TRUE(!strstr(buf, "ringbuf-size"), "doctor_no_ring_fix_without_ring_loss");
	free(buf);
	run.losses.n[LOSS_TCP_EVENTS] = run.stats[CS_STAT_RB_LOST] = 3;
	doctor_text(&a, &run);
	ASSERT_FITS(buf, "doctor_ring_fits_80");
	ASSERT_TRUE(has_joined(buf, "LOST: 3 TCP events (ring buffer full), 1 program or source "
				    "not attached"), "doctor_both_losses_said");
	ASSERT_EQ(count_of(buf, "raise --ringbuf-size"), 1, "doctor_ring_fix_named_once");
	ASSERT_EQ(count_of(buf, "ring buffer full"), 1, "doctor_ring_loss_said_once");
	free(buf);
	agg_free(&a);
}

/* Every kind of loss at once, with 20-digit counts: the report's first
 * line, its losses block, and attach's warning on stderr. */
TEST(every_loss_fits_80)
{
	struct agent_losses l = { 0 };
	FILE *f;

	for (int k = 0; k < LOSS_MAX; k++)
		l.n[k] = UINT64_MAX - k;
	f = open_out();
	format_losses_headline(f, "", &l);
	format_losses_text(f, &l);
	format_losses_headline_see(f, "connscope: warning: ", &l, LOSSES_IN_REPORT,
				   "-j: agent.losses");
	format_losses_headline_see(f, "connscope: warning: ", &l, LOSSES_EXPORTED,
				   "connscope_agent_losses_total");
	fclose(f);
	ASSERT_FITS(buf, "losses_fit_80");
	for (int k = 0; k < LOSS_MAX; k++) {
		char want[512];

		snprintf(want, sizeof(want), "%llu %s", (unsigned long long)(UINT64_MAX - k),
			 loss_text(k));
		ASSERT_TRUE(has_joined(buf, want), "each_loss_whole");
	}
	ASSERT_TRUE(has_joined(buf, "connscope: warning: LOST: 18446744073709551615 TCP "
				    "events (ring buffer full), "), "warning_prefix_first");
	free(buf);
}

/* The packet programs went on because targets join by name (attach
 * --comm): the line that says so. */
TEST(quic_wire_on_fits_80)
{
	struct quic_run q = {
		.wire_on = true, .skb_on = true, .skb_after_s = 123.4,
		.skb_why = "targets join by name, cgroup or container",
		.cgroup = "/sys/fs/cgroup/unified",
	};
	FILE *f;

	for (int i = 0; i < QW_STAT_MAX; i++)
		q.wire_stats[i] = 10000000000ull;
	f = open_out();
	format_quic_agent_text(f, &q);
	fclose(f);
	ASSERT_FITS(buf, "quic_agent_fits_80");
	ASSERT_TRUE(has_joined(buf, "cgroup_skb attached 123.4 s into the run: targets join by "
				    "name, cgroup or container"), "skb_why_whole");
	free(buf);
}

/* fdleak's text report: the books-vs-/proc line (85 columns with
 * one-digit counts), the agent line naming the programs that failed, the
 * RLIMIT_NOFILE warning. */
TEST(fdleak_text_fits_80)
{
	static struct fd_proc b;
	static struct fdleak_proc p;
	struct fdleak_run run = {
		.elapsed_s = 12, .interval_s = 1, .leak_age_s = 5, .warn_share = 0.8,
		.end_reason = "duration", .progs_attached = 3, .progs_missing = 4,
		.missing_names = "handle_socket_exit, handle_accept4_exit, handle_dup3_exit, "
				 "handle_pipe2_exit",
	};
	FILE *f;

	b.created = 20, b.closed = 20, b.phantom = 0, b.unseen = 0;
	p.pid = 4194304;
	strcpy(p.comm, "leakfix_nofp_ab");
	p.books = &b;
	p.lim.soft = p.lim.hard = 20000;
	p.inv.total = 19999;
	p.seconds_to_limit = -1;
	f = open_out();
	format_fdleak_text(f, &p, 1, &run, false);
	fclose(f);
	ASSERT_FITS(buf, "fdleak_fits_80");
	ASSERT_TRUE(has_joined(buf, "created 20, closed 20; books vs /proc: 0 closed unseen, 0 "
				    "made unseen"), "events_whole");
	ASSERT_TRUE(has_joined(buf, "4 missing: handle_socket_exit, handle_accept4_exit, "
				    "handle_dup3_exit, handle_pipe2_exit"), "missing_whole");
	ASSERT_TRUE(has_joined(buf, "WARNING: pid 4194304 (leakfix_nofp_ab) holds 19999 fds, "
				    "100% of its RLIMIT_NOFILE 20000: accept() and open() fail "
				    "with EMFILE at the limit"), "warning_whole");
	free(buf);
}

/* A flat fd count's growth, a hair below zero, reads +0.0/s, not -0.0/s
 * (the HTML report's Processes table read "-0.0" in `make demo`). */
TEST(fd_growth_rounding_to_zero_has_no_minus)
{
	static struct fdleak_proc p;
	FILE *f;

	p.pid = 42;
	strcpy(p.comm, "flat");
	p.lim.soft = p.lim.hard = 20000;
	p.inv.total = 10;
	p.slope = -0.02;
	f = open_out();
	format_fd_brief(f, &p, false);
	fclose(f);
	ASSERT_TRUE(strstr(buf, "10 of limit 20000 (0%), +0.0/s") != NULL, "plus_zero");
	ASSERT_TRUE(strstr(buf, "-0.0") == NULL, "no_minus_zero");
	free(buf);
}

/* The limits' warnings, an IPv6 destination's ports nearly all used:
 * wrapped for the terminal, one paragraph each again in the HTML report
 * (which words them as the text does). */
TEST(limits_warnings_fit_80_and_html_whole)
{
	static struct limits_view v;
	char *html = NULL;
	size_t hlen = 0;
	FILE *f;
	int paras = 0;

	v.valid = true;
	v.warn_share = 0.8;
	v.lim = (struct netlimits){ .port_lo = 32768, .port_hi = 60999,
				    .max_tw_buckets = 131072, .max_orphans = 131072 };
	v.ndests = 1;
	v.dests[0].family = 10;
	memset(v.dests[0].saddr, 0xfe, 16);
	memset(v.dests[0].daddr, 0xfd, 16);
	v.dests[0].dport = 65535;
	v.dests[0].time_wait = 28000;
	v.dests[0].established = 200;
	v.dests[0].share = v.peak_share = 0.999;
	v.host_tw_peak = 131072;
	v.host_orphan_peak = 131000;
	f = open_out();
	ASSERT_EQ(format_limits_warnings(f, &v), 3, "three_warnings");
	fclose(f);
	ASSERT_FITS(buf, "limits_fit_80");
	ASSERT_TRUE(has_joined(buf, "28200 of 28232 ephemeral ports (100%: 28000 TIME_WAIT, 200 "
				    "established); reuse connections (keep-alive pool), widen "
				    "net.ipv4.ip_local_port_range or allow tcp_tw_reuse"),
		    "ports_whole");
	f = open_memstream(&html, &hlen);
	html_warnings(f, buf);
	fclose(f);
	for (const char *p = html; (p = strstr(p, "<p class=\"warn\">")); p++)
		paras++;
	ASSERT_EQ(paras, 3, "html_one_paragraph_each");
	ASSERT_TRUE(strstr(html, "net.ipv4.tcp_max_orphans 131072 (100%): beyond it the kernel "
			   "resets them") != NULL, "html_words_joined");
	free(html);
	free(buf);
}

/* net.ipv4.tcp_max_orphans is host-wide: /proc/sys shows it in the
 * host's network namespace only. The agent under `ip netns exec` read
 * nothing and said "orphans 3 (peak 8) of tcp_max_orphans 0 (0.0%)", a
 * limit of 0; JSON said 0 too. Unread is said as unknown; a limit an
 * admin set to 0 (legal: every orphan reset) is read and said as 0. */
TEST(orphan_limit_unread_said_unknown)
{
	static struct limits_view v;
	char *js = NULL;
	size_t jlen = 0;
	struct json j;
	FILE *f;

	v.valid = true;
	v.warn_share = 0.8;
	v.lim = (struct netlimits){ .port_lo = 32768, .port_hi = 60999,
				    .max_tw_buckets = 131072, .max_orphans = 0,
				    .max_orphans_unread = true };
	v.host_orphan = 3;
	v.host_orphan_peak = 8;
	f = open_out();
	format_limits_text(f, &v, "iter/tcp + sock_diag");
	fclose(f);
	ASSERT_FITS(buf, "limits_fit_80");
	ASSERT_TRUE(strstr(buf, "of tcp_max_orphans 0") == NULL, "no_limit_of_0");
	ASSERT_TRUE(has_joined(buf, "orphans 3 (peak 8); tcp_max_orphans unknown (host-wide, "
				    "readable in the host's network namespace only)"),
		    "unknown_said");
	free(buf);
	f = open_memstream(&js, &jlen);
	json_init(&j, f, false);
	json_object_begin(&j);
	json_limits(&j, &v);
	json_object_end(&j);
	fclose(f);
	ASSERT_TRUE(strstr(js, "\"tcp_max_orphans\":null") != NULL, "json_null");
	free(js);
	v.lim.max_orphans_unread = false;
	f = open_out();
	format_limits_text(f, &v, "iter/tcp + sock_diag");
	fclose(f);
	ASSERT_TRUE(has_joined(buf, "orphans 3 (peak 8) of tcp_max_orphans 0 (0.0%)"),
		    "zero_read_is_zero");
	free(buf);
}

/* What a run says on stderr as it goes: a target's exit (83 columns for
 * "process 22012 (tcpfix) ...") and a network namespace no longer read
 * (netns_watch.c: one line of up to 259 columns). With the largest figures
 * each can hold, both ways a namespace's TIME_WAIT are followed, one
 * socket and many. */
TEST(run_notes_fit_80)
{
	const size_t held[] = { 1, (size_t)-1 };
	char want[512];
	FILE *f;

	for (int i = 0; i < 2; i++) {
		f = open_out();
		format_exited_note(f, 4194304, "leakfix_nofp_ab", 1e9);
		format_netns_unread(f, UINT32_MAX, 1e9, held[i], true);
		format_netns_unread(f, UINT32_MAX, 1e9, held[i], false);
		format_netns_tw_ended(f, UINT32_MAX, held[i], 1e9);
		fclose(f);
		ASSERT_FITS(buf, "run_notes_fit_80");
		ASSERT_EQ(count_of(buf, "\nconnscope: "), 3, "four_notes_each_its_own");
		ASSERT_TRUE(has_joined(buf, "connscope: process 4194304 (leakfix_nofp_ab) exited "
				       "after 1000000000.0 s; its report covers it until then"),
			    "exited_whole");
		snprintf(want, sizeof(want), "connscope: network namespace net:[4294967295] is no "
			 "longer read after 1000000000.0 s: no traced process is left in it; its "
			 "%zu TIME_WAIT socket%s in the books", held[i], i ? "s" : "");
		ASSERT_TRUE(has_joined(buf, want), "unread_whole");
		ASSERT_TRUE(has_joined(buf, i ? "count as end unseen once their 60 s are past (no "
					"dump can read them), its other sockets are not counted "
					"any more" : "counts as end unseen once its 60 s is past (no "
					"dump can read it)"), "census_whole");
		ASSERT_TRUE(has_joined(buf, i ? "end by their timers, its other sockets are not "
					"counted any more" : "ends by its timer,"), "timers_whole");
		snprintf(want, sizeof(want), "connscope: network namespace net:[4294967295]: the "
			 "last of its %zu TIME_WAIT socket%s ended after 1000000000.0 s (expired, or "
			 "killed with the namespace: see time_wait_expired / "
			 "time_wait_ended_early)", held[i], i ? "s" : "");
		ASSERT_TRUE(has_joined(buf, want), "ended_whole");
		free(buf);
	}
}

UNIT_MAIN()
