// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The doctor's rules: pure functions of struct dr_facts. Each rule turns
 * the numbers of one concern into findings; the thresholds are in
 * doctor.h beside their reasons, and docs/doctor.md
 * lists them for users. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "doctor.h"
#include "tcp_books.h"
#include "doctor_fixes.h"
#include "doctor_rules.h"

const char *const doctor_rule_ids[] = {
	"agent_cost", "fd_limit", "port_exhaustion", "time_wait", "listen_backlog",
	"connect_failures", "resets", "fd_leak", "orphans", "churn",
};
const size_t doctor_nrules = sizeof(doctor_rule_ids) / sizeof(doctor_rule_ids[0]);

const char *dr_severity_name(int severity)
{
	return severity >= DR_CRITICAL ? "critical" : severity == DR_WARNING ? "warning" : "info";
}

/* ---- churn: a pool too small ------------------------------------------- */

static void rule_churn(const struct dr_facts *f, struct finding *out, size_t *n, size_t max)
{
	for (size_t i = 0; i < f->nprocs; i++) {
		const struct dr_proc *p = &f->procs[i];

		for (size_t k = 0; k < p->neps; k++) {
			const struct dr_endpoint *e = &p->eps[k];
			struct finding *x;

			/* Connects that failed never carried a request: not a
			 * pool's churn (connect_failures speaks of them). */
			if (e->listen || !e->live_peak || !e->requests ||
			    e->opened < DR_CHURN_MIN_CONNS + e->refused + e->timeouts + e->failed_other)
				continue;
			if (!dr_churn_costs(e->opened, e->requests, e->live_peak))
				continue;
			x = dr_add(out, n, max, "churn", DR_WARNING, p, e->label);
			if (!x)
				return;
			x->connections = e->opened;
			x->requests = e->requests;
			x->concurrency = e->live_peak;
			/* The sentence attach printed before the doctor existed:
			 * scripts and the HTML report match it. */
			dr_say(x->verdict, sizeof(x->verdict),
			    "pool to %s churns: %llu connections for %llu requests at concurrency "
			    "%u; a pool that keeps >= %u idle connections would open %u", e->label,
			    (unsigned long long)e->opened, (unsigned long long)e->requests,
			    e->live_peak, e->live_peak, e->live_peak);
			{
				char generic[256];

				dr_say(generic, sizeof(generic),
				    "keep at least %u idle connection%s to %s in the client's pool "
				    "and reuse them, and make sure the server keeps connections "
				    "open", e->live_peak, e->live_peak == 1 ? "" : "s", e->label);
				dr_fix_for_pool(f, p, e->label, e->live_peak, generic, x->fix,
					     sizeof(x->fix));
			}
			dr_ev(x, "connections_opened", e->opened, "connections", DR_SRC_BPF);
			dr_ev(x, "requests", e->requests, "requests", DR_SRC_BPF);
			dr_ev(x, "peak_concurrent", e->live_peak, "connections", DR_SRC_BPF);
			dr_ev(x, "requests_per_connection", (double)e->requests / e->opened,
			      "requests", DR_SRC_DERIVED);
			dr_ev(x, "connections_per_slot", (double)e->opened / e->live_peak,
			      "connections", DR_SRC_DERIVED);
			dr_ev(x, "handshake_share", 100 * dr_handshake_share(e->opened, e->requests),
			      "%", DR_SRC_DERIVED);
			if (e->tw_entered)
				dr_ev(x, "time_wait_entered", e->tw_entered, "connections", DR_SRC_BPF);
			if (f->window_s > 0)
				dr_ev(x, "new_connections_per_s", e->opened / f->window_s, "/s",
				      DR_SRC_DERIVED);
			dr_ev(x, "right_sized_pool_would_open", e->live_peak, "connections",
			      DR_SRC_DERIVED);
		}
	}
}

/* ---- fd leak -------------------------------------------------------------- */

static void rule_fd_leak(const struct dr_facts *f, struct finding *out, size_t *n, size_t max)
{
	for (size_t i = 0; i < f->nprocs; i++) {
		const struct dr_proc *p = &f->procs[i];
		bool soon;
		struct finding *x;
		char when[32] = "", lim[32] = "unlimited";

		/* Without --fd-sites (the default: no fd syscall tracepoint
		 * runs) the /proc listings show the growth but no site: the
		 * finding says so and asks for them. */
		if (!p->fd_known || p->fd_slope < DR_LEAK_SLOPE ||
		    (p->fd_sites && p->leak_old < DR_LEAK_MIN_OLD) ||
		    p->fd_now < p->fd_start + DR_LEAK_MIN_GROWTH)
			continue;
		/* A leak still grows in the second half of the listings (a
		 * steady one by half its growth): a count that rose then held
		 * is a program opening its fds as it starts. Before, a Node
		 * client listed just after its exec (7 fds) and then with its
		 * runtime's and its 8 in flight (30) was told fd_leak on a run
		 * of 1.5 s (97_clients, under load). Three listings at least:
		 * two cannot tell the two apart; nor can listings over less
		 * than DR_LEAK_MIN_SPAN_S, half of which a start-up fills
		 * (a Node client living 1.2 s: 8, 8, 30, 33). */
		if (p->fd_listings < 3 || p->fd_span_s < DR_LEAK_MIN_SPAN_S ||
		    4 * ((int64_t)p->fd_now - p->fd_mid) < (int64_t)p->fd_now - p->fd_start)
			continue;
		soon = p->fd_seconds_to_limit >= 0 && p->fd_seconds_to_limit < DR_LEAK_CRIT_S;
		x = dr_add(out, n, max, "fd_leak", soon ? DR_CRITICAL : DR_WARNING, p, NULL);
		if (!x)
			return;
		if (p->fd_seconds_to_limit >= 0)
			dr_human_s(when, sizeof(when), p->fd_seconds_to_limit);
		if (p->fd_limit != UINT64_MAX)
			snprintf(lim, sizeof(lim), "%llu", (unsigned long long)p->fd_limit);
		if (p->fd_sites)
			dr_say(x->verdict, sizeof(x->verdict),
			    "PID %d (%s) leaks file descriptors: %u open now, up from %u (%.1f/s), "
			    "%u of them made at %s and open longer than %.0f s%s%s%s", p->pid,
			    p->comm, p->fd_now, p->fd_start, p->fd_slope, p->leak_old,
			    p->leak_site[0] ? p->leak_site : "one site", p->leak_age_s,
			    p->fd_seconds_to_limit >= 0 ? "; it reaches its limit of " : "",
			    p->fd_seconds_to_limit >= 0 ? lim : "",
			    p->fd_seconds_to_limit >= 0 ? " in " : "");
		else
			dr_say(x->verdict, sizeof(x->verdict),
			    "PID %d (%s) may leak file descriptors: %u open now, up from %u "
			    "(%.1f/s; /proc/PID/fd listings, no leak sites traced)%s%s%s", p->pid,
			    p->comm, p->fd_now, p->fd_start, p->fd_slope,
			    p->fd_seconds_to_limit >= 0 ? "; it reaches its limit of " : "",
			    p->fd_seconds_to_limit >= 0 ? lim : "",
			    p->fd_seconds_to_limit >= 0 ? " in " : "");
		if (p->fd_seconds_to_limit >= 0) {
			size_t used = strlen(x->verdict);

			snprintf(x->verdict + used, sizeof(x->verdict) - used, "%s", when);
		}
		if (p->fd_sites)
			dr_say(x->fix, sizeof(x->fix),
			    "close what %s opens on every path (error and early-return paths "
			    "too: defer/finally/RAII); raising ulimit -n or LimitNOFILE= only "
			    "postpones the failure", p->leak_site[0] ? p->leak_site : "that site");
		else
			dr_say(x->fix, sizeof(x->fix),
			    "run connscope doctor -p %d --fd-sites to trace the fd syscalls and "
			    "name the code site that keeps them open (it costs more while it "
			    "runs), then close what it opens on every path; raising ulimit -n or "
			    "LimitNOFILE= only postpones the failure", p->pid);
		dr_ev(x, "fds_now", p->fd_now, "fds", DR_SRC_PROCFD);
		dr_ev(x, "fds_at_start", p->fd_start, "fds", DR_SRC_PROCFD);
		dr_ev(x, "fd_growth_per_s", p->fd_slope, "/s", DR_SRC_PROCFD);
		if (p->fd_sites)
			dr_ev(x, "old_fds_at_top_site", p->leak_old, "fds", DR_SRC_BPF);
		if (p->fd_limit != UINT64_MAX)
			dr_ev(x, "fd_limit", p->fd_limit, "fds", DR_SRC_LIMITS);
		if (p->fd_seconds_to_limit >= 0)
			dr_ev(x, "seconds_to_limit", p->fd_seconds_to_limit, "s", DR_SRC_DERIVED);
	}
}

/* ---- fd limit ------------------------------------------------------------ */

static void rule_fd_limit(const struct dr_facts *f, struct finding *out, size_t *n, size_t max)
{
	for (size_t i = 0; i < f->nprocs; i++) {
		const struct dr_proc *p = &f->procs[i];
		bool limited = p->fd_known && p->fd_limit && p->fd_limit != UINT64_MAX;
		double share = limited ? (double)p->fd_peak / p->fd_limit : 0;
		uint64_t errs = p->fderr_known ? p->emfile + p->enfile : 0;
		uint64_t want;
		struct finding *x;

		if (!errs && share < DR_FDLIM_WARN)
			continue;
		x = dr_add(out, n, max, "fd_limit",
			errs || share >= DR_FDLIM_CRIT ? DR_CRITICAL : DR_WARNING, p, NULL);
		if (!x)
			return;
		/* Room for twice the peak: bursts, and the leak-free growth. */
		want = p->fd_peak * 2 > 1024 ? (uint64_t)p->fd_peak * 2 : 1024;
		if (p->enfile && !p->emfile)
			dr_say(x->verdict, sizeof(x->verdict),
			    "PID %d (%s) could not get file descriptors: the system ran out "
			    "(ENFILE %llu times)", p->pid, p->comm, (unsigned long long)p->enfile);
		else if (errs)
			dr_say(x->verdict, sizeof(x->verdict),
			    "PID %d (%s) ran out of file descriptors: socket/accept/open failed "
			    "%llu times with EMFILE (and %llu with ENFILE); it used %u of its limit "
			    "of %llu", p->pid, p->comm, (unsigned long long)p->emfile,
			    (unsigned long long)p->enfile, p->fd_peak,
			    (unsigned long long)p->fd_limit);
		else
			dr_say(x->verdict, sizeof(x->verdict),
			    "PID %d (%s) is near its file descriptor limit: %u open at the peak of "
			    "%llu allowed (%.0f%%)", p->pid, p->comm, p->fd_peak,
			    (unsigned long long)p->fd_limit, 100 * share);
		if (p->enfile && !p->emfile)
			dr_say(x->fix, sizeof(x->fix),
			    "raise the system-wide limit fs.file-max (sysctl) and look for the "
			    "process that holds most files");
		else
			dr_say(x->fix, sizeof(x->fix),
			    "raise RLIMIT_NOFILE to at least %llu: ulimit -n %llu in the shell "
			    "that starts it, LimitNOFILE=%llu in its systemd unit, nofile in "
			    "/etc/security/limits.conf, docker run --ulimit nofile=%llu:%llu; if "
			    "the count keeps growing, see fd_leak", (unsigned long long)want,
			    (unsigned long long)want, (unsigned long long)want,
			    (unsigned long long)want, (unsigned long long)want);
		if (p->fd_known)
			dr_ev(x, "fds_peak", p->fd_peak, "fds", DR_SRC_PROCFD);
		if (limited) {
			dr_ev(x, "fd_limit", p->fd_limit, "fds", DR_SRC_LIMITS);
			dr_ev(x, "fd_limit_used_peak", 100 * share, "%", DR_SRC_DERIVED);
		}
		if (p->fderr_known) {
			dr_ev(x, "emfile", p->emfile, "errors", DR_SRC_BPFERR);
			dr_ev(x, "enfile", p->enfile, "errors", DR_SRC_BPFERR);
		}
	}
}

/* ---- connect failures and resets ---------------------------------------- */

static void rule_failures(const struct dr_facts *f, struct finding *out, size_t *n, size_t max)
{
	for (size_t i = 0; i < f->nprocs; i++) {
		const struct dr_proc *p = &f->procs[i];

		for (size_t k = 0; k < p->neps; k++) {
			const struct dr_endpoint *e = &p->eps[k];
			uint64_t fails = e->refused + e->timeouts + e->failed_other;
			uint64_t tries = e->opened > fails ? e->opened : fails;
			struct finding *x;

			if (e->listen || fails < DR_FAIL_MIN || fails < DR_FAIL_SHARE * tries)
				continue;
			x = dr_add(out, n, max, "connect_failures",
				fails >= DR_FAIL_CRIT_SHARE * tries ? DR_CRITICAL : DR_WARNING, p,
				e->label);
			if (!x)
				return;
			dr_say(x->verdict, sizeof(x->verdict),
			    "PID %d (%s): %llu of %llu connects to %s failed (%llu refused, %llu "
			    "timed out, %llu other)", p->pid, p->comm, (unsigned long long)fails,
			    (unsigned long long)tries, e->label, (unsigned long long)e->refused,
			    (unsigned long long)e->timeouts, (unsigned long long)e->failed_other);
			if (e->refused >= e->timeouts)
				dr_say(x->fix, sizeof(x->fix),
				    "refused means nothing listens on %s (the server is down, "
				    "restarting, or on another port) or its accept queue is full; "
				    "check the server and its listen backlog (listen_backlog), and "
				    "retry with backoff in the client", e->label);
			else
				dr_say(x->fix, sizeof(x->fix),
				    "timed-out connects mean SYNs went unanswered: a firewall that "
				    "drops, a host that is down, or a server whose backlog is full "
				    "(its ListenOverflows rise); lower the client's connect timeout "
				    "only after finding which");
			dr_ev(x, "connects", tries, "connections", DR_SRC_BPF);
			dr_ev(x, "refused", e->refused, "connections", DR_SRC_BPF);
			dr_ev(x, "timed_out", e->timeouts, "connections", DR_SRC_BPF);
			dr_ev(x, "failed_other", e->failed_other, "connections", DR_SRC_BPF);
		}
	}
}

static void rule_resets(const struct dr_facts *f, struct finding *out, size_t *n, size_t max)
{
	for (size_t i = 0; i < f->nprocs; i++) {
		const struct dr_proc *p = &f->procs[i];

		for (size_t k = 0; k < p->neps; k++) {
			const struct dr_endpoint *e = &p->eps[k];
			uint64_t rst = e->resets_recv + e->resets_sent;
			uint64_t conns = e->opened + e->accepted > rst ? e->opened + e->accepted : rst;
			struct finding *x;

			if (rst < DR_FAIL_MIN || rst < DR_FAIL_SHARE * conns)
				continue;
			x = dr_add(out, n, max, "resets",
				rst >= DR_FAIL_CRIT_SHARE * conns ? DR_CRITICAL : DR_WARNING, p,
				e->label);
			if (!x)
				return;
			dr_say(x->verdict, sizeof(x->verdict),
			    "PID %d (%s): %llu of %llu connections %s %s ended in a reset (%llu "
			    "received from the peer, %llu sent by this side)", p->pid, p->comm,
			    (unsigned long long)rst, (unsigned long long)conns,
			    e->listen ? "on" : "to", e->label, (unsigned long long)e->resets_recv,
			    (unsigned long long)e->resets_sent);
			if (e->resets_sent >= e->resets_recv)
				dr_say(x->fix, sizeof(x->fix),
				    "this side aborts: it closes with unread data in the socket or "
				    "with SO_LINGER {1, 0}; read the peer's data fully before close() "
				    "and do not use SO_LINGER 0 to dodge TIME_WAIT (see time_wait)");
			else
				dr_say(x->fix, sizeof(x->fix),
				    "the peer aborts: check its logs; a pooled connection reset "
				    "when reused means the server's idle timeout is shorter than the "
				    "client's (Go: set http.Transport.IdleConnTimeout below the "
				    "server's keepalive_timeout)");
			dr_ev(x, "connections", conns, "connections", DR_SRC_BPF);
			dr_ev(x, "resets_received", e->resets_recv, "connections", DR_SRC_BPF);
			dr_ev(x, "resets_sent", e->resets_sent, "connections", DR_SRC_BPF);
		}
	}
}

/* ---- listen backlog overflow ---------------------------------------------- */

static const struct dr_proc *proc_of(const struct dr_facts *f, pid_t pid)
{
	for (size_t i = 0; i < f->nprocs; i++)
		if (f->procs[i].pid == pid)
			return &f->procs[i];
	return NULL;
}

static void rule_backlog(const struct dr_facts *f, struct finding *out, size_t *n, size_t max)
{
	for (size_t i = 0; i < f->nlisteners; i++) {
		const struct listen_sample *l = &f->listeners[i];
		const struct netstat_ns *ns = dr_ns_of(f, l->pid);
		const struct dr_proc *p = proc_of(f, l->pid);
		uint64_t ovf = ns ? ns->overflows_last - ns->overflows_first : 0;
		uint64_t drops = ns ? ns->drops_last - ns->drops_first : 0;
		struct endpoint_key k = { .family = l->family, .side = EP_LISTEN,
					  .port = l->port };
		struct finding *x;
		char ep[64];

		if (!l->backlog || l->queue_peak < DR_BACKLOG_SHARE * l->backlog)
			continue;
		memcpy(k.addr, l->addr, sizeof(k.addr));
		endpoint_format(ep, sizeof(ep), &k);
		x = dr_add(out, n, max, "listen_backlog",
			l->queue_peak >= l->backlog && ovf ? DR_CRITICAL : DR_WARNING, p, ep);
		if (!x)
			return;
		if (!p)
			x->pid = l->pid;
		dr_say(x->verdict, sizeof(x->verdict),
		    "PID %d (%s) accepts too slowly on %s: its accept queue reached %u of its "
		    "backlog of %u (full in %u of %u samples) and its network namespace counted "
		    "%llu ListenOverflows and %llu ListenDrops in the window", l->pid,
		    p ? p->comm : "?", ep + strlen("listen "), l->queue_peak, l->backlog, l->samples_full,
		    l->samples, (unsigned long long)ovf, (unsigned long long)drops);
		dr_say(x->fix, sizeof(x->fix),
		    "accept faster (more accepting threads or workers, e.g. nginx "
		    "worker_processes; less work before accept()) and raise the backlog: "
		    "listen(fd, N) / nginx listen ... backlog=N / Go's backlog follows "
		    "net.core.somaxconn, which caps every backlog");
		dr_ev(x, "accept_queue_peak", l->queue_peak, "connections", DR_SRC_SOCKDIAG);
		dr_ev(x, "backlog", l->backlog, "connections", DR_SRC_SOCKDIAG);
		dr_ev(x, "samples_full", l->samples_full, "samples", DR_SRC_SOCKDIAG);
		if (p && p->never_accepted)
			dr_ev(x, "never_accepted", p->never_accepted, "connections", DR_SRC_BPF);
		if (ns) {
			dr_ev(x, "listen_overflows", ovf, "SYNs", DR_SRC_NETSTAT);
			dr_ev(x, "listen_drops", drops, "SYNs", DR_SRC_NETSTAT);
			dr_ev(x, "listen_overflows_peak_interval", ns->overflows_peak_interval,
			      "SYNs", DR_SRC_NETSTAT);
		}
	}
}

/* A listener's clients that completed their handshake and ended (reset,
 * timed out) in its accept queue before accept() took them: the symptom
 * of a slow acceptor even when no queue sample caught it near full. One
 * finding a process, unless rule_backlog already made one for it. */
static void rule_never_accepted(const struct dr_facts *f, struct finding *out, size_t *n,
				size_t max)
{
	size_t made = *n;

	for (size_t i = 0; i < f->nprocs; i++) {
		const struct dr_proc *p = &f->procs[i];
		uint64_t passive = p->accepted + p->never_accepted;
		struct finding *x;
		bool said = false;

		if (p->never_accepted < DR_NEVER_ACCEPTED_MIN ||
		    p->never_accepted < DR_NEVER_ACCEPTED_SHARE * passive)
			continue;
		for (size_t k = 0; k < made; k++)
			said |= out[k].pid == p->pid && !strcmp(out[k].rule, "listen_backlog");
		if (said)
			continue;
		x = dr_add(out, n, max, "listen_backlog", DR_WARNING, p, NULL);
		if (!x)
			return;
		dr_say(x->verdict, sizeof(x->verdict),
		    "PID %d (%s) let %llu of %llu completed handshakes end in its accept queue "
		    "before accept() took them (their clients reset or gave up waiting): it "
		    "accepts too slowly", p->pid, p->comm, (unsigned long long)p->never_accepted,
		    (unsigned long long)passive);
		dr_say(x->fix, sizeof(x->fix),
		    "accept faster (more accepting threads or workers, e.g. nginx "
		    "worker_processes; less work before accept()) and raise the backlog if the "
		    "queue fills: listen(fd, N) / nginx listen ... backlog=N; clients that time "
		    "out sooner than the server accepts see resets");
		dr_ev(x, "never_accepted", p->never_accepted, "connections", DR_SRC_BPF);
		dr_ev(x, "accepted", p->accepted, "connections", DR_SRC_BPF);
	}
}

/* ---- orphan storm ---------------------------------------------------------- */

static void rule_orphans(const struct dr_facts *f, struct finding *out, size_t *n, size_t max)
{
	double host = f->lim_known && f->lim.max_orphans ?
		      (double)f->host_orphan_peak / f->lim.max_orphans : 0;

	for (size_t i = 0; i < f->nprocs; i++) {
		const struct dr_proc *p = &f->procs[i];
		struct finding *x;

		if (p->orphan_peak < DR_ORPHAN_LIVE && p->orphan_long < DR_ORPHAN_LONG_MIN &&
		    !(host >= DR_ORPHAN_HOST_CRIT && p->orphan_peak))
			continue;
		x = dr_add(out, n, max, "orphans", host >= DR_ORPHAN_HOST_CRIT ? DR_CRITICAL :
			DR_WARNING, p, NULL);
		if (!x)
			return;
		dr_say(x->verdict, sizeof(x->verdict),
		    "PID %d (%s) leaves closed connections the kernel cannot finish: %u orphaned "
		    "at the peak (%u now), %llu of them orphaned longer than %d s, so their peers "
		    "never close or never read", p->pid, p->comm, p->orphan_peak, p->orphan_now,
		    (unsigned long long)p->orphan_long, DR_ORPHAN_LONG_MS / 1000);
		dr_say(x->fix, sizeof(x->fix),
		    "find the peers that do not finish the close (ss -o state fin-wait-1 / "
		    "fin-wait-2); net.ipv4.tcp_fin_timeout (now %d s) bounds FIN_WAIT2, "
		    "net.ipv4.tcp_orphan_retries bounds FIN_WAIT1, net.ipv4.tcp_max_orphans "
		    "(now %llu) is the host's cap", f->lim.fin_timeout_s,
		    (unsigned long long)f->lim.max_orphans);
		dr_ev(x, "orphans_peak", p->orphan_peak, "sockets", DR_SRC_SOCKDIAG);
		dr_ev(x, "orphans_now", p->orphan_now, "sockets", DR_SRC_SOCKDIAG);
		dr_ev(x, "orphaned_long", p->orphan_long, "sockets", DR_SRC_BPF);
		dr_ev(x, "passed_through_orphan", p->orphaned, "sockets", DR_SRC_BPF);
		if (f->lim_known && f->lim.max_orphans) {
			dr_ev(x, "host_orphans_peak", f->host_orphan_peak, "sockets", DR_SRC_SOCKSTAT);
			dr_ev(x, "tcp_max_orphans", f->lim.max_orphans, "sockets", DR_SRC_SYSCTL);
		}
	}
}

/* ---- connscope's own cost ------------------------------------------------- */

/* Rules whose verdict rests on a rate or a time, which a workload slowed
 * by the measurement reads off: how soon ports run out, how fast accept()
 * drains its queue, an fd slope and the time to the limit, how long
 * orphans stay. The others are counts, exact whatever the cost. */
static const char *const rate_rules[] = { "port_exhaustion", "listen_backlog", "fd_leak",
					  "orphans" };

/* After the other rules: out[0..*n) are their findings. */
static void rule_agent_cost(const struct dr_facts *f, struct finding *out, size_t *n,
			    size_t max)
{
	const struct agent_cost *c = &f->cost;
	double share = dr_cost_share(c);
	char which[160] = "";
	size_t used = 0, others = *n;
	struct finding *x;

	/* Under DR_COST_DISTORT the reports show it as a footer. */
	if (share < DR_COST_DISTORT)
		return;
	for (size_t r = 0; r < sizeof(rate_rules) / sizeof(rate_rules[0]); r++)
		for (size_t i = 0; i < others; i++)
			if (!strcmp(out[i].rule, rate_rules[r]) && used < sizeof(which)) {
				used += snprintf(which + used, sizeof(which) - used, "%s%s",
						 used ? ", " : "", rate_rules[r]);
				break;
			}
	x = dr_add(out, n, max, "agent_cost", DR_WARNING, NULL, NULL);
	if (!x)
		return;
	if (which[0])
		dr_say(x->verdict, sizeof(x->verdict),
		       "connscope's own BPF programs ran for %.3f s in the %.1f s measured, %.1f%% "
		       "of the CPU the traced processes used (%.3f s in %.1f s; the BPF time is "
		       "host-wide, an upper bound): enough to slow the workload and so the rates "
		       "and times that %s rest%s on; the counts are exact", c->bpf_s, c->stats_s,
		       100 * share, c->targets_cpu_s, c->window_s, which,
		       strchr(which, ',') ? "" : "s");
	else
		dr_say(x->verdict, sizeof(x->verdict),
		       "connscope's own BPF programs ran for %.3f s in the %.1f s measured, %.1f%% "
		       "of the CPU the traced processes used (%.3f s in %.1f s; the BPF time is "
		       "host-wide, an upper bound): enough to slow the workload, but no finding "
		       "here rests on a rate or a time, and the counts are exact", c->bpf_s,
		       c->stats_s, 100 * share, c->targets_cpu_s, c->window_s);
	dr_say(x->fix, sizeof(x->fix),
	       "trace less to measure less: without --fd-sites no fd syscall tracepoint runs "
	       "(the largest part), --no-fd drops the fd part, --no-quic the packet hooks; or "
	       "attach for a shorter window");
	dr_ev(x, "bpf_run_time_s", c->bpf_s, "s", DR_SRC_BPFSTATS);
	dr_ev(x, "bpf_runs", c->bpf_runs, "runs", DR_SRC_BPFSTATS);
	dr_ev(x, "targets_cpu_s", c->targets_cpu_s, "s", DR_SRC_STAT);
	dr_ev(x, "agent_cpu_s", c->agent_cpu_s, "s", DR_SRC_RUSAGE);
	dr_ev(x, "bpf_stats_s", c->stats_s, "s", DR_SRC_BPFSTATS);
	dr_ev(x, "cost_share", 100 * share, "%", DR_SRC_DERIVED);
}

/* ---- all of them ------------------------------------------------------------ */

static int rule_rank(const char *rule)
{
	for (size_t i = 0; i < doctor_nrules; i++)
		if (!strcmp(rule, doctor_rule_ids[i]))
			return i;
	return doctor_nrules;
}

static int by_severity(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	int r;

	/* The agent's own cost comes first whatever the rest: read the
	 * other findings knowing it. */
	if (!strcmp(x->rule, "agent_cost") != !strcmp(y->rule, "agent_cost"))
		return strcmp(x->rule, "agent_cost") ? 1 : -1;
	if (x->severity != y->severity)
		return y->severity - x->severity;
	r = rule_rank(x->rule) - rule_rank(y->rule);
	if (r)
		return r;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->endpoint, y->endpoint);
}

size_t doctor_rules(const struct dr_facts *f, struct finding *out, size_t max)
{
	size_t n = 0;

	rule_fd_limit(f, out, &n, max);
	dr_rule_time_wait(f, out, &n, max);
	rule_backlog(f, out, &n, max);
	rule_never_accepted(f, out, &n, max);
	rule_failures(f, out, &n, max);
	rule_resets(f, out, &n, max);
	rule_fd_leak(f, out, &n, max);
	rule_orphans(f, out, &n, max);
	rule_churn(f, out, &n, max);
	rule_agent_cost(f, out, &n, max);
	qsort(out, n, sizeof(*out), by_severity);
	return n;
}

int doctor_healthy_text(const struct dr_facts *f, char *buf, size_t len)
{
	size_t used = 0;
	int shown = 0;

	used += snprintf(buf, len, "healthy: no rule fired");
	for (size_t i = 0; i < f->nprocs && used < len; i++) {
		const struct dr_proc *p = &f->procs[i];
		uint64_t conns = p->opened + p->accepted, fails = 0, rst = 0;

		if (!p->target)
			continue;
		for (size_t k = 0; k < p->neps; k++) {
			fails += p->eps[k].refused + p->eps[k].timeouts + p->eps[k].failed_other;
			rst += p->eps[k].resets_recv + p->eps[k].resets_sent;
		}
		used += snprintf(buf + used, len - used,
				 "%s PID %d (%s): %llu connections opened and %llu accepted for "
				 "%llu requests (%.1f per connection), TIME_WAIT peak %u, %llu "
				 "connect failures, %llu resets", shown ? ";" : ".", p->pid, p->comm,
				 (unsigned long long)p->opened, (unsigned long long)p->accepted,
				 (unsigned long long)p->requests,
				 conns ? (double)p->requests / conns : 0, p->tw_peak,
				 (unsigned long long)fails, (unsigned long long)rst);
		if (used < len && p->fd_known && p->fd_limit != UINT64_MAX)
			used += snprintf(buf + used, len - used, ", fds %u at the peak of %llu",
					 p->fd_peak, (unsigned long long)p->fd_limit);
		shown++;
	}
	if (used < len)
		used += snprintf(buf + used, len - used, ".");
	return used;
}
