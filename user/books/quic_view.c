// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* What the renderers read of a process's QUIC books: the sources' names,
 * the figures of the source that follows the connections' lives, and the
 * handshake histogram's mean and quantiles, as bounds (a log2 bucket is
 * all the histogram knows). The state machines are quic_books.c's. */
#include <stdio.h>
#include <string.h>
#include "quic_books.h"

static const char *const src_names[QSRC_COUNT] = { "wire", "ngtcp2", "kernel" };

const char *quic_source_name(int idx)
{
	return idx >= 0 && idx < QSRC_COUNT ? src_names[idx] : "?";
}

const char *quic_sources_label(uint32_t sources, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < QSRC_COUNT; i++)
		if (sources & (1u << i))
			used += snprintf(buf + used, used < len ? len - used : 0, "%s%s",
					 used ? "," : "", src_names[i]);
	if (!used)
		snprintf(buf, len, "none");
	return buf;
}

void quic_proc_view(const struct quic_proc *p, struct quic_view *v)
{
	const struct quic_counts *w = &p->src[0], *life;
	bool late = p->lib_since_ns && p->wire_first_ns && p->wire_first_ns < p->lib_since_ns;
	int src = 0;

	if ((p->sources & QSRC_NGTCP2) && !(late && w->connections > p->src[1].connections))
		src = 1;
	else if (p->sources & QSRC_KERNEL)
		src = 2;
	life = &p->src[src];
	memset(v, 0, sizeof(*v));
	if (late) {
		v->lib_late = true;
		v->lib_missed = quic_proc_lib_missed(p);
		v->lib_late_s = (p->lib_since_ns - p->wire_first_ns) / 1e9;
	}
	v->c = *life;
	v->lifecycle_src = src;
	v->sources = p->sources;
	v->c.retries = w->retries;
	v->c.version_negotiations = w->version_negotiations;
	v->c.migrations = w->migrations + (src == 1 ? life->migrations : 0);
}

/* The bucket the p-quantile falls in; -1 when the histogram is empty. */
static int quantile_bucket(const uint64_t *hist, double q)
{
	uint64_t total = 0, seen = 0, want;

	for (int i = 0; i < QUIC_HIST_BUCKETS; i++)
		total += hist[i];
	if (!total)
		return -1;
	want = (uint64_t)(q * total + 0.999999);
	if (want < 1)
		want = 1;
	for (int i = 0; i < QUIC_HIST_BUCKETS; i++) {
		seen += hist[i];
		if (seen >= want)
			return i;
	}
	return -1;
}

bool quic_hist_quantile_range_ms(const uint64_t *hist, double q, double *lo, double *hi)
{
	int b = quantile_bucket(hist, q);

	*lo = *hi = 0;
	if (b < 0)
		return false;
	/* Bucket b holds [2^b, 2^(b+1)) µs; bucket 0 anything under 2 µs. */
	*lo = b ? (double)(1ULL << b) / 1000.0 : 0;
	*hi = (double)(2ULL << b) / 1000.0;
	return true;
}

double quic_handshake_mean_ms(const struct quic_counts *c)
{
	return c->handshakes_completed ?
		       (double)c->handshake_ns_sum / (double)c->handshakes_completed / 1e6 : 0;
}

double quic_hist_quantile_ms(const uint64_t *hist, double q)
{
	uint64_t total = 0, seen = 0, want;

	for (int i = 0; i < QUIC_HIST_BUCKETS; i++)
		total += hist[i];
	if (!total)
		return 0;
	want = (uint64_t)(q * total + 0.999999);
	if (want < 1)
		want = 1;
	for (int i = 0; i < QUIC_HIST_BUCKETS; i++) {
		seen += hist[i];
		if (seen >= want)
			return (double)(2ULL << i) / 1000.0;	/* the bucket's upper bound */
	}
	return 0;
}
