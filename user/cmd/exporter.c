// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <microhttpd.h>
#include "attach.h"
#include "exporter.h"
#include "fdinv.h"
#include "procfs.h"
#include "prom.h"
#include "timeutil.h"

struct exporter {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;	/* guards text, len, scrapes */
	char *text;
	size_t len;
	uint64_t scrapes;
	/* The tracing loop's alone: */
	struct exporter_limits lim;
	struct prom_state state;	/* who has series of their own, across snapshots */
	struct hmap members_gone;	/* pid_t -> nothing: members seen exited */
	struct hmap member_fds;		/* pid_t -> struct prom_fd: --all, from /proc */
};

static const char index_page[] =
	"<!DOCTYPE html><html><head><title>connscope exporter</title></head><body>"
	"<h1>connscope exporter</h1><p><a href=\"/metrics\">/metrics</a>: per-process "
	"TCP connection, TIME_WAIT, reuse and fd metrics (Prometheus text format "
	"0.0.4)</p></body></html>\n";

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req_cls)
{
	struct exporter *e = cls;
	enum MHD_Result ret;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET only\n", 9);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", index_page,
			     sizeof(index_page) - 1);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found: try /metrics\n", 24);
	/* Copied under the lock: the loop may publish a new snapshot now. */
	pthread_mutex_lock(&e->lock);
	e->scrapes++;
	ret = reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
		    e->text ? e->text : "", e->text ? e->len : 0);
	pthread_mutex_unlock(&e->lock);
	return ret;
}

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
			fprintf(stderr, "connscope: --listen '%s': '%s' is not an IP address "
					"(give e.g. 127.0.0.1:%d or [::1]:%d; names are not "
					"resolved)\n", arg, addr, EXPORTER_DEFAULT_PORT,
				EXPORTER_DEFAULT_PORT);
			return -1;
		}
	}
	*port = p;
	return 0;
bad:
	fprintf(stderr, "connscope: --listen '%s': expected ADDR:PORT (e.g. 127.0.0.1:%d, "
			"[::1]:%d or :%d), port 1..65535\n", arg, EXPORTER_DEFAULT_PORT,
		EXPORTER_DEFAULT_PORT, EXPORTER_DEFAULT_PORT);
	return -1;
}

struct exporter *exporter_start(const char *addr, uint16_t port, const struct exporter_limits *lim)
{
	struct prom_limits plim = { .top_processes = lim->top_processes,
				    .max_series = lim->max_series };
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	/* No MHD_USE_ERROR_LOG: one message of ours per failure. */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
	struct exporter *e;

	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		flags |= MHD_USE_IPv6;
	} else {
		fprintf(stderr, "connscope: --listen: '%s' is not an IP address (give e.g. "
				"127.0.0.1 or ::1)\n", addr);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	pthread_mutex_init(&e->lock, NULL);
	e->lim = *lim;
	prom_state_init(&e->state, &plim);
	hmap_init(&e->members_gone, sizeof(pid_t), 0);
	hmap_init(&e->member_fds, sizeof(pid_t), sizeof(struct prom_fd));
	e->daemon = MHD_start_daemon(flags, port, NULL, NULL, handle, e, MHD_OPTION_SOCK_ADDR,
				     (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_TIMEOUT,
				     (unsigned int)10, MHD_OPTION_END);
	if (!e->daemon) {
		fprintf(stderr, "connscope: cannot listen on %s:%u (in use? try another "
				"--listen port)\n", addr, port);
		prom_state_free(&e->state);
		pthread_mutex_destroy(&e->lock);
		free(e);
		return NULL;
	}
	return e;
}

void exporter_publish(struct exporter *e, const char *text, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return;
	memcpy(copy, text, len);
	copy[len] = '\0';
	pthread_mutex_lock(&e->lock);
	free(e->text);
	e->text = copy;
	e->len = len;
	pthread_mutex_unlock(&e->lock);
}

uint64_t exporter_scrapes(struct exporter *e)
{
	uint64_t n;

	pthread_mutex_lock(&e->lock);
	n = e->scrapes;
	pthread_mutex_unlock(&e->lock);
	return n;
}

void exporter_stop(struct exporter *e)
{
	if (!e)
		return;
	MHD_stop_daemon(e->daemon);
	prom_state_free(&e->state);
	hmap_free(&e->members_gone);
	hmap_free(&e->member_fds);
	pthread_mutex_destroy(&e->lock);
	free(e->text);
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
		.fixed_series = prom_fixed_series(run, st, true) + EXPORTER_TRAILER_SERIES,
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

void exporter_tick(struct exporter *e, struct agg *a)
{
	/* With -p the listed processes keep their series for good. */
	if (e->lim.top_processes)
		exporter_forget_gone(&e->state, a, member_gone, NULL);
}

/* --all sees every pid the host ever runs: the books of those that are
 * gone go, once their series are over (members: after the grace) and no
 * TIME_WAIT socket is still charged to them. Without this the books, the
 * endpoint maps and the series state grow with every process started. */
size_t exporter_forget_gone(struct prom_state *s, struct agg *a,
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
	for (size_t i = 0; i < n; i++)
		agg_drop_proc(a, &drop[i]);
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
	case 'R':
		/* As attach's: a small one makes losses a test can provoke. */
		if (cli_parse_u64("--ringbuf-size", arg, 4096, 1ULL << 30, &v))
			return -1;
		if (v & (v - 1)) {
			fprintf(stderr, "connscope: --ringbuf-size %llu: must be a power of two "
					"(e.g. 8388608)\n", v);
			return -1;
		}
		o->tracer.ringbuf_bytes = v;
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
		bad = "-p and --all both given: trace the listed processes (-p PID) or every "
		      "process (--all), not both";
	else if (o->tracer.all && targets_any(&o->sel))
		bad = "--comm/--cgroup and --all both given: every process is traced already; "
		      "drop --all to trace those only";
	else if (!o->tracer.all && !o->npids && !targets_any(&o->sel))
		bad = "which processes? give -p PID (e.g. -p $(pgrep -d, nginx)), or --all for "
		      "every process";
	else if (!o->tracer.all && l->top_processes)
		bad = "--top-processes needs --all (with -p every listed process has series of "
		      "its own)";
	else if (o->tracer.all && o->tracer.follow_children)
		bad = "--children with --all: every process is traced already; drop --children";
	if (bad) {
		fprintf(stderr, "connscope exporter: %s\n", bad);
		return EXIT_USAGE;
	}
	if (!l->max_series)
		l->max_series = EXPORTER_DEFAULT_MAX_SERIES;
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
