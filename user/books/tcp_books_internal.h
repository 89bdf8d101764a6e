/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the TCP books' files share and nothing else reads (tcp_books.c:
 * the records' entry; tcp_books_state.c: one transition applied;
 * tcp_books_summary.c: an end record unfolded). Each file includes
 * tcp_books.h itself. */
#ifndef CONNSCOPE_TCP_BOOKS_INTERNAL_H
#define CONNSCOPE_TCP_BOOKS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

struct agg;
struct conn;
struct cs_event;
struct cs_tuple;
struct proc_books;

/* tcp_books_state.c */
void live_move(struct proc_books *p, int from, int to);
void listen_addr_note(struct agg *a, const struct cs_tuple *t);
/* The same for a listener no target may hold: up to half the table. */
void listen_addr_note_seen(struct agg *a, const struct cs_tuple *t);
bool listen_any_for(const struct agg *a, const struct cs_tuple *t);
/* Where t's listener sits, if the books saw it (listen_at_for). */
enum listen_at { LISTEN_AT_NONE, LISTEN_AT_ADDR, LISTEN_AT_ANY };
enum listen_at listen_at_for(const struct agg *a, const struct cs_tuple *t);
void conn_del(struct agg *a, const struct conn *c, uint64_t sk);
struct conn *conn_for(struct agg *a, const struct cs_event *e, bool *is_new);
void conn_set_owner(struct agg *a, struct conn *c, struct proc_books *to);
void load_note(struct agg *a, uint64_t ts);
void orphan_end(struct proc_books *p, uint64_t orphan_ns, uint64_t ts);
void handshake_takeover(struct agg *a, const struct conn *c, uint64_t ts);
void close_counts(struct agg *a, struct proc_books *p, const struct conn *c,
		  const struct cs_event *e, bool est_takeover);
struct conn *apply_state(struct agg *a, struct proc_books *p, const struct cs_event *e,
			 struct conn *known, bool known_new);

/* tcp_books_summary.c */
void apply_summary(struct agg *a, struct proc_books *p, const struct cs_event *e);

#endif
