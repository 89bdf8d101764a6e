// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdlib.h>
#include <string.h>
#include "heatmap_top.h"
#include "report_reuse.h"
#include "reuse.h"
#include "text_wrap.h"

static double ratio(uint64_t conns, uint64_t requests)
{
	return reuse_ratio(conns, requests);
}

static double mean_live(const struct proc_books *p, const struct endpoint_stats *es)
{
	return reuse_mean_concurrency(p, es);
}

/* gap: what came before ended with a heatmap, so these lines start a
 * block of their own after a blank line, as the fd lines do. */
void format_reuse_text(FILE *out, const struct proc_books *p, const struct tw_report_opts *o,
		       bool gap)
{
	uint64_t conns = p->total.opened + p->total.accepted;
	struct endpoint_use *eps;
	size_t n;
	char label[64];

	if (!conns && !p->requests)
		return;
	if (gap)
		fprintf(out, "\n");
	text_wrapf(out, "  reuse         ", FIGURES_INDENT,
		   "%llu connections for %llu requests: %.1f per connection, reuse %.0f%%",
		   (unsigned long long)conns, (unsigned long long)p->requests,
		   conns ? (double)p->requests / conns : 0, 100 * ratio(conns, p->requests));
	text_wrapf(out, "  traffic       ", FIGURES_INDENT, "%llu bytes sent, %llu received",
		   (unsigned long long)p->bytes_sent, (unsigned long long)p->bytes_recv);
	if (p->total.opened)
		fprintf(out, "  %-13s p50 <= %llu us, p99 <= %llu us (SYN_SENT -> ESTABLISHED)\n",
			"handshake", (unsigned long long)reuse_hist_quantile(p->handshake_us_hist, 0.5),
			(unsigned long long)reuse_hist_quantile(p->handshake_us_hist, 0.99));
	if (p->total.closed)
		fprintf(out, "  %-13s p50 <= %llu ms, p99 <= %llu ms (closed connections)\n",
			"lifetime", (unsigned long long)reuse_hist_quantile(p->lifetime_ms_hist, 0.5),
			(unsigned long long)reuse_hist_quantile(p->lifetime_ms_hist, 0.99));
	eps = reuse_endpoints_by_conns(p, &n);
	if (eps && n) {
		fprintf(out, "  %-28s %7s %8s %8s %8s %5s %6s\n", "reuse by endpoint", "opened",
			"accepted", "requests", "req/conn", "peak", "mean");
		for (size_t i = 0; i < n && (int)i < o->top; i++) {
			const struct endpoint_stats *es = eps[i].st;
			uint64_t c = es->opened + es->accepted;

			endpoint_format(label, sizeof(label), &eps[i].key);
			endpoint_label_fit(label, 26);
			fprintf(out, "    %-26s %7llu %8llu %8llu %8.1f %5u %6.1f\n", label,
				(unsigned long long)es->opened, (unsigned long long)es->accepted,
				(unsigned long long)es->requests, c ? (double)es->requests / c : 0,
				es->live_peak, mean_live(p, es));
		}
	}
	free(eps);
	if (p->hm_reuse_ready) {
		format_heatmap_text(out, &p->hm_lifetime, o);
		format_heatmap_text(out, &p->hm_rpc, o);
	}
}

static void json_hist(struct json *j, const char *key, const uint64_t *h)
{
	int last = 0;

	for (int b = 0; b < REUSE_HIST_BUCKETS; b++)
		if (h[b])
			last = b;
	json_key(j, key);
	json_array_begin(j);
	for (int b = 0; b <= last; b++)
		json_uint(j, h[b]);
	json_array_end(j);
}

static void json_endpoint(struct json *j, const char *label, const struct endpoint_key *k,
			  const struct endpoint_stats *es, double mean)
{
	uint64_t c = es->opened + es->accepted;
	char addr[48];

	json_object_begin(j);
	json_kv_string(j, "endpoint", label);
	json_kv_string(j, "side", !k ? "other" : k->side == EP_LISTEN ? "listen" : "remote");
	/* A listener's bound address: "*" / "::" for the wildcard. */
	if (k && k->side == EP_LISTEN) {
		endpoint_listen_address(addr, sizeof(addr), k);
		json_kv_string(j, "listen_address", addr);
	}
	json_kv_uint(j, "opened", es->opened);
	json_kv_uint(j, "accepted", es->accepted);
	json_kv_uint(j, "held_at_start", es->held);
	json_kv_uint(j, "closed", es->closed);
	json_kv_uint(j, "requests", es->requests);
	json_kv_uint(j, "bytes_sent", es->bytes_sent);
	json_kv_uint(j, "bytes_received", es->bytes_recv);
	json_kv_double(j, "requests_per_conn", c ? (double)es->requests / c : 0, 3);
	json_kv_uint(j, "peak_concurrent", es->live_peak);
	json_kv_double(j, "mean_concurrent", mean, 3);
	json_kv_double(j, "reuse_ratio", ratio(c, es->requests), 6);
	json_kv_uint(j, "lifetime_ms_p50", reuse_hist_quantile(es->lifetime_ms_hist, 0.5));
	json_kv_uint(j, "lifetime_ms_p99", reuse_hist_quantile(es->lifetime_ms_hist, 0.99));
	json_hist(j, "requests_per_conn_log2", es->rpc_hist);
	json_object_end(j);
}

void json_reuse(struct json *j, const struct proc_books *p, int top)
{
	uint64_t conns = p->total.opened + p->total.accepted;
	struct endpoint_stats other = { 0 };
	double other_mean = 0;
	struct endpoint_use *eps;
	size_t n;
	char label[64];

	json_key(j, "reuse");
	json_object_begin(j);
	json_kv_uint(j, "connections_opened", p->total.opened);
	json_kv_uint(j, "connections_accepted", p->total.accepted);
	json_kv_uint(j, "connections_closed", p->total.closed);
	{
		/* Connections held at the start carried requests too: a
		 * diff counts them with the ones opened after. */
		const struct endpoint_stats *es;
		uint64_t held = 0;

		for (size_t i = 0; hmap_next(&p->endpoints, &i, NULL, (void **)&es);)
			held += es->held;
		json_kv_uint(j, "connections_held_at_start", held);
	}
	json_kv_uint(j, "requests", p->requests);
	json_kv_uint(j, "bytes_sent", p->bytes_sent);
	json_kv_uint(j, "bytes_received", p->bytes_recv);
	json_kv_double(j, "reuse_ratio", ratio(conns, p->requests), 6);
	if (p->nrows && p->rows[p->nrows - 1].t_ns) {
		double secs = p->rows[p->nrows - 1].t_ns / 1e9;

		json_kv_double(j, "opened_per_s", p->total.opened / secs, 3);
		json_kv_double(j, "accepted_per_s", p->total.accepted / secs, 3);
	}
	json_key(j, "endpoints");
	json_array_begin(j);
	eps = reuse_endpoints_by_conns(p, &n);
	for (size_t i = 0; eps && i < n; i++) {
		const struct endpoint_stats *es = eps[i].st;

		if ((int)i < top) {
			endpoint_format(label, sizeof(label), &eps[i].key);
			json_endpoint(j, label, &eps[i].key, es,
				      mean_live(p, es));
			continue;
		}
		reuse_endpoint_add(&other, es);
		other_mean += mean_live(p, es);
	}
	if (eps && (int)n > top)
		json_endpoint(j, "other", NULL, &other, other_mean);
	free(eps);
	json_array_end(j);
	json_hist(j, "handshake_us_log2", p->handshake_us_hist);
	json_hist(j, "requests_per_conn_log2", p->rpc_hist);
	json_hist(j, "lifetime_ms_log2", p->lifetime_ms_hist);
	json_object_end(j);
}

