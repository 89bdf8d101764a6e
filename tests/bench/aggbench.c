/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* aggbench: the user-space side of connscope measured on its own, linked
 * with the project's objects (LIB_OBJS).
 *
 *	aggbench record -p PID[,PID...] -o FILE
 *		the tcpstate BPF unit attached as `connscope attach` attaches it,
 *		the targets' listeners seeded as attach seeds them (so their
 *		children's records come too), every ring-buffer record written
 *		to FILE (until SIGINT/SIGTERM)
 *	aggbench synth -o FILE [--procs P] [--live SOCKETS] [--steady EVENTS]
 *		a synthetic stream: SOCKETS tracked sockets opened first (the
 *		prefill), then connection churn among P processes that keeps
 *		SOCKETS live: a connection pair closed and one opened per step
 *	aggbench replay FILE [--loops K] [--cpu N] [--reconciles R] [--ticks T]
 *		the prefill fed untimed, then the rest fed K times to
 *		agg_event() on one pinned core: events/s, ns/event, RSS;
 *		with T, each pass in T slices, an agg_tick after each (as each
 *		interval of attach), timed apart (callgrind
 *		--toggle-collect=tick_timed counts them alone);
 *		then R reconciles against a dump of every TIME_WAIT the books
 *		hold (what each interval's census costs them; callgrind
 *		--toggle-collect=reconcile_timed counts them alone), and R
 *		looks of the limits at that dump's ports (limits_ns_per_tw;
 *		callgrind --toggle-collect=limits_timed)
 *	aggbench mem -n SOCKETS [--procs P] [--tw N]
 *		SOCKETS live connections fed into the books: RSS before/after,
 *		then one reconcile against a dump of them: its time and peak;
 *		with N, then N entries in the books' TIME_WAIT table: its RSS,
 *		and the report's count of each of P holders' (a pass a
 *		process against one pass: "twcount" lines)
 *	aggbench fdinv PID
 *		one fd inventory (fdinv_scan, as every fdleak/attach interval)
 *
 * Results are one line of key=value pairs on stdout. Event files: a
 * struct evfile_hdr, then struct cs_event records as read from the ring. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "tcp_books.h"
#include "endpoint.h"
#include "fdinv.h"
#include "snapshot.h"
#include "tcp_tracer.h"
#include "tcp_limits.h"
#include "ports.h"
#include "aggbench.h"

#define EVFILE_MAGIC "CSEVT1\0"

struct evfile_hdr {
	char magic[8];
	uint64_t prefill;	/* records to feed before timing */
	uint64_t count;		/* records in the file */
	uint64_t rec_size;	/* sizeof(struct cs_event) when written */
};

void die(const char *what)
{
	fprintf(stderr, "aggbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

long status_kib(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = atol(line + n + 1);
			break;
		}
	fclose(f);
	return v;
}

unsigned long long num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end) {
		fprintf(stderr, "aggbench: '%s': expected a number\n", s);
		exit(2);
	}
	return v;
}

static void write_events(const char *path, const struct cs_event *ev, uint64_t n,
			 uint64_t prefill)
{
	struct evfile_hdr h = { .prefill = prefill, .count = n, .rec_size = sizeof(*ev) };
	FILE *f = fopen(path, "w");

	memcpy(h.magic, EVFILE_MAGIC, sizeof(h.magic));
	if (!f || fwrite(&h, sizeof(h), 1, f) != 1 ||
	    (n && fwrite(ev, sizeof(*ev), n, f) != n) || fclose(f))
		die(path);
}

static struct cs_event *read_events(const char *path, struct evfile_hdr *h)
{
	FILE *f = fopen(path, "r");
	struct cs_event *ev;

	if (!f || fread(h, sizeof(*h), 1, f) != 1)
		die(path);
	if (memcmp(h->magic, EVFILE_MAGIC, sizeof(h->magic)) || h->rec_size != sizeof(*ev)) {
		fprintf(stderr, "aggbench: %s: not an event file of this build\n", path);
		exit(1);
	}
	ev = malloc((h->count ? h->count : 1) * sizeof(*ev));
	if (!ev || (h->count && fread(ev, sizeof(*ev), h->count, f) != h->count))
		die(path);
	fclose(f);
	return ev;
}

/* ---- record ---- */

struct recbuf {
	struct cs_event *ev;
	uint64_t n, cap;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int rec_event(void *ctx, void *data, size_t size)
{
	struct recbuf *r = ctx;

	if (size < sizeof(struct cs_event))
		return 0;
	if (r->n == r->cap) {
		uint64_t cap = r->cap ? r->cap * 2 : 65536;
		struct cs_event *ev = realloc(r->ev, cap * sizeof(*ev));

		if (!ev)
			return -ENOMEM;
		r->ev = ev;
		r->cap = cap;
	}
	memcpy(&r->ev[r->n++], data, sizeof(struct cs_event));
	return 0;
}

/* The targets' listeners into the seed maps, as attach_seed does: without
 * them a server's children are not traced, and a recorded churn held the
 * client's records alone (one a connection where attach reads two). */
static void seed_listeners(struct tracer *t, const pid_t *pids, size_t npids)
{
	struct tcp_snapshot snap = {};
	size_t seeded = 0;

	if (snapshot_take(&snap, pids, npids))
		die("snapshot_take");
	for (size_t i = 0; i < snap.n; i++) {
		const struct sd_sock *s = &snap.socks[i];
		const struct inode_owner *o = s->inode ? inode_map_get(&snap.owners, s->inode) : NULL;
		struct cs_owner owner = { .flags = CS_OWNER_LISTEN | CS_OWNER_SEED };
		struct proc_ident id;
		struct cs_tuple tuple;
		int fd;

		if (s->state != CS_TCP_LISTEN || !o)
			continue;
		tuple_from_sd(&tuple, s);
		owner.tgid = o->pid;
		/* Its start and name as attach has them from /proc. */
		if (!procfs_read_ident(o->pid, &id)) {
			owner.start_ns = procfs_start_ns(&id);
			memcpy(owner.comm, id.comm, sizeof(owner.comm));
		}
		fd = procfs_socket_fd(o->pid, s->inode);
		if (fd >= 0)
			tracer_seed_listener_sock(t, o->pid, fd, &owner);
		tracer_seed_listener(t, &tuple, &owner);
		seeded++;
	}
	snapshot_free(&snap);
	fprintf(stderr, "aggbench: %zu listeners seeded\n", seeded);
}

static int cmd_record(int argc, char **argv)
{
	struct tracer_opts to = {};
	struct tracer t = {};
	struct recbuf r = {};
	uint64_t stats[CS_STAT_MAX] = {};
	const char *out = NULL;
	char *pids = NULL, *tok, *save;
	pid_t pid[64];
	size_t npid = 0;
	int c;

	while ((c = getopt(argc, argv, "p:o:")) != -1) {
		if (c == 'p')
			pids = optarg;
		else if (c == 'o')
			out = optarg;
		else
			return 2;
	}
	if (!pids || !out)
		return 2;
	if (tracer_preflight(&to) || tracer_open(&t, &to, rec_event, &r) || tracer_attach(&t, &to) ||
	    tracer_map_ring(&t))
		return 1;
	for (tok = strtok_r(pids, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (npid == sizeof(pid) / sizeof(pid[0]))
			return 2;
		pid[npid] = (pid_t)num(tok);
		if (tracer_add_target(&t, pid[npid++]))
			die("tracer_add_target");
	}
	seed_listeners(&t, pid, npid);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "aggbench: recording\n");
	while (!stop) {
		int err = ring_buffer__poll(t.rb, 100);

		if (err < 0 && err != -EINTR)
			break;
	}
	ring_buffer__consume(t.rb);
	tracer_stats(&t, stats);
	tracer_close(&t);
	write_events(out, r.ev, r.n, 0);
	printf("recorded events=%llu lost=%llu\n", (unsigned long long)r.n,
	       (unsigned long long)stats[CS_STAT_RB_LOST]);
	free(r.ev);
	return 0;
}

/* ---- synthetic streams ---- */

static struct cs_event *gen_next(struct gen *g)
{
	if (g->n == g->cap) {
		uint64_t cap = g->cap ? g->cap * 2 : 1 << 20;
		struct cs_event *ev = realloc(g->ev, cap * sizeof(*ev));

		if (!ev)
			die("synth: out of memory");
		g->ev = ev;
		g->cap = cap;
	}
	g->ts += 1000;	/* 1 us apart: 1 M events/s of simulated time */
	memset(&g->ev[g->n], 0, sizeof(g->ev[0]));
	g->ev[g->n].ts_ns = g->ts;
	return &g->ev[g->n++];
}

static void owner_of(struct cs_owner *o, int proc, uint32_t flags)
{
	o->tgid = 10000 + proc;
	o->flags = flags;
	o->start_ns = 1000000ULL * (proc + 1);
	snprintf(o->comm, sizeof(o->comm), "synth%d", proc);
}

/* Client 127.(1 + id / 60000 % 250).0.1:(1024 + id % 60000) ->
 * 127.0.0.1:(8000 + server): unique while fewer than 15 M live. */
static void pair_tuple(struct cs_tuple *t, const struct pair *p, bool server_side)
{
	uint8_t cli[4] = { 127, 1 + (uint8_t)(p->id / 60000 % 250), (uint8_t)(p->id / 15000000), 1 };
	uint8_t srv[4] = { 127, 0, 0, 1 };
	uint16_t cport = 1024 + p->id % 60000, sport = 8000 + p->server;

	memset(t, 0, sizeof(*t));
	t->family = AF_INET;
	memcpy(t->saddr, server_side ? srv : cli, 4);
	memcpy(t->daddr, server_side ? cli : srv, 4);
	t->sport = server_side ? sport : cport;
	t->dport = server_side ? cport : sport;
}

static uint64_t sk_of(const struct pair *p, bool server_side)
{
	/* Kernel-like addresses: slab objects 0x800 apart. */
	return 0xffff888100000000ULL + (p->id * 2 + server_side) * 0x800;
}

static uint64_t tw_of(const struct pair *p)
{
	return 0xffff889000000000ULL + p->id * 0x100;
}

static void emit_state(struct gen *g, const struct pair *p, bool server_side, int old, int new,
		       uint8_t flags, uint32_t oflags)
{
	struct cs_event *e = gen_next(g);

	e->type = CS_EV_STATE;
	e->sk = sk_of(p, server_side);
	owner_of(&e->owner, server_side ? p->server : p->client, oflags);
	pair_tuple(&e->tuple, p, server_side);
	if (!server_side && old == CS_TCP_CLOSE && new == CS_TCP_SYN_SENT)
		e->tuple.sport = 0;	/* the port is picked after SYN_SENT */
	e->cur_tgid = e->owner.tgid;
	e->oldstate = old;
	e->newstate = new;
	e->flags = flags;
	e->sk_shutdown = new == CS_TCP_CLOSE ? 3 : 0;
	if (new == CS_TCP_CLOSE) {
		e->io.bytes_sent = server_side ? 256 : 64;
		e->io.bytes_recv = server_side ? 64 : 256;
		e->io.turns = 2;
		e->io.last_dir = server_side ? CS_DIR_SEND : CS_DIR_RECV;
	}
}

void emit_open(struct gen *g, const struct pair *p)
{
	struct cs_event *e;

	emit_state(g, p, false, CS_TCP_CLOSE, CS_TCP_SYN_SENT, CS_F_NEW_OWNER, CS_OWNER_CONNECT);
	emit_state(g, p, true, CS_TCP_LISTEN, CS_TCP_SYN_RECV, CS_F_NEW_OWNER, CS_OWNER_LISTENER);
	emit_state(g, p, false, CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED, 0, CS_OWNER_CONNECT);
	emit_state(g, p, true, CS_TCP_SYN_RECV, CS_TCP_ESTABLISHED, 0, CS_OWNER_LISTENER);
	e = gen_next(g);
	e->type = CS_EV_ACCEPT;
	e->sk = sk_of(p, true);
	owner_of(&e->owner, p->server, CS_OWNER_ACCEPT);
	pair_tuple(&e->tuple, p, true);
	e->oldstate = e->newstate = CS_TCP_ESTABLISHED;
	e->flags = CS_F_NEW_OWNER;
}

/* The client closes first: it ends in TIME_WAIT, the server in LAST_ACK. */
static void emit_close(struct gen *g, const struct pair *p)
{
	emit_state(g, p, false, CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1, 0, CS_OWNER_CONNECT);
	emit_state(g, p, true, CS_TCP_ESTABLISHED, CS_TCP_CLOSE_WAIT, 0, CS_OWNER_ACCEPT);
	emit_state(g, p, false, CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2, CS_F_ORPHAN, CS_OWNER_CONNECT);
	emit_state(g, p, true, CS_TCP_CLOSE_WAIT, CS_TCP_LAST_ACK, 0, CS_OWNER_ACCEPT);
	emit_state(g, p, false, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE, CS_F_ORPHAN, CS_OWNER_CONNECT);
	g->ev[g->n - 1].tw = tw_of(p);
	emit_state(g, p, true, CS_TCP_LAST_ACK, CS_TCP_CLOSE, CS_F_ORPHAN, CS_OWNER_ACCEPT);
}

/* The TIME_WAIT's timer ran out: cancel, then expire. */
static void emit_tw_end(struct gen *g, const struct pair *p)
{
	for (int k = 0; k < 2; k++) {
		struct cs_event *e = gen_next(g);

		e->type = k ? CS_EV_TW_EXPIRE : CS_EV_TW_CANCEL;
		e->sk = e->tw = tw_of(p);
		owner_of(&e->owner, p->client, CS_OWNER_CONNECT);
		pair_tuple(&e->tuple, p, false);
		e->oldstate = e->newstate = CS_TCP_TIME_WAIT;
	}
}

void pair_make(struct pair *p, uint64_t id, int procs)
{
	p->id = id;
	p->client = (int)(id % procs);
	/* With several processes the peer is another one: cross-process. */
	p->server = procs > 1 ? (int)((id + 1) % procs) : 0;
}

/* TIME_WAIT sockets alive at once in the synthetic stream (their 60 s). */
#define SYNTH_TW_WINDOW 4096

static int cmd_synth(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "procs", required_argument, NULL, 'P' },
		{ "live", required_argument, NULL, 'L' },
		{ "steady", required_argument, NULL, 'S' },
		{},
	};
	uint64_t live = 1000, steady = 1000000, pairs, next_id = 0, prefill;
	struct gen g = {};
	struct pair *ring, *tw;
	const char *out = NULL;
	int c;

	g.procs = 1;
	while ((c = getopt_long(argc, argv, "o:", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'P': g.procs = (int)num(optarg); break;
		case 'L': live = num(optarg); break;
		case 'S': steady = num(optarg); break;
		default: return 2;
		}
	}
	if (!out || g.procs < 1 || g.procs > 4096 || live < 2)
		return 2;
	pairs = live / 2;	/* a loopback connection is two tracked sockets */
	ring = calloc(pairs, sizeof(*ring));
	tw = calloc(SYNTH_TW_WINDOW, sizeof(*tw));
	if (!ring || !tw)
		die("synth");
	for (uint64_t i = 0; i < pairs; i++) {
		pair_make(&ring[i], next_id++, g.procs);
		emit_open(&g, &ring[i]);
	}
	prefill = g.n;
	/* Steady churn: the oldest connection closes, a new one opens, and
	 * the TIME_WAIT of SYNTH_TW_WINDOW closes ago expires. */
	for (uint64_t step = 0; g.n - prefill < steady; step++) {
		struct pair *p = &ring[step % pairs], *t = &tw[step % SYNTH_TW_WINDOW];

		emit_close(&g, p);
		if (step >= SYNTH_TW_WINDOW)
			emit_tw_end(&g, t);
		*t = *p;
		pair_make(p, next_id++, g.procs);
		emit_open(&g, p);
	}
	write_events(out, g.ev, g.n, prefill);
	printf("synth events=%llu prefill=%llu procs=%d live=%llu\n", (unsigned long long)g.n,
	       (unsigned long long)prefill, g.procs, (unsigned long long)pairs * 2);
	free(g.ev);
	free(ring);
	free(tw);
	return 0;
}

/* ---- replay ---- */

/* The timed part on its own, so callgrind can count it alone
 * (--toggle-collect=feed_timed). */
__attribute__((noinline)) void feed_timed(struct agg *a, const struct cs_event *ev, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		agg_event(a, &ev[i]);
}

/* The interval's tick on its own (--ticks). */
__attribute__((noinline)) void tick_timed(struct agg *a, uint64_t now_ns)
{
	agg_tick(a, now_ns);
}

/* R reconciles against a dump holding every TIME_WAIT of the books, as a
 * census interval finds them all still there. */
__attribute__((noinline)) void reconcile_timed(struct agg *a, const struct sd_sock *socks,
					       size_t n, const struct inode_map *owners,
					       uint64_t rounds)
{
	for (uint64_t r = 0; r < rounds; r++)
		agg_reconcile(a, socks, n, owners);
}

/* R looks of the limits at the same dump's ephemeral ports, as each
 * census's limits_observe takes them (callgrind
 * --toggle-collect=limits_timed counts them alone). */
__attribute__((noinline)) void limits_timed(const struct sd_sock *socks, size_t n,
					    uint64_t rounds)
{
	struct port_use u[LIMITS_TOP_DESTS];

	for (uint64_t r = 0; r < rounds; r++)
		ports_usage(socks, n, 1024, 65535, u, LIMITS_TOP_DESTS);
}

static double replay_reconciles(struct agg *a, uint64_t rounds, size_t *nsocks,
				double *limits_ms)
{
	/* The TIME_WAIT and their server's listener, as a census has them. */
	struct sd_sock *socks = calloc(a->tw.count + 1, sizeof(*socks));
	const struct cs_tuple *t;
	struct inode_map owners;
	struct tw_entry *tw;
	size_t n = 0;
	uint64_t c0;

	if (!socks)
		die("calloc");
	for (size_t i = 0; hmap_next(&a->tw, &i, (const void **)&t, (void **)&tw);) {
		struct sd_sock *s = &socks[n++];

		s->family = (uint8_t)t->family;
		s->state = CS_TCP_TIME_WAIT;
		s->timer = 3;
		s->sport = t->sport;
		s->dport = t->dport;
		memcpy(s->saddr, t->saddr, 16);
		memcpy(s->daddr, t->daddr, 16);
		s->netns = t->netns;
		s->expires_ms = 30000;
	}
	/* In the order a census gives them: the kernel's hash order, which
	 * has nothing to do with the books' (their entries in the order the
	 * closes made them). Shuffled with a fixed seed, so that a run's
	 * lookups miss the cache as a census's do, and runs compare. */
	for (size_t i = n; i > 1; i--) {
		static uint64_t x = 0x9e3779b97f4a7c15ULL;
		size_t j;
		struct sd_sock tmp;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		j = (size_t)(x % i);
		tmp = socks[i - 1], socks[i - 1] = socks[j], socks[j] = tmp;
	}
	inode_map_init(&owners);
	a->snapshot_ns = a->now_ns;
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	reconcile_timed(a, socks, n, &owners, rounds);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	inode_map_free(&owners);
	*nsocks = n;
	if (n) {
		uint64_t c1;

		socks[n] = socks[0];
		socks[n].state = CS_TCP_LISTEN;
		socks[n].timer = 0;
		socks[n].sport = socks[0].dport;
		socks[n].dport = 0;
		memset(socks[n].daddr, 0, sizeof(socks[n].daddr));
		c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		limits_timed(socks, n + 1, rounds);
		*limits_ms = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - c1) / 1e6;
	}
	free(socks);
	return c0 / 1e6;
}

static int cmd_replay(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "loops", required_argument, NULL, 'l' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "reconciles", required_argument, NULL, 'r' },
		{ "ticks", required_argument, NULL, 't' },
		{},
	};
	uint64_t loops = 1, wall = 0, cpu_ns = 0, span, n, reconciles = 0, ticks = 0, tick_ns = 0;
	long rss0, cpu = -1;
	struct evfile_hdr h;
	struct cs_event *ev;
	struct agg a;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'l')
			loops = num(optarg);
		else if (c == 'c')
			cpu = (long)num(optarg);
		else if (c == 'r')
			reconciles = num(optarg);
		else if (c == 't')
			ticks = num(optarg);
		else
			return 2;
	}
	if (optind != argc - 1 || !loops)
		return 2;
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die("sched_setaffinity");
	}
	ev = read_events(argv[optind], &h);
	n = h.count - h.prefill;
	if (!n) {
		fprintf(stderr, "aggbench: %s: no events past the prefill\n", argv[optind]);
		return 1;
	}
	rss0 = status_kib("VmRSS");
	agg_init(&a, h.count ? ev[0].ts_ns : 0);
	for (uint64_t i = 0; i < h.prefill; i++)
		agg_event(&a, &ev[i]);
	span = ev[h.count - 1].ts_ns - ev[h.prefill].ts_ns + 1000000;
	for (uint64_t l = 0; l < loops; l++) {
		uint64_t t0, c0;

		/* Each pass a little later, so time only moves forward. */
		if (l)
			for (uint64_t i = h.prefill; i < h.count; i++)
				ev[i].ts_ns += span;
		for (uint64_t k = 0, at = 0; k < (ticks ? ticks : 1); k++) {
			uint64_t m = ticks ? (n * (k + 1)) / ticks - at : n;

			t0 = clock_ns(CLOCK_MONOTONIC);
			c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			feed_timed(&a, ev + h.prefill + at, m);
			cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			wall += clock_ns(CLOCK_MONOTONIC) - t0;
			at += m;
			if (ticks && at) {
				c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
				tick_timed(&a, ev[h.prefill + at - 1].ts_ns);
				tick_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			}
		}
	}
	printf("replay events=%llu seconds=%.6f cpu_seconds=%.6f events_per_s=%.0f "
	       "ns_per_event=%.1f prefill=%llu conns=%zu procs=%zu tw=%zu rss_kib=%ld "
	       "rss_growth_kib=%ld\n",
	       (unsigned long long)(n * loops), wall / 1e9, cpu_ns / 1e9, n * loops / (wall / 1e9),
	       (double)wall / (n * loops), (unsigned long long)h.prefill, a.conns.count,
	       a.procs.count, a.tw.count, status_kib("VmRSS"), status_kib("VmRSS") - rss0);
	if (ticks)
		printf("ticks=%llu tick_cpu_seconds=%.6f\n", (unsigned long long)(ticks * loops),
		       tick_ns / 1e9);
	if (reconciles) {
		size_t ns;
		double lms = 0, ms = replay_reconciles(&a, reconciles, &ns, &lms);

		printf("reconciles=%llu tw_dumped=%zu cpu_ms_per_reconcile=%.3f "
		       "ns_per_tw=%.1f limits_ns_per_tw=%.1f\n", (unsigned long long)reconciles,
		       ns, ms / reconciles, ns ? ms * 1e6 / reconciles / ns : 0,
		       ns ? lms * 1e6 / reconciles / ns : 0);
	}
	agg_free(&a);
	free(ev);
	return 0;
}

/* ---- fdinv ---- */

static int cmd_fdinv(int argc, char **argv)
{
	struct fdinv_opts o = { .flags = FDINV_RECORDS };
	struct fd_inventory inv;
	uint64_t t0;
	int err;

	if (argc != 2)
		return 2;
	t0 = clock_ns(CLOCK_MONOTONIC);
	err = fdinv_scan((pid_t)num(argv[1]), &inv, &o);
	if (err) {
		fprintf(stderr, "aggbench: fd inventory of %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	printf("fdinv fds=%llu tcp=%llu seconds=%.6f\n", (unsigned long long)inv.total,
	       (unsigned long long)inv.by_type[FDT_TCP],
	       (clock_ns(CLOCK_MONOTONIC) - t0) / 1e9);
	fdinv_free(&inv);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int rc = 2;

	if (!strcmp(cmd, "record"))
		rc = cmd_record(argc - 1, argv + 1);
	else if (!strcmp(cmd, "synth"))
		rc = cmd_synth(argc - 1, argv + 1);
	else if (!strcmp(cmd, "replay"))
		rc = cmd_replay(argc - 1, argv + 1);
	else if (!strcmp(cmd, "mem"))
		rc = cmd_mem(argc - 1, argv + 1);
	else if (!strcmp(cmd, "fdinv"))
		rc = cmd_fdinv(argc - 1, argv + 1);
	if (rc == 2)
		fprintf(stderr, "usage: aggbench record -p PIDS -o FILE | synth -o FILE [--procs P] "
				"[--live N] [--steady N] | replay FILE [--loops K] [--cpu N] | "
				"mem -n N [--procs P] [--tw N] | fdinv PID\n");
	return rc;
}
