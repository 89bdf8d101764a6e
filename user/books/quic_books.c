// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The QUIC books' process table and the wire's connection state machine
 * (ngtcp2's and in-kernel QUIC's are quic_books_life.c's).
 *
 * Wire (RFC 9000 7.2, 17.2): a client's first Initial opens a connection:
 * its SCID is the client's connection ID and its DCID the random original
 * DCID. Every later long header links the sender's SCID to the
 * connection; a Retry or a second Initial of the same client SCID is the
 * same connection (the client keeps its SCID across Retry). The handshake
 * is complete at the client's first 1-RTT (short header) packet: before
 * the handshake is confirmed a client has no 1-RTT keys to send with
 * (RFC 9001 4.1.1). The DCID of a short header names the connection; the
 * same DCID on a new 4-tuple is a NAT rebinding. A short header to a DCID
 * never seen in a long header, on the 4-tuple of a known connection, is
 * that connection after a connection ID change (RFC 9000 5.1.1: IDs
 * issued in NEW_CONNECTION_ID frames, encrypted; quic-go moves to one
 * right after the handshake, so each of its connections was counted an
 * unmatched flow before). The wire shows no end of
 * a connection (CONNECTION_CLOSE is encrypted): a connection ends with the
 * socket that carried it, and a handshake that does not complete within
 * QUIC_HS_TIMEOUT_NS failed.
 *
 * Direction: the events are per process, so "client to server" is egress
 * for a process that opened the connection and ingress for one that
 * accepted it. Only that direction counts completion and rebinding, so a
 * server's 0.5-RTT data and its answers on a new path are not counted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "quic_books.h"
#include "quic_books_internal.h"

#define MS 1000000ULL

void quic_books_init(struct quic_books *b, uint64_t t0_ns, uint64_t bucket_ns)
{
	memset(b, 0, sizeof(*b));
	hmap_init(&b->procs, sizeof(pid_t), sizeof(struct quic_proc));
	b->t0_ns = t0_ns;
	b->bucket_ns = bucket_ns ? bucket_ns : 1000000000ULL;
}

static void proc_free(struct quic_proc *p)
{
	hmap_free(&p->wconns);
	hmap_free(&p->cid_ix);
	hmap_free(&p->attempts);
	hmap_free(&p->lconns);
	hmap_free(&p->kconns);
	hmap_free(&p->cookies);
	hmap_free(&p->paths);
	heatmap_free(&p->hm_conns);
	heatmap_free(&p->hm_handshake);
}

void quic_books_drop(struct quic_books *b, pid_t pid)
{
	struct quic_proc *p = hmap_get(&b->procs, &pid);

	if (!p)
		return;
	proc_free(p);
	hmap_del(&b->procs, &pid);
}

void quic_books_fit_clock(struct quic_books *b, uint64_t t0_ns, uint64_t end_ns)
{
	size_t cols = heatmap_fit_cols(b->t0_ns, &t0_ns, end_ns, b->bucket_ns);
	struct quic_proc *p;

	b->t0_ns = t0_ns;
	for (size_t i = 0; hmap_next(&b->procs, &i, NULL, (void **)&p);) {
		if (!p->hm_ready)
			continue;
		heatmap_refit(&p->hm_conns, t0_ns, cols);
		heatmap_refit(&p->hm_handshake, t0_ns, cols);
		heatmap_set_end(&p->hm_conns, end_ns);
		heatmap_set_end(&p->hm_handshake, end_ns);
	}
}

void quic_books_free(struct quic_books *b)
{
	struct quic_proc *p;

	for (size_t i = 0; hmap_next(&b->procs, &i, NULL, (void **)&p);)
		proc_free(p);
	hmap_free(&b->procs);
}

/* Pointers into b->procs stay valid until the next new process. */
struct quic_proc *quic_proc_get(struct quic_books *b, pid_t pid)
{
	bool created;
	struct quic_proc *p = hmap_upsert(&b->procs, &pid, &created);

	if (!p || !created)
		return p;
	p->pid = pid;
	hmap_init(&p->wconns, sizeof(struct qcid), sizeof(struct qwconn));
	hmap_init(&p->cid_ix, sizeof(struct qcid), sizeof(struct qcid));
	hmap_init(&p->attempts, sizeof(struct qcid), sizeof(struct qattempt));
	hmap_init(&p->lconns, sizeof(uint64_t), sizeof(struct qlconn));
	hmap_init(&p->kconns, sizeof(uint64_t), sizeof(struct qkconn));
	hmap_init(&p->cookies, sizeof(uint64_t), sizeof(struct qcookie));
	hmap_init(&p->paths, sizeof(struct qpath), sizeof(struct qpathv));
	if (b->no_heatmaps)
		return p;
	p->hm_ready = !heatmap_init(&p->hm_conns, "quic_connections", "QUIC connections (wire)",
				     "connections", b->t0_ns, b->bucket_ns) &&
		      !heatmap_init(&p->hm_handshake, "quic_handshake",
				     "QUIC handshake time (wire)", "handshakes", b->t0_ns,
				     b->bucket_ns);
	if (p->hm_ready) {
		/* Fixed rows first, so every report lists them in this order. */
		heatmap_row(&p->hm_conns, "opened");
		heatmap_row(&p->hm_conns, "completed");
		heatmap_row(&p->hm_conns, "failed");
	}
	return p;
}

/* The books of the process an event of source src names; NULL for an
 * event without an owner (counted) or when memory runs out. */
struct quic_proc *quic_source_proc(struct quic_books *b, uint32_t tgid, uint32_t src,
				   const char *comm, uint64_t start_ns)
{
	struct quic_proc *p;

	if (!tgid) {
		b->unowned_events++;
		return NULL;
	}
	p = quic_proc_get(b, tgid);
	if (!p)
		return NULL;
	p->sources |= src;
	if (!p->comm[0] && comm[0])
		memcpy(p->comm, comm, sizeof(p->comm) - 1);
	if (!p->start_ns)
		p->start_ns = start_ns;
	return p;
}

/* A connection opened (as client) or accepted (as server). */
void quic_count_open(struct quic_counts *q, uint8_t role)
{
	q->connections++;
	if (role == QN_ROLE_CLIENT)
		q->as_client++;
	else
		q->as_server++;
}

const struct quic_proc *quic_books_proc(const struct quic_books *b, pid_t pid)
{
	return hmap_get(&b->procs, &pid);
}

static struct qcid cid_of(uint8_t len, const uint8_t *id)
{
	struct qcid c;

	memset(&c, 0, sizeof(c));
	c.len = len > QUIC_MAX_CID_LEN ? QUIC_MAX_CID_LEN : len;
	memcpy(c.id, id, c.len);
	return c;
}

static bool cid_eq(const struct qcid *a, const struct qcid *b)
{
	return a->len == b->len && !memcmp(a->id, b->id, a->len);
}

static struct qwconn *wconn_by_cid(struct quic_proc *p, const struct qcid *cid)
{
	const struct qcid *key = hmap_get(&p->cid_ix, cid);

	return key ? hmap_get(&p->wconns, key) : NULL;
}

/* Index another CID of c; a zero-length CID names nothing. */
static void wconn_index(struct quic_proc *p, struct qwconn *c, const struct qcid *cid)
{
	struct qcid *v;

	if (!cid->len)
		return;
	for (int i = 0; i < c->ncids; i++)
		if (cid_eq(&c->cids[i], cid))
			return;
	/* Past QW_CIDS the CID is not indexed: eviction could not find it
	 * again, and a later flow to it is counted unmatched. */
	if (c->ncids >= QW_CIDS)
		return;
	c->cids[c->ncids++] = *cid;
	v = hmap_upsert(&p->cid_ix, cid, NULL);
	if (v)
		*v = c->ccid;
}

static struct qpath path_of(const struct quic_wire_event *e)
{
	struct qpath k;

	memset(&k, 0, sizeof(k));
	k.family = e->family;
	k.lport = e->lport;
	k.rport = e->rport;
	memcpy(k.laddr, e->laddr, sizeof(k.laddr));
	memcpy(k.raddr, e->raddr, sizeof(k.raddr));
	return k;
}

static bool conn_live(const struct qwconn *c)
{
	return c && !c->closed && !c->failed;
}

/* The 4-tuple c went through: it names the connection begun on it last.
 * A connection begun on a 4-tuple a live one holds takes it: a client
 * port reused by a new process (the earlier connection's end is
 * encrypted, so it still looks live). An earlier connection seen there
 * again after a later one began shares it with that one (one socket
 * running both): a new CID there cannot be told apart. c's entry for a
 * 4-tuple it left goes, if still c's. */
static void path_note(struct quic_proc *p, struct qwconn *c, const struct quic_wire_event *e)
{
	struct qpath k = path_of(e);
	struct qpathv *v;
	struct qwconn *held;
	bool created;

	if (c->has_path && !memcmp(&c->path, &k, sizeof(k))) {
		v = hmap_get(&p->paths, &k);
		if (v && !v->shared && !cid_eq(&v->ccid, &c->ccid) &&
		    conn_live(hmap_get(&p->wconns, &v->ccid)))
			v->shared = true;
		return;
	}
	if (c->has_path) {
		v = hmap_get(&p->paths, &c->path);
		if (v && !v->shared && cid_eq(&v->ccid, &c->ccid))
			hmap_del(&p->paths, &c->path);
	}
	c->path = k;
	c->has_path = true;
	v = hmap_upsert(&p->paths, &k, &created);
	if (!v)
		return;
	held = created ? NULL : hmap_get(&p->wconns, &v->ccid);
	if (created || (!cid_eq(&v->ccid, &c->ccid) &&
			(!conn_live(held) || c->first_ns > held->first_ns))) {
		v->ccid = c->ccid;
		v->shared = false;
	} else if (!cid_eq(&v->ccid, &c->ccid)) {
		v->shared = true;
	}
}

/* A short header to a CID no long header named: the connection on its
 * 4-tuple, which moved to this CID; the CID is that connection's from now
 * on. NULL when no single live connection uses the 4-tuple. */
static struct qwconn *wconn_by_path(struct quic_proc *p, const struct quic_wire_event *e,
				    const struct qcid *cid)
{
	struct qpath k = path_of(e);
	struct qpathv *v = hmap_get(&p->paths, &k);
	struct qwconn *c;

	if (!v || v->shared)
		return NULL;
	c = hmap_get(&p->wconns, &v->ccid);
	if (!conn_live(c))
		return NULL;
	wconn_index(p, c, cid);
	p->short_by_path++;
	return c;
}

void quic_hist_add(struct quic_counts *q, uint64_t ns)
{
	int b = heatmap_log2_bucket(ns / 1000);

	if (b < 0)
		b = 0;
	if (b >= QUIC_HIST_BUCKETS)
		b = QUIC_HIST_BUCKETS - 1;
	q->handshake_us_hist[b]++;
	q->handshake_ns_sum += ns;
}

static void hm_count(struct quic_proc *p, const char *row, uint64_t ts)
{
	int r;

	if (p->hm_ready && (r = heatmap_row(&p->hm_conns, row)) >= 0)
		heatmap_add(&p->hm_conns, r, ts, 1);
}

static void wire_complete(struct quic_proc *p, struct qwconn *c, uint64_t ts)
{
	struct quic_counts *q = &p->src[0];
	uint64_t ns = ts > c->first_ns ? ts - c->first_ns : 0;
	char label[HEATMAP_LABEL_LEN];
	int r;

	if (c->completed)
		return;
	if (c->failed) {
		/* Declared failed by the timeout, then completed after all. */
		c->failed = false;
		q->handshakes_failed--;
	}
	c->completed = true;
	q->handshakes_completed++;
	quic_hist_add(q, ns);
	hm_count(p, "completed", ts);
	if (p->hm_ready) {
		heatmap_log2_label(label, sizeof(label), heatmap_log2_bucket(ns / MS), "ms");
		r = heatmap_row(&p->hm_handshake, label);
		if (r >= 0)
			heatmap_add(&p->hm_handshake, r, ts, 1);
	}
}

static void wire_fail(struct quic_proc *p, struct qwconn *c, uint64_t ts)
{
	if (c->completed || c->failed)
		return;
	c->failed = true;
	p->src[0].handshakes_failed++;
	hm_count(p, "failed", ts);
}

/* The socket a connection goes through: one connection per socket is the
 * client's common case, so its release needs no scan. */
static void cookie_note(struct quic_proc *p, struct qwconn *c, uint64_t cookie)
{
	struct qcookie *k;

	if (c->cookie == cookie || !cookie)
		return;
	c->cookie = cookie;
	k = hmap_upsert(&p->cookies, &cookie, NULL);
	if (!k)
		return;
	k->last = c->ccid;
	k->nconns++;
}

static void wire_close(struct quic_proc *p, struct qwconn *c, uint64_t ts)
{
	if (c->closed)
		return;
	wire_fail(p, c, ts);
	c->closed = true;
	p->src[0].closed++;
}

static void wire_release(struct quic_proc *p, uint64_t cookie, uint64_t ts)
{
	struct qcookie *k = hmap_get(&p->cookies, &cookie);
	struct qwconn *c;

	if (!k)
		return;
	if (k->nconns == 1) {
		c = hmap_get(&p->wconns, &k->last);
		if (c && c->cookie == cookie)
			wire_close(p, c, ts);
	} else {
		for (size_t i = 0; hmap_next(&p->wconns, &i, NULL, (void **)&c);)
			if (c->cookie == cookie)
				wire_close(p, c, ts);
	}
	hmap_del(&p->cookies, &cookie);
}

static struct qwconn *wire_open(struct quic_proc *p, const struct qcid *ccid,
				const struct qcid *odcid, uint8_t role, uint64_t ts)
{
	struct quic_counts *q = &p->src[0];
	struct qattempt *a;
	struct qwconn *c;
	bool created;

	c = hmap_upsert(&p->wconns, ccid, &created);
	if (!c || !created)
		return c;
	c->role = role;
	c->first_ns = c->last_ns = ts;
	c->ccid = *ccid;
	quic_count_open(q, role);
	if (!p->wire_first_ns || ts < p->wire_first_ns)
		p->wire_first_ns = ts;
	a = hmap_get(&p->attempts, ccid);
	if (a) {
		c->vn = a->vn;
		hmap_del(&p->attempts, ccid);
	}
	hm_count(p, "opened", ts);
	wconn_index(p, c, ccid);
	wconn_index(p, c, odcid);
	return c;
}

static bool client_to_server(const struct qwconn *c, uint8_t dir)
{
	return (dir == QW_DIR_EGRESS) == (c->role == QN_ROLE_CLIENT);
}

static void wire_long(struct quic_proc *p, const struct quic_wire_event *e)
{
	bool egress = e->dir == QW_DIR_EGRESS;
	struct quic_counts *q = &p->src[0];
	int n = e->dgram.count;

	if (n > QUIC_MAX_COALESCED)
		n = QUIC_MAX_COALESCED;
	for (int i = 0; i < n; i++) {
		const struct quic_pkt *k = &e->dgram.pkt[i];
		struct qcid d = cid_of(k->dcid_len, k->dcid), s = cid_of(k->scid_len, k->scid);
		struct qwconn *c;
		struct qattempt *a;
		bool from_server;

		switch (k->type) {
		case QUIC_PT_INITIAL:
		case QUIC_PT_0RTT:
		case QUIC_PT_HANDSHAKE:
			/* Long headers name the client's CID either way: its
			 * SCID from the client, its DCID from the server. */
			c = hmap_get(&p->wconns, &s);
			if (!c)
				c = hmap_get(&p->wconns, &d);
			if (!c) {
				/* Only a client's Initial starts one: a server
				 * answers to a CID it was given. */
				if (k->type != QUIC_PT_INITIAL)
					break;
				c = wire_open(p, &s, &d, egress ? QN_ROLE_CLIENT : QN_ROLE_SERVER,
					      e->ts_ns);
				if (!c)
					return;
			}
			from_server = egress == (c->role == QN_ROLE_SERVER);
			/* The server's SCID becomes the client's DCID; after a
			 * Retry the client's DCID is the Retry's SCID. */
			wconn_index(p, c, from_server ? &s : &d);
			c->last_ns = e->ts_ns;
			cookie_note(p, c, e->cookie);
			path_note(p, c, e);
			break;
		case QUIC_PT_RETRY:
			c = hmap_get(&p->wconns, &d);
			if (c && !c->retried) {
				c->retried = true;
				q->retries++;
			}
			if (c)
				wconn_index(p, c, &s);
			break;
		case QUIC_PT_VERSION_NEG:
			/* Sent by the server to the client's SCID. */
			c = hmap_get(&p->wconns, &d);
			if (c && !c->vn) {
				c->vn = true;
				q->version_negotiations++;
				break;
			}
			a = hmap_get(&p->attempts, &d);
			/* Spoofed datagrams can name any number of CIDs: the
			 * same cap as the attempts below, and what does not fit
			 * is counted, not silently kept or dropped. */
			if (!c && !a && p->attempts.count >= QUIC_MAX_CONNS) {
				p->attempts_full++;
				break;
			}
			if (!c && (!a || !a->vn)) {
				a = a ? a : hmap_upsert(&p->attempts, &d, NULL);
				if (a) {
					a->vn = true;
					a->first_ns = a->first_ns ? a->first_ns : e->ts_ns;
				}
				q->version_negotiations++;
			}
			break;
		case QUIC_PT_1RTT:
			/* Coalesced after a long header (the client's last
			 * Handshake packet and its first 1-RTT packet share a
			 * datagram); the DCID length is the one BPF learned. */
			if (k->flags & QUIC_PF_DCID_UNKNOWN)
				break;
			c = wconn_by_cid(p, &d);
			if (c && client_to_server(c, e->dir))
				wire_complete(p, c, e->ts_ns);
			break;
		case QUIC_PT_UNKNOWN:
			/* A version we cannot read past the CIDs: an attempt
			 * that Version Negotiation may answer. */
			if (hmap_get(&p->wconns, &s) || !s.len)
				break;
			if (p->attempts.count >= QUIC_MAX_CONNS && !hmap_get(&p->attempts, &s)) {
				p->attempts_full++;
				break;
			}
			{
				bool created;

				a = hmap_upsert(&p->attempts, &s, &created);
				if (a && created)
					a->first_ns = e->ts_ns;
			}
			break;
		default:
			break;
		}
	}
}

void quic_books_wire(struct quic_books *b, const struct quic_wire_event *e)
{
	struct quic_proc *p;
	struct qwconn *c;
	struct qcid d;

	p = quic_source_proc(b, e->tgid, QSRC_WIRE, e->comm, e->start_ns);
	if (!p)
		return;
	switch (e->type) {
	case QW_EV_LONG:
		wire_long(p, e);
		break;
	case QW_EV_FIRST_SHORT:
	case QW_EV_PATH_CHANGE:
		d = cid_of(e->dgram.pkt[0].dcid_len, e->dgram.pkt[0].dcid);
		c = wconn_by_cid(p, &d);
		if (!c && e->type == QW_EV_FIRST_SHORT)
			c = wconn_by_path(p, e, &d);
		if (!c) {
			if (e->type == QW_EV_FIRST_SHORT)
				p->unmatched_short++;
			break;
		}
		c->last_ns = e->ts_ns;
		cookie_note(p, c, e->cookie);
		path_note(p, c, e);
		if (!client_to_server(c, e->dir))
			break;
		if (e->type == QW_EV_FIRST_SHORT)
			wire_complete(p, c, e->ts_ns);
		else
			p->src[0].migrations++;
		break;
	case QW_EV_RELEASE:
		/* Every connection whose last socket this was ends with it. */
		wire_release(p, e->cookie, e->ts_ns);
		break;
	default:
		b->malformed_events++;
	}
}

void quic_books_stack(struct quic_books *b, pid_t pid, const char *name)
{
	struct quic_proc *p = hmap_get(&b->procs, &pid);

	if (!p)
		return;
	p->stack_looked = true;
	snprintf(p->stack, sizeof(p->stack), "%s", name ? name : "");
}

void quic_books_proc_gone(struct quic_books *b, pid_t pid, uint64_t ts_ns)
{
	struct quic_proc *p = hmap_get(&b->procs, &pid);
	struct qwconn *c;
	struct qlconn *l;

	if (!p)
		return;
	p->gone = true;
	for (size_t i = 0; hmap_next(&p->wconns, &i, NULL, (void **)&c);)
		wire_close(p, c, ts_ns);
	for (size_t i = 0; hmap_next(&p->lconns, &i, NULL, (void **)&l);) {
		p->src[1].closed++;
		if (!l->completed)
			p->src[1].handshakes_failed++;
	}
	hmap_clear(&p->lconns);
}

/* Finished connections go first when a process holds too many. */
static void wire_evict(struct quic_proc *p, uint64_t now)
{
	struct qwconn *c;
	struct qcid *gone;
	size_t n = 0;

	if (p->wconns.count <= QUIC_MAX_CONNS)
		return;
	gone = calloc(p->wconns.count, sizeof(*gone));
	if (!gone)
		return;
	for (size_t i = 0; hmap_next(&p->wconns, &i, NULL, (void **)&c);)
		if (c->closed || c->failed || (c->completed && now - c->last_ns > 60 * 1000 * MS))
			gone[n++] = c->ccid;
	for (size_t i = 0; i < n; i++) {
		struct qpathv *v;

		c = hmap_get(&p->wconns, &gone[i]);
		for (int j = 0; c && j < c->ncids; j++)
			hmap_del(&p->cid_ix, &c->cids[j]);
		if (c && c->has_path && (v = hmap_get(&p->paths, &c->path)) &&
		    cid_eq(&v->ccid, &c->ccid))
			hmap_del(&p->paths, &c->path);
		hmap_del(&p->wconns, &gone[i]);
	}
	p->evicted += n;
	free(gone);
}

/* An attempt no connection followed within the handshake timeout never
 * will (a client gives up long before): without this, spoofed attempts
 * would hold their slots for good and fill the cap. */
static void attempts_expire(struct quic_proc *p, uint64_t now)
{
	struct qattempt *a;
	const struct qcid *k;
	struct qcid *gone;
	size_t n = 0;

	if (!p->attempts.count)
		return;
	gone = calloc(p->attempts.count, sizeof(*gone));
	if (!gone)
		return;
	for (size_t i = 0; hmap_next(&p->attempts, &i, (const void **)&k, (void **)&a);)
		if (now > a->first_ns + QUIC_HS_TIMEOUT_NS)
			gone[n++] = *k;
	for (size_t i = 0; i < n; i++)
		hmap_del(&p->attempts, &gone[i]);
	p->attempts_expired += n;
	free(gone);
}

void quic_books_tick(struct quic_books *b, uint64_t now_ns)
{
	struct quic_proc *p;
	struct qwconn *c;

	for (size_t i = 0; hmap_next(&b->procs, &i, NULL, (void **)&p);) {
		for (size_t j = 0; hmap_next(&p->wconns, &j, NULL, (void **)&c);)
			if (!c->completed && !c->failed && !c->closed &&
			    now_ns > c->first_ns + QUIC_HS_TIMEOUT_NS)
				wire_fail(p, c, now_ns);
		wire_evict(p, now_ns);
		attempts_expire(p, now_ns);
		if (p->hm_ready) {
			heatmap_extend(&p->hm_conns, now_ns);
			heatmap_extend(&p->hm_handshake, now_ns);
		}
	}
}

uint64_t quic_proc_in_progress(const struct quic_proc *p)
{
	struct qwconn *c;
	struct qlconn *l;
	struct qkconn *k;
	uint64_t n = 0;

	if (p->sources & QSRC_NGTCP2) {
		for (size_t i = 0; hmap_next(&p->lconns, &i, NULL, (void **)&l);)
			n += !l->completed;
	} else if (p->sources & QSRC_KERNEL) {
		for (size_t i = 0; hmap_next(&p->kconns, &i, NULL, (void **)&k);)
			n += !k->completed;
	} else {
		for (size_t i = 0; hmap_next(&p->wconns, &i, NULL, (void **)&c);)
			n += !c->completed && !c->failed && !c->closed;
	}
	return n;
}

uint64_t quic_proc_lib_missed(const struct quic_proc *p)
{
	struct qwconn *c;
	uint64_t n = 0;

	if (!p->lib_since_ns)
		return 0;
	for (size_t i = 0; hmap_next(&p->wconns, &i, NULL, (void **)&c);)
		n += c->first_ns < p->lib_since_ns;
	return n;
}
