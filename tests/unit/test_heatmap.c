/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* heatmap.c: the engine's arithmetic (columns, rows, rebucketing, refits,
 * log2 buckets). The terminal renderer is tested in test_heatmap_term.c.
 * No root, no kernel. */
#define _GNU_SOURCE		/* open_memstream, ptsname */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "unit.h"
#include "heatmap.h"

#define SEC 1000000000ULL
#define T0 (1000 * SEC)		/* a run does not start at boot */

/* ---- engine ------------------------------------------------------------- */

TEST(add_by_column)
{
	struct heatmap h;
	int r;

	ASSERT_EQ(heatmap_init(&h, "time_wait", "TW", "sockets", T0, SEC), 0, "init");
	r = heatmap_row(&h, "10.0.0.1:443");
	ASSERT_EQ(r, 0, "first row");
	ASSERT_EQ(heatmap_ncols(&h), 0, "no columns yet");
	ASSERT_EQ(heatmap_add(&h, r, T0, 1), 0, "add at t0");
	ASSERT_EQ(heatmap_add(&h, r, T0 + SEC - 1, 2), 0, "add at the end of column 0");
	ASSERT_EQ(heatmap_add(&h, r, T0 + SEC, 4), 0, "add at the start of column 1");
	ASSERT_EQ(heatmap_add(&h, r, T0 + 5 * SEC + 7, 8), 0, "add in column 5");
	ASSERT_EQ(heatmap_ncols(&h), 6, "columns up to the last time");
	ASSERT_EQ(heatmap_cell(&h, r, 0), 3, "column 0");
	ASSERT_EQ(heatmap_cell(&h, r, 1), 4, "column 1");
	ASSERT_EQ(heatmap_cell(&h, r, 2), 0, "gap");
	ASSERT_EQ(heatmap_cell(&h, r, 5), 8, "column 5");
	ASSERT_EQ(heatmap_cell(&h, r, 6), 0, "past the end");
	ASSERT_EQ(heatmap_cell(&h, 1, 0), 0, "no such row");
	ASSERT_EQ(heatmap_cell(&h, -1, 0), 0, "negative row");
	ASSERT_EQ(heatmap_row_total(&h, r), 15, "row total");
	ASSERT_EQ(heatmap_max(&h), 8, "max");
	ASSERT_TRUE(!h.sampled, "add keeps a count map");
	heatmap_free(&h);
	ASSERT_EQ(heatmap_ncols(&h), 0, "freed");
	heatmap_free(&h);
}

TEST(before_t0_clamps_to_column_0)
{
	struct heatmap h;
	int r;

	heatmap_init(&h, "k", "", "", T0, SEC);
	r = heatmap_row(&h, "a");
	ASSERT_EQ(heatmap_add(&h, r, 0, 5), 0, "add at 0");
	ASSERT_EQ(heatmap_add(&h, r, T0 - 1, 1), 0, "add just before t0");
	ASSERT_EQ(heatmap_ncols(&h), 1, "one column");
	ASSERT_EQ(heatmap_cell(&h, r, 0), 6, "both in column 0");
	ASSERT_EQ(heatmap_set(&h, r, 3, 9), 0, "set before t0");
	ASSERT_EQ(heatmap_cell(&h, r, 0), 9, "set in column 0");
	heatmap_free(&h);
}

TEST(set_replaces_and_marks_sampled)
{
	struct heatmap h;
	int a, b;

	heatmap_init(&h, "states", "", "sockets", T0, 2 * SEC);
	a = heatmap_row(&h, "time_wait");
	b = heatmap_row(&h, "established");
	ASSERT_EQ(heatmap_set(&h, a, T0, 100), 0, "set");
	ASSERT_EQ(heatmap_set(&h, a, T0 + SEC, 40), 0, "set again in the same column");
	ASSERT_EQ(heatmap_set(&h, b, T0 + 3 * SEC, 7), 0, "set column 1");
	ASSERT_EQ(heatmap_set(&h, a, T0 + 3 * SEC, 30), 0, "set column 1");
	ASSERT_TRUE(h.sampled, "sampled");
	ASSERT_EQ(heatmap_cell(&h, a, 0), 40, "the later sample wins");
	ASSERT_EQ(heatmap_cell(&h, b, 0), 0, "untouched");
	ASSERT_EQ(heatmap_row_total(&h, a), 40, "total of samples is their max");
	ASSERT_EQ(heatmap_row_total(&h, b), 7, "max of b");
	heatmap_free(&h);
}

TEST(extend_covers_quiet_end)
{
	struct heatmap h;
	int r;

	heatmap_init(&h, "k", "", "", T0, SEC);
	r = heatmap_row(&h, "a");
	heatmap_add(&h, r, T0 + 2 * SEC, 1);
	ASSERT_EQ(heatmap_extend(&h, T0 + 30 * SEC), 0, "extend to 30 s");
	ASSERT_EQ(heatmap_ncols(&h), 30, "[t0, t0 + 30 s) is 30 columns");
	ASSERT_EQ(heatmap_extend(&h, T0 + 30 * SEC + 1), 0, "one ns more");
	ASSERT_EQ(heatmap_ncols(&h), 31, "a partial column counts");
	ASSERT_EQ(heatmap_extend(&h, T0 + 5 * SEC), 0, "extend backwards");
	ASSERT_EQ(heatmap_ncols(&h), 31, "never shrinks");
	ASSERT_EQ(heatmap_extend(&h, 1), 0, "before t0");
	ASSERT_EQ(heatmap_cell(&h, r, 2), 1, "data kept");
	ASSERT_EQ(heatmap_cell(&h, r, 30), 0, "new columns are zero");
	heatmap_free(&h);
}

TEST(other_row_takes_overflow)
{
	struct heatmap h;
	char label[32];
	int r, other;

	heatmap_init(&h, "time_wait", "", "sockets", T0, SEC);
	for (int i = 0; i < HEATMAP_MAX_ROWS - 1; i++) {
		snprintf(label, sizeof(label), "10.0.0.%d:443", i);
		r = heatmap_row(&h, label);
		ASSERT_EQ(r, i, "rows in order");
		ASSERT_EQ(heatmap_add(&h, r, T0 + i * SEC, i + 1), 0, "add");
	}
	other = heatmap_row(&h, "10.9.9.9:80");
	ASSERT_EQ(other, HEATMAP_MAX_ROWS - 1, "the last row");
	ASSERT_STREQ(heatmap_label(&h, other), HEATMAP_OTHER_LABEL, "labelled other");
	ASSERT_EQ(heatmap_row(&h, "10.9.9.10:80"), other, "every new label goes there");
	ASSERT_EQ(heatmap_row(&h, "other"), other, "and other itself");
	ASSERT_EQ(heatmap_row(&h, "10.0.0.7:443"), 7, "known labels still found");
	ASSERT_EQ(h.nrows, HEATMAP_MAX_ROWS, "full");
	heatmap_add(&h, other, T0, 5);
	heatmap_add(&h, heatmap_row(&h, "10.9.9.11:80"), T0, 6);
	ASSERT_EQ(heatmap_cell(&h, other, 0), 11, "overflow adds up in other");
	/* The stride grew from 8 to 64 while rows came in: cells moved. */
	for (int i = 0; i < HEATMAP_MAX_ROWS - 1; i++)
		ASSERT_EQ(heatmap_cell(&h, i, i), i + 1, "cells kept across re-layouts");
	ASSERT_EQ(heatmap_label(&h, HEATMAP_MAX_ROWS), NULL, "no row past the last");
	heatmap_free(&h);

	/* An "other" added by the caller early is the one overflow uses. */
	heatmap_init(&h, "k", "", "", T0, SEC);
	ASSERT_EQ(heatmap_row(&h, "other"), 0, "other first");
	for (int i = 1; i < HEATMAP_MAX_ROWS - 1; i++) {
		snprintf(label, sizeof(label), "r%d", i);
		heatmap_row(&h, label);
	}
	ASSERT_EQ(heatmap_row(&h, "new"), 0, "overflow into the early other");
	ASSERT_EQ(h.nrows, HEATMAP_MAX_ROWS - 1, "no second other");
	heatmap_free(&h);
}

TEST(long_label_cut_and_found_again)
{
	struct heatmap h;
	char label[100];
	int r;

	memset(label, 'x', sizeof(label) - 1);
	label[sizeof(label) - 1] = '\0';
	heatmap_init(&h, "k", "", "", T0, SEC);
	r = heatmap_row(&h, label);
	ASSERT_EQ(strlen(heatmap_label(&h, r)), HEATMAP_LABEL_LEN - 1, "cut");
	ASSERT_EQ(heatmap_row(&h, label), r, "the same long label, the same row");
	label[60] = 'y';	/* differs past the cut only */
	ASSERT_EQ(heatmap_row(&h, label), r, "labels equal up to the cut share a row");
	ASSERT_EQ(h.nrows, 1, "one row");
	ASSERT_EQ(heatmap_row(&h, NULL), -EINVAL, "NULL label");
	heatmap_free(&h);
}

TEST(bad_arguments)
{
	struct heatmap h;

	ASSERT_EQ(heatmap_init(&h, "k", "t", "u", T0, 0), -EINVAL, "bucket 0");
	heatmap_free(&h);
	heatmap_init(&h, "k", "t", "u", T0, SEC);
	ASSERT_EQ(heatmap_add(&h, 0, T0, 1), -EINVAL, "no rows yet");
	heatmap_row(&h, "a");
	ASSERT_EQ(heatmap_add(&h, -1, T0, 1), -EINVAL, "negative row");
	ASSERT_EQ(heatmap_set(&h, 1, T0, 1), -EINVAL, "row past the end");
	/* A timestamp from the wrong clock must not allocate without end. */
	ASSERT_EQ(heatmap_add(&h, 0, UINT64_MAX, 1), -E2BIG, "far future");
	ASSERT_EQ(heatmap_add(&h, 0, T0 + (uint64_t)HEATMAP_MAX_COLS * SEC, 1), -E2BIG,
		  "one column too far");
	ASSERT_EQ(heatmap_extend(&h, UINT64_MAX), -E2BIG, "extend too far");
	ASSERT_EQ(heatmap_ncols(&h), 0, "nothing allocated");
	ASSERT_EQ(heatmap_add(&h, 0, T0 + (uint64_t)(HEATMAP_MAX_COLS - 1) * SEC, 1), 0,
		  "the last column");
	ASSERT_EQ(heatmap_ncols(&h), HEATMAP_MAX_COLS, "all columns");
	heatmap_free(&h);
}

TEST(saturating_counts)
{
	struct heatmap h;

	heatmap_init(&h, "k", "", "", T0, SEC);
	heatmap_row(&h, "a");
	heatmap_add(&h, 0, T0, UINT64_MAX - 1);
	heatmap_add(&h, 0, T0, 5);
	ASSERT_TRUE(heatmap_cell(&h, 0, 0) == UINT64_MAX, "cell saturates");
	heatmap_add(&h, 0, T0 + SEC, 5);
	ASSERT_TRUE(heatmap_row_total(&h, 0) == UINT64_MAX, "total saturates");
	heatmap_free(&h);
}

/* Rows a and b over 10 columns: a = 1..10, b = 10..1. */
static void ten_columns(struct heatmap *h, bool sampled)
{
	heatmap_init(h, "k", "T", "u", T0, SEC);
	heatmap_row(h, "a");
	heatmap_row(h, "b");
	for (int c = 0; c < 10; c++) {
		if (sampled) {
			heatmap_set(h, 0, T0 + c * SEC, c + 1);
			heatmap_set(h, 1, T0 + c * SEC, 10 - c);
		} else {
			heatmap_add(h, 0, T0 + c * SEC, c + 1);
			heatmap_add(h, 1, T0 + c * SEC, 10 - c);
		}
	}
}

TEST(rebucket_sums_counts)
{
	struct heatmap h, m;

	ten_columns(&h, false);
	ASSERT_EQ(heatmap_rebucket(&h, &m, 4), 0, "rebucket to 4");
	/* 10 into at most 4: 3 per column, the last holds one. */
	ASSERT_EQ(heatmap_ncols(&m), 4, "columns");
	ASSERT_TRUE(m.bucket_ns == 3 * SEC, "bucket 3 s");
	ASSERT_TRUE(m.t0_ns == T0, "t0 kept");
	ASSERT_TRUE(!m.sampled, "still counts");
	ASSERT_EQ(m.nrows, 2, "rows");
	ASSERT_STREQ(heatmap_label(&m, 1), "b", "labels");
	ASSERT_STREQ(m.title, "T", "title");
	ASSERT_EQ(heatmap_cell(&m, 0, 0), 1 + 2 + 3, "a 0");
	ASSERT_EQ(heatmap_cell(&m, 0, 1), 4 + 5 + 6, "a 1");
	ASSERT_EQ(heatmap_cell(&m, 0, 2), 7 + 8 + 9, "a 2");
	ASSERT_EQ(heatmap_cell(&m, 0, 3), 10, "a 3, partial");
	ASSERT_EQ(heatmap_cell(&m, 1, 0), 10 + 9 + 8, "b 0");
	ASSERT_EQ(heatmap_cell(&m, 1, 3), 1, "b 3");
	ASSERT_EQ(heatmap_row_total(&m, 0), heatmap_row_total(&h, 0), "total kept");
	/* The merged map is a map like any other. */
	ASSERT_EQ(heatmap_add(&m, 0, T0 + 13 * SEC, 1), 0, "add to the merged map");
	ASSERT_EQ(heatmap_cell(&m, 0, 4), 1, "column 4 is [12 s, 15 s)");
	heatmap_free(&m);

	ASSERT_EQ(heatmap_rebucket(&h, &m, 5), 0, "rebucket to 5");
	ASSERT_EQ(heatmap_ncols(&m), 5, "columns");
	ASSERT_EQ(heatmap_cell(&m, 0, 4), 9 + 10, "pairs");
	heatmap_free(&m);
	heatmap_free(&h);
}

TEST(rebucket_takes_max_of_samples)
{
	struct heatmap h, m;

	ten_columns(&h, true);
	ASSERT_EQ(heatmap_rebucket(&h, &m, 4), 0, "rebucket");
	ASSERT_TRUE(m.sampled, "still sampled");
	ASSERT_EQ(heatmap_cell(&m, 0, 0), 3, "max of 1 2 3");
	ASSERT_EQ(heatmap_cell(&m, 0, 2), 9, "max of 7 8 9");
	ASSERT_EQ(heatmap_cell(&m, 1, 0), 10, "max of 10 9 8");
	ASSERT_EQ(heatmap_cell(&m, 1, 3), 1, "last");
	ASSERT_EQ(heatmap_max(&m), heatmap_max(&h), "max kept");
	heatmap_free(&m);
	heatmap_free(&h);
}

TEST(rebucket_that_fits_copies)
{
	struct heatmap h, m;

	ten_columns(&h, false);
	ASSERT_EQ(heatmap_rebucket(&h, &m, 10), 0, "fits exactly");
	ASSERT_EQ(heatmap_ncols(&m), 10, "columns");
	ASSERT_TRUE(m.bucket_ns == SEC, "same width");
	for (int c = 0; c < 10; c++)
		ASSERT_EQ(heatmap_cell(&m, 0, c), heatmap_cell(&h, 0, c), "same cells");
	ASSERT_TRUE(m.cells != h.cells, "own cells");
	heatmap_free(&m);
	ASSERT_EQ(heatmap_rebucket(&h, &m, 0), -EINVAL, "0 columns");
	ASSERT_EQ(heatmap_rebucket(&h, &h, 4), -EINVAL, "in place");
	ASSERT_EQ(heatmap_rebucket(&h, &m, 1), 0, "into one column");
	ASSERT_EQ(heatmap_cell(&m, 0, 0), 55, "sum of all");
	ASSERT_TRUE(m.bucket_ns == 10 * SEC, "one wide bucket");
	heatmap_free(&m);
	heatmap_free(&h);

	heatmap_init(&h, "k", "", "", T0, SEC);
	ASSERT_EQ(heatmap_rebucket(&h, &m, 4), 0, "empty map");
	ASSERT_EQ(heatmap_ncols(&m), 0, "empty copy");
	heatmap_free(&m);
	heatmap_free(&h);
}

/* A run's clock that starts once its programs are loaded: what came in
 * before goes into column 0, the rest keeps its place from the new t0. */
TEST(refit_moves_t0_later)
{
	struct heatmap h;

	ten_columns(&h, false);
	ASSERT_EQ(heatmap_refit(&h, T0 + 3 * SEC, 0), 0, "refit");
	ASSERT_TRUE(h.t0_ns == T0 + 3 * SEC, "new t0");
	ASSERT_EQ(heatmap_ncols(&h), 7, "3 columns folded into the first");
	ASSERT_EQ(heatmap_cell(&h, 0, 0), 1 + 2 + 3 + 4, "a 0: the columns up to the new t0");
	ASSERT_EQ(heatmap_cell(&h, 0, 1), 5, "a 1");
	ASSERT_EQ(heatmap_cell(&h, 1, 6), 1, "b 6: the last");
	ASSERT_EQ(heatmap_add(&h, 0, T0 + 3 * SEC + 500000000ULL, 1), 0, "add after");
	ASSERT_EQ(heatmap_cell(&h, 0, 0), 11, "lands in the new column 0");
	ASSERT_EQ(heatmap_refit(&h, T0, 0), 0, "an earlier t0");
	ASSERT_TRUE(h.t0_ns == T0 + 3 * SEC, "keeps its own");
	heatmap_free(&h);
}

/* A run stopped by Ctrl-C between ticks: its end is kept only where it
 * falls inside the last column (that column lasted until then), and a
 * merged copy keeps it. */
TEST(end_inside_the_last_column)
{
	struct heatmap h, m;

	ten_columns(&h, false);
	heatmap_set_end(&h, T0 + 9 * SEC + 300000000ULL);
	ASSERT_TRUE(h.end_ns == T0 + 9 * SEC + 300000000ULL, "9.3 s: inside column 9");
	ASSERT_EQ(heatmap_rebucket(&h, &m, 5), 0, "merged");
	ASSERT_TRUE(m.end_ns == h.end_ns, "the merged map ends there too");
	heatmap_free(&m);
	heatmap_set_end(&h, T0 + 10 * SEC);
	ASSERT_TRUE(h.end_ns == 0, "10 s: the columns are whole");
	heatmap_set_end(&h, T0 + 8 * SEC + 500000000ULL);
	ASSERT_TRUE(h.end_ns == 0, "8.5 s: not in the last column");
	heatmap_free(&h);
}

/* A run that ended at its deadline: the readings past it go into the last
 * column, sampled ones by their maximum. */
TEST(refit_bounds_the_end)
{
	struct heatmap h;

	ten_columns(&h, true);
	ASSERT_EQ(heatmap_refit(&h, T0, 8), 0, "refit to 8");
	ASSERT_EQ(heatmap_ncols(&h), 8, "columns");
	ASSERT_EQ(heatmap_cell(&h, 0, 7), 10, "a: max of 8, 9, 10");
	ASSERT_EQ(heatmap_cell(&h, 1, 7), 3, "b: max of 3, 2, 1");
	ASSERT_EQ(heatmap_cell(&h, 0, 6), 7, "before the end unchanged");
	ASSERT_TRUE(h.sampled, "still sampled");
	heatmap_free(&h);
	heatmap_init(&h, "k", "T", "u", T0, SEC);
	ASSERT_EQ(heatmap_refit(&h, T0 + SEC, 4), 0, "an empty map");
	ASSERT_EQ(heatmap_ncols(&h), 0, "stays empty");
	ASSERT_TRUE(h.t0_ns == T0 + SEC, "with the new t0");
	heatmap_free(&h);
}

TEST(log2_buckets)
{
	ASSERT_EQ(heatmap_log2_bucket(0), HEATMAP_LOG2_ZERO, "0");
	ASSERT_EQ(heatmap_log2_bucket(1), 0, "1");
	ASSERT_EQ(heatmap_log2_bucket(2), 1, "2");
	ASSERT_EQ(heatmap_log2_bucket(3), 1, "3");
	ASSERT_EQ(heatmap_log2_bucket(4), 2, "4");
	ASSERT_EQ(heatmap_log2_bucket(1023), 9, "1023");
	ASSERT_EQ(heatmap_log2_bucket(1024), 10, "1024");
	ASSERT_EQ(heatmap_log2_bucket(1ULL << 40), 40, "2^40");
	ASSERT_EQ(heatmap_log2_bucket(UINT64_MAX), 63, "max");
}

TEST(log2_labels)
{
	char buf[48];

	ASSERT_STREQ(heatmap_log2_label(buf, sizeof(buf), HEATMAP_LOG2_ZERO, "ms"), "<1 ms",
		     "zero");
	ASSERT_STREQ(heatmap_log2_label(buf, sizeof(buf), 0, "ms"), "1-2 ms", "0");
	ASSERT_STREQ(heatmap_log2_label(buf, sizeof(buf), 1, "ms"), "2-4 ms", "1");
	ASSERT_STREQ(heatmap_log2_label(buf, sizeof(buf), 10, "ms"), "1024-2048 ms", "10");
	ASSERT_STREQ(heatmap_log2_label(buf, sizeof(buf), 62, "us"),
		     "4611686018427387904-9223372036854775808 us", "62");
	ASSERT_STREQ(heatmap_log2_label(buf, sizeof(buf), 63, "us"), "9223372036854775808+ us",
		     "63, whose end does not fit");
	ASSERT_STREQ(heatmap_log2_label(buf, sizeof(buf), 3, ""), "8-16", "no unit");
	ASSERT_STREQ(heatmap_log2_label(buf, sizeof(buf), -1, NULL), "<1", "NULL unit");
	/* Each bucket's label names the values heatmap_log2_bucket puts in it. */
	for (uint64_t v = 1; v < 5000; v++) {
		char want[48];
		int b = heatmap_log2_bucket(v);

		snprintf(want, sizeof(want), "%llu-%llu ms", 1ULL << b, 2ULL << b);
		ASSERT_STREQ(heatmap_log2_label(buf, sizeof(buf), b, "ms"), want, "label");
		ASSERT_TRUE(v >= 1ULL << b && v < 2ULL << b, "in range");
	}
	ASSERT_STREQ(heatmap_log2_label(buf, 6, 10, "ms"), "1024-", "cut to the buffer");
}

UNIT_MAIN()
