// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The exporter's series selection (prom_state.c) and its text (prom.c),
 * driven by made-up books: sequences of snapshots in which processes and
 * endpoints change rank, join, exit and overflow the series cap. What must
 * hold: no counter series ever goes down (Prometheus rate() would read a
 * reset), "other" only grows, members keep their series, and a capped
 * snapshot holds whole processes only. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "unit.h"
#include "prom.h"
#include "prom_state.h"
#include "exporter.h"

/* ---- a scrape as name{labels} -> value, and the counter families ---- */

struct sample {
	char *key;		/* the line up to its value */
	double v;
	bool counter;		/* a counter, or part of a histogram */
};

struct scrape {
	struct sample *s;
	size_t n;
	size_t lines;		/* sample lines */
	char *text;
};

static bool is_counter(const char *text, const char *name)
{
	char want[320], base[256];
	const char *suffix[] = { "_bucket", "_sum", "_count" };

	snprintf(want, sizeof(want), "\n# TYPE %s counter\n", name);
	if (strstr(text, want))
		return true;
	for (size_t i = 0; i < 3; i++) {
		size_t ln = strlen(name), ls = strlen(suffix[i]);

		if (ln <= ls || strcmp(name + ln - ls, suffix[i]))
			continue;
		snprintf(base, sizeof(base), "%.*s", (int)(ln - ls), name);
		snprintf(want, sizeof(want), "\n# TYPE %s histogram\n", base);
		if (strstr(text, want))
			return true;
	}
	return false;
}

/* Scrapes are compared across snapshots and dropped without a free:
 * their buffers stay reachable from here, so LeakSanitizer (make
 * test-asan) reports only what the code under test leaks. */
static void **kept;
static size_t nkept, kept_cap;

static void keep(void *ptr)
{
	if (nkept == kept_cap) {
		void **k = realloc(kept, (kept_cap ? kept_cap * 2 : 1024) * sizeof(*k));

		if (!k)
			return;
		kept = k;
		kept_cap = kept_cap ? kept_cap * 2 : 1024;
	}
	kept[nkept++] = ptr;
}

static void parse(struct scrape *sc, char *text)
{
	char *save = NULL, *line, *copy = strdup(text);

	memset(sc, 0, sizeof(*sc));
	sc->text = text;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), name[256];

		if (line[0] == '#' || !sp)
			continue;
		sc->s = realloc(sc->s, (sc->n + 1) * sizeof(*sc->s));
		*sp = '\0';
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(line, "{"), line);
		sc->s[sc->n] = (struct sample){ .key = strdup(line), .v = strtod(sp + 1, NULL),
						.counter = is_counter(text, name) };
		keep(sc->s[sc->n].key);
		sc->n++;
		sc->lines++;
	}
	keep(sc->s);
	keep(text);
	free(copy);
}

static const struct sample *find(const struct scrape *sc, const char *key)
{
	for (size_t i = 0; i < sc->n; i++)
		if (!strcmp(sc->s[i].key, key))
			return &sc->s[i];
	return NULL;
}

static double val(const struct scrape *sc, const char *key)
{
	const struct sample *s = find(sc, key);

	return s ? s->v : -1;
}

/* Every counter series of before that is still in after is not lower. */
static void assert_monotonic(const struct scrape *before, const struct scrape *after,
			     const char *when)
{
	for (size_t i = 0; i < before->n; i++) {
		const struct sample *s = &before->s[i], *t;

		if (!s->counter || !(t = find(after, s->key)))
			continue;
		if (t->v < s->v)
			unit_leave(UNIT_FAIL, "%s: %s went down from %g to %g", when, s->key, s->v,
				   t->v);
	}
}

static struct run_info run_info(void)
{
	struct run_info r = { .hook = "tp_btf/inet_sock_set_state" };

	r.progs[0].name = "handle_set_state_btf";
	r.progs[0].attached = true;
	r.nprogs = 1;
	return r;
}

/* One exporter snapshot: update, render, parse. */
static void snap(struct prom_state *s, struct agg *a, uint64_t now_s, struct scrape *out)
{
	struct run_info run = run_info();
	struct prom_update_in in = { .now_ns = now_s * 1000000000ULL,
				     .fixed_series = prom_fixed_series(&run, NULL, true) };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	prom_state_update(s, a, &in);
	format_prom_state(f, s, a, &run, NULL, true);
	fclose(f);
	parse(out, buf);
}

/* ---- made-up books ---- */

static struct proc_books *proc(struct agg *a, pid_t pid, const char *comm)
{
	struct proc_books *p = agg_proc(a, pid);

	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	return p;
}

static struct endpoint_stats *ep(struct proc_books *p, uint16_t port)
{
	struct endpoint_key k = { .family = AF_INET, .side = EP_REMOTE, .port = port };

	k.addr[0] = 10;
	k.addr[3] = 1;
	return hmap_upsert(&p->endpoints, &k, NULL);
}

/* n more connections opened by p to port. */
static void opened(struct proc_books *p, uint16_t port, uint64_t n)
{
	p->total.opened += n;
	p->total.closed += n;
	p->lifetime_ms_hist[3] += n;
	ep(p, port)->opened += n;
}

static double opened_of(const struct scrape *sc, const char *pid, const char *comm)
{
	char key[128];

	snprintf(key, sizeof(key), "connscope_process_connections_opened_total{pid=\"%s\","
		 "comm=\"%s\"}", pid, comm);
	return val(sc, key);
}

static double ep_conns(const struct scrape *sc, const char *endpoint)
{
	char key[160];

	snprintf(key, sizeof(key), "connscope_process_endpoint_connections_total{pid=\"7\","
		 "comm=\"app\",endpoint=\"%s\"}", endpoint);
	return val(sc, key);
}

TEST(endpoint_other_never_decreases_when_ranking_changes)
{
	struct prom_limits lim = { 0 };
	struct prom_state s;
	struct agg a;
	struct scrape prev, cur;
	struct proc_books *p;
	double other_prev = 0;

	agg_init(&a, 0);
	p = proc(&a, 7, "app");
	prom_state_init(&s, &lim);
	/* 10 endpoints take the slots; then 5 more, each busier than any of
	 * the first ones, which a ranking by count would move into the top 10
	 * and the first ones out. */
	for (uint16_t port = 1; port <= 10; port++)
		opened(p, port, 1);
	snap(&s, &a, 1, &prev);
	ASSERT_EQ(ep_conns(&prev, "other"), -1, "no_other_while_slots_are_free");
	for (int round = 0; round < 8; round++) {
		uint16_t newcomer = 100 + round % 5;

		opened(p, newcomer, 50 + round * 10);
		opened(p, 1 + round % 10, 1);
		snap(&s, &a, 2 + round, &cur);
		assert_monotonic(&prev, &cur, "round");
		ASSERT_TRUE(ep_conns(&cur, "other") >= other_prev, "other_monotonic");
		ASSERT_TRUE(ep_conns(&cur, "10.0.0.1:100") < 0, "newcomer_stays_in_other");
		for (uint16_t port = 1; port <= 10; port++) {
			char label[32];

			snprintf(label, sizeof(label), "10.0.0.1:%u", port);
			ASSERT_TRUE(ep_conns(&cur, label) >= 1, "first_ten_keep_their_series");
		}
		other_prev = ep_conns(&cur, "other");
		prev = cur;
	}
	/* Sums still add up: endpoints + other = the process's connections. */
	{
		double sum = 0;

		for (size_t i = 0; i < cur.n; i++)
			if (strstr(cur.s[i].key, "connscope_process_endpoint_connections_total{pid=\"7\""))
				sum += cur.s[i].v;
		ASSERT_EQ((long long)sum, (long long)p->total.opened, "endpoints_sum_to_total");
	}
	prom_state_free(&s);
	agg_free(&a);
}

TEST(endpoint_count_moved_away_does_not_go_down)
{
	/* Pre-fork server: the listener's owner had the accept, accept() in
	 * another process takes it over and the first one's count drops. */
	struct prom_limits lim = { 0 };
	struct prom_state s;
	struct agg a;
	struct scrape before, after;
	struct proc_books *p;

	agg_init(&a, 0);
	p = proc(&a, 7, "app");
	prom_state_init(&s, &lim);
	ep(p, 80)->accepted = 3;
	snap(&s, &a, 1, &before);
	ep(p, 80)->accepted = 2;
	snap(&s, &a, 2, &after);
	assert_monotonic(&before, &after, "moved");
	ASSERT_EQ(ep_conns(&after, "10.0.0.1:80"), 3, "held_at_the_shown_value");
	prom_state_free(&s);
	agg_free(&a);
}

TEST(top_processes_sticky_and_other_monotonic)
{
	struct prom_limits lim = { .top_processes = 2 };
	struct prom_state s;
	struct agg a;
	struct scrape prev, cur;
	struct proc_books *p[6];
	double other_prev = 0;
	char comm[16];

	agg_init(&a, 0);
	prom_state_init(&s, &lim);
	/* 10 and 11 are the busiest at the first snapshot; 12 is busy too
	 * but there is no slot for it; 13 has done nothing yet. */
	for (int i = 0; i < 4; i++) {
		snprintf(comm, sizeof(comm), "p%d", 10 + i);
		p[i] = proc(&a, 10 + i, comm);
	}
	opened(p[0], 1, 5);
	opened(p[1], 1, 9);
	opened(p[2], 1, 4);
	snap(&s, &a, 1, &prev);
	ASSERT_EQ(opened_of(&prev, "10", "p10"), 5, "busiest_first_p10");
	ASSERT_EQ(opened_of(&prev, "11", "p11"), 9, "busiest_first_p11");
	ASSERT_EQ(opened_of(&prev, "12", "p12"), -1, "no_slot_for_p12");
	ASSERT_EQ(opened_of(&prev, "other", "other"), 4, "p12_in_other");
	ASSERT_EQ(opened_of(&prev, "13", "p13"), -1, "idle_not_shown");
	ASSERT_EQ(prom_state_others(&s), 1, "one_in_other");
	/* Now 12 and 13 are far busier than 10 and 11: a ranking would swap
	 * them, and "other" would lose 12's count. */
	for (int round = 0; round < 6; round++) {
		opened(p[2], 1, 100);
		opened(p[3], 2, 200);
		opened(p[round % 2], 1, 1);
		snap(&s, &a, 2 + round, &cur);
		assert_monotonic(&prev, &cur, "rank_change");
		ASSERT_TRUE(opened_of(&cur, "other", "other") >= other_prev, "other_monotonic");
		ASSERT_TRUE(opened_of(&cur, "10", "p10") > 0, "p10_keeps_its_series");
		ASSERT_TRUE(opened_of(&cur, "11", "p11") > 0, "p11_keeps_its_series");
		ASSERT_EQ(opened_of(&cur, "13", "p13"), -1, "p13_in_other_for_good");
		other_prev = opened_of(&cur, "other", "other");
		prev = cur;
	}
	ASSERT_EQ(opened_of(&cur, "10", "p10") + opened_of(&cur, "11", "p11") +
		  opened_of(&cur, "other", "other"),
		  p[0]->total.opened + p[1]->total.opened + p[2]->total.opened + p[3]->total.opened,
		  "processes_sum_to_host_total");
	/* Histograms add up the same way. */
	ASSERT_EQ(val(&cur, "connscope_process_connection_lifetime_seconds_count{pid=\"other\","
			    "comm=\"other\"}"),
		  p[2]->total.closed + p[3]->total.closed, "other_histogram_count");
	ASSERT_EQ(val(&cur, "connscope_processes_other"), 2, "processes_other_gauge");
	prom_state_free(&s);
	agg_free(&a);
}

TEST(exited_member_keeps_series_for_the_grace_then_frees_its_slot)
{
	struct prom_limits lim = { .top_processes = 1 };
	struct prom_state s;
	struct agg a;
	struct scrape sc;
	struct proc_books *first, *second, *third;

	agg_init(&a, 0);
	prom_state_init(&s, &lim);
	first = proc(&a, 20, "first");
	opened(first, 1, 3);
	snap(&s, &a, 100, &sc);
	ASSERT_EQ(opened_of(&sc, "20", "first"), 3, "member");
	first->exited = true;
	snap(&s, &a, 101, &sc);
	ASSERT_EQ(opened_of(&sc, "20", "first"), 3, "final_values_kept");
	/* A newcomer while the slot is held goes to "other". */
	second = proc(&a, 21, "second");
	opened(second, 1, 1);
	snap(&s, &a, 120, &sc);
	ASSERT_EQ(opened_of(&sc, "21", "second"), -1, "no_slot_during_grace");
	ASSERT_EQ(opened_of(&sc, "other", "other"), 1, "second_in_other");
	third = proc(&a, 22, "third");
	opened(third, 1, 2);
	snap(&s, &a, 100 + 60 + 1, &sc);
	ASSERT_EQ(opened_of(&sc, "20", "first"), -1, "dropped_after_grace");
	ASSERT_EQ(opened_of(&sc, "22", "third"), 2, "slot_to_a_newcomer");
	ASSERT_EQ(opened_of(&sc, "21", "second"), -1, "other_stays_other");
	ASSERT_EQ(opened_of(&sc, "other", "other"), 1, "other_unchanged");
	snap(&s, &a, 200, &sc);
	ASSERT_EQ(opened_of(&sc, "20", "first"), -1, "retired_stays_out");
	prom_state_free(&s);
	agg_free(&a);
}

/* Sample lines of one process (pid label) in a scrape, and whether each
 * of its histograms is whole. */
static size_t lines_of(const struct scrape *sc, const char *pid)
{
	char pat[32];
	size_t n = 0;

	snprintf(pat, sizeof(pat), "{pid=\"%s\",", pid);
	for (size_t i = 0; i < sc->n; i++)
		n += strstr(sc->s[i].key, pat) != NULL;
	return n;
}

TEST(series_cap_drops_whole_processes_in_join_order)
{
	struct run_info run = run_info();
	struct prom_limits lim = { .top_processes = 3 };
	size_t fixed = prom_fixed_series(&run, NULL, true), one;
	struct prom_state s;
	struct agg a;
	struct scrape sc;
	char comm[16];

	agg_init(&a, 0);
	for (int i = 0; i < 5; i++) {
		snprintf(comm, sizeof(comm), "p%d", 30 + i);
		opened(proc(&a, 30 + i, comm), 1, 10 - i);
	}
	/* Uncapped first, to learn a process's size. */
	prom_state_init(&s, &lim);
	snap(&s, &a, 1, &sc);
	ASSERT_EQ(sc.lines, s.series, "series_gauge_counts_the_lines");
	ASSERT_EQ(val(&sc, "connscope_snapshot_series"), sc.lines, "snapshot_series_metric");
	one = lines_of(&sc, "30");
	ASSERT_EQ(one, lines_of(&sc, "other"), "same_size_views");
	prom_state_free(&s);

	/* Room for the fixed part and two processes: 30 and 31 (joined
	 * first) stay, 32 and "other" go, whole. */
	lim.max_series = fixed + 2 * one + one / 2;
	prom_state_init(&s, &lim);
	for (int round = 0; round < 3; round++) {
		snap(&s, &a, 1 + round, &sc);
		ASSERT_TRUE(sc.lines <= lim.max_series, "within_the_cap");
		ASSERT_EQ(sc.lines, fixed + 2 * one, "two_whole_processes");
		ASSERT_EQ(lines_of(&sc, "30"), one, "p30_whole");
		ASSERT_EQ(lines_of(&sc, "31"), one, "p31_whole");
		ASSERT_EQ(lines_of(&sc, "32"), 0, "p32_dropped");
		ASSERT_EQ(lines_of(&sc, "other"), 0, "other_dropped");
		ASSERT_EQ(val(&sc, "connscope_series_limit"), lim.max_series, "limit_metric");
		ASSERT_EQ(val(&sc, "connscope_snapshot_series_dropped"), 2 * one, "dropped_metric");
		ASSERT_EQ(val(&sc, "connscope_series_dropped_total"), 2 * one * (round + 1),
			  "dropped_total_metric");
	}
	prom_state_free(&s);
	agg_free(&a);
}

TEST(one_shot_is_top_ten_endpoints_and_every_process)
{
	struct run_info run = run_info();
	struct agg a;
	struct proc_books *p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct scrape sc;

	agg_init(&a, 0);
	p = proc(&a, 7, "app");
	for (uint16_t port = 1; port <= 12; port++)
		opened(p, port, port);
	proc(&a, 8, "idle")->target = true;
	format_prom_attach(f, &a, &run, NULL);
	fclose(f);
	parse(&sc, buf);
	ASSERT_EQ(ep_conns(&sc, "10.0.0.1:12"), 12, "busiest_endpoint");
	ASSERT_EQ(ep_conns(&sc, "10.0.0.1:2"), -1, "tenth_busiest_and_below_in_other");
	ASSERT_EQ(ep_conns(&sc, "other"), 1 + 2, "other_is_the_rest");
	ASSERT_EQ(opened_of(&sc, "8", "idle"), 0, "idle_target_has_series");
	ASSERT_TRUE(strstr(buf, "connscope_series_limit") == NULL, "no_exporter_metrics");
	agg_free(&a);
}

/* A server forking one process per connection, --prom at the end: 1,201
 * backends wrote 15 MB, one set of series each; then the 16 busiest had
 * their own and the rest were "other". Now the target has its own and the
 * backends one group's (name and parent, as the text and HTML reports fold
 * them), and the sums add up. */
TEST(one_shot_children_grouped)
{
	struct run_info run = run_info();
	struct agg a;
	char *buf = NULL, *at;
	size_t len = 0, pids = 0;
	FILE *f = open_memstream(&buf, &len);
	struct scrape sc;

	agg_init(&a, 0);
	proc(&a, 100, "postgres")->target = true;
	opened(proc(&a, 100, "postgres"), 5432, 1);
	for (pid_t pid = 1000; pid < 2201; pid++) {
		struct proc_books *p = proc(&a, pid, "postgres");

		p->ptgid = 100;
		opened(p, 5432, 1 + (pid == 1500));
	}
	run.follow_children = true;
	format_prom_attach(f, &a, &run, NULL);
	fclose(f);
	parse(&sc, buf);
	for (at = buf; (at = strstr(at, "\nconnscope_process_connections_opened_total{")); at++)
		pids++;
	ASSERT_EQ(pids, 2, "target_and_one_group");
	ASSERT_EQ(opened_of(&sc, "100", "postgres"), 1, "target_has_series");
	ASSERT_EQ(opened_of(&sc, "1500", "postgres"), -1, "no_series_a_backend");
	ASSERT_EQ(val(&sc, "connscope_process_connections_opened_total{pid=\"children\","
			   "comm=\"postgres\",parent=\"100\"}"), 1202, "group_sums_its_children");
	ASSERT_EQ(val(&sc, "connscope_process_connection_lifetime_seconds_count{pid=\"children\","
			   "comm=\"postgres\",parent=\"100\"}"), 1202, "group_histogram");
	ASSERT_TRUE(len < 64 * 1024, "under_64kb");
	agg_free(&a);
}

/* Groups are one name and one parent: two servers of one name are two
 * groups, another name under one parent another; past PROM_MAX_GROUPS the
 * rest go to "other", and every counter still adds up. */
TEST(groups_by_name_and_parent_bounded)
{
	struct run_info run = run_info();
	struct agg a;
	char *buf = NULL, *at;
	size_t len = 0, series = 0;
	FILE *f = open_memstream(&buf, &len);
	struct scrape sc;
	double sum = 0;
	pid_t pid = 5000;

	agg_init(&a, 0);
	for (pid_t parent = 1; parent <= PROM_MAX_GROUPS + 4; parent++) {
		for (int i = 0; i < 3; i++) {
			struct proc_books *p = proc(&a, pid++, parent <= 2 ? "postgres" : "worker");

			p->ptgid = parent;
			opened(p, 80, 1);
		}
	}
	/* One more name under parent 1: its own group. */
	proc(&a, pid, "sh")->ptgid = 1;
	opened(agg_find_proc(&a, pid), 80, 1);
	run.follow_children = true;
	format_prom_attach(f, &a, &run, NULL);
	fclose(f);
	parse(&sc, buf);
	for (at = buf; (at = strstr(at, "\nconnscope_process_connections_opened_total{")); at++)
		series++;
	ASSERT_EQ(series, PROM_MAX_GROUPS + 1, "groups_then_other");
	ASSERT_EQ(val(&sc, "connscope_process_connections_opened_total{pid=\"children\","
			   "comm=\"postgres\",parent=\"1\"}"), 3, "first_server");
	ASSERT_EQ(val(&sc, "connscope_process_connections_opened_total{pid=\"children\","
			   "comm=\"postgres\",parent=\"2\"}"), 3, "second_server_apart");
	for (at = buf; (at = strstr(at, "\nconnscope_process_connections_opened_total{")); at++)
		sum += strtod(strchr(strchr(at, '}'), ' '), NULL);
	ASSERT_EQ(sum, 3 * (PROM_MAX_GROUPS + 4) + 1, "sums_add_up");
	agg_free(&a);
}

TEST(label_values_escaped)
{
	struct prom_limits lim = { 0 };
	struct prom_state s;
	struct agg a;
	struct scrape sc;

	agg_init(&a, 0);
	proc(&a, 9, "a\"b\\c");
	prom_state_init(&s, &lim);
	snap(&s, &a, 1, &sc);
	ASSERT_TRUE(strstr(sc.text, "comm=\"a\\\"b\\\\c\"") != NULL, "escaped");
	prom_state_free(&s);
	agg_free(&a);
}

/* Any local user can name a process "\xff" (prctl PR_SET_NAME): one byte
 * that is not UTF-8 and Prometheus rejects the whole scrape. Each such
 * byte becomes U+FFFD; valid UTF-8 passes unchanged. */
TEST(label_values_valid_utf8)
{
	struct prom_limits lim = { 0 };
	struct prom_state s;
	struct agg a;
	struct scrape sc;

	agg_init(&a, 0);
	proc(&a, 9, "\xff");
	proc(&a, 10, "ok\xc3");
	proc(&a, 11, "caf\xc3\xa9\xed\xa0\x80");
	prom_state_init(&s, &lim);
	snap(&s, &a, 1, &sc);
	ASSERT_TRUE(strstr(sc.text, "comm=\"\xef\xbf\xbd\"") != NULL, "lone_byte_replaced");
	ASSERT_TRUE(strstr(sc.text, "comm=\"ok\xef\xbf\xbd\"") != NULL, "cut_sequence_replaced");
	/* é kept; a UTF-16 surrogate encoded in UTF-8 is not valid: 3 bytes, 3 U+FFFD. */
	ASSERT_TRUE(strstr(sc.text, "comm=\"caf\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"") !=
		    NULL, "valid_kept_surrogate_replaced");
	ASSERT_TRUE(strstr(sc.text, "\xff\"") == NULL, "no_raw_byte");
	prom_state_free(&s);
	agg_free(&a);
}

/* exporter --all on a host where processes come and go: the books, the
 * "other" set and the retired set stay as big as the live processes,
 * while "other" keeps counting the ones that are gone (no counter drops,
 * none stalls) and members still get their grace. Before, every pid ever
 * seen kept its books and its entry in others/retired. */
TEST(gone_processes_forgotten_state_stays_flat)
{
	struct prom_limits lim = { .top_processes = 2 };
	struct prom_state s;
	struct agg a;
	struct scrape sc;
	struct proc_books *p;
	double other_prev = 0;
	uint64_t other_sum = 0;
	pid_t next = 1000;
	size_t forgotten = 0;
	struct quic_books qb;

	agg_init(&a, 0);
	prom_state_init(&s, &lim);
	quic_books_init(&qb, 0, 1000000000ULL);
	/* Two long-lived members. */
	opened(proc(&a, 10, "m1"), 1, 1000);
	opened(proc(&a, 11, "m2"), 1, 1000);
	for (int wave = 0; wave < 50; wave++) {
		/* 20 newcomers this interval, each with some connections: no
		 * free slot, so all go to "other". */
		for (int i = 0; i < 20; i++) {
			p = proc(&a, next++, "short");
			opened(p, (uint16_t)(1 + i), 3);
			/* QUIC books of their own too (in-kernel QUIC here). */
			quic_books_kernel_state(&qb, p->pid, 1, 0x1000 + p->pid, 7, 2);
			other_sum += 3;
		}
		snap(&s, &a, 10 + wave, &sc);
		ASSERT_TRUE(opened_of(&sc, "other", "other") >= other_prev, "other_monotonic");
		ASSERT_EQ(opened_of(&sc, "other", "other"), other_sum, "other_counts_all_ever");
		other_prev = opened_of(&sc, "other", "other");
		/* They all exit; the loop forgets them after the snapshot. */
		for (pid_t q = next - 20; q < next; q++)
			agg_find_proc(&a, q)->exited = true;
		forgotten += exporter_forget_gone(&s, &a, &qb, NULL, NULL);
		ASSERT_EQ(a.procs.count, 2, "books_of_live_processes_only");
		ASSERT_EQ(qb.procs.count, 0, "quic_books_of_gone_processes_dropped");
		ASSERT_EQ(prom_state_others(&s), 0, "no_gone_pid_in_other");
		ASSERT_EQ(s.retired.count, 0, "retired_empty");
	}
	ASSERT_EQ(forgotten, 50 * 20, "every_gone_process_forgotten");
	snap(&s, &a, 100, &sc);
	ASSERT_EQ(opened_of(&sc, "other", "other"), other_sum, "other_kept_after_all_gone");
	/* A member that exits keeps its series for the grace, then goes. */
	agg_find_proc(&a, 10)->exited = true;
	snap(&s, &a, 101, &sc);
	ASSERT_EQ(exporter_forget_gone(&s, &a, NULL, NULL, NULL), 0, "member_books_kept_in_grace");
	ASSERT_EQ(opened_of(&sc, "10", "m1"), 1000, "member_series_in_grace");
	snap(&s, &a, 101 + 61, &sc);
	ASSERT_EQ(exporter_forget_gone(&s, &a, NULL, NULL, NULL), 1, "member_forgotten_after_grace");
	ASSERT_EQ(a.procs.count, 1, "one_left");
	ASSERT_EQ(s.retired.count, 0, "retired_forgotten_too");
	quic_books_free(&qb);
	prom_state_free(&s);
	agg_free(&a);
}

/* exporter --comm/--cgroup: every process has series of its own (no
 * slots, no "other"), and one that exits keeps them for the grace, then
 * its series and books go, as with --all; with -p alone they stay. Before,
 * a cgroup whose workers come and go kept every one ever seen. */
TEST(selector_members_retired_after_grace)
{
	for (int retire = 0; retire < 2; retire++) {
		struct prom_limits lim = { .retire_gone = retire };
		struct prom_state s;
		struct agg a;
		struct scrape sc;

		agg_init(&a, 0);
		prom_state_init(&s, &lim);
		opened(proc(&a, 10, "w1"), 1, 5);
		opened(proc(&a, 11, "w2"), 1, 2);
		snap(&s, &a, 10, &sc);
		ASSERT_EQ(opened_of(&sc, "11", "w2"), 2, "both_have_series");
		agg_find_proc(&a, 11)->exited = true;
		snap(&s, &a, 11, &sc);
		ASSERT_EQ(exporter_forget_gone(&s, &a, NULL, NULL, NULL), 0, "kept_in_grace");
		ASSERT_EQ(opened_of(&sc, "11", "w2"), 2, "final_values_in_grace");
		snap(&s, &a, 11 + 61, &sc);
		if (retire) {
			ASSERT_EQ(opened_of(&sc, "11", "w2"), -1, "series_over_after_grace");
			ASSERT_EQ(exporter_forget_gone(&s, &a, NULL, NULL, NULL), 1,
				  "books_forgotten_after_grace");
			ASSERT_EQ(a.procs.count, 1, "live_one_left");
		} else {
			ASSERT_EQ(opened_of(&sc, "11", "w2"), 2, "p_alone_keeps_series");
		}
		ASSERT_EQ(opened_of(&sc, "10", "w1"), 5, "live_member_untouched");
		prom_state_free(&s);
		agg_free(&a);
	}
}

UNIT_MAIN()
