// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* TCP states of socket inodes from sock_diag dumps (see fdstates.h). */
#include <errno.h>
#include <stdlib.h>
#include "fdstates.h"
#include "grow.h"
#include "netns.h"
#include "sockdiag.h"
#include "tcp_state_names.h"
#include "timeutil.h"

/* Sockets that hold no inode, so no fd: TIME_WAIT and request socks. The
 * kernel still walks them, but formats and sends nothing for them. */
#define FDST_MASK (SD_ALL_STATES & ~((1u << CS_TCP_TIME_WAIT) | (1u << CS_TCP_NEW_SYN_RECV)))

void fdstates_init(struct fd_tcp_states *st)
{
	*st = (struct fd_tcp_states){ 0 };
	hmap_init(&st->by_inode, sizeof(uint32_t), sizeof(uint8_t));
	hmap_init(&st->before, sizeof(uint32_t), sizeof(uint8_t));
}

void fdstates_free(struct fd_tcp_states *st)
{
	hmap_free(&st->by_inode);
	hmap_free(&st->before);
	free(st->ns);
	st->ns = NULL;
	st->nns = st->cap = 0;
}

void fdstates_reset(struct fd_tcp_states *st)
{
	struct hmap t = st->before;

	st->before = st->by_inode;
	st->by_inode = t;
	hmap_clear(&st->by_inode);
	st->nns = 0;
}

static int add_sock(struct fd_tcp_states *st, uint32_t inode, uint8_t state)
{
	uint8_t *v;

	if (!inode || !state || state >= CS_TCP_MAX_STATES)
		return 0;
	v = hmap_upsert(&st->by_inode, &inode, NULL);
	if (!v)
		return -ENOMEM;
	*v = state;
	return 0;
}

static int add_ns(struct fd_tcp_states *st, uint32_t netns, uint64_t dump_ns)
{
	if (grow_room((void **)&st->ns, &st->cap, st->nns, 1, sizeof(*st->ns), 4))
		return -ENOMEM;
	st->ns[st->nns++] = (struct fdst_ns){ .netns = netns, .dump_ns = dump_ns };
	return 0;
}

static const struct fdst_ns *find_ns(const struct fd_tcp_states *st, uint32_t netns)
{
	for (size_t i = 0; i < st->nns; i++)
		if (st->ns[i].netns == netns)
			return &st->ns[i];
	return NULL;
}

int fdstates_from_snapshot(struct fd_tcp_states *st, const struct tcp_snapshot *snap)
{
	int err;

	for (size_t i = 0; i < snap->n; i++) {
		err = add_sock(st, snap->socks[i].inode, snap->socks[i].state);
		if (err)
			return err;
	}
	for (size_t i = 0; i < snap->nns; i++) {
		if (!snap->ns[i].dumped || find_ns(st, snap->ns[i].netns))
			continue;
		err = add_ns(st, snap->ns[i].netns, snap->taken_ns);
		if (err)
			return err;
	}
	return 0;
}

static int collect(const struct sd_sock *s, void *ctx)
{
	return add_sock(ctx, s->inode, s->state);
}

uint64_t fdstates_cover(struct fd_tcp_states *st, pid_t pid)
{
	const struct fdst_ns *have;
	uint64_t t;
	uint32_t netns;
	int err;

	if (netns_of_pid(pid, &netns))
		return 0;
	have = find_ns(st, netns);
	if (have)
		return have->dump_ns;
	t = now_ns();
	st->dumps++;
	err = sockdiag_dump_tcp_of(pid, FDST_MASK, collect, st);
	if (err) {
		st->dumps_failed++;
		t = 0;	/* noted, so the namespace's other processes do not retry */
	}
	if (add_ns(st, netns, t))
		return 0;
	return t;
}

int fdstates_get(const struct fd_tcp_states *st, uint32_t inode)
{
	const uint8_t *v = hmap_get(&st->by_inode, &inode);

	return v ? *v : -1;
}

int fdstates_get_before(const struct fd_tcp_states *st, uint32_t inode)
{
	const uint8_t *v = hmap_get(&st->before, &inode);

	return v ? *v : -1;
}
