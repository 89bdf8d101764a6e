/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* heatmap.c (engine arithmetic) and heatmap_term.c (exact terminal output
 * against golden files in tests/data/heatmap). No root, no kernel.
 *
 * The goldens are the renderer's specification, written by the renderer:
 *	UPDATE_GOLDEN=1 .output/tests/test_heatmap
 * rewrites every tests/data/heatmap/NAME.golden instead of comparing (the
 * golden tests then pass). Look at each one on an 80-column terminal
 * (`cat tests/data/heatmap/unicode_color.golden` shows the colours) before
 * committing it: a golden is only as good as the eye that checked it. */
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

/* ---- rendering helpers -------------------------------------------------- */

static char *render(const struct heatmap *h, const struct heatmap_term_opts *o)
{
	/* static: gcc's dangling-pointer analysis misreads open_memstream */
	static char *buf;
	static size_t len;
	FILE *f;

	buf = NULL;
	f = open_memstream(&buf, &len);
	ASSERT_TRUE(f != NULL, "open_memstream");
	format_heatmap_term(f, h, o);
	ASSERT_EQ(fclose(f), 0, "fclose");
	return buf;
}

/* Display columns of one line: escapes (ESC [ ... final byte) count
 * nothing, UTF-8 continuation bytes nothing, everything else one. Written
 * apart from the renderer's own counting, so the two check each other. */
static int display_cols(const char *s, size_t n)
{
	int cols = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == 0x1b && i + 1 < n && s[i + 1] == '[') {
			for (i += 2; i < n; i++)
				if ((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e)
					break;
			continue;
		}
		if ((c & 0xc0) != 0x80)
			cols++;
	}
	return cols;
}

/* Each line of out fits width; a line that sets a colour resets it before
 * it ends; no control character but the escapes of colour mode. */
static void check_lines(const char *out, int width, bool color, const char *what)
{
	char msg[256];
	int lineno = 1;

	ASSERT_TRUE(out && *out, what);
	ASSERT_TRUE(out[strlen(out) - 1] == '\n', "output ends with a newline");
	for (const char *p = out; *p; lineno++) {
		const char *nl = strchr(p, '\n');
		size_t n = nl - p;
		const char *last_esc = NULL;
		int cols = display_cols(p, n);

		snprintf(msg, sizeof(msg), "%s: line %d is %d columns: %.*s", what, lineno,
			 cols, (int)(n < 120 ? n : 120), p);
		ASSERT_TRUE(cols <= width, msg);
		for (size_t i = 0; i < n; i++) {
			unsigned char c = p[i];

			if (c == 0x1b)
				last_esc = p + i;
			snprintf(msg, sizeof(msg), "%s: line %d: byte 0x%02x at %zu", what,
				 lineno, c, i);
			ASSERT_TRUE(c >= 0x20 || (color && c == 0x1b), msg);
			ASSERT_TRUE(c != 0x7f, msg);
		}
		if (last_esc) {
			snprintf(msg, sizeof(msg), "%s: line %d leaves a colour set", what, lineno);
			ASSERT_TRUE(!strncmp(last_esc, "\033[0m", 4), msg);
		}
		p = nl + 1;
	}
}

static const char *data_dir(void)
{
	return unit_data_dir("heatmap");
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n + 1);
	ASSERT_TRUE(buf != NULL, "malloc");
	ASSERT_EQ(fread(buf, 1, n, f), n, path);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Renders h and compares it with tests/data/heatmap/<name>.golden, or
 * writes that file under UPDATE_GOLDEN=1. */
static void golden(const char *name, const struct heatmap *h, const struct heatmap_term_opts *o)
{
	char path[PATH_MAX + 64], label[PATH_MAX + 128];
	const char *update = getenv("UPDATE_GOLDEN");
	char *got = render(h, o), *want;
	const char *g, *w;
	int line = 1;

	check_lines(got, o->width ? o->width : 80, o->color, name);
	snprintf(path, sizeof(path), "%s/heatmap/%s.golden", data_dir(), name);
	if (update && *update && strcmp(update, "0")) {
		FILE *f = fopen(path, "w");

		ASSERT_TRUE(f != NULL, path);
		fputs(got, f);
		ASSERT_EQ(fclose(f), 0, path);
		fprintf(stderr, "wrote %s\n", path);
		free(got);
		return;
	}
	want = slurp(path);
	snprintf(label, sizeof(label), "%s missing (UPDATE_GOLDEN=1 writes it)", path);
	ASSERT_TRUE(want != NULL, label);
	/* Name the first line that differs: offsets into a whole map are hard
	 * to follow. */
	for (g = got, w = want; *g && *g == *w; g++, w++)
		line += *g == '\n';
	if (*g || *w) {
		fprintf(stderr, "--- %s: got ---\n%s--- want ---\n%s---\n", name, got, want);
		snprintf(label, sizeof(label), "%s line %d (UPDATE_GOLDEN=1 rewrites it)", path,
			 line);
	}
	ASSERT_STREQ(got, want, label);
	free(want);
	free(got);
}

/* ---- fixed input matrices ----------------------------------------------- */

/* TIME_WAIT entries per second by remote endpoint over 30 s: a burst to
 * one endpoint, a trickle of single sockets to another (the "nonzero is
 * never blank" case), a steady background, a short burst over IPv6, a
 * label too long for its column, and the overflow row. */
static const char *const tw_labels[] = {
	"10.0.0.1:443", "10.0.0.2:443", "192.168.100.200:8080", "[2001:db8::1]:443",
	"db-primary.internal.example.com:5432", "other",
};
static const uint8_t tw_cells[][30] = {
	{ 0, 0, 1, 2, 3, 5, 8, 12, 16, 20, 25, 25, 22, 18, 14, 10, 7, 5, 3, 2, 1, 1, 0, 0, 0,
	  0, 0, 0, 0, 0 },
	{ 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0,
	  0 },
	{ 4, 5, 4, 6, 4, 5, 5, 4, 6, 5, 4, 5, 4, 6, 5, 4, 5, 4, 6, 5, 4, 5, 4, 6, 5, 4, 5, 4, 6,
	  5 },
	{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 10, 18, 25, 24, 9, 2, 0,
	  0, 0 },
	{ 0, 0, 2, 0, 0, 3, 0, 0, 2, 0, 0, 3, 0, 0, 2, 0, 0, 3, 0, 0, 2, 0, 0, 3, 0, 0, 2, 0, 0,
	  3 },
	{ 1, 0, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0,
	  1 },
};

static void tw_map(struct heatmap *h)
{
	heatmap_init(h, "time_wait", "TIME_WAIT by remote, pid 4242 nginx", "sockets", T0, SEC);
	for (size_t r = 0; r < sizeof(tw_labels) / sizeof(tw_labels[0]); r++) {
		int row = heatmap_row(h, tw_labels[r]);

		ASSERT_EQ(row, (int)r, "row");
		/* Mid-column times: a column holds [c s, c + 1 s). */
		for (int c = 0; c < 30; c++) {
			uint64_t t = T0 + c * SEC + SEC / 2;

			if (tw_cells[r][c])
				ASSERT_EQ(heatmap_add(h, row, t, tw_cells[r][c]), 0, "add");
		}
	}
	ASSERT_EQ(heatmap_extend(h, T0 + 30 * SEC), 0, "30 s");
}

/* Sockets by state, sampled each second for 200 s: a steady ESTABLISHED
 * set, a TIME_WAIT pile-up that drains, a CLOSE_WAIT leak that only grows,
 * and a FIN_WAIT2 blip every 50 s. Too wide for 80 columns. */
static void states_map(struct heatmap *h)
{
	int est, tw, cw, fw2;

	heatmap_init(h, "states", "TCP states, pid 4242 nginx", "sockets", T0, SEC);
	est = heatmap_row(h, "established");
	tw = heatmap_row(h, "time_wait");
	cw = heatmap_row(h, "close_wait");
	fw2 = heatmap_row(h, "fin_wait2");
	for (int c = 0; c < 200; c++) {
		uint64_t t = T0 + c * SEC;
		int twv = c < 120 ? 2 * c : 240 - 3 * (c - 120);

		heatmap_set(h, est, t, 40 + (c * 7) % 13);
		heatmap_set(h, tw, t, twv > 0 ? twv : 0);
		heatmap_set(h, cw, t, c / 10);
		heatmap_set(h, fw2, t, c % 50 < 2 ? 5 : 0);
	}
}

/* Connection lifetimes in log2 ms buckets, 5 s columns over 100 s: most
 * connections live 2-16 ms, a few run for seconds; only a log scale shows
 * the few next to the many. Rows made in bucket order up front. */
static void lifetime_map(struct heatmap *h)
{
	static const uint16_t base[] = { 3, 10, 120, 400, 250, 60, 8, 2, 0, 1, 4, 6 };
	char label[HEATMAP_LABEL_LEN];

	heatmap_init(h, "lifetime", "Connection lifetime, pid 4242 nginx", "conns", T0, 5 * SEC);
	for (int b = HEATMAP_LOG2_ZERO; b <= 10; b++)
		heatmap_row(h, heatmap_log2_label(label, sizeof(label), b, "ms"));
	for (int r = 0; r < h->nrows; r++)
		for (int c = 0; c < 20; c++) {
			uint64_t v = base[r] * (8 + (c * 3 + r) % 5) / 10;

			if (r >= 9 && c >= 12 && c < 15)
				v += 20;	/* a slow spell */
			heatmap_add(h, r, T0 + c * 5 * SEC, v);
		}
}

/* ---- golden files ------------------------------------------------------- */

TEST(golden_ascii)
{
	struct heatmap h;
	struct heatmap_term_opts o = { .width = 80 };

	tw_map(&h);
	golden("ascii", &h, &o);
	heatmap_free(&h);
}

TEST(golden_unicode)
{
	struct heatmap h;
	struct heatmap_term_opts o = { .width = 80, .unicode = true };

	tw_map(&h);
	golden("unicode", &h, &o);
	heatmap_free(&h);
}

TEST(golden_unicode_color)
{
	struct heatmap h;
	struct heatmap_term_opts o = { .width = 80, .unicode = true, .color = true };

	tw_map(&h);
	golden("unicode_color", &h, &o);
	heatmap_free(&h);
}

TEST(golden_wide_rebucketed)
{
	struct heatmap h;
	struct heatmap_term_opts o = { .width = 80, .unicode = true };

	states_map(&h);
	ASSERT_EQ(heatmap_ncols(&h), 200, "wider than the terminal");
	golden("wide_80", &h, &o);
	heatmap_free(&h);
}

TEST(golden_width_40)
{
	struct heatmap h;
	struct heatmap_term_opts o = { .width = 40 };

	tw_map(&h);
	golden("ascii_40", &h, &o);
	heatmap_free(&h);
}

TEST(golden_log_scale)
{
	struct heatmap h;
	struct heatmap_term_opts o = { .width = 80, .unicode = true, .log_scale = true };

	lifetime_map(&h);
	golden("lifetime_log", &h, &o);
	heatmap_free(&h);
}

/* ---- renderer properties ------------------------------------------------ */

/* Labels and a title that try to break the layout or the terminal. */
static void hostile_map(struct heatmap *h)
{
	heatmap_init(h, "evil", "t\033[2J\033]0;pwned\a \xff\xfe \xe2\x80\xae title "
		     "\xc3\xa9\xe2\x94\x80\xf0\x9f\x98\x80 long enough to need cutting", "x",
		     T0, 7 * SEC);
	heatmap_row(h, "\033[31mred\033[0m");
	heatmap_row(h, "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80 box \xc3\xa9\xc3\xa9\xc3\xa9 "
		    "accents and more and more");
	heatmap_row(h, "\xc0\xaf overlong \xed\xa0\x80 surrogate \xc2\x85 c1 \xc2");
	heatmap_row(h, "");
	heatmap_add(h, 0, T0, UINT64_MAX / 3);
	heatmap_add(h, 1, T0 + 90 * SEC, 1);
	heatmap_add(h, 2, T0 + 900 * SEC, UINT64_MAX);
	heatmap_add(h, 3, T0 + 9 * SEC, 12345);
}

static void one_column_map(struct heatmap *h)
{
	heatmap_init(h, "k", "one column", "u", T0, 250 * 1000000ULL);
	heatmap_add(h, heatmap_row(h, "a"), T0, 1);
}

typedef void (*map_fn)(struct heatmap *);

TEST(every_line_fits_width)
{
	static const map_fn maps[] = { tw_map, states_map, lifetime_map, hostile_map,
				       one_column_map };
	char what[96];

	for (size_t m = 0; m < sizeof(maps) / sizeof(maps[0]); m++) {
		struct heatmap h;

		maps[m](&h);
		for (int width = 1; width <= 200; width += width < 50 ? 1 : 7)
			for (int flags = 0; flags < 8; flags++) {
				struct heatmap_term_opts o = { .width = width,
							       .unicode = flags & 1,
							       .color = flags & 2,
							       .log_scale = flags & 4 };
				char *out = render(&h, &o);

				snprintf(what, sizeof(what), "map %zu width %d flags %d", m,
					 width, flags);
				/* Below the minimum it draws at 20. */
				check_lines(out, width < 20 ? 20 : width, o.color, what);
				for (const char *p = out; !o.unicode && *p; p++)
					ASSERT_TRUE((unsigned char)*p < 0x80, "ASCII is ASCII");
				free(out);
			}
		heatmap_free(&h);
	}
}

TEST(default_options_are_80_ascii)
{
	struct heatmap h;
	struct heatmap_term_opts o = { .width = 80 };
	char *a, *b;

	tw_map(&h);
	a = render(&h, NULL);
	b = render(&h, &o);
	ASSERT_STREQ(a, b, "NULL options are width 80, ASCII, no colour");
	free(a);
	free(b);
	heatmap_free(&h);
}

/* Row "a" holds a single 1 next to row "b"'s million: a must show. */
TEST(nonzero_never_blank)
{
	struct heatmap h;

	for (int flags = 0; flags < 4; flags++) {
		struct heatmap_term_opts o = { .width = 80, .unicode = flags & 1,
					       .log_scale = flags & 2 };
		char *out, *line;

		heatmap_init(&h, "k", "t", "u", T0, SEC);
		heatmap_add(&h, heatmap_row(&h, "a"), T0, 1);
		heatmap_add(&h, heatmap_row(&h, "b"), T0 + SEC, 1000000);
		heatmap_add(&h, heatmap_row(&h, "a"), T0 + 2 * SEC, 999999);
		out = render(&h, &o);
		line = strstr(out, "\na ");
		ASSERT_TRUE(line != NULL, "row a");
		/* "a" + space, then the cells: 1, 0, 999999. */
		ASSERT_TRUE(line[3] != ' ', "the 1 is not blank");
		ASSERT_TRUE(!strncmp(strstr(out, "\nb ") + 3, " ", 1), "a zero is blank");
		free(out);
		heatmap_free(&h);
	}
}

TEST(hostile_text_is_neutralised)
{
	struct heatmap h;
	struct heatmap_term_opts o = { .width = 80, .unicode = true };
	char *out;

	hostile_map(&h);
	out = render(&h, &o);
	ASSERT_TRUE(strchr(out, '\033') == NULL, "no escape without colour");
	ASSERT_TRUE(strchr(out, '\a') == NULL, "no bell");
	ASSERT_TRUE(strstr(out, "\xe2\x80\xae") == NULL, "no bidi override");
	ASSERT_TRUE(strstr(out, "\xc2\x85") == NULL, "no C1 control");
	ASSERT_TRUE(strstr(out, "?[31mred?[0m") != NULL, "escapes shown as ?");
	ASSERT_TRUE(strstr(out, "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80 box") != NULL,
		    "valid UTF-8 kept");
	check_lines(out, 80, false, "hostile");
	free(out);
	heatmap_free(&h);
}

TEST(empty_maps)
{
	struct heatmap h;
	struct heatmap_term_opts o = { .width = 80 };
	char *out;

	heatmap_init(&h, "time_wait", "", "sockets", T0, SEC);
	out = render(&h, &o);
	ASSERT_STREQ(out, "time_wait (sockets per cell, bucket width 1s)\n(no data)\n",
		     "no rows, no title");
	free(out);
	heatmap_row(&h, "a");
	heatmap_extend(&h, T0 + 3 * SEC);
	out = render(&h, &o);
	ASSERT_STREQ(out,
		     "time_wait (sockets per cell, bucket width 1s)\n"
		     "a         0\n"
		     "  0s 3s total\n"
		     "scale: all cells are 0\n", "rows of zeros");
	free(out);
	heatmap_free(&h);
}

TEST(durations_in_title_and_axis)
{
	static const struct {
		uint64_t bucket_ns;
		int ncols;
		const char *width, *end;
	} cases[] = {
		{ 250 * 1000000ULL, 4, "250ms", "1s" },
		{ 1500 * 1000000ULL, 3, "1.5s", "4.5s" },
		{ 60 * SEC, 90, "1m", "1h30m" },
		{ 3600 * SEC + 5 * SEC, 2, "1h5s", "2h10s" },
		{ 1234, 3, "1.234us", "3.702us" },
		{ 999, 1, "999ns", "999ns" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct heatmap h;
		struct heatmap_term_opts o = { .width = 200 };
		char want[96], *out;

		heatmap_init(&h, "k", "", "u", 0, cases[i].bucket_ns);
		heatmap_row(&h, "a");
		heatmap_extend(&h, cases[i].bucket_ns * cases[i].ncols);
		out = render(&h, &o);
		snprintf(want, sizeof(want), "k (u per cell, bucket width %s)\n", cases[i].width);
		ASSERT_TRUE(!strncmp(out, want, strlen(want)), want);
		snprintf(want, sizeof(want), " %s total\n", cases[i].end);
		ASSERT_TRUE(strstr(out, want) != NULL, want);
		free(out);
		heatmap_free(&h);
	}
}

/* ---- colour decision ---------------------------------------------------- */

/* Sets or unsets NAME, returning the old value (malloc'd, or NULL). */
static char *swap_env(const char *name, const char *value)
{
	const char *old = getenv(name);
	char *keep = old ? strdup(old) : NULL;

	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
	return keep;
}

TEST(should_color)
{
	char *no_color = swap_env("NO_COLOR", NULL), *term = swap_env("TERM", "xterm-256color");
	FILE *mem, *tty;
	char *buf = NULL;
	size_t len;
	int master, slave;
	bool plain, with_no_color, empty_no_color, dumb, unset_term;

	mem = open_memstream(&buf, &len);
	ASSERT_TRUE(!heatmap_term_should_color(mem), "a memory stream is no terminal");
	fclose(mem);
	free(buf);

	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master)) {
		swap_env("TERM", term);
		SKIP("no pseudo-terminal");
	}
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	ASSERT_TRUE(slave >= 0, "open the pty");
	tty = fdopen(slave, "w");
	ASSERT_TRUE(tty != NULL, "fdopen");

	plain = heatmap_term_should_color(tty);
	setenv("NO_COLOR", "1", 1);
	with_no_color = heatmap_term_should_color(tty);
	setenv("NO_COLOR", "", 1);
	empty_no_color = heatmap_term_should_color(tty);
	unsetenv("NO_COLOR");
	setenv("TERM", "dumb", 1);
	dumb = heatmap_term_should_color(tty);
	unsetenv("TERM");
	unset_term = heatmap_term_should_color(tty);

	fclose(tty);
	close(master);
	free(swap_env("NO_COLOR", no_color));
	free(swap_env("TERM", term));
	free(no_color);
	free(term);
	ASSERT_TRUE(plain, "a terminal, TERM=xterm-256color");
	ASSERT_TRUE(!with_no_color, "NO_COLOR=1");
	ASSERT_TRUE(empty_no_color, "NO_COLOR empty counts as unset (no-color.org)");
	ASSERT_TRUE(!dumb, "TERM=dumb");
	ASSERT_TRUE(unset_term, "TERM unset is not dumb");
}

UNIT_MAIN()
