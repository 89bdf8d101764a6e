// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdlib.h>
#include <string.h>
#include "heatmap_top.h"
#include "report_tw.h"
#include "text_wrap.h"

struct ep_row {
	struct endpoint_key key;
	struct endpoint_stats st;
};

static int by_entered(const void *a, const void *b)
{
	const struct ep_row *x = a, *y = b;

	if (x->st.tw_entered != y->st.tw_entered)
		return x->st.tw_entered < y->st.tw_entered ? 1 : -1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

/* Endpoints sorted by TIME_WAIT entered; the caller frees. */
static struct ep_row *sorted_endpoints(const struct proc_books *p, size_t *n)
{
	struct ep_row *rows = calloc(p->endpoints.count ? p->endpoints.count : 1, sizeof(*rows));
	const struct endpoint_key *k;
	struct endpoint_stats *es;

	*n = 0;
	if (!rows)
		return NULL;
	/* The map also holds reuse-only endpoints: TIME_WAIT rows only. */
	for (size_t i = 0; hmap_next(&p->endpoints, &i, (const void **)&k, (void **)&es);)
		if (es->tw_entered || es->tw_live_peak)
			rows[(*n)++] = (struct ep_row){ .key = *k, .st = *es };
	qsort(rows, *n, sizeof(*rows), by_entered);
	return rows;
}

static uint64_t hist_quantile_ms(const uint64_t *hist, uint64_t n, double q)
{
	uint64_t want = (uint64_t)(q * n + 0.5), seen = 0;

	for (int b = 0; b < ORPHAN_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= want && hist[b])
			return 2ULL << b;	/* the bucket's upper edge */
	}
	return 0;
}

void format_heatmap_text(FILE *out, const struct heatmap *h, const struct tw_report_opts *o)
{
	struct heatmap_term_opts t = { .width = o->width, .color = o->color, .unicode = o->unicode };

	if (!heatmap_ncols(h) || !heatmap_max(h))
		return;
	fprintf(out, "\n");
	format_heatmap_term(out, h, &t);
}

/* The endpoint maps: the top rows, the rest summed as "other". */
static bool render_heatmap(FILE *out, const struct heatmap *h, const struct tw_report_opts *o)
{
	struct heatmap top;
	struct heatmap_term_opts t = { .width = o->width, .color = o->color,
				       .unicode = o->unicode };

	if (!heatmap_ncols(h) || !heatmap_max(h) || heatmap_top(h, &top, o->top))
		return false;
	fprintf(out, "\n");
	format_heatmap_term(out, &top, &t);
	heatmap_free(&top);
	return true;
}

bool format_tw_text(FILE *out, const struct proc_books *p, const struct tw_report_opts *o)
{
	const struct proc_counters *t = &p->total;
	struct ep_row *rows;
	size_t n;
	char label[64];

	fprintf(out, "  %-13s by this side %llu, by the peer %llu\n", "closed first",
		(unsigned long long)t->closed_active, (unsigned long long)t->closed_passive);
	/* Every close by this side passes through an orphan state for a
	 * moment: the live count and the long-lived ones are what matter, the
	 * number that passed through is context, not an alarm. */
	if (p->orphan_ended || p->truth.orphan) {
		uint64_t longer = 0;

		for (int b = 13; b < ORPHAN_HIST_BUCKETS; b++)	/* from 8192 ms up */
			longer += p->orphan_ms_hist[b];
		fprintf(out, "  %-13s now %u; %llu of the ended stayed longer than 8 s\n",
			"orphans", p->truth.orphan, (unsigned long long)longer);
		text_wrapf(out, FIGURES_INDENT, FIGURES_INDENT, "%llu passed through (normal), "
			   "ended <= %llu ms median, <= %llu ms at most",
			   (unsigned long long)t->orphaned,
			   (unsigned long long)hist_quantile_ms(p->orphan_ms_hist, p->orphan_ended,
								0.5),
			   (unsigned long long)hist_quantile_ms(p->orphan_ms_hist, p->orphan_ended,
								1.0));
	}
	rows = sorted_endpoints(p, &n);
	if (rows && n) {
		uint64_t oe = 0, ol = 0, op = 0;

		fprintf(out, "  TIME_WAIT by endpoint        %9s %7s %7s\n", "entered", "live", "peak");
		for (size_t i = 0; i < n; i++) {
			if ((int)i >= o->top) {
				oe += rows[i].st.tw_entered;
				ol += rows[i].st.tw_live;
				op += rows[i].st.tw_live_peak;
				continue;
			}
			endpoint_format(label, sizeof(label), &rows[i].key);
			endpoint_label_fit(label, 26);
			fprintf(out, "    %-26s %9llu %7u %7u\n", label,
				(unsigned long long)rows[i].st.tw_entered, rows[i].st.tw_live,
				rows[i].st.tw_live_peak);
		}
		if ((int)n > o->top)
			fprintf(out, "    %-26s %9llu %7llu %7llu\n", "other",
				(unsigned long long)oe, (unsigned long long)ol,
				(unsigned long long)op);
	}
	free(rows);
	return format_proc_heatmaps(out, p, o);
}

bool format_proc_heatmaps(FILE *out, const struct proc_books *p, const struct tw_report_opts *o)
{
	bool drawn = false;

	if (p->hm_ready) {
		drawn |= render_heatmap(out, &p->hm_tw, o);
		drawn |= render_heatmap(out, &p->hm_orphan, o);
	}
	return drawn;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/* "WARNING: <what> reached <peak> of net.ipv4.<sysctl> <max> (P%): beyond
 * it the kernel <beyond>", wrapped. */
static void limit_reached(FILE *out, const char *what, uint64_t peak, const char *sysctl,
			  uint64_t max, const char *beyond)
{
	text_wrapf(out, "", "  ", "WARNING: %s reached %llu of net.ipv4.%s %llu (%.0f%%): beyond "
		   "it the kernel %s", what, (unsigned long long)peak, sysctl,
		   (unsigned long long)max, pct(peak, max), beyond);
}

int format_limits_warnings(FILE *out, const struct limits_view *v)
{
	uint32_t ports = netlimits_ports(&v->lim);
	char dest[128];
	int n = 0;

	if (!v->valid)
		return 0;
	if (v->ndests && v->peak_share >= v->warn_share) {
		const struct port_use *u = &v->dests[0];

		port_use_format(dest, sizeof(dest), u);
		text_wrapf(out, "", "  ", "WARNING: port exhaustion: %s used %u of %u ephemeral "
			   "ports (%.0f%%: %u TIME_WAIT, %u established); reuse connections "
			   "(keep-alive pool), widen net.ipv4.ip_local_port_range or allow "
			   "tcp_tw_reuse", dest, u->time_wait + u->established + u->other, ports,
			   100 * u->share, u->time_wait, u->established);
		n++;
	}
	if (v->lim.max_tw_buckets &&
	    v->host_tw_peak >= v->warn_share * v->lim.max_tw_buckets) {
		limit_reached(out, "TIME_WAIT sockets", v->host_tw_peak, "tcp_max_tw_buckets",
			      v->lim.max_tw_buckets, "drops TIME_WAIT (\"time wait bucket table "
			      "overflow\")");
		n++;
	}
	if (v->lim.max_orphans && v->host_orphan_peak >= v->warn_share * v->lim.max_orphans) {
		limit_reached(out, "orphaned sockets", v->host_orphan_peak, "tcp_max_orphans",
			      v->lim.max_orphans, "resets them (\"too many orphaned sockets\")");
		n++;
	}
	return n;
}

void format_limits_text(FILE *out, const struct limits_view *v, const char *sockets_src)
{
	uint32_t ports = netlimits_ports(&v->lim);
	char dest[128];

	if (!v->valid)
		return;
	fprintf(out, "\nlimits (this namespace; %s, /proc/net/sockstat, /proc/sys)\n",
		sockets_src);
	fprintf(out, "  ephemeral ports %u-%u (%u), tcp_tw_reuse %d\n", v->lim.port_lo,
		v->lim.port_hi, ports, v->lim.tw_reuse);
	/* The namespace's sockets, not the traced processes' alone: said, so
	 * another program's destinations are not read as theirs. */
	if (v->ndests)
		fprintf(out, "  busiest destinations of every process in the namespace:\n");
	for (size_t i = 0; i < v->ndests && i < 3; i++) {
		const struct port_use *u = &v->dests[i];

		port_use_format(dest, sizeof(dest), u);
		fprintf(out, "    %-34.34s %6u ports %5.1f%% at peak\n", dest,
			u->time_wait + u->established + u->other, 100 * u->share);
	}
	fprintf(out, "  TIME_WAIT %llu (peak %llu) of tcp_max_tw_buckets %llu (%.1f%%)\n",
		(unsigned long long)v->host_tw, (unsigned long long)v->host_tw_peak,
		(unsigned long long)v->lim.max_tw_buckets, pct(v->host_tw_peak, v->lim.max_tw_buckets));
	if (!v->lim.max_orphans_unread)
		fprintf(out, "  orphans %llu (peak %llu) of tcp_max_orphans %llu (%.1f%%)\n",
			(unsigned long long)v->host_orphan,
			(unsigned long long)v->host_orphan_peak,
			(unsigned long long)v->lim.max_orphans,
			pct(v->host_orphan_peak, v->lim.max_orphans));
	else
		text_wrapf(out, "  ", "    ", "orphans %llu (peak %llu); " ORPHAN_LIMIT_UNKNOWN,
			   (unsigned long long)v->host_orphan,
			   (unsigned long long)v->host_orphan_peak);
	format_limits_warnings(out, v);
}

void json_heatmap(struct json *j, const struct heatmap *h)
{
	json_object_begin(j);
	json_kv_string(j, "kind", h->kind);
	json_kv_string(j, "unit", h->unit);
	json_kv_bool(j, "sampled", h->sampled);
	json_kv_double(j, "t0", 0, 3);
	json_kv_double(j, "bucket_seconds", h->bucket_ns / 1e9, 3);
	json_key(j, "rows");
	json_array_begin(j);
	for (int r = 0; r < h->nrows; r++)
		json_string(j, heatmap_label(h, r));
	json_array_end(j);
	/* cells[row][column] */
	json_key(j, "cells");
	json_array_begin(j);
	for (int r = 0; r < h->nrows; r++) {
		json_array_begin(j);
		for (size_t c = 0; c < heatmap_ncols(h); c++)
			json_uint(j, heatmap_cell(h, r, c));
		json_array_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

void json_tw(struct json *j, const struct proc_books *p, int top)
{
	struct ep_row *rows;
	size_t n;
	char label[64];
	struct heatmap hm;

	json_key(j, "time_wait_endpoints");
	json_array_begin(j);
	rows = sorted_endpoints(p, &n);
	for (size_t i = 0; rows && i < n; i++) {
		uint64_t e = 0, l = 0;

		json_object_begin(j);
		if ((int)i < top) {
			endpoint_format(label, sizeof(label), &rows[i].key);
			json_kv_string(j, "endpoint", label);
			json_kv_string(j, "side", rows[i].key.side == EP_LISTEN ? "listen" : "remote");
			if (rows[i].key.side == EP_LISTEN) {
				char addr[48];

				endpoint_listen_address(addr, sizeof(addr), &rows[i].key);
				json_kv_string(j, "listen_address", addr);
			}
			e = rows[i].st.tw_entered;
			l = rows[i].st.tw_live;
		} else {
			for (; i < n; i++)
				e += rows[i].st.tw_entered, l += rows[i].st.tw_live;
			json_kv_string(j, "endpoint", "other");
			json_kv_string(j, "side", "other");
		}
		json_kv_uint(j, "entered", e);
		json_kv_uint(j, "live", l);
		json_object_end(j);
	}
	free(rows);
	json_array_end(j);

	json_key(j, "orphans");
	json_object_begin(j);
	json_kv_uint(j, "now", p->truth.orphan);
	for (int st = 1; st < CS_TCP_MAX_STATES; st++)
		if (tcp_state_orphanable(st))
			json_kv_uint(j, tcp_state_name(st), p->truth.orphan_state[st]);
	json_kv_uint(j, "ended", p->orphan_ended);
	json_key(j, "stayed_ms_log2");
	json_array_begin(j);
	for (int b = 0; b < ORPHAN_HIST_BUCKETS; b++)
		json_uint(j, p->orphan_ms_hist[b]);
	json_array_end(j);
	json_object_end(j);

	json_key(j, "heatmaps");
	json_object_begin(j);
	if (p->hm_ready) {
		json_key(j, "time_wait");
		if (!heatmap_top(&p->hm_tw, &hm, top)) {
			json_heatmap(j, &hm);
			heatmap_free(&hm);
		} else {
			json_null(j);
		}
		json_key(j, "orphan");
		json_heatmap(j, &p->hm_orphan);
	}
	if (p->hm_reuse_ready) {
		json_key(j, "lifetime");
		json_heatmap(j, &p->hm_lifetime);
		json_key(j, "requests_per_conn");
		json_heatmap(j, &p->hm_rpc);
	}
	json_object_end(j);
}

void json_limits(struct json *j, const struct limits_view *v)
{
	char dest[128];

	json_key(j, "limits");
	json_object_begin(j);
	json_kv_uint(j, "ip_local_port_range_lo", v->lim.port_lo);
	json_kv_uint(j, "ip_local_port_range_hi", v->lim.port_hi);
	json_kv_uint(j, "ephemeral_ports", netlimits_ports(&v->lim));
	json_kv_int(j, "tcp_tw_reuse", v->lim.tw_reuse);
	json_kv_uint(j, "tcp_max_tw_buckets", v->lim.max_tw_buckets);
	json_key(j, "tcp_max_orphans");
	if (!v->lim.max_orphans_unread)
		json_uint(j, v->lim.max_orphans);
	else
		json_null(j);	/* unknown: not readable in this network namespace */
	json_kv_uint(j, "time_wait_host", v->host_tw);
	json_kv_uint(j, "time_wait_host_peak", v->host_tw_peak);
	json_kv_uint(j, "orphans_host", v->host_orphan);
	json_kv_uint(j, "orphans_host_peak", v->host_orphan_peak);
	json_kv_double(j, "warn_share", v->warn_share, 3);
	json_key(j, "busiest_destinations");
	json_array_begin(j);
	for (size_t i = 0; i < v->ndests && i < LIMITS_TOP_DESTS; i++) {
		port_use_format(dest, sizeof(dest), &v->dests[i]);
		json_object_begin(j);
		json_kv_string(j, "destination", dest);
		json_kv_uint(j, "time_wait", v->dests[i].time_wait);
		json_kv_uint(j, "established", v->dests[i].established);
		json_kv_uint(j, "other", v->dests[i].other);
		json_kv_double(j, "share", v->dests[i].share, 4);
		json_object_end(j);
	}
	json_array_end(j);
	json_kv_bool(j, "port_exhaustion_warning", v->ndests && v->peak_share >= v->warn_share);
	json_object_end(j);
}

bool tw_balance_rest(char *buf, size_t len, const struct proc_counters *t, uint64_t live)
{
	uint64_t seen = t->tw_expired + t->tw_killed + t->tw_end_unseen + live;

	if (t->tw_entered > seen)
		snprintf(buf, len, "%llu more: not in the end's socket dump",
			 (unsigned long long)(t->tw_entered - seen));
	else if (t->tw_entered < seen)
		snprintf(buf, len, "%llu of these entered before the run (held at start)",
			 (unsigned long long)(seen - t->tw_entered));
	return t->tw_entered != seen;
}
