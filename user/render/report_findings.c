// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The Findings section of every report (doctor, attach text/JSON/HTML):
 * what the rules found, worst first, each with its verdict, evidence and
 * fix; or the healthy verdict with its key numbers. Pure functions of the
 * books and the run facts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "doctor.h"
#include "tcp_books.h"
#include "run_info.h"
#include "report_findings.h"
#include "text_wrap.h"
#include "html_text.h"

/* Findings of the run; the caller frees. */
static struct finding *findings_of(const struct agg *a, const struct run_info *run, size_t *n,
				   char *healthy, size_t hlen)
{
	struct finding *f = calloc(DR_MAX_FINDINGS, sizeof(*f));

	*n = f ? doctor_findings(a, run, f, DR_MAX_FINDINGS, healthy, hlen) : 0;
	return f;
}

/* 1234, 0.25, 12.5: what the workload knows exactly stays an integer. */
static void fmt_value(char *buf, size_t len, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

/* "  apache2 x4 (PIDs 200, 201, 202, 203)": a service of several
 * processes, the first DR_MAX_PIDS of them named. */
static int service_head(char *buf, size_t len, const struct finding *x)
{
	uint32_t shown = x->npids < DR_MAX_PIDS ? x->npids : DR_MAX_PIDS;
	int used = snprintf(buf, len, "  %s x%u (PIDs", x->comm, x->npids);

	for (uint32_t i = 0; i < shown && used < (int)len; i++)
		used += snprintf(buf + used, len - used, "%s %d", i ? "," : "", x->pids[i]);
	if (used < (int)len)
		used += snprintf(buf + used, len - used, "%s)", shown < x->npids ? ", ..." : "");
	return used < (int)len ? used : (int)len - 1;
}

/* The doctor's own cost, said after the findings of every doctor run: a
 * finding (agent_cost) only once it could move a verdict. 0: nothing to
 * say (not the doctor). */
static int cost_footer(char *buf, size_t len, const struct run_info *run)
{
	const struct agent_cost *c;
	double share;

	if (!run->doctor || !run->doctor->doctor_mode)
		return 0;
	c = &run->doctor->cost;
	share = dr_cost_share(c);
	if (!c->valid)
		return snprintf(buf, len, "agent cost: unknown (BPF run-time stats could not be "
				"turned on)");
	if (share < 0)
		return snprintf(buf, len, "agent cost: BPF %.3f s; the traced processes used "
				"%.3f s of CPU, too little to compare", c->bpf_s,
				c->targets_cpu_s);
	return snprintf(buf, len, "agent cost: connscope's BPF programs ran %.3f s in the "
			"%.1f s measured, %.1f%% of the CPU the traced processes used (an "
			"upper bound)%s%.0f%s", c->bpf_s, c->stats_s, 100 * share,
			share < DR_COST_DISTORT ? ": under " : ": ", 100 * DR_COST_DISTORT,
			share < DR_COST_DISTORT ? "%, no verdict above moves" :
			"% or more, see agent_cost above");
}

void format_findings_section(FILE *out, const struct agg *a, const struct run_info *run)
{
	char healthy[1024], v[32];
	size_t n;
	struct finding *f = findings_of(a, run, &n, healthy, sizeof(healthy));

	if (!f)
		return;
	fprintf(out, "\nFindings (%zu, worst first)\n", n);
	if (!n)
		text_wrap(out, "  ", "  ", healthy);
	for (size_t i = 0; i < n; i++) {
		const struct finding *x = &f[i];
		char head[160], first[32];
		int used;

		used = snprintf(head, sizeof(head), "[%s] %s", dr_severity_name(x->severity),
				x->rule);
		if (x->pid)
			used += snprintf(head + used, sizeof(head) - used, "  PID %d (%s)", x->pid,
					 x->comm);
		else if (x->npids)
			used += service_head(head + used, sizeof(head) - used, x);
		if (x->endpoint[0])
			snprintf(head + used, sizeof(head) - used, "  %s", x->endpoint);
		snprintf(first, sizeof(first), "\n  %zu. ", i + 1);
		text_wrap(out, first, "     ", head);
		text_wrap(out, "     ", "     ", x->verdict);
		fprintf(out, "     evidence:\n");
		for (int k = 0; k < x->nev; k++) {
			fmt_value(v, sizeof(v), x->ev[k].value);
			fprintf(out, "       %-28s %10s %-11s (%s)\n", x->ev[k].name, v,
				x->ev[k].unit, x->ev[k].source);
		}
		text_wrap(out, "     fix: ", "     ", x->fix);
	}
	if (cost_footer(healthy, sizeof(healthy), run) > 0)
		text_wrap(out, "\n  ", "  ", healthy);
	free(f);
}

static void json_finding(struct json *j, const struct finding *x)
{
	json_object_begin(j);
	json_kv_string(j, "rule", x->rule);
	json_kv_string(j, "kind", x->rule);	/* the name attach's findings had */
	json_kv_string(j, "severity", dr_severity_name(x->severity));
	json_kv_int(j, "pid", x->pid);
	json_kv_string(j, "comm", x->comm);
	if (x->npids) {
		/* A service: every process accepting on its listener. */
		json_kv_uint(j, "processes", x->npids);
		json_key(j, "pids");
		json_array_begin(j);
		for (uint32_t i = 0; i < x->npids && i < DR_MAX_PIDS; i++)
			json_int(j, x->pids[i]);
		json_array_end(j);
	}
	json_kv_string(j, "endpoint", x->endpoint);
	json_kv_string(j, "verdict", x->verdict);
	json_kv_string(j, "text", x->verdict);
	json_kv_string(j, "fix", x->fix);
	if (!strcmp(x->rule, "churn")) {
		json_kv_uint(j, "connections", x->connections);
		json_kv_uint(j, "requests", x->requests);
		json_kv_uint(j, "concurrency", x->concurrency);
	}
	json_key(j, "evidence");
	json_array_begin(j);
	for (int k = 0; k < x->nev; k++) {
		json_object_begin(j);
		json_kv_string(j, "name", x->ev[k].name);
		if (x->ev[k].value == floor(x->ev[k].value) && fabs(x->ev[k].value) < 1e15)
			json_kv_int(j, "value", (int64_t)x->ev[k].value);
		else
			json_kv_double(j, "value", x->ev[k].value, 6);
		json_kv_string(j, "unit", x->ev[k].unit);
		json_kv_string(j, "source", x->ev[k].source);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

void json_findings_section(struct json *j, const struct agg *a, const struct run_info *run)
{
	char healthy[1024];
	size_t n;
	struct finding *f = findings_of(a, run, &n, healthy, sizeof(healthy));
	const struct doctor_run *d = run->doctor;

	json_key(j, "findings");
	json_array_begin(j);
	for (size_t i = 0; f && i < n; i++)
		json_finding(j, &f[i]);
	json_array_end(j);
	json_key(j, "doctor");
	json_object_begin(j);
	json_kv_bool(j, "healthy", f && !n);
	json_kv_string(j, "verdict", f && !n ? healthy : "");
	json_kv_bool(j, "fd_errors_counted", d && d->fderr_counted);
	if (d) {
		json_key(j, "listeners");
		json_array_begin(j);
		for (size_t i = 0; i < d->nlisteners; i++) {
			const struct listen_sample *l = &d->listeners[i];

			json_object_begin(j);
			json_kv_int(j, "pid", l->pid);
			struct endpoint_key k = { .family = l->family, .side = EP_LISTEN,
						  .port = l->port };
			char addr[48];

			memcpy(k.addr, l->addr, sizeof(k.addr));
			endpoint_listen_address(addr, sizeof(addr), &k);
			json_kv_uint(j, "port", l->port);
			json_kv_string(j, "address", addr);
			json_kv_uint(j, "backlog", l->backlog);
			json_kv_uint(j, "accept_queue_now", l->queue_now);
			json_kv_uint(j, "accept_queue_peak", l->queue_peak);
			json_kv_uint(j, "samples", l->samples);
			json_kv_uint(j, "samples_full", l->samples_full);
			json_object_end(j);
		}
		json_array_end(j);
		json_key(j, "netstat");
		json_array_begin(j);
		for (size_t i = 0; i < d->nns; i++) {
			const struct netstat_ns *s = &d->ns[i];

			json_object_begin(j);
			json_kv_uint(j, "netns", s->ns_ino);
			json_kv_uint(j, "listen_overflows", s->overflows_last - s->overflows_first);
			json_kv_uint(j, "listen_drops", s->drops_last - s->drops_first);
			json_kv_uint(j, "listen_overflows_peak_interval", s->overflows_peak_interval);
			json_object_end(j);
		}
		json_array_end(j);
		if (d->cost.valid) {
			json_key(j, "agent_cost");
			json_object_begin(j);
			json_kv_double(j, "bpf_run_time_s", d->cost.bpf_s, 6);
			json_kv_uint(j, "bpf_runs", d->cost.bpf_runs);
			json_kv_double(j, "agent_cpu_s", d->cost.agent_cpu_s, 6);
			json_kv_double(j, "targets_cpu_s", d->cost.targets_cpu_s, 6);
			/* The share of the targets' CPU, null when too little to
			 * compare; a finding (distorts) from DR_COST_DISTORT. */
			json_key(j, "cost_share_pct");
			if (dr_cost_share(&d->cost) < 0)
				json_null(j);
			else
				json_double(j, 100 * dr_cost_share(&d->cost), 3);
			json_kv_bool(j, "distorts", d->doctor_mode &&
				     dr_cost_share(&d->cost) >= DR_COST_DISTORT);
			json_object_end(j);
		}
	}
	json_object_end(j);
	free(f);
}

/* ---- HTML ---------------------------------------------------------------- */

const char html_findings_css[] =
	".finding .sev{font-weight:600;margin-right:6px}\n"
	".finding .sev-critical{color:#dc2626}\n"
	".finding .fe{font-size:12.5px;margin:6px 0;border-collapse:collapse;width:auto}\n"
	".finding .fe td{padding:1px 10px 1px 0}\n"
	".finding .ff{font-size:13.5px;margin:4px 0 0}\n"
	".healthy{background:#f0fdf4;border:1px solid #bbf7d0;border-left:6px solid #16a34a;"
	"border-radius:8px;padding:10px 14px;margin:18px 0}\n";

size_t html_findings_section(FILE *out, const struct agg *a, const struct run_info *run)
{
	char healthy[1024], v[32];
	size_t n;
	struct finding *f = findings_of(a, run, &n, healthy, sizeof(healthy));

	if (!f)
		return 0;
	if (!n) {
		fputs("<section id=\"healthy\" aria-label=\"no findings\">\n<p class=\"healthy\" "
		      "data-k=\"healthy\">", out);
		html_esc(out, healthy);
		fputs("</p>\n", out);
		if (cost_footer(healthy, sizeof(healthy), run) > 0) {
			fputs("<p class=\"muted\" data-k=\"agent_cost_footer\">", out);
			html_esc(out, healthy);
			fputs("</p>\n", out);
		}
		fputs("</section>\n", out);
		free(f);
		return 0;
	}
	fprintf(out, "<section id=\"findings\" aria-label=\"findings\">\n<h2>%zu finding%s</h2>\n",
		n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const struct finding *x = &f[i];

		/* The same verdict text as the JSON's findings[].text. */
		fprintf(out, "<div class=\"finding\" id=\"finding-%zu\" data-kind=\"", i + 1);
		html_esc(out, x->rule);
		fprintf(out, "\" data-pid=\"%d\" data-endpoint=\"", x->pid);
		html_esc(out, x->endpoint);
		fputs("\">\n<div class=\"fh\"><span class=\"fk\">", out);
		html_esc(out, x->rule);
		fprintf(out, "</span><span class=\"sev sev-%s\" data-k=\"severity\">%s</span>",
			dr_severity_name(x->severity), dr_severity_name(x->severity));
		if (x->pid) {
			/* churn points at the reuse table, the rest at the process row */
			fprintf(out, " &middot; <a href=\"#%s-%d\">PID %d (",
				strcmp(x->rule, "churn") ? "proc" : "reuse", x->pid, x->pid);
			html_esc_n(out, x->comm, sizeof(x->comm));
			fputs(")</a>", out);
		} else if (x->npids) {
			fputs(" &middot; ", out);
			html_esc_n(out, x->comm, sizeof(x->comm));
			fprintf(out, " &times;%u", x->npids);
		}
		if (x->endpoint[0]) {
			fputs(" &rarr; <span class=\"mono\">", out);
			html_esc(out, x->endpoint);
			fputs("</span>", out);
		}
		fputs("</div>\n<p class=\"ft\" data-k=\"text\">", out);
		html_esc(out, x->verdict);
		fputs("</p>\n<table class=\"fe\">", out);
		for (int k = 0; k < x->nev; k++) {
			fmt_value(v, sizeof(v), x->ev[k].value);
			fputs("<tr><td>", out);
			html_esc(out, x->ev[k].name);
			fprintf(out, "</td><td class=\"mono\" data-ev=\"");
			html_esc(out, x->ev[k].name);
			fprintf(out, "\">%s</td><td>", v);
			html_esc(out, x->ev[k].unit);
			fputs("</td><td class=\"muted\">", out);
			html_esc(out, x->ev[k].source);
			fputs("</td></tr>", out);
		}
		fputs("</table>\n<p class=\"ff\"><b>fix:</b> ", out);
		html_esc(out, x->fix);
		fputs("</p>\n</div>\n", out);
	}
	if (cost_footer(healthy, sizeof(healthy), run) > 0) {
		fputs("<p class=\"muted\" data-k=\"agent_cost_footer\">", out);
		html_esc(out, healthy);
		fputs("</p>\n", out);
	}
	fputs("</section>\n", out);
	free(f);
	return n;
}
