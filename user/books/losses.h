/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Everything the agent knows it missed, in one place: lost ring buffer
 * records, maps that were full, seeds that did not fit, listings that
 * failed, programs that did not attach. The command fills it from the
 * tracers each interval and at the end; every renderer shows all of it
 * (the text report says so in its first line, JSON under agent.losses,
 * Prometheus as connscope_agent_losses_total{what}), so a count that is
 * low is never low quietly. */
#ifndef CONNSCOPE_LOSSES_H
#define CONNSCOPE_LOSSES_H

#include <stdbool.h>
#include <stdint.h>

enum {
	LOSS_TCP_EVENTS,	/* tcpstate ring buffer reservations failed */
	LOSS_TCP_SKIPPED,	/* tcpstate runs the kernel skipped (recursion) */
	LOSS_OWNER_MAP_FULL,	/* socket -> owner map full: a socket unowned */
	LOSS_ACCEPT_UNRESOLVED,	/* accept() fd not resolved to its sock */
	LOSS_TCP_SEEDS,		/* sockets held at start not seeded (map full) */
	LOSS_FD_EVENTS,		/* fdtrack ring buffer reservations failed */
	LOSS_FD_STACKS,		/* fd stack snapshots not reserved */
	LOSS_FD_LISTINGS,	/* /proc/PID/fd listings that failed */
	LOSS_QUIC_WIRE_EVENTS,	/* quicwire ring buffer */
	LOSS_QUIC_NGTCP2_EVENTS,/* ngtcp2 ring buffer */
	LOSS_QUIC_NGTCP2_CALLS,	/* ngtcp2 calls in flight not stored: connection unseen */
	LOSS_QUIC_UDP_SEEDS,	/* UDP sockets held at start not seeded */
	LOSS_QUIC_ATTEMPTS,	/* QUIC attempts / Version Negotiations past the cap */
	LOSS_ATTACH_FAILED,	/* programs or sources that did not attach */
	LOSS_TW_MAP_FULL,	/* traced TIME_WAIT not followed: tw_owners full */
	LOSS_TCP_ENDS_UNRUN,	/* connections ended with no state program run */
	LOSS_CENSUS_CUT,	/* births or ends in a census not noted (census_cut.h) */
	LOSS_LIVE_DROPPED,	/* open/close changes the reuse sweep could not queue */
	LOSS_MAX
};

struct agent_losses {
	uint64_t n[LOSS_MAX];
	/* Of n[LOSS_ATTACH_FAILED], the QUIC sources' (the wire source off
	 * for want of cgroup2 or CAP_NET_ADMIN): they leave TCP and fd counts
	 * whole, and the headline says so. */
	uint64_t quic_attach_failed;
};

/* Every loss is a QUIC source's: TCP and fd counts are whole. */
bool losses_quic_only(const struct agent_losses *l);

/* "tcp_events": the JSON key and Prometheus label value. */
const char *loss_key(int k);
/* "TCP events (ring buffer full)": what was missed, for people. */
const char *loss_text(int k);
/* The same after a count of n: "1 program or source not attached". */
const char *loss_text_n(int k, uint64_t n);
uint64_t losses_total(const struct agent_losses *l);

/* From the sources' counters: tcp[CS_STAT_MAX] (tracer_stats), fd
 * [FD_STAT_MAX] or NULL without fd tracking, q NULL without QUIC. */
struct quic_run;
void losses_collect(struct agent_losses *l, const uint64_t *tcp, uint64_t tcp_seeds_failed,
		    const uint64_t *fd, uint64_t fd_listings_failed, int fd_progs_failed,
		    const struct quic_run *q);
/* And from the books' own counters (user space's out-of-memory drops). */
struct agg;
void losses_collect_books(struct agent_losses *l, const struct agg *a);

#endif
