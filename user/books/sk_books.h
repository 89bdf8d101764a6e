/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Connections whose end the kernel never ran the state program for
 * (socket-storage mode; issue 22, item 2). On some hits the kernel runs no
 * BPF program at all for a tracepoint that tracefs records (this sandbox's
 * 6.18 runs none in a softirq that lands on its own agent's threads,
 * docs/reliability.md; pgbench -C: 0-3 FIN_WAIT2->CLOSE of ~2,400,
 * recursion_misses 0): the socket's
 * storage goes with the socket and its one record, sent at CLOSE, never
 * comes, so the connection would be missing from every count with nothing
 * said. The kernel side keeps books of the storages (cs_skb_key: per
 * namespace, owner and side): made when established, ended when the end
 * record went; the birth pass counts those alive. Per key, made (read
 * before the passes) - ended (read after) - alive is at least the
 * connections lost, plus sockets caught between being unhashed and their
 * CLOSE while a pass went by (a TIME_WAIT's hand-over): those are gone by
 * the next pass, a lost one stays. So a key's count is the smaller of two
 * passes in a row, and it only ever rises. Pure: driven by recorded
 * figures in the unit tests. */
#ifndef CONNSCOPE_SK_BOOKS_H
#define CONNSCOPE_SK_BOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hashmap.h"
#include "tcpstate.h"

/* One key's figures, summed over CPUs (made, ended) or from the pass
 * (alive in made). */
struct skb_line {
	struct cs_skb_key k;
	uint64_t made, ended;
};

struct sk_books {
	struct hmap keys;	/* struct cs_skb_key -> struct skb_track */
	uint64_t passes;	/* skb_pass calls */
	uint64_t counted;	/* connections counted lost, over every key */
	bool pending;		/* a key's last pass left more than it has counted:
				 * another pass says if it stays */
	bool frozen;		/* the kernel's books were full (CS_STAT_SKB_FULL): an
				 * end may be missing from them, nothing more counted */
};

/* Called for each key whose count rose, with the rise; flags: the key's
 * CS_SKB_* (CS_SKB_TOLD: connections the books already counted from
 * their birth records). */
typedef void (*skb_count_fn)(void *ctx, uint32_t tgid, uint32_t flags, uint64_t n);

void skb_init(struct sk_books *b);
void skb_free(struct sk_books *b);

/* One round of birth passes over the namespaces ns[0..nns). before: the
 * kernel's books read before the passes (their made is used), after: read
 * after (ended), alive: what the passes counted (the made field). Keys of
 * other namespaces are left alone (their sockets were not visited).
 * Returns the connections newly counted. */
uint64_t skb_pass(struct sk_books *b, const struct skb_line *before, size_t nb,
		  const struct skb_line *after, size_t na, const struct skb_line *alive,
		  size_t nal, const uint32_t *ns, size_t nns, skb_count_fn fn, void *ctx);

/* Whether namespace ns still has connections the books cannot account
 * for yet (made - ended above what is counted, in before): a pass there
 * must go on after its targets left, until it balances. */
bool skb_ns_open(const struct sk_books *b, const struct skb_line *before, size_t nb,
		 uint32_t ns);

/* Forget a key (the kernel's entry was deleted: balanced, owner gone). */
void skb_forget(struct sk_books *b, const struct cs_skb_key *k);

#endif
