/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The QUIC connection state machines, driven by events shaped as the BPF
 * units write them: a client and a server side of the same handshakes,
 * Retry, Version Negotiation, NAT rebinding, a refused client, a timeout,
 * the ngtcp2 lifecycle and in-kernel QUIC socket states. */
#define _GNU_SOURCE		/* open_memstream */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "quic_books.h"
#include "report_quic.h"
#include "summary_quic.h"
#include "unit.h"

#define PID_C 100
#define PID_S 200
#define MS 1000000ULL

static const uint8_t CCID[8] = { 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8 };
static const uint8_t ODCID[8] = { 0x0d, 0x0d, 0x0d, 0x0d, 0x0d, 0x0d, 0x0d, 0x0d };
static const uint8_t SCID[18] = { 0x5e, 0x5e, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const uint8_t RCID[18] = { 0xee, 0xee, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static struct quic_wire_event ev(uint32_t tgid, uint8_t type, uint8_t dir, uint64_t ts,
				 uint64_t cookie, uint16_t lport)
{
	struct quic_wire_event e;

	memset(&e, 0, sizeof(e));
	e.tgid = tgid;
	e.type = type;
	e.dir = dir;
	e.ts_ns = ts;
	e.cookie = cookie;
	e.family = 2;
	e.laddr[0] = 127;
	e.laddr[3] = 1;
	e.raddr[0] = 127;
	e.raddr[3] = 1;
	e.lport = lport;
	e.rport = 4433;
	return e;
}

static void pkt(struct quic_wire_event *e, uint8_t type, const uint8_t *d, uint8_t dlen,
		const uint8_t *s, uint8_t slen)
{
	struct quic_pkt *p = &e->dgram.pkt[e->dgram.count++];

	p->form = type == QUIC_PT_1RTT ? QUIC_FORM_SHORT : QUIC_FORM_LONG;
	p->type = type;
	p->version = type == QUIC_PT_VERSION_NEG ? 0 : type == QUIC_PT_UNKNOWN ? 0x1a2a3a4a : 1;
	p->dcid_len = dlen;
	p->scid_len = slen;
	if (dlen)
		memcpy(p->dcid, d, dlen);
	if (slen)
		memcpy(p->scid, s, slen);
}

/* One full handshake as the client's process sees it, starting at t. */
static void client_handshake(struct quic_books *b, uint64_t t, uint64_t cookie, bool retry)
{
	struct quic_wire_event e;

	e = ev(PID_C, QW_EV_LONG, QW_DIR_EGRESS, t, cookie, 50000);
	pkt(&e, QUIC_PT_INITIAL, ODCID, 8, CCID, 8);
	quic_books_wire(b, &e);
	if (retry) {
		e = ev(PID_C, QW_EV_LONG, QW_DIR_INGRESS, t + 1 * MS, cookie, 50000);
		pkt(&e, QUIC_PT_RETRY, CCID, 8, RCID, 18);
		quic_books_wire(b, &e);
		/* The same client SCID again, to the Retry's SCID. */
		e = ev(PID_C, QW_EV_LONG, QW_DIR_EGRESS, t + 2 * MS, cookie, 50000);
		pkt(&e, QUIC_PT_INITIAL, RCID, 18, CCID, 8);
		quic_books_wire(b, &e);
	}
	/* Server flight: Initial + Handshake coalesced. */
	e = ev(PID_C, QW_EV_LONG, QW_DIR_INGRESS, t + 3 * MS, cookie, 50000);
	pkt(&e, QUIC_PT_INITIAL, CCID, 8, SCID, 18);
	pkt(&e, QUIC_PT_HANDSHAKE, CCID, 8, SCID, 18);
	quic_books_wire(b, &e);
	/* Server 0.5-RTT data: a short header from the server is no completion. */
	e = ev(PID_C, QW_EV_FIRST_SHORT, QW_DIR_INGRESS, t + 4 * MS, cookie, 50000);
	pkt(&e, QUIC_PT_1RTT, CCID, 8, NULL, 0);
	quic_books_wire(b, &e);
	e = ev(PID_C, QW_EV_LONG, QW_DIR_EGRESS, t + 5 * MS, cookie, 50000);
	pkt(&e, QUIC_PT_HANDSHAKE, SCID, 18, CCID, 8);
	quic_books_wire(b, &e);
	e = ev(PID_C, QW_EV_FIRST_SHORT, QW_DIR_EGRESS, t + 6 * MS, cookie, 50000);
	pkt(&e, QUIC_PT_1RTT, SCID, 18, NULL, 0);
	quic_books_wire(b, &e);
}

TEST(client_handshake_completes_at_first_1rtt)
{
	struct quic_books b;
	const struct quic_proc *p;

	quic_books_init(&b, 0, 1000 * MS);
	client_handshake(&b, 10 * MS, 7, false);
	p = quic_books_proc(&b, PID_C);
	ASSERT_TRUE(p != NULL, "p_NULL");
	ASSERT_EQ(p->src[0].connections, 1, "p_src_0_connections");
	ASSERT_EQ(p->src[0].as_client, 1, "p_src_0_as_client");
	ASSERT_EQ(p->src[0].handshakes_completed, 1, "p_src_0_handshakes_completed");
	ASSERT_EQ(p->src[0].handshakes_failed, 0, "p_src_0_handshakes_failed");
	/* 6 ms from the first Initial: the 4096-8191 µs bucket. */
	ASSERT_EQ(p->src[0].handshake_us_hist[12], 1, "p_src_0_handshake_us_hist_12");
	ASSERT_EQ(p->src[0].handshake_ns_sum, 6 * MS, "p_src_0_handshake_ns_sum");
	ASSERT_EQ(quic_proc_in_progress(p), 0, "quic_proc_in_progress_p");
	ASSERT_EQ(p->unmatched_short, 0, "p_unmatched_short");
	quic_books_free(&b);
}

TEST(retry_is_the_same_connection)
{
	struct quic_books b;
	const struct quic_proc *p;

	quic_books_init(&b, 0, 1000 * MS);
	client_handshake(&b, 0, 7, true);
	p = quic_books_proc(&b, PID_C);
	ASSERT_EQ(p->src[0].connections, 1, "p_src_0_connections");
	ASSERT_EQ(p->src[0].retries, 1, "p_src_0_retries");
	ASSERT_EQ(p->src[0].handshakes_completed, 1, "p_src_0_handshakes_completed");
	quic_books_free(&b);
}

TEST(server_side_counts_at_ingress)
{
	struct quic_books b;
	struct quic_wire_event e;
	const struct quic_proc *p;

	quic_books_init(&b, 0, 1000 * MS);
	e = ev(PID_S, QW_EV_LONG, QW_DIR_INGRESS, 1 * MS, 9, 4433);
	pkt(&e, QUIC_PT_INITIAL, ODCID, 8, CCID, 8);
	quic_books_wire(&b, &e);
	/* A retransmitted Initial: still one connection. */
	e.ts_ns = 2 * MS;
	quic_books_wire(&b, &e);
	e = ev(PID_S, QW_EV_LONG, QW_DIR_EGRESS, 3 * MS, 9, 4433);
	pkt(&e, QUIC_PT_INITIAL, CCID, 8, SCID, 18);
	pkt(&e, QUIC_PT_HANDSHAKE, CCID, 8, SCID, 18);
	quic_books_wire(&b, &e);
	/* The server's own 1-RTT packets do not complete it... */
	e = ev(PID_S, QW_EV_FIRST_SHORT, QW_DIR_EGRESS, 4 * MS, 9, 4433);
	pkt(&e, QUIC_PT_1RTT, CCID, 8, NULL, 0);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].handshakes_completed, 0, "p_src_0_handshakes_completed");
	ASSERT_EQ(quic_proc_in_progress(p), 1, "quic_proc_in_progress_p");
	/* ...the client's first 1-RTT packet does. */
	e = ev(PID_S, QW_EV_FIRST_SHORT, QW_DIR_INGRESS, 9 * MS, 9, 4433);
	pkt(&e, QUIC_PT_1RTT, SCID, 18, NULL, 0);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].connections, 1, "p_src_0_connections");
	ASSERT_EQ(p->src[0].as_server, 1, "p_src_0_as_server");
	ASSERT_EQ(p->src[0].handshakes_completed, 1, "p_src_0_handshakes_completed");
	ASSERT_EQ(p->src[0].handshake_ns_sum, 8 * MS, "p_src_0_handshake_ns_sum");
	/* NAT rebinding: the client's DCID from a new port; the server's answer
	 * on the new path is not counted a second time. */
	e = ev(PID_S, QW_EV_PATH_CHANGE, QW_DIR_INGRESS, 20 * MS, 9, 4433);
	pkt(&e, QUIC_PT_1RTT, SCID, 18, NULL, 0);
	quic_books_wire(&b, &e);
	e = ev(PID_S, QW_EV_PATH_CHANGE, QW_DIR_EGRESS, 21 * MS, 9, 4433);
	pkt(&e, QUIC_PT_1RTT, CCID, 8, NULL, 0);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].migrations, 1, "p_src_0_migrations");
	quic_books_free(&b);
}

TEST(version_negotiation_then_v1)
{
	struct quic_books b;
	struct quic_wire_event e;
	const struct quic_proc *p;

	quic_books_init(&b, 0, 1000 * MS);
	e = ev(PID_C, QW_EV_LONG, QW_DIR_EGRESS, 1 * MS, 7, 50000);
	pkt(&e, QUIC_PT_UNKNOWN, ODCID, 8, CCID, 8);
	quic_books_wire(&b, &e);
	e = ev(PID_C, QW_EV_LONG, QW_DIR_INGRESS, 2 * MS, 7, 50000);
	pkt(&e, QUIC_PT_VERSION_NEG, CCID, 8, ODCID, 8);
	quic_books_wire(&b, &e);
	/* The same VN again (a retransmitted attempt): still one. */
	e.ts_ns = 3 * MS;
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_C);
	ASSERT_EQ(p->src[0].connections, 0, "p_src_0_connections");
	ASSERT_EQ(p->src[0].version_negotiations, 1, "p_src_0_version_negotiations");
	client_handshake(&b, 10 * MS, 7, false);
	p = quic_books_proc(&b, PID_C);
	ASSERT_EQ(p->src[0].connections, 1, "p_src_0_connections");
	ASSERT_EQ(p->src[0].version_negotiations, 1, "p_src_0_version_negotiations");
	ASSERT_EQ(p->src[0].handshakes_completed, 1, "p_src_0_handshakes_completed");
	quic_books_free(&b);
}

TEST(refused_client_fails_when_its_socket_closes)
{
	struct quic_books b;
	struct quic_wire_event e;
	const struct quic_proc *p;

	quic_books_init(&b, 0, 1000 * MS);
	e = ev(PID_C, QW_EV_LONG, QW_DIR_EGRESS, 1 * MS, 42, 50000);
	pkt(&e, QUIC_PT_INITIAL, ODCID, 8, CCID, 8);
	quic_books_wire(&b, &e);
	e = ev(PID_C, QW_EV_RELEASE, 0, 5 * MS, 41, 0);		/* another socket */
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_C);
	ASSERT_EQ(p->src[0].handshakes_failed, 0, "p_src_0_handshakes_failed");
	e = ev(PID_C, QW_EV_RELEASE, 0, 6 * MS, 42, 0);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_C);
	ASSERT_EQ(p->src[0].connections, 1, "p_src_0_connections");
	ASSERT_EQ(p->src[0].handshakes_completed, 0, "p_src_0_handshakes_completed");
	ASSERT_EQ(p->src[0].handshakes_failed, 1, "p_src_0_handshakes_failed");
	ASSERT_EQ(p->src[0].closed, 1, "p_src_0_closed");
	quic_books_free(&b);
}

TEST(handshake_timeout_fails)
{
	struct quic_books b;
	struct quic_wire_event e;
	const struct quic_proc *p;

	quic_books_init(&b, 0, 1000 * MS);
	e = ev(PID_S, QW_EV_LONG, QW_DIR_INGRESS, 1 * MS, 9, 4433);
	pkt(&e, QUIC_PT_INITIAL, ODCID, 8, CCID, 8);
	quic_books_wire(&b, &e);
	quic_books_tick(&b, 1 * MS + QUIC_HS_TIMEOUT_NS);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].handshakes_failed, 0, "p_src_0_handshakes_failed");
	quic_books_tick(&b, 2 * MS + QUIC_HS_TIMEOUT_NS);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].handshakes_failed, 1, "p_src_0_handshakes_failed");
	ASSERT_EQ(quic_proc_in_progress(p), 0, "quic_proc_in_progress_p");
	quic_books_free(&b);
}

TEST(unknown_dcid_is_unmatched_not_a_connection)
{
	struct quic_books b;
	struct quic_wire_event e;
	const struct quic_proc *p;

	quic_books_init(&b, 0, 1000 * MS);
	e = ev(PID_S, QW_EV_FIRST_SHORT, QW_DIR_INGRESS, 1 * MS, 9, 4433);
	pkt(&e, QUIC_PT_1RTT, SCID, 18, NULL, 0);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].connections, 0, "p_src_0_connections");
	ASSERT_EQ(p->unmatched_short, 1, "p_unmatched_short");
	/* A Handshake packet alone opens nothing: only a client Initial does. */
	e = ev(PID_S, QW_EV_LONG, QW_DIR_INGRESS, 2 * MS, 9, 4433);
	pkt(&e, QUIC_PT_HANDSHAKE, RCID, 18, CCID, 8);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].connections, 0, "p_src_0_connections");
	quic_books_free(&b);
}

/* quic-go (Caddy) answers on a new connection ID once the handshake is
 * done: the server's first short header goes to a CID the client issued
 * in a 1-RTT NEW_CONNECTION_ID frame, never seen in a long header. On
 * the 4-tuple of a known connection it is that connection's, not an
 * unmatched flow (every connection added 1 to unmatched_short before). */
static const uint8_t NEWCID[18] = { 0x4e, 0x4e, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9 };

static struct quic_wire_event ev_path(uint32_t tgid, uint8_t type, uint8_t dir, uint64_t ts,
				      uint16_t rport)
{
	struct quic_wire_event e = ev(tgid, type, dir, ts, 9, 4433);

	e.rport = rport;
	return e;
}

/* A server-side handshake from client port rport with client CID ccid. */
static void server_handshake(struct quic_books *b, uint64_t t, uint16_t rport,
			     const uint8_t *ccid)
{
	struct quic_wire_event e;

	e = ev_path(PID_S, QW_EV_LONG, QW_DIR_INGRESS, t, rport);
	pkt(&e, QUIC_PT_INITIAL, ODCID, 8, ccid, 8);
	quic_books_wire(b, &e);
	e = ev_path(PID_S, QW_EV_LONG, QW_DIR_EGRESS, t + 1 * MS, rport);
	pkt(&e, QUIC_PT_INITIAL, ccid, 8, SCID, 4);
	pkt(&e, QUIC_PT_HANDSHAKE, ccid, 8, SCID, 4);
	quic_books_wire(b, &e);
	e = ev_path(PID_S, QW_EV_FIRST_SHORT, QW_DIR_INGRESS, t + 2 * MS, rport);
	pkt(&e, QUIC_PT_1RTT, SCID, 4, NULL, 0);
	quic_books_wire(b, &e);
}

TEST(new_cid_on_a_known_4tuple_is_that_connection)
{
	struct quic_books b;
	struct quic_wire_event e;
	const struct quic_proc *p;

	quic_books_init(&b, 0, 1000 * MS);
	server_handshake(&b, 1 * MS, 50001, CCID);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].handshakes_completed, 1, "completed");
	/* The server moves to a CID the client issued after the handshake. */
	e = ev_path(PID_S, QW_EV_FIRST_SHORT, QW_DIR_EGRESS, 5 * MS, 50001);
	pkt(&e, QUIC_PT_1RTT, NEWCID, 18, NULL, 0);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->unmatched_short, 0, "new_cid_matched_by_4tuple");
	ASSERT_EQ(p->short_by_path, 1, "counted_as_a_cid_change");
	ASSERT_EQ(p->src[0].connections, 1, "still_one_connection");
	ASSERT_EQ(p->src[0].migrations, 0, "no_migration");
	/* The new CID is the connection's from now on: a rebinding of it
	 * (the same DCID on a new 4-tuple) is that connection's migration. */
	e = ev_path(PID_S, QW_EV_PATH_CHANGE, QW_DIR_INGRESS, 6 * MS, 50009);
	pkt(&e, QUIC_PT_1RTT, NEWCID, 18, NULL, 0);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].migrations, 1, "new_cid_rebinding_counted");
	/* The same unknown CID from a 4-tuple no connection used: unmatched. */
	e = ev_path(PID_S, QW_EV_FIRST_SHORT, QW_DIR_INGRESS, 7 * MS, 50002);
	pkt(&e, QUIC_PT_1RTT, RCID, 18, NULL, 0);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->unmatched_short, 1, "unknown_4tuple_unmatched");
	quic_books_free(&b);
}

/* Twenty connections from twenty client ports, each moving to a new CID:
 * every one is matched to its own connection (Caddy's case: 20 unmatched
 * before). */
TEST(new_cids_of_many_connections_matched_each_to_its_own)
{
	struct quic_books b;
	struct quic_wire_event e;
	const struct quic_proc *p;
	uint8_t ccid[8] = { 0xcc }, ncid[18] = { 0x4e };

	quic_books_init(&b, 0, 1000 * MS);
	for (int i = 0; i < 20; i++) {
		ccid[7] = (uint8_t)i;
		server_handshake(&b, (uint64_t)(10 * i + 1) * MS, (uint16_t)(51000 + i), ccid);
	}
	for (int i = 0; i < 20; i++) {
		ncid[17] = (uint8_t)i;
		e = ev_path(PID_S, QW_EV_FIRST_SHORT, QW_DIR_EGRESS, 300 * MS, (uint16_t)(51000 + i));
		pkt(&e, QUIC_PT_1RTT, ncid, 18, NULL, 0);
		quic_books_wire(&b, &e);
	}
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].connections, 20, "connections");
	ASSERT_EQ(p->src[0].handshakes_completed, 20, "completed");
	ASSERT_EQ(p->unmatched_short, 0, "none_unmatched");
	ASSERT_EQ(p->short_by_path, 20, "twenty_cid_changes");
	quic_books_free(&b);
}

/* A client port reused: a new client process bound the port an earlier
 * one had (1 in ~150 runs of 20 clients on 28,232 ports), and the
 * server's books still hold the earlier connection as live (its end is
 * encrypted). The 4-tuple names the connection begun on it last: the
 * new CID quic-go moves to after the handshake is the newest's. */
TEST(new_cid_on_a_reused_client_port_is_the_newest)
{
	struct quic_books b;
	struct quic_wire_event e;
	const struct quic_proc *p;
	uint8_t other[8] = { 0xab, 1, 2, 3, 4, 5, 6, 7 };

	quic_books_init(&b, 0, 1000 * MS);
	server_handshake(&b, 1 * MS, 50001, CCID);
	server_handshake(&b, 5 * MS, 50001, other);
	e = ev_path(PID_S, QW_EV_FIRST_SHORT, QW_DIR_EGRESS, 9 * MS, 50001);
	pkt(&e, QUIC_PT_1RTT, NEWCID, 18, NULL, 0);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].connections, 2, "connections");
	ASSERT_EQ(p->unmatched_short, 0, "matched");
	ASSERT_EQ(p->short_by_path, 1, "by_path");
	quic_books_free(&b);
}

/* Two live connections on one 4-tuple, the earlier one seen again after
 * the later began (a client multiplexing on one socket): a new CID there
 * cannot be told apart, so it stays unmatched rather than be charged to
 * either. */
TEST(new_cid_on_a_shared_4tuple_stays_unmatched)
{
	struct quic_books b;
	struct quic_wire_event e;
	const struct quic_proc *p;
	uint8_t other[8] = { 0xab, 1, 2, 3, 4, 5, 6, 7 };

	quic_books_init(&b, 0, 1000 * MS);
	server_handshake(&b, 1 * MS, 50001, CCID);
	server_handshake(&b, 5 * MS, 50001, other);
	/* The earlier connection's Handshake retransmitted on that 4-tuple. */
	e = ev_path(PID_S, QW_EV_LONG, QW_DIR_EGRESS, 7 * MS, 50001);
	pkt(&e, QUIC_PT_HANDSHAKE, CCID, 8, SCID, 4);
	quic_books_wire(&b, &e);
	e = ev_path(PID_S, QW_EV_FIRST_SHORT, QW_DIR_EGRESS, 9 * MS, 50001);
	pkt(&e, QUIC_PT_1RTT, NEWCID, 18, NULL, 0);
	quic_books_wire(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[0].connections, 2, "connections");
	ASSERT_EQ(p->unmatched_short, 1, "ambiguous_unmatched");
	ASSERT_EQ(p->short_by_path, 0, "not_charged_to_either");
	quic_books_free(&b);
}

/* The report of pid's QUIC part, as text, into buf. */
static void quic_text(struct quic_books *b, pid_t pid, char *buf, size_t len)
{
	struct quic_run q = { .books = b };
	FILE *f = fmemopen(buf, len, "w");

	buf[0] = 0;
	if (!f)
		return;
	format_quic_text(f, &q, pid, NULL);
	fclose(f);
}

/* Twenty server-side handshakes of 20-24 ms (Caddy's ~22 ms): all in the
 * 16.384-32.768 ms log2 bucket. Its upper edge is no percentile: the text
 * says the bucket (a bound both ways), the exact mean, and the source. */
TEST(handshake_percentiles_are_bucket_bounds_with_their_source)
{
	struct quic_books b;
	struct quic_wire_event e;
	uint8_t ccid[8] = { 0xcc };
	char text[4096];

	quic_books_init(&b, 0, 1000 * MS);
	b.no_heatmaps = true;
	for (int i = 0; i < 20; i++) {
		uint64_t t = (uint64_t)(100 * i + 1) * MS;

		ccid[7] = (uint8_t)i;
		e = ev_path(PID_S, QW_EV_LONG, QW_DIR_INGRESS, t, (uint16_t)(51000 + i));
		pkt(&e, QUIC_PT_INITIAL, ODCID, 8, ccid, 8);
		quic_books_wire(&b, &e);
		e = ev_path(PID_S, QW_EV_LONG, QW_DIR_EGRESS, t + 1 * MS, (uint16_t)(51000 + i));
		pkt(&e, QUIC_PT_INITIAL, ccid, 8, SCID, 4);
		quic_books_wire(&b, &e);
		e = ev_path(PID_S, QW_EV_FIRST_SHORT, QW_DIR_INGRESS, t + (20 + i % 5) * MS,
			    (uint16_t)(51000 + i));
		pkt(&e, QUIC_PT_1RTT, SCID, 4, NULL, 0);
		quic_books_wire(&b, &e);
	}
	quic_text(&b, PID_S, text, sizeof(text));
	ASSERT_TRUE(strstr(text, "p50 32.8 ms") == NULL, "no_bucket_edge_as_p50");
	ASSERT_TRUE(strstr(text, "mean 22 ms, p50 16.4-32.8 ms, p90 16.4-32.8 ms [wire]") != NULL,
		    "bucket_bounds_mean_and_source");
	quic_books_free(&b);
}

/* ngtcp2 and the wire time a handshake from different moments (9 ms vs
 * 22 ms on the same clients): the headline's figures are the lifecycle
 * source's alone, and the other source's are said apart, named. */
TEST(handshake_figures_of_two_sources_never_mixed)
{
	struct quic_books b;
	struct quic_lib_event l;
	char text[4096];

	quic_books_init(&b, 0, 1000 * MS);
	b.no_heatmaps = true;
	server_handshake(&b, 1 * MS, 50001, CCID);	/* wire: 2 ms */
	memset(&l, 0, sizeof(l));
	l.tgid = PID_S;
	l.type = QN_EV_NEW;
	l.conn = 0x1000;
	l.role = QN_ROLE_SERVER;
	l.ts_ns = 1 * MS;
	quic_books_lib(&b, &l);
	l.type = QN_EV_HANDSHAKE;
	l.ts_ns = 10 * MS;				/* ngtcp2: 9 ms */
	quic_books_lib(&b, &l);
	quic_text(&b, PID_S, text, sizeof(text));
	ASSERT_TRUE(strstr(text, "mean 9 ms, p50 8.19-16.4 ms, p90 8.19-16.4 ms [ngtcp2]") != NULL,
		    "headline_from_ngtcp2");
	ASSERT_TRUE(strstr(text, "wire: mean 2 ms") != NULL, "wire_said_apart");
	quic_books_free(&b);
}

static struct quic_lib_event lev(uint8_t type, uint64_t conn, uint64_t ts, uint8_t role)
{
	struct quic_lib_event e;

	memset(&e, 0, sizeof(e));
	e.tgid = PID_S;
	e.type = type;
	e.conn = conn;
	e.ts_ns = ts;
	e.role = role;
	return e;
}

TEST(ngtcp2_lifecycle_and_view)
{
	struct quic_books b;
	struct quic_lib_event e;
	const struct quic_proc *p;
	struct quic_view v;
	char buf[64];

	quic_books_init(&b, 0, 1000 * MS);
	e = lev(QN_EV_NEW, 0x1000, 1 * MS, QN_ROLE_SERVER);
	quic_books_lib(&b, &e);
	e = lev(QN_EV_NEW, 0x2000, 2 * MS, QN_ROLE_SERVER);
	quic_books_lib(&b, &e);
	e = lev(QN_EV_HANDSHAKE, 0x1000, 5 * MS, 0);
	quic_books_lib(&b, &e);
	e = lev(QN_EV_HANDSHAKE, 0x1000, 6 * MS, 0);	/* once per connection */
	quic_books_lib(&b, &e);
	e = lev(QN_EV_MIGRATE, 0x1000, 7 * MS, 0);
	quic_books_lib(&b, &e);
	e = lev(QN_EV_DEL, 0x1000, 8 * MS, 0);
	quic_books_lib(&b, &e);
	e = lev(QN_EV_DEL, 0x2000, 9 * MS, 0);		/* never completed: failed */
	quic_books_lib(&b, &e);
	e = lev(QN_EV_DEL, 0x3000, 9 * MS, 0);		/* not ours: ignored */
	quic_books_lib(&b, &e);
	p = quic_books_proc(&b, PID_S);
	ASSERT_EQ(p->src[1].connections, 2, "p_src_1_connections");
	ASSERT_EQ(p->src[1].handshakes_completed, 1, "p_src_1_handshakes_completed");
	ASSERT_EQ(p->src[1].handshakes_failed, 1, "p_src_1_handshakes_failed");
	ASSERT_EQ(p->src[1].closed, 2, "p_src_1_closed");
	ASSERT_EQ(p->src[1].handshake_ns_sum, 4 * MS, "p_src_1_handshake_ns_sum");
	quic_proc_view(p, &v);
	ASSERT_EQ(v.lifecycle_src, 1, "v_lifecycle_src");
	ASSERT_EQ(v.c.connections, 2, "v_c_connections");
	ASSERT_EQ(v.c.migrations, 1, "v_c_migrations");
	ASSERT_STREQ(quic_sources_label(v.sources, buf, sizeof(buf)), "ngtcp2", "quic_sources_label_v_sources_buf_sizeof_buf");
	quic_books_free(&b);
}

/* A client whose ngtcp2 probes went on (a copy of the library found at an
 * interval's scan) after the wire saw its first Initial: ngtcp2 reports
 * only the end of a connection it never saw begin. The headline is the
 * wire's (1, never ngtcp2's 0), and the late probes are said. */
TEST(late_probes_never_below_the_wire_and_said)
{
	struct quic_books b;
	struct quic_lib_event l;
	const struct quic_proc *p;
	struct quic_view v;
	char text[4096];

	quic_books_init(&b, 0, 1000 * MS);
	b.no_heatmaps = true;
	client_handshake(&b, 10 * MS, 7, false);
	quic_books_lib_probes(&b, PID_C, 410 * MS);
	l = lev(QN_EV_DEL, 0x1000, 2000 * MS, 0);
	l.tgid = PID_C;
	quic_books_lib(&b, &l);
	p = quic_books_proc(&b, PID_C);
	ASSERT_EQ(p->src[1].connections, 0, "ngtcp2_saw_none_begin");
	quic_proc_view(p, &v);
	ASSERT_TRUE(v.lib_late, "late");
	ASSERT_EQ(v.lib_missed, 1, "missed");
	ASSERT_EQ(v.lifecycle_src, 0, "lifecycle_from_the_wire");
	ASSERT_EQ(v.c.connections, 1, "headline_connections");
	ASSERT_EQ(v.c.handshakes_completed, 1, "headline_handshakes");
	ASSERT_EQ(v.c.handshake_ns_sum, 6 * MS, "handshake_times_the_wire_s");
	quic_text(&b, PID_C, text, sizeof(text));
	ASSERT_TRUE(strstr(text, "1 connections (1 as client, 0 as server) [wire]") != NULL,
		    "text_headline");
	ASSERT_TRUE(strstr(text, "ngtcp2 probes came late, 0.4 s after its first connection:\n"
				 "                1 began before them; lifecycle from the wire\n") != NULL,
		    "text_says_late");
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);

		ASSERT_TRUE(n <= 80, "text_fits_80_columns");
		l += n + (nl != NULL);
	}
	quic_books_free(&b);
}

/* Probes that went on before the first connection are not late; late
 * probes that saw as many connections as the wire keep the lifecycle. */
TEST(probes_on_time_or_seeing_as_much_keep_ngtcp2)
{
	struct quic_books b;
	struct quic_lib_event l;
	struct quic_view v;

	quic_books_init(&b, 0, 1000 * MS);
	b.no_heatmaps = true;
	quic_books_lib_probes(&b, PID_C, 5 * MS);
	client_handshake(&b, 10 * MS, 7, false);
	l = lev(QN_EV_NEW, 0x1000, 11 * MS, QN_ROLE_CLIENT);
	l.tgid = PID_C;
	quic_books_lib(&b, &l);
	quic_proc_view(quic_books_proc(&b, PID_C), &v);
	ASSERT_TRUE(!v.lib_late, "on_time_not_late");
	ASSERT_EQ(v.lifecycle_src, 1, "on_time_ngtcp2");
	/* A later note (another library file) keeps the earliest. */
	quic_books_lib_probes(&b, PID_C, 900 * MS);
	quic_proc_view(quic_books_proc(&b, PID_C), &v);
	ASSERT_TRUE(!v.lib_late, "earliest_note_kept");
	quic_books_free(&b);

	quic_books_init(&b, 0, 1000 * MS);
	b.no_heatmaps = true;
	client_handshake(&b, 10 * MS, 7, false);
	quic_books_lib_probes(&b, PID_C, 12 * MS);
	l = lev(QN_EV_NEW, 0x1000, 13 * MS, QN_ROLE_CLIENT);
	l.tgid = PID_C;
	quic_books_lib(&b, &l);
	quic_proc_view(quic_books_proc(&b, PID_C), &v);
	ASSERT_TRUE(v.lib_late, "late_said");
	ASSERT_EQ(v.lifecycle_src, 1, "as_many_keeps_ngtcp2");
	ASSERT_EQ(v.c.connections, 1, "headline");
	quic_books_free(&b);
}

/* attach names the stack as summary does, and says what can be measured
 * there: a stack compiled in (quic-go) is the wire's alone; one whose
 * library has the probes gets each connection's life from them. */
TEST(stack_named_with_what_can_be_measured)
{
	struct quic_books b;
	char text[4096];

	quic_books_init(&b, 0, 1000 * MS);
	b.no_heatmaps = true;
	client_handshake(&b, 10 * MS, 7, false);
	quic_books_stack(&b, PID_C, "quic-go 0.29.0-1 (statically linked; Debian)");
	ASSERT_TRUE(quic_books_proc(&b, PID_C)->stack_looked, "looked_once");
	quic_text(&b, PID_C, text, sizeof(text));
	ASSERT_TRUE(strstr(text, "  stack         quic-go 0.29.0-1 (statically linked; Debian)\n"
				 "                wire only: connections, handshakes,") != NULL,
		    "wire_only_stack");
	ASSERT_TRUE(strstr(text, "not closes (encrypted") != NULL, "says_what_it_cannot");
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);

		ASSERT_TRUE(n <= 80, "text_fits_80_columns");
		l += n + (nl != NULL);
	}
	quic_books_lib_probes(&b, PID_C, 5 * MS);
	quic_books_stack(&b, PID_C, "libngtcp2.so.9.0.1");
	quic_text(&b, PID_C, text, sizeof(text));
	ASSERT_TRUE(strstr(text, "  stack         libngtcp2.so.9.0.1\n"
				 "                ngtcp2 probes: each connection's life;") != NULL,
		    "probed_stack");
	ASSERT_STREQ(quic_stack_lifecycle(quic_books_proc(&b, PID_C)), "ngtcp2", "lifecycle");
	/* Nothing found: no stack line. */
	quic_books_stack(&b, PID_C, NULL);
	quic_text(&b, PID_C, text, sizeof(text));
	ASSERT_TRUE(strstr(text, "stack ") == NULL, "none_no_line");
	quic_books_free(&b);
}

/* In-kernel QUIC as the out-of-tree module reports it through
 * sock:inet_sock_set_state (protocol 261): a client CLOSE -> SYN_SENT ->
 * ESTABLISHED -> CLOSE, a server connection SYN_RECV -> CLOSE that never
 * completed. */
TEST(kernel_quic_states)
{
	struct quic_books b;
	const struct quic_proc *p;

	quic_books_init(&b, 0, 1000 * MS);
	quic_books_kernel_state(&b, PID_C, 1 * MS, 0xa, 7, 2);
	quic_books_kernel_state(&b, PID_C, 4 * MS, 0xa, 2, 1);
	quic_books_kernel_state(&b, PID_C, 9 * MS, 0xa, 1, 7);
	quic_books_kernel_state(&b, PID_C, 10 * MS, 0xb, 10, 3);
	quic_books_kernel_state(&b, PID_C, 11 * MS, 0xb, 3, 7);
	p = quic_books_proc(&b, PID_C);
	ASSERT_EQ(p->src[2].connections, 2, "p_src_2_connections");
	ASSERT_EQ(p->src[2].as_client, 1, "p_src_2_as_client");
	ASSERT_EQ(p->src[2].as_server, 1, "p_src_2_as_server");
	ASSERT_EQ(p->src[2].handshakes_completed, 1, "p_src_2_handshakes_completed");
	ASSERT_EQ(p->src[2].handshakes_failed, 1, "p_src_2_handshakes_failed");
	ASSERT_EQ(p->src[2].closed, 2, "p_src_2_closed");
	ASSERT_EQ(p->src[2].handshake_ns_sum, 3 * MS, "p_src_2_handshake_ns_sum");
	quic_books_free(&b);
}

TEST(many_connections_bounded)
{
	struct quic_books b;
	struct quic_wire_event e;
	const struct quic_proc *p;
	uint8_t cid[8] = { 0 };

	quic_books_init(&b, 0, 1000 * MS);
	for (uint32_t i = 0; i < QUIC_MAX_CONNS + 100; i++) {
		memcpy(cid, &i, sizeof(i));
		e = ev(PID_C, QW_EV_LONG, QW_DIR_EGRESS, 1 * MS, 1000 + i, 50000);
		pkt(&e, QUIC_PT_INITIAL, ODCID, 8, cid, 8);
		quic_books_wire(&b, &e);
		e = ev(PID_C, QW_EV_RELEASE, 0, 2 * MS, 1000 + i, 0);
		quic_books_wire(&b, &e);
	}
	quic_books_tick(&b, 3 * MS);
	p = quic_books_proc(&b, PID_C);
	ASSERT_EQ(p->src[0].connections, QUIC_MAX_CONNS + 100, "p_src_0_connections");
	ASSERT_EQ(p->src[0].handshakes_failed, QUIC_MAX_CONNS + 100, "p_src_0_handshakes_failed");
	ASSERT_EQ(p->wconns.count, 0, "p_wconns_count");
	ASSERT_EQ(p->evicted, QUIC_MAX_CONNS + 100, "p_evicted");
	quic_books_free(&b);
}

/* /proc/net/quic/snmp in the module's layout (tests/data/quic/README). */
TEST(kernel_quic_snmp_file)
{
	struct quic_kernel_snmp s;
	char path[8192];

	snprintf(path, sizeof(path), "%s/quic/kernel_snmp", unit_data_dir("quic/kernel_snmp"));
	ASSERT_EQ(quic_kernel_snmp_read(path, &s), 0, "read");
	ASSERT_EQ(s.n, 19, "every_counter");
	ASSERT_EQ(quic_kernel_snmp_get(&s, "QuicConnCurrentEstabs"), 3, "current");
	ASSERT_EQ(quic_kernel_snmp_get(&s, "QuicConnPassiveEstabs"), 12, "passive");
	ASSERT_EQ(quic_kernel_snmp_get(&s, "QuicFrmInCloses"), 10, "last_line");
	ASSERT_EQ(quic_kernel_snmp_get(&s, "NoSuchCounter"), -1, "absent");
	ASSERT_EQ(quic_kernel_snmp_read("/nonexistent/quic/snmp", &s), -ENOENT, "no_module");
}

/* Datagrams the wire left unparsed because the run they interrupted held
 * the parser's scratch (QW_STAT_SCRATCH_BUSY) are lost events as much as a
 * full ring's: summed in the text line, its warning and the JSON's
 * wire_events_lost, and shown alone as wire_parser_busy. */
static char *quic_agent_out(const struct quic_run *q, bool as_json)
{
	static char *buf;	/* static: gcc misreads open_memstream's pointer */
	size_t len = 0;
	struct json j;
	FILE *f;

	buf = NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	if (as_json) {
		json_init(&j, f, false);
		json_object_begin(&j);
		json_quic_agent(&j, q);
		json_object_end(&j);
		json_finish(&j);
	} else {
		format_quic_agent_text(f, q);
	}
	fclose(f);
	/* The text is wrapped at 80 columns: its lines joined again. */
	if (!as_json && buf) {
		char *w = buf;

		for (char *r = buf; *r; r++) {
			if (*r == '\n' && r[1] == ' ') {
				while (r[1] == ' ')
					r++;
				*w++ = ' ';
				continue;
			}
			*w++ = *r;
		}
		*w = '\0';
	}
	return buf;
}

TEST(wire_parser_busy_is_lost)
{
	struct quic_run q = { .wire_on = true, .cgroup = "/sys/fs/cgroup/unified" };
	char *out;

	q.wire_stats[QW_STAT_DGRAMS] = 40;
	q.wire_stats[QW_STAT_SCRATCH_BUSY] = 3;
	out = quic_agent_out(&q, false);
	ASSERT_TRUE(out && strstr(out, "3 events lost"), "busy_alone_in_text");
	ASSERT_TRUE(out && strstr(out, "WARNING: QUIC events were lost"), "busy_alone_warns");
	free(out);
	out = quic_agent_out(&q, true);
	ASSERT_TRUE(out && strstr(out, "\"wire_events_lost\":3"), "busy_alone_in_json");
	ASSERT_TRUE(out && strstr(out, "\"wire_parser_busy\":3"), "busy_shown_alone");
	free(out);
	q.wire_stats[QW_STAT_RB_LOST] = 2;
	out = quic_agent_out(&q, false);
	ASSERT_TRUE(out && strstr(out, "5 events lost"), "summed_in_text");
	free(out);
	out = quic_agent_out(&q, true);
	ASSERT_TRUE(out && strstr(out, "\"wire_events_lost\":5"), "summed_in_json");
	free(out);
	q.wire_stats[QW_STAT_RB_LOST] = q.wire_stats[QW_STAT_SCRATCH_BUSY] = 0;
	out = quic_agent_out(&q, false);
	ASSERT_TRUE(out && !strstr(out, "WARNING"), "none_lost_no_warning");
	free(out);
}

UNIT_MAIN()
