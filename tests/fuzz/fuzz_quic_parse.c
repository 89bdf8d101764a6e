/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* libFuzzer target for include/abi/quic_parse.h, the parser the wire unit runs in
 * the kernel, compiled here for user space with ASan and UBSan. The input
 * is one datagram; its first byte picks the short-header DCID hint (0-20,
 * or unknown). Beyond "no bad read", the walk's own books must hold:
 * packets lie inside the datagram, end to end from offset 0, and a walk
 * without error reaches the end. tests/integration/66_quic_fuzz.sh runs
 * it for a bounded time from the recorded datagrams in tests/data/quic. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "quic_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct quic_dgram d;
	uint32_t hint, off = 0;
	uint8_t *copy;

	if (!size)
		return 0;
	hint = data[0] % 22;
	if (hint == 21)
		hint = QUIC_DCID_LEN_UNKNOWN;
	size--;
	/* Exactly the datagram's bytes: ASan sees a read one past the end. */
	copy = malloc(size ? size : 1);
	memcpy(copy, data + 1, size);
	quic_parse_datagram_hint(copy, size, hint, &d);
	if (d.count > QUIC_MAX_COALESCED || d.parsed > size || d.len != size)
		abort();
	for (int i = 0; i < d.count; i++) {
		const struct quic_pkt *p = &d.pkt[i];

		if (p->offset != off || p->size == 0 || p->offset + p->size > size)
			abort();
		if (p->dcid_len <= QUIC_MAX_CID_LEN && p->form == QUIC_FORM_LONG &&
		    p->offset + 6 + p->dcid_len > size)
			abort();
		off += p->size;
	}
	if (off != d.parsed)
		abort();
	if (!d.error && !(d.flags & QUIC_DF_MORE) && d.parsed != size && size)
		abort();
	if (d.vn_listed > QUIC_VN_MAX_LISTED || d.vn_listed > d.vn_count)
		abort();
	free(copy);
	return 0;
}
