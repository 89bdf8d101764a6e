// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "proc_access.h"
#include "containers.h"
#include "fdinv.h"
#include "fdsession.h"
#include "fdsites.h"
#include "kfeatures_probe.h"
#include "procfs.h"
#include "timeutil.h"

static int on_event(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(struct fd_event))
		fd_books_event(ctx, data);
	return 0;
}

static int on_snap(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(struct fd_site_snap))
		fd_books_snapshot(ctx, data);
	return 0;
}

/* Which file the process runs, as an id that changes when it execs
 * another (the target file's device and inode); 0 when unreadable. */
static uint64_t exe_image(pid_t pid)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/exe", procfs_root, pid);
	if (stat(path, &st))
		return 0;
	return ((uint64_t)st.st_dev << 40) ^ (uint64_t)st.st_ino;
}

/* One listing of process i's fds into the books: the listing first, then
 * the events up to now, then the comparison (see fd_books_reconcile).
 * Without fd events (rb NULL) the books mirror the listing
 * (fd_books_listing). TCP states are not read here: they come after, from
 * a sock_diag dump that began later (apply_tcp_states); /proc/PID/net/tcp
 * only once a dump has failed. */
static int list_into_books(struct fd_session *s, size_t i, bool final)
{
	struct fdleak_proc *p = &s->procs[i];
	struct fd_books *b = &s->books;
	struct fdinv_opts io = { .flags = FDINV_RECORDS, .progress = s->drain,
				 .progress_ctx = s->drain_ctx };
	struct fd_inventory inv;
	const char **types;
	uint64_t *inos;
	int32_t *fds;
	uint64_t t = now_ns();
	size_t n;
	int err;

	if (!s->tcp.dumps_failed)
		io.flags |= FDINV_NO_NET_TABLES;
	/* A listing that fails (the process is gone) leaves the last one
	 * in the report, its states told already. */
	err = fdinv_scan(p->pid, &inv, &io);
	if (s->rb)
		ring_buffer__consume(s->rb);
	if (err) {
		s->listed_ns[i] = 0;
		return err;
	}
	fdinv_free(&p->inv);
	p->inv = inv;
	s->listed_ns[i] = t;
	n = p->inv.nr_fds ? p->inv.nr_fds : 1;
	fds = calloc(n, sizeof(*fds));
	types = calloc(n, sizeof(*types));
	inos = calloc(n, sizeof(*inos));
	if (!fds || !types || !inos) {
		free(fds);
		free(types);
		free(inos);
		return -ENOMEM;
	}
	for (size_t k = 0; k < p->inv.nr_fds; k++) {
		fds[k] = p->inv.fds[k].fd;
		types[k] = fdinv_type_name(p->inv.fds[k].type);
		inos[k] = p->inv.fds[k].ino;
	}
	fd_books_image(b, p->pid, exe_image(p->pid));
	if (b->listing_only)
		fd_books_listing(b, p->pid, fds, inos, p->inv.nr_fds, types, t);
	else
		fd_books_reconcile(b, p->pid, fds, p->inv.nr_fds, types, t, final);
	free(fds);
	free(types);
	free(inos);
	fdinv_limits(p->pid, &p->lim);
	return 0;
}

/* Whether fd still holds socket inode ino (after the dump: then it held
 * it all through the dump). */
static bool still_held(const struct fd_inventory *inv, int fd, uint64_t ino)
{
	char path[PATH_MAX], link[64], want[64];
	ssize_t n;

	if (inv->tid != inv->pid)
		snprintf(path, sizeof(path), "%s/%d/task/%d/fd/%d", procfs_root, inv->pid,
			 inv->tid, fd);
	else
		snprintf(path, sizeof(path), "%s/%d/fd/%d", procfs_root, inv->pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)ino);
	return !strcmp(link, want);
}

/* The TCP states of process i's last listing from the dumps held: a
 * socket in one has its state. One absent from it is TCP_CLOSE (in no
 * hash) only when it was listed before the dump began and its fd still
 * holds it after. Else it was closed since the listing (at a load test's
 * churn, most of them; a process that exited) or may be younger than the
 * dump: the state the dump before the listing saw, where it saw the
 * socket (a listener of a process that exited since), else unknown.
 * MPTCP: unknown. Nothing changes where no dump covers its namespace: the
 * listing had the tables then, or says unknown. */
static void apply_tcp_states(struct fd_session *s, size_t i)
{
	struct fd_inventory *inv = &s->procs[i].inv;
	uint64_t dump_ns;

	if (!s->listed_ns[i] || !inv->by_type[FDT_TCP])
		return;
	dump_ns = fdstates_cover(&s->tcp, s->procs[i].pid);
	if (!dump_ns)
		return;
	memset(inv->tcp_state, 0, sizeof(inv->tcp_state));
	for (size_t k = 0; k < inv->nr_fds; k++) {
		struct fdinv_fd *r = &inv->fds[k];
		int st = 0;

		if (r->type != FDT_TCP)
			continue;
		if (!r->mptcp) {
			st = fdstates_get(&s->tcp, r->ino);
			if ((st <= 0 || st >= FDINV_TCP_STATES) && s->listed_ns[i] < dump_ns &&
			    still_held(inv, r->fd, r->ino))
				st = CS_TCP_CLOSE;
			if (st <= 0 || st >= FDINV_TCP_STATES)
				st = fdstates_get_before(&s->tcp, r->ino);
			if (st <= 0 || st >= FDINV_TCP_STATES)
				st = 0;
		}
		r->tcp_state = st;
		inv->tcp_state[st]++;
	}
}

void fd_session_tcp_states(struct fd_session *s, const struct tcp_snapshot *snap)
{
	fdstates_reset(&s->tcp);
	/* Out of memory: what was added stays true; the namespaces it did
	 * not get to are dumped here. */
	if (snap)
		fdstates_from_snapshot(&s->tcp, snap);
	for (size_t i = 0; i < s->nprocs; i++)
		if (!s->procs[i].exited)
			apply_tcp_states(s, i);
}

/* Its container, once, while it lives (the labels attach's JSON has). */
static void label_container(struct fdleak_proc *p)
{
	struct container_ref ref;

	if (!container_of_pid(p->pid, &ref))
		return;
	container_label(&ref, p->container, sizeof(p->container));
	snprintf(p->pod_uid, sizeof(p->pod_uid), "%s", ref.c.pod_uid);
}

int fd_session_open(struct fd_session *s, const pid_t *pids,
		    const char (*comms)[16], size_t n, uint64_t t0_ns, uint64_t bucket_ns,
		    double leak_age_s, int top, int targets_fd, bool sites)
{
	int err;

	memset(s, 0, sizeof(*s));
	fd_books_init(&s->books, t0_ns, bucket_ns);
	s->books.listing_only = !sites;
	s->procs = calloc(n ? n : 1, sizeof(*s->procs));
	s->syms = calloc(n ? n : 1, sizeof(*s->syms));
	s->execs_done = calloc(n ? n : 1, sizeof(*s->execs_done));
	s->listed_ns = calloc(n ? n : 1, sizeof(*s->listed_ns));
	fdstates_init(&s->tcp);
	hmap_init(&s->resolved, sizeof(struct fd_site_key), sizeof(struct site_frames));
	s->nprocs = n;
	s->leak_age_s = leak_age_s;
	s->top = top < FDLEAK_MAX_SITES ? top : FDLEAK_MAX_SITES;
	s->open = true;
	if (!s->procs || !s->syms || !s->execs_done || !s->listed_ns) {
		fd_session_close(s);
		return -ENOMEM;
	}
	/* The syscall programs only where sites are asked for: they put
	 * every task on the machine on the slow syscall path. */
	if (sites) {
		err = fd_tracer_open(&s->ft, &s->rb, on_event, on_snap, &s->books, false,
				     targets_fd);
		if (err) {
			fd_session_close(s);
			return err;
		}
	}
	for (size_t i = 0; i < n; i++) {
		s->procs[i].pid = pids[i];
		if (comms)
			memcpy(s->procs[i].comm, comms[i], sizeof(s->procs[i].comm));
		s->procs[i].seconds_to_limit = -1;
		s->procs[i].listing_only = !sites;
		label_container(&s->procs[i]);
		if (sites) {
			fd_tracer_add_target(&s->ft, pids[i]);
			/* Maps now, while the process lives: names survive its exit. */
			s->syms[i] = symbolizer_new(pids[i]);
		}
		err = list_into_books(s, i, false);
		if (err) {
			if (err == -EACCES || err == -EPERM)
				proc_say_refused(pids[i], "the fds");
			else
				fprintf(stderr, "connscope: cannot list the fds of %d: %s\n",
					pids[i], strerror(-err));
			fd_session_close(s);
			return err;
		}
	}
	/* The states after every listing: each socket listed is older than
	 * the dump. */
	fd_session_tcp_states(s, NULL);
	return 0;
}

/* After an exec the process maps another image: name the sites made
 * before it with the maps they were made in, then read the new maps. The
 * symbolizer still holds the old ones until it is refreshed. */
static void resolve_before_exec(struct fd_session *s, size_t i)
{
	const struct fd_proc *bp = hmap_get(&s->books.procs, &s->procs[i].pid);
	const struct fd_site_key *k;
	struct fd_site *site;

	if (!bp || bp->execs == s->execs_done[i])
		return;
	for (size_t it = 0; hmap_next(&s->books.sites, &it, (const void **)&k, (void **)&site);) {
		struct site_frames *f;
		bool created;

		if (site->pid != s->procs[i].pid)
			continue;
		f = hmap_upsert(&s->resolved, k, &created);
		if (f && created)
			fdsite_resolve(s->syms[i], &s->ft, site, f);
	}
	if (s->syms[i])
		symbolizer_refresh(s->syms[i]);
	s->execs_done[i] = bp->execs;
}

int fd_session_add(struct fd_session *s, pid_t pid, const char *comm)
{
	size_t n = s->nprocs + 1;
	struct fdleak_proc *procs = realloc(s->procs, n * sizeof(*procs));
	struct symbolizer **syms;
	uint32_t *execs;
	uint64_t *listed;

	if (!procs)
		return -ENOMEM;
	s->procs = procs;
	syms = realloc(s->syms, n * sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	s->syms = syms;
	execs = realloc(s->execs_done, n * sizeof(*execs));
	if (!execs)
		return -ENOMEM;
	s->execs_done = execs;
	listed = realloc(s->listed_ns, n * sizeof(*listed));
	if (!listed)
		return -ENOMEM;
	s->listed_ns = listed;
	s->listed_ns[n - 1] = 0;
	memset(&s->procs[n - 1], 0, sizeof(s->procs[0]));
	s->procs[n - 1].pid = pid;
	snprintf(s->procs[n - 1].comm, sizeof(s->procs[n - 1].comm), "%s", comm);
	s->procs[n - 1].seconds_to_limit = -1;
	label_container(&s->procs[n - 1]);
	s->procs[n - 1].listing_only = s->books.listing_only;
	s->execs_done[n - 1] = 0;
	s->syms[n - 1] = NULL;
	s->nprocs = n;
	/* Listing only: no programs to filter for it, no sites to name. */
	if (!s->books.listing_only) {
		s->syms[n - 1] = symbolizer_new(pid);
		fd_tracer_add_target(&s->ft, pid);
	}
	/* Gone already: its report part says what the events said. */
	if (list_into_books(s, n - 1, false)) {
		s->procs[n - 1].exited = true;
	} else if (!s->tcp_from_snapshot) {
		/* A dump after its listing (attach's next snapshot does it
		 * there). */
		fdstates_reset(&s->tcp);
		apply_tcp_states(s, n - 1);
	}
	return 0;
}

void fd_session_tick(struct fd_session *s, bool final)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		/* A listing that fails is an interval without fd truth:
		 * counted, unless the process is simply gone. */
		if (!s->procs[i].exited) {
			int err = list_into_books(s, i, final);

			if (err && err != -ENOENT && err != -ESRCH)
				s->list_failed++;
			if (s->drain)
				s->drain(s->drain_ctx);
		}
		resolve_before_exec(s, i);
	}
	if (!s->tcp_from_snapshot)
		fd_session_tcp_states(s, NULL);
}

int fd_session_owners(void *ctx, pid_t pid, uint64_t since_ns, struct inode_map *m)
{
	struct fd_session *s = ctx;

	for (size_t i = 0; i < s->nprocs; i++) {
		const struct fd_inventory *inv = &s->procs[i].inv;

		if (s->procs[i].pid != pid)
			continue;
		if (!s->listed_ns[i] || s->listed_ns[i] < since_ns)
			return -EAGAIN;
		/* Every socket fd's inode is in the records (FDINV_RECORDS),
		 * as PID/fd's "socket:[N]" links give them. */
		for (size_t k = 0; k < inv->nr_fds; k++) {
			const struct fdinv_fd *r = &inv->fds[k];
			int err;

			if (!fdt_is_socket(r->type) || !r->ino || r->ino > UINT32_MAX)
				continue;
			err = inode_map_put(m, (uint32_t)r->ino, pid);
			if (err)
				return err;
		}
		return 0;
	}
	return -EAGAIN;
}

void fd_session_exited(struct fd_session *s, pid_t pid)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			s->procs[i].exited = true;
}

void fd_session_analyze(struct fd_session *s, bool resolve_sites)
{
	uint64_t now = now_ns();

	for (size_t i = 0; i < s->nprocs; i++) {
		struct fdleak_proc *p = &s->procs[i];

		p->books = hmap_get(&s->books.procs, &p->pid);
		p->slope = p->books ? fd_proc_slope(p->books) : 0;
		p->seconds_to_limit = -1;
		/* A flat count fits a slope of rounding noise (1e-15/s), not
		 * a growth: below one fd a day there is no time to the limit. */
		if (p->slope > 1.0 / 86400 && p->lim.soft && p->lim.soft != UINT64_MAX &&
		    p->lim.soft > p->inv.total)
			p->seconds_to_limit = (p->lim.soft - p->inv.total) / p->slope;
		p->nsus = s->books.listing_only ? 0 :
			  fd_books_suspects(&s->books, p->pid, now,
					    (uint64_t)(s->leak_age_s * 1e9), p->sus, s->top);
		if (!resolve_sites || s->books.listing_only)
			continue;
		if (s->syms[i])
			symbolizer_refresh(s->syms[i]);
		for (size_t k = 0; k < p->nsus; k++) {
			struct fd_site_key key = { .site = p->sus[k].site->site, .pid = p->pid };
			const struct site_frames *before = hmap_get(&s->resolved, &key);

			if (before)
				p->frames[k] = *before;
			else
				fdsite_resolve(s->syms[i], &s->ft, p->sus[k].site, &p->frames[k]);
		}
	}
}

const struct fdleak_proc *fd_session_proc(const struct fd_session *s, pid_t pid)
{
	struct fd_report r = fd_session_report(s);

	return fd_report_proc(&r, pid);
}

struct fd_report fd_session_report(const struct fd_session *s)
{
	return s ? (struct fd_report){ .procs = s->procs, .n = s->nprocs,
				       .leak_age_s = s->leak_age_s,
				       .listing_only = s->books.listing_only } : (struct fd_report){ 0 };
}

void fd_session_run_facts(struct fd_session *s, struct fdleak_run *run)
{
	if (s->ft.skel)
		fd_tracer_stats(&s->ft, run->stats);
	run->progs_attached = s->ft.attached;
	run->progs_missing = s->ft.failed;
	run->missing_names = s->ft.failed_names;
	run->features = kf_plan(NULL);
	run->events = s->books.events;
	run->snapshots = s->books.snapshots;
	run->leak_age_s = s->leak_age_s;
}

void fd_session_close(struct fd_session *s)
{
	if (!s->open)
		return;
	for (size_t i = 0; i < s->nprocs; i++) {
		if (s->syms && s->syms[i])
			symbolizer_free(s->syms[i]);
		if (s->procs)
			fdinv_free(&s->procs[i].inv);
	}
	free(s->syms);
	free(s->procs);
	free(s->execs_done);
	free(s->listed_ns);
	s->listed_ns = NULL;
	fdstates_free(&s->tcp);
	hmap_free(&s->resolved);
	ring_buffer__free(s->rb);
	s->rb = NULL;
	fd_tracer_close(&s->ft);
	fd_books_free(&s->books);
	s->syms = NULL;
	s->procs = NULL;
	s->open = false;
}
