// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "containers.h"
#include "hashmap.h"
#include "json.h"
#include "summary.h"
#include "prom.h"
#include "text_wrap.h"

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

static bool is_init_netns(uint32_t netns)
{
	struct stat init;

	return stat("/proc/1/ns/net", &init) || init.st_ino == netns;
}

int summary_build(struct summary *sum, const struct tcp_snapshot *snap, const pid_t *pids,
		  size_t npids)
{
	struct hmap by_pid;
	struct summary_proc *p;
	size_t k = 0;

	memset(sum, 0, sizeof(*sum));
	sum->st = snap->st;
	sum->ns = calloc(snap->nns ? snap->nns : 1, sizeof(*sum->ns));
	if (!sum->ns)
		return -ENOMEM;
	for (size_t i = 0; i < snap->nns; i++) {
		sum->ns[i].netns = snap->ns[i].netns;
		sum->ns[i].pid = snap->ns[i].pid;
		sum->ns[i].st = snap->ns[i].st;
	}
	sum->nns = snap->nns;
	sum->netns = snap->nns ? snap->ns[0].netns : 0;
	sum->other_netns = sum->nns && !is_init_netns(sum->netns);
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

		struct container_ref ref;

		if (!procfs_read_ident(p->pid, &id))
			memcpy(p->comm, id.comm, sizeof(p->comm));
		else
			snprintf(p->comm, sizeof(p->comm), "?");
		/* The labels the exporter's series carry. */
		if (container_of_pid(p->pid, &ref)) {
			container_label(&ref, p->container, sizeof(p->container));
			snprintf(p->pod_uid, sizeof(p->pod_uid), "%s", ref.c.pod_uid);
		}
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


static void summary_usage(FILE *out)
{
	fprintf(out, "usage: connscope summary [-p PID[,PID...]] [-j | --prom] [-H]\n"
		     "  the `ss -s` block, then TCP sockets by process and state\n"
		     "  -p, --pid PIDS   only these processes (repeatable, comma-separated)\n"
		     "  -j, --json       one JSON document\n"
		     "      --prom       Prometheus text format (node_exporter textfile)\n"
		     "  -H, --no-header  no table header\n"
		     "examples:\n"
		     "  connscope summary\n"
		     "      every process's TCP sockets by state, after the `ss -s` block\n"
		     "  connscope summary -p $(pgrep -d, nginx) -j | jq .processes\n"
		     "      nginx's sockets as JSON\n"
		     "  connscope summary --prom > /var/lib/node_exporter/connscope.prom\n"
		     "      for node_exporter's textfile collector\n");
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
	/* attach's --prom takes a FILE; summary's writes to stdout. */
	if (prom && optind < argc) {
		text_err("connscope summary: unexpected argument '%s': summary --prom "
			 "writes to stdout: connscope summary --prom > %s\n", argv[optind],
			argv[optind]);
		return EXIT_USAGE;
	}
	if (cli_json_file("summary", json, argc, argv) || cli_no_more_args("summary", argc, argv))
		return EXIT_USAGE;
	for (size_t i = 0; i < npids; i++) {
		struct proc_ident id;

		if (procfs_read_ident(pids[i], &id)) {
			text_err("connscope: no such process: %d (find the pid with "
				 "`pgrep NAME`)\n", pids[i]);
			return 1;
		}
	}
	/* The namespaces of the processes listed (ours without -p), and
	 * every process's fds, so that a socket of another process is not
	 * mistaken for an unattributed one. */
	if (snapshot_take_all_fds(&snap, npids ? pids : NULL, npids))
		goto out;
	if (summary_build(&sum, &snap, pids, npids)) {
		text_err("connscope: out of memory building the summary\n");
		goto out;
	}
	/* A failed UDP dump costs that part only. */
	sum.has_udp = !udp_view_build(&sum.udp, &snap.owners, pids, npids);
	sum.udp_all = !npids;
	if (json && prom) {
		text_err("connscope summary: -j and --prom are two output formats: pick one\n");
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
