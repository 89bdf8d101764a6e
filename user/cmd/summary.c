// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "hashmap.h"
#include "json.h"
#include "summary.h"
#include "prom.h"

static int cmp_procs(const void *a, const void *b)
{
	const struct summary_proc *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->pid - y->pid;
}

static bool pid_listed(const pid_t *pids, size_t npids, pid_t pid)
{
	for (size_t i = 0; i < npids; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static bool in_other_netns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self) || stat("/proc/1/ns/net", &init))
		return false;
	return self.st_ino != init.st_ino;
}

int summary_build(struct summary *sum, const struct tcp_snapshot *snap, const pid_t *pids,
		  size_t npids)
{
	struct hmap by_pid;
	struct summary_proc *p;
	size_t k = 0;

	memset(sum, 0, sizeof(*sum));
	sum->st = snap->st;
	sum->other_netns = in_other_netns();
	hmap_init(&by_pid, sizeof(pid_t), sizeof(struct summary_proc));
	/* Listed processes appear even when they hold no TCP socket. */
	for (size_t i = 0; i < npids; i++) {
		p = hmap_upsert(&by_pid, &pids[i], NULL);
		if (!p)
			goto nomem;
		p->pid = pids[i];
	}
	for (size_t i = 0; i < snap->n; i++) {
		const struct sd_sock *s = &snap->socks[i];
		const struct inode_owner *o = s->inode ? inode_map_get(&snap->owners, s->inode) : NULL;
		int st = s->state < CS_TCP_MAX_STATES ? s->state : 0;

		if (o && npids && !pid_listed(pids, npids, o->pid))
			continue;	/* another process's: not asked for */
		if (o) {
			p = hmap_upsert(&by_pid, &o->pid, NULL);
			if (!p)
				goto nomem;
			p->pid = o->pid;
		} else {
			/* No file (TIME_WAIT, orphans, accept queue) or a file
			 * no process we could read holds. */
			p = &sum->unattributed;
			p->orphan += !s->inode && tcp_state_orphanable(st);
		}
		p->state[st]++;
		p->total++;
	}
	sum->procs = calloc(by_pid.count ? by_pid.count : 1, sizeof(*sum->procs));
	if (!sum->procs)
		goto nomem;
	for (size_t i = 0; hmap_next(&by_pid, &i, NULL, (void **)&p);) {
		struct proc_ident id;

		if (!procfs_read_ident(p->pid, &id))
			memcpy(p->comm, id.comm, sizeof(p->comm));
		else
			snprintf(p->comm, sizeof(p->comm), "?");
		sum->procs[k++] = *p;
	}
	sum->nprocs = k;
	qsort(sum->procs, k, sizeof(*sum->procs), cmp_procs);
	hmap_free(&by_pid);
	return 0;
nomem:
	hmap_free(&by_pid);
	free(sum->procs);
	sum->procs = NULL;
	return -ENOMEM;
}

void summary_free(struct summary *sum)
{
	udp_view_free(&sum->udp);
	free(sum->procs);
	sum->procs = NULL;
}

/* iproute2 misc/ss.c print_summary(): same sources, same arithmetic. */
struct ss_numbers {
	long long total, tcp_total, estab, closed, orphaned, timewait;
	long long raw4, raw6, udp4, udp6, tcp4, tcp6, frag4, frag6;
};

static void ss_numbers(const struct sockstat *st, struct ss_numbers *n)
{
	n->total = st->sockets_used;
	n->tcp_total = st->tcp_alloc + st->tcp_tw;
	n->estab = st->curr_estab;
	n->closed = (long long)st->tcp_alloc - ((long long)st->tcp_inuse + st->tcp6_inuse - st->tcp_tw);
	n->orphaned = st->tcp_orphan;
	n->timewait = st->tcp_tw;
	n->raw4 = st->raw_inuse, n->raw6 = st->raw6_inuse;
	n->udp4 = st->udp_inuse, n->udp6 = st->udp6_inuse;
	n->tcp4 = st->tcp_inuse, n->tcp6 = st->tcp6_inuse;
	n->frag4 = st->frag_inuse, n->frag6 = st->frag6_inuse;
}

void format_ss_summary(FILE *out, const struct sockstat *st)
{
	struct ss_numbers n;

	ss_numbers(st, &n);
	fprintf(out, "Total: %lld\n", n.total);
	fprintf(out, "TCP:   %lld (estab %lld, closed %lld, orphaned %lld, timewait %lld)\n",
		n.tcp_total, n.estab, n.closed, n.orphaned, n.timewait);
	fprintf(out, "\nTransport Total     IP        IPv6\n");
	fprintf(out, "RAW\t  %-9lld %-9lld %-9lld\n", n.raw4 + n.raw6, n.raw4, n.raw6);
	fprintf(out, "UDP\t  %-9lld %-9lld %-9lld\n", n.udp4 + n.udp6, n.udp4, n.udp6);
	fprintf(out, "TCP\t  %-9lld %-9lld %-9lld\n", n.tcp4 + n.tcp6, n.tcp4, n.tcp6);
	fprintf(out, "INET\t  %-9lld %-9lld %-9lld\n",
		n.raw4 + n.udp4 + n.tcp4 + n.raw6 + n.udp6 + n.tcp6, n.raw4 + n.udp4 + n.tcp4,
		n.raw6 + n.udp6 + n.tcp6);
	fprintf(out, "FRAG\t  %-9lld %-9lld %-9lld\n", n.frag4 + n.frag6, n.frag4, n.frag6);
	fprintf(out, "\n");
}

/* Column headers of the per-process table, in tcp_state_order. */
static const char *const state_hdr[TCP_STATE_ORDER_LEN] = {
	"ESTAB", "SYNS", "SYNR", "FINW1", "FINW2", "TIMEW", "CLOSE", "CLOSW", "LASTA", "LISTN",
	"CLSNG",
};

static void format_proc_row(FILE *out, const char *pid, const char *comm,
			    const struct summary_proc *p)
{
	fprintf(out, "%-7s %-12.12s", pid, comm);
	for (int i = 0; i < TCP_STATE_ORDER_LEN; i++)
		fprintf(out, " %5u", p->state[tcp_state_order[i]]);
	fprintf(out, " %5u\n", p->orphan);
}

void format_summary_text(FILE *out, const struct summary *sum, bool header)
{
	char pid[16];

	format_ss_summary(out, &sum->st);
	if (sum->other_netns)
		fprintf(out, "note: not the initial network namespace: TCP inuse/tw are this "
			     "namespace's, orphaned/alloc (and so closed) are host-wide\n\n");
	if (header) {
		fprintf(out, "TCP sockets by process and state (sock_diag + /proc/PID/fd)\n");
		fprintf(out, "%-7s %-12s", "PID", "COMM");
		for (int i = 0; i < TCP_STATE_ORDER_LEN; i++)
			fprintf(out, " %5s", state_hdr[i]);
		fprintf(out, " %5s\n", "ORPH");
	}
	for (size_t i = 0; i < sum->nprocs; i++) {
		snprintf(pid, sizeof(pid), "%d", sum->procs[i].pid);
		format_proc_row(out, pid, sum->procs[i].comm, &sum->procs[i]);
	}
	format_proc_row(out, "-", "unattributed", &sum->unattributed);
	if (sum->unattributed.total)
		fprintf(out, "unattributed: %u sockets have no owning file (TIME_WAIT, orphaned,\n"
			     "  not yet accepted) or an owner not visible from here; `connscope\n"
			     "  attach` during the workload charges them to processes\n",
			sum->unattributed.total);
	if (sum->has_udp)
		format_udp_view_text(out, &sum->udp, sum->udp_all ? 10 : 0, header);
}

static void json_tcp_states(struct json *j, const struct summary_proc *p)
{
	json_key(j, "tcp");
	json_object_begin(j);
	for (int i = 0; i < TCP_STATE_ORDER_LEN; i++)
		json_kv_uint(j, tcp_state_name(tcp_state_order[i]), p->state[tcp_state_order[i]]);
	json_kv_uint(j, "orphan", p->orphan);
	json_object_end(j);
}

static void json_transport(struct json *j, const char *name, long long v4, long long v6)
{
	json_object_begin(j);
	json_kv_string(j, "name", name);
	json_kv_int(j, "total", v4 + v6);
	json_kv_int(j, "ip", v4);
	json_kv_int(j, "ipv6", v6);
	json_object_end(j);
}

void format_summary_json(FILE *out, const struct summary *sum)
{
	struct ss_numbers n;
	struct json j;

	ss_numbers(&sum->st, &n);
	json_init(&j, out, true);
	json_object_begin(&j);
	json_key(&j, "summary");
	json_object_begin(&j);
	json_kv_int(&j, "total", n.total);
	json_key(&j, "tcp");
	json_object_begin(&j);
	json_kv_int(&j, "total", n.tcp_total);
	json_kv_int(&j, "estab", n.estab);
	json_kv_int(&j, "closed", n.closed);
	json_kv_int(&j, "orphaned", n.orphaned);
	json_kv_int(&j, "timewait", n.timewait);
	json_object_end(&j);
	json_key(&j, "transport");
	json_array_begin(&j);
	json_transport(&j, "RAW", n.raw4, n.raw6);
	json_transport(&j, "UDP", n.udp4, n.udp6);
	json_transport(&j, "TCP", n.tcp4, n.tcp6);
	json_transport(&j, "INET", n.raw4 + n.udp4 + n.tcp4, n.raw6 + n.udp6 + n.tcp6);
	json_transport(&j, "FRAG", n.frag4, n.frag6);
	json_array_end(&j);
	json_kv_bool(&j, "other_netns", sum->other_netns);
	json_object_end(&j);
	json_key(&j, "processes");
	json_array_begin(&j);
	for (size_t i = 0; i < sum->nprocs; i++) {
		json_object_begin(&j);
		json_kv_int(&j, "pid", sum->procs[i].pid);
		json_kv_string(&j, "comm", sum->procs[i].comm);
		json_tcp_states(&j, &sum->procs[i]);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "unattributed");
	json_object_begin(&j);
	json_kv_uint(&j, "total", sum->unattributed.total);
	json_tcp_states(&j, &sum->unattributed);
	json_kv_string(&j, "reason", "no owning file (TIME_WAIT, orphaned, accept queue) or "
				     "an owner not visible from here");
	json_object_end(&j);
	if (sum->has_udp)
		json_udp_view(&j, &sum->udp);
	json_key(&j, "sources");
	json_object_begin(&j);
	json_kv_string(&j, "summary", "/proc/net/sockstat, /proc/net/sockstat6, /proc/net/snmp");
	json_kv_string(&j, "processes", "sock_diag (inet_diag_req_v2) + /proc/PID/fd");
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void summary_usage(FILE *out)
{
	fprintf(out, "usage: connscope summary [-p PID[,PID...]] [-j | --prom] [-H]\n"
		     "  the `ss -s` block, then TCP sockets by process and state\n"
		     "  -p, --pid PIDS   only these processes (repeatable, comma-separated)\n"
		     "  -j, --json       one JSON document\n"
		     "      --prom       Prometheus text format (node_exporter textfile)\n"
		     "  -H, --no-header  no table header\n");
}

int cmd_summary(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "prom", no_argument, NULL, 'P' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	pid_t pids[CLI_MAX_PIDS];
	size_t npids = 0;
	bool json = false, header = true, prom = false;
	struct tcp_snapshot snap = {};
	struct summary sum = {};
	int c, ret = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:jHh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_pids("-p", optarg, pids, &npids))
				return EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		case 'P':
			prom = true;
			break;
		case 'H':
			header = false;
			break;
		case 'h':
			summary_usage(stdout);
			return 0;
		default:
			return cli_bad_option("summary", argv);
		}
	}
	if (cli_no_more_args("summary", argc, argv))
		return EXIT_USAGE;
	for (size_t i = 0; i < npids; i++) {
		struct proc_ident id;

		if (procfs_read_ident(pids[i], &id)) {
			fprintf(stderr, "connscope: no such process: %d (find the pid with "
					"`pgrep NAME`)\n", pids[i]);
			return 1;
		}
	}
	/* Every process's fds, so that a socket of another process is not
	 * mistaken for an unattributed one. */
	if (snapshot_take(&snap, NULL, 0))
		goto out;
	if (summary_build(&sum, &snap, pids, npids)) {
		fprintf(stderr, "connscope: out of memory building the summary\n");
		goto out;
	}
	/* A failed UDP dump costs that part only. */
	sum.has_udp = !udp_view_build(&sum.udp, &snap.owners, pids, npids);
	sum.udp_all = !npids;
	if (json && prom) {
		fprintf(stderr, "connscope summary: -j and --prom are two output formats: pick one\n");
		ret = EXIT_USAGE;
		goto out;
	}
	if (json)
		format_summary_json(stdout, &sum);
	else if (prom)
		format_prom_summary(stdout, &sum);
	else
		format_summary_text(stdout, &sum, header);
	ret = fflush(stdout) ? 1 : 0;
out:
	summary_free(&sum);
	snapshot_free(&snap);
	return ret;
}
