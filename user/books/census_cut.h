/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The census's moment in the books: a cut consistent in time. The census
 * (the iter/tcp walk or the sock_diag dump, then the fd listings that
 * name each socket's owner) takes time, and the records drained after it
 * began move the books past it: a connection that closed after the walk
 * passed it is in the census and no longer in the books (the demo's
 * "books vs kernel: DISAGREE by 1", 1 end of 25 runs, ESTABLISHED 4 in
 * the books, 5 in the census). So the books note every connection that
 * began or ended from the census's start on, and the reconcile counts
 * each as the census found it:
 * - ended after the census ended: live at the census;
 * - born after it ended: not there;
 * - born or ended inside it: there if the census showed it for its owner
 *   (as TIME_WAIT entered during the dump is judged).
 * Pure: driven by recorded events in the unit tests. */
#ifndef CONNSCOPE_CENSUS_CUT_H
#define CONNSCOPE_CENSUS_CUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "hashmap.h"
#include "kernel_view.h"
#include "tcp_books_types.h"

/* The census begins (now, ktime): the TIME_WAIT entered from then on and
 * the connections born or ended are judged by what it shows. */
void agg_census_begin(struct agg *a, uint64_t now);
/* The census (sockets and their owners) is read. */
void agg_census_end(struct agg *a, uint64_t now);
/* No reconcile follows (the census failed): nothing kept. */
void agg_census_drop(struct agg *a);
/* Called by the books where c moves from state was to state now at ts. */
void cut_note(struct agg *a, struct conn *c, uint64_t sk, int was, int now, uint64_t ts);
void cut_free(struct census_cut *cut);

/* For the reconcile: the noted connections by tuple (the births alive
 * taken in), one bit by sport ^ dport to pass over the census's others. */
struct cut_index {
	struct hmap at;		/* struct cs_tuple -> uint32_t index in conns */
	uint8_t ports[8192];
};
void cut_index_build(struct agg *a, struct cut_index *ix);
/* The noted connection at s's tuple, or NULL. The caller sets its seen
 * when the census charges s to its pid. */
struct cut_conn *cut_match(struct agg *a, const struct cut_index *ix, const struct sd_sock *s);
/* What the books count at the census beyond what they count now, by
 * pid (pid_t -> int64_t, added to); the cut closed. */
void cut_gaps(struct agg *a, struct cut_index *ix, struct hmap *book_adj);

#endif
