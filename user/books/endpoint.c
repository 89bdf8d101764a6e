// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Addresses and endpoints of the TCP books, as records and as text: used by
 * the books themselves, the reuse accounting and every renderer. */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "tcp_books.h"

void tuple_from_sd(struct cs_tuple *t, const struct sd_sock *s)
{
	memset(t, 0, sizeof(*t));
	t->family = s->family;
	t->netns = s->netns;
	t->sport = s->sport;
	t->dport = s->dport;
	memcpy(t->saddr, s->saddr, s->family == AF_INET6 ? 16 : 4);
	memcpy(t->daddr, s->daddr, s->family == AF_INET6 ? 16 : 4);
}

int tuple_format(char *buf, size_t len, const struct cs_tuple *t, bool remote)
{
	char ip[INET6_ADDRSTRLEN];
	const uint8_t *addr = remote ? t->daddr : t->saddr;
	uint16_t port = remote ? t->dport : t->sport;

	if (!inet_ntop(t->family == AF_INET6 ? AF_INET6 : AF_INET, addr, ip, sizeof(ip)))
		snprintf(ip, sizeof(ip), "?");
	if (t->family == AF_INET6)
		return snprintf(buf, len, "[%s]:%u", ip, port);
	return snprintf(buf, len, "%s:%u", ip, port);
}

int endpoint_format(char *buf, size_t len, const struct endpoint_key *k)
{
	struct cs_tuple t = { .family = k->family, .dport = k->port, .sport = k->port };

	if (k->side == EP_LISTEN)
		return snprintf(buf, len, "listen :%u", k->port);
	memcpy(t.daddr, k->addr, 16);
	return tuple_format(buf, len, &t, true);
}

