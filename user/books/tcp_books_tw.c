// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The books' TIME_WAIT table: how a TIME_WAIT they hold leaves it (expired,
 * ended early, end unseen, or never made when the kernel's bucket table was
 * full), charged to its holder. Entering it is the close's, in
 * tcp_books.c; the census that decides ends from the dumps is
 * tcp_reconcile.c's. */
#include <stdlib.h>
#include <string.h>
#include "tcp_books.h"

#define TW_PORTS 65536

struct tw_entry *agg_tw_find(const struct agg *a, const struct cs_tuple *t)
{
	if (a->tw_ports && !a->tw_ports[t->sport])
		return NULL;
	return hmap_get(&a->tw, t);
}

bool agg_tw_look_is_tw(const struct cs_tuple *t, const struct sd_sock *got)
{
	struct cs_tuple at;

	if (got->timer != 3 || got->inode)
		return false;
	tuple_from_sd(&at, got);
	at.netns = t->netns;
	return !memcmp(&at, t, sizeof(at));
}

struct tw_entry *agg_tw_upsert(struct agg *a, const struct cs_tuple *t, bool *fresh)
{
	struct tw_entry *tw;

	/* Made with the table's first entry, so it counts every one; none
	 * (out of memory): every look asks the table. */
	if (!a->tw_ports && !a->tw.count)
		a->tw_ports = calloc(TW_PORTS, sizeof(*a->tw_ports));
	tw = hmap_upsert(&a->tw, t, fresh);
	if (tw && *fresh && a->tw_ports)
		a->tw_ports[t->sport]++;
	return tw;
}

/* agg_tw_forget of t's entry tw, found already (#23 item 6: a takeover
 * looked the tuple up five times on its way here). t is copied first: it
 * may point into a table the deletes move. */
static void tw_forget(struct agg *a, const struct cs_tuple *t, const struct tw_entry *tw)
{
	struct cs_tuple key = *t;

	/* The address may hold a newer TIME_WAIT by now (the kernel reuses
	 * a freed one's memory): its mapping is not ours to delete. */
	if (tw->tw) {
		const struct cs_tuple *mapped = hmap_get(&a->tw_by_ptr, &tw->tw);

		if (mapped && !memcmp(mapped, &key, sizeof(key)))
			hmap_del(&a->tw_by_ptr, &tw->tw);
	}
	if (hmap_del(&a->tw, &key) && a->tw_ports)
		a->tw_ports[key.sport]--;
}

/* A TIME_WAIT tuple leaves the books; how it ended is counted by the caller. */
void agg_tw_forget(struct agg *a, const struct cs_tuple *t)
{
	struct tw_entry *tw = agg_tw_find(a, t);

	if (tw)
		tw_forget(a, t, tw);
}

static void tw_ended(struct agg *a, const struct cs_tuple *t, const struct tw_entry *tw,
		     struct proc_books *holder, bool early)
{
	if (early) {
		if (holder)
			holder->total.tw_killed++;
	} else {
		a->tw_gone_unknown++;
		if (holder)
			holder->total.tw_end_unseen++;
	}
	tw_forget(a, t, tw);
}

/* A TIME_WAIT the books hold has ended and the caller knows it did
 * (early: true when it knows how, false when it does not): charged to
 * its holder, then forgotten. Every entered TIME_WAIT leaves the books
 * through here, agg_tw_forget after an expiry, or stays live, so
 * entered = expired + ended early + end unseen + live per process. */
void agg_tw_ended(struct agg *a, const struct cs_tuple *t, bool early)
{
	struct tw_entry *tw = agg_tw_find(a, t);

	if (tw)
		tw_ended(a, t, tw, agg_holder(a, tw->pid), early);
}

void agg_tw_confirm(struct agg *a, struct tw_entry *tw)
{
	struct proc_books *holder = agg_holder(a, tw->pid);
	struct endpoint_stats *es;

	tw->maybe = 0;
	if (!holder)
		return;
	holder->total.tw_entered++;
	es = hmap_upsert(&holder->endpoints, &tw->ep, NULL);
	if (es)
		es->tw_entered++;
}

void agg_tw_gone(struct agg *a, const struct cs_tuple *t, uint64_t when_ns, bool early)
{
	struct tw_entry *tw = agg_tw_find(a, t);

	if (tw)
		agg_tw_gone_at(a, t, tw, when_ns, early);
}

void agg_tw_gone_at(struct agg *a, const struct cs_tuple *t, struct tw_entry *tw,
		    uint64_t when_ns, bool early)
{
	/* Neither the confirm below nor anything before the forget moves
	 * the TIME_WAIT table or the processes' books. */
	struct proc_books *holder = agg_holder(a, tw->pid);

	if (tw->maybe) {
		/* A takeover shows the kernel made it; anything else (no
		 * dump had it, a new connection at its tuple) that it made
		 * none: the namespace's table was full. */
		if (early) {
			agg_tw_confirm(a, tw);
		} else {
			if (holder)
				holder->total.tw_not_made++;
			tw_forget(a, t, tw);
			return;
		}
	}
	/* Its timer's events say how it ended. One whose close matched no
	 * timer (CS_STAT_TW_UNMATCHED) has no event to come: judged by its
	 * age below. Before, it was an end unseen (all 6 of
	 * 51_tw_expiry_fast's --tw-timers agent, once in ~12 CI runs). */
	if (agg_tw_timed(a, tw)) {
		tw_ended(a, t, tw, holder, early || tw->cancelled);
		return;
	}
	/* Census: no TIME_WAIT runs out before its deadline, so one gone
	 * earlier was ended (a takeover, an RST, ss -K); gone at or after
	 * it, it expired (or was ended in the interval before the dump
	 * that saw it gone: the census' resolution). */
	if (when_ns + AGG_TW_DEADLINE_SLACK_NS >= tw->deadline_ns) {
		if (holder)
			holder->total.tw_expired++;
		tw_forget(a, t, tw);
		return;
	}
	tw_ended(a, t, tw, holder, true);
}
