/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* heatmap_term.c: exact terminal output against golden files in
 * tests/data/heatmap, the renderer's properties and its colour decision.
 * No root, no kernel.
 *
 * The goldens are the renderer's specification, written by the renderer:
 *	UPDATE_GOLDEN=1 .output/tests/test_heatmap_term
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
