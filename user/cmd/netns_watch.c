// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A target's network namespace is read through a target living in it
 * (/proc/PID/ns/net, snapshot.c). Once the last traced process there has
 * exited there is no way in left: holding the namespace open would keep
 * it alive after its owner deleted it, so the agent does not. From then on
 * the sock_diag dumps lack its sockets, which is no sign that they ended:
 * a TIME_WAIT socket lives on for its 60 s, or dies with the namespace
 * when it is deleted (the kernel cancels its timer). So the TIME_WAIT
 * entries of such a namespace whose timer the BPF side follows are left
 * to their timer events (expiry, or a cancel: ended early), and one whose
 * timer is not followed (held before the run, no timer hooks) is judged
 * by the dumps as before: the books do that (agg_set_dumped). Here both
 * moments are said once on stderr (run_notes.c words them). */
#include <stdio.h>
#include "netns_watch.h"
#include "run_notes.h"
#include "timeutil.h"

static struct netns_seen *find(struct netns_watch *w, uint32_t netns)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->ns[i].netns == netns)
			return &w->ns[i];
	return NULL;
}

static size_t tw_in(const struct agg *a, uint32_t netns)
{
	const struct cs_tuple *key;
	size_t n = 0;

	for (size_t i = 0; hmap_next(&a->tw, &i, (const void **)&key, NULL);)
		n += key->netns == netns;
	return n;
}

void netns_watch_before(struct netns_watch *w, const struct tcp_snapshot *snap, struct agg *a)
{
	for (size_t i = 0; i < snap->nns; i++) {
		struct netns_seen *s = find(w, snap->ns[i].netns);

		if (!s && w->n < NETNS_WATCH_MAX) {
			s = &w->ns[w->n++];
			s->netns = snap->ns[i].netns;
		}
		/* Read again (a new target in it): dumps judge it again. */
		if (s)
			s->lost = s->done = false;
	}
	for (size_t i = 0; i < w->n; i++) {
		struct netns_seen *s = &w->ns[i];

		if (s->lost || snapshot_ns(snap, s->netns))
			continue;
		s->lost = true;
		s->held = tw_in(a, s->netns);
		s->done = !s->held;
		/* Without a TIME_WAIT hook nothing tells their ends but a dump,
		 * and none reads the namespace now: past their deadline they
		 * ended, how is not known. */
		format_netns_unread(stderr, s->netns, (now_ns() - a->t0_ns) / 1e9, s->held,
				    a->tw_census);
	}
}

void netns_watch_after(struct netns_watch *w, const struct agg *a)
{
	for (size_t i = 0; i < w->n; i++) {
		struct netns_seen *s = &w->ns[i];

		if (!s->lost || s->done || tw_in(a, s->netns))
			continue;
		s->done = true;
		format_netns_tw_ended(stderr, s->netns, s->held, (now_ns() - a->t0_ns) / 1e9);
	}
}
