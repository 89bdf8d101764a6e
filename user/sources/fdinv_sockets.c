/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Socket types and TCP states from the /proc/PID/net tables, for what the
 * callback and getxattr could not tell, and the count of every socket fd
 * once all are known. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdinv.h"
#include "fdinv_internal.h"
#include "hashmap.h"

static int header_column(const char *line, const char *name)
{
	size_t nlen = strlen(name);
	const char *p;

	for (int i = 0; (p = fdinv_field(line, i)); i++)
		if (!strncmp(p, name, nlen) &&
		    (p[nlen] == ' ' || p[nlen] == '\t' || p[nlen] == '\n' || !p[nlen]))
			return i;
	return -1;
}

/* The socket tables of the process's network namespace. tcp and udp rows
 * have "tx_queue rx_queue" as one field, so their header does not line up
 * with the data and the columns are fixed (unchanged since 2.6); unix and
 * netlink are read by their header. */
static const struct net_table {
	const char *name;
	int type;
	int family;		/* TCP: 4 or 6, to match want_state */
	int inode_col;		/* -1: the header's "Inode" column */
	int state_col;		/* hex TCP state, -1 none */
} net_tables[] = {
	{ "net/tcp", FDT_TCP, 4, 9, 3 },
	{ "net/tcp6", FDT_TCP, 6, 9, 3 },
	{ "net/udp", FDT_UDP, 0, 9, -1 },
	{ "net/udp6", FDT_UDP, 0, 9, -1 },
	{ "net/unix", FDT_UNIX, 0, -1, -1 },
	{ "net/netlink", FDT_NETLINK, 0, -1, -1 },
};

/* Sockets this table can still tell anything about. */
static size_t table_wanted(const struct scan *s, const struct net_table *t)
{
	return s->unresolved + (t->family == 4 ? s->want4 : t->family == 6 ? s->want6 : 0);
}

/* One row: the socket it names, if one of ours still needs it. */
static void table_row(struct scan *s, const struct net_table *t, const char *line,
		      int icol)
{
	const char *p = fdinv_field(line, icol);
	struct sock_val *v;
	unsigned long long ino;
	int state = 0;
	char *end;
	uint32_t key;

	if (!p)
		return;
	ino = strtoull(p, &end, 10);
	if (end == p || !ino || ino > UINT32_MAX)
		return;		/* TIME_WAIT and request socks: no inode */
	key = ino;
	v = hmap_get(&s->socks, &key);
	if (!v || (v->kind >= 0 && (!v->want_state || v->want_state != t->family)))
		return;
	if (t->state_col >= 0 && (p = fdinv_field(line, t->state_col)))
		state = strtol(p, NULL, 16);
	if (state < 0 || state >= FDINV_TCP_STATES)
		state = 0;
	if (v->kind < 0) {
		v->src = SRC_TABLE;
		s->unresolved--;
	} else if (t->family == 4) {
		s->want4--;
	} else {
		s->want6--;
	}
	v->kind = FDINV_SOCK(t->type, t->type == FDT_TCP ? state : 0);
	v->want_state = 0;
	v->in_table = 1;
}

/* Best effort: a table that is missing (no IPv6) or unreadable leaves its
 * sockets to the next step. Stops once nothing more is wanted from it. */
static void read_net_table(struct scan *s, const struct net_table *t)
{
	int fd, icol = t->inode_col;
	char *line = NULL;
	size_t cap = 0;
	bool head = true, whole = true;
	FILE *f;

	fd = openat(s->base, t->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	/* seq_file hands out one page per read(); a bigger buffer saves
	 * nothing there, but stdio's default may be smaller. */
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	s->inv->net_tables_read++;
	for (;;) {
		if (!table_wanted(s, t)) {
			whole = false;
			break;
		}
		if (getline(&line, &cap, f) <= 0)
			break;
		if (head) {
			head = false;
			if (icol < 0 && (icol = header_column(line, "Inode")) < 0) {
				whole = false;
				break;
			}
			continue;
		}
		table_row(s, t, line, icol);
	}
	if (whole && ferror(f))
		whole = false;
	if (whole && t->family == 4)
		s->read4 = true;
	if (whole && t->family == 6)
		s->read6 = true;
	free(line);
	fclose(f);
}

/* The callback and getxattr have had their say (add_socket): the tables
 * for what is left, the TCP states getxattr cannot give and everything
 * when it failed. Then count. */
void fdinv_resolve_sockets(struct scan *s)
{
	struct fd_inventory *inv = s->inv;
	void *vp;
	size_t it;

	if (!(s->flags & FDINV_NO_NET_TABLES))
		for (size_t i = 0; i < ARRAY_SIZE(net_tables); i++)
			if (table_wanted(s, &net_tables[i]))
				read_net_table(s, &net_tables[i]);

	for (it = 0; (s->want4 || s->want6) && hmap_next(&s->socks, &it, NULL, &vp); ) {
		struct sock_val *v = vp;

		/* A TCP socket in no table is in no hash: never connected,
		 * connect failed, or bound only. That is TCP_CLOSE. */
		if ((v->want_state == 4 && s->read4) || (v->want_state == 6 && s->read6))
			v->kind = FDINV_SOCK(FDT_TCP, CS_TCP_CLOSE);
	}

	for (size_t i = 0; i < s->nr_pend; i++) {
		struct sock_val *v = s->pend[i].ino ?
				     hmap_get(&s->socks, &s->pend[i].ino) : NULL;
		int kind = v && v->kind >= 0 ? v->kind : FDINV_SOCK(FDT_OTHER_SOCKET, 0);
		int type = FDINV_SOCK_TYPE(kind), state = FDINV_SOCK_STATE(kind);

		inv->by_type[type]++;
		if (type == FDT_TCP)
			inv->tcp_state[state]++;
		if (v && v->src == SRC_CALLBACK)
			inv->sock_by_callback++;
		if (v && v->src == SRC_XATTR)
			inv->sock_by_xattr++;
		if (v && v->in_table)
			inv->sock_by_table++;
		if (s->pend[i].rec != NO_REC) {
			struct fdinv_fd *r = &inv->fds[s->pend[i].rec];

			r->type = type;
			r->tcp_state = type == FDT_TCP ? state : 0;
			r->mptcp = type == FDT_TCP && v && v->mptcp;
		}
	}
}
