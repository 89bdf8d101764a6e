/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Heatmaps: a time x category matrix of counts for one process and one kind
 * of thing ("time_wait" by remote endpoint or TCP state, "lifetime" by log2
 * bucket), and a terminal renderer for it. Pure user-space state, so the
 * unit tests drive it with fixed matrices and compare exact output.
 *
 * Time runs from t0_ns in columns bucket_ns wide: column c holds what
 * happened in [t0 + c * bucket, t0 + (c + 1) * bucket). Columns appear as
 * time advances; rows are found or added by label.
 *
 * A map holds either event counts (heatmap_add: "sockets that entered
 * TIME_WAIT in this second") or sampled populations (heatmap_set: "sockets
 * in TIME_WAIT when we looked"). The difference matters when columns are
 * merged: counts add up, but adding up samples of the same population would
 * count each socket once per sample, so merged samples keep their maximum. */
#ifndef CONNSCOPE_HEATMAP_H
#define CONNSCOPE_HEATMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HEATMAP_MAX_ROWS 64
#define HEATMAP_LABEL_LEN 48
/* Where new labels go once HEATMAP_MAX_ROWS - 1 rows are taken. */
#define HEATMAP_OTHER_LABEL "other"
/* A bound on columns, so that a bogus timestamp (a clock mix-up, a zero
 * base) fails with -E2BIG instead of allocating without end: 65536 columns
 * of 1 s are 18 hours, 32 MiB with every row taken. Longer runs want wider
 * buckets anyway, a terminal shows a few hundred columns at most. */
#define HEATMAP_MAX_COLS (1u << 16)
/* heatmap_log2_bucket(0): zero has no power of two ("<1 ms"). */
#define HEATMAP_LOG2_ZERO (-1)

struct heatmap_row {
	char label[HEATMAP_LABEL_LEN];
};

struct heatmap {
	char kind[32];		/* machine name: "time_wait", "lifetime" */
	char title[64];		/* for people; the renderer falls back to kind */
	char unit[16];		/* what a cell counts: "sockets" */
	uint64_t t0_ns;		/* left edge of column 0 */
	uint64_t bucket_ns;	/* width of a column, > 0 */
	/* Cells are sampled populations, merged by max; heatmap_set sets it,
	 * a caller building samples with heatmap_add sets it by hand. */
	bool sampled;
	int nrows;
	struct heatmap_row rows[HEATMAP_MAX_ROWS];
	size_t ncols;		/* columns in use */
	/* The run's end where it falls inside the last column, which then
	 * covers [its start, end_ns) (a run stopped by Ctrl-C between two
	 * ticks); 0: every column is whole. heatmap_set_end sets it. */
	uint64_t end_ns;
	/* Column-major, so that a new column is an append:
	 * cells[col * row_stride + row], for col < col_cap, row < row_stride.
	 * row_stride grows (and the cells are laid out anew) as rows are
	 * added, so a map with few rows does not pay for HEATMAP_MAX_ROWS. */
	size_t col_cap;
	int row_stride;
	uint64_t *cells;
};

/* An empty map; 0, or -EINVAL for bucket_ns 0 (h is still safe to free).
 * Strings longer than their fields are cut. */
int heatmap_init(struct heatmap *h, const char *kind, const char *title, const char *unit,
		 uint64_t t0_ns, uint64_t bucket_ns);
/* Frees the cells and forgets rows and columns; safe twice. */
void heatmap_free(struct heatmap *h);

/* The row labelled label (cut to HEATMAP_LABEL_LEN - 1), added if new. The
 * last row is kept for HEATMAP_OTHER_LABEL: once the others are taken,
 * every new label gets that row. Rows keep the order they were added in.
 * Negative errno on failure (-EINVAL, -ENOMEM). */
int heatmap_row(struct heatmap *h, const char *label);
/* Adds n (saturating) to the cell of row for the column holding t_ns; a
 * t_ns before t0 counts in column 0. 0, -EINVAL (no such row), -E2BIG (t_ns
 * beyond HEATMAP_MAX_COLS columns) or -ENOMEM. */
int heatmap_add(struct heatmap *h, int row, uint64_t t_ns, uint64_t n);
/* Stores v in that cell (a later sample in the same column replaces an
 * earlier one) and marks the map sampled. Errors as heatmap_add. */
int heatmap_set(struct heatmap *h, int row, uint64_t t_ns, uint64_t v);
/* Makes the map cover [t0, end_ns) even where nothing happened, so that a
 * quiet end of the run still shows on the time axis. Errors as heatmap_add. */
int heatmap_extend(struct heatmap *h, uint64_t end_ns);

/* The run ended at end_ns: kept when it falls inside the last column
 * (a renderer draws that column as long as it lasted), else 0. */
void heatmap_set_end(struct heatmap *h, uint64_t end_ns);

/* 0 outside the matrix. */
uint64_t heatmap_cell(const struct heatmap *h, int row, size_t col);
size_t heatmap_ncols(const struct heatmap *h);
/* NULL for no such row. */
const char *heatmap_label(const struct heatmap *h, int row);
/* The largest cell; 0 for an empty map. */
uint64_t heatmap_max(const struct heatmap *h);
/* The row's sum over time (saturating), or its max for a sampled map. */
uint64_t heatmap_row_total(const struct heatmap *h, int row);

/* dst = src with every k adjacent columns merged (sum, or max when
 * sampled), k the smallest factor that leaves at most max_cols columns;
 * bucket_ns becomes k times wider, t0 stays, so column edges stay on whole
 * source columns (the last one may cover fewer than k). dst is overwritten,
 * not freed first; free it with heatmap_free. 0, -EINVAL (max_cols 0, or
 * dst == src), -EOVERFLOW (bucket width) or -ENOMEM. */
int heatmap_rebucket(const struct heatmap *src, struct heatmap *dst, size_t max_cols);

/* Lays the map out anew over [t0_ns, t0_ns + max_cols columns) (max_cols 0:
 * no end): each column moves to the column holding its start time, columns
 * that start before t0_ns go to column 0 and those at or past the end to
 * the last one, merged as heatmap_rebucket merges (sum, or max when
 * sampled). For a run whose clock starts once its programs are loaded (what
 * came in while loading is its first column) and ends at its deadline (what
 * the last reading found after it is its last column). t0_ns below the
 * map's own is taken as the map's own. 0 or -ENOMEM (the map unchanged). */
int heatmap_refit(struct heatmap *h, uint64_t t0_ns, size_t max_cols);

/* A run's clock fitted to [*t0_ns, end_ns): *t0_ns raised to books_t0_ns
 * if it is earlier (a map cannot start before its books), and the columns
 * of bucket_ns that cover the run (0: the run has no end yet), for every
 * heatmap_refit of the books. */
size_t heatmap_fit_cols(uint64_t books_t0_ns, uint64_t *t0_ns, uint64_t end_ns,
			uint64_t bucket_ns);

/* The log2 bucket of v: i with 2^i <= v < 2^(i+1), HEATMAP_LOG2_ZERO for 0. */
int heatmap_log2_bucket(uint64_t v);
/* "1-2 ms", "2-4 ms", "<1 ms" (HEATMAP_LOG2_ZERO), "9223372036854775808+ ms"
 * (bucket 63); unit may be "" or NULL. Returns buf. */
const char *heatmap_log2_label(char *buf, size_t len, int bucket, const char *unit);

/* Terminal rendering (heatmap_term.c). Zeroed options are: 80 columns,
 * ASCII, no colour, linear scale. */
struct heatmap_term_opts {
	int width;		/* display columns; <= 0: 80; below 20: 20 */
	bool color;		/* xterm-256 foreground colours on the cells */
	bool unicode;		/* shade blocks; else the ASCII ramp */
	bool log_scale;		/* levels by log(value) instead of value */
};

/* Title, one line per row (label, one character per time column, the row's
 * total or max), a time axis and the legend of the scale; see
 * heatmap_term.c. Every line fits o->width display columns: the map is
 * rebucketed to fit. o may be NULL. */
void format_heatmap_term(FILE *out, const struct heatmap *h, const struct heatmap_term_opts *o);
/* Whether colour suits out: a terminal, NO_COLOR unset or empty, TERM not
 * "dumb". */
bool heatmap_term_should_color(FILE *out);

#endif
