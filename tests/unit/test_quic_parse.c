/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* include/abi/quic_parse.h in user space, on well-formed input: the RFC
 * 9000 varint samples, the RFC 9001 / RFC 9369 sample packets, a server's
 * coalesced flight, Retry, QUIC v2 and Version Negotiation. Malformed and
 * truncated input is test_quic_parse_bounds.c's. */
#include "quic_parse.h"

#include <stddef.h>
#include <stdint.h>

#include "unit.h"
#include "quic_pkt.h"

TEST(varint_rfc9000_samples)
{
	/* RFC 9000 A.1 */
	static const struct {
		const char *hex;
		__u64 value;
		__u32 size;
	} v[] = {
		{ "c2197c5eff14e88c", 151288809941952652ULL, 8 },
		{ "9d7f3e7d", 494878333, 4 },
		{ "7bbd", 15293, 2 },
		{ "25", 37, 1 },
		{ "4025", 37, 2 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		__u8 b[8];
		size_t n = unhex(v[i].hex, b, sizeof(b));
		__u32 off = 0;
		__u64 val = 0;

		ASSERT_EQ(quic_varint(b, (__u32)n, &off, &val), QUIC_ERR_NONE, v[i].hex);
		ASSERT_EQ(val, v[i].value, v[i].hex);
		ASSERT_EQ(off, v[i].size, v[i].hex);

		/* Cut anywhere: an error, off untouched. */
		for (size_t cut = 0; cut < n; cut++) {
			__u8 *copy = calloc(1, cut ? cut : 1);

			memcpy(copy, b, cut);
			off = 0;
			ASSERT_EQ(quic_varint(copy, (__u32)cut, &off, &val),
				  QUIC_ERR_VARINT, "cut varint");
			ASSERT_EQ(off, 0, "cut varint: off");
			free(copy);
		}
	}
}

TEST(varint_at_an_offset)
{
	__u8 b[] = { 0xaa, 0xaa, 0x80, 0x00, 0x40, 0x00, 0xbb };
	__u32 off = 2;
	__u64 val;

	/* 0x80004000: a 4-byte varint of 0x4000; the 0x40 inside it is no
	 * prefix. */
	ASSERT_EQ(quic_varint(b, sizeof(b), &off, &val), QUIC_ERR_NONE, "varint");
	ASSERT_EQ(val, 0x4000, "value");
	ASSERT_EQ(off, 6, "off");
	ASSERT_EQ(quic_varint(b, sizeof(b), &off, &val), QUIC_ERR_VARINT,
		  "0xbb wants 4 bytes, 1 left");
}

TEST(rfc9001_client_initial)
{
	static __u8 b[1200];
	struct quic_dgram d;
	size_t n = unhex(rfc9001_client_initial, b, sizeof(b));

	ASSERT_EQ(n, 1200, "RFC 9001 A.2 is 1200 bytes");
	/* c0 as protected; c3 as the RFC shows the header before header
	 * protection: the parser must not care about the low bits. */
	for (int pass = 0; pass < 2; pass++) {
		const struct quic_pkt *k = &d.pkt[0];

		b[0] = pass ? 0xc3 : 0xc0;
		ASSERT_EQ(parse(b, n, &d), 1, "one packet");
		check_invariants(b, n, &d, 1, "A.2");
		ASSERT_EQ(d.error, QUIC_ERR_NONE, "error");
		ASSERT_EQ(d.flags, 0, "datagram flags (1200 bytes: not small)");
		ASSERT_EQ(d.parsed, 1200, "parsed");
		ASSERT_EQ(k->form, QUIC_FORM_LONG, "form");
		ASSERT_EQ(k->type, QUIC_PT_INITIAL, "type");
		ASSERT_EQ(k->version, QUIC_VERSION_1, "version");
		ASSERT_EQ(k->first_byte, b[0], "first byte");
		ASSERT_EQ(k->dcid_len, 8, "dcid_len");
		ASSERT_MEMEQ(k->dcid, a2_dcid, 8, "dcid");
		ASSERT_EQ(k->scid_len, 0, "scid_len");
		ASSERT_TRUE(zero_bytes(k->scid, sizeof(k->scid)), "scid empty");
		ASSERT_EQ(k->token_len, 0, "token length");
		ASSERT_EQ(k->token_offset, 16, "token offset");
		ASSERT_EQ(k->length, 0x049e, "Length (449e)");
		ASSERT_EQ(k->length, 1182, "Length: pn + 1162 bytes of frames + tag");
		ASSERT_EQ(k->pn_offset, 18, "pn_offset");
		ASSERT_EQ(k->size, 1200, "size");
		ASSERT_EQ(k->flags, QUIC_PF_FIXED_BIT, "packet flags");
	}
	ASSERT_STREQ(quic_version_name(d.pkt[0].version), "v1", "name");
}

TEST(rfc9001_server_initial)
{
	__u8 b[256];
	struct quic_dgram d;
	size_t n = unhex(rfc9001_server_initial, b, sizeof(b));
	const struct quic_pkt *k = &d.pkt[0];

	ASSERT_EQ(n, 135, "RFC 9001 A.3 is 135 bytes");
	ASSERT_EQ(parse(b, n, &d), 1, "one packet");
	check_invariants(b, n, &d, 1, "A.3");
	ASSERT_EQ(k->type, QUIC_PT_INITIAL, "type");
	ASSERT_EQ(k->first_byte, 0xcf, "first byte");
	ASSERT_EQ(k->dcid_len, 0, "dcid_len (the client's empty SCID)");
	ASSERT_EQ(k->scid_len, 8, "scid_len");
	ASSERT_MEMEQ(k->scid, a3_scid, 8, "scid");
	ASSERT_EQ(k->length, 0x75, "Length (4075)");
	ASSERT_EQ(k->pn_offset, 18, "pn_offset");
	ASSERT_EQ(k->size, 135, "size");
	/* A server Initial carrying only an ACK may be small; the flag only
	 * says the datagram is. */
	ASSERT_EQ(d.flags, QUIC_DF_SMALL_INITIAL, "small datagram");
}

TEST(server_flight_coalesced)
{
	__u8 b[512];
	struct quic_dgram d;
	size_t n = server_flight(b, sizeof(b));

	ASSERT_EQ(n, FLIGHT_LEN, "datagram length");

	/* No hint: the 1-RTT packet is found, its DCID is not known. */
	ASSERT_EQ(parse(b, n, &d), 3, "three packets");
	check_invariants(b, n, &d, 3, "flight");
	ASSERT_EQ(d.error, QUIC_ERR_NONE, "error");
	ASSERT_EQ(d.pkt[0].type, QUIC_PT_INITIAL, "1st Initial");
	ASSERT_EQ(d.pkt[0].size, FLIGHT_HS_OFF, "1st size");
	ASSERT_EQ(d.pkt[1].type, QUIC_PT_HANDSHAKE, "2nd Handshake");
	ASSERT_EQ(d.pkt[1].offset, FLIGHT_HS_OFF, "2nd offset");
	ASSERT_EQ(d.pkt[1].size, FLIGHT_HS_SIZE, "2nd size");
	ASSERT_EQ(d.pkt[1].length, 64, "2nd Length");
	ASSERT_EQ(d.pkt[1].pn_offset, FLIGHT_HS_OFF + 17,
		  "2nd pn_offset: no token length in a Handshake header");
	ASSERT_EQ(d.pkt[1].token_len, 0, "Handshake has no token");
	ASSERT_EQ(d.pkt[1].scid_len, 8, "2nd scid_len");
	ASSERT_MEMEQ(d.pkt[1].scid, a3_scid, 8, "2nd scid");
	ASSERT_EQ(d.pkt[2].form, QUIC_FORM_SHORT, "3rd short");
	ASSERT_EQ(d.pkt[2].type, QUIC_PT_1RTT, "3rd 1-RTT");
	ASSERT_EQ(d.pkt[2].offset, FLIGHT_1RTT_OFF, "3rd offset");
	ASSERT_EQ(d.pkt[2].size, 21, "3rd size");
	ASSERT_EQ(d.pkt[2].flags, QUIC_PF_FIXED_BIT | QUIC_PF_DCID_UNKNOWN,
		  "3rd flags");
	ASSERT_EQ(d.pkt[2].pn_offset, 0, "3rd pn_offset unknown");

	/* Hint 0, learned from the client's SCID length. */
	ASSERT_EQ(parse_hint(b, n, 0, &d), 3, "three packets with hint");
	check_invariants(b, n, &d, 3, "flight hint 0");
	ASSERT_EQ(d.pkt[2].flags, QUIC_PF_FIXED_BIT, "3rd flags with hint");
	ASSERT_EQ(d.pkt[2].dcid_len, 0, "3rd dcid_len");
	ASSERT_EQ(d.pkt[2].pn_offset, FLIGHT_1RTT_OFF + 1, "3rd pn_offset");

	/* A wrong hint of 8 leaves 21 - 9 bytes after the PN offset: no room
	 * for the sample, so the first two packets stand and the rest not. */
	ASSERT_EQ(parse_hint(b, n, 8, &d), 2, "two packets with hint 8");
	check_invariants(b, n, &d, 2, "flight hint 8");
	ASSERT_EQ(d.error, QUIC_ERR_TOO_SHORT, "error");
	ASSERT_EQ(d.error_off, FLIGHT_1RTT_OFF, "error_off");
}

TEST(retry_v1_and_v2)
{
	static const char *const vec[] = { rfc9001_retry, rfc9369_retry };
	static const __u32 ver[] = { QUIC_VERSION_1, QUIC_VERSION_2 };

	for (int i = 0; i < 2; i++) {
		__u8 b[64];
		struct quic_dgram d;
		size_t n = unhex(vec[i], b, sizeof(b));
		const struct quic_pkt *k = &d.pkt[0];

		ASSERT_EQ(n, 36, "Retry is 36 bytes");
		ASSERT_EQ(parse(b, n, &d), 1, "one packet");
		check_invariants(b, n, &d, 1, "Retry");
		ASSERT_EQ(k->version, ver[i], "version");
		/* v1 spells Retry 3 (0xff), v2 spells it 0 (0xcf). */
		ASSERT_EQ(k->type, QUIC_PT_RETRY, "type");
		ASSERT_EQ(k->dcid_len, 0, "dcid_len");
		ASSERT_EQ(k->scid_len, 8, "scid_len");
		ASSERT_MEMEQ(k->scid, a3_scid, 8, "scid");
		ASSERT_EQ(k->token_offset, 15, "token offset");
		ASSERT_EQ(k->token_len, 5, "token length");
		ASSERT_MEMEQ(b + k->token_offset, "token", 5, "token");
		ASSERT_EQ(k->flags, QUIC_PF_FIXED_BIT | QUIC_PF_TOKEN, "flags");
		ASSERT_EQ(k->size, 36, "size");
		ASSERT_EQ(k->pn_offset, 0, "no packet number");

		/* Without its token a Retry must be discarded by the client
		 * (RFC 9000 17.2.5.2), but it still parses: a report says
		 * so rather than not seeing it. Less than the tag does not. */
		ASSERT_EQ(parse(b, 31, &d), 1, "tag only");
		ASSERT_EQ(d.pkt[0].token_len, 0, "tag only: no token");
		ASSERT_EQ(d.pkt[0].flags & QUIC_PF_TOKEN, 0, "tag only: flag");
		ASSERT_EQ(parse(b, 30, &d), 0, "short of the tag");
		ASSERT_EQ(d.error, QUIC_ERR_TRUNCATED, "short of the tag: error");
	}
}

TEST(v2_client_initial)
{
	static __u8 b[1200];
	struct quic_dgram d;
	size_t n = unhex(rfc9369_client_initial_head, b, sizeof(b));

	memset(b + n, 0x77, sizeof(b) - n);
	ASSERT_EQ(parse(b, sizeof(b), &d), 1, "one packet");
	check_invariants(b, sizeof(b), &d, 1, "v2 Initial");
	/* 0xd7: type bits 01, which is Initial in v2 (0-RTT in v1). */
	ASSERT_EQ(d.pkt[0].type, QUIC_PT_INITIAL, "type");
	ASSERT_EQ(d.pkt[0].version, QUIC_VERSION_2, "version");
	ASSERT_MEMEQ(d.pkt[0].dcid, a2_dcid, 8, "dcid");
	ASSERT_EQ(d.pkt[0].length, 1182, "Length");
	ASSERT_STREQ(quic_version_name(d.pkt[0].version), "v2", "name");
}

TEST(v2_type_codes)
{
	/* wire type bits -> type, for v1 and v2 */
	static const int v1[] = { QUIC_PT_INITIAL, QUIC_PT_0RTT,
				  QUIC_PT_HANDSHAKE, QUIC_PT_RETRY };
	static const int v2[] = { QUIC_PT_RETRY, QUIC_PT_INITIAL,
				  QUIC_PT_0RTT, QUIC_PT_HANDSHAKE };

	for (int bits = 0; bits < 4; bits++) {
		for (int v = 0; v < 2; v++) {
			struct wbuf w = { .n = 0 };
			struct quic_dgram d;
			int type = v ? v2[bits] : v1[bits];

			put_long(&w, 0xc0 | bits << 4,
				 v ? QUIC_VERSION_2 : QUIC_VERSION_1,
				 a2_dcid, 8, NULL, 0);
			if (type == QUIC_PT_INITIAL)
				putvar(&w, 0, 1);
			if (type != QUIC_PT_RETRY)
				putvar(&w, 40, 1);
			putfill(&w, 40, 0);
			ASSERT_EQ(parse(w.b, w.n, &d), 1, "parses");
			check_invariants(w.b, w.n, &d, 1, "type codes");
			ASSERT_EQ(d.pkt[0].type, type, v ? "v2 type" : "v1 type");
		}
	}
}

TEST(version_negotiation)
{
	static const __u32 vers[] = { QUIC_VERSION_2, QUIC_VERSION_1,
				      0x1a2a3a4a, QUIC_VERSION_DRAFT(29) };
	static const char *const names[] = { "v2", "v1", "grease", "draft-29" };
	__u8 b[256];
	struct quic_dgram d;
	size_t n = version_negotiation(b, vers, 4);
	const struct quic_pkt *k = &d.pkt[0];

	ASSERT_EQ(parse(b, n, &d), 1, "one packet");
	check_invariants(b, n, &d, 1, "VN");
	ASSERT_EQ(k->type, QUIC_PT_VERSION_NEG, "type");
	ASSERT_EQ(k->version, 0, "version");
	ASSERT_EQ(k->flags, 0, "flags: fixed bit clear here, and that is fine");
	ASSERT_EQ(k->dcid_len, 8, "dcid_len");
	ASSERT_MEMEQ(k->dcid, a3_scid, 8, "dcid: the client's SCID");
	ASSERT_MEMEQ(k->scid, a2_dcid, 8, "scid: the client's DCID");
	ASSERT_EQ(k->size, n, "size");
	ASSERT_EQ(d.vn_count, 4, "versions listed");
	ASSERT_EQ(d.vn_listed, 4, "versions copied");
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(d.vn_versions[i], vers[i], "version");
		ASSERT_STREQ(quic_version_name(d.vn_versions[i]), names[i], "name");
	}
	ASSERT_STREQ(quic_version_name(k->version), "negotiation", "name");

	/* No versions at all: odd, not malformed. */
	ASSERT_EQ(parse(b, 23, &d), 1, "empty list");
	ASSERT_EQ(d.vn_count, 0, "empty list: count");
	ASSERT_EQ(d.vn_listed, 0, "empty list: copied");

	/* A list that is not whole versions is. */
	for (size_t cut = 24; cut < n; cut++) {
		if ((cut - 23) % 4 == 0)
			continue;
		ASSERT_EQ(parse(b, cut, &d), 0, "ragged list");
		ASSERT_EQ(d.error, QUIC_ERR_VN_LEN, "ragged list: error");
		ASSERT_EQ(d.vn_count, 0, "ragged list: no versions");
	}
}

TEST(version_negotiation_many_versions)
{
	__u32 vers[11];
	__u8 b[256];
	struct quic_dgram d;
	size_t n;

	for (int i = 0; i < 11; i++)
		vers[i] = 0x0a0a0a0a + 0x10101010u * (__u32)i;
	n = version_negotiation(b, vers, 11);
	ASSERT_EQ(parse(b, n, &d), 1, "one packet");
	check_invariants(b, n, &d, 1, "VN 11");
	ASSERT_EQ(d.vn_count, 11, "versions listed");
	ASSERT_EQ(d.vn_listed, QUIC_VN_MAX_LISTED, "versions copied");
	for (int i = 0; i < QUIC_VN_MAX_LISTED; i++)
		ASSERT_EQ(d.vn_versions[i], vers[i], "version");
}

UNIT_MAIN()
