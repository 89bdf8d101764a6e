/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* include/abi/quic_parse.h on datagrams recorded from Debian's ngtcp2 0.12 example
 * client and server on loopback (tests/data/quic/README): a Retry exchange,
 * a Version Negotiation, coalesced server flights (Initial + Handshake +
 * 1-RTT in one datagram), greased fixed bits. The expectations are the
 * protocol's own relations between the packets (RFC 9000 7.2, 17.2.5,
 * 17.2.1), not the parser's output written down; every prefix of every
 * datagram is parsed too, as a truncation. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "quic_parse.h"
#include "unit.h"

struct rec {
	uint8_t *b;
	size_t n;
	struct quic_dgram d;
};

/* Short headers of this capture: 18-byte server CIDs toward the server,
 * 17-byte client CIDs toward the client. */
static void load(struct rec *r, const char *name, uint32_t hint)
{
	char path[8192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/quic/%s", unit_data_dir("quic/00_client_initial.bin"),
		 name);
	f = fopen(path, "rb");
	ASSERT_TRUE(f != NULL, name);
	r->b = malloc(65536);
	r->n = fread(r->b, 1, 65536, f);
	fclose(f);
	/* A copy of exactly the datagram's size: a read past it is caught. */
	r->b = realloc(r->b, r->n);
	quic_parse_datagram_hint(r->b, r->n, hint, &r->d);
}

static bool cid_eq(uint8_t la, const uint8_t *a, uint8_t lb, const uint8_t *b)
{
	return la == lb && !memcmp(a, b, la);
}

#define PK(r, i) (&(r).d.pkt[i])

TEST(retry_exchange)
{
	struct rec ini, retry, again;

	load(&ini, "00_client_initial.bin", 18);
	load(&retry, "01_retry.bin", 18);
	load(&again, "02_client_initial_after_retry.bin", 18);
	ASSERT_EQ(ini.d.count, 1, "initial_count");
	ASSERT_EQ(ini.d.error, QUIC_ERR_NONE, "initial_ok");
	ASSERT_EQ(PK(ini, 0)->type, QUIC_PT_INITIAL, "initial_type");
	ASSERT_EQ(PK(ini, 0)->version, QUIC_VERSION_1, "initial_v1");
	ASSERT_EQ(ini.n, 1200, "client_initial_padded");
	ASSERT_EQ(PK(retry, 0)->type, QUIC_PT_RETRY, "retry_type");
	/* The Retry goes to the client's SCID... */
	ASSERT_TRUE(cid_eq(PK(retry, 0)->dcid_len, PK(retry, 0)->dcid, PK(ini, 0)->scid_len,
			   PK(ini, 0)->scid), "retry_to_client_scid");
	ASSERT_TRUE(PK(retry, 0)->flags & QUIC_PF_TOKEN, "retry_has_token");
	/* ...and the client answers to the Retry's SCID, keeping its own. */
	ASSERT_TRUE(cid_eq(PK(again, 0)->dcid_len, PK(again, 0)->dcid, PK(retry, 0)->scid_len,
			   PK(retry, 0)->scid), "second_initial_to_retry_scid");
	ASSERT_TRUE(cid_eq(PK(again, 0)->scid_len, PK(again, 0)->scid, PK(ini, 0)->scid_len,
			   PK(ini, 0)->scid), "client_scid_survives_retry");
	ASSERT_TRUE(PK(again, 0)->flags & QUIC_PF_TOKEN, "second_initial_carries_token");
	free(ini.b);
	free(retry.b);
	free(again.b);
}

TEST(server_flight_coalesces_three_packets)
{
	struct rec ini, flight, hs;

	load(&ini, "02_client_initial_after_retry.bin", 17);
	load(&flight, "03_server_initial_handshake.bin", 17);
	load(&hs, "04_client_handshake.bin", 18);
	ASSERT_EQ(flight.d.error, QUIC_ERR_NONE, "flight_ok");
	ASSERT_EQ(flight.d.count, 3, "initial_handshake_1rtt");
	ASSERT_EQ(PK(flight, 0)->type, QUIC_PT_INITIAL, "first_initial");
	ASSERT_EQ(PK(flight, 1)->type, QUIC_PT_HANDSHAKE, "then_handshake");
	ASSERT_EQ(PK(flight, 2)->type, QUIC_PT_1RTT, "then_1rtt");
	ASSERT_EQ(flight.d.parsed, flight.n, "walked_to_the_end");
	ASSERT_EQ(PK(flight, 0)->size + PK(flight, 1)->size + PK(flight, 2)->size, flight.n,
		  "sizes_cover_the_datagram");
	/* Every packet of the flight goes to the client's CID. */
	for (int i = 0; i < 3; i++)
		ASSERT_TRUE(cid_eq(PK(flight, i)->dcid_len, PK(flight, i)->dcid,
				   PK(ini, 0)->scid_len, PK(ini, 0)->scid), "flight_to_client");
	/* The client's Handshake goes to the server's new SCID. */
	ASSERT_TRUE(cid_eq(PK(hs, 0)->dcid_len, PK(hs, 0)->dcid, PK(flight, 0)->scid_len,
			   PK(flight, 0)->scid), "handshake_to_server_scid");
	free(ini.b);
	free(flight.b);
	free(hs.b);
}

TEST(greased_fixed_bit_is_still_quic)
{
	struct rec hs, one, flight;

	load(&hs, "05_client_handshake_greased.bin", 18);
	load(&one, "06_client_1rtt_greased.bin", 18);
	load(&flight, "03_server_initial_handshake.bin", 17);
	/* ngtcp2 greases the fixed bit (RFC 9287): both are clear here. */
	ASSERT_EQ(hs.b[0] & QUIC_FIXED_BIT, 0, "handshake_fixed_bit_clear");
	ASSERT_EQ(one.b[0] & QUIC_FIXED_BIT, 0, "short_fixed_bit_clear");
	ASSERT_EQ(hs.d.count, 2, "handshake_plus_first_1rtt");
	ASSERT_EQ(PK(hs, 0)->type, QUIC_PT_HANDSHAKE, "handshake");
	ASSERT_EQ(PK(hs, 1)->type, QUIC_PT_1RTT, "first_client_1rtt");
	ASSERT_EQ(one.d.count, 1, "short_alone");
	ASSERT_EQ(PK(one, 0)->type, QUIC_PT_1RTT, "short_type");
	ASSERT_TRUE(cid_eq(PK(one, 0)->dcid_len, PK(one, 0)->dcid, PK(flight, 0)->scid_len,
			   PK(flight, 0)->scid), "short_to_server_scid");
	free(hs.b);
	free(one.b);
	free(flight.b);
}

TEST(version_negotiation_answers_unknown_version)
{
	struct rec ini, vn;

	load(&ini, "12_client_initial_unknown_version.bin", 18);
	load(&vn, "13_version_negotiation.bin", 18);
	ASSERT_EQ(PK(ini, 0)->type, QUIC_PT_UNKNOWN, "unknown_version");
	ASSERT_EQ(PK(ini, 0)->version, 0x1a2a3a4a, "the_version_asked");
	ASSERT_EQ(PK(vn, 0)->type, QUIC_PT_VERSION_NEG, "vn");
	/* RFC 8999 6: the VN swaps the client's CIDs. */
	ASSERT_TRUE(cid_eq(PK(vn, 0)->dcid_len, PK(vn, 0)->dcid, PK(ini, 0)->scid_len,
			   PK(ini, 0)->scid), "vn_to_client_scid");
	ASSERT_TRUE(cid_eq(PK(vn, 0)->scid_len, PK(vn, 0)->scid, PK(ini, 0)->dcid_len,
			   PK(ini, 0)->dcid), "vn_from_client_dcid");
	ASSERT_TRUE(vn.d.vn_count >= 1, "lists_versions");
	ASSERT_EQ((vn.n - 7 - PK(vn, 0)->dcid_len - PK(vn, 0)->scid_len) / 4, vn.d.vn_count,
		  "whole_list");
	free(ini.b);
	free(vn.b);
}

/* Every prefix of every recorded datagram: never a read past the end
 * (ASan/valgrind), and a cut datagram never parses as more than the
 * whole one did. */
TEST(every_prefix_truncated)
{
	static const char *const names[] = {
		"00_client_initial.bin", "01_retry.bin", "02_client_initial_after_retry.bin",
		"03_server_initial_handshake.bin", "04_client_handshake.bin",
		"05_client_handshake_greased.bin", "06_client_1rtt_greased.bin",
		"07_server_1rtt.bin", "12_client_initial_unknown_version.bin",
		"13_version_negotiation.bin", "15_server_flight_v1.bin",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct rec r;

		load(&r, names[i], 18);
		for (size_t n = 0; n < r.n; n++) {
			uint8_t *cut = malloc(n ? n : 1);
			struct quic_dgram d;

			memcpy(cut, r.b, n);
			quic_parse_datagram_hint(cut, n, 18, &d);
			ASSERT_TRUE(d.count <= r.d.count, names[i]);
			ASSERT_TRUE(d.parsed <= n, "parsed_within");
			free(cut);
		}
		free(r.b);
	}
}

UNIT_MAIN()
