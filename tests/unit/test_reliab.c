// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Reliability and security defects of issue 16, one test each: the hash
 * seed, UTF-8 in labels, bounded exporter state. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "unit.h"
#include "hashmap.h"
#include "fd_books.h"
#include "heatmap.h"
#include "quic_books.h"
#include "report_html_internal.h"
#include "netns_watch.h"
#include "timeutil.h"

/* Where 64 fixed keys land in a fresh map: the probe order. Written by a
 * fresh process of this binary (CONNSCOPE_HMAP_ORDER set), which picks its
 * own seed: that is the point of the test. */
static void hmap_order(char *buf, size_t len)
{
	struct hmap m;
	size_t off = 0;

	hmap_init(&m, sizeof(uint32_t), 1);
	for (uint32_t key = 0; key < 64; key++)
		hmap_upsert(&m, &key, NULL);
	/* The entries keep insertion order; the index says where each key's
	 * chain put it: its slots in order, each the entry number it holds. */
	for (size_t i = 0; i < m.cap; i++)
		off += snprintf(buf + off, off < len ? len - off : 0, "%u,",
				m.index[i] & (uint32_t)(m.cap - 1));
	hmap_free(&m);
}

__attribute__((constructor)) static void order_child(void)
{
	char buf[1024];

	if (!getenv("CONNSCOPE_HMAP_ORDER"))
		return;
	hmap_order(buf, sizeof(buf));
	fputs(buf, stdout);
	fflush(stdout);
	_exit(0);
}

static void order_of_fresh_process(char *buf, size_t len)
{
	char cmd[64];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "CONNSCOPE_HMAP_ORDER=1 /proc/%d/exe", (int)getpid());
	p = popen(cmd, "r");
	ASSERT_TRUE(p != NULL, "popen");
	n = fread(buf, 1, len - 1, p);
	buf[n] = '\0';
	ASSERT_EQ(pclose(p), 0, "child status");
	ASSERT_TRUE(n > 0, "child wrote its order");
}

/* Two processes, the same keys, different chains: the hash is keyed with a
 * per-process secret. With a fixed hash all three orders are equal (the
 * chance that 64 keys fall in the same order under two random seeds is
 * nil). */
TEST(hashmap_seeded_per_process)
{
	char a[1024], b[1024], mine[1024];

	order_of_fresh_process(a, sizeof(a));
	order_of_fresh_process(b, sizeof(b));
	hmap_order(mine, sizeof(mine));
	ASSERT_TRUE(strcmp(a, b) || strcmp(a, mine), "three processes, one key order: unseeded");
	ASSERT_TRUE(hmap_seed() != 0, "seed set before main");
}

static char *html_of(const char *s, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	html_esc_n(f, s, n);
	fclose(f);
	return buf;
}

/* The HTML report says charset=utf-8: a comm that is not becomes U+FFFD
 * per bad byte, also when the n-byte limit cuts a sequence. */
static void html_is(const char *in, size_t n, const char *want, const char *label)
{
	char *got = html_of(in, n);
	int same = !strcmp(got, want);

	free(got);
	ASSERT_TRUE(same, label);
}

TEST(html_escape_valid_utf8)
{
	html_is("\xff<", (size_t)-1, "\xef\xbf\xbd&lt;", "lone_byte");
	html_is("caf\xc3\xa9", (size_t)-1, "caf\xc3\xa9", "valid_kept");
	html_is("caf\xc3\xa9", 4, "caf\xef\xbf\xbd", "cut_by_n");
	html_is("\xc0\xaf", (size_t)-1, "\xef\xbf\xbd\xef\xbf\xbd", "overlong");
}

/* exporter -p with fd tracing, a day of 1 s intervals: the growth fit
 * keeps running sums (no sample array walked each tick) and the daemon's
 * books keep no heatmap columns; the slope is still exact. */
TEST(fd_books_daemon_constant_per_listing)
{
	struct fd_books b;
	struct fd_proc *p;
	int32_t fds[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	const char *types[8] = { "tcp", "tcp", "pipe", "pipe", "tcp", "tcp", "pipe", "pipe" };
	const uint64_t S = 1000000000ULL;

	fd_books_init(&b, 0, S);
	b.no_heatmaps = true;
	for (uint64_t t = 1; t <= 86400; t++)
		fd_books_reconcile(&b, 77, fds, t % 2 ? 8 : 6, types, t * S, false);
	p = fd_books_proc(&b, 77);
	ASSERT_EQ(p->nsamples, 86400, "listings_counted");
	ASSERT_EQ(heatmap_ncols(&p->hm_type), 0, "no_type_columns");
	ASSERT_EQ(heatmap_ncols(&p->hm_age), 0, "no_age_columns");
	/* Flat on average: 8, 6, 8, 6 ... fits a slope of ~0. */
	ASSERT_TRUE(fd_proc_slope(p) < 1e-6 && fd_proc_slope(p) > -1e-6, "flat_slope");
	fd_books_free(&b);
}

/* A Version Negotiation to the CID n (spoofable: anyone can send them). */
static void vn_to(struct quic_books *b, uint32_t n, uint64_t ts)
{
	struct quic_wire_event e;
	struct quic_pkt *p;

	memset(&e, 0, sizeof(e));
	e.tgid = 4242;
	e.type = QW_EV_LONG;
	e.dir = QW_DIR_INGRESS;
	e.ts_ns = ts;
	e.family = 2;
	e.lport = 50000;
	e.rport = 4433;
	p = &e.dgram.pkt[e.dgram.count++];
	p->form = QUIC_FORM_LONG;
	p->type = QUIC_PT_VERSION_NEG;
	p->version = 0;
	p->dcid_len = 8;
	memcpy(p->dcid, &n, sizeof(n));
	p->scid_len = 8;
	memset(p->scid, 0x0d, 8);
	quic_books_wire(b, &e);
}

/* A flood of Version Negotiations to made-up CIDs: the attempts they add
 * stop at the cap the Initial-side attempts have, what does not fit is
 * counted, and stale attempts go after the handshake timeout. */
TEST(quic_version_negotiation_attempts_capped)
{
	const uint64_t MS = 1000000ULL;
	struct quic_books b;
	const struct quic_proc *p;
	uint32_t n = QUIC_MAX_CONNS + 1000;

	quic_books_init(&b, 0, 1000 * MS);
	for (uint32_t i = 0; i < n; i++)
		vn_to(&b, i, 1 * MS);
	p = quic_books_proc(&b, 4242);
	ASSERT_TRUE(p != NULL, "books");
	ASSERT_EQ(p->attempts.count, QUIC_MAX_CONNS, "attempts_capped");
	ASSERT_EQ(p->attempts_full, 1000, "overflow_counted");
	ASSERT_EQ(p->src[0].version_negotiations, QUIC_MAX_CONNS, "counted_once_each_kept");
	quic_books_tick(&b, 1 * MS + QUIC_HS_TIMEOUT_NS + 1);
	p = quic_books_proc(&b, 4242);
	ASSERT_EQ(p->attempts.count, 0, "stale_attempts_expired");
	ASSERT_EQ(p->attempts_expired, QUIC_MAX_CONNS, "expiry_counted");
	quic_books_free(&b);
}

/* A TIME_WAIT entry of netns ns for pid, entered at entered_ns; tw: the
 * timer-followed socket's address (0: not followed). */
static struct tw_entry *tw_add(struct agg *a, uint32_t ns, uint16_t sport, pid_t pid,
			       uint64_t tw, uint64_t entered_ns)
{
	struct cs_tuple t = { .family = 2, .sport = sport, .dport = 80, .netns = ns };
	struct tw_entry *e = hmap_upsert(&a->tw, &t, NULL);

	e->pid = pid;
	e->tw = tw;
	e->entered_ns = entered_ns;
	return e;
}

/* A reconcile with a snapshot that read namespace ns (0: none). */
static void reconcile_with(struct agg *a, struct netns_watch *w, uint32_t ns)
{
	struct snap_ns sn = { .netns = ns, .pid = 1 };
	struct tcp_snapshot snap = { .ns = &sn, .nns = ns != 0 };
	struct inode_map owners;

	inode_map_init(&owners);
	/* As attach_reconcile does: the books learn when the dump began and
	 * which namespaces it read. */
	a->snapshot_ns = now_ns();
	agg_set_dumped(a, &sn.netns, snap.nns);
	netns_watch_before(w, &snap, a);
	agg_reconcile(a, NULL, 0, &owners);
	netns_watch_after(w, a);
	inode_map_free(&owners);
}

/* The last target of a namespace exits: the dumps no longer cover it.
 * Its TIME_WAIT followed by timers stays until a timer event ends it (the
 * namespace deleted: cancelled, ended early); one not followed, or past
 * 60 s with no end seen, is judged by the dumps (two absences). Before,
 * every one went as "end unseen" at the second reconcile while it still
 * lived in the namespace. */
TEST(unread_namespace_time_wait_left_to_timers)
{
	struct netns_watch w = { 0 };
	uint64_t now = now_ns();
	struct tw_entry *timed;
	struct agg a;

	agg_init(&a, now);
	agg_proc(&a, 10)->target = true;
	timed = tw_add(&a, 111, 1000, 10, 0xa000, now);
	tw_add(&a, 111, 1001, 10, 0, now);
	tw_add(&a, 111, 1002, 10, 0xb000, now - 70 * 1000000000ULL);
	/* Read once (its TIME_WAIT absent: the dump raced, one miss allowed). */
	reconcile_with(&a, &w, 111);
	ASSERT_EQ(a.tw.count, 3, "all_kept_one_absence");
	for (int i = 0; i < 5; i++)
		reconcile_with(&a, &w, 0);
	ASSERT_EQ(a.tw.count, 1, "timer_followed_kept_while_unread");
	ASSERT_TRUE(hmap_get(&a.tw, &(struct cs_tuple){ .family = 2, .sport = 1000, .dport = 80,
							 .netns = 111 }) != NULL, "the_timed_one");
	ASSERT_EQ(a.tw_gone_unknown, 2, "untimed_and_overdue_judged_by_dumps");
	/* The namespace is deleted: the kernel cancels its timer. */
	timed->cancelled = 1;
	reconcile_with(&a, &w, 0);
	ASSERT_EQ(a.tw.count, 0, "gone_after_cancel");
	ASSERT_EQ(agg_find_proc(&a, 10)->total.tw_killed, 1, "ended_early");
	ASSERT_TRUE(w.n == 1 && w.ns[0].lost && w.ns[0].done && w.ns[0].held == 3, "watch_state");
	/* A new target in it: read again, judged by the dumps again. */
	tw_add(&a, 111, 1003, 10, 0xc000, now_ns());
	reconcile_with(&a, &w, 111);
	reconcile_with(&a, &w, 111);
	ASSERT_EQ(a.tw.count, 0, "read_again_absent_twice_gone");
	ASSERT_TRUE(!w.ns[0].lost, "no_longer_lost");
	agg_free(&a);
}

UNIT_MAIN()
