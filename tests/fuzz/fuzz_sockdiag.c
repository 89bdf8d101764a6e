// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target for user/sockdiag.c's reply parsers (the dump's and
 * the exact look's): one netlink
 * datagram as the kernel (or anything able to send to our port) could
 * send it. The input's first 4 bytes are the dump's sequence number, the
 * rest the datagram, copied to an aligned buffer of exactly its length
 * (as recvmsg fills the receive buffer). Beyond "no bad read": every
 * socket handed to the callback came from a whole message inside the
 * datagram, and an error is a negative errno. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sockdiag.h"

static size_t limit;

static int count(const struct sd_sock *s, void *ctx)
{
	size_t *n = ctx;

	/* Ports and family are copied fields: just touch them. */
	if (s->family == 0xff && s->sport == 0xffff)
		(*n)++;
	(*n)++;
	/* A callback that stops the dump: its value comes back. */
	return *n > limit ? 7 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t seq;
	size_t n = 0;
	bool done;
	void *buf;
	int err;

	if (size < 4)
		return 0;
	memcpy(&seq, data, 4);
	data += 4;
	size -= 4;
	limit = seq & 0x40 ? 2 : SIZE_MAX;
	buf = aligned_alloc(8, size ? (size + 7) & ~(size_t)7 : 8);
	memcpy(buf, data, size);
	err = sockdiag_parse_reply(buf, size, seq, count, &n, &done);
	/* The callback's value, a negative errno, or 0. */
	if (err > 0 && err != 7)
		abort();
	if (err < -4095)
		abort();
	/* Each socket is a whole inet_diag_msg after a header. */
	if (n > size / 16 + 1)
		abort();
	/* The exact look's replies to 8 requests from seq on: each answer
	 * taken once, found 1, 0 or a negative errno. */
	{
		struct sd_find f[8];
		size_t answered = 0;

		for (int i = 0; i < 8; i++)
			f[i].found = -EINPROGRESS;
		err = sockdiag_parse_found(buf, size, seq, f, 8, &answered);
		if (err && err != -EBADMSG)
			abort();
		if (answered > 8)
			abort();
		for (int i = 0; i < 8; i++)
			if (f[i].found > 1 || f[i].found < -4095)
				abort();
	}
	free(buf);
	return 0;
}
