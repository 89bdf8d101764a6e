// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <string.h>
#include "report_cost.h"
#include "json.h"

#define ULL(x) ((unsigned long long)(x))

uint64_t cost_connections(const struct agg *a)
{
	const struct proc_books *p;
	/* The exporter deletes the books of gone processes: what they
	 * counted stays in the total, which is a counter. */
	uint64_t n = a->ends_dropped;

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);)
		n += p->total.opened + p->total.accepted;
	return n;
}

static bool valid(const struct agent_cost *c)
{
	return c && c->valid;
}

/* BPF run time per connection end seen while it was measured; -1 none. */
static double bpf_ns_per_conn(const struct agent_cost *c)
{
	return c->stats_conns ? c->bpf_s * 1e9 / c->stats_conns : -1;
}

/* "1 interval in 10: 3.0 s of 30.1 s" */
static void measured_when(char *buf, size_t len, const struct agent_cost *c)
{
	if (!c->every)
		snprintf(buf, len, "not measured (--cost-every 0)");
	else
		snprintf(buf, len, "%s%u: %.1f s of %.1f s", c->every == 1 ? "every interval, 1 in "
			 : "1 interval in ", c->every, c->stats_s, c->window_s);
}

void format_cost_text(FILE *out, const struct agent_cost *c, const struct agg *a)
{
	uint64_t conns = cost_connections(a);
	char when[64];
	int w = 16;

	if (!valid(c)) {
		fprintf(out, "agent cost: unknown (BPF run-time stats could not be turned on)\n");
		return;
	}
	fprintf(out, "agent cost: BPF %.6f s in %llu runs, agent CPU %.3f s\n", c->bpf_s,
		ULL(c->bpf_runs), c->agent_cpu_s);
	measured_when(when, sizeof(when), c);
	fprintf(out, "  BPF run time measured %s\n", when);
	if (c->stats_conns)
		fprintf(out, "  BPF a connection end: %.0f ns (%llu ends measured)\n",
			bpf_ns_per_conn(c), ULL(c->stats_conns));
	if (conns)
		fprintf(out, "  agent CPU a connection end: %.2f us (%llu ends)\n",
			c->agent_cpu_s * 1e6 / conns, ULL(conns));
	/* Names in one column as wide as the longest (whole names now, up
	 * to 23 characters: handle_set_state_nested). */
	for (size_t i = 0; i < c->nprogs; i++)
		if (c->progs[i].runs && (int)strlen(c->progs[i].name) > w)
			w = (int)strlen(c->progs[i].name);
	for (size_t i = 0; i < c->nprogs; i++) {
		const struct prog_cost *p = &c->progs[i];

		if (!p->runs)
			continue;
		fprintf(out, "  %-*s %10.6f s %10llu runs %6.0f ns/run\n", w, p->name,
			p->run_ns / 1e9, ULL(p->runs), (double)p->run_ns / p->runs);
	}
}

void json_cost(struct json *j, const struct agent_cost *c, const struct agg *a)
{
	uint64_t conns = cost_connections(a), ns;

	json_key(j, "cost");
	if (!valid(c)) {
		json_null(j);
		return;
	}
	ns = (uint64_t)(c->bpf_s * 1e9 + 0.5);
	json_object_begin(j);
	json_kv_string(j, "source", "BPF run-time stats (BPF_ENABLE_STATS, bpf_prog_info "
				    "run_time_ns/run_cnt of connscope's own programs) in the "
				    "intervals measured (stats_s), getrusage");
	json_kv_double(j, "window_s", c->window_s, 3);
	json_kv_uint(j, "cost_every", c->every);
	json_kv_double(j, "stats_s", c->stats_s, 3);
	json_kv_uint(j, "stats_connections", c->stats_conns);
	json_kv_uint(j, "bpf_run_time_ns", ns);
	json_kv_uint(j, "bpf_runs", c->bpf_runs);
	json_kv_double(j, "agent_cpu_s", c->agent_cpu_s, 6);
	json_kv_double(j, "targets_cpu_s", c->targets_cpu_s, 6);
	json_kv_uint(j, "connections", conns);
	if (c->stats_conns) {
		json_kv_double(j, "bpf_ns_per_connection", (double)ns / c->stats_conns, 1);
	} else {
		json_key(j, "bpf_ns_per_connection");
		json_null(j);
	}
	if (conns) {
		json_kv_double(j, "agent_cpu_us_per_connection", c->agent_cpu_s * 1e6 / conns, 3);
	} else {
		json_key(j, "agent_cpu_us_per_connection");
		json_null(j);
	}
	json_key(j, "programs");
	json_array_begin(j);
	for (size_t i = 0; i < c->nprogs; i++) {
		const struct prog_cost *p = &c->progs[i];

		json_object_begin(j);
		json_kv_string(j, "name", p->name);
		json_kv_uint(j, "id", p->id);
		json_kv_uint(j, "run_time_ns", p->run_ns);
		json_kv_uint(j, "runs", p->runs);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

size_t prom_cost_series(const struct agent_cost *c)
{
	return valid(c) ? 2 * c->nprogs + 5 : 0;
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void prom_cost(FILE *out, const struct agent_cost *c, const struct agg *a)
{
	uint64_t conns = cost_connections(a);

	if (!valid(c))
		return;
	/* Program names are C function names: [A-Za-z0-9_], no escaping. */
	family(out, "connscope_bpf_program_run_seconds_total", "counter",
	       "Run time of each of connscope's BPF programs (BPF run-time stats), in the "
	       "intervals measured (connscope_bpf_stats_seconds_total)");
	for (size_t i = 0; i < c->nprogs; i++)
		fprintf(out, "connscope_bpf_program_run_seconds_total{program=\"%s\"} %.9f\n",
			c->progs[i].name, c->progs[i].run_ns / 1e9);
	family(out, "connscope_bpf_program_runs_total", "counter",
	       "Runs of each of connscope's BPF programs (BPF run-time stats), in the "
	       "intervals measured");
	for (size_t i = 0; i < c->nprogs; i++)
		fprintf(out, "connscope_bpf_program_runs_total{program=\"%s\"} %llu\n",
			c->progs[i].name, ULL(c->progs[i].runs));
	family(out, "connscope_bpf_stats_seconds_total", "counter",
	       "How long BPF run-time stats were on (one interval in --cost-every): the "
	       "program counters cover these seconds only");
	fprintf(out, "connscope_bpf_stats_seconds_total %.3f\n", c->stats_s);
	family(out, "connscope_agent_cpu_seconds_total", "counter",
	       "connscope's own user+system CPU (getrusage)");
	fprintf(out, "connscope_agent_cpu_seconds_total %.6f\n", c->agent_cpu_s);
	family(out, "connscope_cost_per_connection_seconds", "gauge",
	       "connscope's cost per traced connection end (opened or accepted) so far: part="
	       "\"bpf\" its BPF programs' run time (per end in the intervals measured), "
	       "part=\"agent\" its own CPU");
	fprintf(out, "connscope_cost_per_connection_seconds{part=\"bpf\"} %.9f\n",
		c->stats_conns ? c->bpf_s / c->stats_conns : 0);
	fprintf(out, "connscope_cost_per_connection_seconds{part=\"agent\"} %.9f\n",
		conns ? c->agent_cpu_s / conns : 0);
	family(out, "connscope_traced_connections_total", "counter",
	       "Connection ends the books saw opened or accepted (what the cost is per)");
	fprintf(out, "connscope_traced_connections_total %llu\n", ULL(conns));
}

void html_cost_facts(FILE *out, const struct agent_cost *c, const struct agg *a)
{
	uint64_t conns = cost_connections(a);
	size_t idle = 0;
	char when[64];

	if (!valid(c)) {
		fputs("<dt>agent cost</dt><dd><span class=\"none\">unknown (BPF run-time stats "
		      "could not be turned on)</span></dd>\n", out);
		return;
	}
	fprintf(out, "<dt>agent cost</dt><dd data-k=\"agent_cost\">BPF <span data-k=\"bpf_run_s\">"
		     "%.6f</span> s in %llu runs, agent CPU <span data-k=\"agent_cpu_s\">%.3f</span> "
		     "s", c->bpf_s, ULL(c->bpf_runs), c->agent_cpu_s);
	measured_when(when, sizeof(when), c);
	fprintf(out, "; BPF run time measured %s", when);
	if (c->stats_conns)
		fprintf(out, "; BPF a connection end <span data-k=\"bpf_ns_per_conn\">%.0f</span> ns "
			     "(%llu measured)", bpf_ns_per_conn(c), ULL(c->stats_conns));
	if (conns)
		fprintf(out, "; agent CPU a connection end %.2f &micro;s (%llu)",
			c->agent_cpu_s * 1e6 / conns, ULL(conns));
	/* The table on a row of its own, across the panel: whole program
	 * names are wider than half of it. */
	fputs("</dd>\n<dt class=\"wide\">BPF programs</dt><dd class=\"wide\"><div class=\"scroll\">"
	      "<table class=\"ep\" id=\"bpf-programs\"><thead>"
	      "<tr><th class=\"l\">program</th><th>run time s</th><th>runs</th><th>ns/run</th>"
	      "</tr></thead><tbody>\n", out);
	for (size_t i = 0; i < c->nprogs; i++) {
		const struct prog_cost *p = &c->progs[i];

		if (!p->runs) {
			idle++;
			continue;
		}
		/* Names are C function names: [A-Za-z0-9_], nothing to escape. */
		fprintf(out, "<tr><td class=\"l mono\">%s</td><td>%.6f</td><td>%llu</td><td>%.0f"
			     "</td></tr>\n", p->name, p->run_ns / 1e9, ULL(p->runs),
			(double)p->run_ns / p->runs);
	}
	/* Those that never ran in the intervals measured (the fd programs of
	 * syscalls the targets did not make): named in one row, or with
	 * --fd-sites the table is as tall as the rest of the page. */
	if (idle) {
		fprintf(out, "<tr data-k=\"programs_idle\"><td class=\"l\" colspan=\"4\" "
			     "style=\"white-space:normal;max-width:60em\">%zu did not run: ", idle);
		for (size_t i = 0, k = 0; i < c->nprogs; i++)
			if (!c->progs[i].runs)
				fprintf(out, "%s<span class=\"mono\">%s</span>", k++ ? ", " : "",
					c->progs[i].name);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></div></dd>\n", out);
}
