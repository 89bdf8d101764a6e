// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "hashmap.h"
#include "ports.h"
#include "tcp_state_names.h"

struct dest_key {
	uint8_t family, pad;
	uint16_t dport;
	uint8_t saddr[16], daddr[16];
};

/* A listener's (netns, family, port, address); the address all zeros for
 * a wildcard (0.0.0.0 or ::). */
struct listen_key {
	uint32_t netns;
	uint16_t port;
	uint8_t family, pad;
	uint8_t addr[16];
};

static struct listen_key listen_key_of(const struct sd_sock *s, bool wildcard)
{
	struct listen_key k;

	memset(&k, 0, sizeof(k));
	k.netns = s->netns;
	k.port = s->sport;
	k.family = s->family;
	if (!wildcard)
		memcpy(k.addr, s->saddr, 16);
	return k;
}

/* Whether a listener holds s's local port: one of s's namespace, bound to
 * s's address or to its family's wildcard (an accepted socket has its
 * listener's family: a dual-stack [::] listener's are AF_INET6). */
static bool held_by_listener(const struct hmap *listening, const struct sd_sock *s)
{
	struct listen_key k = listen_key_of(s, false);

	if (hmap_get(listening, &k))
		return true;
	k = listen_key_of(s, true);
	return hmap_get(listening, &k) != NULL;
}

static int by_use(const void *a, const void *b)
{
	const struct port_use *x = a, *y = b;
	uint32_t nx = x->time_wait + x->established + x->other;
	uint32_t ny = y->time_wait + y->established + y->other;

	if (nx != ny)
		return nx < ny ? 1 : -1;
	return memcmp(x->daddr, y->daddr, 16) ? memcmp(x->daddr, y->daddr, 16) : x->dport - y->dport;
}

size_t ports_usage(const struct sd_sock *socks, size_t n, uint32_t port_lo, uint32_t port_hi,
		   struct port_use *out, size_t max)
{
	uint32_t range = port_hi >= port_lo ? port_hi - port_lo + 1 : 0;
	/* A bit by each listener's port: a socket whose local port no
	 * listener has (a client's, every TIME_WAIT of a churn) is looked
	 * for in listening not at all, where each was two lookups. */
	uint8_t lports[65536 / 8];
	/* The destination of the last socket counted, and its entry: a
	 * census's sockets come mostly towards a few destinations (a
	 * churn's tens of thousands of TIME_WAIT towards one), each an
	 * upsert's hash and probe before. Valid until the next insert,
	 * which replaces it. (#23 item 6: ports_usage was 6-7% of the
	 * agent's CPU while a churn ran.) */
	struct dest_key last;
	struct port_use *all, *u, *last_u = NULL;
	struct hmap dests, listening;
	size_t k = 0;

	if (!range || !max)
		return 0;
	/* A listener's port, bound, is no connect()'s to pick: its accepted
	 * sockets (and their TIME_WAIT) hold no ephemeral port, even where
	 * the listener's port lies in the range (a server bound to port 0).
	 * Only its own namespace's and address's: the snapshot holds every
	 * namespace's sockets, and a client elsewhere may have that port. */
	hmap_init(&listening, sizeof(struct listen_key), 1);
	memset(lports, 0, sizeof(lports));
	for (size_t i = 0; i < n; i++)
		if (socks[i].state == CS_TCP_LISTEN) {
			struct listen_key k = listen_key_of(&socks[i], false);

			(void)hmap_upsert(&listening, &k, NULL);
			lports[socks[i].sport >> 3] |= (uint8_t)(1u << (socks[i].sport & 7));
		}
	hmap_init(&dests, sizeof(struct dest_key), sizeof(struct port_use));
	for (size_t i = 0; i < n; i++) {
		const struct sd_sock *s = &socks[i];
		struct dest_key key = { .family = s->family, .dport = s->dport };
		bool created = false;

		if (s->state == CS_TCP_LISTEN || !s->dport || s->sport < port_lo ||
		    s->sport > port_hi)
			continue;
		if ((lports[s->sport >> 3] & (1u << (s->sport & 7))) &&
		    held_by_listener(&listening, s))
			continue;
		memcpy(key.saddr, s->saddr, 16);
		memcpy(key.daddr, s->daddr, 16);
		if (last_u && !memcmp(&key, &last, sizeof(key))) {
			u = last_u;
		} else {
			u = hmap_upsert(&dests, &key, &created);
			if (!u)
				break;
			last = key;
			last_u = u;
		}
		if (created) {
			u->family = s->family;
			u->dport = s->dport;
			memcpy(u->saddr, s->saddr, 16);
			memcpy(u->daddr, s->daddr, 16);
		}
		/* A tw socket reports its substate; its timer says TIME_WAIT. */
		if (s->state == CS_TCP_TIME_WAIT || s->timer == 3)
			u->time_wait++;
		else if (s->state == CS_TCP_ESTABLISHED)
			u->established++;
		else
			u->other++;
	}
	all = calloc(dests.count ? dests.count : 1, sizeof(*all));
	if (all) {
		size_t m = 0;

		for (size_t i = 0; hmap_next(&dests, &i, NULL, (void **)&u);) {
			u->share = (double)(u->time_wait + u->established + u->other) / range;
			all[m++] = *u;
		}
		qsort(all, m, sizeof(*all), by_use);
		k = m < max ? m : max;
		memcpy(out, all, k * sizeof(*all));
		free(all);
	}
	hmap_free(&dests);
	hmap_free(&listening);
	return k;
}

int port_use_format(char *buf, size_t len, const struct port_use *u)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	int af = u->family == AF_INET6 ? AF_INET6 : AF_INET;

	inet_ntop(af, u->saddr, s, sizeof(s));
	inet_ntop(af, u->daddr, d, sizeof(d));
	if (af == AF_INET6)
		return snprintf(buf, len, "%s -> [%s]:%u", s, d, u->dport);
	return snprintf(buf, len, "%s -> %s:%u", s, d, u->dport);
}
