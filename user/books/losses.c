// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stddef.h>
#include <string.h>
#include "fdtrack.h"
#include "losses.h"
#include "quic_books.h"
#include "tcpstate.h"
#include "tcp_books_types.h"

static const struct {
	const char *key, *text;
	const char *one;	/* the text after a count of 1, where it differs */
} kinds[LOSS_MAX] = {
	[LOSS_TCP_EVENTS] = { "tcp_events", "TCP events (ring buffer full)" },
	[LOSS_TCP_SKIPPED] = { "tcp_events_skipped",
			       "TCP events the kernel skipped (program already running on that CPU)" },
	[LOSS_OWNER_MAP_FULL] = { "owner_map_full", "socket owners not stored (owner map full; a socket can be refused twice)" },
	[LOSS_ACCEPT_UNRESOLVED] = { "accept_unresolved", "accepted sockets not resolved" },
	[LOSS_TCP_SEEDS] = { "tcp_seeds", "sockets held at start not seeded (map full)" },
	[LOSS_FD_EVENTS] = { "fd_events", "fd events (ring buffer full)" },
	[LOSS_FD_STACKS] = { "fd_stacks", "fd stack snapshots (ring buffer full)" },
	[LOSS_FD_LISTINGS] = { "fd_listings", "/proc/PID/fd listings failed" },
	[LOSS_QUIC_WIRE_EVENTS] = { "quic_wire_events",
				    "QUIC wire events (ring buffer full, or parser busy)" },
	[LOSS_QUIC_NGTCP2_EVENTS] = { "quic_ngtcp2_events",
				      "ngtcp2 events (ring buffer full)" },
	[LOSS_QUIC_NGTCP2_CALLS] = { "quic_ngtcp2_calls",
				     "ngtcp2 calls not followed (call map full)" },
	[LOSS_QUIC_UDP_SEEDS] = { "quic_udp_seeds", "UDP sockets held at start not seeded" },
	[LOSS_QUIC_ATTEMPTS] = { "quic_attempts",
				 "QUIC attempts not kept (cap reached: spoofed flood?)" },
	[LOSS_ATTACH_FAILED] = { "attach_failed", "programs or sources not attached",
				 "program or source not attached" },
	[LOSS_TW_MAP_FULL] = { "time_wait_map_full", "TIME_WAIT sockets not followed to their "
			       "end (TIME_WAIT map full: raise --max-time-wait)" },
	[LOSS_TCP_ENDS_UNRUN] = { "tcp_ends_not_run", "connections whose end the kernel ran no "
				  "program for (counted from the storages' books; in opened "
				  "or accepted, their close unseen)" },
	[LOSS_CENSUS_CUT] = { "census_cut_not_noted", "connections begun or ended during a "
			      "census not noted (out of memory): books vs kernel may differ "
			      "by them" },
	[LOSS_LIVE_DROPPED] = { "open_at_once_not_noted", "connection opens or closes the "
				"open-at-once counts could not queue (out of memory): peak and "
				"mean concurrency may be off by them" },
};

const char *loss_key(int k)
{
	return k >= 0 && k < LOSS_MAX ? kinds[k].key : "unknown";
}

const char *loss_text(int k)
{
	return k >= 0 && k < LOSS_MAX ? kinds[k].text : "unknown";
}

const char *loss_text_n(int k, uint64_t n)
{
	return n == 1 && k >= 0 && k < LOSS_MAX && kinds[k].one ? kinds[k].one : loss_text(k);
}

uint64_t losses_total(const struct agent_losses *l)
{
	uint64_t t = 0;

	for (int k = 0; k < LOSS_MAX; k++)
		t += l->n[k];
	return t;
}

bool losses_quic_only(const struct agent_losses *l)
{
	for (int k = 0; k < LOSS_MAX; k++) {
		switch (k) {
		case LOSS_QUIC_WIRE_EVENTS:
		case LOSS_QUIC_NGTCP2_EVENTS:
		case LOSS_QUIC_NGTCP2_CALLS:
		case LOSS_QUIC_UDP_SEEDS:
		case LOSS_QUIC_ATTEMPTS:
			continue;
		case LOSS_ATTACH_FAILED:
			if (l->n[k] > l->quic_attach_failed)
				return false;
			continue;
		default:
			if (l->n[k])
				return false;
		}
	}
	return true;
}

void losses_collect(struct agent_losses *l, const uint64_t *tcp, uint64_t tcp_seeds_failed,
		    const uint64_t *fd, uint64_t fd_listings_failed, int fd_progs_failed,
		    const struct quic_run *q)
{
	const struct quic_proc *p;

	memset(l, 0, sizeof(*l));
	l->n[LOSS_TCP_EVENTS] = tcp[CS_STAT_RB_LOST];
	l->n[LOSS_TCP_SKIPPED] = tcp[CS_STAT_SKIPPED];
	l->n[LOSS_OWNER_MAP_FULL] = tcp[CS_STAT_OWNER_FULL];
	l->n[LOSS_TW_MAP_FULL] = tcp[CS_STAT_TW_FULL];
	l->n[LOSS_ACCEPT_UNRESOLVED] = tcp[CS_STAT_ACCEPT_MISS];
	l->n[LOSS_TCP_SEEDS] = tcp_seeds_failed;
	l->n[LOSS_TCP_ENDS_UNRUN] = tcp[CS_STAT_ENDS_UNRUN];
	if (fd) {
		l->n[LOSS_FD_EVENTS] = fd[FD_STAT_RB_LOST];
		l->n[LOSS_FD_STACKS] = fd[FD_STAT_SNAP_LOST];
	}
	l->n[LOSS_FD_LISTINGS] = fd_listings_failed;
	l->n[LOSS_ATTACH_FAILED] = fd_progs_failed > 0 ? fd_progs_failed : 0;
	if (!q)
		return;
	l->n[LOSS_QUIC_WIRE_EVENTS] = quic_wire_lost(q);
	l->n[LOSS_QUIC_NGTCP2_EVENTS] = q->lib_stats[QN_STAT_RB_LOST];
	l->n[LOSS_QUIC_NGTCP2_CALLS] = q->lib_stats[QN_STAT_CALLS_FULL];
	l->n[LOSS_QUIC_UDP_SEEDS] = q->seed_failed;
	/* The wire source asked for and off: its reason is in the report. */
	l->quic_attach_failed = !q->wire_on && q->wire_error && q->wire_error[0];
	l->n[LOSS_ATTACH_FAILED] += l->quic_attach_failed;
	for (size_t i = 0; q->books && hmap_next(&q->books->procs, &i, NULL, (void **)&p);)
		l->n[LOSS_QUIC_ATTEMPTS] += p->attempts_full;
}

void losses_collect_books(struct agent_losses *l, const struct agg *a)
{
	l->n[LOSS_CENSUS_CUT] = a->cut.dropped;
	l->n[LOSS_LIVE_DROPPED] = a->live_dropped;
}
