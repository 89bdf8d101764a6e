// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The reconcile: one kernel snapshot (every TCP socket, and inode -> pid)
 * against the books. Fills each process's truth, counts the unattributed,
 * ends TIME_WAIT tuples the kernel no longer has, and measures how far
 * books and kernel disagree. */
#include <stdlib.h>
#include <string.h>
#include "tcp_books.h"
#include "census_cut.h"

void agg_set_dumped(struct agg *a, const uint32_t *netns, size_t n)
{
	a->dumped_known = n <= AGG_MAX_DUMPED_NS;
	a->ndumped = a->dumped_known ? n : 0;
	for (size_t i = 0; i < a->ndumped; i++)
		a->dumped_ns[i] = netns[i];
}

static bool ns_dumped(const struct agg *a, uint32_t netns)
{
	if (!a->dumped_known)
		return true;
	for (size_t i = 0; i < a->ndumped; i++)
		if (a->dumped_ns[i] == netns)
			return true;
	return false;
}

/* A dump's sockets come mostly from one process a run of them (a churn's
 * TIME_WAIT are its client's, all towards one endpoint): its books, and
 * the endpoint's, looked up once for the run, where each was two and one
 * probes a socket every interval (#23 item 6). Neither table changes
 * while the dump is gone through. */
struct recon_memo {
	pid_t pid;
	struct proc_books *p;
	const struct proc_books *ep_p;
	struct endpoint_key ep;
	struct endpoint_stats *es;
};

static struct proc_books *memo_proc(struct agg *a, struct recon_memo *m,
				     pid_t pid)
{
	if (!m->p || m->pid != pid) {
		m->p = agg_find_proc(a, pid);
		m->pid = pid;
	}
	return m->p;
}

static struct endpoint_stats *memo_endpoint(struct recon_memo *m,
					    struct proc_books *p,
					    const struct endpoint_key *ep)
{
	if (!m->es || m->ep_p != p || memcmp(&m->ep, ep, sizeof(*ep))) {
		m->es = hmap_get(&p->endpoints, ep);
		m->ep_p = p;
		m->ep = *ep;
	}
	return m->es;
}

/* One bit by sport ^ dport for each of the books' live connections. */
static void port_bits(struct agg *a, uint8_t bits[8192])
{
	struct conn *c;

	memset(bits, 0, 8192);
	for (size_t i = 0; hmap_next(&a->conns, &i, NULL, (void **)&c);) {
		uint16_t h = c->tuple.sport ^ c->tuple.dport;

		bits[h >> 3] |= (uint8_t)(1u << (h & 7));
	}
}

/* A TIME_WAIT of the books the kernel has: charged to its holder (false:
 * it has none in the books), its timer and device as the kernel says, the
 * timer's ms left read at at_ns (the census's start, or the look's time;
 * 0: unknown). */
static bool tw_shown(struct agg *a, struct recon_memo *m, struct tw_entry *tw,
		     uint32_t expires_ms, uint32_t bound_if, uint64_t at_ns,
		     uint64_t cookie)
{
	struct proc_books *p = memo_proc(a, m, tw->pid);
	struct endpoint_stats *es;

	if (!p)
		return false;
	es = memo_endpoint(m, p, &tw->ep);
	p->truth.state[CS_TCP_TIME_WAIT]++;
	/* Marked in its entry: a table of the seen cost two probes and its
	 * growth for every TIME_WAIT of every dump (#23 item 6). */
	tw->seen = 1;
	tw->bound_if1 = bound_if + 1;
	/* Its cookie, where its close record had none to give
	 * (close_counts) and the books' entry is older than the look: one
	 * entered after the census began may have a predecessor at its
	 * tuple in the census (the kernel took it over meanwhile), whose
	 * cookie is not its own. (One older than the census that an
	 * untraced connection took over and closed into TIME_WAIT before
	 * any census showed it learns that one's here: review-s40 C1, left
	 * where the record has no cookie, per-transition records through
	 * the classic tracepoint.) */
	if (!tw->cookie && (!at_ns || tw->entered_ns < at_ns))
		tw->cookie = cookie;
	/* Its timer as the kernel has it now: re-armed by a FIN again, or
	 * an orphaned FIN_WAIT2's shorter tcp_fin_timeout (timer 3 in
	 * FIN_WAIT2). */
	if (at_ns)
		tw->deadline_ns = at_ns + (uint64_t)expires_ms * 1000000ULL;
	if (es && ++es->tw_live > es->tw_live_peak)
		es->tw_live_peak = es->tw_live;
	return true;
}

/* A census's socket the reconcile looks up in the books' TIME_WAIT table
 * (a TIME_WAIT, or an orphan's FIN_WAIT2 parked as one: timer 3). */
static bool tw_shown_sock(const struct sd_sock *s)
{
	return !s->inode && (s->state == CS_TCP_TIME_WAIT || s->timer == 3);
}

/* How many sockets ahead the reconcile fetches a TIME_WAIT's index slot;
 * its entry, half as many. */
#define TW_AHEAD 16

/* Whether n exact looks cost less than the census just taken, which a
 * second census would cost again (its walk of the host's tables and the
 * fd listings: its CPU as the caller says, else its wall time; the
 * reconcile's share not counted). Without either, a few looks only. */
static bool tw_look_worth(const struct agg *a, size_t n)
{
	uint64_t census_ns = a->census_cpu_ns ? a->census_cpu_ns :
			     a->cut.end_ns > a->snapshot_ns && a->snapshot_ns ?
			     a->cut.end_ns - a->snapshot_ns : 0;

	if (!census_ns)
		return n <= AGG_TW_LOOK_FEW;
	return (uint64_t)n * AGG_TW_LOOK_NS <= census_ns;
}

/* The second look at the TIME_WAIT the census lacked for the first time
 * (look[0..n), their entries tws[]), asked of the caller all at once in
 * place of a second census (#23 item 6): one the kernel still has is
 * shown, as if the census had shown it; one it has not is gone since the
 * census began (dead[], its gone_ns that census's start, as a second
 * census lacking it would have said); one without an answer waits for
 * the next census, as before. */
static void tw_look_again(struct agg *a, struct agg_tw_look *look,
			  struct tw_entry **tws, size_t n,
			  struct cs_tuple *dead, size_t *ndead)
{
	a->tw_look(a->tw_look_ctx, look, n);
	for (size_t i = 0; i < n; i++) {
		/* A memo of its own, forgotten at each confirm: a confirm
		 * may add an endpoint, and the table move under the memo's. */
		struct recon_memo memo = { 0 };
		struct tw_entry *tw = tws[i];

		a->tw_looked++;
		if (look[i].found > 0) {
			a->tw_looked_there++;
			tw->missed = 0;
			tw->gone_ns = 0;
			/* Its ms left as at the look, made after the
			 * census (early by the census's time else). */
			if (!tw_shown(a, &memo, tw, look[i].expires_ms,
				      look[i].bound_if, look[i].at_ns ?
				      look[i].at_ns : a->snapshot_ns,
				      look[i].cookie))
				a->unattributed.state[CS_TCP_TIME_WAIT]++;
			if (tw->maybe)
				agg_tw_confirm(a, tw);
		} else if (look[i].found == 0) {
			dead[(*ndead)++] = look[i].t;
		} else {
			a->tw_absent_once++;
		}
	}
}

void agg_reconcile(struct agg *a, const struct sd_sock *socks, size_t n,
		   const struct inode_map *owners)
{
	struct recon_memo memo = { 0 };
	struct hmap fileless, tw_held, cut_adj;
	uint8_t unowned_ports[8192];	/* sport ^ dport of the sockets below */
	uint8_t books_ports[8192];	/* sport ^ dport of the books' conns */
	bool books_ported = false;
	struct cut_index *cut = malloc(sizeof(*cut));
	struct cut_conn *cc;
	struct proc_books *p;
	uint64_t *twh;
	struct conn *c;
	pid_t *owner_pid;

	/* Sockets without a file (orphans, children not yet accepted) that
	 * are not TIME_WAIT are found in the books by 4-tuple. They are few
	 * and the books' connections many (all of a load test's), so the
	 * kernel's are indexed and the books walked once, and not at all
	 * when there are none. (Indexing the books instead cost a hash of
	 * every live connection each interval: a tenth of the agent's CPU
	 * in a churn, and at 1M sockets a transient table of ~100 MiB.) */
	/* So are those with a file the fd listings found no owner of: the
	 * census saw the file, its process closed it before the listings
	 * (or, where the listings came just before the census, attach's,
	 * made it after them: the books have it by tuple from its birth),
	 * and the end is not in the books yet (socket storage tells it at
	 * the socket's end: a client's FIN_WAIT2 waits for its peer's
	 * close). Live at the census, its owner the books' (50_census_cut
	 * under load: a round's 4 closes fell there, a false gap of 4).
	 * Most of these are other processes' sockets, always there: a bit
	 * by sport ^ dport of the books' connections (set on the first such
	 * socket) keeps them out of the index unless the books may hold
	 * their ports, and a bit of the indexed ones spares looking the
	 * books' every tuple up below. */
	hmap_init(&fileless, sizeof(struct cs_tuple), sizeof(pid_t));
	memset(unowned_ports, 0, sizeof(unowned_ports));
	for (size_t k = 0; k < n; k++) {
		const struct sd_sock *s = &socks[k];
		uint16_t h = s->sport ^ s->dport;
		struct cs_tuple t;

		if (s->state == CS_TCP_TIME_WAIT || s->timer == 3)
			continue;
		if (s->inode && (s->state == CS_TCP_LISTEN ||
				  inode_map_get(owners, s->inode)))
			continue;
		if (s->inode) {
			if (!books_ported) {
				port_bits(a, books_ports);
				books_ported = true;
			}
			if (!(books_ports[h >> 3] & (1u << (h & 7))))
				continue;
		}
		tuple_from_sd(&t, s);
		hmap_upsert(&fileless, &t, NULL);
		unowned_ports[h >> 3] |= (uint8_t)(1u << (h & 7));
	}
	for (size_t i = 0; fileless.count &&
			   hmap_next(&a->conns, &i, NULL, (void **)&c);) {
		uint16_t h = c->tuple.sport ^ c->tuple.dport;

		if (!(unowned_ports[h >> 3] & (1u << (h & 7))))
			continue;
		owner_pid = hmap_get(&fileless, &c->tuple);
		if (owner_pid)
			*owner_pid = c->pid;
	}
	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		struct endpoint_stats *es;

		memset(&p->truth, 0, sizeof(p->truth));
		p->truth.valid = true;
		for (size_t k = 0;
		     hmap_next(&p->endpoints, &k, NULL, (void **)&es);)
			es->tw_live = 0;
	}
	memset(&a->unattributed, 0, sizeof(a->unattributed));
	/* The connections begun or ended since the census began, judged by
	 * it (census_cut.h). Without memory for the index, none are. */
	if (cut)
		cut_index_build(a, cut);
	/* The census's TIME_WAIT, looked up in a table of tens of thousands
	 * of entries, each lookup two cache misses (its index slot, its
	 * entry): hashed first, then each slot fetched TW_AHEAD sockets
	 * ahead and each entry half that, so that the misses overlap (#23
	 * item 6). Without memory for the hashes, looked up one by one. */
	twh = a->tw.count ? malloc((n ? n : 1) * sizeof(*twh)) : NULL;
	for (size_t k = 0; twh && k < n; k++) {
		struct cs_tuple t;

		if (!tw_shown_sock(&socks[k]))
			continue;
		tuple_from_sd(&t, &socks[k]);
		twh[k] = hmap_hash(&a->tw, &t);
	}

	for (size_t k = 0; k < n; k++) {
		const struct sd_sock *s = &socks[k];
		int st = s->state < CS_TCP_MAX_STATES ? s->state : 0;
		struct cs_tuple t;
		struct tw_entry *tw;

		if (twh && k + TW_AHEAD < n && tw_shown_sock(&socks[k + TW_AHEAD]))
			hmap_prefetch_slot(&a->tw, twh[k + TW_AHEAD]);
		if (twh && k + TW_AHEAD / 2 < n && tw_shown_sock(&socks[k + TW_AHEAD / 2]))
			hmap_prefetch_entry(&a->tw, twh[k + TW_AHEAD / 2]);

		if (s->inode) {
			const struct inode_owner *o =
				inode_map_get(owners, s->inode);

			p = o ? memo_proc(a, &memo, o->pid) : NULL;
			cc = cut ? cut_match(a, cut, s) : NULL;
			/* Its file closed before the fd listings (or made
			 * after them): the owner is the books' (it ended
			 * since the census began, or its end is still to
			 * come: above). */
			if (!o && cc) {
				p = agg_find_proc(a, cc->pid);
			} else if (!o && fileless.count) {
				struct cs_tuple t;

				tuple_from_sd(&t, s);
				owner_pid = hmap_get(&fileless, &t);
				p = owner_pid && *owner_pid ?
				    memo_proc(a, &memo, *owner_pid) : NULL;
			}
			if (p)
				p->truth.state[st]++;
			if (p && cc && cc->pid == p->pid)
				cc->seen = 1;
			continue;
		}
		tuple_from_sd(&t, s);
		if (st == CS_TCP_TIME_WAIT || s->timer == 3) {
			tw = twh ? hmap_get_hashed(&a->tw, &t, twh[k]) : hmap_get(&a->tw, &t);
			/* Another socket's at its tuple: the kernel took the
			 * books' one over for a new connection (a SYN, or
			 * tcp_tw_reuse), and that one's TIME_WAIT is here.
			 * Not it, nor its holder's: the books' one is
			 * absent, and a traced newcomer's end replaces it
			 * anyway. */
			if (tw && tw->cookie && s->cookie &&
			    tw->cookie != s->cookie &&
			    (!a->snapshot_ns ||
			     tw->entered_ns < a->snapshot_ns))
				tw = NULL;
			if (!tw || !tw_shown(a, &memo, tw, s->expires_ms,
					     s->bound_if, a->snapshot_ns,
					     s->cookie))
				a->unattributed.state[CS_TCP_TIME_WAIT]++;
			continue;
		}
		owner_pid = hmap_get(&fileless, &t);
		p = owner_pid && *owner_pid ?
		    agg_find_proc(a, *owner_pid) : NULL;
		/* Held at the start and closed since, its end record still to
		 * come (socket storage sends nothing before it): the seed's
		 * process, whose books count it live. Before, it was
		 * unattributed and the books disagreed by 1 (10_attach's
		 * preexisting case, a server's LAST_ACK). */
		if (!p && a->seeds.count) {
			const struct conn *seed = hmap_get(&a->seeds, &t);

			if (seed)
				p = agg_find_proc(a, seed->pid);
		}
		/* One whose end the books had by now: theirs at the census. */
		cc = cut ? cut_match(a, cut, s) : NULL;
		if (!p && cc)
			p = agg_find_proc(a, cc->pid);
		if (p && cc && cc->pid == p->pid)
			cc->seen = 1;
		if (p) {
			p->truth.state[st]++;
			p->truth.orphan += tcp_state_orphanable(st);
			if (tcp_state_orphanable(st))
				p->truth.orphan_state[st]++;
		} else {
			a->unattributed.state[st]++;
			a->unattributed.orphan += tcp_state_orphanable(st);
		}
	}

	free(twh);

	/* TIME_WAIT tuples the kernel no longer has: expired or killed.
	 * Collected first: deleting shifts entries under the iterator. */
	{
		struct cs_tuple *dead = calloc(a->tw.count ? a->tw.count : 1,
					       sizeof(*dead));
		const struct cs_tuple *key;
		size_t ndead = 0, nlook = 0;
		/* The caller's second look, for those a census has shown
		 * (their device known: a look naming none misses a bound
		 * one). */
		struct agg_tw_look *look = a->tw_look && a->tw.count ?
			calloc(a->tw.count, sizeof(*look)) : NULL;
		struct tw_entry **tws = look ?
			calloc(a->tw.count, sizeof(*tws)) : NULL;

		a->tw_absent_once = 0;
		struct tw_entry *tw;

		for (size_t i = 0; hmap_next(&a->tw, &i, (const void **)&key,
					      (void **)&tw);) {
			bool seen = tw->seen;

			/* Cleared where the books' TIME_WAIT are counted,
			 * below. */
			if (!dead)
				continue;
			if (seen) {
				tw->missed = 0;
				tw->gone_ns = 0;
				if (tw->maybe)
					agg_tw_confirm(a, tw);
				continue;
			}
			/* Not in a namespace the dump read: not an end. Its
			 * timer's events end it: once its timer is cancelled
			 * early (the namespace deleted), the next reconcile
			 * ends it, as killed. So it stays at one absence. */
			if (!ns_dumped(a, key->netns) && tw->tw &&
			    !tw->cancelled &&
			    (a->snapshot_ns <= tw->entered_ns ||
			     a->snapshot_ns - tw->entered_ns <
			     AGG_TW_TIMER_BOUND_NS)) {
				tw->missed = 1;
				continue;
			}
			/* One no timer follows (the census), where no dump
			 * reads its namespace: alive until its deadline and a
			 * margin; past it, ended unseen. */
			if (!ns_dumped(a, key->netns) && !agg_tw_timed(a, tw) &&
			    a->snapshot_ns < tw->deadline_ns +
			    (AGG_TW_TIMER_BOUND_NS - AGG_TW_LEN_NS)) {
				tw->missed = 1;
				continue;
			}
			/* A sock_diag dump taken while sockets come and go can
			 * skip entries of the buckets it walks (it resumes by
			 * position): one absence of a TIME_WAIT whose timer
			 * was never cancelled is not its end. Gone only when
			 * the next dump lacks it too (found by 23_storm: 463
			 * of 3,000 dropped while still in the kernel). */
			/* Entered after the dump began: not in it, not gone,
			 * and not an absence either. */
			if (a->snapshot_ns &&
			    tw->entered_ns >= a->snapshot_ns) {
				a->tw_entered_during_dump++;
				continue;
			}
			/* A cancel is no end either: a re-armed timer (the
			 * peer's FIN reaching a FIN_WAIT2 tw) is cancelled
			 * too. */
			if (!tw->missed)
				tw->gone_ns = a->snapshot_ns;
			/* The run's last dump is the last word on one whose
			 * making is in doubt. */
			if (++tw->missed < 2 &&
			    !(tw->maybe && a->final_reconcile)) {
				if (tws && tw->bound_if1) {
					look[nlook].t = *key;
					look[nlook].bound_if =
						tw->bound_if1 - 1;
					look[nlook].cookie = tw->cookie;
					tws[nlook++] = tw;
				} else {
					a->tw_absent_once++;
				}
				continue;
			}
			/* A cancelled timer with no expiry after it: ended
			 * early. In census mode, by its age when the first
			 * dump lacked it. In a namespace no dump reads, how
			 * is not known. */
			if (!ns_dumped(a, key->netns))
				tw->gone_ns = 0;
			dead[ndead++] = *key;
		}
		/* Nothing has moved the table since: tws[] still point in it.
		 * Looked at where that costs less than the census a second
		 * census would be (a burst of expiries can be most of the
		 * books): else they wait for one, as before. */
		if (nlook && dead && tw_look_worth(a, nlook))
			tw_look_again(a, look, tws, nlook, dead, &ndead);
		else
			a->tw_absent_once += nlook;
		free(look);
		free(tws);
		for (size_t i = 0; i < ndead; i++) {
			struct tw_entry *gone = hmap_get(&a->tw, &dead[i]);

			if (gone && !agg_tw_timed(a, gone) && !gone->gone_ns &&
			    !gone->maybe)
				agg_tw_ended(a, &dead[i], false);
			else if (gone)
				agg_tw_gone(a, &dead[i], gone->gone_ns, false);
		}
		free(dead);
	}

	/* TIME_WAIT the books hold, per pid: one pass, not one a process.
	 * The table's TIME_WAIT come in runs of one holder (a churn's are
	 * its client's): the last holder's count is kept, where each was
	 * an upsert's hash and probe every interval (#23 item 6). Valid
	 * until the next insert, which replaces it. */
	hmap_init(&tw_held, sizeof(pid_t), sizeof(uint32_t));
	{
		uint32_t *last_held = NULL;
		pid_t last_pid = 0;
		struct tw_entry *tw;

		for (size_t i = 0; hmap_next(&a->tw, &i, NULL, (void **)&tw);) {
			/* Against the dump's count of them (the seen ones):
			 * those it showed, and those it should have, every
			 * one entered before it began. Not one entered after:
			 * the dump shows it or not by where its walk was (the
			 * demo's books disagreed by 1-4 at the end, each time
			 * the churn's last close came in the dump's time). */
			bool after = a->snapshot_ns &&
				     tw->entered_ns >= a->snapshot_ns;
			bool held_now = tw->seen || (!tw->maybe && !after);

			tw->seen = 0;
			if (!held_now)
				continue;
			if (!last_held || last_pid != tw->pid) {
				last_held = hmap_upsert(&tw_held, &tw->pid,
							 NULL);
				last_pid = tw->pid;
			}
			if (last_held)
				(*last_held)++;
		}
	}

	hmap_init(&cut_adj, sizeof(pid_t), sizeof(int64_t));
	if (cut)
		cut_gaps(a, cut, &cut_adj);
	else
		agg_census_drop(a);
	free(cut);

	/* Books and kernel should agree at a quiet moment; record the gap. */
	a->mismatch_last = 0;
	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		if (!p->target || p->exited)
			continue;
		/* Sockets alive, and TIME_WAIT: what the books hold against
		 * what the kernel has. Not state by state: with socket
		 * storage the books learn a connection's states at its end. */
		int64_t book = 0, kernel = 0, tw;

		for (int st = 1; st < CS_TCP_MAX_STATES; st++) {
			if (st == CS_TCP_TIME_WAIT)
				continue;
			book += p->live[st];
			kernel += p->truth.state[st];
		}
		const uint32_t *held = hmap_get(&tw_held, &p->pid);
		const int64_t *adj = hmap_get(&cut_adj, &p->pid);

		/* The books at the census's moment. */
		if (adj)
			book += *adj;

		tw = (int64_t)(held ? *held : 0) -
		     (int64_t)p->truth.state[CS_TCP_TIME_WAIT];
		a->mismatch_last += (book > kernel ? book - kernel :
					kernel - book) +
				    (tw < 0 ? -tw : tw);
	}
	if (a->mismatch_last > a->mismatch_max)
		a->mismatch_max = a->mismatch_last;
	a->reconciles++;
	hmap_free(&fileless);
	hmap_free(&tw_held);
	hmap_free(&cut_adj);
}

