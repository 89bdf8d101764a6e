// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* attach's reads of the kernel each interval, between the rings and the
 * books: which processes ended or joined, the sock_diag reconcile, the
 * start-up seeds, the doctor's samples. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include "attach_sources.h"
#include "procfs.h"
#include "sk_books.h"
#include "sockdiag.h"
#include "census_cut.h"
#include "netlimits.h"
#include "netstat.h"
#include "netns.h"
#include "timeutil.h"
#include "text_wrap.h"

/* The live processes of the books: what a reconcile scans. */
static size_t alive_pids(const struct agg *a, pid_t *pids, size_t max)
{
	struct proc_books *p;
	size_t n = 0;

	for (size_t i = 0; n < max && hmap_next(&a->procs, &i, NULL, (void **)&p);)
		if (!p->exited)
			pids[n++] = p->pid;
	return n;
}

/* Gone, or its pid now another process's (a later start time). */
static bool books_gone(const struct proc_books *p)
{
	struct proc_ident id;

	if (procfs_pid_gone(p->pid) || procfs_read_ident(p->pid, &id))
		return true;
	return p->start_ns && procfs_start_ns(&id) != p->start_ns;
}

/* Processes that are not -p targets (children, --comm and --cgroup ones)
 * are seen to end here, once an interval. */
static void mark_exited(struct agg *a)
{
	struct proc_books *p;

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);)
		if (!p->exited && (!p->target || p->joined_ns) && books_gone(p))
			p->exited = true;
}

size_t attach_take_descendants(struct agg *a, struct tracer *t, const pid_t *roots,
			       size_t nroots, pid_t *pids, size_t *n, size_t max)
{
	pid_t desc[CLI_MAX_PIDS * 16];
	size_t nd = targets_descendants(roots, nroots, desc, sizeof(desc) / sizeof(desc[0]));
	size_t taken = 0;

	if (nd == sizeof(desc) / sizeof(desc[0]))
		fprintf(stderr, "connscope: --children: only the first %zu descendants at start "
				"are traced\n", nd);
	for (size_t i = 0; i < nd; i++) {
		struct proc_books *p;
		struct proc_ident id;
		int err;

		if (procfs_read_ident(desc[i], &id))
			continue;	/* gone since */
		p = agg_proc_gen(a, desc[i], procfs_start_ns(&id));
		if (!p || p->target)
			continue;	/* a -p target too: one already */
		err = tracer_add_target(t, desc[i]);
		if (err) {
			text_err("connscope: --children: cannot add pid %d to the filter: "
				 "%s\n", desc[i], strerror(-err));
			continue;
		}
		memcpy(p->comm, id.comm, sizeof(p->comm));
		p->ptgid = id.ppid;
		p->start_ns = procfs_start_ns(&id);
		/* Joined at the start: said as a joining is (attach_say_joined). */
		p->joined_ns = a->t0_ns;
		taken++;
		if (*n < max)
			pids[(*n)++] = desc[i];
	}
	return taken;
}

static bool traced_now(const struct agg *a, pid_t pid)
{
	const struct proc_books *p = agg_find_proc(a, pid);

	return p && !p->exited;
}

size_t attach_untraced_acceptors(const struct agg *a, const struct tcp_snapshot *snap,
				 struct untraced_acceptor *out, size_t max)
{
	uint32_t inodes[64];
	size_t nl = 0;
	DIR *d;
	struct dirent *de;

	/* The traced processes' listeners. */
	for (size_t i = 0; i < snap->n && nl < max && nl < 64; i++) {
		const struct sd_sock *s = &snap->socks[i];
		const struct inode_owner *o;
		const struct proc_books *p;
		struct cs_tuple t;

		if (s->state != CS_TCP_LISTEN || !s->inode ||
		    !(o = inode_map_get(&snap->owners, s->inode)) || !traced_now(a, o->pid))
			continue;
		p = agg_find_proc(a, o->pid);
		memset(&out[nl], 0, sizeof(out[nl]));
		tuple_from_sd(&t, s);
		tuple_format(out[nl].listener, sizeof(out[nl].listener), &t, false);
		out[nl].pid = o->pid;
		memcpy(out[nl].comm, p->comm, sizeof(out[nl].comm));
		inodes[nl++] = s->inode;
	}
	if (!nl || !(d = opendir(procfs_root)))
		return 0;
	/* Every other process's fds: does it hold one of them? */
	while ((de = readdir(d))) {
		pid_t pid = atoi(de->d_name);
		struct inode_map m;
		struct proc_ident id;

		if (pid <= 0 || traced_now(a, pid))
			continue;
		inode_map_init(&m);
		if (!procfs_scan_pid_sockets(pid, &m) && inode_map_count(&m)) {
			for (size_t k = 0; k < nl; k++) {
				struct untraced_acceptor *u = &out[k];

				if (!inode_map_get(&m, inodes[k]))
					continue;
				if (!u->nothers && !procfs_read_ident(pid, &id))
					memcpy(u->other_comm, id.comm, sizeof(u->other_comm));
				if (u->nothers < UNTRACED_PIDS_SHOWN)
					u->others[u->nothers] = pid;
				u->nothers++;
			}
		}
		inode_map_free(&m);
	}
	closedir(d);
	/* Only those held by someone not traced. */
	size_t w = 0;

	for (size_t k = 0; k < nl; k++)
		if (out[k].nothers)
			out[w++] = out[k];
	return w;
}

/* Targets that joined (--comm, --cgroup) are said once, as exits are,
 * and get the QUIC library probes a target has (qt NULL: QUIC off). */
void attach_say_joined(struct agg *a, uint64_t t0, struct quic_tracer *qt)
{
	struct proc_books *p;

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		if (!p->joined_ns || p->joined_said)
			continue;
		p->joined_said = true;
		if (qt && !p->exited)
			quic_tracer_add_target(qt, p->pid);
		if (!p->target)
			fprintf(stderr, "connscope: process %d (%s) joined at the start "
					"(--children)\n", p->pid, p->comm);
		else
			fprintf(stderr, "connscope: process %d (%s) joined the targets after "
					"%.1f s\n", p->pid, p->comm, (p->joined_ns - t0) / 1e9);
	}
}

/* Processes that joined since the last interval (children, --comm,
 * --cgroup) get their fds followed; those gone stop. */
void attach_fd_follow(struct fd_session *fs, const struct agg *a)
{
	struct proc_books *p;

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		if (p->exited) {
			/* Not when the pid is another (a later) process's now. */
			if (agg_find_proc(a, p->pid) == p)
				fd_session_exited(fs, p->pid);
			continue;
		}
		struct fd_report r = fd_session_report(fs);

		if (!fd_report_proc(&r, p->pid))
			fd_session_add(fs, p->pid, p->comm);
	}
}

/* The doctor's sources each interval: listeners' accept queues from the
 * snapshot, each target namespace's ListenOverflows, EMFILE counts. */
void attach_doctor_sample(struct doctor_run *d, const struct tcp_snapshot *snap,
			  const struct attach_opts *o, struct fd_session *fs)
{
	doctor_observe_listeners(d, snap->socks, snap->n, &snap->owners);
	for (size_t i = 0; i < o->npids; i++) {
		struct listen_counters c;
		uint64_t ino = netns_inode(o->pids[i]), emfile, enfile;

		if (ino && !netstat_read_listen(o->pids[i], &c))
			doctor_observe_netstat(d, o->pids[i], ino, &c);
		if (d->fderr_counted && fs &&
		    !fd_tracer_errors(&fs->ft, o->pids[i], &emfile, &enfile))
			doctor_observe_fderr(d, o->pids[i], emfile, enfile);
	}
}


void attach_drain_rings(void *ctx)
{
	struct snap_rings *r = ctx;

	for (int i = 0; i < 2; i++)
		if (r->rb[i])
			ring_buffer__consume(r->rb[i]);
}

/* The storages' books after a round of passes (sk_books.h): made read
 * before the passes, ended after, alive from the passes, for the
 * namespaces passed[0..np). Keys balanced whose owner is gone are deleted
 * in the kernel (none of their sockets is left to add to them), so the
 * map holds the processes alive and the ones that lost a connection. */
static void attach_sk_books(struct agg *a, struct tracer *t, struct skb_line *before, int nb,
			    const uint32_t *passed, size_t np)
{
	struct skb_line *after = NULL, *alive = NULL;
	int na = tracer_sk_books(t, &after), nl = tracer_sk_alive_take(t, &alive);
	uint64_t st[CS_STAT_MAX];

	if (nb < 0 || na < 0 || nl < 0)
		goto out;
	/* A full map may have missed an end: a deficit would be made up. */
	if (!tracer_stats(t, st) && st[CS_STAT_SKB_FULL])
		a->skb.frozen = true;
	skb_pass(&a->skb, before, nb, after, na, alive, nl, passed, np, agg_ends_unrun, a);
	t->ends_unrun = a->skb.counted;
	for (int i = 0; i < na; i++) {
		bool live = false;

		for (int j = 0; j < nl && !live; j++)
			live = !memcmp(&alive[j].k, &after[i].k, sizeof(after[i].k)) && alive[j].made;
		if (after[i].made != after[i].ended || live || !after[i].k.tgid ||
		    kill((pid_t)after[i].k.tgid, 0) == 0 || errno != ESRCH)
			continue;
		if (!tracer_sk_books_drop(t, &after[i].k))
			skb_forget(&a->skb, &after[i].k);
	}
out:
	free(after);
	free(alive);
}

int attach_births_before(struct tracer *t, struct skb_line **before)
{
	*before = NULL;
	return t->sk_mode ? tracer_sk_books(t, before) : 0;
}

/* A namespace its targets left (held, not among the np passed): passed
 * while its books do not balance (a connection still closing, or one the
 * kernel ended unseen, counted once two passes agree), then let go.
 * Returns the count passed, theirs added. */
static size_t births_held(struct agg *a, struct tracer *t, struct skb_line *before, int nb,
			  uint32_t *passed, size_t np)
{
	for (size_t i = 0; i < t->nheld_ns;) {
		uint32_t ino = t->held_ns[i].ino;
		bool in = false;

		for (size_t j = 0; j < np && !in; j++)
			in = passed[j] == ino;
		if (in) {
			i++;
		} else if (nb > 0 && skb_ns_open(&a->skb, before, nb, ino) &&
			   !tracer_birth_pass_held(t, i)) {
			passed[np++] = ino;
			i++;
		} else {
			tracer_release_ns(t, i);
		}
	}
	return np;
}

void attach_births(struct agg *a, struct tracer *t, const struct tcp_snapshot *snap,
		   struct skb_line *before, int nb)
{
	uint64_t began = now_ns();
	uint32_t passed[AGG_MAX_DUMPED_NS + TRACER_HELD_NS];
	size_t np = 0;
	int err = 0;

	/* In each namespace the snapshot read. One that could not be passed
	 * leaves its births to their end records: the books lag there, and
	 * the reconcile's gap says by how much. A namespace the census walk
	 * read had its pass then (tcp_walk.c), which began after the
	 * snapshot did. */
	if (t->sk_mode) {
		for (size_t i = 0; i < snap->nns; i++) {
			if (snap->ns[i].walked) {
				began = snap->taken_ns;
			} else if (tracer_birth_pass(t, snap->ns[i].pid)) {
				err = -1;
				continue;
			}
			if (np < AGG_MAX_DUMPED_NS) {
				passed[np++] = snap->ns[i].netns;
				tracer_hold_ns(t, snap->ns[i].netns, snap->ns[i].pid);
			}
		}
		if (!snap->nns) {
			err = tracer_birth_pass(t, 0);
			if (!err)
				passed[np++] = (uint32_t)netns_inode(getpid());
		}
		if (!err)
			a->births_known_ns = began;
		else
			a->birth_pass_failed++;
		np = births_held(a, t, before, nb, passed, np);
		attach_sk_books(a, t, before, nb, passed, np);
	}
	free(before);
	ring_buffer__consume(t->rb);
}

/* attach_births where no namespace was read (no target left): only the
 * namespaces they left, the storages' books, the ring. */
static void attach_births_unread(struct agg *a, struct tracer *t, struct skb_line *before,
				 int nb)
{
	uint32_t passed[TRACER_HELD_NS];
	size_t np;

	if (t->sk_mode) {
		np = births_held(a, t, before, nb, passed, 0);
		attach_sk_books(a, t, before, nb, passed, np);
	}
	free(before);
	ring_buffer__consume(t->rb);
}

/* The census walk in place of the dump (tcp_walk.c). */
static int census_walk(void *t, pid_t pid, sd_sock_cb cb, void *ctx)
{
	return tracer_walk(t, pid, cb, ctx);
}

/* CONNSCOPE_CENSUS: "dump", the sock_diag dump and a separate birth pass
 * as before the walk (to compare their costs, or should the walk ever be
 * doubted); "check", the walk and a dump compared on stderr. Set once,
 * after the start-up snapshot (which dumps: its birth pass takes the
 * first pair HZ is learnt from). */
void attach_census_mode(struct tcp_snapshot *snap, struct tracer *t)
{
	const char *m = getenv("CONNSCOPE_CENSUS");

	snap->walk = m && !strcmp(m, "dump") ? NULL : census_walk;
	snap->walk_ctx = t;
	snap->walk_check = m && !strcmp(m, "check");
	m = getenv("CONNSCOPE_CENSUS_FAULT");
	snap->lack_tw_once = m && !strcmp(m, "lack-tw");
}

/* CONNSCOPE_CENSUS_FAULT=lack-tw: the run's last census loses every
 * TIME_WAIT it read, as a dump taken while sockets come and go can skip
 * some, so that a test reaches the exact look at them that follows (and
 * the second census, if one is taken, sees them again). */
static void census_lose_tw(struct tcp_snapshot *snap)
{
	size_t k = 0;

	for (size_t i = 0; i < snap->n; i++)
		if (snap->socks[i].state != CS_TCP_TIME_WAIT && snap->socks[i].timer != 3)
			snap->socks[k++] = snap->socks[i];
	snap->n = k;
	snap->lack_tw_once = false;
}

void attach_tw_look(void *ctx, struct agg_tw_look *q, size_t n)
{
	const struct tcp_snapshot *snap = ctx;
	struct sd_find *f = calloc(n ? n : 1, sizeof(*f));
	size_t *of = calloc(n ? n : 1, sizeof(*of));

	for (size_t i = 0; i < n; i++)
		q[i].found = -EIO;	/* in no namespace of the snapshot: no answer */
	for (size_t k = 0; f && of && k < snap->nns; k++) {
		const struct snap_ns *ns = &snap->ns[k];
		uint64_t at;
		size_t m = 0;

		for (size_t i = 0; i < n; i++) {
			struct sd_sock *s = &f[m].q;

			if (q[i].t.netns != ns->netns)
				continue;
			memset(s, 0, sizeof(*s));
			s->family = (uint8_t)q[i].t.family;
			s->sport = q[i].t.sport;
			s->dport = q[i].t.dport;
			memcpy(s->saddr, q[i].t.saddr, sizeof(s->saddr));
			memcpy(s->daddr, q[i].t.daddr, sizeof(s->daddr));
			s->bound_if = q[i].bound_if;
			/* That socket only: another at the tuple is "none". */
			s->cookie = q[i].cookie;
			of[m++] = i;
		}
		if (!m)
			continue;
		/* The timers' ms left are the kernel's at the look: from now. */
		at = now_ns();
		/* Only in the namespace the census read: a pid since moved
		 * or reused gives -ESTALE, no answer (a second census). */
		if (sockdiag_find_tcp_of(ns->pid, ns->netns, f, m))
			continue;	/* each stays without an answer */
		for (size_t j = 0; j < m; j++) {
			struct agg_tw_look *l = &q[of[j]];
			const struct sd_sock *g = &f[j].got;

			if (f[j].found <= 0) {
				l->found = f[j].found;
				continue;
			}
			l->found = agg_tw_look_is_tw(&l->t, g);
			l->expires_ms = g->expires_ms;
			l->at_ns = at;
		}
	}
	free(f);
	free(of);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int attach_reconcile(struct agg *a, struct tcp_snapshot *snap, struct tracer *t,
		     struct limits_view *limits, struct netns_watch *nsw, bool all)
{
	uint64_t cpu;
	pid_t pids[CLI_MAX_PIDS * 4];
	struct skb_line *before;
	size_t n;
	int err, nb;

	if (!all)
		mark_exited(a);
	n = alive_pids(a, pids, sizeof(pids) / sizeof(pids[0]));
	/* No target left: a census of no pids reads the agent's own
	 * namespace, which is theirs only when the last census read it
	 * (`run`'s command beside the agent). Otherwise, a target in a
	 * container, it read ours: its TIME_WAIT came out as the run's
	 * unattributed ones and the limits' host figures. Nothing is read
	 * then: the last census's figures stand, and the namespaces it read
	 * are said to be read no more. */
	if (!all && !n && !snapshot_ns(snap, netns_self())) {
		const struct tcp_snapshot none = { 0 };

		nb = attach_births_before(t, &before);
		netns_watch_before(nsw, &none, a);
		/* The namespaces they left still passed while their books do
		 * not balance, as after any census (review s42 N1). */
		attach_births_unread(a, t, before, nb);
		netns_watch_after(nsw, a);
		return 0;
	}
	/* The storages' books before any pass: the census walk is one. */
	nb = attach_births_before(t, &before);
	/* The census's moment, its start and end: what changed in the books
	 * from its start on is judged by it (census_cut.h). */
	agg_census_begin(a, now_ns());
	cpu = thread_cpu_ns();
	err = snapshot_take(snap, all ? NULL : pids, n);
	/* Its CPU, the kernel's walk included: what a second one costs. */
	a->census_cpu_ns = thread_cpu_ns() - cpu;
	agg_census_end(a, now_ns());
	if (!err && a->tw_look && snap->lack_tw_once)
		census_lose_tw(snap);

	/* Events written before the snapshot (a TIME_WAIT that expired, a
	 * socket that closed) must be in the books before it is compared, and
	 * so must the connections in it still alive: the birth pass after the
	 * dump (or the walk that was both) tells every one the books lack. */
	attach_births(a, t, snap, before, nb);
	if (!err) {
		struct netlimits lim = limits->lim;

		uint32_t dumped[AGG_MAX_DUMPED_NS];
		size_t nd = 0;

		for (size_t i = 0; i < snap->nns && i < AGG_MAX_DUMPED_NS; i++)
			dumped[nd++] = snap->ns[i].netns;
		agg_set_dumped(a, dumped, snap->nns <= AGG_MAX_DUMPED_NS ? nd : snap->nns);
		/* Listeners made since, by a process not traced too: their
		 * connections handed to a target are adopted from now on. */
		if (!all)
			attach_note_listeners(a, t, snap);
		netns_watch_before(nsw, snap, a);
		agg_reconcile(a, snap->socks, snap->n, &snap->owners);
		netns_watch_after(nsw, a);
		/* The sysctls once a run: the limits the run started with, of
		 * the first target's network namespace (read by the snapshot
		 * from inside it). */
		if (!limits->valid)
			lim = snap->lim;
		limits_observe(limits, &lim, snap->socks, snap->n, &snap->st);
	} else {
		agg_census_drop(a);
	}
	return err;
}

static bool pid_in(pid_t pid, const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

void attach_note_listeners(struct agg *a, struct tracer *t, const struct tcp_snapshot *snap)
{
	for (size_t i = 0; i < snap->nns; i++)
		tracer_handoff_netns(t, snap->ns[i].netns);
	for (size_t i = 0; i < snap->n; i++) {
		const struct sd_sock *s = &snap->socks[i];
		const struct inode_owner *o;

		if (s->state != CS_TCP_LISTEN)
			continue;
		agg_seed_listener(a, s);
		o = s->inode ? inode_map_get(&snap->owners, s->inode) : NULL;
		if (!o || !traced_now(a, o->pid))
			tracer_handoff_port(t, s->sport);
	}
}

/* Sockets the targets held before we attached: into the books and into
 * the BPF seed map, unless events already told us about them. */
void attach_seed(struct agg *a, struct tracer *t, const struct tcp_snapshot *snap,
		 const pid_t *only, size_t nonly)
{
	struct hmap known;
	struct conn *c;

	/* Every listener of the snapshot first, whoever holds it: a
	 * connection a target accepted before the attach is found accepted by
	 * its listener's address, and that listener may be held by no target
	 * at all (the workers alone traced, their master not; or a master
	 * that accepts and hands each connection over), so it is in none of
	 * the targets' fds and the loop below passes it over. */
	attach_note_listeners(a, t, snap);
	hmap_init(&known, sizeof(struct cs_tuple), 1);
	for (size_t i = 0; hmap_next(&a->conns, &i, NULL, (void **)&c);)
		hmap_upsert(&known, &c->tuple, NULL);
	for (size_t i = 0; i < snap->n; i++) {
		const struct sd_sock *s = &snap->socks[i];
		const struct inode_owner *o = s->inode ? inode_map_get(&snap->owners, s->inode) : NULL;
		struct proc_books *p = o ? agg_find_proc(a, o->pid) : NULL;
		struct cs_owner owner = { .flags = CS_OWNER_SEED };
		struct cs_tuple tuple;

		if (!p || (only && !pid_in(p->pid, only, nonly)))
			continue;
		tuple_from_sd(&tuple, s);
		if (hmap_get(&known, &tuple))
			continue;
		agg_seed(a, p->pid, s);
		owner.tgid = p->pid;
		owner.start_ns = p->start_ns;
		memcpy(owner.comm, p->comm, sizeof(owner.comm));
		tracer_seed(t, &tuple, &owner);
		if (s->state == CS_TCP_LISTEN) {
			int fd = procfs_socket_fd(p->pid, s->inode);

			owner.flags = CS_OWNER_LISTEN | CS_OWNER_SEED;
			/* On the socket itself where it can be reached, so an
			 * SO_REUSEPORT sibling's children stay the sibling's. */
			if (fd >= 0)
				tracer_seed_listener_sock(t, p->pid, fd, &owner);
			tracer_seed_listener(t, &tuple, &owner);
		}
	}
	hmap_free(&known);
}

void attach_cgroup_rejoin(struct agg *a, struct tracer *t, const struct target_sel *sel,
			  pid_t *joined, size_t *n, size_t max)
{
	/* The cgroup alone: --comm's matches join by the BPF side as before. */
	const struct target_sel cg = { .cgroup_path = sel->cgroup_path,
				       .cgroup_fd = sel->cgroup_fd };
	pid_t pids[CLI_MAX_PIDS];
	size_t np;
	int err = tracer_set_cgroup(t, sel->cgroup_fd);

	if (err) {
		text_err("connscope: cannot point the filter at the new cgroup %s: %s; "
			 "no process joins through it\n", sel->cgroup_path, strerror(-err));
		return;
	}
	np = targets_scan(&cg, pids, 0, CLI_MAX_PIDS);
	for (size_t i = 0; i < np; i++) {
		struct proc_books *p;
		struct proc_ident id;

		if (procfs_read_ident(pids[i], &id))
			continue;	/* gone since */
		p = agg_proc_gen(a, pids[i], procfs_start_ns(&id));
		if (!p)
			continue;
		/* Not when the BPF side saw it first (its event read), or a
		 * -p target moved in. */
		if (!p->target) {
			err = tracer_add_target(t, pids[i]);
			if (err) {
				fprintf(stderr, "connscope: cannot add pid %d to the filter: %s\n",
					pids[i], strerror(-err));
				continue;
			}
			p->target = true;
			p->joined_ns = now_ns();
			memcpy(p->comm, id.comm, sizeof(p->comm));
			p->ptgid = id.ppid;
		}
		/* Either way it joined now: what it held before is seeded. */
		if (p->joined_ns && *n < max)
			joined[(*n)++] = pids[i];
	}
}

size_t attach_targets_alive(const struct agg *a)
{
	struct proc_books *p;
	size_t n = 0;

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);)
		n += p->target && !p->exited;
	return n;
}
