// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* `connscope diff` renderers: the model of diff.c as text, JSON and one
 * self-contained HTML page. Pure functions of the model. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "diff_report.h"
#include "json.h"
#include "html_text.h"
#include "report_findings.h"
#include "text_wrap.h"

double diff_ratio(const struct diff_metric *x)
{
	/* A ratio of a negative or zero start (fd growth) means nothing. */
	if (!x->has_before || !x->has_after || x->before <= 0 || x->after < 0)
		return NAN;
	return x->after / x->before;
}

const char *diff_judge(const struct diff_metric *x)
{
	double r = diff_ratio(x);

	/* A figure that went from 0 (resets, failures) compares too. */
	if (isnan(r) && x->has_before && x->has_after && x->before == 0 && x->after > 0)
		r = INFINITY;
	/* Within DIFF_SAME_BAND of no change is no judgement: two runs of
	 * one load on a shared machine differ by that much (requests per
	 * second 2996 -> 2994 is not worse). */
	if (isnan(r) || fabs(r - 1) < DIFF_SAME_BAND || x->better == DIFF_NEUTRAL)
		return "";
	return (r < 1) == (x->better == DIFF_LOWER_BETTER) ? "better" : "worse";
}

static const char *change_name(int c)
{
	return c == DIFF_CLEARED ? "cleared" : c == DIFF_RAISED ? "raised" : "still";
}

static void fmt(char *buf, size_t len, const struct diff_metric *x, bool after)
{
	double v = after ? x->after : x->before;

	if (v == 0)
		v = 0;	/* -0 (a flat fd count's growth) reads 0 */
	if (!(after ? x->has_after : x->has_before))
		snprintf(buf, len, "-");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

static void ratio_text(char *buf, size_t len, const struct diff_metric *x)
{
	double r = diff_ratio(x);

	if (isnan(r))
		snprintf(buf, len, "%s", "");
	else if (r == 1)
		snprintf(buf, len, "same");
	else
		snprintf(buf, len, "x%.3g", r);
}

static void text_metrics(FILE *out, const struct diff_metrics *m, const char *indent)
{
	char b[32], a[32], r[32];

	for (int i = 0; i < m->n; i++) {
		const struct diff_metric *x = &m->m[i];

		fmt(b, sizeof(b), x, false);
		fmt(a, sizeof(a), x, true);
		ratio_text(r, sizeof(r), x);
		fprintf(out, "%s%-26s %12s -> %-12s %s%s%s\n", indent, x->name, b, a, r,
			*diff_judge(x) ? " " : "", diff_judge(x));
	}
}

void format_diff_text(FILE *out, const struct diff_model *m)
{
	int counts[3] = { 0 };

	fprintf(out, "connscope diff: %s (%s, %.1f s) -> %s (%s, %.1f s)\n", m->before.path,
		m->before.command, m->before.elapsed_s, m->after.path, m->after.command,
		m->after.elapsed_s);
	for (int i = 0; i < m->nfindings; i++)
		counts[m->findings[i].change + 1]++;
	fprintf(out, "\nFindings: %d cleared, %d raised, %d still there\n", counts[0], counts[2],
		counts[1]);
	for (int i = 0; i < m->nfindings; i++) {
		const struct diff_finding *f = &m->findings[i];

		fprintf(out, "  %-8s [%s] %s  %s%s%s\n", change_name(f->change), f->severity,
			f->rule, f->comm, f->endpoint[0] ? "  " : "", f->endpoint);
		text_wrap(out, "           ", "           ", f->verdict);
	}
	for (int i = 0; i < m->nprocs; i++) {
		const struct diff_proc *p = &m->procs[i];

		if (p->nbefore > 1 || p->nafter > 1)
			fprintf(out, "\n%s (%d processes -> %d, summed)\n", p->comm, p->nbefore,
				p->nafter);
		else
			fprintf(out, "\n%s (PID %ld -> %ld)\n", p->comm, p->pid_before, p->pid_after);
		fprintf(out, "  %-26s %12s    %-12s %s\n", "", "before", "after", "after/before");
		text_metrics(out, &p->m, "  ");
		for (int k = 0; k < p->neps; k++) {
			fprintf(out, "  endpoint %s\n", p->eps[k].label);
			text_metrics(out, &p->eps[k].m, "    ");
		}
	}
}

static void json_metrics(struct json *j, const struct diff_metrics *m)
{
	json_key(j, "metrics");
	json_object_begin(j);
	for (int i = 0; i < m->n; i++) {
		const struct diff_metric *x = &m->m[i];
		double r = diff_ratio(x);

		json_key(j, x->name);
		json_object_begin(j);
		json_key(j, "before");
		if (x->has_before)
			json_double(j, x->before, 6);
		else
			json_null(j);
		json_key(j, "after");
		if (x->has_after)
			json_double(j, x->after, 6);
		else
			json_null(j);
		json_key(j, "ratio");
		if (isnan(r))
			json_null(j);
		else
			json_double(j, r, 6);
		json_kv_string(j, "unit", x->unit);
		/* better / worse by the figure's direction, "" for none. */
		json_kv_string(j, "judgement", diff_judge(x));
		json_object_end(j);
	}
	json_object_end(j);
}

static void json_run(struct json *j, const char *key, const struct diff_run *r)
{
	json_key(j, key);
	json_object_begin(j);
	json_kv_string(j, "file", r->path);
	json_kv_string(j, "command", r->command);
	json_kv_double(j, "elapsed_s", r->elapsed_s, 3);
	json_object_end(j);
}

void format_diff_json(FILE *out, const struct diff_model *m)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_kv_string(&j, "command", "diff");
	json_run(&j, "before", &m->before);
	json_run(&j, "after", &m->after);
	json_key(&j, "findings");
	json_array_begin(&j);
	for (int i = 0; i < m->nfindings; i++) {
		const struct diff_finding *f = &m->findings[i];

		json_object_begin(&j);
		json_kv_string(&j, "change", change_name(f->change));
		json_kv_string(&j, "rule", f->rule);
		json_kv_string(&j, "severity", f->severity);
		json_kv_string(&j, "comm", f->comm);
		json_kv_string(&j, "endpoint", f->endpoint);
		json_kv_string(&j, "text", f->verdict);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "processes");
	json_array_begin(&j);
	for (int i = 0; i < m->nprocs; i++) {
		const struct diff_proc *p = &m->procs[i];

		json_object_begin(&j);
		json_kv_string(&j, "comm", p->comm);
		json_kv_int(&j, "pid_before", p->pid_before);
		json_kv_int(&j, "pid_after", p->pid_after);
		json_kv_int(&j, "processes_before", p->nbefore);
		json_kv_int(&j, "processes_after", p->nafter);
		json_kv_bool(&j, "same_process", p->same);
		json_metrics(&j, &p->m);
		json_key(&j, "endpoints");
		json_array_begin(&j);
		for (int k = 0; k < p->neps; k++) {
			json_object_begin(&j);
			json_kv_string(&j, "endpoint", p->eps[k].label);
			json_metrics(&j, &p->eps[k].m);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void html_metrics(FILE *out, const struct diff_metrics *m)
{
	char b[32], a[32], r[32];

	fputs("<table>\n<thead><tr><th class=\"l\">measure</th><th>before</th><th>after</th>"
	      "<th>after/before</th></tr></thead>\n<tbody>\n", out);
	for (int i = 0; i < m->n; i++) {
		const struct diff_metric *x = &m->m[i];
		fmt(b, sizeof(b), x, false);
		fmt(a, sizeof(a), x, true);
		ratio_text(r, sizeof(r), x);
		/* Coloured by whether the change is good for that figure
		 * (fewer requests is not green), not by its direction. */
		fprintf(out, "<tr data-metric=\"%s\"><td class=\"l\">%s</td><td data-k=\"before\">"
			     "%s</td><td data-k=\"after\">%s</td><td class=\"%s\">%s</td></tr>\n",
			x->name, x->name, b, a, diff_judge(x), r);
	}
	fputs("</tbody>\n</table>\n", out);
}

void format_diff_html(FILE *out, const struct diff_model *m)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<title>connscope diff</title>\n<style>\n"
	      "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#111827}\n"
	      "table{border-collapse:collapse;margin:6px 0 14px}\n"
	      "td,th{padding:3px 10px;text-align:right;border-bottom:1px solid #e5e7eb}\n"
	      ".l{text-align:left}.better{color:#15803d}.worse{color:#b91c1c}\n"
	      ".finding{border-left:6px solid #9ca3af;padding:6px 12px;margin:8px 0;"
	      "background:#f9fafb}\n"
	      ".finding.cleared{border-color:#16a34a}.finding.raised{border-color:#dc2626}\n"
	      ".mono{font-family:ui-monospace,monospace}\n</style>\n</head>\n<body>\n"
	      "<h1>connscope diff</h1>\n<p>", out);
	html_esc(out, m->before.path);
	fprintf(out, " (%s, %.1f s) &rarr; ", m->before.command, m->before.elapsed_s);
	html_esc(out, m->after.path);
	fprintf(out, " (%s, %.1f s)</p>\n<section id=\"findings\">\n<h2>Findings</h2>\n",
		m->after.command, m->after.elapsed_s);
	if (!m->nfindings)
		fputs("<p>no finding in either run</p>\n", out);
	for (int i = 0; i < m->nfindings; i++) {
		const struct diff_finding *f = &m->findings[i];

		fprintf(out, "<div class=\"finding %s\" data-change=\"%s\" data-rule=\"",
			change_name(f->change), change_name(f->change));
		html_esc(out, f->rule);
		fprintf(out, "\"><b>%s</b> [", change_name(f->change));
		html_esc(out, f->severity);
		fputs("] ", out);
		html_esc(out, f->rule);
		fputs(" &middot; ", out);
		html_esc(out, f->comm);
		fputs(" <span class=\"mono\">", out);
		html_esc(out, f->endpoint);
		fputs("</span><br>", out);
		html_esc(out, f->verdict);
		fputs("</div>\n", out);
	}
	fputs("</section>\n", out);
	for (int i = 0; i < m->nprocs; i++) {
		const struct diff_proc *p = &m->procs[i];

		fputs("<section class=\"proc\">\n<h2>", out);
		html_esc(out, p->comm);
		if (p->nbefore > 1 || p->nafter > 1)
			fprintf(out, " <small>%d processes &rarr; %d, summed</small></h2>\n",
				p->nbefore, p->nafter);
		else
			fprintf(out, " <small>PID %ld &rarr; %ld</small></h2>\n", p->pid_before,
				p->pid_after);
		html_metrics(out, &p->m);
		for (int k = 0; k < p->neps; k++) {
			fputs("<h3 class=\"mono\">", out);
			html_esc(out, p->eps[k].label);
			fputs("</h3>\n", out);
			html_metrics(out, &p->eps[k].m);
		}
		fputs("</section>\n", out);
	}
	fputs("</body>\n</html>\n", out);
}
