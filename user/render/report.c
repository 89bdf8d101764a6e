// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "report.h"
#include "report_cost.h"
#include "fdleak_report.h"
#include "report_reuse.h"
#include "report_quic.h"
#include "report_kf.h"
#include "report_cgroup.h"
#include "report_findings.h"
#include "text_wrap.h"
#include "doctor.h"
#include "report_losses.h"
#include "proc_view.h"

size_t report_procs(const struct agg *a, const struct proc_books **out, size_t max)
{
	size_t n, k;
	const struct proc_books **all = proc_view_list(a, &n);

	k = n < max ? n : max;
	if (all)
		memcpy(out, all, k * sizeof(*out));
	free(all);
	return k;
}


void format_live_header(FILE *out)
{
	fprintf(out, "%-8s %-7s %-12s %5s %5s %5s %5s %6s %6s %5s %5s\n", "TIME", "PID", "COMM",
		"OPEN", "ACPT", "CLOSE", "TW+", "ESTAB", "TIMEW", "ORPH", "FDS");
}

/* Past this many rows an interval, the live table shows the busiest and
 * sums the rest on one row (a server forking a process per connection
 * printed a row for each of 1,207 processes every second). */
#define LIVE_ROWS 16

static const struct interval_row *last_row(const struct proc_books *p)
{
	return p->nrows ? &p->rows[p->nrows - 1] : NULL;
}

static int cmp_live(const void *a, const void *b)
{
	const struct proc_books *x = *(const struct proc_books *const *)a;
	const struct proc_books *y = *(const struct proc_books *const *)b;
	uint64_t ax = proc_view_activity(&last_row(x)->delta);
	uint64_t ay = proc_view_activity(&last_row(y)->delta);

	if (ax != ay)
		return ax > ay ? -1 : 1;
	if (x->target != y->target)
		return x->target ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void live_row(FILE *out, const char *clock, const struct proc_books *p,
		     const struct fd_report *fds)
{
	const struct interval_row *r = last_row(p);
	const struct fdleak_proc *fp = fd_report_proc(fds, p->pid);
	char nfds[24] = "-";

	if (fp)
		snprintf(nfds, sizeof(nfds), "%llu", (unsigned long long)fp->inv.total);
	fprintf(out, "%-8s %-7d %-12.12s %5llu %5llu %5llu %5llu %6u %6u %5u %5s%s\n", clock,
		p->pid, p->comm, (unsigned long long)r->delta.opened,
		(unsigned long long)r->delta.accepted, (unsigned long long)r->delta.closed,
		(unsigned long long)r->delta.tw_entered, r->truth.state[CS_TCP_ESTABLISHED],
		r->truth.state[CS_TCP_TIME_WAIT], r->truth.orphan, nfds,
		p->exited ? " exited" : "");
}

void format_live_rows(FILE *out, const struct agg *a, const char *clock,
		      const struct fd_report *fds)
{
	size_t n, k = 0;
	const struct proc_books **procs = proc_view_list(a, &n);
	struct interval_row sum = { 0 };
	char more[24];

	for (size_t i = 0; i < n; i++)
		if (procs[i]->nrows)
			procs[k++] = procs[i];
	if (k > LIVE_ROWS) {
		/* Gone before this interval and idle in it: nothing to show. */
		n = k, k = 0;
		for (size_t i = 0; i < n; i++)
			if (!procs[i]->exited || proc_view_activity(&last_row(procs[i])->delta))
				procs[k++] = procs[i];
	}
	if (k <= LIVE_ROWS) {
		for (size_t i = 0; i < k; i++)
			live_row(out, clock, procs[i], fds);
		free(procs);
		return;
	}
	qsort(procs, k, sizeof(*procs), cmp_live);
	for (size_t i = 0; i < LIVE_ROWS - 1; i++)
		live_row(out, clock, procs[i], fds);
	for (size_t i = LIVE_ROWS - 1; i < k; i++) {
		const struct interval_row *r = last_row(procs[i]);

		sum.delta.opened += r->delta.opened;
		sum.delta.accepted += r->delta.accepted;
		sum.delta.closed += r->delta.closed;
		sum.delta.tw_entered += r->delta.tw_entered;
		sum.truth.state[CS_TCP_ESTABLISHED] += r->truth.state[CS_TCP_ESTABLISHED];
		sum.truth.state[CS_TCP_TIME_WAIT] += r->truth.state[CS_TCP_TIME_WAIT];
		sum.truth.orphan += r->truth.orphan;
	}
	/* The rest as one row, so each column still adds up. */
	snprintf(more, sizeof(more), "+%zu", k - (LIVE_ROWS - 1));
	fprintf(out, "%-8s %-7s %-12.12s %5llu %5llu %5llu %5llu %6u %6u %5u %5s\n", clock, more,
		"more", (unsigned long long)sum.delta.opened,
		(unsigned long long)sum.delta.accepted, (unsigned long long)sum.delta.closed,
		(unsigned long long)sum.delta.tw_entered, sum.truth.state[CS_TCP_ESTABLISHED],
		sum.truth.state[CS_TCP_TIME_WAIT], sum.truth.orphan, "-");
	free(procs);
}

void untraced_line(char *line, size_t len, const struct untraced_acceptor *u)
{
	int used;

	used = snprintf(line, len, "listener %s of PID %d (%s) is held by %u process%s not "
			"traced (%s", u->listener, u->pid, u->comm, u->nothers,
			u->nothers == 1 ? "" : "es", u->other_comm);
	for (uint32_t k = 0; k < u->nothers && k < UNTRACED_PIDS_SHOWN && used < (int)len; k++)
		used += snprintf(line + used, len - used, " %d", u->others[k]);
	if (used < (int)len)
		snprintf(line + used, len - used, "%s): the connections they accept are not "
			 "counted; trace them with --children or -p",
			 u->nothers > UNTRACED_PIDS_SHOWN ? " ..." : "");
}

void format_untraced_text(FILE *out, const struct untraced_acceptor *u, size_t n)
{
	char line[512];

	for (size_t i = 0; i < n; i++) {
		untraced_line(line, sizeof(line), &u[i]);
		text_wrap(out, "WARNING: ", "  ", line);
	}
}

static void text_states(FILE *out, const char *label, const uint32_t *state, uint32_t orphan)
{
	bool any = false;

	fprintf(out, "  %-13s", label);
	for (int i = 0; i < TCP_STATE_ORDER_LEN; i++) {
		uint32_t v = state[tcp_state_order[i]];

		if (v) {
			fprintf(out, " %s %u", tcp_state_name(tcp_state_order[i]), v);
			any = true;
		}
	}
	if (orphan)
		fprintf(out, " (orphan %u)", orphan);
	fprintf(out, "%s\n", any ? "" : " none");
}

/* The run's rate: per second of its load (an idle lead-in or tail
 * does not dilute it). */
static double per_s(uint64_t n, const struct run_info *run)
{
	double s = run->load_s > 0 ? run->load_s : run->elapsed_s;

	return s > 0 ? n / s : 0;
}

/* How the run counted fds: every output says it. */
static const char *fd_mode(const struct run_info *run)
{
	return run->fds.listing_only ? "listing" : run->fds.procs ? "sites" : "off";
}

static const char *fd_source(const struct run_info *run)
{
	if (run->fds.listing_only)
		return "fd counts, growth and ages from /proc/PID/fd listings each interval, no "
		       "fd syscall tracing; leak sites need attach --fd-sites";
	if (run->fds.procs)
		return "fd counts from /proc/PID/fd listings; fd events and leak sites from "
		       "syscall tracepoints (--fd-sites)";
	return "fds not counted (--no-fd)";
}

/* Connections opened / accepted / closed, then failures: received and sent
 * resets apart (the doctor's findings speak of either). */
static void text_conns(FILE *out, const struct proc_counters *t, const struct run_info *run)
{
	/* Busy processes' figures run past 80 columns: wrapped under them. */
	text_wrapf(out, "  connections   ", FIGURES_INDENT,
		   "opened %llu (%.1f/s), accepted %llu (%.1f/s), closed %llu",
		   (unsigned long long)t->opened, per_s(t->opened, run),
		   (unsigned long long)t->accepted, per_s(t->accepted, run),
		   (unsigned long long)t->closed);
	if (t->connect_failed || t->resets || t->resets_sent)
		text_wrapf(out, "  failures      ", FIGURES_INDENT,
			   "connect failed %llu, resets received %llu, sent %llu",
			   (unsigned long long)t->connect_failed,
			   (unsigned long long)t->resets, (unsigned long long)t->resets_sent);
	if (t->never_accepted)
		text_wrapf(out, "  never accepted ", FIGURES_INDENT,
			   "%llu handshakes completed, ended in the accept queue before accept()",
			   (unsigned long long)t->never_accepted);
}

static void text_tw(FILE *out, const struct proc_counters *t, uint64_t live,
		    const struct run_info *run)
{
	char rest[128], unseen[48] = "";

	if (t->tw_end_unseen)
		snprintf(unseen, sizeof(unseen), ", end unseen %llu",
			 (unsigned long long)t->tw_end_unseen);
	text_wrapf(out, "  TIME_WAIT     ", FIGURES_INDENT,
		   "entered %llu (%.1f/s), live %llu, expired %llu, ended early %llu%s",
		   (unsigned long long)t->tw_entered, per_s(t->tw_entered, run),
		   (unsigned long long)live, (unsigned long long)t->tw_expired,
		   (unsigned long long)t->tw_killed, unseen);
	if (tw_balance_rest(rest, sizeof(rest), t, live))
		fprintf(out, "  %-13s %s\n", "", rest);
	if (t->tw_not_made)
		fprintf(out, "  %-13s %llu clean closes (bucket table full: "
			     "net.ipv4.tcp_max_tw_buckets)\n", "TIME_WAIT not made",
			(unsigned long long)t->tw_not_made);
}

static void text_proc(FILE *out, const struct proc_books *p, const struct run_info *run)
{
	bool gap;

	fprintf(out, "\nPID %d (%s)%s%s\n", p->pid, p->comm, p->target ? "" : " child",
		p->exited ? " exited during the run" : "");
	if (p->joined_ns && !p->target)
		fprintf(out, "  joined at the start: a descendant of a target (--children)\n");
	else if (p->joined_ns)
		fprintf(out, "  joined the targets %.1f s into the run (matched %s)\n",
			(p->joined_ns - p->t0_ns) / 1e9,
			run->cgroup_path ? "--comm/--cgroup" : "--comm");
	text_conns(out, &p->total, run);
	text_tw(out, &p->total, p->truth.state[CS_TCP_TIME_WAIT], run);
	text_states(out, "sockets now", p->truth.state, p->truth.orphan);
	if (p->seeded)
		fprintf(out, "  %-13s %u socket%s (from the start-up snapshot)\n",
			"held at start", p->seeded, p->seeded == 1 ? "" : "s");
	gap = format_tw_text(out, p, &run->tw);
	format_reuse_text(out, p, &run->tw, gap);
	if (fd_report_proc(&run->fds, p->pid))
		format_fd_brief(out, fd_report_proc(&run->fds, p->pid), run->tw.color);
	format_quic_text(out, run->quic, p->pid, &run->tw);
}

static void text_group_states(FILE *out, const struct proc_group *g)
{
	uint32_t st[CS_TCP_MAX_STATES];

	for (int s = 0; s < CS_TCP_MAX_STATES; s++)
		st[s] = g->state[s] > UINT32_MAX ? UINT32_MAX : g->state[s];
	text_states(out, "sockets now", st, g->orphan > UINT32_MAX ? UINT32_MAX : g->orphan);
}

/* One line of sums: "what" processes folded. Seven-digit sums (a day of
 * PostgreSQL backends) ran it to 83 columns: wrapped under the figures. */
static void text_sums(FILE *out, const char *label, const struct proc_group *g)
{
	const struct proc_counters *t = &g->total;
	char first[32];

	snprintf(first, sizeof(first), "  %-13s ", label);
	text_wrapf(out, first, FIGURES_INDENT, "opened %llu, accepted %llu, closed %llu, "
		   "TIME_WAIT %llu", (unsigned long long)t->opened,
		   (unsigned long long)t->accepted, (unsigned long long)t->closed,
		   (unsigned long long)t->tw_entered);
}

/* A group: its sums, the spread over its members, its busiest members one
 * line each, and a line for the members folded, so the group's sums are
 * its rows' sums. */
static void text_group(FILE *out, const struct proc_group *g, const struct run_info *run)
{
	struct proc_group folded = { 0 };
	char n[32], ex[32], what[64], role[96];
	size_t shown = g->n < PROC_VIEW_MEMBERS ? g->n : PROC_VIEW_MEMBERS;

	/* One process: no spread, no members to fold. */
	if (g->n == 1) {
		const struct proc_books *p = g->members[0];

		fprintf(out, "\nPID %d (%s)%s%s\n", p->pid, p->comm, p->target ? "" : " child",
			p->exited ? " exited during the run" : "");
		text_conns(out, &p->total, run);
		text_tw(out, &p->total, p->truth.state[CS_TCP_TIME_WAIT], run);
		return;
	}
	fprintf(out, "\n%s x%s (%s", g->comm, proc_view_count(n, sizeof(n), g->n),
		proc_group_role(role, sizeof(role), g));
	if (g->exited)
		fprintf(out, "; %s exited during the run", proc_view_count(ex, sizeof(ex), g->exited));
	fprintf(out, ")\n");
	text_conns(out, &g->total, run);
	text_wrapf(out, "  per process   ", FIGURES_INDENT, "connections (opened + accepted) "
		   "min %llu, median %llu, max %llu", (unsigned long long)g->conns_min,
		   (unsigned long long)g->conns_p50, (unsigned long long)g->conns_max);
	text_tw(out, &g->total, g->state[CS_TCP_TIME_WAIT], run);
	text_group_states(out, g);
	fprintf(out, "  %-13s %7s %9s %9s %9s %9s\n", "busiest", "PID", "opened", "accepted",
		"closed", "TIME_WAIT");
	for (size_t i = 0; i < g->n; i++) {
		const struct proc_books *p = g->members[i];
		const struct proc_counters *t = &p->total;

		if (i >= shown) {
			folded.n++;
			folded.total.opened += t->opened;
			folded.total.accepted += t->accepted;
			folded.total.closed += t->closed;
			folded.total.tw_entered += t->tw_entered;
			continue;
		}
		fprintf(out, "  %-13s %7d %9llu %9llu %9llu %9llu%s\n", "", p->pid,
			(unsigned long long)t->opened, (unsigned long long)t->accepted,
			(unsigned long long)t->closed, (unsigned long long)t->tw_entered,
			p->exited ? " exited" : "");
	}
	if (folded.n) {
		snprintf(what, sizeof(what), "%s more", proc_view_count(n, sizeof(n), folded.n));
		fprintf(out, "  %-21s %9llu %9llu %9llu %9llu\n", what,
			(unsigned long long)folded.total.opened,
			(unsigned long long)folded.total.accepted,
			(unsigned long long)folded.total.closed,
			(unsigned long long)folded.total.tw_entered);
	}
}

/* Many processes: the busiest targets in full, then groups, then one line
 * for the groups not shown; the first line gives the sums of all, so
 * every figure below is a part of it. */
static void text_folded(FILE *out, const struct proc_view *v, const struct run_info *run)
{
	char n[32], g[32];

	fprintf(out, "\n%s processes in %s groups by name and parent (%zu in full, %zu "
		     "group%s shown)\n", proc_view_count(n, sizeof(n), v->nall),
		proc_view_count(g, sizeof(g), v->ngroups + v->nsingles), v->nsingles, v->nshown,
		v->nshown == 1 ? "" : "s");
	text_sums(out, "all of them", &v->sum);
	for (size_t i = 0; i < v->nsingles; i++)
		text_proc(out, v->singles[i], run);
	for (size_t i = 0; i < v->nshown; i++)
		text_group(out, &v->groups[i], run);
	if (v->ngroups > v->nshown) {
		fprintf(out, "\nother: %s processes in %zu more groups (the JSON report has each)\n",
			proc_view_count(n, sizeof(n), v->rest.n), v->ngroups - v->nshown);
		text_sums(out, "folded", &v->rest);
	}
}

void format_report_text(FILE *out, const struct agg *a, const struct run_info *run)
{
	uint64_t lost = run->stats[CS_STAT_RB_LOST], full = run->stats[CS_STAT_OWNER_FULL];
	char line[256], src[128];
	struct proc_view v;

	/* Losses first: nobody reads a count as exact past this line. */
	fputc('\n', out);
	format_losses_headline(out, "", &run->losses);
	fprintf(out, "connscope attach: %.1f s (%s), interval %g s%s\nhook: %s\n",
		run->elapsed_s, run->end_reason, run->interval_s,
		run->follow_children ? ", following children" : "", run->hook);
	if (run->io_hook)
		fprintf(out, "io: %s\n", run->io_hook);
	/* Where owners are not on the socket (before 6.3, --per-transition)
	 * the accept hook is what tells a 6.1 reader what runs for the
	 * machine's accepts (JSON run.accept_hook, the HTML footer). */
	if (run->accept_hook)
		fprintf(out, "accept: %s\n", run->accept_hook);
	/* Sends counted at tcp_sendmsg_locked are found at a socket's next
	 * look, and for a connection still open at the end that is the
	 * birth pass: where one missed a namespace, the live io read there
	 * lacks the sends since the last look (and a request on each idle
	 * one). Under sock_send_length it was current; only births lagged. */
	if (a->birth_pass_failed && run->io_hook && strstr(run->io_hook, "tcp_sendmsg_locked"))
		fprintf(out, "  %llu birth passes missed a namespace: connections still open\n"
			     "  there lack the sends since their last look (bytes, requests low)\n",
			(unsigned long long)a->birth_pass_failed);
	if (run->tw_method)
		fprintf(out, "TIME_WAIT: %s\n", run->tw_method);
	if (run->records)
		fprintf(out, "records: %s\n", run->records);
	if (run->container)
		fprintf(out, "container: %s (id %.12s)\n", run->container,
			run->container_id ? run->container_id : "");
	format_cgroup_text(out, run->cgroup_path, &run->cgroup);
	if (run->pidns_child)
		fprintf(out, "pids: those of the agent's pid namespace (pid:[%u]); processes "
			     "outside it cannot be seen from there\n", run->pidns_ino);
	/* Connections nobody here counts: before the numbers they are missing
	 * from. */
	format_untraced_text(out, run->untraced, run->nuntraced);
	/* What to act on first, before any number. */
	format_findings_section(out, a, run);
	format_unavailable_text(out, run->features);
	if (proc_view_build(&v, a))
		fprintf(out, "\nprocesses: cannot list them (out of memory)\n");
	else if (v.folded)
		text_folded(out, &v, run);
	else
		for (size_t i = 0; i < v.nall; i++)
			text_proc(out, v.all[i], run);
	proc_view_free(&v);
	fprintf(out, "\nunattributed (no owning file, not seen being made by this run)\n");
	text_states(out, "sockets now", a->unattributed.state, a->unattributed.orphan);
	if (run->limits)
		format_limits_text(out, run->limits, run_census_short(run));
	fprintf(out, "\n");
	snprintf(line, sizeof(line), "counters from BPF events; \"live\" and \"sockets now\" from "
		 "%s + /proc/PID/fd at the end", run_census_source(run, src, sizeof(src)));
	text_wrap(out, "sources: ", "  ", line);
	if (run->fds.listing_only)
		fprintf(out, "fds (listing): counts, growth and ages from /proc/PID/fd listings "
			     "each\n  interval, no fd syscall tracing; leak sites need attach "
			     "--fd-sites\n");
	else if (run->fds.procs)
		fprintf(out, "fds (sites): counts from /proc/PID/fd listings; events and leak "
			     "sites\n  from syscall tracepoints (--fd-sites)\n");
	else
		fprintf(out, "fds (off): not counted (--no-fd)\n");
	fprintf(out, "agent: %llu events, %llu lost, %llu owner-map full\n",
		(unsigned long long)run->stats[CS_STAT_EVENTS], (unsigned long long)lost,
		(unsigned long long)full);
	/* What the TIME_WAIT lines above may leave out, named. */
	if (a->tw_entered_during_dump || a->tw_gone_unknown)
		fprintf(out, "agent: TIME_WAIT entered while a socket dump ran %llu (live, not in "
			     "it),\n  ended unseen %llu\n",
			(unsigned long long)a->tw_entered_during_dump,
			(unsigned long long)a->tw_gone_unknown);
	format_cost_text(out, run->doctor ? &run->doctor->cost : NULL, a);
	format_quic_agent_text(out, run->quic);
	format_losses_text(out, &run->losses);
	if (a->mismatch_last)
		fprintf(out, "books vs kernel: DISAGREE by %llu sockets at the end (largest gap "
			     "%llu)\n", (unsigned long long)a->mismatch_last,
			(unsigned long long)a->mismatch_max);
	else
		fprintf(out, "books vs kernel: agree at the end (largest gap during the run %llu)\n",
			(unsigned long long)a->mismatch_max);
	if (lost)
		text_wrapf(out, "WARNING: ", "  ", "%llu events were lost (ring buffer full): event "
			   "counts are low; raise --ringbuf-size", (unsigned long long)lost);
}

static void json_counters(struct json *j, const struct proc_counters *c)
{
	json_kv_uint(j, "connections_opened", c->opened);
	json_kv_uint(j, "connections_accepted", c->accepted);
	/* Handshakes completed that ended in the accept queue: not accepted. */
	json_kv_uint(j, "connections_never_accepted", c->never_accepted);
	/* In opened or accepted: ended with no program run, no record came. */
	json_kv_uint(j, "connections_end_not_run", c->ends_unrun);
	json_kv_uint(j, "connections_closed", c->closed);
	json_kv_uint(j, "connect_failed", c->connect_failed);
	json_kv_uint(j, "resets", c->resets);	/* received */
	json_kv_uint(j, "resets_sent", c->resets_sent);
	json_kv_uint(j, "time_wait_entered", c->tw_entered);
	json_kv_uint(j, "orphaned", c->orphaned);
	json_kv_uint(j, "closed_by_this_side", c->closed_active);
	json_kv_uint(j, "closed_by_peer", c->closed_passive);
	json_kv_uint(j, "time_wait_expired", c->tw_expired);
	json_kv_uint(j, "time_wait_ended_early", c->tw_killed);
	json_kv_uint(j, "time_wait_end_unseen", c->tw_end_unseen);
	/* Not in time_wait_entered: the kernel made none (table full). */
	json_kv_uint(j, "time_wait_not_made_table_full", c->tw_not_made);
}

static void json_states(struct json *j, const uint32_t *state, uint32_t orphan)
{
	json_key(j, "tcp");
	json_object_begin(j);
	for (int i = 0; i < TCP_STATE_ORDER_LEN; i++)
		json_kv_uint(j, tcp_state_name(tcp_state_order[i]), state[tcp_state_order[i]]);
	json_kv_uint(j, "orphan", orphan);
	json_object_end(j);
}

/* The sums over every process, the same figures as each process's totals:
 * what the text report's "all of them" line says. */
static void json_process_totals(struct json *j, const struct agg *a)
{
	struct proc_view v;

	if (proc_view_build(&v, a))
		return;
	json_key(j, "process_totals");
	json_object_begin(j);
	json_kv_uint(j, "processes", v.sum.n);
	json_kv_uint(j, "exited", v.sum.exited);
	json_counters(j, &v.sum.total);
	json_object_end(j);
	proc_view_free(&v);
}

void format_report_json(FILE *out, const struct agg *a, const struct run_info *run)
{
	size_t n;
	/* Every process, however many: written as it goes, one at a time. */
	const struct proc_books **procs = proc_view_list(a, &n);
	char line[256], src[128];
	struct hmap tw_by_pid;
	bool tw_counted;
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_key(&j, "run");
	json_object_begin(&j);
	json_kv_string(&j, "command", run->doctor && run->doctor->command ? run->doctor->command : "attach");
	json_kv_string(&j, "hook", run->hook);
	if (run->io_hook)
		json_kv_string(&j, "io_hook", run->io_hook);
	if (run->accept_hook)
		json_kv_string(&j, "accept_hook", run->accept_hook);
	json_kv_string(&j, "time_wait_method", run->tw_method ? run->tw_method : "");
	json_kv_string(&j, "records", run->records ? run->records : "");
	json_kv_double(&j, "duration_s", run->duration_s, 3);
	json_kv_double(&j, "elapsed_s", run->elapsed_s, 3);
	json_kv_double(&j, "load_s", run->load_s > 0 ? run->load_s : run->elapsed_s, 3);
	json_kv_double(&j, "interval_s", run->interval_s, 3);
	json_kv_bool(&j, "follow_children", run->follow_children);
	json_key(&j, "comm");
	json_array_begin(&j);
	for (size_t i = 0; i < run->ncomms; i++)
		json_string(&j, run->comms[i]);
	json_array_end(&j);
	json_cgroup(&j, run->cgroup_path, &run->cgroup);
	/* --container: the one asked for; null: none. */
	json_key(&j, "container");
	if (run->container) {
		json_object_begin(&j);
		json_kv_string(&j, "name", run->container);
		json_kv_string(&j, "id", run->container_id ? run->container_id : "");
		json_object_end(&j);
	} else {
		json_null(&j);
	}
	json_key(&j, "pid_namespace");
	json_object_begin(&j);
	json_kv_bool(&j, "child", run->pidns_child);
	json_kv_uint(&j, "inode", run->pidns_ino);
	json_object_end(&j);
	json_kv_string(&j, "fd_mode", fd_mode(run));
	json_kv_string(&j, "end_reason", run->end_reason);
	json_unavailable(&j, run->features);
	/* How many: a reader checks the array against it. */
	json_kv_uint(&j, "processes", n);
	json_kv_bool(&j, "processes_complete", n == a->procs.count);
	json_key(&j, "untraced_acceptors");
	json_array_begin(&j);
	for (size_t i = 0; i < run->nuntraced; i++) {
		const struct untraced_acceptor *u = &run->untraced[i];

		json_object_begin(&j);
		json_kv_string(&j, "listener", u->listener);
		json_kv_int(&j, "pid", u->pid);
		json_kv_string(&j, "comm", u->comm);
		json_kv_uint(&j, "untraced_processes", u->nothers);
		json_key(&j, "untraced_pids");
		json_array_begin(&j);
		for (uint32_t k = 0; k < u->nothers && k < UNTRACED_PIDS_SHOWN; k++)
			json_int(&j, u->others[k]);
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_findings_section(&j, a, run);

	/* Each process's TIME_WAIT in the books from one pass over the
	 * table, not a pass a process: a forked server's hundreds of
	 * processes times its tens of thousands of TIME_WAIT (150 x 30,000:
	 * 13-19 ms -> 0.6-0.9, aggbench mem's twcount). Up to 4 processes
	 * a pass each costs no more than the one pass's hashing of holders
	 * that take turns. */
	tw_counted = n > 4 && !agg_tw_counts(a, &tw_by_pid);
	json_key(&j, "processes");
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		const struct proc_books *p = procs[i];
		const uint32_t *tw_held = tw_counted ? hmap_get(&tw_by_pid, &p->pid) : NULL;

		json_object_begin(&j);
		json_kv_int(&j, "pid", p->pid);
		json_kv_string(&j, "comm", p->comm);
		/* Its container's name (else short id) and pod UID; null: none. */
		json_key(&j, "container");
		if (p->container[0])
			json_string(&j, p->container);
		else
			json_null(&j);
		json_key(&j, "pod_uid");
		if (p->pod_uid[0])
			json_string(&j, p->pod_uid);
		else
			json_null(&j);
		json_kv_bool(&j, "target", p->target);
		json_kv_bool(&j, "exited", p->exited);
		/* Its parent (the reports' groups); null: not known. */
		json_key(&j, "ppid");
		if (p->ptgid)
			json_uint(&j, p->ptgid);
		else
			json_null(&j);
		/* With the pid, the process: /proc/PID/stat field 22's unit. */
		json_kv_uint(&j, "start_time_ticks", p->start_ns / CS_TICK_NS);
		/* Joined during the run (--comm, --cgroup): when; null: at start. */
		json_key(&j, "joined_s");
		if (p->joined_ns)
			json_double(&j, (p->joined_ns - p->t0_ns) / 1e9, 3);
		else
			json_null(&j);
		json_key(&j, "totals");
		json_object_begin(&j);
		json_counters(&j, &p->total);
		json_object_end(&j);
		json_kv_uint(&j, "time_wait", p->truth.state[CS_TCP_TIME_WAIT]);
		/* The books' own: entered = expired + ended early + end
		 * unseen + this, whatever the last dump saw. */
		json_kv_uint(&j, "time_wait_in_books", !tw_counted ? agg_tw_count(a, p->pid) :
						       tw_held ? *tw_held : 0);
		json_kv_uint(&j, "held_at_start", p->seeded);
		json_states(&j, p->truth.state, p->truth.orphan);
		json_tw(&j, p, run->tw.top ? run->tw.top : 10);
		json_reuse(&j, p, run->tw.top ? run->tw.top : 10);
		if (fd_report_proc(&run->fds, p->pid)) {
			json_key(&j, "fds");
			json_object_begin(&j);
			json_fdleak_proc(&j, fd_report_proc(&run->fds, p->pid));
			json_object_end(&j);
		}
		json_quic_proc(&j, run->quic, p->pid);
		json_key(&j, "intervals");
		json_array_begin(&j);
		for (size_t k = 0; k < p->nrows; k++) {
			const struct interval_row *r = &p->rows[k];

			json_object_begin(&j);
			json_kv_double(&j, "t", r->t_ns / 1e9, 3);
			json_counters(&j, &r->delta);
			json_states(&j, r->truth.state, r->truth.orphan);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	free(procs);
	if (tw_counted)
		hmap_free(&tw_by_pid);
	json_process_totals(&j, a);

	json_key(&j, "unattributed");
	json_object_begin(&j);
	json_states(&j, a->unattributed.state, a->unattributed.orphan);
	json_object_end(&j);

	if (run->limits)
		json_limits(&j, run->limits);

	json_key(&j, "agent");
	json_object_begin(&j);
	json_kv_uint(&j, "events", run->stats[CS_STAT_EVENTS]);
	json_kv_uint(&j, "events_lost", run->stats[CS_STAT_RB_LOST]);
	json_kv_uint(&j, "owner_map_full", run->stats[CS_STAT_OWNER_FULL]);
	json_kv_uint(&j, "time_wait_map_full", run->stats[CS_STAT_TW_FULL]);
	json_kv_uint(&j, "accept_unresolved", run->stats[CS_STAT_ACCEPT_MISS]);
	json_kv_uint(&j, "children_followed", run->stats[CS_STAT_FORKS]);
	/* Targets (children too) taken out of the kernel's filter at exit. */
	json_kv_uint(&j, "targets_left_at_exit", run->stats[CS_STAT_TARGETS_GONE]);
	json_kv_uint(&j, "unknown_owner_events", a->unknown_events);
	json_kv_uint(&j, "time_wait_reused", a->tw_reused);
	json_kv_uint(&j, "time_wait_end_unseen", a->tw_gone_unknown);
	json_kv_uint(&j, "time_wait_entered_during_dump", a->tw_entered_during_dump);
	/* The run's last census's second look (sock_diag's exact look): those
	 * looked at, and of them those the kernel still had. */
	json_kv_uint(&j, "time_wait_looked", a->tw_looked);
	json_kv_uint(&j, "time_wait_looked_there", a->tw_looked_there);
	json_kv_uint(&j, "conns_replaced", a->conns_replaced);
	/* Children whose parent was not kept (AGG_MAX_PARENT_NOTES waiting):
	 * grouped apart, "parent unknown". */
	json_kv_uint(&j, "parents_not_kept", a->parents_dropped);
	/* Socket-storage mode: births the birth pass told after the socket's
	 * own end record (dropped), and passes that missed a namespace. */
	json_kv_uint(&j, "births_late", a->births_late);
	/* Of agent.losses.tcp_ends_not_run, the connections a birth record
	 * had counted (opened or accepted from it, not again at the loss). */
	json_kv_uint(&j, "ends_not_run_born", a->ends_unrun_born);
	json_kv_uint(&j, "birth_pass_failed", a->birth_pass_failed);
	json_kv_uint(&j, "time_wait_timer_unmatched", run->stats[CS_STAT_TW_UNMATCHED]);
	json_kv_uint(&j, "time_wait_timer_strays", a->tw_timer_strays);
	json_kv_uint(&j, "stale_owners_dropped", run->stats[CS_STAT_STALE_OWNER]);
	json_kv_uint(&j, "state_changes_nested", run->stats[CS_STAT_NESTED]);
	json_kv_uint(&j, "reconciles", a->reconciles);
	json_kv_uint(&j, "books_mismatch_last", a->mismatch_last);
	json_kv_uint(&j, "books_mismatch_max", a->mismatch_max);
	json_quic_agent(&j, run->quic);
	json_losses(&j, &run->losses);
	json_cost(&j, run->doctor ? &run->doctor->cost : NULL, a);
	json_object_end(&j);

	json_key(&j, "sources");
	json_object_begin(&j);
	json_kv_string(&j, "totals", "BPF events (inet_sock_set_state, accept exit)");
	snprintf(line, sizeof(line), "%s + /proc/PID/fd at the end; TIME_WAIT and orphans joined "
		 "to owners by 4-tuple", run_census_source(run, src, sizeof(src)));
	json_kv_string(&j, "tcp", line);
	json_kv_uint(&j, "tcp_reads_walked", run->census_walked);
	json_kv_uint(&j, "tcp_reads_dumped", run->census_dumped);
	json_kv_string(&j, "fds", fd_source(run));
	if (run->quic)
		json_kv_string(&j, "quic", "wire: cgroup_skb datagram headers; ngtcp2: uprobes "
					   "on libngtcp2; kernel: inet_sock_set_state, protocol 261");
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}
