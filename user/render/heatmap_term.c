/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A heatmap on a terminal (tests/data/heatmap/ holds more):
 *
 *	TIME_WAIT by remote, pid 4242 nginx (sockets per cell, bucket width 1s)
 *	10.0.0.1:443               ..::-+*%@@%#*=-::...           200
 *	10.0.0.2:443                .     .     .     .     .       5
 *	db-primary.i~le.com:5432   .  :  .  :  .  :  .  :  .  :    25
 *	                         0s                         30s total
 *	scale:  . 1-2  : 3-5  - 6-8  = 9-11  + 12-13  * 14-16  # 17-19  % 20-22  @ 23-25
 *
 * One character per time column, after merging columns (heatmap_rebucket)
 * until label, cells and the total column fit the width. Labels are cut in
 * the middle, where an endpoint's least telling part is, or at the start
 * when the middle cut makes two rows look alike. The right column
 * is the row's total, or its max for a sampled map. A blank cell is zero
 * and only zero: the lowest level starts at 1, so one socket in a sea of
 * thousands still shows.
 *
 * Glyph levels: zero is ' ', then ASCII ".:-=+*#%@" (9 levels) or the
 * Unicode shades U+2591 U+2592 U+2593 U+2588 (4 levels; shades read as
 * density, eighth blocks would read as a bar chart per row). Linear scale:
 * level = ceil(v * levels / max); log scale: 1 + floor(levels * log2(v) /
 * log2(max)), in integer fixed point because libm is not linked and the
 * golden files want the same levels on every machine. The legend gives each
 * level's value range, found from the same function so the two cannot
 * disagree.
 *
 * Colour: the glyph keeps its shape and gets an xterm-256 foreground, so a
 * copy without escapes (a ticket, a log) still reads, and so does the map
 * for someone who cannot tell the colours apart. The ramp is viridis-like,
 * violet to gold with CIELAB lightness rising monotonically (43.8 to 86.9),
 * lifted at the dark end so that level 1 stays visible on a black terminal:
 *	61 #5f5faf, 31 #0087af, 37 #00afaf, 72 #5faf87, 42 #00d787,
 *	113 #87d75f, 149 #afd75f, 184 #d7d700, 220 #ffd700
 * A ramp of fewer levels takes entries spread over the whole table (shades:
 * 61, 37, 113, 220). The colour is reset after the last glyph of a row, so
 * nothing leaks into the total column or the next line.
 *
 * Every line is built in a buffer that counts display columns (escapes
 * none, a code point one) and drops what would pass the width: the layout
 * is meant to fit, the buffer makes sure. Text from the map (labels, title:
 * comm names, which any process picks for itself) is printed with control
 * characters, broken UTF-8 and, in ASCII mode, anything not ASCII replaced
 * by '?', so it cannot move the cursor or recolour the terminal. Wide (CJK)
 * and combining characters are counted as one column: there is no locale
 * here to ask wcwidth(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heatmap.h"

#define TERM_DEFAULT_WIDTH 80
#define TERM_MIN_WIDTH 20
/* The label column takes up to a third of the width, within these bounds:
 * less, and endpoints of one subnet all cut down to the same "10.0.~:443". */
#define LABEL_MIN 6
#define LABEL_MAX 24
/* Below this many cell columns, shorten the labels to make room. */
#define CELLS_MIN 10

static const char *const ascii_ramp[] = { ".", ":", "-", "=", "+", "*", "#", "%", "@" };
/* U+2591 U+2592 U+2593 U+2588 as UTF-8, whatever the compiler's charset. */
static const char *const shade_ramp[] = { "\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93",
					  "\xe2\x96\x88" };
static const unsigned char color_ramp[] = { 61, 31, 37, 72, 42, 113, 149, 184, 220 };
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define ELLIPSIS_UTF8 "\xe2\x80\xa6"	/* U+2026 */
#define ANSI_RESET "\033[0m"

/* ---- one output line ---------------------------------------------------- */

struct tline {
	char *buf;
	size_t len, cap;
	int cols, width;
	bool colored;		/* a colour escape is in effect */
};

/* Room is kept for the final reset, so a full buffer cannot leave the
 * terminal coloured. cap is sized so this never drops anything in
 * practice: see line_cap(). */
static bool tl_bytes(struct tline *l, const char *s, size_t n, size_t keep)
{
	if (l->len + n + keep > l->cap)
		return false;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	return true;
}

/* One display column's worth of bytes: a glyph, a space, a character. */
static void tl_put(struct tline *l, const char *s, size_t n)
{
	if (l->cols >= l->width)
		return;
	if (tl_bytes(l, s, n, sizeof(ANSI_RESET)))
		l->cols++;
}

static void tl_glyph(struct tline *l, const char *g)
{
	tl_put(l, g, strlen(g));
}

static void tl_pad(struct tline *l, int n)
{
	while (n-- > 0)
		tl_put(l, " ", 1);
}

static void tl_color(struct tline *l, int idx)
{
	char esc[16];
	int n = snprintf(esc, sizeof(esc), "\033[38;5;%dm", idx);

	/* Past the width nothing more is drawn, so no colour is needed. */
	if (l->cols < l->width && tl_bytes(l, esc, n, sizeof(ANSI_RESET)))
		l->colored = true;
}

static void tl_reset(struct tline *l)
{
	if (l->colored && tl_bytes(l, ANSI_RESET, strlen(ANSI_RESET), 0))
		l->colored = false;
}

/* Ends the line: trailing blanks go (goldens and pasted text do not keep
 * them well), the colour is reset, the line is written. */
static void tl_end(struct tline *l, FILE *out)
{
	while (l->len && l->buf[l->len - 1] == ' ') {
		l->len--;
		l->cols--;
	}
	tl_reset(l);
	fwrite(l->buf, 1, l->len, out);
	fputc('\n', out);
	l->len = 0;
	l->cols = 0;
}

/* ---- text from the map -------------------------------------------------- */

/* The code point at s, its length in *n; -1 (length 1) for a byte that does
 * not start a valid, shortest-form UTF-8 sequence. */
static int32_t utf8_next(const unsigned char *s, int *n)
{
	unsigned char c = s[0];
	int32_t cp, min;
	int len;

	*n = 1;
	if (c < 0x80)
		return c;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		len = 3, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07, min = 0x10000;
	else
		return -1;
	/* The NUL terminator fails the continuation test: no overrun. */
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*n = len;
	return cp;
}

/* Characters that would act on the terminal or the layout instead of
 * showing: C0, DEL, C1 (which some terminals obey as escapes), and the
 * invisible formatting ones (zero widths, bidi overrides, BOM). */
static bool printable(int32_t cp)
{
	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
		return false;
	if ((cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
	    (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff)
		return false;
	return true;
}

/* What to print for the character at *s (in out, NUL-terminated); advances
 * *s past it. Every character is one display column. */
static void text_next(const char **s, bool unicode, char out[5])
{
	int n;
	int32_t cp = utf8_next((const unsigned char *)*s, &n);

	if (cp < 0 || !printable(cp) || (!unicode && cp >= 0x80)) {
		out[0] = '?';
		out[1] = '\0';
	} else {
		memcpy(out, *s, n);
		out[n] = '\0';
	}
	*s += n;
}

static int text_cols(const char *s, bool unicode)
{
	char ch[5];
	int n = 0;

	while (*s) {
		text_next(&s, unicode, ch);
		n++;
	}
	return n;
}

enum cut { CUT_END, CUT_MIDDLE, CUT_START };

/* Writes s in at most max columns; a longer s loses its end, middle or
 * start to an ellipsis ('~' in ASCII). */
static void tl_text(struct tline *l, const char *s, int max, enum cut how, bool unicode)
{
	int n = text_cols(s, unicode), head = n, skip = 0;
	char ch[5];

	if (max <= 0)
		return;
	if (n > max) {
		head = how == CUT_MIDDLE ? max / 2 : how == CUT_START ? 0 : max - 1;
		skip = n - (max - 1);	/* characters the ellipsis stands for */
	}
	for (int i = 0; *s; i++) {
		text_next(&s, unicode, ch);
		if (i < head || i >= head + skip)
			tl_glyph(l, ch);
		else if (i == head)
			tl_glyph(l, unicode ? ELLIPSIS_UTF8 : "~");
	}
}

/* ---- scale -------------------------------------------------------------- */

/* A label as printed: sanitized and cut, at most 4 bytes a character. */
#define LABEL_BYTES (HEATMAP_LABEL_LEN * 4 + 16)

struct render {
	const struct heatmap *h;	/* as drawn: rebucketed when needed */
	char labels[HEATMAP_MAX_ROWS][LABEL_BYTES];
	int width, label_w, total_w;
	bool color, unicode, log_scale;
	const char *const *ramp;
	int nlev;
	uint64_t max;
	uint32_t log_max;
	const char *total_word;
	struct tline line;
};

/* log2(v) in 16.16 fixed point, v >= 1: the integer part from the top bit,
 * the fraction bit by bit by squaring the mantissa. */
static uint32_t log2_fx(uint64_t v)
{
	int top = 63 - __builtin_clzll(v);
	uint32_t r = (uint32_t)top << 16;
	/* The mantissa v / 2^top in [1, 2), as Q62. */
	uint64_t m = top <= 62 ? v << (62 - top) : v >> 1;

	for (int b = 15; b >= 0; b--) {
		m = (uint64_t)(((unsigned __int128)m * m) >> 62);
		if (m >= 1ULL << 63) {
			m >>= 1;
			r |= 1u << b;
		}
	}
	return r;
}

/* 0 for zero, else 1..nlev; monotonic in v, nlev from max on. */
static int level_of(const struct render *r, uint64_t v)
{
	if (!v)
		return 0;
	if (v >= r->max)
		return r->nlev;
	/* From here 1 <= v < max, so max >= 2 and log_max > 0. */
	if (r->log_scale)
		return 1 + (int)((uint64_t)r->nlev * log2_fx(v) / (r->log_max + 1));
	return (int)(((unsigned __int128)v * r->nlev + r->max - 1) / r->max);
}

/* The smallest v in [1, max] at level k or above (level_of(max) is the
 * top, so there is one). */
static uint64_t level_start(const struct render *r, int k)
{
	uint64_t lo = 1, hi = r->max;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (level_of(r, mid) >= k)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int color_of(const struct render *r, int lev)
{
	size_t last = ARRAY_LEN(color_ramp) - 1;

	if (r->nlev <= 1)
		return color_ramp[last];
	return color_ramp[(size_t)(lev - 1) * last / (r->nlev - 1)];
}

/* ---- layout ------------------------------------------------------------- */

/* "0s", "250ms", "1.5s", "30s", "2m30s", "1h": the axis and the title. */
static void fmt_dur(char *buf, size_t len, uint64_t ns)
{
	static const struct {
		uint64_t div;
		const char *sfx;
	} units[] = { { 1000000000, "s" }, { 1000000, "ms" }, { 1000, "us" } };

	if (ns >= 1000000000 && ns % 1000000000 == 0) {
		uint64_t s = ns / 1000000000;
		unsigned long long h = s / 3600;
		unsigned m = s / 60 % 60, sec = s % 60;
		int n = 0;

		buf[0] = '\0';
		if (h)
			n += snprintf(buf + n, len - n, "%lluh", h);
		if (m && (size_t)n < len)
			n += snprintf(buf + n, len - n, "%um", m);
		if ((sec || (!h && !m)) && (size_t)n < len)
			snprintf(buf + n, len - n, "%us", sec);
		return;
	}
	for (size_t i = 0; i < ARRAY_LEN(units); i++) {
		uint64_t div = units[i].div;
		unsigned frac;
		char digits[8];
		int d;

		if (ns < div)
			continue;
		/* Three decimals at most, trailing zeros dropped. */
		frac = (ns % div) / (div / 1000);
		d = snprintf(digits, sizeof(digits), ".%03u", frac);
		while (d > 1 && digits[d - 1] == '0')
			digits[--d] = '\0';
		snprintf(buf, len, "%llu%s%s", (unsigned long long)(ns / div),
			 d > 1 ? digits : "", units[i].sfx);
		return;
	}
	snprintf(buf, len, "%lluns", (unsigned long long)ns);
}

static int u64_cols(uint64_t v)
{
	char buf[24];

	return snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
}

static void put_u64(struct tline *l, uint64_t v, int width)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);

	tl_pad(l, width - n);
	tl_text(l, buf, n, CUT_END, false);
}

/* The title, with the unit and bucket width; on two lines when one does
 * not hold both. */
static void draw_title(struct render *r, FILE *out)
{
	const struct heatmap *h = r->h;
	const char *name = h->title[0] ? h->title : h->kind[0] ? h->kind : "heatmap";
	char dur[32], paren[96], both[sizeof(h->title) + sizeof(paren) + 2];

	fmt_dur(dur, sizeof(dur), h->bucket_ns);
	snprintf(paren, sizeof(paren), "(%s per cell%s, bucket width %s)",
		 h->unit[0] ? h->unit : "count", h->sampled ? ", sampled" : "", dur);
	snprintf(both, sizeof(both), "%s %s", name, paren);
	if (text_cols(both, r->unicode) <= r->width) {
		tl_text(&r->line, both, r->width, CUT_END, r->unicode);
	} else {
		tl_text(&r->line, name, r->width, CUT_END, r->unicode);
		tl_end(&r->line, out);
		tl_text(&r->line, paren, r->width, CUT_END, r->unicode);
	}
	tl_end(&r->line, out);
}

static void draw_row(struct render *r, FILE *out, int row)
{
	const struct heatmap *h = r->h;
	struct tline *l = &r->line;
	size_t end = 0;
	int cur = -1;

	/* The colour ends with the last glyph, not with trailing blanks. */
	for (size_t c = 0; c < h->ncols; c++)
		if (heatmap_cell(h, row, c))
			end = c + 1;
	tl_text(l, r->labels[row], r->label_w, CUT_END, r->unicode);
	tl_pad(l, r->label_w + 1 - l->cols);
	for (size_t c = 0; c < h->ncols; c++) {
		int lev = level_of(r, heatmap_cell(h, row, c));

		if (c == end)
			tl_reset(l);
		if (!lev) {
			/* A blank shows no colour: keep the current one. */
			tl_glyph(l, " ");
			continue;
		}
		if (r->color && color_of(r, lev) != cur) {
			cur = color_of(r, lev);
			tl_color(l, cur);
		}
		tl_glyph(l, r->ramp[lev - 1]);
	}
	tl_reset(l);
	tl_pad(l, 1);
	put_u64(l, heatmap_row_total(h, row), r->total_w);
	tl_end(l, out);
}

/* "0s" under the first column, the end under the last, the name of the
 * right column under it. */
static void draw_axis(struct render *r, FILE *out)
{
	const struct heatmap *h = r->h;
	struct tline *l = &r->line;
	uint64_t end = h->bucket_ns > UINT64_MAX / h->ncols ? UINT64_MAX :
			h->bucket_ns * h->ncols;
	char endbuf[32];
	int cells = h->ncols, len_end, gap;

	fmt_dur(endbuf, sizeof(endbuf), end);
	len_end = strlen(endbuf);
	/* Too few columns for both: let the end spill to the right. */
	gap = cells - 2 - len_end;
	if (gap < 1)
		gap = 1;
	tl_pad(l, r->label_w + 1);
	tl_text(l, "0s", 2, CUT_END, false);
	tl_pad(l, gap);
	tl_text(l, endbuf, len_end, CUT_END, false);
	gap = r->label_w + 1 + cells + 1 + r->total_w - (int)strlen(r->total_word) - l->cols;
	tl_pad(l, gap < 1 ? 1 : gap);
	tl_text(l, r->total_word, r->total_w, CUT_END, false);
	tl_end(l, out);
}

/* "scale:  . 1-3  : 4-6 ...", wrapped under itself when it is too long. */
static void draw_legend(struct render *r, FILE *out)
{
	const char *prefix = r->log_scale ? "scale (log):" : "scale:";
	struct tline *l = &r->line;
	int indent = strlen(prefix);

	tl_text(l, prefix, indent, CUT_END, false);
	if (!r->max) {
		tl_text(l, " all cells are 0", r->width, CUT_END, false);
		tl_end(l, out);
		return;
	}
	for (int k = 1; k <= r->nlev; k++) {
		uint64_t lo = level_start(r, k), hi;
		char range[48];
		int n;

		if (level_of(r, lo) != k)
			continue;	/* no integer maps here */
		hi = k == r->nlev ? r->max : level_start(r, k + 1) - 1;
		if (lo == hi)
			n = snprintf(range, sizeof(range), "%llu", (unsigned long long)lo);
		else
			n = snprintf(range, sizeof(range), "%llu-%llu", (unsigned long long)lo,
				     (unsigned long long)hi);
		/* "  G range" */
		if (l->cols > indent && l->cols + 4 + n > r->width) {
			tl_end(l, out);
			tl_pad(l, indent);
		}
		tl_pad(l, 2);
		if (r->color)
			tl_color(l, color_of(r, k));
		tl_glyph(l, r->ramp[k - 1]);
		tl_reset(l);
		tl_pad(l, 1);
		tl_text(l, range, n, CUT_END, false);
	}
	tl_end(l, out);
}

static void cut_text(char *out, const char *s, int max, enum cut how, bool unicode)
{
	struct tline t = { .buf = out, .cap = LABEL_BYTES - 1, .width = max };

	tl_text(&t, s, max, how, unicode);
	out[t.len] = '\0';
}

/* Labels are cut in the middle, which keeps a host's start and a port; when
 * that makes two rows look the same (one subnet, one port) they keep their
 * ends instead, where addresses differ. */
static void cut_labels(struct render *r)
{
	const struct heatmap *h = r->h;
	bool clash[HEATMAP_MAX_ROWS] = { false };

	for (int i = 0; i < h->nrows; i++)
		cut_text(r->labels[i], h->rows[i].label, r->label_w, CUT_MIDDLE, r->unicode);
	for (int i = 0; i < h->nrows; i++)
		for (int j = i + 1; j < h->nrows; j++)
			if (!strcmp(r->labels[i], r->labels[j]))
				clash[i] = clash[j] = true;
	for (int i = 0; i < h->nrows; i++)
		if (clash[i])
			cut_text(r->labels[i], h->rows[i].label, r->label_w, CUT_START,
				 r->unicode);
}

/* Column widths: the label column as wide as the longest label within its
 * bounds, the total column as wide as the largest total or its name, the
 * cells what is left. Returns how many cell columns there is room for. */
static int layout(struct render *r, const struct heatmap *h)
{
	int longest = 1, cap, avail;

	for (int i = 0; i < h->nrows; i++) {
		int n = text_cols(h->rows[i].label, r->unicode);

		longest = n > longest ? n : longest;
	}
	cap = r->width / 3;
	cap = cap < LABEL_MIN ? LABEL_MIN : cap > LABEL_MAX ? LABEL_MAX : cap;
	r->label_w = longest < cap ? longest : cap;
	r->total_w = strlen(r->total_word);
	for (int i = 0; i < h->nrows; i++) {
		int n = u64_cols(heatmap_row_total(h, i));

		r->total_w = n > r->total_w ? n : r->total_w;
	}
	avail = r->width - r->label_w - 1 - 1 - r->total_w;
	if (avail < CELLS_MIN) {
		r->label_w -= CELLS_MIN - avail;
		if (r->label_w < 1)
			r->label_w = 1;
		avail = r->width - r->label_w - 1 - 1 - r->total_w;
	}
	return avail < 1 ? 1 : avail;
}

/* Bytes for one line: per column at most a 4-byte character and an 11-byte
 * colour escape, plus the reset and some slack. */
static size_t line_cap(int width)
{
	return (size_t)width * 16 + 64;
}

void format_heatmap_term(FILE *out, const struct heatmap *h, const struct heatmap_term_opts *o)
{
	static const struct heatmap_term_opts defaults;
	struct render r = { 0 };
	struct heatmap merged;
	bool rebucketed = false;
	int avail;

	if (!o)
		o = &defaults;
	r.width = o->width > 0 ? o->width : TERM_DEFAULT_WIDTH;
	if (r.width < TERM_MIN_WIDTH)
		r.width = TERM_MIN_WIDTH;
	r.color = o->color;
	r.unicode = o->unicode;
	r.log_scale = o->log_scale;
	r.ramp = r.unicode ? shade_ramp : ascii_ramp;
	r.nlev = r.unicode ? ARRAY_LEN(shade_ramp) : ARRAY_LEN(ascii_ramp);
	r.total_word = h->sampled ? "max" : "total";
	r.line.width = r.width;
	r.line.cap = line_cap(r.width);
	r.line.buf = malloc(r.line.cap);
	if (!r.line.buf) {
		fprintf(out, "heatmap: %s\n", strerror(ENOMEM));
		return;
	}

	r.h = h;
	avail = layout(&r, h);
	if (h->ncols > (size_t)avail) {
		int err = heatmap_rebucket(h, &merged, avail);

		if (err) {
			fprintf(out, "heatmap: %s\n", strerror(-err));
			free(r.line.buf);
			return;
		}
		r.h = &merged;
		rebucketed = true;
	}
	cut_labels(&r);
	r.max = heatmap_max(r.h);
	r.log_max = r.max ? log2_fx(r.max) : 0;

	draw_title(&r, out);
	if (!r.h->nrows || !r.h->ncols) {
		tl_text(&r.line, "(no data)", r.width, CUT_END, false);
		tl_end(&r.line, out);
	} else {
		for (int i = 0; i < r.h->nrows; i++)
			draw_row(&r, out, i);
		draw_axis(&r, out);
		draw_legend(&r, out);
	}
	if (rebucketed)
		heatmap_free(&merged);
	free(r.line.buf);
}

bool heatmap_term_should_color(FILE *out)
{
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
	int fd = fileno(out);

	if (fd < 0 || !isatty(fd))
		return false;
	/* no-color.org: set and not empty means no colour, whatever its value. */
	if (no_color && *no_color)
		return false;
	return !term || strcmp(term, "dumb") != 0;
}
