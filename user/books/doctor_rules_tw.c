// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The doctor's TIME_WAIT rules: a client by its own TIME_WAIT and the
 * ephemeral ports it holds towards one destination; a server by its
 * listener, every process that accepts on it pooled (pre-forked workers
 * share one listener, each holding a share of its TIME_WAIT: Apache
 * prefork spread 3,000 over 4-6 children, none over the threshold). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "doctor.h"
#include "doctor_fixes.h"
#include "doctor_rules.h"
#include "tcp_books.h"

/* ---- TIME_WAIT pile-up and ephemeral port exhaustion ------------------- */

/* The endpoint with the most TIME_WAIT entries of p, NULL without any. */
static const struct dr_endpoint *tw_endpoint(const struct dr_proc *p)
{
	const struct dr_endpoint *best = NULL;

	for (size_t k = 0; k < p->neps; k++)
		if (p->eps[k].tw_entered && (!best || p->eps[k].tw_entered > best->tw_entered))
			best = &p->eps[k];
	return best;
}

/* The remote endpoint of p whose ports were busiest, NULL without any. */
static const struct dr_endpoint *port_endpoint(const struct dr_proc *p)
{
	const struct dr_endpoint *best = NULL;

	for (size_t k = 0; k < p->neps; k++)
		if (!p->eps[k].listen && p->eps[k].ports_known &&
		    (!best || p->eps[k].port_share_peak > best->port_share_peak))
			best = &p->eps[k];
	return best;
}

/* The kernel refused to make TIME_WAIT (its table was full): the closes
 * went straight to CLOSE, and a late segment of the old connection can
 * now reach a new one on the same 4-tuple. Always critical. */
static void tw_overflow(const struct dr_facts *f, const struct dr_proc *p,
			struct finding *out, size_t *n, size_t max)
{
	struct finding *x = dr_add(out, n, max, "time_wait", DR_CRITICAL, p, NULL);

	if (!x)
		return;
	dr_say(x->verdict, sizeof(x->verdict),
	    "PID %d (%s) closed %llu connections first that got no TIME_WAIT: its network "
	    "namespace's TIME_WAIT table was full (net.ipv4.tcp_max_tw_buckets; the kernel "
	    "logs \"TCP: time wait bucket table overflow\"), so late segments of those "
	    "connections can reach new ones on the same 4-tuple", p->pid, p->comm,
	    (unsigned long long)p->tw_not_made);
	dr_say(x->fix, sizeof(x->fix),
	    "raise net.ipv4.tcp_max_tw_buckets%s in that namespace (sysctl -w "
	    "net.ipv4.tcp_max_tw_buckets=N, N above the TIME_WAIT held at the peak), or make "
	    "fewer TIME_WAIT: keep connections alive, let the peer close first",
	    f->lim_known && f->lim.max_tw_buckets ? " (now at its limit)" : "");
	dr_ev(x, "time_wait_not_made", p->tw_not_made, "connections", DR_SRC_BPF);
	dr_ev(x, "time_wait_entered", p->tw_entered, "connections", DR_SRC_BPF);
	dr_ev(x, "time_wait_peak", p->tw_peak, "sockets", DR_SRC_SOCKDIAG);
	if (f->lim_known && f->lim.max_tw_buckets)
		dr_ev(x, "tcp_max_tw_buckets", f->lim.max_tw_buckets, "sockets", DR_SRC_SYSCTL);
}

/* Connects towards a loopback address: where tcp_tw_reuse = 2 applies
 * (the kernel's tcp_twsk_unique takes a v4-mapped 127/8 as loopback too:
 * a dual-stack socket's, Java's, to 127.0.0.1). */
static bool label_loopback(const char *label)
{
	return !strncmp(label, "127.", 4) || !strncmp(label, "[::1]", 5) ||
	       !strncmp(label, "[::ffff:127.", 12);
}

/* A client's TIME_WAIT, one process at a time: its own ephemeral ports
 * run out. A server's is judged by its listener (listener_time_wait). */
static void client_time_wait(const struct dr_facts *f, struct finding *out, size_t *n,
			     size_t max)
{
	uint32_t ports = f->lim_known ? netlimits_ports(&f->lim) : 0;
	double buckets = f->lim_known && f->lim.max_tw_buckets ?
			 (double)f->host_tw_peak / f->lim.max_tw_buckets : 0;

	for (size_t i = 0; i < f->nprocs; i++) {
		const struct dr_proc *p = &f->procs[i];
		const struct dr_endpoint *tw = tw_endpoint(p), *pe = NULL;
		double share = 0, rate = 0, exhaust_s = -1;
		const char *rule = "time_wait";
		int sev = DR_WARNING;
		struct finding *x;
		char when[32] = "";
		uint64_t recycled;

		if (p->tw_not_made)
			tw_overflow(f, p, out, n, max);
		if (!tw)
			continue;
		/* Ports run out on the side that connects: only a client's
		 * TIME_WAIT holds its own ephemeral ports towards one place. A
		 * server's TIME_WAIT (listen side) costs memory, not ports,
		 * and is its listener's: every process accepting on it. */
		if (tw->listen)
			continue;
		pe = tw->ports_known ? tw : port_endpoint(p);
		share = pe ? pe->port_share_peak : 0;
		if (p->tw_peak < DR_TW_PEAK_WARN && share < DR_PORT_SHARE_WARN)
			continue;
		/* Time to exhaustion: at r new TIME_WAIT entries a second towards
		 * one destination, each holding its port for 60 s, the free ports
		 * last (range - in use) / r seconds; a rate whose 60 s of
		 * TIME_WAIT fits in the range never runs out. */
		if (pe && f->window_s > 0) {
			rate = pe->tw_entered / f->window_s;
			if (ports && rate > 0 && rate * DR_TW_SECONDS + pe->live_peak >= ports)
				exhaust_s = pe->ports_peak < ports ?
					    (ports - pe->ports_peak) / rate : 0;
		}
		if (share >= DR_PORT_SHARE_WARN || exhaust_s >= 0)
			rule = "port_exhaustion";
		if (share >= DR_PORT_SHARE_CRIT ||
		    (exhaust_s >= 0 && exhaust_s <= DR_PORT_EXHAUST_CRIT_S) ||
		    buckets >= DR_TW_BUCKETS_WARN)
			sev = DR_CRITICAL;
		/* Ports held in TIME_WAIT are not ports lost where the kernel
		 * reuses them for new connects (tcp_tw_reuse = 1; 2 on
		 * loopback): judged by what it did. Reuse and no failed connect
		 * is a warning about the TIME_WAIT churn, not an exhaustion. */
		recycled = 0;
		if (pe && !strcmp(rule, "port_exhaustion") && f->lim_known &&
		    (f->lim.tw_reuse == 1 || (f->lim.tw_reuse == 2 && label_loopback(pe->label))) &&
		    !(pe->refused + pe->timeouts + pe->failed_other)) {
			const struct netstat_ns *ns = dr_ns_of(f, p->pid);

			recycled = ns && ns->tw_recycled_last > ns->tw_recycled_first ?
				   ns->tw_recycled_last - ns->tw_recycled_first : 0;
			if (recycled && buckets < DR_TW_BUCKETS_WARN)
				sev = DR_WARNING;
		}
		x = dr_add(out, n, max, rule, sev, p, pe ? pe->label : tw->label);
		if (!x)
			return;
		if (exhaust_s >= 0)
			dr_human_s(when, sizeof(when), exhaust_s);
		if (pe && recycled && sev < DR_CRITICAL)
			dr_say(x->verdict, sizeof(x->verdict),
			    "PID %d (%s) holds %u TIME_WAIT sockets at the peak because it closes "
			    "first (%llu of %llu closes), %.1f%% of the ephemeral ports towards %s "
			    "(%u of %u); the kernel reused %llu TIME_WAIT ports for new connects "
			    "(net.ipv4.tcp_tw_reuse = %d) and no connect failed", p->pid, p->comm,
			    p->tw_peak, (unsigned long long)p->closed_active,
			    (unsigned long long)(p->closed_active + p->closed_passive), 100 * share,
			    pe->label, pe->ports_peak, ports, (unsigned long long)recycled,
			    f->lim.tw_reuse);
		else if (pe)
			dr_say(x->verdict, sizeof(x->verdict),
			    "PID %d (%s) holds %u TIME_WAIT sockets at the peak because it closes "
			    "first (%llu of %llu closes), and to %s it used %.1f%% of the ephemeral "
			    "ports (%u of %u)%s%s", p->pid, p->comm, p->tw_peak,
			    (unsigned long long)p->closed_active,
			    (unsigned long long)(p->closed_active + p->closed_passive), pe->label,
			    100 * share, pe->ports_peak, ports,
			    exhaust_s >= 0 ? ", which run out in " : "; at this rate they last",
			    exhaust_s >= 0 ? when : "");
		else
			dr_say(x->verdict, sizeof(x->verdict),
			    "PID %d (%s) holds %u TIME_WAIT sockets at the peak because it closes "
			    "first (%llu of %llu closes), most of them on %s", p->pid, p->comm,
			    p->tw_peak, (unsigned long long)p->closed_active,
			    (unsigned long long)(p->closed_active + p->closed_passive), tw->label);
		dr_tw_fix(f, p, pe ? pe : tw, true, x->fix, sizeof(x->fix));
		dr_ev(x, "time_wait_peak", p->tw_peak, "sockets", DR_SRC_SOCKDIAG);
		dr_ev(x, "time_wait_entered", p->tw_entered, "connections", DR_SRC_BPF);
		dr_ev(x, "closed_first_by_this_side", p->closed_active, "connections", DR_SRC_BPF);
		dr_ev(x, "closed_first_by_peer", p->closed_passive, "connections", DR_SRC_BPF);
		if (pe) {
			dr_ev(x, "ports_in_use_peak", pe->ports_peak, "ports", DR_SRC_SOCKDIAG);
			dr_ev(x, "port_share_peak", 100 * share, "%", DR_SRC_SOCKDIAG);
			dr_ev(x, "time_wait_entries_per_s", rate, "/s", DR_SRC_BPF);
			if (exhaust_s >= 0)
				dr_ev(x, "seconds_to_exhaustion", exhaust_s, "s", DR_SRC_DERIVED);
			if (recycled)
				dr_ev(x, "time_wait_reused", recycled, "ports", DR_SRC_NETSTAT);
		}
		if (ports)
			dr_ev(x, "ephemeral_ports", ports, "ports", DR_SRC_SYSCTL);
		if (f->lim_known && f->lim.max_tw_buckets) {
			dr_ev(x, "host_time_wait_peak", f->host_tw_peak, "sockets", DR_SRC_SOCKSTAT);
			dr_ev(x, "tcp_max_tw_buckets", f->lim.max_tw_buckets, "sockets",
			      DR_SRC_SYSCTL);
		}
	}
}

/* ---- a server's TIME_WAIT, by its listener ------------------------------ */

struct tw_pool {
	const char *label;		/* "listen *:8080" */
	const struct dr_proc *first;	/* the lowest pid: the fix speaks its software */
	const struct dr_endpoint *first_ep;
	uint32_t nprocs;
	pid_t pids[DR_MAX_PIDS];
	uint64_t entered, closed_active, closed_passive;
	uint32_t peak, peak_one;	/* the listener's; the most one process held */
	bool same_comm;
};

/* The listener's TIME_WAIT at its busiest moment: the largest sum over
 * its processes at one interval. A process known by its peak alone (no
 * columns) adds its peak at every interval: an upper bound. */
static uint32_t pool_peak(const struct dr_facts *f, const char *label)
{
	size_t ncols = 0;
	uint64_t best = 0, flat = 0;

	for (size_t i = 0; i < f->nprocs; i++)
		for (size_t k = 0; k < f->procs[i].neps; k++) {
			const struct dr_endpoint *e = &f->procs[i].eps[k];

			if (!e->listen || strcmp(e->label, label))
				continue;
			if (e->tw_cols && e->tw_ncols > ncols)
				ncols = e->tw_ncols;
			if (!e->tw_cols)
				flat += e->tw_peak;
		}
	for (size_t c = 0; c < (ncols ? ncols : 1); c++) {
		uint64_t sum = flat;

		for (size_t i = 0; ncols && i < f->nprocs; i++)
			for (size_t k = 0; k < f->procs[i].neps; k++) {
				const struct dr_endpoint *e = &f->procs[i].eps[k];

				if (e->listen && e->tw_cols && c < e->tw_ncols &&
				    !strcmp(e->label, label))
					sum += e->tw_cols[c];
			}
		if (sum > best)
			best = sum;
	}
	return best > UINT32_MAX ? UINT32_MAX : (uint32_t)best;
}

/* Every process with TIME_WAIT on the listener label, pooled. The procs
 * come sorted by pid (targets first); pids keeps the lowest. */
static void pool_of(const struct dr_facts *f, const char *label, struct tw_pool *t)
{
	memset(t, 0, sizeof(*t));
	t->label = label;
	t->same_comm = true;
	for (size_t i = 0; i < f->nprocs; i++) {
		const struct dr_proc *p = &f->procs[i];

		for (size_t k = 0; k < p->neps; k++) {
			const struct dr_endpoint *e = &p->eps[k];

			if (!e->listen || !e->tw_entered || strcmp(e->label, label))
				continue;
			if (!t->first || p->pid < t->first->pid) {
				t->first = p;
				t->first_ep = e;
			}
			if (t->nprocs && strcmp(p->comm, t->first->comm))
				t->same_comm = false;
			if (t->nprocs < DR_MAX_PIDS)
				t->pids[t->nprocs] = p->pid;
			t->nprocs++;
			t->entered += e->tw_entered;
			/* The listener's own closes: a process that also
			 * connects out, or listens elsewhere, closes those
			 * connections its own way. */
			t->closed_active += e->closed_active;
			t->closed_passive += e->closed_passive;
			if (e->tw_peak > t->peak_one)
				t->peak_one = e->tw_peak;
		}
	}
	t->peak = pool_peak(f, label);
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether label was pooled already: its first process's endpoint is the
 * first of its kind in f. */
static bool label_seen_before(const struct dr_facts *f, size_t pi, size_t ki)
{
	const char *label = f->procs[pi].eps[ki].label;

	for (size_t i = 0; i <= pi; i++)
		for (size_t k = 0; k < f->procs[i].neps && (i < pi || k < ki); k++)
			if (f->procs[i].eps[k].listen && f->procs[i].eps[k].tw_entered &&
			    !strcmp(f->procs[i].eps[k].label, label))
				return true;
	return false;
}

static void listener_time_wait(const struct dr_facts *f, struct finding *out, size_t *n,
			       size_t max)
{
	double buckets = f->lim_known && f->lim.max_tw_buckets ?
			 (double)f->host_tw_peak / f->lim.max_tw_buckets : 0;

	for (size_t i = 0; i < f->nprocs; i++)
		for (size_t k = 0; k < f->procs[i].neps; k++) {
			const struct dr_endpoint *e = &f->procs[i].eps[k];
			const char *addr = e->label + strlen("listen ");
			struct finding *x;
			struct tw_pool t;
			uint32_t shown;

			if (!e->listen || !e->tw_entered || label_seen_before(f, i, k))
				continue;
			pool_of(f, e->label, &t);
			if (t.peak < DR_TW_PEAK_WARN)
				continue;
			x = dr_add(out, n, max, "time_wait",
				   buckets >= DR_TW_BUCKETS_WARN ? DR_CRITICAL : DR_WARNING,
				   t.first, e->label);
			if (!x)
				return;
			shown = t.nprocs < DR_MAX_PIDS ? t.nprocs : DR_MAX_PIDS;
			qsort(t.pids, shown, sizeof(t.pids[0]), by_pid);
			memcpy(x->pids, t.pids, shown * sizeof(t.pids[0]));
			x->npids = t.nprocs;
			if (t.nprocs == 1) {
				dr_say(x->verdict, sizeof(x->verdict),
				       "PID %d (%s) holds %u TIME_WAIT sockets at the peak because it "
				       "closes first (%llu of %llu closes), most of them on %s",
				       t.first->pid, t.first->comm, t.peak,
				       (unsigned long long)t.closed_active,
				       (unsigned long long)(t.closed_active + t.closed_passive),
				       e->label);
			} else {
				/* A service, not one of its processes: no one
				 * child is to blame for what they share. */
				x->pid = 0;
				dr_say(x->verdict, sizeof(x->verdict),
				       "%s on %s (%u processes accepting on it%s) holds %u "
				       "TIME_WAIT sockets at the peak because it closes first "
				       "(%llu of %llu closes); the most one process held was %u",
				       t.first->comm, addr, t.nprocs,
				       t.same_comm ? "" : ", not all of that name", t.peak,
				       (unsigned long long)t.closed_active,
				       (unsigned long long)(t.closed_active + t.closed_passive),
				       t.peak_one);
			}
			dr_tw_fix(f, t.first, t.first_ep, false, x->fix, sizeof(x->fix));
			dr_ev(x, "time_wait_peak", t.peak, "sockets", DR_SRC_SOCKDIAG);
			dr_ev(x, "time_wait_entered", t.entered, "connections", DR_SRC_BPF);
			dr_ev(x, "closed_first_by_this_side", t.closed_active, "connections",
			      DR_SRC_BPF);
			dr_ev(x, "closed_first_by_peer", t.closed_passive, "connections", DR_SRC_BPF);
			dr_ev(x, "processes", t.nprocs, "processes", DR_SRC_BPF);
			if (t.nprocs > 1)
				dr_ev(x, "time_wait_peak_one_process", t.peak_one, "sockets",
				      DR_SRC_SOCKDIAG);
			if (f->lim_known && f->lim.max_tw_buckets) {
				dr_ev(x, "host_time_wait_peak", f->host_tw_peak, "sockets",
				      DR_SRC_SOCKSTAT);
				dr_ev(x, "tcp_max_tw_buckets", f->lim.max_tw_buckets, "sockets",
				      DR_SRC_SYSCTL);
			}
		}
}

void dr_rule_time_wait(const struct dr_facts *f, struct finding *out, size_t *n, size_t max)
{
	client_time_wait(f, out, n, max);
	listener_time_wait(f, out, n, max);
}
