// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The birth pass (iter/tcp birth_pass in tcpstate_sk.bpf.h) and the census
 * walk it can be (#23 item 6): one walk of a namespace's TCP sockets that
 * tells the books the traced connections born since the last one and
 * gives the snapshot every socket, as a sock_diag dump would. Before,
 * each interval walked the host's tables twice, the dump and the pass. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "jiffies_hz.h"
#include "kernel_view.h"
#include "netns.h"
#include "sockdiag.h"
#include "tcp_tracer.h"
#include "tcpstate.skel.h"
#include "tcpwalk.h"
#include "timeutil.h"

/* An iter/tcp iterator walks the namespace its creator is in. */
static int birth_iter_create(void *ctx)
{
	struct tracer *t = ctx;
	int fd = bpf_iter_create(bpf_link__fd(t->birth_link));

	return fd < 0 ? -errno : fd;
}

/* One (jiffies, clock) pair from hz_sample (tcpwalk.bpf.h), its jiffies
 * read between two clock reads; a pair whose reads lay over 1 ms apart
 * (the program preempted) is not taken. */
static int hz_pair(struct tracer *t, struct jiffies_pair *p)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct tcpstate_bpf__bss *bss = t->skel->bss;

	if (bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.hz_sample), &opts))
		return -errno;
	if (bss->hz_ns_after - bss->hz_ns_before > 1000000)
		return -EAGAIN;
	p->jiffies = bss->hz_jiffies;
	p->ns = bss->hz_ns_before + (bss->hz_ns_after - bss->hz_ns_before) / 2;
	return 0;
}

/* The kernel's HZ, for the walk's timers: a first pair at the start-up
 * pass, another before each census until one candidate fits
 * (jiffies_hz.c; with x86's and arm64's candidates, pairs 0.2 s apart
 * do, so the first interval's census walks). Pairs that fit none begin
 * again from the later one. */
static void learn_hz(struct tracer *t)
{
	struct jiffies_pair p;
	const uint32_t *cand;
	size_t n;
	int hz;

	if (t->walk_hz || hz_pair(t, &p))
		return;
	if (!t->walk_hz0.ns) {
		t->walk_hz0 = p;
		return;
	}
	cand = jiffies_hz_candidates(&n);
	hz = jiffies_hz_choose(&t->walk_hz0, &p, cand, n);
	if (hz > 0)
		t->walk_hz = (uint32_t)hz;
	else if (hz == JIFFIES_HZ_NONE)
		t->walk_hz0 = p;
}

/* jiffies_to_msecs() for this HZ: DIV_ROUND_UP(j * 1000, HZ) is what each
 * of its branches computes for every HZ the kernel allows. */
static uint32_t walk_ms(const struct tracer *t, int32_t j)
{
	return j <= 0 ? 0 : (uint32_t)(((uint64_t)j * 1000 + t->walk_hz - 1) / t->walk_hz);
}

static void sd_from_walk(const struct tracer *t, struct sd_sock *s, const struct cs_walk_sock *w)
{
	memset(s, 0, sizeof(*s));
	s->family = w->family;
	s->state = w->state;
	s->timer = w->timer;
	s->retrans = w->retrans;
	s->sport = w->sport;
	s->dport = w->dport;
	memcpy(s->saddr, w->saddr, sizeof(s->saddr));
	memcpy(s->daddr, w->daddr, sizeof(s->daddr));
	s->expires_ms = walk_ms(t, w->expires_j);
	s->rqueue = w->rqueue;
	s->wqueue = w->wqueue;
	s->uid = w->uid;
	s->inode = w->inode;
	s->cookie = w->cookie;
	s->bound_if = w->bound_if;
}

/* Records a read at most. A pass's program runs once a socket only while
 * a read stops before the iterator's seq buffer (8 pages) overflows: the
 * read ends as soon as it holds what it asked for, so it asks for fewer
 * bytes than that buffer less one record. */
#define WALK_READ 384

/* The pass in pid's namespace (nsfd < 0) or nsfd's; cb: the census walk
 * (every socket's record), NULL: births only. */
static int pass_in(struct tracer *t, pid_t in_ns_of, int nsfd,
		   int (*cb)(const struct sd_sock *, void *), void *ctx)
{
	/* The program writes a byte for each birth it puts on the ring (a
	 * record for each socket in a walk, births among them): a read
	 * returns after at most as many as it asks for, and the ring is
	 * drained before the next: a quarter of the ring at a time (the
	 * traced processes write to it meanwhile), at most 512 births. */
	static struct cs_walk_sock recs[WALK_READ];
	char buf[512];
	size_t chunk = t->ring_bytes / (sizeof(struct cs_event) + 8) / 4, have = 0;
	struct tcpstate_bpf__bss *bss = t->skel->bss;
	ssize_t n;
	int fd, err = 0;

	if (!t->birth_link)
		return 0;
	if (chunk > (cb ? WALK_READ : sizeof(buf)))
		chunk = cb ? WALK_READ : sizeof(buf);
	if (!chunk)
		chunk = 1;
	bss->walk_census = !!cb;
	fd = nsfd >= 0 ? netns_run_fd(nsfd, birth_iter_create, t) :
			 netns_run(in_ns_of, birth_iter_create, t);
	if (fd < 0)
		return fd;
	for (;;) {
		char *at = (char *)recs + have;

		n = read(fd, cb ? at : buf, cb ? chunk * sizeof(recs[0]) - have : chunk);
		if (n <= 0)
			break;
		ring_buffer__consume(t->rb);
		if (!cb)
			continue;
		/* Whole records to cb; a part (none expected: a read stops
		 * at a record's end) waits for the rest. */
		have += (size_t)n;
		for (size_t i = 0; i < have / sizeof(recs[0]) && !err; i++) {
			struct sd_sock s;

			sd_from_walk(t, &s, &recs[i]);
			err = cb(&s, ctx);
		}
		if (err)
			break;
		memmove(recs, (char *)recs + have / sizeof(recs[0]) * sizeof(recs[0]),
			have % sizeof(recs[0]));
		have %= sizeof(recs[0]);
	}
	if (n < 0)
		err = -errno;
	close(fd);
	bss->walk_census = 0;
	return err;
}

int tracer_birth_pass(struct tracer *t, pid_t in_ns_of)
{
	if (t->sk_mode && t->birth_link)
		learn_hz(t);
	return pass_in(t, in_ns_of, -1, NULL, NULL);
}

int tracer_birth_pass_held(struct tracer *t, size_t i)
{
	return i < t->nheld_ns ? pass_in(t, 0, t->held_ns[i].fd, NULL, NULL) : -EINVAL;
}

int tracer_walk(struct tracer *t, pid_t in_ns_of, int (*cb)(const struct sd_sock *, void *),
		void *ctx)
{
	if (!t->sk_mode || !t->birth_link || t->walk_off || !t->skel->bss)
		return -EAGAIN;
	learn_hz(t);
	if (!t->walk_hz)
		return -EAGAIN;
	return pass_in(t, in_ns_of, -1, cb, ctx);
}
