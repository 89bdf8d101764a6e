/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Connection reuse in the books: per process and endpoint, connections
 * opened and accepted, concurrency, requests per connection, lifetime and
 * handshake time, and the churn finding. Called by the aggregator. */
#ifndef CONNSCOPE_REUSE_H
#define CONNSCOPE_REUSE_H

#include "tcp_books_types.h"

int reuse_log2(uint64_t v);

/* A time the kernel cut to 32 bits of µs (cs_conn_io's acc_us, last_us)
 * as ns: the first such moment at or after after_ns (71 min to choose
 * from: the handshake's end, which accept() and every send and receive
 * follow). 0 stays 0: not known. */
static inline uint64_t reuse_us32_after(uint64_t after_ns, uint32_t us32)
{
	uint64_t us = (after_ns + 999) / 1000;

	if (!us32)
		return 0;
	return (us + (uint32_t)(us32 - (uint32_t)us)) * 1000;
}

/* The same, the last such moment at or before before_ns (a connection's
 * last send or receive, before its end record's time). */
static inline uint64_t reuse_us32_before(uint64_t before_ns, uint32_t us32)
{
	uint64_t us = before_ns / 1000;
	uint32_t back = (uint32_t)us - us32;

	if (!us32 || back > us)
		return 0;
	return (us - back) * 1000;
}

/* A connection began (connect, or a listener's child / accept). */
void reuse_conn_begin(struct agg *a, struct proc_books *p, struct conn *c);
/* A listener's child made (LISTEN -> SYN_RECV): counted at its endpoint,
 * but concurrent only once accept() returned it (reuse_conn_accepted), at
 * the time being applied: one waiting in the accept queue carries no
 * request. */
void reuse_conn_queued(struct agg *a, struct proc_books *p, struct conn *c);
void reuse_conn_accepted(struct agg *a, struct proc_books *p, struct conn *c);
/* A connection held before we attached: concurrent, not opened by us. */
void reuse_conn_seed(struct agg *a, struct proc_books *p, struct conn *c);
/* The application closed it (FIN_WAIT1, LAST_ACK): no longer in use,
 * though the kernel keeps it a while; concurrency counts use. */
void reuse_conn_release(struct agg *a, struct proc_books *p, struct conn *c);
/* It carries no request after min(last_ns, until_ns): its last byte sent
 * or read (0 unknown), or until_ns (the first FIN either way, or its end),
 * whichever came first. A last byte from before it began carrying (an
 * accepted socket's request read in the queue) says nothing: until_ns.
 * Released there, then. */
void reuse_conn_done(struct agg *a, struct proc_books *p, struct conn *c, uint64_t last_ns,
		     uint64_t until_ns);
/* Its first FIN: sent by this side (active, ESTABLISHED -> FIN_WAIT1) or
 * by the peer (ESTABLISHED -> CLOSE_WAIT), counted at its endpoint. */
void reuse_close_first(struct agg *a, struct proc_books *p, const struct conn *c, bool active);
/* Handshake done (SYN_SENT -> ESTABLISHED at ts). */
void reuse_handshake(struct proc_books *p, const struct conn *c, uint64_t ts);
/* The connection ended at ts with its traffic. */
void reuse_conn_end(struct agg *a, struct proc_books *p, struct conn *c, uint64_t ts,
		    const struct cs_conn_io *io);
/* Ownership moved (listener's owner -> accepting process). */
void reuse_conn_move(struct agg *a, struct proc_books *from, struct proc_books *to, struct conn *c);
/* Interval closed: concurrency samples and heatmap columns. */
void reuse_tick(struct agg *a, struct proc_books *p, uint64_t now_ns);
/* agg_fit_clock for p's reuse books: changes of live queued before t0_ns
 * count from it, the heatmaps fit max_cols (0: no bound). */
void reuse_fit_clock(struct proc_books *p, uint64_t t0_ns, size_t max_cols);
/* A LISTEN socket of p. */
void reuse_listen(struct proc_books *p, uint16_t port);
/* Whether p listens on port (a connection there is one it accepted). */
bool reuse_listens_on(const struct proc_books *p, uint16_t port);

/* The endpoint a connection counts under. */
void reuse_endpoint(const struct proc_books *p, const struct conn *c, struct endpoint_key *k);
/* c's endpoint's figures at p, made if new (NULL: out of memory); for
 * agg.ep_conn, found once while p's endpoints stay as they are. */
struct endpoint_stats *reuse_ep(struct agg *a, struct proc_books *p, const struct conn *c);

struct churn_finding {
	pid_t pid;
	char comm[16];
	struct endpoint_key ep;
	uint64_t connections, requests;
	uint32_t concurrency;
};

/* Endpoints that open connections far faster than they use them:
 * opened / peak concurrency > 3 and fewer than 10 requests per connection. */
size_t reuse_findings(const struct agg *a, struct churn_finding *out, size_t max);
int churn_finding_text(char *buf, size_t len, const struct churn_finding *f);

/* Mean concurrency of an endpoint over the run so far: time-weighted, from
 * every open and close, not sampled. */
/* An endpoint of a process's books, as the reuse renderers list them. */
struct endpoint_use {
	struct endpoint_key key;
	const struct endpoint_stats *st;
};
/* p's endpoints with connections or requests (the map holds TIME_WAIT-only
 * ones too), most connections (opened + accepted) first, ties by key;
 * *n gets how many. The caller frees; NULL when memory runs out. */
struct endpoint_use *reuse_endpoints_by_conns(const struct proc_books *p, size_t *n);

double reuse_mean_concurrency(const struct proc_books *p, const struct endpoint_stats *es);
/* es added into sum, as the reports' "other" row sums the endpoints past
 * the top: connections, requests, the lifetime and requests-per-connection
 * histograms, and live_peak (summed: an upper bound of their joint peak). */
void reuse_endpoint_add(struct endpoint_stats *sum, const struct endpoint_stats *es);

/* p-quantile (0..1) of a log2 histogram, as the bucket's upper edge. */
uint64_t reuse_hist_quantile(const uint64_t *hist, double q);
/* The share of requests that went over a connection already used, 0..1:
 * each connection carries its first request, the rest are reuse. Fewer
 * requests than connections (connections that carried none) is no reuse
 * at all: 0, never negative. */
double reuse_ratio(uint64_t conns, uint64_t requests);

/* The queued changes of live connections are applied in time order, up
 * to each endpoint's horizon: the earliest start of its connections still
 * open (agg_tick: reset, note each open connection, sweep). */
void reuse_horizons_reset(struct proc_books *p);
void reuse_horizon_note(struct proc_books *p, const struct conn *c);
/* limit: no change at or after it is applied (0: none). */
void reuse_sweep(struct proc_books *p, uint64_t limit);
/* Frees what the endpoints hold beside themselves (before hmap_free). */
void reuse_endpoints_free(struct proc_books *p);

#endif
