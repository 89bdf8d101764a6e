/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* QUIC wire image: what one UDP datagram shows in clear text.
 *
 * RFC 8999 fixes, for every QUIC version, the header form bit, the long
 * header's version and connection IDs, and the Version Negotiation packet.
 * RFC 9000 (v1) adds the rest of the long header: packet type, the Initial
 * token and the Length field, which is what finds the next packet of a
 * coalesced datagram (RFC 9000 12.2). Everything after Length is encrypted,
 * and so are the low bits of the first byte (header protection, RFC 9001
 * 5.4): packet number length, key phase and reserved bits are not ours to
 * see, which is why nothing here checks or reports them.
 *
 * The same code compiles for BPF (clang -target bpf) and user space (gcc, the
 * unit tests): no libc, no function pointers, loops with constant trip counts,
 * and no read outside [0, len). A single byte is read by quic_byte(), which
 * checks its index against len and against QUIC_BUF_SIZE; a field (CID,
 * varint, version) is checked against len as a whole, then read with
 * quic_byte_in(). The QUIC_BUF_SIZE bound is for the verifier: it proves
 * each read is inside the caller's buffer from a constant, whatever it
 * managed to learn about len.
 *
 * From BPF: p must point to a buffer of QUIC_BUF_SIZE bytes (a per-CPU map
 * value, say) and out into a map value or a ring buffer record: it does not
 * fit the 512-byte stack next to the parser's own spills, and QUIC_RELOAD()
 * counts on map memory. Bounded loops: kernel 5.3 or later. Verified as a
 * cgroup_skb program on 6.18 with clang 14: ~56k instructions processed
 * for the 4-packet walk, ~68k with a run-time DCID length hint.
 *
 * Being parseable is no proof of QUIC: any payload whose first bit is 0 is a
 * short header, and a long header of an unknown version is read by the
 * invariants alone. Callers pick the flows (ports, an earlier Initial). */
#ifndef CONNSCOPE_QUIC_PARSE_H
#define CONNSCOPE_QUIC_PARSE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>	/* user space; BPF gets the types from vmlinux.h */
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Size of the buffer the parser reads from; len is clamped to it. BPF
 * callers copy the payload into a fixed buffer (a per-CPU map value) and
 * must say how big it is, else the verifier would see reads it cannot bound;
 * the buffer is that big even when the datagram is shorter. A datagram cut
 * by the copy reads as one whose last Length runs past its end.
 * User space: the largest UDP payload fits. */
#ifndef QUIC_BUF_SIZE
#if defined(__bpf__) || defined(__BPF__)
#error "define QUIC_BUF_SIZE to the size of the buffer given to quic_parse_*()"
#else
#define QUIC_BUF_SIZE 65536
#endif
#endif
/* A power of two, so that an index can be kept inside the buffer with a
 * mask: see quic_byte_in(). */
#if QUIC_BUF_SIZE < 64 || (QUIC_BUF_SIZE & (QUIC_BUF_SIZE - 1))
#error "QUIC_BUF_SIZE must be a power of two"
#endif

#define QUIC_MAX_COALESCED	4	/* packets looked at per datagram */
#define QUIC_MAX_CID_LEN	20	/* v1 limit (RFC 9000 17.2); also what we copy */
#define QUIC_VN_MAX_LISTED	8	/* versions of a Version Negotiation copied out */
#define QUIC_DCID_LEN_UNKNOWN	0xff	/* dcid_len_hint: short header CID length not known */

/* Header-protection sample (RFC 9001 5.4.2): 16 bytes starting 4 bytes
 * after the packet number field starts. A packet without room for it cannot
 * be decrypted and MUST be discarded, so it is malformed in clear text. */
#define QUIC_HP_MIN_AFTER_PN	20
#define QUIC_RETRY_TAG_LEN	16	/* Retry Integrity Tag (RFC 9001 5.8) */
#define QUIC_MIN_INITIAL_DGRAM	1200	/* RFC 9000 14.1 */

#define QUIC_FORM_BIT		0x80
#define QUIC_FIXED_BIT		0x40

#define QUIC_VERSION_NEG	0x00000000u	/* Version Negotiation (RFC 8999 6) */
#define QUIC_VERSION_1		0x00000001u	/* RFC 9000 */
#define QUIC_VERSION_2		0x6b3343cfu	/* RFC 9369 */
#define QUIC_VERSION_DRAFT(n)	(0xff000000u | (n))

/* quic_pkt.form */
#define QUIC_FORM_SHORT		0
#define QUIC_FORM_LONG		1

/* quic_pkt.type: v1 numbering for the long header types, whatever the
 * version spells them as on the wire (v2 permutes them, RFC 9369 3.2). */
#define QUIC_PT_INITIAL		0
#define QUIC_PT_0RTT		1
#define QUIC_PT_HANDSHAKE	2
#define QUIC_PT_RETRY		3
#define QUIC_PT_VERSION_NEG	4	/* long header, version 0 */
#define QUIC_PT_1RTT		5	/* short header */
#define QUIC_PT_UNKNOWN		6	/* long header of a version we cannot read past the CIDs */

/* quic_pkt.flags */
#define QUIC_PF_FIXED_BIT	0x01	/* 0x40 was set; clear is legal: RFC 9287 greasing, VN */
#define QUIC_PF_TOKEN		0x02	/* Initial or Retry with a non-empty token */
#define QUIC_PF_DCID_CLIPPED	0x04	/* dcid_len > 20 (unknown version, VN): first 20 copied */
#define QUIC_PF_SCID_CLIPPED	0x08
#define QUIC_PF_DCID_UNKNOWN	0x10	/* short header without a hint: no DCID, no pn_offset */

/* quic_dgram.flags */
#define QUIC_DF_MORE		0x01	/* more than QUIC_MAX_COALESCED packets: not all walked */
#define QUIC_DF_SMALL_INITIAL	0x02	/* an Initial in a datagram under 1200 bytes: a server
					 * drops it from a client (RFC 9000 14.1) */

/* quic_dgram.error: why the walk stopped before the end of the datagram. */
#define QUIC_ERR_NONE		0
#define QUIC_ERR_TRUNCATED	1	/* empty, or a header field (or Retry tag) runs past the end */
#define QUIC_ERR_VARINT		2	/* a variable-length integer runs past the end */
#define QUIC_ERR_CID_TOO_LONG	3	/* v1/v2 connection ID over 20 bytes (RFC 9000 17.2) */
#define QUIC_ERR_TOKEN_LEN	4	/* Initial Token Length beyond the datagram */
#define QUIC_ERR_LENGTH		5	/* Length field beyond the datagram */
#define QUIC_ERR_TOO_SHORT	6	/* no room for the header-protection sample */
#define QUIC_ERR_VN_LEN		7	/* Version Negotiation list not whole 32-bit versions */
#define QUIC_ERR_FORM		8	/* quic_parse_short() on a long header */

/* One packet. Offsets count from the start of the datagram. Fixed layout:
 * it is copied into ring buffer events as is. */
struct quic_pkt {
	__u32 version;		/* long header, host order; 0 for a short header */
	__u32 offset;		/* first byte of this packet */
	__u32 size;		/* bytes it covers: up to the next packet, or the end */
	__u32 length;		/* Length field: packet number + payload (Initial, 0-RTT, Handshake) */
	__u32 pn_offset;	/* packet number field; 0 where there is none or it is unknown */
	__u32 token_offset;	/* Initial: the token; Retry: the Retry Token */
	__u32 token_len;	/* Initial: Token Length; Retry: bytes before the integrity tag */
	__u8 form;		/* QUIC_FORM_* */
	__u8 type;		/* QUIC_PT_* */
	__u8 first_byte;	/* as on the wire; its low bits are header-protected */
	__u8 flags;		/* QUIC_PF_* */
	__u8 dcid_len;		/* as on the wire (short header: the hint); dcid[] holds up to 20 */
	__u8 scid_len;		/* long header */
	__u8 dcid[QUIC_MAX_CID_LEN];
	__u8 scid[QUIC_MAX_CID_LEN];
	__u8 reserved[6];	/* zero: room for fields without a layout change */
};

/* One datagram. count packets parsed; when error is set, pkt[count] (if
 * count < QUIC_MAX_COALESCED) holds what was read of the one that failed. */
struct quic_dgram {
	__u32 len;		/* datagram length as given (clamped to QUIC_BUF_SIZE) */
	__u32 parsed;		/* bytes covered by pkt[0..count) */
	__u32 error_off;	/* error: offset of the packet that failed */
	__u8 count;		/* packets in pkt[] */
	__u8 error;		/* QUIC_ERR_*; 0: the walk reached the end (or QUIC_DF_MORE) */
	__u8 flags;		/* QUIC_DF_* */
	__u8 vn_listed;		/* versions copied to vn_versions[] */
	__u32 vn_count;		/* Version Negotiation: versions it lists */
	__u32 reserved;		/* zero */
	__u32 vn_versions[QUIC_VN_MAX_LISTED];	/* the first of them, host order */
	struct quic_pkt pkt[QUIC_MAX_COALESCED];
};

_Static_assert(sizeof(struct quic_pkt) == 80, "quic_pkt is an event layout");
_Static_assert(sizeof(struct quic_dgram) == 56 + 80 * QUIC_MAX_COALESCED,
	       "quic_dgram is an event layout");

/* Makes the compiler forget what it knows about v (no code is emitted),
 * like libbpf's barrier_var(). */
#define QUIC_OPAQUE(v) __asm__ __volatile__("" : "+r"(v))

/* x as read back from memory. For the verifier a load from a map value is
 * a fresh unknown, so the paths that stored different values into x stop
 * being different states from there on: without it every way through one
 * packet is a state for the next, and the cost of the walk grows by a
 * factor per packet instead of a term. */
#define QUIC_RELOAD(x) (*(volatile __typeof__(x) *)&(x))

/* p[off], or -1 past the end of the datagram or of the buffer.
 *
 * The verifier only accepts the load if the register it adds to p is the
 * one it saw compared with QUIC_BUF_SIZE. Left alone, clang zero-extends off
 * once for the test and again for the load (no alu32 at the default -mcpu),
 * or folds p + off out of a loop and loads (p + off)[i]. So: one 64-bit
 * index, fixed before the test, and opaque after it so that the load cannot
 * be rewritten in terms of anything else. */
static __always_inline int quic_byte(const __u8 *p, __u32 len, __u32 off)
{
	__u64 i = off;

	QUIC_OPAQUE(i);
	if (i >= len || i >= QUIC_BUF_SIZE)
		return -1;
	QUIC_OPAQUE(i);
	return p[i];
}

/* Loops and the verifier.
 *
 * A loop like "for (i = 0; i < 20 && i < n; i++) check and copy p[off + i]"
 * leaves the verifier one state per exit, each knowing another exact n, and
 * n goes on into off: 21 states per CID, 441 per header, and that to the
 * power of the coalesced packets is past its 1M instruction budget. So the
 * loops over a field do not branch: the whole field is checked against len
 * once, then each byte is read through quic_byte_in(), and the bytes past
 * the field's end are multiplied by 0 (quic_lt_bit()) instead of skipped.
 * Not masked with 0 or ~0: recent verifiers fork the state on an AND with
 * a register in [-1, 0], which is the very split we avoid. Single reads stay
 * with quic_byte(): their failing branch just returns. */

/* 1 if a < b, else 0; a and b below 2^63. A subtraction and a shift: the
 * opaque steps keep clang from turning it back into a compare and branch,
 * or its products into selects. */
static __always_inline __u64 quic_lt_bit(__u64 a, __u64 b)
{
	__u64 d = a - b;

	QUIC_OPAQUE(d);
	d >>= 63;
	QUIC_OPAQUE(d);
	return d;
}

/* p[at] where the caller has checked at < len: the mask is a no-op then
 * (len <= QUIC_BUF_SIZE) and tells the verifier the read is in the buffer.
 * Opaque first, so that clang cannot drop the mask as redundant. */
static __always_inline __u8 quic_byte_in(const __u8 *p, __u64 at)
{
	QUIC_OPAQUE(at);
	return p[at & (QUIC_BUF_SIZE - 1)];
}

/* The 32-bit big-endian value at off. */
static __always_inline int quic_be32(const __u8 *p, __u32 len, __u32 off,
				     __u32 *val)
{
	__u64 at = off;
	__u32 v = 0, i;

	if (at > len || len - at < 4)
		return -1;
	for (i = 0; i < 4; i++)
		v = v << 8 | quic_byte_in(p, at + i);
	*val = v;
	return 0;
}

/* RFC 9000 16: the two high bits of the first byte give the length (1, 2,
 * 4 or 8 bytes), the rest is the value, big-endian. Any encoding is valid,
 * minimal or not, so the only way to be bad is to run past the end.
 * Advances *off past it. */
static __always_inline int quic_varint(const __u8 *p, __u32 len, __u32 *off,
				       __u64 *val)
{
	__u64 at = *off, n, v, in, j;
	int c;

	c = quic_byte(p, len, *off);
	if (c < 0)
		return QUIC_ERR_VARINT;
	n = 1ULL << ((__u32)c >> 6);
	if (n > len - at)
		return QUIC_ERR_VARINT;
	v = (__u32)c & 0x3f;
	/* Past the end of a short varint: shift by 0 and or in 0, having
	 * read its first byte again (in the datagram) instead of what
	 * follows (maybe not). */
	for (j = 1; j < 8; j++) {
		in = quic_lt_bit(j, n);
		v = v << (8 * in) | (__u64)quic_byte_in(p, at + j * in) * in;
	}
	*off = (__u32)(at + n);
	*val = v;
	return QUIC_ERR_NONE;
}

/* RFC 9369 4: the one test for 0x?a?a?a?a, the versions reserved to make
 * peers exercise version negotiation (RFC 9000 15). */
static __always_inline int quic_version_is_grease(__u32 v)
{
	return (v & 0x0f0f0f0fu) == 0x0a0a0a0au;
}

/* Versions whose long header we can read past the connection IDs: v1, v2
 * (same layout, other type codes) and the drafts 27 to 34 that were
 * deployed, which share v1's layout and type codes. */
static __always_inline int quic_version_v1_layout(__u32 v)
{
	return v == QUIC_VERSION_1 || v == QUIC_VERSION_2 ||
	       (v >= QUIC_VERSION_DRAFT(27) && v <= QUIC_VERSION_DRAFT(34));
}

/* The connection ID of n bytes at off, right after its length byte: all of
 * it must be in the datagram, up to QUIC_MAX_CID_LEN of it is copied to dst
 * (the rest of dst is zeroed). */
static __always_inline int quic_copy_cid(const __u8 *p, __u32 len, __u32 off,
					 __u32 n, __u8 *dst)
{
	__u64 at = off, in, i;

	if (!at || at > len || n > len - at)
		return QUIC_ERR_TRUNCATED;
	/* Past the CID, read its length byte at off - 1 (in the datagram)
	 * again and store 0. */
	for (i = 0; i < QUIC_MAX_CID_LEN; i++) {
		in = quic_lt_bit(i, n);
		dst[i] = (__u8)(quic_byte_in(p, at - 1 + (i + 1) * in) * in);
	}
	return QUIC_ERR_NONE;
}

/* The long header packet at off (its first byte has QUIC_FORM_BIT). pkt is
 * zeroed by the caller. Returns QUIC_ERR_*. */
static __always_inline int quic_parse_long(const __u8 *p, __u32 len, __u32 off,
					   struct quic_pkt *pkt)
{
	__u32 start = off, maxcid, n, rest;
	__u64 v;
	int c, err;

	if (len > QUIC_BUF_SIZE)
		len = QUIC_BUF_SIZE;
	c = quic_byte(p, len, off);
	if (c < 0)
		return QUIC_ERR_TRUNCATED;
	pkt->form = QUIC_FORM_LONG;
	pkt->offset = off;
	pkt->first_byte = (__u8)c;
	if (c & QUIC_FIXED_BIT)
		pkt->flags |= QUIC_PF_FIXED_BIT;
	if (quic_be32(p, len, off + 1, &pkt->version))
		return QUIC_ERR_TRUNCATED;
	off += 5;

	/* RFC 8999 allows 255-byte CIDs; only versions we know cap them. A
	 * server must still read long ones to send Version Negotiation, and
	 * that echoes them back. */
	maxcid = quic_version_v1_layout(pkt->version) ? QUIC_MAX_CID_LEN : 255;
	c = quic_byte(p, len, off);
	if (c < 0)
		return QUIC_ERR_TRUNCATED;
	n = (__u32)c;
	pkt->dcid_len = (__u8)n;
	if (n > maxcid)
		return QUIC_ERR_CID_TOO_LONG;
	if (n > QUIC_MAX_CID_LEN)
		pkt->flags |= QUIC_PF_DCID_CLIPPED;
	off++;
	err = quic_copy_cid(p, len, off, n, pkt->dcid);
	if (err)
		return err;
	off += n;

	c = quic_byte(p, len, off);
	if (c < 0)
		return QUIC_ERR_TRUNCATED;
	n = (__u32)c;
	pkt->scid_len = (__u8)n;
	if (n > maxcid)
		return QUIC_ERR_CID_TOO_LONG;
	if (n > QUIC_MAX_CID_LEN)
		pkt->flags |= QUIC_PF_SCID_CLIPPED;
	off++;
	err = quic_copy_cid(p, len, off, n, pkt->scid);
	if (err)
		return err;
	off += n;

	/* No Length from here on: the packet takes the rest of the datagram. */
	rest = len - off;
	pkt->size = len - start;
	if (pkt->version == QUIC_VERSION_NEG) {
		pkt->type = QUIC_PT_VERSION_NEG;
		return rest % 4 ? QUIC_ERR_VN_LEN : QUIC_ERR_NONE;
	}
	if (!quic_version_v1_layout(pkt->version)) {
		pkt->type = QUIC_PT_UNKNOWN;
		return QUIC_ERR_NONE;
	}

	/* v2 is v1 with the type codes rotated by one: Retry 0, Initial 1,
	 * 0-RTT 2, Handshake 3. */
	n = ((__u32)pkt->first_byte >> 4) & 3;
	if (pkt->version == QUIC_VERSION_2)
		n = (n + 3) & 3;
	pkt->type = (__u8)n;

	if (n == QUIC_PT_RETRY) {
		if (rest < QUIC_RETRY_TAG_LEN)
			return QUIC_ERR_TRUNCATED;
		pkt->token_offset = off;
		pkt->token_len = rest - QUIC_RETRY_TAG_LEN;
		if (pkt->token_len)
			pkt->flags |= QUIC_PF_TOKEN;
		return QUIC_ERR_NONE;
	}

	if (n == QUIC_PT_INITIAL) {
		err = quic_varint(p, len, &off, &v);
		if (err)
			return err;
		if (off > len || v > len - off)
			return QUIC_ERR_TOKEN_LEN;
		pkt->token_offset = off;
		pkt->token_len = (__u32)v;
		if (v)
			pkt->flags |= QUIC_PF_TOKEN;
		off += (__u32)v;
	}

	err = quic_varint(p, len, &off, &v);
	if (err)
		return err;
	if (off > len || v > len - off)
		return QUIC_ERR_LENGTH;
	pkt->length = (__u32)v;
	pkt->pn_offset = off;
	pkt->size = off + (__u32)v - start;
	if (v < QUIC_HP_MIN_AFTER_PN)
		return QUIC_ERR_TOO_SHORT;
	return QUIC_ERR_NONE;
}

/* The short header (1-RTT) packet at off, which runs to the end of the
 * datagram. Its DCID length is not on the wire: the receiver knows it
 * because it chose the CID, and an observer learns it from the SCID of the
 * peer's long headers. dcid_len_hint is that length, or
 * QUIC_DCID_LEN_UNKNOWN (any value over 20). pkt is zeroed by the caller.
 * Returns QUIC_ERR_*. */
static __always_inline int quic_parse_short(const __u8 *p, __u32 len, __u32 off,
					    __u32 dcid_len_hint,
					    struct quic_pkt *pkt)
{
	__u32 n = 0;
	int c, err;

	if (len > QUIC_BUF_SIZE)
		len = QUIC_BUF_SIZE;
	c = quic_byte(p, len, off);
	if (c < 0)
		return QUIC_ERR_TRUNCATED;
	if (c & QUIC_FORM_BIT)
		return QUIC_ERR_FORM;
	pkt->form = QUIC_FORM_SHORT;
	pkt->type = QUIC_PT_1RTT;
	pkt->offset = off;
	pkt->first_byte = (__u8)c;
	pkt->size = len - off;
	if (c & QUIC_FIXED_BIT)
		pkt->flags |= QUIC_PF_FIXED_BIT;
	if (dcid_len_hint > QUIC_MAX_CID_LEN) {
		pkt->flags |= QUIC_PF_DCID_UNKNOWN;
	} else {
		n = dcid_len_hint;
		pkt->dcid_len = (__u8)n;
		err = quic_copy_cid(p, len, off + 1, n, pkt->dcid);
		if (err)
			return err;
		pkt->pn_offset = off + 1 + n;
	}
	/* Without the hint, n = 0 makes this the least any packet needs. */
	if (len - off < 1 + n + QUIC_HP_MIN_AFTER_PN)
		return QUIC_ERR_TOO_SHORT;
	return QUIC_ERR_NONE;
}

/* Walks the coalesced packets of one UDP datagram (RFC 9000 12.2): long
 * headers with a Length lead to the next packet; a short header, a Retry, a
 * Version Negotiation or an unknown version take the rest. A short header
 * met on the way gets dcid_len_hint (see quic_parse_short()).
 *
 * Returns the number of packets parsed (out->count). 0: not QUIC, or
 * malformed, out->error says why. More than 0 with out->error set: the first
 * packets were fine, the bytes from out->error_off on were not. */
static __always_inline int quic_parse_datagram_hint(const __u8 *p, __u32 len,
						    __u32 dcid_len_hint,
						    struct quic_dgram *out)
{
	struct quic_pkt *pkt;
	__u32 off = 0, i, n;
	int c, err = QUIC_ERR_NONE;

	__builtin_memset(out, 0, sizeof(*out));
	if (len > QUIC_BUF_SIZE)
		len = QUIC_BUF_SIZE;
	out->len = len;
	if (!len)
		err = QUIC_ERR_TRUNCATED;

	for (i = 0; i < QUIC_MAX_COALESCED && !err && off < len; i++) {
		pkt = &out->pkt[i];
		c = quic_byte(p, len, off);
		if (c < 0)
			err = QUIC_ERR_TRUNCATED;
		else if (c & QUIC_FORM_BIT)
			err = quic_parse_long(p, len, off, pkt);
		else
			err = quic_parse_short(p, len, off, dcid_len_hint, pkt);
		if (err) {
			out->error_off = off;
			break;
		}
		if (pkt->type == QUIC_PT_INITIAL && len < QUIC_MIN_INITIAL_DGRAM)
			out->flags |= QUIC_DF_SMALL_INITIAL;
		out->count = (__u8)(i + 1);
		/* Each way through a packet leaves off with other bounds;
		 * read back from memory, it is one state for the next. */
		off += QUIC_RELOAD(pkt->size);
	}
	if (!err && off < len)
		out->flags |= QUIC_DF_MORE;
	out->error = (__u8)err;
	out->parsed = off;

	/* Version Negotiation has no Length, so it can only be the last
	 * packet: its versions are listed here, once, not in the walk. */
	n = out->count;
	if (!err && n >= 1 && n <= QUIC_MAX_COALESCED) {
		pkt = &out->pkt[n - 1];
		if (pkt->type == QUIC_PT_VERSION_NEG) {
			__u32 at = pkt->offset + 7 + pkt->dcid_len + pkt->scid_len;

			out->vn_count = (len - at) / 4;
			for (i = 0; i < QUIC_VN_MAX_LISTED && i < out->vn_count; i++) {
				if (quic_be32(p, len, at + 4 * i, &out->vn_versions[i]))
					break;
				out->vn_listed = (__u8)(i + 1);
			}
		}
	}
	return out->count;
}

/* Walks one datagram with no short header CID length known. */
static __always_inline int quic_parse_datagram(const __u8 *p, __u32 len,
					       struct quic_dgram *out)
{
	return quic_parse_datagram_hint(p, len, QUIC_DCID_LEN_UNKNOWN, out);
}

#if !defined(__bpf__) && !defined(__BPF__)
/* A name for a version number, for reports. */
static inline const char *quic_version_name(__u32 v)
{
#define QUIC_DRAFT_NAME(n) "draft-" #n
	static const char *const drafts[] = {
		QUIC_DRAFT_NAME(00), QUIC_DRAFT_NAME(01), QUIC_DRAFT_NAME(02),
		QUIC_DRAFT_NAME(03), QUIC_DRAFT_NAME(04), QUIC_DRAFT_NAME(05),
		QUIC_DRAFT_NAME(06), QUIC_DRAFT_NAME(07), QUIC_DRAFT_NAME(08),
		QUIC_DRAFT_NAME(09), QUIC_DRAFT_NAME(10), QUIC_DRAFT_NAME(11),
		QUIC_DRAFT_NAME(12), QUIC_DRAFT_NAME(13), QUIC_DRAFT_NAME(14),
		QUIC_DRAFT_NAME(15), QUIC_DRAFT_NAME(16), QUIC_DRAFT_NAME(17),
		QUIC_DRAFT_NAME(18), QUIC_DRAFT_NAME(19), QUIC_DRAFT_NAME(20),
		QUIC_DRAFT_NAME(21), QUIC_DRAFT_NAME(22), QUIC_DRAFT_NAME(23),
		QUIC_DRAFT_NAME(24), QUIC_DRAFT_NAME(25), QUIC_DRAFT_NAME(26),
		QUIC_DRAFT_NAME(27), QUIC_DRAFT_NAME(28), QUIC_DRAFT_NAME(29),
		QUIC_DRAFT_NAME(30), QUIC_DRAFT_NAME(31), QUIC_DRAFT_NAME(32),
		QUIC_DRAFT_NAME(33), QUIC_DRAFT_NAME(34),
	};
#undef QUIC_DRAFT_NAME
	__u32 hi = v >> 24;

	if (v == QUIC_VERSION_NEG)
		return "negotiation";
	if (v == QUIC_VERSION_1)
		return "v1";
	if (v == QUIC_VERSION_2)
		return "v2";
	if ((v & 0xffffff00u) == QUIC_VERSION_DRAFT(0))
		return (v & 0xff) < sizeof(drafts) / sizeof(drafts[0]) ?
		       drafts[v & 0xff] : "draft";
	if (quic_version_is_grease(v))
		return "grease";
	/* Google QUIC spells its versions in ASCII, "Q050", "T051": those
	 * with IETF-style long headers show up on the same ports. */
	if ((hi == 'Q' || hi == 'T') &&
	    ((v >> 16) & 0xff) - '0' < 10 && ((v >> 8) & 0xff) - '0' < 10 &&
	    (v & 0xff) - '0' < 10)
		return "gquic";
	return "unknown";
}
#endif

#endif
