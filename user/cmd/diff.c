// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Reading two connscope reports with jansson (Debian's libjansson) and
 * pairing what they measured: processes by comm (pids change between two
 * runs of a load test), endpoints by their label, findings by (rule, comm,
 * endpoint). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "cli.h"
#include "diff.h"
#include "diff_report.h"
#include "safefile.h"
#include "text_wrap.h"

/* ---- reading ------------------------------------------------------------- */

static json_t *load_report(const char *path, const char *which)
{
	json_error_t err;
	json_t *root, *run, *cmd;
	FILE *f = fopen(path, "r");

	if (!f) {
		text_err("connscope diff: cannot read %s (%s): %s; give two files written "
			 "by `connscope doctor -j` or `connscope attach -j`\n", path, which,
			strerror(errno));
		return NULL;
	}
	root = json_loadf(f, 0, &err);
	fclose(f);
	if (root) {
		run = json_object_get(root, "run");
		cmd = json_object_get(run, "command");
		if (json_is_string(cmd) && (!strcmp(json_string_value(cmd), "attach") ||
					    !strcmp(json_string_value(cmd), "doctor")) &&
		    json_is_array(json_object_get(root, "processes")))
			return root;
		json_decref(root);
	}
	text_err("connscope diff: %s (%s) is not a connscope report%s%s%s; give the "
		 "output of `connscope doctor -j` or `connscope attach -j`\n", path, which,
		root ? "" : " (", root ? "" : err.text, root ? "" : ")");
	return NULL;
}

static double num(json_t *o, const char *key, bool *has)
{
	json_t *v = json_object_get(o, key);

	if (has)
		*has = json_is_number(v);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* Which way each figure should go (diff_report.h): counts of work done
 * have none (fewer requests is less work, not better); per request, per
 * second of work and failures do. */
static int better_of(const char *name)
{
	static const char *const lower[] = { "connections_per_request", "time_wait_per_request",
					     "time_wait_peak", "connect_failed", "resets",
					     "fd_growth_per_s", "port_share_peak" };

	for (size_t i = 0; i < sizeof(lower) / sizeof(lower[0]); i++)
		if (!strcmp(name, lower[i]))
			return DIFF_LOWER_BETTER;
	return !strcmp(name, "requests_per_s") ? DIFF_HIGHER_BETTER : DIFF_NEUTRAL;
}

static void put(struct diff_metrics *m, const char *name, const char *unit, double v, bool has,
		bool after)
{
	struct diff_metric *x = NULL;

	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->m[i].name, name))
			x = &m->m[i];
	if (!x) {
		if (m->n == DIFF_MAX_METRICS)
			return;
		x = &m->m[m->n++];
		x->name = name;
		x->unit = unit;
		x->better = better_of(name);
	}
	/* Several processes of one program add up (workers of a server). */
	if (!has)
		return;
	if (after) {
		x->after = x->has_after ? x->after + v : v;
		x->has_after = true;
	} else {
		x->before = x->has_before ? x->before + v : v;
		x->has_before = true;
	}
}

static const struct diff_metric *get(const struct diff_metrics *m, const char *name)
{
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->m[i].name, name))
			return &m->m[i];
	return NULL;
}

/* num / den on each side that has both (den > 0). */
static void ratio_of(struct diff_metrics *m, const char *name, const char *unit,
		     const char *num_name, const char *den_name)
{
	const struct diff_metric *n = get(m, num_name), *d = get(m, den_name);

	for (int after = 0; n && d && after < 2; after++) {
		bool has = after ? n->has_after && d->has_after : n->has_before && d->has_before;
		double nv = after ? n->after : n->before, dv = after ? d->after : d->before;

		if (has && dv > 0)
			put(m, name, unit, nv / dv, true, after);
	}
}

/* Two runs of different lengths or loads compare by rate: per request
 * and per second of each run's load (its load_s: first to last
 * connection transition, not the idle time around it), from the sums. */
static void derive(struct diff_metrics *m, double before_s, double after_s)
{
	const struct diff_metric *x;

	ratio_of(m, "connections_per_request", "", "connections", "requests");
	ratio_of(m, "time_wait_per_request", "", "time_wait_entered", "requests");
	for (int after = 0; after < 2; after++) {
		double s = after ? after_s : before_s;

		if (s <= 0)
			continue;
		if ((x = get(m, "requests")) && (after ? x->has_after : x->has_before))
			put(m, "requests_per_s", "/s", (after ? x->after : x->before) / s, true,
			    after);
		if ((x = get(m, "connections")) && (after ? x->has_after : x->has_before))
			put(m, "connections_per_s", "/s", (after ? x->after : x->before) / s, true,
			    after);
	}
}

/* The busiest moment's share of the ephemeral ports towards label. */
static bool port_share(json_t *root, const char *label, double *share)
{
	json_t *d = json_object_get(json_object_get(root, "limits"), "busiest_destinations");
	size_t i, ll = strlen(label);
	json_t *x;
	bool found = false;

	*share = 0;
	json_array_foreach(d, i, x) {
		const char *dest = json_string_value(json_object_get(x, "destination"));
		size_t dl = dest ? strlen(dest) : 0;

		/* "127.0.0.1 -> 127.0.0.1:8080" ends with the endpoint */
		if (dl > ll + 4 && !strcmp(dest + dl - ll, label) &&
		    !strncmp(dest + dl - ll - 4, " -> ", 4)) {
			double s = num(x, "share", NULL);

			if (!found || s > *share)
				*share = s;
			found = true;
		}
	}
	return found;
}

static struct diff_ep *ep_of(struct diff_proc *p, const char *label)
{
	for (int i = 0; i < p->neps; i++)
		if (!strcmp(p->eps[i].label, label))
			return &p->eps[i];
	if (p->neps == DIFF_MAX_EPS)
		return NULL;
	snprintf(p->eps[p->neps].label, sizeof(p->eps[0].label), "%s", label);
	return &p->eps[p->neps++];
}

static void read_proc(struct diff_proc *d, json_t *root, json_t *p, bool after)
{
	json_t *tot = json_object_get(p, "totals"), *reuse = json_object_get(p, "reuse");
	json_t *fds = json_object_get(p, "fds"), *x;
	/* Connections held at the start carried requests too (4 keep-alive
	 * connections carrying 483 requests are not 0 a request). */
	double conns = num(tot, "connections_opened", NULL) + num(tot, "connections_accepted", NULL) +
		       num(reuse, "connections_held_at_start", NULL);
	double req = num(reuse, "requests", NULL), twpeak = num(p, "time_wait", NULL);
	bool has_fds;
	size_t i;

	json_array_foreach(json_object_get(p, "intervals"), i, x) {
		double tw = num(json_object_get(x, "tcp"), "time_wait", NULL);

		if (tw > twpeak)
			twpeak = tw;
	}
	put(&d->m, "connections", "connections", conns, true, after);
	put(&d->m, "requests", "requests", req, reuse != NULL, after);
	/* Their places in the order, filled by derive(). */
	put(&d->m, "connections_per_request", "", 0, false, after);
	put(&d->m, "requests_per_s", "/s", 0, false, after);
	put(&d->m, "connections_per_s", "/s", 0, false, after);
	put(&d->m, "time_wait_peak", "sockets", twpeak, true, after);
	put(&d->m, "time_wait_entered", "connections", num(tot, "time_wait_entered", NULL), true,
	    after);
	put(&d->m, "time_wait_per_request", "", 0, false, after);
	put(&d->m, "connect_failed", "connections", num(tot, "connect_failed", NULL), true, after);
	put(&d->m, "resets", "connections", num(tot, "resets", NULL), true, after);
	has_fds = json_is_object(fds);
	put(&d->m, "fds_end", "fds", num(json_object_get(fds, "fds"), "total", NULL), has_fds,
	    after);
	put(&d->m, "fd_growth_per_s", "/s", num(fds, "growth_fds_per_s", NULL), has_fds, after);

	json_array_foreach(json_object_get(reuse, "endpoints"), i, x) {
		const char *label = json_string_value(json_object_get(x, "endpoint"));
		double c = num(x, "opened", NULL) + num(x, "accepted", NULL) +
			   num(x, "held_at_start", NULL), r = num(x, "requests", NULL);
		struct diff_ep *e;
		double share;

		if (!label || !strcmp(label, "other") || !(e = ep_of(d, label)))
			continue;
		put(&e->m, "connections", "connections", c, true, after);
		put(&e->m, "requests", "requests", r, true, after);
		put(&e->m, "connections_per_request", "", 0, false, after);
		put(&e->m, "requests_per_s", "/s", 0, false, after);
		put(&e->m, "peak_concurrent", "connections", num(x, "peak_concurrent", NULL), true,
		    after);
		if (port_share(root, label, &share))
			put(&e->m, "port_share_peak", "%", 100 * share, true, after);
	}
	json_array_foreach(json_object_get(p, "time_wait_endpoints"), i, x) {
		const char *label = json_string_value(json_object_get(x, "endpoint"));
		struct diff_ep *e;

		if (label && strcmp(label, "other") && (e = ep_of(d, label)))
			put(&e->m, "time_wait_entered", "connections", num(x, "entered", NULL), true,
			    after);
	}
}

/* Whether pid is a target of report root. */
static bool pid_in(json_t *root, long pid)
{
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(root, "processes"), i, p)
		if (json_is_true(json_object_get(p, "target")) && (long)num(p, "pid", NULL) == pid)
			return true;
	return false;
}

/* Target processes of one report into the model. A process traced in both
 * runs (a server left running) is compared with itself; the others are
 * compared per program: pids change between two runs of a load test, and
 * a server's workers share the work in no stable way, so all processes
 * of one comm are summed on each side. */
static void read_procs(struct diff_model *m, json_t *root, json_t *other, bool after)
{
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(root, "processes"), i, p) {
		const char *comm = json_string_value(json_object_get(p, "comm"));
		long pid = (long)num(p, "pid", NULL);
		bool same = pid_in(other, pid);
		struct diff_proc *d = NULL;

		if (!json_is_true(json_object_get(p, "target")) || !comm)
			continue;
		for (int k = 0; k < m->nprocs && !d; k++) {
			struct diff_proc *x = &m->procs[k];

			if (strcmp(x->comm, comm) || x->same != same)
				continue;
			if (!same || x->pid_before == pid)
				d = x;
		}
		if (!d) {
			if (m->nprocs == DIFF_MAX_PROCS)
				continue;
			d = &m->procs[m->nprocs++];
			snprintf(d->comm, sizeof(d->comm), "%s", comm);
			d->same = same;
		}
		if (after) {
			if (!d->nafter++)
				d->pid_after = pid;
		} else if (!d->nbefore++) {
			d->pid_before = pid;
		}
		read_proc(d, root, p, after);
	}
}

static bool listen_label(const char *l)
{
	return !strncmp(l, "listen ", 7);
}

static bool ep_has(const struct diff_ep *e, bool after)
{
	for (int i = 0; i < e->m.n; i++)
		if (after ? e->m.m[i].has_after : e->m.m[i].has_before)
			return true;
	return false;
}

/* A process whose one outgoing (or one listening) endpoint changed its
 * label between the runs, e.g. the server came back on another port: the
 * two rows are the same endpoint, so they are compared as one. */
static void pair_endpoints(struct diff_model *m, struct diff_proc *p)
{
	for (int kind = 0; kind < 2; kind++) {
		int only_b = -1, only_a = -1, nb = 0, na = 0;

		for (int i = 0; i < p->neps; i++) {
			bool b = ep_has(&p->eps[i], false), a = ep_has(&p->eps[i], true);

			if (listen_label(p->eps[i].label) != kind)
				continue;
			if (b && !a)
				only_b = i, nb++;
			if (a && !b)
				only_a = i, na++;
		}
		if (nb != 1 || na != 1 || m->naliases == DIFF_MAX_PROCS)
			continue;
		{
			struct diff_ep *eb = &p->eps[only_b], *ea = &p->eps[only_a];
			char lb[64], la[64];

			memcpy(lb, eb->label, sizeof(lb));
			memcpy(la, ea->label, sizeof(la));
			memcpy(m->alias[m->naliases].before, lb, sizeof(lb));
			memcpy(m->alias[m->naliases].after, la, sizeof(la));
			m->naliases++;
			for (int i = 0; i < ea->m.n; i++)
				put(&eb->m, ea->m.m[i].name, ea->m.m[i].unit, ea->m.m[i].after,
				    ea->m.m[i].has_after, true);
			snprintf(eb->label, sizeof(eb->label), "%.30s / %.30s", lb, la);
			*ea = p->eps[--p->neps];
		}
	}
}

static void read_findings(struct diff_model *m, json_t *root, bool after)
{
	size_t i;
	json_t *f;

	json_array_foreach(json_object_get(root, "findings"), i, f) {
		const char *rule = json_string_value(json_object_get(f, "rule"));
		const char *kind = json_string_value(json_object_get(f, "kind"));
		const char *comm = json_string_value(json_object_get(f, "comm"));
		const char *ep = json_string_value(json_object_get(f, "endpoint"));
		const char *sev = json_string_value(json_object_get(f, "severity"));
		const char *text = json_string_value(json_object_get(f, "text"));
		struct diff_finding *d = NULL;

		/* Reports from before the doctor have "kind" only. */
		rule = rule ? rule : kind ? kind : "?";
		comm = comm ? comm : "";
		ep = ep ? ep : "";
		for (int k = 0; after && k < m->naliases; k++)
			if (!strcmp(ep, m->alias[k].after))
				ep = m->alias[k].before;
		if (after)
			for (int k = 0; k < m->nfindings; k++)
				if (m->findings[k].change == DIFF_CLEARED &&
				    !strcmp(m->findings[k].rule, rule) &&
				    !strcmp(m->findings[k].comm, comm) &&
				    !strcmp(m->findings[k].endpoint, ep))
					d = &m->findings[k];
		if (d) {
			d->change = DIFF_STILL;
		} else {
			if (m->nfindings == DIFF_MAX_FINDINGS)
				return;
			d = &m->findings[m->nfindings++];
			d->change = after ? DIFF_RAISED : DIFF_CLEARED;
			snprintf(d->rule, sizeof(d->rule), "%s", rule);
			snprintf(d->comm, sizeof(d->comm), "%s", comm);
			snprintf(d->endpoint, sizeof(d->endpoint), "%s", ep);
		}
		snprintf(d->severity, sizeof(d->severity), "%s", sev ? sev : "warning");
		snprintf(d->verdict, sizeof(d->verdict), "%s", text ? text : "");
	}
}

static void read_run(struct diff_run *r, json_t *root, const char *path)
{
	json_t *run = json_object_get(root, "run");

	snprintf(r->path, sizeof(r->path), "%s", path);
	snprintf(r->command, sizeof(r->command), "%s",
		 json_string_value(json_object_get(run, "command")));
	r->elapsed_s = num(run, "elapsed_s", NULL);
	/* Reports before load_s: the whole run. */
	r->load_s = json_object_get(run, "load_s") ? num(run, "load_s", NULL) : r->elapsed_s;
}

int diff_load(struct diff_model *m, const char *before, const char *after)
{
	json_t *b = load_report(before, "BEFORE"), *a = b ? load_report(after, "AFTER") : NULL;
	int ret = 2, common = 0;

	memset(m, 0, sizeof(*m));
	if (!a)
		goto out;
	read_run(&m->before, b, before);
	read_run(&m->after, a, after);
	read_procs(m, b, a, false);
	read_procs(m, a, b, true);
	for (int i = 0; i < m->nprocs; i++)
		common += m->procs[i].nbefore && m->procs[i].nafter;
	if (!common) {
		char bc[128] = "", ac[128] = "";

		for (int i = 0; i < m->nprocs; i++) {
			char *dst = m->procs[i].nbefore ? bc : ac;
			size_t used = strlen(dst);

			snprintf(dst + used, 128 - used, "%s%s", used ? "," : "", m->procs[i].comm);
		}
		text_err("connscope diff: %s traced %s but %s traced %s: diff compares two "
			 "runs of the same program (trace it with the same -p/--comm both "
			 "times)\n", before, bc[0] ? bc : "no process", after,
			ac[0] ? ac : "no process");
		goto out;
	}
	for (int i = 0; i < m->nprocs; i++) {
		pair_endpoints(m, &m->procs[i]);
		derive(&m->procs[i].m, m->before.load_s, m->after.load_s);
		for (int k = 0; k < m->procs[i].neps; k++)
			derive(&m->procs[i].eps[k].m, m->before.load_s, m->after.load_s);
	}
	read_findings(m, b, false);
	read_findings(m, a, true);
	ret = 0;
out:
	json_decref(b);
	json_decref(a);
	return ret;
}


/* ---- command line ---------------------------------------------------------- */

static void diff_usage(FILE *out)
{
	fprintf(out,
		"usage: connscope diff BEFORE.json AFTER.json [-j] [--report FILE.html]\n"
		"  compare two runs (`connscope doctor -j` or `connscope attach -j`) of the same\n"
		"  programs: per process and endpoint, connections per request and per\n"
		"  second (held at the start included), requests per second, TIME_WAIT,\n"
		"  port use, fds, each judged better or worse by its direction, and the\n"
		"  findings raised and cleared\n"
		"  -j, --json             the comparison as JSON\n"
		"      --report FILE      also write it as a self-contained HTML page\n"
		"exit status: 0 done, 1 error, 2 bad usage or input\n"
		"examples:\n"
		"  connscope diff before.json after.json\n"
		"      findings cleared, raised and still there; the figures before -> after\n"
		"  connscope diff before.json after.json --report diff.html\n"
		"      the same, also as a web page\n");
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "report", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct diff_model *m;
	const char *html = NULL;
	bool json = false;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'r':
			html = optarg;
			break;
		case 'h':
			diff_usage(stdout);
			return 0;
		default:
			return cli_bad_option("diff", argv);
		}
	}
	if (argc - optind != 2) {
		text_err("connscope diff: give two reports, BEFORE.json AFTER.json (from "
			 "`connscope doctor -j`); got %d file%s\n", argc - optind,
			argc - optind == 1 ? "" : "s");
		return EXIT_USAGE;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return 1;
	ret = diff_load(m, argv[optind], argv[optind + 1]);
	if (ret)
		goto out;
	/* The HTML first, into a temporary renamed when whole (safefile.h):
	 * bad output paths fail before anything is printed. */
	if (html) {
		struct safefile sf;

		ret = safefile_open(&sf, html, "the report", "diff.html");
		if (ret)
			goto out;
		format_diff_html(sf.f, m);
		if (safefile_commit(&sf)) {
			ret = 1;
			goto out;
		}
	}
	if (json)
		format_diff_json(stdout, m);
	else
		format_diff_text(stdout, m);
	ret = fflush(stdout) ? 1 : 0;
out:
	free(m);
	return ret;
}
