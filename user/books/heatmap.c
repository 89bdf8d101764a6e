/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Heatmap engine; see heatmap.h. The renderer is heatmap_term.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"

/* Row stride of the first allocation: most maps have a handful of rows
 * (TCP states, endpoints of one service), so start small and double. */
#define HEATMAP_MIN_STRIDE 8
#define HEATMAP_MIN_COLS 16

static void copy_field(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

int heatmap_init(struct heatmap *h, const char *kind, const char *title, const char *unit,
		 uint64_t t0_ns, uint64_t bucket_ns)
{
	memset(h, 0, sizeof(*h));
	copy_field(h->kind, sizeof(h->kind), kind);
	copy_field(h->title, sizeof(h->title), title);
	copy_field(h->unit, sizeof(h->unit), unit);
	h->t0_ns = t0_ns;
	/* A width of 1 keeps the column arithmetic of a misused map from
	 * dividing by zero. */
	h->bucket_ns = bucket_ns ? bucket_ns : 1;
	return bucket_ns ? 0 : -EINVAL;
}

void heatmap_free(struct heatmap *h)
{
	free(h->cells);
	h->cells = NULL;
	h->ncols = 0;
	h->col_cap = 0;
	h->row_stride = 0;
	h->nrows = 0;
}

/* Room for cols columns of rows rows. Cells never written are zero: every
 * allocation is zeroed, and rows past nrows are never stored to. */
static int reserve(struct heatmap *h, size_t cols, int rows)
{
	size_t cap = h->col_cap ? h->col_cap : HEATMAP_MIN_COLS;
	int stride = h->row_stride ? h->row_stride : HEATMAP_MIN_STRIDE;
	uint64_t *cells;

	if (h->cells && cols <= h->col_cap && rows <= h->row_stride)
		return 0;
	/* cols <= HEATMAP_MAX_COLS, rows <= HEATMAP_MAX_ROWS, both powers of
	 * two: the doubling cannot overshoot either bound. */
	while (cap < cols)
		cap *= 2;
	while (stride < rows)
		stride *= 2;
	if (h->cells && stride == h->row_stride) {
		cells = realloc(h->cells, cap * stride * sizeof(*cells));
		if (!cells)
			return -ENOMEM;
		memset(cells + h->col_cap * stride, 0,
		       (cap - h->col_cap) * stride * sizeof(*cells));
	} else {
		/* A wider stride moves every column: lay them out anew. */
		cells = calloc(cap * stride, sizeof(*cells));
		if (!cells)
			return -ENOMEM;
		for (size_t c = 0; c < h->ncols; c++)
			memcpy(cells + c * stride, h->cells + c * h->row_stride,
			       h->row_stride * sizeof(*cells));
		free(h->cells);
	}
	h->cells = cells;
	h->col_cap = cap;
	h->row_stride = stride;
	return 0;
}

static int find_row(const struct heatmap *h, const char *label)
{
	for (int i = 0; i < h->nrows; i++)
		if (!strcmp(h->rows[i].label, label))
			return i;
	return -1;
}

static int add_row(struct heatmap *h, const char *label)
{
	/* Without cells there is nothing to move: the first allocation
	 * takes the row count into account. */
	if (h->cells) {
		int err = reserve(h, h->col_cap, h->nrows + 1);

		if (err)
			return err;
	}
	copy_field(h->rows[h->nrows].label, HEATMAP_LABEL_LEN, label);
	return h->nrows++;
}

int heatmap_row(struct heatmap *h, const char *label)
{
	char key[HEATMAP_LABEL_LEN];
	int i;

	if (!label)
		return -EINVAL;
	/* Cut first, so that a long label finds the row it made before. */
	copy_field(key, sizeof(key), label);
	i = find_row(h, key);
	if (i >= 0)
		return i;
	if (h->nrows < HEATMAP_MAX_ROWS - 1)
		return add_row(h, key);
	i = find_row(h, HEATMAP_OTHER_LABEL);
	if (i >= 0)
		return i;
	return add_row(h, HEATMAP_OTHER_LABEL);
}

/* The column holding t_ns, as a 64-bit number: far-off times must be seen
 * as such, not wrap into range. */
static uint64_t col_of(const struct heatmap *h, uint64_t t_ns)
{
	return t_ns <= h->t0_ns ? 0 : (t_ns - h->t0_ns) / h->bucket_ns;
}

/* The cell of row at t_ns, with the columns up to it in use. */
static inline __attribute__((always_inline)) int cell_at(struct heatmap *h, int row, uint64_t t_ns,
						   uint64_t **cell)
{
	uint64_t col = col_of(h, t_ns);
	int err;

	if (row < 0 || row >= h->nrows)
		return -EINVAL;
	if (col >= HEATMAP_MAX_COLS)
		return -E2BIG;
	/* The room is there for all but a map's first cell of a new column
	 * or row: checked here, where the call cost each add (#23 item 6). */
	if (!h->cells || col >= h->col_cap || h->nrows > h->row_stride) {
		err = reserve(h, col + 1, h->nrows);
		if (err)
			return err;
	}
	if (col >= h->ncols)
		h->ncols = col + 1;
	*cell = &h->cells[col * h->row_stride + row];
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int heatmap_add(struct heatmap *h, int row, uint64_t t_ns, uint64_t n)
{
	uint64_t *cell;
	int err = cell_at(h, row, t_ns, &cell);

	if (err)
		return err;
	*cell = sat_add(*cell, n);
	return 0;
}

int heatmap_set(struct heatmap *h, int row, uint64_t t_ns, uint64_t v)
{
	uint64_t *cell;
	int err = cell_at(h, row, t_ns, &cell);

	if (err)
		return err;
	*cell = v;
	h->sampled = true;
	return 0;
}

int heatmap_extend(struct heatmap *h, uint64_t end_ns)
{
	uint64_t span, cols;
	int err;

	if (end_ns <= h->t0_ns)
		return 0;
	span = end_ns - h->t0_ns;
	cols = span / h->bucket_ns + (span % h->bucket_ns != 0);
	if (cols > HEATMAP_MAX_COLS)
		return -E2BIG;
	if (cols <= h->ncols)
		return 0;
	err = reserve(h, cols, h->nrows);
	if (err)
		return err;
	h->ncols = cols;
	return 0;
}

uint64_t heatmap_cell(const struct heatmap *h, int row, size_t col)
{
	if (row < 0 || row >= h->nrows || col >= h->ncols)
		return 0;
	return h->cells[col * h->row_stride + row];
}

size_t heatmap_ncols(const struct heatmap *h)
{
	return h->ncols;
}

const char *heatmap_label(const struct heatmap *h, int row)
{
	return row >= 0 && row < h->nrows ? h->rows[row].label : NULL;
}

uint64_t heatmap_max(const struct heatmap *h)
{
	uint64_t max = 0;

	for (size_t c = 0; c < h->ncols; c++)
		for (int r = 0; r < h->nrows; r++)
			if (h->cells[c * h->row_stride + r] > max)
				max = h->cells[c * h->row_stride + r];
	return max;
}

uint64_t heatmap_row_total(const struct heatmap *h, int row)
{
	uint64_t t = 0;

	if (row < 0 || row >= h->nrows)
		return 0;
	for (size_t c = 0; c < h->ncols; c++) {
		uint64_t v = h->cells[c * h->row_stride + row];

		if (h->sampled)
			t = v > t ? v : t;
		else
			t = sat_add(t, v);
	}
	return t;
}

void heatmap_set_end(struct heatmap *h, uint64_t end_ns)
{
	uint64_t last = h->ncols ? h->t0_ns + (h->ncols - 1) * h->bucket_ns : 0;

	h->end_ns = h->ncols && end_ns > last && end_ns < last + h->bucket_ns ? end_ns : 0;
}

int heatmap_rebucket(const struct heatmap *src, struct heatmap *dst, size_t max_cols)
{
	size_t k;

	if (!max_cols || src == dst)
		return -EINVAL;
	k = src->ncols > max_cols ? (src->ncols + max_cols - 1) / max_cols : 1;
	if (src->bucket_ns > UINT64_MAX / k)
		return -EOVERFLOW;
	/* Labels, strings, t0 and the sampled flag carry over as they are. */
	memcpy(dst, src, sizeof(*dst));
	dst->bucket_ns = src->bucket_ns * k;
	dst->ncols = (src->ncols + k - 1) / k;
	dst->col_cap = dst->ncols;
	dst->cells = NULL;
	if (!dst->ncols)
		return 0;
	dst->cells = calloc(dst->ncols * dst->row_stride, sizeof(*dst->cells));
	if (!dst->cells) {
		dst->col_cap = 0;
		dst->ncols = 0;
		return -ENOMEM;
	}
	for (size_t c = 0; c < src->ncols; c++) {
		const uint64_t *from = src->cells + c * src->row_stride;
		uint64_t *to = dst->cells + (c / k) * dst->row_stride;

		for (int r = 0; r < src->nrows; r++) {
			if (src->sampled)
				to[r] = from[r] > to[r] ? from[r] : to[r];
			else
				to[r] = sat_add(to[r], from[r]);
		}
	}
	return 0;
}

int heatmap_refit(struct heatmap *h, uint64_t t0_ns, size_t max_cols)
{
	uint64_t *cells;
	size_t n = 0;

	if (t0_ns < h->t0_ns)
		t0_ns = h->t0_ns;
	if (!h->ncols) {
		h->t0_ns = t0_ns;
		return 0;
	}
	cells = calloc(h->col_cap * h->row_stride, sizeof(*cells));
	if (!cells)
		return -ENOMEM;
	for (size_t c = 0; c < h->ncols; c++) {
		const uint64_t *from = h->cells + c * h->row_stride;
		uint64_t start = h->t0_ns + c * h->bucket_ns, *to;
		size_t k = start <= t0_ns ? 0 : (start - t0_ns) / h->bucket_ns;

		if (max_cols && k >= max_cols)
			k = max_cols - 1;
		to = cells + k * h->row_stride;
		for (int r = 0; r < h->nrows; r++) {
			if (h->sampled)
				to[r] = from[r] > to[r] ? from[r] : to[r];
			else
				to[r] = sat_add(to[r], from[r]);
		}
		if (k + 1 > n)
			n = k + 1;
	}
	free(h->cells);
	h->cells = cells;
	h->ncols = n;
	h->t0_ns = t0_ns;
	return 0;
}

int heatmap_log2_bucket(uint64_t v)
{
	return v ? 63 - __builtin_clzll(v) : HEATMAP_LOG2_ZERO;
}

const char *heatmap_log2_label(char *buf, size_t len, int bucket, const char *unit)
{
	const char *sep = unit && *unit ? " " : "";

	if (!unit)
		unit = "";
	if (bucket < 0)
		snprintf(buf, len, "<1%s%s", sep, unit);
	else if (bucket >= 63)	/* 2^64 does not fit: say "and up" */
		snprintf(buf, len, "%llu+%s%s", 1ULL << 63, sep, unit);
	else
		snprintf(buf, len, "%llu-%llu%s%s", 1ULL << bucket, 1ULL << (bucket + 1), sep,
			 unit);
	return buf;
}

size_t heatmap_fit_cols(uint64_t books_t0_ns, uint64_t *t0_ns, uint64_t end_ns,
			uint64_t bucket_ns)
{
	if (*t0_ns < books_t0_ns)
		*t0_ns = books_t0_ns;
	return end_ns > *t0_ns && bucket_ns ? (end_ns - *t0_ns + bucket_ns - 1) / bucket_ns : 0;
}
