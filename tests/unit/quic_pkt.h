/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the quic_parse.h tests share: the RFC 9001 / RFC 9369 sample
 * packets, a datagram builder, a parse of a heap copy of exactly the
 * datagram's size (valgrind and -fsanitize=address see any read past its
 * end), and the invariants every parse must keep. Include after unit.h;
 * each test file uses some of it. */
#ifndef CONNSCOPE_TEST_QUIC_PKT_H
#define CONNSCOPE_TEST_QUIC_PKT_H

#include <stddef.h>
#include <stdint.h>
#include "quic_parse.h"

/* RFC 9001 A.2: the client Initial, protected, all 1200 bytes. */
static const char rfc9001_client_initial[] __attribute__((unused)) =
	"c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11"
	"d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399"
	"1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c"
	"8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212"
	"30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5"
	"457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17ddd0c208"
	"4dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948838a3aec"
	"4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3"
	"485e8a94dc250ae3fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db"
	"059ae0648db2f64264ed5e39be2e20d82df566da8dd5998ccabdae053060ae6c"
	"7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8"
	"9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556"
	"be52afe3f565636ad1b17d508b73d8743eeb524be22b3dcbc2c7468d54119c74"
	"68449a13d8e3b95811a198f3491de3e7fe942b330407abf82a4ed7c1b311663a"
	"c69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00"
	"f064c99e3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632"
	"291d6a418211cc2962e20fe47feb3edf330f2c603a9d48c0fcb5699dbfe58964"
	"25c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2c25e50fd"
	"14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ff"
	"ef132eef2fa09346aee33c28eb130ff28f5b766953334113211996d20011a198"
	"e3fc433f9f2541010ae17c1bf202580f6047472fb36857fe843b19f5984009dd"
	"c324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73"
	"203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77f"
	"cb2c0e0eb605cb0504db87632cf3d8b4dae6e705769d1de354270123cb11450e"
	"fc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d069fc33bd801b03ade"
	"a2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e724047"
	"90a2181014f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2"
	"162f40a29f0c3c8745c0f50fba3852e566d44575c29d39a03f0cda721984b6f4"
	"40591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b65bfc5ca0"
	"6948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e"
	"8f2e6ff5800175f113253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0"
	"be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8078cdfcb3868263ff8f09400"
	"54da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab"
	"760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9"
	"f96f3ca9ec1dde434da7d2d392b905ddf3d1f9af93d1af5950bd493f5aa731b4"
	"056df31bd267b6b90a079831aaf579be0a39013137aac6d404f518cfd4684064"
	"7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241"
	"e221af44860018ab0856972e194cd934";

/* RFC 9001 A.3: the server Initial, protected (135 bytes). */
static const char rfc9001_server_initial[] __attribute__((unused)) =
	"cf000000010008f067a5502a4262b5004075c0d95a482cd0991cd25b0aac406a"
	"5816b6394100f37a1c69797554780bb38cc5a99f5ede4cf73c3ec2493a1839b3"
	"dbcba3f6ea46c5b7684df3548e7ddeb9c3bf9c73cc3f3bded74b562bfb19fb84"
	"022f8ef4cdd93795d77d06edbb7aaf2f58891850abbdca3d20398c276456cbc4"
	"2158407dd074ee";

/* RFC 9001 A.4: Retry, token "token". */
static const char rfc9001_retry[] __attribute__((unused)) =
	"ff000000010008f067a5502a4262b5746f6b656e"
	"04a265ba2eff4d829058fb3f0f2496ba";

/* RFC 9001 A.5: a short header packet (ChaCha20), empty DCID, 21 bytes:
 * exactly the least that holds the header-protection sample. */
static const char rfc9001_short[] __attribute__((unused)) = "4cfe4189655e5cd55c41f69080575d7999c25a5bfb";

/* RFC 9369 A.4: the v2 Retry. */
static const char rfc9369_retry[] __attribute__((unused)) =
	"cf6b3343cf0008f067a5502a4262b5746f6b656e"
	"c8646ce8bfe33952d955543665dcc7b6";

/* RFC 9369 A.2: the first 32 bytes of the v2 client Initial (1200 bytes,
 * the rest of which only matters to a decryptor). */
static const char rfc9369_client_initial_head[] __attribute__((unused)) =
	"d76b3343cf088394c8f03e5157080000449ea0c95e82ffe67b6abcdb4298b485";

static const __u8 a2_dcid[] __attribute__((unused)) = { 0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08 };
static const __u8 a3_scid[] __attribute__((unused)) = { 0xf0, 0x67, 0xa5, 0x50, 0x2a, 0x42, 0x62, 0xb5 };

static inline size_t unhex(const char *hex, __u8 *out, size_t max)
{
	size_t n = strlen(hex) / 2, i;

	ASSERT_EQ(strlen(hex) % 2, 0, "hex length even");
	ASSERT_TRUE(n <= max, "hex fits");
	for (i = 0; i < n; i++) {
		unsigned int b;

		ASSERT_EQ(sscanf(hex + 2 * i, "%2x", &b), 1, "hex digit");
		out[i] = (__u8)b;
	}
	return n;
}

/* A datagram under construction. */
struct wbuf {
	__u8 b[4096];
	size_t n;
};

static inline void put(struct wbuf *w, const void *p, size_t n)
{
	ASSERT_TRUE(w->n + n <= sizeof(w->b), "wbuf room");
	if (n)		/* memcpy(.., NULL, 0) is still undefined */
		memcpy(w->b + w->n, p, n);
	w->n += n;
}

static inline void put8(struct wbuf *w, unsigned int v)
{
	__u8 b = (__u8)v;

	put(w, &b, 1);
}

static inline void put32(struct wbuf *w, __u32 v)
{
	for (int i = 3; i >= 0; i--)
		put8(w, v >> (8 * i));
}

static inline void putfill(struct wbuf *w, size_t n, __u8 byte)
{
	ASSERT_TRUE(w->n + n <= sizeof(w->b), "wbuf room");
	memset(w->b + w->n, byte, n);
	w->n += n;
}

/* v as a varint of size bytes (1, 2, 4 or 8), minimal or not. */
static inline void putvar(struct wbuf *w, __u64 v, int size)
{
	int prefix = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;

	ASSERT_TRUE(size == 1 << prefix, "varint size");
	ASSERT_TRUE(v < 1ULL << (8 * size - 2), "varint value fits");
	for (int i = size - 1; i >= 0; i--) {
		unsigned int b = (v >> (8 * i)) & 0xff;

		if (i == size - 1)
			b |= (unsigned int)prefix << 6;
		put8(w, b);
	}
}

/* A long header up to and with the SCID. */
static inline void put_long(struct wbuf *w, unsigned int first, __u32 version,
		     const __u8 *dcid, size_t dcid_len,
		     const __u8 *scid, size_t scid_len)
{
	put8(w, first);
	put32(w, version);
	put8(w, dcid_len);
	put(w, dcid, dcid_len);
	put8(w, scid_len);
	put(w, scid, scid_len);
}

/* A v1 Handshake packet from the server: SCID a3_scid, no DCID, payload
 * bytes of ciphertext. */
static inline void put_handshake(struct wbuf *w, size_t payload)
{
	put_long(w, 0xe0, QUIC_VERSION_1, NULL, 0, a3_scid, sizeof(a3_scid));
	putvar(w, payload, 2);
	putfill(w, payload, 0x5c);
}

/* Parses a heap copy of exactly n bytes: a read past the datagram is a
 * read past the allocation. */
static inline int parse_hint(const __u8 *src, size_t n, __u32 hint,
		      struct quic_dgram *d)
{
	__u8 *copy = calloc(1, n ? n : 1);
	int ret;

	ASSERT_TRUE(copy != NULL, "calloc");
	if (n)
		memcpy(copy, src, n);
	ret = quic_parse_datagram_hint(copy, (__u32)n, hint, d);
	free(copy);
	return ret;
}

static inline int parse(const __u8 *src, size_t n, struct quic_dgram *d)
{
	return parse_hint(src, n, QUIC_DCID_LEN_UNKNOWN, d);
}

static inline int zero_bytes(const void *p, size_t n)
{
	const __u8 *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* What must hold for any input, valid or not. */
static inline void check_invariants(const __u8 *buf, size_t n,
			     const struct quic_dgram *d, int ret,
			     const char *what)
{
	char label[160];
	__u32 at = 0;

	snprintf(label, sizeof(label), "%s: return is count", what);
	ASSERT_EQ(ret, d->count, label);
	snprintf(label, sizeof(label), "%s: count bound", what);
	ASSERT_TRUE(d->count <= QUIC_MAX_COALESCED, label);
	snprintf(label, sizeof(label), "%s: no packet means an error", what);
	ASSERT_TRUE(ret > 0 || d->error != QUIC_ERR_NONE, label);
	snprintf(label, sizeof(label), "%s: len", what);
	ASSERT_EQ(d->len, n, label);
	for (int i = 0; i < d->count; i++) {
		const struct quic_pkt *k = &d->pkt[i];
		__u32 end = k->offset + k->size;
		size_t copied;

		snprintf(label, sizeof(label), "%s: pkt %d offset", what, i);
		ASSERT_EQ(k->offset, at, label);
		snprintf(label, sizeof(label), "%s: pkt %d size", what, i);
		ASSERT_TRUE(k->size >= 1 && end <= n, label);
		snprintf(label, sizeof(label), "%s: pkt %d first byte", what, i);
		ASSERT_EQ(k->first_byte, buf[k->offset], label);
		snprintf(label, sizeof(label), "%s: pkt %d form", what, i);
		ASSERT_EQ(k->form, buf[k->offset] & QUIC_FORM_BIT ?
			  QUIC_FORM_LONG : QUIC_FORM_SHORT, label);
		snprintf(label, sizeof(label), "%s: pkt %d fixed bit", what, i);
		ASSERT_EQ(!!(k->flags & QUIC_PF_FIXED_BIT),
			  !!(buf[k->offset] & QUIC_FIXED_BIT), label);
		snprintf(label, sizeof(label), "%s: pkt %d dcid clipped", what, i);
		ASSERT_EQ(!!(k->flags & QUIC_PF_DCID_CLIPPED),
			  k->dcid_len > QUIC_MAX_CID_LEN, label);
		copied = k->dcid_len < QUIC_MAX_CID_LEN ? k->dcid_len : QUIC_MAX_CID_LEN;
		snprintf(label, sizeof(label), "%s: pkt %d dcid bytes", what, i);
		if (k->form == QUIC_FORM_LONG) {
			ASSERT_MEMEQ(k->dcid, buf + k->offset + 6, copied, label);
			ASSERT_TRUE(k->offset + 7 + k->dcid_len + k->scid_len <= end,
				    label);
			ASSERT_MEMEQ(k->scid, buf + k->offset + 7 + k->dcid_len,
				     k->scid_len < QUIC_MAX_CID_LEN ?
				     k->scid_len : QUIC_MAX_CID_LEN, label);
		} else if (!(k->flags & QUIC_PF_DCID_UNKNOWN)) {
			ASSERT_MEMEQ(k->dcid, buf + k->offset + 1, copied, label);
		}
		snprintf(label, sizeof(label), "%s: pkt %d dcid tail zero", what, i);
		ASSERT_TRUE(zero_bytes(k->dcid + copied, QUIC_MAX_CID_LEN - copied),
			    label);
		if (k->pn_offset) {
			snprintf(label, sizeof(label), "%s: pkt %d pn_offset", what, i);
			ASSERT_TRUE(k->pn_offset > k->offset &&
				    k->pn_offset + QUIC_HP_MIN_AFTER_PN <= end, label);
		}
		if (k->form == QUIC_FORM_LONG && k->type <= QUIC_PT_HANDSHAKE &&
		    k->type != QUIC_PT_RETRY) {
			snprintf(label, sizeof(label), "%s: pkt %d Length", what, i);
			ASSERT_EQ(k->pn_offset + k->length, end, label);
		}
		snprintf(label, sizeof(label), "%s: pkt %d token", what, i);
		ASSERT_TRUE(!k->token_len || k->token_offset + k->token_len <= end,
			    label);
		ASSERT_EQ(!!(k->flags & QUIC_PF_TOKEN), k->token_len > 0, label);
		snprintf(label, sizeof(label), "%s: pkt %d reserved", what, i);
		ASSERT_TRUE(zero_bytes(k->reserved, sizeof(k->reserved)), label);
		at = end;
	}
	snprintf(label, sizeof(label), "%s: parsed", what);
	ASSERT_EQ(d->parsed, at, label);
	if (d->error) {
		snprintf(label, sizeof(label), "%s: error_off", what);
		ASSERT_EQ(d->error_off, d->parsed, label);
	} else if (!(d->flags & QUIC_DF_MORE)) {
		snprintf(label, sizeof(label), "%s: all parsed", what);
		ASSERT_EQ(d->parsed, n, label);
	}
	snprintf(label, sizeof(label), "%s: vn listed", what);
	ASSERT_TRUE(d->vn_listed <= QUIC_VN_MAX_LISTED &&
		    d->vn_listed <= d->vn_count, label);
	snprintf(label, sizeof(label), "%s: reserved", what);
	ASSERT_EQ(d->reserved, 0, label);
}

/* What a server sends: Initial (RFC 9001 A.3), Handshake, and a 1-RTT
 * packet (A.5, whose DCID is the client's empty SCID) in one datagram. */
static inline size_t server_flight(__u8 *out, size_t max)
{
	struct wbuf w = { .n = 0 };
	__u8 tmp[256];
	size_t n;

	n = unhex(rfc9001_server_initial, tmp, sizeof(tmp));
	put(&w, tmp, n);
	put_handshake(&w, 64);
	n = unhex(rfc9001_short, tmp, sizeof(tmp));
	put(&w, tmp, n);
	ASSERT_TRUE(w.n <= max, "flight fits");
	memcpy(out, w.b, w.n);
	return w.n;
}

#define FLIGHT_HS_OFF	135
#define FLIGHT_HS_SIZE	(1 + 4 + 1 + 0 + 1 + 8 + 2 + 64)
#define FLIGHT_1RTT_OFF	(FLIGHT_HS_OFF + FLIGHT_HS_SIZE)
#define FLIGHT_LEN	(FLIGHT_1RTT_OFF + 21)

static inline size_t version_negotiation(__u8 *out, const __u32 *versions, int count)
{
	struct wbuf w = { .n = 0 };

	/* All of the first byte but the form bit is unused: random. */
	put_long(&w, 0x80 | 0x2d, QUIC_VERSION_NEG, a3_scid, 8, a2_dcid, 8);
	for (int i = 0; i < count; i++)
		put32(&w, versions[i]);
	memcpy(out, w.b, w.n);
	return w.n;
}


#endif
