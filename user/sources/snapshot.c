// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "census_check.h"
#include "grow.h"
#include "netns.h"
#include "snapshot.h"
#include "timeutil.h"

static void drain(struct tcp_snapshot *s)
{
	if (s->drain) {
		s->drain(s->drain_ctx);
		s->drains++;
	}
}

struct collect_ctx {
	struct tcp_snapshot *s;
	uint32_t netns;
};

static int collect(const struct sd_sock *sk, void *ctx)
{
	struct collect_ctx *c = ctx;
	struct tcp_snapshot *s = c->s;

	if (grow_room((void **)&s->socks, &s->cap, s->n, 1, sizeof(*s->socks), 1024))
		return -ENOMEM;
	s->socks[s->n] = *sk;
	s->socks[s->n++].netns = c->netns;
	if (s->n % SNAPSHOT_DRAIN_EVERY == 0)
		drain(s);
	return 0;
}

const struct snap_ns *snapshot_ns(const struct tcp_snapshot *s, uint32_t netns)
{
	for (size_t i = 0; i < s->nns; i++)
		if (s->ns[i].netns == netns)
			return &s->ns[i];
	return NULL;
}

static bool all_digits(const char *p)
{
	if (!*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* --all traces every process, so every network namespace a process of
 * this /proc is in is read, each through its first process found (a pod's
 * sockets, TIME_WAIT and sockstat are visible only from inside it); ours
 * stays first. */
static int add_every_namespace(struct tcp_snapshot *s)
{
	size_t cap = s->nns;
	struct dirent *de;
	DIR *d;

	d = opendir(procfs_root);
	if (!d)
		return 0;	/* ours alone, as before */
	while ((de = readdir(d))) {
		uint32_t ino;
		long pid;

		if (!all_digits(de->d_name))
			continue;
		pid = strtol(de->d_name, NULL, 10);
		if (pid <= 0 || pid > INT_MAX || netns_of_pid((pid_t)pid, &ino) ||
		    snapshot_ns(s, ino))
			continue;
		if (s->nns == cap) {
			struct snap_ns *ns = realloc(s->ns, (cap * 2 + 8) * sizeof(*ns));

			if (!ns) {
				closedir(d);
				return -ENOMEM;
			}
			s->ns = ns;
			cap = cap * 2 + 8;
		}
		memset(&s->ns[s->nns], 0, sizeof(s->ns[0]));
		s->ns[s->nns].netns = ino;
		s->ns[s->nns++].pid = (pid_t)pid;
	}
	closedir(d);
	return 0;
}

/* The namespaces to read: the pids' (in order, each once), or ours. A pid
 * gone meanwhile has no namespace and no sockets. */
static int find_namespaces(struct tcp_snapshot *s, const pid_t *pids, size_t npids, bool every)
{
	struct snap_ns *ns = realloc(s->ns, (npids ? npids : 1) * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	s->ns = ns;
	s->nns = 0;
	if (!pids || !npids) {
		memset(&ns[0], 0, sizeof(ns[0]));
		ns[0].netns = netns_self();
		s->nns = 1;
		return every ? add_every_namespace(s) : 0;
	}
	for (size_t i = 0; i < npids; i++) {
		uint32_t ino;

		if (netns_of_pid(pids[i], &ino) || snapshot_ns(s, ino))
			continue;
		memset(&ns[s->nns], 0, sizeof(ns[0]));
		ns[s->nns].netns = ino;
		ns[s->nns++].pid = pids[i];
	}
	return 0;
}

/* One namespace's sockets: the census walk where it stands in, else the
 * dump. A walk that failed part way is dropped whole and dumped. */
static int ns_sockets(struct tcp_snapshot *s, struct snap_ns *ns, struct collect_ctx *c)
{
	uint64_t began = now_ns();
	size_t had = s->n;
	int err = -EAGAIN;

	ns->walked = false;
	if (s->walk)
		err = s->walk(s->walk_ctx, ns->pid, collect, c);
	if (!err) {
		ns->walked = true;
		s->reads_walked++;
		if (s->walk_check)
			census_check(ns->pid, ns->netns, s->socks + had, s->n - had, began);
		return 0;
	}
	s->n = had;
	err = sockdiag_dump_tcp_of(ns->pid, SD_ALL_STATES, collect, c);
	if (!err)
		s->reads_dumped++;
	return err;
}

static int read_limits(void *ctx)
{
	return netlimits_read(ctx);
}

static int take(struct tcp_snapshot *s, const pid_t *pids, size_t npids, bool all_fds, bool every)
{
	uint64_t prev = s->taken_ns;
	int err;

	s->n = 0;
	s->taken_ns = now_ns();
	inode_map_free(&s->owners);
	inode_map_init(&s->owners);
	err = find_namespaces(s, pids, npids, every);
	if (err)
		return err;
	memset(&s->st, 0, sizeof(s->st));
	s->refused = 0;
	for (size_t i = 0; i < s->nns; i++) {
		struct snap_ns *ns = &s->ns[i];
		struct collect_ctx c = { .s = s, .netns = ns->netns };

		/* sockstat first: our own netlink socket would count in
		 * "sockets: used". /proc/PID/net is PID's namespace. */
		err = procfs_read_sockstat_of(ns->pid, &ns->st);
		if (err == -ENOENT && ns->pid)
			continue;	/* gone since: nothing of it to read */
		if (err) {
			fprintf(stderr, "connscope: cannot read %s/%s/net/sockstat: %s\n",
				procfs_root, ns->pid ? "PID" : "self", strerror(-err));
			return err;
		}
		/* The sysctls of /proc/sys/net are the reader's namespace's:
		 * read from inside it. Once: they are settings, not counters. */
		if (i == 0 && !s->lim.port_hi) {
			netns_run(ns->pid, read_limits, &s->lim);
			/* A container's namespace has no tcp_max_orphans: the
			 * host's, from ours (the agent on the host). */
			if (s->lim.max_orphans_unread)
				netlimits_read_orphans(&s->lim);
		}
		err = ns_sockets(s, ns, &c);
		if (err == -ENOENT && ns->pid)
			continue;
		/* --all, another namespace, no CAP_SYS_ADMIN to enter it:
		 * counted and left out of the list (no birth pass, no dump
		 * judges its sockets), as a namespace not read at all. */
		if (every && i && (err == -EPERM || err == -EACCES)) {
			s->refused++;
			memmove(ns, ns + 1, (s->nns - i - 1) * sizeof(*ns));
			s->nns--;
			i--;
			continue;
		}
		if (err) {
			fprintf(stderr, "connscope: sock_diag dump of TCP sockets failed: %s\n",
				strerror(-err));
			return err;
		}
		ns->dumped = true;
	}
	if (s->nns)
		s->st = s->ns[0].st;
	drain(s);
	if (all_fds) {
		err = procfs_scan_all_sockets(&s->owners);
		drain(s);
		return err;
	}
	for (size_t i = 0; i < npids; i++) {
		if (i)
			drain(s);
		if (s->owners_of && prev &&
		    !s->owners_of(s->owners_ctx, pids[i], prev, &s->owners))
			continue;
		err = procfs_scan_pid_sockets(pids[i], &s->owners);
		/* A process that exited meanwhile simply holds nothing. */
		if (err && err != -ENOENT && err != -ESRCH)
			return err;
	}
	return 0;
}

int snapshot_take(struct tcp_snapshot *s, const pid_t *pids, size_t npids)
{
	return take(s, pids, npids, !pids, !pids);
}

int snapshot_take_all_fds(struct tcp_snapshot *s, const pid_t *pids, size_t npids)
{
	return take(s, pids, npids, true, false);
}

void snapshot_free(struct tcp_snapshot *s)
{
	free(s->socks);
	s->socks = NULL;
	s->n = s->cap = 0;
	free(s->ns);
	s->ns = NULL;
	s->nns = 0;
	inode_map_free(&s->owners);
}
