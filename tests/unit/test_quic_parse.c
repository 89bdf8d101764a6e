/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* include/abi/quic_parse.h in user space: the RFC 9001 / RFC 9369 sample packets,
 * hand-built coalesced datagrams, and malformed input. Every parse reads
 * from a heap copy of exactly the datagram's size, so that valgrind and
 * -fsanitize=address see any read past its end. */
#include "quic_parse.h"

#include <stddef.h>
#include <stdint.h>

#include "unit.h"

/* RFC 9001 A.2: the client Initial, protected, all 1200 bytes. */
static const char rfc9001_client_initial[] =
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
static const char rfc9001_server_initial[] =
	"cf000000010008f067a5502a4262b5004075c0d95a482cd0991cd25b0aac406a"
	"5816b6394100f37a1c69797554780bb38cc5a99f5ede4cf73c3ec2493a1839b3"
	"dbcba3f6ea46c5b7684df3548e7ddeb9c3bf9c73cc3f3bded74b562bfb19fb84"
	"022f8ef4cdd93795d77d06edbb7aaf2f58891850abbdca3d20398c276456cbc4"
	"2158407dd074ee";

/* RFC 9001 A.4: Retry, token "token". */
static const char rfc9001_retry[] =
	"ff000000010008f067a5502a4262b5746f6b656e"
	"04a265ba2eff4d829058fb3f0f2496ba";

/* RFC 9001 A.5: a short header packet (ChaCha20), empty DCID, 21 bytes:
 * exactly the least that holds the header-protection sample. */
static const char rfc9001_short[] = "4cfe4189655e5cd55c41f69080575d7999c25a5bfb";

/* RFC 9369 A.4: the v2 Retry. */
static const char rfc9369_retry[] =
	"cf6b3343cf0008f067a5502a4262b5746f6b656e"
	"c8646ce8bfe33952d955543665dcc7b6";

/* RFC 9369 A.2: the first 32 bytes of the v2 client Initial (1200 bytes,
 * the rest of which only matters to a decryptor). */
static const char rfc9369_client_initial_head[] =
	"d76b3343cf088394c8f03e5157080000449ea0c95e82ffe67b6abcdb4298b485";

static const __u8 a2_dcid[] = { 0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08 };
static const __u8 a3_scid[] = { 0xf0, 0x67, 0xa5, 0x50, 0x2a, 0x42, 0x62, 0xb5 };

static size_t unhex(const char *hex, __u8 *out, size_t max)
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

static void put(struct wbuf *w, const void *p, size_t n)
{
	ASSERT_TRUE(w->n + n <= sizeof(w->b), "wbuf room");
	if (n)		/* memcpy(.., NULL, 0) is still undefined */
		memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void put8(struct wbuf *w, unsigned int v)
{
	__u8 b = (__u8)v;

	put(w, &b, 1);
}

static void put32(struct wbuf *w, __u32 v)
{
	for (int i = 3; i >= 0; i--)
		put8(w, v >> (8 * i));
}

static void putfill(struct wbuf *w, size_t n, __u8 byte)
{
	ASSERT_TRUE(w->n + n <= sizeof(w->b), "wbuf room");
	memset(w->b + w->n, byte, n);
	w->n += n;
}

/* v as a varint of size bytes (1, 2, 4 or 8), minimal or not. */
static void putvar(struct wbuf *w, __u64 v, int size)
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
static void put_long(struct wbuf *w, unsigned int first, __u32 version,
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
static void put_handshake(struct wbuf *w, size_t payload)
{
	put_long(w, 0xe0, QUIC_VERSION_1, NULL, 0, a3_scid, sizeof(a3_scid));
	putvar(w, payload, 2);
	putfill(w, payload, 0x5c);
}

/* Parses a heap copy of exactly n bytes: a read past the datagram is a
 * read past the allocation. */
static int parse_hint(const __u8 *src, size_t n, __u32 hint,
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

static int parse(const __u8 *src, size_t n, struct quic_dgram *d)
{
	return parse_hint(src, n, QUIC_DCID_LEN_UNKNOWN, d);
}

static int zero_bytes(const void *p, size_t n)
{
	const __u8 *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* What must hold for any input, valid or not. */
static void check_invariants(const __u8 *buf, size_t n,
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

/* What a server sends: Initial (RFC 9001 A.3), Handshake, and a 1-RTT
 * packet (A.5, whose DCID is the client's empty SCID) in one datagram. */
static size_t server_flight(__u8 *out, size_t max)
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

static size_t version_negotiation(__u8 *out, const __u32 *versions, int count)
{
	struct wbuf w = { .n = 0 };

	/* All of the first byte but the form bit is unused: random. */
	put_long(&w, 0x80 | 0x2d, QUIC_VERSION_NEG, a3_scid, 8, a2_dcid, 8);
	for (int i = 0; i < count; i++)
		put32(&w, versions[i]);
	memcpy(out, w.b, w.n);
	return w.n;
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
