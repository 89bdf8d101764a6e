// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "attach_opts.h"
#include "exporter.h"
#include "prom_findings.h"
#include "exporter_http.h"
#include "fdinv.h"
#include "procfs.h"
#include "prom.h"
#include "timeutil.h"
#include "text_wrap.h"

struct exporter {
	struct http_server *http;	/* the HTTP thread (exporter_http.c) */
	/* The tracing loop's alone: */
	struct exporter_limits lim;
	struct prom_state state;	/* who has series of their own, across snapshots */
	struct hmap members_gone;	/* pid_t -> nothing: members seen exited */
	struct hmap member_fds;		/* pid_t -> struct prom_fd: --all, from /proc */
};

int exporter_parse_listen(const char *arg, char *addr, size_t addr_len, uint16_t *port)
{
	const char *colon = strrchr(arg, ':');
	char *end;
	long p;

	if (!colon)
		goto bad;
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 1 || p > 65535)
		goto bad;
	if (colon == arg) {
		snprintf(addr, addr_len, "%s", EXPORTER_DEFAULT_ADDR);
	} else if (arg[0] == '[' && colon[-1] == ']') {
		snprintf(addr, addr_len, "%.*s", (int)(colon - arg - 2), arg + 1);
	} else {
		snprintf(addr, addr_len, "%.*s", (int)(colon - arg), arg);
	}
	/* The address is checked here, with the rest of the command line, so
	 * a typo is a usage error (exit 2) before anything is loaded. */
	{
		struct in6_addr a6;

		if (inet_pton(AF_INET, addr, &a6) != 1 && inet_pton(AF_INET6, addr, &a6) != 1) {
			text_err("connscope: --listen '%s': '%s' is not an IP address "
				 "(give e.g. 127.0.0.1:%d or [::1]:%d; names are not "
				 "resolved)\n", arg, addr, EXPORTER_DEFAULT_PORT,
				EXPORTER_DEFAULT_PORT);
			return -1;
		}
	}
	*port = p;
	return 0;
bad:
	text_err("connscope: --listen '%s': expected ADDR:PORT (e.g. 127.0.0.1:%d, "
		 "[::1]:%d or :%d), port 1..65535\n", arg, EXPORTER_DEFAULT_PORT,
		EXPORTER_DEFAULT_PORT, EXPORTER_DEFAULT_PORT);
	return -1;
}

struct exporter *exporter_start(const char *addr, uint16_t port, const struct exporter_limits *lim)
{
	struct prom_limits plim = { .top_processes = lim->top_processes,
				    .max_series = lim->max_series,
				    .retire_gone = lim->retire_gone,
				    .group_children = !lim->top_processes };
	struct exporter *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->http = http_start(addr, port);
	if (!e->http) {
		free(e);
		return NULL;
	}
	e->lim = *lim;
	prom_state_init(&e->state, &plim);
	hmap_init(&e->members_gone, sizeof(pid_t), 0);
	hmap_init(&e->member_fds, sizeof(pid_t), sizeof(struct prom_fd));
	return e;
}

void exporter_publish(struct exporter *e, const char *text, size_t len)
{
	http_publish(e->http, text, len);
}

uint64_t exporter_scrapes(struct exporter *e)
{
	return http_scrapes(e->http);
}

void exporter_stop(struct exporter *e)
{
	if (!e)
		return;
	http_stop(e->http);
	prom_state_free(&e->state);
	hmap_free(&e->members_gone);
	hmap_free(&e->member_fds);
	free(e);
}

static void fds_of_report(pid_t pid, struct prom_fd *out, void *ctx)
{
	prom_fd_from_report(ctx, pid, out);
}

/* --all has no fd tracing: the fd gauges of the processes with series of
 * their own come from /proc, one readlink per fd (a getxattr per socket),
 * no /proc/PID/net tables: their TCP states are in the tcp_sockets family. */
static void read_proc_fds(pid_t pid, struct prom_fd *out)
{
	struct fdinv_opts o = { .flags = FDINV_NO_NET_TABLES };
	struct fd_inventory inv;
	struct fd_limits lim;

	memset(out, 0, sizeof(*out));
	if (fdinv_scan(pid, &inv, &o))
		return;
	out->valid = true;
	out->open = inv.total;
	memcpy(out->by_type, inv.by_type, sizeof(out->by_type));
	out->max = fdinv_limits(pid, &lim) ? UINT64_MAX : lim.soft;
	fdinv_free(&inv);
}

static void fds_of_proc(pid_t pid, struct prom_fd *out, void *ctx)
{
	const struct prom_fd *f = hmap_get(&((struct exporter *)ctx)->member_fds, &pid);

	if (f)
		*out = *f;
	else
		memset(out, 0, sizeof(*out));
}

static bool member_gone(const struct proc_books *p, void *ctx)
{
	return p->exited || hmap_get(&((struct exporter *)ctx)->members_gone, &p->pid);
}

/* What the snapshot needs from the kernel besides the books, read here so
 * that rendering reads nothing: which members have exited (before the
 * membership step frees their slots), then, with --all, the members' fds. */
static void read_members_gone(struct exporter *e, const struct agg *a)
{
	pid_t pid;

	hmap_clear(&e->members_gone);
	for (size_t i = 0; prom_state_next_member(&e->state, &i, &pid);) {
		const struct proc_books *p = agg_find_proc(a, pid);

		if (p && !p->exited && procfs_pid_gone(pid))
			hmap_upsert(&e->members_gone, &pid, NULL);
	}
}

static void read_members_fds(struct exporter *e)
{
	pid_t pid;

	hmap_clear(&e->member_fds);
	for (size_t i = 0; prom_state_next_member(&e->state, &i, &pid);) {
		struct prom_fd *f = hmap_upsert(&e->member_fds, &pid, NULL);

		if (f)
			read_proc_fds(pid, f);
	}
}

void exporter_format(struct exporter *e, FILE *out, const struct agg *a,
		     const struct run_info *run, const struct sockstat *st)
{
	struct prom_update_in in = {
		.fixed_series = prom_fixed_series(run, st, true) + EXPORTER_TRAILER_SERIES +
				prom_findings(NULL, a, run),
		/* With -p the loop marks exits and series stay: no slots to free. */
		.gone = e->lim.top_processes ? member_gone : NULL,
		.ctx = e,
		.quic = run->quic,
	};

	in.now_ns = now_ns();
	if (e->lim.top_processes)
		read_members_gone(e, a);
	prom_state_admit(&e->state, a, &in);
	if (run->fds.procs) {
		in.fds = fds_of_report;
		in.ctx = (void *)&run->fds;
	} else if (e->lim.proc_fds) {
		read_members_fds(e);
		in.fds = fds_of_proc;
	}
	prom_state_views(&e->state, a, &in);
	format_prom_state(out, &e->state, a, run, st, true);
}

/* Gone, for forgetting: members as the snapshot saw them; any other
 * process holding a socket at the last reconcile is alive, the rest are
 * asked of /proc (a stat each, only for those without sockets). */
static bool proc_gone(const struct proc_books *p, void *ctx)
{
	if (member_gone(p, ctx))
		return true;
	for (int st = 1; st < CS_TCP_MAX_STATES; st++)
		if (p->truth.state[st])
			return false;
	return procfs_pid_gone(p->pid);
}

void exporter_tick(struct exporter *e, struct agg *a, struct quic_books *qb)
{
	/* With -p alone the listed processes keep their series for good;
	 * --comm/--cgroup ones come and go: forgotten as with --all. */
	if (e->lim.top_processes || e->lim.retire_gone)
		exporter_forget_gone(&e->state, a, qb, proc_gone, e);
}

/* --all sees every pid the host ever runs: the books of those that are
 * gone go, once their series are over (members: after the grace) and no
 * TIME_WAIT socket is still charged to them. Without this the books, the
 * endpoint maps and the series state grow with every process started. */
size_t exporter_forget_gone(struct prom_state *s, struct agg *a, struct quic_books *qb,
			    bool (*gone)(const struct proc_books *p, void *ctx), void *ctx)
{
	struct hmap tw_holders;
	struct tw_entry *tw;
	const struct proc_key *key;
	struct proc_books *p;
	struct proc_key *drop;
	size_t n = 0;
	uint8_t *one;

	if (!a->procs.count)
		return 0;
	drop = calloc(a->procs.count, sizeof(*drop));
	if (!drop)
		return 0;
	hmap_init(&tw_holders, sizeof(pid_t), 1);
	for (size_t i = 0; hmap_next(&a->tw, &i, NULL, (void **)&tw);)
		if ((one = hmap_upsert(&tw_holders, &tw->pid, NULL)))
			*one = 1;
	for (size_t i = 0; hmap_next(&a->procs, &i, (const void **)&key, (void **)&p);) {
		if (!(gone ? gone(p, ctx) : p->exited) || hmap_get(&tw_holders, &p->pid))
			continue;
		if (prom_state_forget(s, p))
			drop[n++] = *key;
	}
	/* After the walk: a delete moves entries under the iterator. */
	for (size_t i = 0; i < n; i++) {
		agg_drop_proc(a, &drop[i]);
		/* QUIC books are per pid: gone with its last books. */
		if (qb && !agg_find_proc(a, drop[i].pid))
			quic_books_drop(qb, drop[i].pid);
	}
	hmap_free(&tw_holders);
	free(drop);
	return n;
}

void exporter_adopt_owners(struct agg *a, const struct inode_map *owners)
{
	const struct inode_owner *o;

	for (size_t i = 0; inode_map_next(owners, &i, &o);) {
		struct proc_books *p;
		struct proc_ident id;

		if (agg_find_proc(a, o->pid) || procfs_read_ident(o->pid, &id))
			continue;
		p = agg_proc(a, o->pid);
		if (!p)
			return;
		memcpy(p->comm, id.comm, sizeof(p->comm));
		p->ptgid = id.ppid;
		p->start_ns = procfs_start_ns(&id);
	}
}

int exporter_opt(int c, const char *arg, struct attach_opts *o)
{
	unsigned long long v;

	switch (c) {
	case 'A':
		o->tracer.all = true;
		return 1;
	case 'P':
		if (cli_parse_u64("--top-processes", arg, 1, EXPORTER_MAX_TOP_PROCESSES, &v))
			return -1;
		o->exporter_limits.top_processes = v;
		return 1;
	case 'S':
		if (cli_parse_u64("--max-series", arg, EXPORTER_MIN_MAX_SERIES,
				  EXPORTER_MAX_MAX_SERIES, &v))
			return -1;
		o->exporter_limits.max_series = v;
		return 1;
	}
	return 0;
}

int exporter_check_opts(struct attach_opts *o)
{
	struct exporter_limits *l = &o->exporter_limits;
	const char *bad = NULL;

	if (o->tracer.all && o->npids)
		bad = "-p and --all both given: give the one you mean, not both";
	else if (o->tracer.all && targets_any(&o->sel))
		bad = "--comm/--cgroup with --all: drop --all to trace those only";
	else if (!o->tracer.all && !o->npids && !targets_any(&o->sel))
		bad = "which processes? give -p PID, --comm NAME or --all";
	else if (!o->tracer.all && l->top_processes)
		bad = "--top-processes needs --all (-p processes each have series)";
	else if (o->tracer.all && o->tracer.follow_children)
		bad = "--children with --all: all are traced; drop --children";
	if (bad) {
		text_err("connscope exporter: %s\n", bad);
		return EXIT_USAGE;
	}
	if (!l->max_series)
		l->max_series = EXPORTER_DEFAULT_MAX_SERIES;
	/* Children come and go as --comm/--cgroup processes do. */
	l->retire_gone = !o->tracer.all && (targets_any(&o->sel) || o->tracer.follow_children);
	if (o->tracer.all) {
		if (!l->top_processes)
			l->top_processes = EXPORTER_DEFAULT_TOP_PROCESSES;
		/* No fd syscall tracing of the whole host: /proc for the top
		 * processes instead, unless --no-fd. */
		l->proc_fds = !o->no_fd;
		o->no_fd = true;
	}
	return 0;
}
