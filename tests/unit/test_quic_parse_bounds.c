/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* include/abi/quic_parse.h in user space at its bounds: connection ID
 * lengths, short headers by hint, greased bits, every truncation of the
 * samples, lengths past the datagram or 32 bits, trailing bytes, drafts
 * and unknown versions, and random datagrams. Every parse reads from a
 * heap copy of exactly the datagram's size (quic_pkt.h). */
#include "quic_parse.h"

#include <stddef.h>
#include <stdint.h>

#include "unit.h"
#include "quic_pkt.h"

/* RFC 8999 lets other versions have CIDs up to 255 bytes, and Version
 * Negotiation echoes them: only v1-style versions stop at 20. */
TEST(cid_length_limits)
{
	__u8 cid[255];
	struct quic_dgram d;

	for (int i = 0; i < 255; i++)
		cid[i] = (__u8)(i + 1);

	for (int which = 0; which < 2; which++) {
		struct wbuf w = { .n = 0 };

		/* v1 Initial, DCID or SCID of 21 bytes */
		put_long(&w, 0xc0, QUIC_VERSION_1, cid, which ? 8 : 21,
			 cid, which ? 21 : 8);
		putvar(&w, 0, 1);
		putvar(&w, 1200, 2);
		putfill(&w, 1200, 0);
		ASSERT_EQ(parse(w.b, w.n, &d), 0, "v1 CID of 21");
		ASSERT_EQ(d.error, QUIC_ERR_CID_TOO_LONG, "error");
		ASSERT_EQ(d.error_off, 0, "error_off");
		check_invariants(w.b, w.n, &d, 0, "CID 21");
	}

	{
		struct wbuf w = { .n = 0 };

		/* 20 is fine */
		put_long(&w, 0xc0, QUIC_VERSION_1, cid, 20, cid, 20);
		putvar(&w, 0, 1);
		putvar(&w, 1200, 2);
		putfill(&w, 1200, 0);
		ASSERT_EQ(parse(w.b, w.n, &d), 1, "v1 CIDs of 20");
		check_invariants(w.b, w.n, &d, 1, "CID 20");
		ASSERT_MEMEQ(d.pkt[0].dcid, cid, 20, "dcid");
		ASSERT_MEMEQ(d.pkt[0].scid, cid, 20, "scid");
	}

	{
		struct wbuf w = { .n = 0 };
		const __u32 vers[] = { QUIC_VERSION_1 };

		/* A grease version with 255-byte CIDs, then the Version
		 * Negotiation that answers it. */
		put_long(&w, 0xc0, 0x5a6a7a8a, cid, 255, cid, 21);
		putfill(&w, 600, 0);
		ASSERT_EQ(parse(w.b, w.n, &d), 1, "grease version, long CIDs");
		check_invariants(w.b, w.n, &d, 1, "grease");
		ASSERT_EQ(d.pkt[0].type, QUIC_PT_UNKNOWN, "type");
		ASSERT_EQ(d.pkt[0].dcid_len, 255, "dcid_len as on the wire");
		ASSERT_EQ(d.pkt[0].scid_len, 21, "scid_len as on the wire");
		ASSERT_EQ(d.pkt[0].flags, QUIC_PF_FIXED_BIT | QUIC_PF_DCID_CLIPPED |
			  QUIC_PF_SCID_CLIPPED, "flags");
		ASSERT_MEMEQ(d.pkt[0].dcid, cid, 20, "dcid head");
		ASSERT_MEMEQ(d.pkt[0].scid, cid, 20, "scid head");
		ASSERT_EQ(d.pkt[0].size, w.n, "takes the datagram");
		ASSERT_STREQ(quic_version_name(d.pkt[0].version), "grease", "name");

		w.n = 0;
		put_long(&w, 0x80, QUIC_VERSION_NEG, cid, 21, cid, 255);
		put32(&w, vers[0]);
		ASSERT_EQ(parse(w.b, w.n, &d), 1, "VN with long CIDs");
		check_invariants(w.b, w.n, &d, 1, "VN long CIDs");
		ASSERT_EQ(d.pkt[0].flags, QUIC_PF_DCID_CLIPPED | QUIC_PF_SCID_CLIPPED,
			  "flags");
		ASSERT_EQ(d.vn_count, 1, "versions");
		ASSERT_EQ(d.vn_versions[0], QUIC_VERSION_1, "version");

		/* The CID must still be all there. */
		ASSERT_EQ(parse(w.b, 6 + 21, &d), 0, "cut in the SCID length");
		ASSERT_EQ(d.error, QUIC_ERR_TRUNCATED, "error");
		ASSERT_EQ(parse(w.b, 6 + 21 + 1 + 254, &d), 0, "cut in the SCID");
		ASSERT_EQ(d.error, QUIC_ERR_TRUNCATED, "error");
	}
}

TEST(short_header_with_hint)
{
	__u8 b[64];
	struct quic_dgram d;
	struct quic_pkt k;
	size_t n = unhex(rfc9001_short, b, sizeof(b));
	struct wbuf w = { .n = 0 };

	ASSERT_EQ(n, 21, "A.5 is 21 bytes");
	memset(&k, 0, sizeof(k));
	ASSERT_EQ(quic_parse_short(b, (__u32)n, 0, 0, &k), QUIC_ERR_NONE, "hint 0");
	ASSERT_EQ(k.form, QUIC_FORM_SHORT, "form");
	ASSERT_EQ(k.type, QUIC_PT_1RTT, "type");
	ASSERT_EQ(k.first_byte, 0x4c, "first byte");
	ASSERT_EQ(k.flags, QUIC_PF_FIXED_BIT, "flags");
	ASSERT_EQ(k.dcid_len, 0, "dcid_len");
	ASSERT_EQ(k.pn_offset, 1, "pn_offset");
	ASSERT_EQ(k.size, 21, "size");
	ASSERT_EQ(k.version, 0, "no version");

	/* One byte less: no room for the sample. */
	memset(&k, 0, sizeof(k));
	ASSERT_EQ(quic_parse_short(b, 20, 0, 0, &k), QUIC_ERR_TOO_SHORT, "20 bytes");

	/* An 8-byte DCID (a server's choice, learned from its SCID). */
	put8(&w, 0x5b);
	put(&w, a3_scid, 8);
	putfill(&w, 30, 0xee);
	ASSERT_EQ(parse_hint(w.b, w.n, 8, &d), 1, "hint 8");
	check_invariants(w.b, w.n, &d, 1, "short hint 8");
	ASSERT_EQ(d.pkt[0].dcid_len, 8, "dcid_len");
	ASSERT_MEMEQ(d.pkt[0].dcid, a3_scid, 8, "dcid");
	ASSERT_EQ(d.pkt[0].pn_offset, 9, "pn_offset");

	/* A hint over 20 is "unknown". */
	ASSERT_EQ(parse_hint(w.b, w.n, 21, &d), 1, "hint 21");
	ASSERT_EQ(d.pkt[0].flags, QUIC_PF_FIXED_BIT | QUIC_PF_DCID_UNKNOWN, "flags");
	ASSERT_EQ(d.pkt[0].dcid_len, 0, "no dcid");

	/* Not a short header at all. */
	memset(&k, 0, sizeof(k));
	b[0] = 0xc0;
	ASSERT_EQ(quic_parse_short(b, (__u32)n, 0, 0, &k), QUIC_ERR_FORM, "long");
	memset(&k, 0, sizeof(k));
	ASSERT_EQ(quic_parse_short(b, (__u32)n, (__u32)n, 0, &k),
		  QUIC_ERR_TRUNCATED, "at the end");
}

/* RFC 9287: the fixed bit may be greased to 0. Nothing else changes. */
TEST(greased_fixed_bit)
{
	static __u8 b[1200];
	struct quic_dgram d;
	size_t n = unhex(rfc9001_client_initial, b, sizeof(b));

	b[0] &= (__u8)~QUIC_FIXED_BIT;
	ASSERT_EQ(parse(b, n, &d), 1, "greased Initial");
	check_invariants(b, n, &d, 1, "greased Initial");
	ASSERT_EQ(d.pkt[0].first_byte, 0x80, "first byte");
	ASSERT_EQ(d.pkt[0].type, QUIC_PT_INITIAL, "type");
	ASSERT_EQ(d.pkt[0].flags & QUIC_PF_FIXED_BIT, 0, "no fixed bit");
	ASSERT_EQ(d.pkt[0].length, 1182, "Length");

	n = unhex(rfc9001_short, b, sizeof(b));
	b[0] &= (__u8)~QUIC_FIXED_BIT;
	ASSERT_EQ(parse_hint(b, n, 0, &d), 1, "greased short header");
	check_invariants(b, n, &d, 1, "greased short");
	ASSERT_EQ(d.pkt[0].first_byte, 0x0c, "first byte");
	ASSERT_EQ(d.pkt[0].flags, 0, "no fixed bit");
}

/* Every prefix of the A.2 Initial: which field the cut falls in decides
 * the error, and the parse never reads past the cut (the copy is exactly
 * that long). */
TEST(truncated_initial_at_every_offset)
{
	static __u8 b[1200];
	struct quic_dgram d;
	size_t n = unhex(rfc9001_client_initial, b, sizeof(b));

	for (size_t cut = 0; cut < n; cut++) {
		int want;
		char label[64];

		if (cut < 15)		/* first byte, version, CIDs: 0..14 */
			want = QUIC_ERR_TRUNCATED;
		else if (cut < 18)	/* token length 15, Length 16..17 */
			want = QUIC_ERR_VARINT;
		else
			want = QUIC_ERR_LENGTH;
		snprintf(label, sizeof(label), "cut at %zu", cut);
		ASSERT_EQ(parse(b, cut, &d), 0, label);
		ASSERT_EQ(d.error, want, label);
		check_invariants(b, cut, &d, 0, label);
	}
}

TEST(truncated_flight_at_every_offset)
{
	__u8 b[512];
	struct quic_dgram d;
	size_t n = server_flight(b, sizeof(b));

	for (size_t cut = 0; cut <= n; cut++) {
		int ret = parse_hint(b, cut, 0, &d), want;
		char label[64];

		snprintf(label, sizeof(label), "cut at %zu", cut);
		check_invariants(b, cut, &d, ret, label);
		if (cut < FLIGHT_HS_OFF)
			want = 0;
		else if (cut < FLIGHT_1RTT_OFF)
			want = 1;
		else if (cut < FLIGHT_LEN)
			want = 2;
		else
			want = 3;
		ASSERT_EQ(ret, want, label);
		/* A cut right after a packet leaves a whole datagram. */
		ASSERT_EQ(d.error == QUIC_ERR_NONE,
			  cut == FLIGHT_HS_OFF || cut == FLIGHT_1RTT_OFF ||
			  cut == FLIGHT_LEN, label);
	}
}

/* Retry, VN, short headers and unknown versions take the rest of the
 * datagram, so a cut may leave them valid, shorter: only the invariants
 * can be checked, at every offset. */
TEST(truncated_others_at_every_offset)
{
	static const char *const vec[] = {
		rfc9001_retry, rfc9369_retry, rfc9001_short,
		rfc9369_client_initial_head, rfc9001_server_initial,
	};
	__u8 vn[128];
	static const __u32 vers[] = { 1, 2, 3 };
	size_t vn_len = version_negotiation(vn, vers, 3);

	for (size_t v = 0; v <= sizeof(vec) / sizeof(vec[0]); v++) {
		__u8 b[256];
		size_t n;

		if (v < sizeof(vec) / sizeof(vec[0])) {
			n = unhex(vec[v], b, sizeof(b));
		} else {
			n = vn_len;
			memcpy(b, vn, n);
		}
		for (size_t cut = 0; cut <= n; cut++) {
			for (__u32 hint = 0; hint <= 21; hint += 7) {
				struct quic_dgram d;
				char label[64];
				int ret = parse_hint(b, cut, hint, &d);

				snprintf(label, sizeof(label), "vector %zu cut %zu hint %u",
					 v, cut, hint);
				check_invariants(b, cut, &d, ret, label);
				ASSERT_TRUE(ret <= 1, label);
			}
		}
	}
}

TEST(length_beyond_datagram)
{
	struct wbuf w = { .n = 0 };
	struct quic_dgram d;

	/* Length one more than what follows */
	put_long(&w, 0xe0, QUIC_VERSION_1, a2_dcid, 8, NULL, 0);
	putvar(&w, 101, 2);
	putfill(&w, 100, 0);
	ASSERT_EQ(parse(w.b, w.n, &d), 0, "Length + 1");
	ASSERT_EQ(d.error, QUIC_ERR_LENGTH, "error");
	check_invariants(w.b, w.n, &d, 0, "Length + 1");
	w.b[w.n - 100 - 1] = 100;	/* exact: fine */
	ASSERT_EQ(parse(w.b, w.n, &d), 1, "Length exact");

	/* Token Length one more than what follows */
	w.n = 0;
	put_long(&w, 0xc0, QUIC_VERSION_1, a2_dcid, 8, NULL, 0);
	putvar(&w, 51, 1);
	putfill(&w, 50, 0);
	ASSERT_EQ(parse(w.b, w.n, &d), 0, "Token Length + 1");
	ASSERT_EQ(d.error, QUIC_ERR_TOKEN_LEN, "error");
	check_invariants(w.b, w.n, &d, 0, "Token Length + 1");
}

/* A 62-bit Length must not be taken modulo 2^32: 2^32 + 40 is not 40. */
TEST(length_beyond_32_bits)
{
	struct wbuf w = { .n = 0 };
	struct quic_dgram d;

	put_long(&w, 0xe0, QUIC_VERSION_1, a2_dcid, 8, NULL, 0);
	putvar(&w, (1ULL << 32) + 40, 8);
	putfill(&w, 40, 0);
	ASSERT_EQ(parse(w.b, w.n, &d), 0, "Length 2^32 + 40");
	ASSERT_EQ(d.error, QUIC_ERR_LENGTH, "error");

	w.n = 0;
	put_long(&w, 0xc0, QUIC_VERSION_1, a2_dcid, 8, NULL, 0);
	putvar(&w, (1ULL << 62) - 1, 8);	/* the largest varint */
	putvar(&w, 40, 1);
	putfill(&w, 40, 0);
	ASSERT_EQ(parse(w.b, w.n, &d), 0, "Token Length 2^62 - 1");
	ASSERT_EQ(d.error, QUIC_ERR_TOKEN_LEN, "error");
}

/* Varints need not be minimal: a token length in 4 bytes, a Length in 8. */
TEST(long_varints)
{
	struct wbuf w = { .n = 0 };
	struct quic_dgram d;
	const struct quic_pkt *k = &d.pkt[0];

	put_long(&w, 0xc1, QUIC_VERSION_1, a2_dcid, 8, a3_scid, 8);
	putvar(&w, 5, 4);
	put(&w, "TOKEN", 5);
	putvar(&w, 1200, 8);
	putfill(&w, 1200, 0x11);
	ASSERT_EQ(w.b[23], 0x80, "4-byte varint prefix");
	ASSERT_EQ(w.b[32], 0xc0, "8-byte varint prefix");
	ASSERT_EQ(parse(w.b, w.n, &d), 1, "parses");
	check_invariants(w.b, w.n, &d, 1, "long varints");
	ASSERT_EQ(k->token_offset, 27, "token offset");
	ASSERT_EQ(k->token_len, 5, "token length");
	ASSERT_MEMEQ(w.b + k->token_offset, "TOKEN", 5, "token");
	ASSERT_EQ(k->flags, QUIC_PF_FIXED_BIT | QUIC_PF_TOKEN, "flags");
	ASSERT_EQ(k->length, 1200, "Length");
	ASSERT_EQ(k->pn_offset, 40, "pn_offset");
	ASSERT_EQ(k->size, w.n, "size");
	ASSERT_EQ(d.flags, 0, "1241 bytes: not small");

	/* Cut in either varint (23..26, 32..39) or in the token (27..31) */
	for (size_t cut = 23; cut < 40; cut++) {
		if (cut >= 27 && cut < 32)
			continue;
		ASSERT_EQ(parse(w.b, cut, &d), 0, "cut varint");
		ASSERT_EQ(d.error, QUIC_ERR_VARINT, "cut varint: error");
	}
	for (size_t cut = 27; cut < 32; cut++) {
		ASSERT_EQ(parse(w.b, cut, &d), 0, "cut token");
		ASSERT_EQ(d.error, QUIC_ERR_TOKEN_LEN, "cut token: error");
	}
}

/* RFC 9001 5.4.2: the sample starts 4 bytes after the packet number
 * offset and is 16 long, so Length must be at least 20. */
TEST(length_too_small_for_sample)
{
	for (__u64 len = 0; len <= 21; len++) {
		struct wbuf w = { .n = 0 };
		struct quic_dgram d;
		int ret;

		put_long(&w, 0xe0, QUIC_VERSION_1, a2_dcid, 8, NULL, 0);
		putvar(&w, len, 1);
		putfill(&w, len, 0);
		ret = parse(w.b, w.n, &d);
		check_invariants(w.b, w.n, &d, ret, "small Length");
		ASSERT_EQ(ret, len >= QUIC_HP_MIN_AFTER_PN, "parses");
		if (!ret)
			ASSERT_EQ(d.error, QUIC_ERR_TOO_SHORT, "error");
	}
}

TEST(more_than_max_coalesced)
{
	struct wbuf w = { .n = 0 };
	struct quic_dgram d;

	for (int i = 0; i < QUIC_MAX_COALESCED + 2; i++)
		put_handshake(&w, 30 + i);
	ASSERT_EQ(parse(w.b, w.n, &d), QUIC_MAX_COALESCED, "stops at the limit");
	check_invariants(w.b, w.n, &d, QUIC_MAX_COALESCED, "six packets");
	ASSERT_EQ(d.error, QUIC_ERR_NONE, "not an error");
	ASSERT_EQ(d.flags, QUIC_DF_MORE, "more");
	ASSERT_TRUE(d.parsed < w.n, "parsed part");
	for (int i = 0; i < QUIC_MAX_COALESCED; i++)
		ASSERT_EQ(d.pkt[i].length, 30 + i, "Length");
}

/* Bytes after the last packet that make no packet: the packets before
 * stand, the error says what the rest is. */
TEST(trailing_bytes)
{
	__u8 b[256];
	struct quic_dgram d;
	size_t n = unhex(rfc9001_server_initial, b, sizeof(b));

	memset(b + n, 0, 5);
	ASSERT_EQ(parse(b, n + 5, &d), 1, "Initial stands");
	check_invariants(b, n + 5, &d, 1, "trailing zeros");
	ASSERT_EQ(d.error, QUIC_ERR_TOO_SHORT, "5 zeros: a short header too short");
	ASSERT_EQ(d.error_off, n, "error_off");
	ASSERT_EQ(d.parsed, n, "parsed");

	b[n] = 0xc0;	/* a long header cut in its version */
	ASSERT_EQ(parse(b, n + 5, &d), 1, "Initial stands");
	ASSERT_EQ(d.error, QUIC_ERR_TRUNCATED, "cut long header");
}

TEST(empty_datagram)
{
	struct quic_dgram d;

	ASSERT_EQ(parse(NULL, 0, &d), 0, "empty");
	ASSERT_EQ(d.error, QUIC_ERR_TRUNCATED, "error");
	ASSERT_EQ(d.count, 0, "count");
}

TEST(drafts_and_unknown_versions)
{
	static const struct {
		__u32 version;
		int type;
		const char *name;
	} v[] = {
		{ QUIC_VERSION_DRAFT(29), QUIC_PT_HANDSHAKE, "draft-29" },
		{ QUIC_VERSION_DRAFT(27), QUIC_PT_HANDSHAKE, "draft-27" },
		{ QUIC_VERSION_DRAFT(34), QUIC_PT_HANDSHAKE, "draft-34" },
		/* read by the invariants only */
		{ QUIC_VERSION_DRAFT(23), QUIC_PT_UNKNOWN, "draft-23" },
		{ 0x00000002, QUIC_PT_UNKNOWN, "unknown" },
		{ 0xfafafafa, QUIC_PT_UNKNOWN, "grease" },
		{ 0x51303530, QUIC_PT_UNKNOWN, "gquic" },	/* "Q050" */
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct wbuf w = { .n = 0 };
		struct quic_dgram d;

		put_long(&w, 0xe0, v[i].version, a2_dcid, 8, a3_scid, 8);
		putvar(&w, 40, 1);
		putfill(&w, 40, 0);
		put_handshake(&w, 40);	/* found only after a known version */
		ASSERT_EQ(parse(w.b, w.n, &d), v[i].type == QUIC_PT_UNKNOWN ? 1 : 2,
			  v[i].name);
		check_invariants(w.b, w.n, &d, d.count, v[i].name);
		ASSERT_EQ(d.pkt[0].type, v[i].type, v[i].name);
		ASSERT_EQ(d.pkt[0].version, v[i].version, v[i].name);
		ASSERT_MEMEQ(d.pkt[0].dcid, a2_dcid, 8, v[i].name);
		ASSERT_MEMEQ(d.pkt[0].scid, a3_scid, 8, v[i].name);
		ASSERT_STREQ(quic_version_name(v[i].version), v[i].name, v[i].name);
	}
}

TEST(version_names)
{
	ASSERT_STREQ(quic_version_name(0), "negotiation", "0");
	ASSERT_STREQ(quic_version_name(1), "v1", "1");
	ASSERT_STREQ(quic_version_name(0x6b3343cf), "v2", "v2");
	ASSERT_STREQ(quic_version_name(0xff00001d), "draft-29", "draft-29");
	ASSERT_STREQ(quic_version_name(0xff000009), "draft-09", "draft-09");
	ASSERT_STREQ(quic_version_name(0xff000063), "draft", "draft-99");
	ASSERT_STREQ(quic_version_name(0x0a0a0a0a), "grease", "0a0a0a0a");
	ASSERT_STREQ(quic_version_name(0x1a2a3a4a), "grease", "1a2a3a4a");
	ASSERT_STREQ(quic_version_name(0xbabababa), "grease", "babababa");
	ASSERT_STREQ(quic_version_name(0x1a2a3a4b), "unknown", "1a2a3a4b");
	ASSERT_STREQ(quic_version_name(0x54303531), "gquic", "T051");
	ASSERT_STREQ(quic_version_name(0x51303a30), "unknown", "Q0:0");
	ASSERT_STREQ(quic_version_name(0x12345678), "unknown", "12345678");
	ASSERT_TRUE(quic_version_is_grease(0xeafacada), "grease test");
	ASSERT_TRUE(!quic_version_is_grease(QUIC_VERSION_1), "v1 no grease");
}

/* The output is an event: all of it is written, whatever was there. */
TEST(output_fully_written)
{
	__u8 b[64];
	struct quic_dgram d;
	size_t n = unhex(rfc9001_retry, b, sizeof(b));

	memset(&d, 0xa5, sizeof(d));
	ASSERT_EQ(parse(b, n, &d), 1, "Retry");
	check_invariants(b, n, &d, 1, "Retry");
	ASSERT_TRUE(zero_bytes(&d.pkt[1], sizeof(d.pkt) - sizeof(d.pkt[0])),
		    "unused packets zero");
	ASSERT_TRUE(zero_bytes(d.vn_versions, sizeof(d.vn_versions)), "vn zero");
	ASSERT_EQ(d.error_off, 0, "error_off zero");
}

TEST(layout)
{
	/* The ring buffer contract: sizes and a few offsets. */
	ASSERT_EQ(sizeof(struct quic_pkt), 80, "quic_pkt");
	ASSERT_EQ(sizeof(struct quic_dgram), 376, "quic_dgram");
	ASSERT_EQ(offsetof(struct quic_pkt, form), 28, "form");
	ASSERT_EQ(offsetof(struct quic_pkt, dcid), 34, "dcid");
	ASSERT_EQ(offsetof(struct quic_pkt, scid), 54, "scid");
	ASSERT_EQ(offsetof(struct quic_dgram, vn_versions), 24, "vn_versions");
	ASSERT_EQ(offsetof(struct quic_dgram, pkt), 56, "pkt");
}

/* xorshift64: the same "random" datagrams on every run. */
static __u64 rnd(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Mutated sample packets and plain noise: the invariants hold, and (under
 * valgrind or ASan) nothing is read outside the datagram. */
TEST(random_datagrams)
{
	static __u8 seeds[4][1400];
	size_t seed_len[4];
	__u64 s = 0x9e3779b97f4a7c15ULL;
	__u8 *b = malloc(1400);

	seed_len[0] = unhex(rfc9001_client_initial, seeds[0], sizeof(seeds[0]));
	seed_len[1] = server_flight(seeds[1], sizeof(seeds[1]));
	seed_len[2] = unhex(rfc9001_retry, seeds[2], sizeof(seeds[2]));
	{
		static const __u32 vers[] = { 1, QUIC_VERSION_2 };

		seed_len[3] = version_negotiation(seeds[3], vers, 2);
	}
	for (int iter = 0; iter < 20000; iter++) {
		int which = (int)(rnd(&s) % 5), flips, ret;
		size_t n;
		struct quic_dgram d;
		char label[64];

		if (which < 4) {
			n = seed_len[which];
			memcpy(b, seeds[which], n);
			/* Flip bytes, mostly in the headers. */
			flips = 1 + (int)(rnd(&s) % 4);
			for (int f = 0; f < flips; f++) {
				size_t at = rnd(&s) % (rnd(&s) % 2 ? 48 : n);

				if (at < n)
					b[at] = (__u8)rnd(&s);
			}
			n = rnd(&s) % 3 ? n : rnd(&s) % (n + 1);
		} else {
			n = rnd(&s) % 1400;
			for (size_t i = 0; i < n; i++)
				b[i] = (__u8)rnd(&s);
		}
		ret = parse_hint(b, n, (__u32)(rnd(&s) % 24), &d);
		snprintf(label, sizeof(label), "iteration %d", iter);
		check_invariants(b, n, &d, ret, label);
	}
	free(b);
}

UNIT_MAIN()
