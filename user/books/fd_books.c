// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdlib.h>
#include <string.h>
#include "fd_books.h"

static const char *const how_names[FD_HOW_MAX] = {
	[0] = "unknown",	     [FD_HOW_SOCKET] = "socket",   [FD_HOW_ACCEPT] = "accept",
	[FD_HOW_OPEN] = "open",      [FD_HOW_DUP] = "dup",	   [FD_HOW_PIPE] = "pipe",
	[FD_HOW_SOCKETPAIR] = "socketpair", [FD_HOW_EVENTFD] = "eventfd",
	[FD_HOW_EPOLL] = "epoll_create", [FD_HOW_TIMERFD] = "timerfd_create",
	[FD_HOW_SIGNALFD] = "signalfd", [FD_HOW_INOTIFY] = "inotify_init",
	[FD_HOW_MEMFD] = "memfd_create", [FD_HOW_PIDFD] = "pidfd_open",
	[FD_HOW_FANOTIFY] = "fanotify_init",
};

const char *fd_how_name(int how)
{
	return how >= 0 && how < FD_HOW_MAX && how_names[how] ? how_names[how] : "unknown";
}

void fd_books_init(struct fd_books *b, uint64_t t0_ns, uint64_t bucket_ns)
{
	memset(b, 0, sizeof(*b));
	hmap_init(&b->procs, sizeof(pid_t), sizeof(struct fd_proc));
	hmap_init(&b->sites, sizeof(struct fd_site_key), sizeof(struct fd_site));
	b->t0_ns = t0_ns;
	b->bucket_ns = bucket_ns ? bucket_ns : 1000000000ULL;
}

void fd_books_fit_clock(struct fd_books *b, uint64_t t0_ns, uint64_t end_ns)
{
	size_t cols = heatmap_fit_cols(b->t0_ns, &t0_ns, end_ns, b->bucket_ns);
	struct fd_proc *p;

	b->t0_ns = t0_ns;
	for (size_t i = 0; hmap_next(&b->procs, &i, NULL, (void **)&p);) {
		if (!p->hm_ready)
			continue;
		heatmap_refit(&p->hm_type, t0_ns, cols);
		heatmap_refit(&p->hm_age, t0_ns, cols);
		heatmap_set_end(&p->hm_type, end_ns);
		heatmap_set_end(&p->hm_age, end_ns);
	}
}

void fd_books_free(struct fd_books *b)
{
	struct fd_proc *p;
	struct fd_site *s;

	for (size_t i = 0; hmap_next(&b->procs, &i, NULL, (void **)&p);) {
		hmap_free(&p->fds);
		hmap_free(&p->recent_close);
		heatmap_free(&p->hm_type);
		heatmap_free(&p->hm_age);
	}
	for (size_t i = 0; hmap_next(&b->sites, &i, NULL, (void **)&s);)
		free(s->stack);
	hmap_free(&b->procs);
	hmap_free(&b->sites);
}

struct fd_proc *fd_books_proc(struct fd_books *b, pid_t pid)
{
	bool created;
	struct fd_proc *p = hmap_upsert(&b->procs, &pid, &created);

	if (p && created) {
		p->pid = pid;
		hmap_init(&p->fds, sizeof(int32_t), sizeof(struct fd_open));
		hmap_init(&p->recent_close, sizeof(int32_t), sizeof(uint64_t));
	}
	return p;
}

static struct fd_site *site_get(struct fd_books *b, pid_t pid, uint64_t site, bool create)
{
	struct fd_site_key k = { .site = site, .pid = pid };
	bool created;
	struct fd_site *s;

	if (!create)
		return hmap_get(&b->sites, &k);
	s = hmap_upsert(&b->sites, &k, &created);
	if (s && created) {
		s->site = site;
		s->pid = pid;
		s->stack_id = -1;
	}
	return s;
}

static void fd_close(struct fd_books *b, struct fd_proc *p, int32_t fd)
{
	struct fd_open *o = hmap_get(&p->fds, &fd);
	struct fd_site *s;

	if (!o)
		return;
	s = o->site ? site_get(b, p->pid, o->site, false) : NULL;
	if (s) {
		s->closed++;
		if (s->open_now)
			s->open_now--;
	}
	hmap_del(&p->fds, &fd);
}

static void fd_open(struct fd_books *b, struct fd_proc *p, int32_t fd, const struct fd_event *e)
{
	struct fd_open *o;
	struct fd_site *s;

	if (fd < 0)
		return;
	o = hmap_get(&p->fds, &fd);
	/* Listed by /proc before its event arrived: the event names it. */
	if (o && o->provisional) {
		hmap_del(&p->fds, &fd);
	} else if (o) {
		/* Still open in the books: its close was missed (a phantom). */
		p->phantom++;
		fd_close(b, p, fd);
	}
	o = hmap_upsert(&p->fds, &fd, NULL);
	if (!o)
		return;
	o->site = e->site;
	o->created_ns = e->ts_ns;
	o->stack_id = e->stack_id;
	o->how = e->how;
	o->seen = 1;
	p->created++;
	if (e->how < FD_HOW_MAX)
		p->by_how[e->how]++;
	s = site_get(b, p->pid, e->site, true);
	if (s) {
		if (!s->opened) {
			s->how = e->how;
			s->stack_id = e->stack_id;
			s->first_ns = e->ts_ns;
		}
		s->opened++;
		s->open_now++;
		s->last_ns = e->ts_ns;
	}
}

/* A close from an event: remembered until the next listing, which may
 * still show the fd if it was read before the close. */
static void fd_close_event(struct fd_books *b, struct fd_proc *p, int32_t fd, uint64_t ts)
{
	uint64_t *t = hmap_upsert(&p->recent_close, &fd, NULL);

	if (t)
		*t = ts;
	fd_close(b, p, fd);
}

void fd_books_event(struct fd_books *b, const struct fd_event *e)
{
	struct fd_proc *p = fd_books_proc(b, e->tgid);

	b->events++;
	if (!p)
		return;
	switch (e->type) {
	case FD_EV_OPEN:
		fd_open(b, p, e->fd, e);
		if (e->fd2 >= 0)
			fd_open(b, p, e->fd2, e);
		break;
	case FD_EV_CLOSE:
		if (hmap_get(&p->fds, &e->fd))
			p->closed++;
		else if (!p->reconciled)
			p->closed++;	/* held before the first listing */
		fd_close_event(b, p, e->fd, e->ts_ns);
		break;
	case FD_EV_CLOSE_RANGE: {
		int32_t *doomed = calloc(p->fds.count ? p->fds.count : 1, sizeof(*doomed));
		const int32_t *fd;
		size_t n = 0;

		for (size_t i = 0; doomed && hmap_next(&p->fds, &i, (const void **)&fd, NULL);)
			if (*fd >= e->fd && *fd <= e->fd2)
				doomed[n++] = *fd;
		for (size_t i = 0; i < n; i++) {
			fd_close_event(b, p, doomed[i], e->ts_ns);
			p->closed++;
		}
		free(doomed);
		break;
	}
	case FD_EV_DUP2:
		/* newfd was closed first if it was open; then it is a new fd. */
		if (hmap_get(&p->fds, &e->fd2)) {
			fd_close_event(b, p, e->fd2, e->ts_ns);
			p->closed++;
		}
		fd_open(b, p, e->fd2, e);
		break;
	case FD_EV_EXEC:
		/* O_CLOEXEC fds are gone: the next reconcile finds out which. */
		p->execs++;
		break;
	}
}

void fd_books_snapshot(struct fd_books *b, const struct fd_site_snap *snap)
{
	struct fd_site *s = site_get(b, snap->tgid, snap->site, true);

	b->snapshots++;
	if (!s || s->has_snapshot)
		return;
	memcpy(s->regs, snap->regs, sizeof(s->regs));
	s->stack_len = snap->len <= FD_SNAP_BYTES ? snap->len : FD_SNAP_BYTES;
	s->stack = s->stack_len ? malloc(s->stack_len) : NULL;
	if (s->stack)
		memcpy(s->stack, snap->stack, s->stack_len);
	else
		s->stack_len = 0;
	s->has_snapshot = true;
}

static int age_bucket(uint64_t age_ns)
{
	uint64_t s = age_ns / 1000000000ULL;
	int b = 0;

	while (s && b < FD_AGE_BUCKETS - 1) {
		s >>= 1;
		b++;
	}
	return b;	/* 0: < 1 s, 1: 1-2 s, 2: 2-4 s ... */
}

static void hist_add(struct fd_proc *p, uint64_t t_ns, uint32_t n)
{
	if (!p->hist_stride)
		p->hist_stride = 1;
	if (p->nhist && ++p->hist_skip < p->hist_stride)
		return;
	p->hist_skip = 0;
	if (p->nhist == FD_HIST) {
		/* Every other one kept, from the first: spaced twice as far. */
		for (uint32_t i = 0; i < FD_HIST / 2; i++)
			p->hist[i] = p->hist[2 * i];
		p->nhist = FD_HIST / 2;
		p->hist_stride *= 2;
	}
	p->hist[p->nhist++] = (struct fd_sample){ .t_ns = t_ns, .count = n };
}

uint32_t fd_proc_mid_count(const struct fd_proc *p)
{
	uint64_t mid;
	uint32_t n;

	if (!p->nhist)
		return p->first_count;
	mid = p->first_sample_ns + (p->last_sample_ns - p->first_sample_ns) / 2;
	n = p->hist[0].count;
	for (uint32_t i = 1; i < p->nhist && p->hist[i].t_ns <= mid; i++)
		n = p->hist[i].count;
	return n;
}

static void sample(struct fd_books *b, struct fd_proc *p, size_t n, const char *const *types,
		   uint64_t now_ns)
{
	uint64_t t = now_ns > b->t0_ns ? now_ns - 1 : b->t0_ns;
	uint64_t ages[FD_AGE_BUCKETS] = { 0 };
	uint64_t per_type[HEATMAP_MAX_ROWS] = { 0 };
	struct fd_open *o;
	char label[32];

	double x, y = n;

	if (!p->nsamples) {
		p->first_sample_ns = now_ns;
		p->first_count = n;
	}
	if (n > p->peak_count)
		p->peak_count = n;
	x = now_ns > p->first_sample_ns ? (now_ns - p->first_sample_ns) / 1e9 : 0;
	p->nsamples++;
	p->last_sample_ns = now_ns;
	hist_add(p, now_ns, n);
	p->sx += x, p->sy += y, p->sxx += x * x, p->sxy += x * y;
	if (b->no_heatmaps)
		return;
	if (!p->hm_ready) {
		heatmap_init(&p->hm_type, "fd_type", "fds by type", "fds", b->t0_ns, b->bucket_ns);
		heatmap_init(&p->hm_age, "fd_age", "open fds by age", "fds", b->t0_ns, b->bucket_ns);
		p->hm_ready = true;
	}
	for (size_t i = 0; types && i < n; i++) {
		int row = heatmap_row(&p->hm_type, types[i]);

		if (row >= 0)
			per_type[row]++;
	}
	for (int row = 0; row < p->hm_type.nrows; row++)
		heatmap_set(&p->hm_type, row, t, per_type[row]);
	for (size_t i = 0; hmap_next(&p->fds, &i, NULL, (void **)&o);) {
		int k = age_bucket(o->created_ns ? now_ns - o->created_ns : now_ns - b->t0_ns);

		ages[k]++;
		/* Rows up to the oldest age seen, added in order: young on top,
		 * and no wall of empty rows for ages nothing reached. */
		while (p->hm_age.nrows <= k) {
			int r = p->hm_age.nrows;

			if (r == 0)
				snprintf(label, sizeof(label), "<1 s");
			else
				snprintf(label, sizeof(label), "%llu-%llu s", 1ULL << (r - 1), 1ULL << r);
			if (heatmap_row(&p->hm_age, label) < 0)
				break;
		}
	}
	for (int k = 0; k < p->hm_age.nrows; k++)
		heatmap_set(&p->hm_age, k, t, ages[k]);
}

void fd_books_reconcile(struct fd_books *b, pid_t pid, const int32_t *fds, size_t n,
			const char *const *types, uint64_t list_ns, bool final)
{
	struct fd_proc *p = fd_books_proc(b, pid);
	struct hmap present;
	int32_t *gone;
	const int32_t *fd;
	struct fd_open *o;
	size_t ngone = 0;

	if (!p)
		return;
	hmap_init(&present, sizeof(int32_t), 1);
	for (size_t i = 0; i < n; i++) {
		uint64_t *closed_at = hmap_get(&p->recent_close, &fds[i]);
		bool created;

		hmap_upsert(&present, &fds[i], NULL);
		/* Listed, then closed before we read the events: not open. */
		if (closed_at && *closed_at >= list_ns && !hmap_get(&p->fds, &fds[i]))
			continue;
		o = hmap_upsert(&p->fds, &fds[i], &created);
		if (!o)
			continue;
		o->missing = 0;
		if (!created) {
			/* Listed twice without its event: made unseen. */
			if (o->provisional == 1) {
				p->unseen++;
				o->provisional = 2;
			}
			continue;
		}
		if (p->reconciled && final) {
			p->unseen++;
			o->provisional = 2;
		} else if (p->reconciled) {
			o->provisional = 1;	/* SCM_RIGHTS, io_uring, or an event in flight */
		} else {
			p->held_at_start++;	/* held before we attached */
		}
	}
	gone = calloc(p->fds.count ? p->fds.count : 1, sizeof(*gone));
	for (size_t i = 0; gone && hmap_next(&p->fds, &i, (const void **)&fd, (void **)&o);) {
		if (hmap_get(&present, fd) || o->created_ns >= list_ns)
			continue;
		/* Missing twice: closed where we could not see it (exec's
		 * O_CLOEXEC, a lost event). Once may be a close in flight. */
		if (o->missing || final)
			gone[ngone++] = *fd;
		else
			o->missing = 1;
	}
	for (size_t i = 0; i < ngone; i++) {
		fd_close(b, p, gone[i]);
		p->phantom++;
	}
	free(gone);
	hmap_free(&present);
	hmap_clear(&p->recent_close);
	p->reconciled = true;
	p->list_ns = list_ns;
	sample(b, p, n, types, list_ns);
}

void fd_books_listing(struct fd_books *b, pid_t pid, const int32_t *fds, const uint64_t *inos,
		      size_t n, const char *const *types, uint64_t list_ns)
{
	struct fd_proc *p = fd_books_proc(b, pid);
	struct hmap present;
	int32_t *gone;
	const int32_t *fd;
	struct fd_open *o;
	size_t ngone = 0;

	if (!p)
		return;
	hmap_init(&present, sizeof(int32_t), 1);
	for (size_t i = 0; i < n; i++) {
		uint64_t ino = inos ? inos[i] : 0;
		bool created;

		hmap_upsert(&present, &fds[i], NULL);
		o = hmap_upsert(&p->fds, &fds[i], &created);
		if (!o)
			continue;
		if (!created && o->ino == ino)
			continue;
		if (!created)
			p->disappeared++;	/* closed, and the number reused */
		memset(o, 0, sizeof(*o));
		o->ino = ino;
		if (p->reconciled) {
			o->created_ns = list_ns;
			p->appeared++;
		} else {
			p->held_at_start++;
		}
	}
	gone = calloc(p->fds.count ? p->fds.count : 1, sizeof(*gone));
	for (size_t i = 0; gone && hmap_next(&p->fds, &i, (const void **)&fd, (void **)&o);)
		if (!hmap_get(&present, fd))
			gone[ngone++] = *fd;
	for (size_t i = 0; i < ngone; i++) {
		hmap_del(&p->fds, &gone[i]);
		p->disappeared++;
	}
	free(gone);
	hmap_free(&present);
	p->reconciled = true;
	p->listings++;
	p->list_ns = list_ns;
	sample(b, p, n, types, list_ns);
}

void fd_books_image(struct fd_books *b, pid_t pid, uint64_t image)
{
	struct fd_proc *p;

	if (!image || !(p = fd_books_proc(b, pid)))
		return;
	if (p->image && p->image != image) {
		p->execs++;
		p->nsamples = 0;
		p->first_count = p->peak_count = 0;
		p->sx = p->sy = p->sxx = p->sxy = 0;
		p->nhist = p->hist_stride = p->hist_skip = 0;
	}
	p->image = image;
}

double fd_proc_slope(const struct fd_proc *p)
{
	double n = p->nsamples, d;

	if (p->nsamples < 2)
		return 0;
	d = n * p->sxx - p->sx * p->sx;
	return d > 0 ? (n * p->sxy - p->sx * p->sy) / d : 0;
}

static int by_old(const void *a, const void *b)
{
	const struct fd_suspect *x = a, *y = b;

	if (x->old != y->old)
		return x->old < y->old ? 1 : -1;
	return x->per_s < y->per_s ? 1 : x->per_s > y->per_s ? -1 : 0;
}

size_t fd_books_suspects(const struct fd_books *b, pid_t pid, uint64_t now_ns,
			 uint64_t leak_age_ns, struct fd_suspect *out, size_t max)
{
	const struct fd_proc *p = hmap_get(&b->procs, &pid);
	struct fd_suspect *all;
	struct fd_open *o;
	struct fd_site *s;
	size_t n = 0, k;
	double window = now_ns > b->t0_ns ? (now_ns - b->t0_ns) / 1e9 : 1;

	if (!p || !b->sites.count)
		return 0;
	all = calloc(b->sites.count, sizeof(*all));
	if (!all)
		return 0;
	for (size_t i = 0; hmap_next(&b->sites, &i, NULL, (void **)&s);)
		if (s->pid == pid)
			all[n++] = (struct fd_suspect){ .site = s };
	for (size_t i = 0; hmap_next(&p->fds, &i, NULL, (void **)&o);) {
		if (!o->seen || now_ns - o->created_ns < leak_age_ns)
			continue;
		for (k = 0; k < n && all[k].site->site != o->site; k++)
			;
		if (k < n)
			all[k].old++;
	}
	for (k = 0; k < n; k++)
		all[k].per_s = all[k].site->open_now / (window > 0 ? window : 1);
	qsort(all, n, sizeof(*all), by_old);
	for (k = 0; k < n && all[k].old; k++)
		;
	n = k < max ? k : max;
	memcpy(out, all, n * sizeof(*out));
	free(all);
	return n;
}
