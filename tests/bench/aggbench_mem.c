/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* aggbench mem: the books' memory, one reconcile's time and peak, the
 * TIME_WAIT table's size and the report's count of its holders (usage in
 * aggbench.c). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <sys/socket.h>
#include "tcp_books.h"
#include "inode_owners.h"
#include "snapshot.h"
#include "aggbench.h"

/* One reconcile of books holding every socket of a dump as the kernel
 * gives it: each with a file (an inode) but 1 in 1000 without (orphans,
 * children not yet accepted), found in the books by 4-tuple. How long it
 * takes, and how far it raises the high-water mark above the books. */
static void reconcile_cost(struct agg *a, uint64_t sockets, double *ms, long *peak_kib)
{
	struct sd_sock *socks = calloc(sockets ? sockets : 1, sizeof(*socks));
	struct inode_map owners;
	struct conn *c;
	size_t n = 0;
	long hwm0;
	uint64_t t0;

	if (!socks)
		die("calloc");
	for (size_t i = 0; hmap_next(&a->conns, &i, NULL, (void **)&c) && n < sockets;) {
		struct sd_sock *s = &socks[n];

		s->family = (uint8_t)c->tuple.family;
		s->state = c->state;
		s->sport = c->tuple.sport;
		s->dport = c->tuple.dport;
		memcpy(s->saddr, c->tuple.saddr, 16);
		memcpy(s->daddr, c->tuple.daddr, 16);
		s->netns = c->tuple.netns;
		s->inode = n % 1000 ? (uint32_t)n + 1 : 0;
		n++;
	}
	inode_map_init(&owners);
	/* Only the reconcile's own growth: reset the high-water mark. */
	{
		FILE *f = fopen("/proc/self/clear_refs", "w");

		if (f) {
			fputs("5", f);
			fclose(f);
		}
	}
	hwm0 = status_kib("VmRSS");
	t0 = clock_ns(CLOCK_MONOTONIC);
	agg_reconcile(a, socks, n, &owners);
	*ms = (clock_ns(CLOCK_MONOTONIC) - t0) / 1e6;
	*peak_kib = status_kib("VmHWM") - hwm0;
	inode_map_free(&owners);
	free(socks);
}

/* The report's TIME_WAIT in the books of each of procs processes: a pass
 * over the table a process (agg_tw_count) against one pass for all
 * (agg_tw_counts), the CPU time of each, and whether they agree. layout:
 * the entries held by each process in turn ("turns", the worst case for
 * the one pass's kept holder) or in runs of one holder ("runs", as a
 * churn's client holds its own). */
static void tw_counts_cost(const struct agg *a, int procs, const char *layout)
{
	uint64_t t0, t1, t2, sum_each = 0, sum_once = 0;
	struct hmap by_pid;
	bool same = true;

	t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (pid_t pid = 1; pid <= procs; pid++)
		sum_each += agg_tw_count(a, pid);
	t1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (agg_tw_counts(a, &by_pid))
		die("agg_tw_counts");
	for (pid_t pid = 1; pid <= procs; pid++) {
		const uint32_t *c = hmap_get(&by_pid, &pid);

		sum_once += c ? *c : 0;
	}
	t2 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (pid_t pid = 1; pid <= procs; pid++) {
		const uint32_t *c = hmap_get(&by_pid, &pid);

		same = same && (c ? *c : 0) == agg_tw_count(a, pid);
	}
	hmap_free(&by_pid);
	printf("twcount layout=%s procs=%d tw=%zu each_ms=%.3f once_ms=%.3f sum_each=%llu "
	       "sum_once=%llu same=%d\n", layout, procs, a->tw.count, (t1 - t0) / 1e6, (t2 - t1) / 1e6,
	       (unsigned long long)sum_each, (unsigned long long)sum_once, same);
}

/* n entries in the books' TIME_WAIT table (a client's towards one
 * server, 127.0.0.x), as closes make them: its RSS (struct tw_entry's
 * size is what a field more costs), their holders procs pids in turn,
 * then the report's count of each process's (tw_counts_cost). */
static void tw_table_mem(struct agg *a, uint64_t n, int procs)
{
	long rss0 = status_kib("VmRSS"), rss1;
	bool fresh;

	for (uint64_t i = 0; i < n; i++) {
		struct cs_tuple t = { .family = AF_INET, .sport = (uint16_t)(i % 60000 + 1),
				      .dport = 8080 };
		struct tw_entry *tw;

		t.saddr[0] = t.daddr[0] = 127;
		t.saddr[3] = 1;
		t.daddr[1] = (uint8_t)(i / 60000);
		t.daddr[2] = (uint8_t)(i / 60000 >> 8);
		t.daddr[3] = 1;
		tw = agg_tw_upsert(a, &t, &fresh);
		if (!tw)
			die("agg_tw_upsert");
		tw->pid = 1 + (pid_t)(i % (uint64_t)procs);
		tw->entered_ns = i;
	}
	rss1 = status_kib("VmRSS");
	printf("mem tw=%zu tw_entry_bytes=%zu tw_kib=%ld bytes_per_tw=%.1f\n", a->tw.count,
	       sizeof(struct tw_entry), rss1 - rss0, (rss1 - rss0) * 1024.0 / (n ? n : 1));
	tw_counts_cost(a, procs, "turns");
	{
		struct tw_entry *tw;
		size_t k = 0;

		for (size_t i = 0; hmap_next(&a->tw, &i, NULL, (void **)&tw); k++)
			tw->pid = 1 + (pid_t)(k * (uint64_t)procs / a->tw.count);
	}
	tw_counts_cost(a, procs, "runs");
}

int cmd_mem(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "procs", required_argument, NULL, 'P' },
		{ "tw", required_argument, NULL, 'T' },
		{},
	};
	uint64_t sockets = 1000, tws = 0;
	struct gen g = { .procs = 4 };
	long rss0, rss1, hwm, rec_kib;
	double rec_ms;
	struct agg a;
	int c;

	while ((c = getopt_long(argc, argv, "n:", lo, NULL)) != -1) {
		if (c == 'n')
			sockets = num(optarg);
		else if (c == 'P')
			g.procs = (int)num(optarg);
		else if (c == 'T')
			tws = num(optarg);
		else
			return 2;
	}
	rss0 = status_kib("VmRSS");
	agg_init(&a, 0);
	/* Opens fed in batches: the event buffer itself stays small. */
	for (uint64_t id = 0; id < sockets / 2;) {
		g.n = 0;
		for (uint64_t k = 0; k < 4096 && id < sockets / 2; k++, id++) {
			struct pair p;

			pair_make(&p, id, g.procs);
			emit_open(&g, &p);
		}
		feed_timed(&a, g.ev, g.n);
	}
	free(g.ev);
	g.ev = NULL;
	rss1 = status_kib("VmRSS");
	hwm = status_kib("VmHWM");
	reconcile_cost(&a, sockets, &rec_ms, &rec_kib);
	printf("mem sockets=%llu conns=%zu rss_before_kib=%ld rss_after_kib=%ld books_kib=%ld "
	       "bytes_per_socket=%.1f hwm_kib=%ld reconcile_ms=%.1f reconcile_peak_kib=%ld\n",
	       (unsigned long long)sockets, a.conns.count, rss0, rss1, rss1 - rss0,
	       (rss1 - rss0) * 1024.0 / (sockets ? sockets : 1), hwm, rec_ms, rec_kib);
	if (tws)
		tw_table_mem(&a, tws, g.procs);
	agg_free(&a);
	return 0;
}
