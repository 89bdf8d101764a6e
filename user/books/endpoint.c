// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Addresses and endpoints of the TCP books, as records and as text: used by
 * the books themselves, the reuse accounting and every renderer. */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "endpoint.h"

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

static bool addr_any(const uint8_t *addr)
{
	for (int i = 0; i < 16; i++)
		if (addr[i])
			return false;
	return true;
}

int endpoint_listen_address(char *buf, size_t len, const struct endpoint_key *k)
{
	char ip[INET6_ADDRSTRLEN];

	if (addr_any(k->addr))
		return snprintf(buf, len, "%s", k->family == AF_INET6 ? "::" : "*");
	if (!inet_ntop(k->family == AF_INET6 ? AF_INET6 : AF_INET, k->addr, ip, sizeof(ip)))
		snprintf(ip, sizeof(ip), "?");
	return snprintf(buf, len, "%s", ip);
}

int endpoint_format(char *buf, size_t len, const struct endpoint_key *k)
{
	struct cs_tuple t = { .family = k->family, .dport = k->port, .sport = k->port };
	char ip[INET6_ADDRSTRLEN + 2];

	/* The listener's bound address: two listeners on one port (127.0.0.1
	 * and [::1], or an address and the wildcard) are told apart. */
	if (k->side == EP_LISTEN) {
		endpoint_listen_address(ip, sizeof(ip), k);
		if (k->family == AF_INET6)
			return snprintf(buf, len, "listen [%s]:%u", ip, k->port);
		return snprintf(buf, len, "listen %s:%u", ip, k->port);
	}
	memcpy(t.daddr, k->addr, 16);
	return tuple_format(buf, len, &t, true);
}

void endpoint_label_fit(char *label, int width)
{
	int n = (int)strlen(label), tail, head;
	const char *colon = strrchr(label, ':');

	if (n <= width || width < 3)
		return;
	/* The port and the bracket before it; the rest of the room to the
	 * label's start (its side and the address's first digits). */
	tail = colon ? n - (int)(colon - label) + (colon > label && colon[-1] == ']') : width / 2;
	if (tail > width - 2)
		tail = width / 2;
	head = width - 1 - tail;
	label[head] = '~';
	memmove(label + head + 1, label + n - tail, (size_t)tail + 1);
}

