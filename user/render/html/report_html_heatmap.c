/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The heatmaps of the HTML report: inline SVG with axes, legend and a
 * hover readout; see report_html.c for the page around them.
 *
 * The heatmaps are SVG generated here, not drawn by script: the page reads
 * the same with JavaScript off, a DOM dump holds every cell, and the maps
 * drawn are the ones the JSON report prints (the socket maps through the
 * same heatmap_top(), the fd maps whole), so the two agree cell for cell
 * (cells[row][col] there is data-row/data-col here while the map needs no
 * merging: at most HTML_MAX_COLS columns).
 * The small inline script only adds the hover readout:
 *
 *	<svg id="hm-PID-KIND" class="hm" data-bucket-s="0.5" data-end-s="6.3" data-unit="sockets">
 *	  <text class="rl" data-row="R" data-label="full label">cut label</text>
 *	  <rect class="c" data-row="R" data-col="C" data-value="V"><title>...</title></rect>
 *	<div id="readout-hm-PID-KIND" class="readout">
 *
 * KIND is the heatmap's kind ("time_wait", "orphan", "lifetime",
 * "requests_per_conn", "fd_type", "fd_age").
 * On mouseover of a cell the readout shows row label, time range and
 * value, and gets the cell's data-row, data-col and data-value itself, so
 * that a test reading the DOM finds them in one place. A fragment
 * #hover=ID:ROW:COL makes the script dispatch a real mouseover on that
 * cell once the page is up: the headless test's way into the hover code.
 *
 * Colour: reversed viridis, light yellow at 1 to dark violet at the map's
 * maximum (darker = more, as on a light page one expects), linear like the
 * terminal's default. Zero is a neutral grey outside the ramp, and 1 maps
 * to the ramp's start rather than near it, so a single socket next to
 * thousands still stands apart from an empty cell. Labels come from the
 * network and from processes: they are escaped like every such string. */
#include <string.h>

#include "heatmap_top.h"
#include "report_html_internal.h"

/* More columns than this are merged (heatmap_rebucket): a cell narrower
 * than ~4 px can neither be seen nor hovered. */
#define HTML_MAX_COLS 240

/* Heatmap geometry, in SVG user units (= CSS px at full width). */
#define HM_W_MAX 1100		/* the page's content width */
#define HM_LEGEND_TEXT_W 170	/* "sockets per cell, linear" */
#define HM_W_SCROLL 820		/* narrower screens scroll the map */
#define HM_CELL_MAX 64		/* short runs: cells stay cells, not bars */
#define HM_ROW_H 26
#define HM_ROW_GAP 3
#define HM_PAD_T 24		/* the "peak" header above the rows */
#define HM_PAD_R 12
#define HM_RIGHT_W 64		/* the per-row peak/total column */
#define HM_CHAR_W 7.3		/* monospace 12 px, for the label column */
#define HM_LABEL_CHARS 34	/* longer labels are cut in the middle */
#define HM_LEGEND_STEPS 64
#define HM_LEGEND_W 256
#define HM_ZERO "#eceff3"

/* ---- labels --------------------------------------------------------------- */

/* s cut to at most max code points, the middle replaced by an ellipsis:
 * an endpoint's address prefix and port tell more than its middle. Cuts
 * only between UTF-8 sequences. */
static void cut_middle(char *dst, size_t size, const char *s, int max)
{
	size_t starts[HEATMAP_LABEL_LEN + 1], len = strlen(s);
	int n = 0, head, tail;

	for (size_t i = 0; i < len && n < HEATMAP_LABEL_LEN; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			starts[n++] = i;
	if (n <= max) {
		snprintf(dst, size, "%s", s);
		return;
	}
	head = (max - 1) / 2;
	tail = max - 1 - head;
	snprintf(dst, size, "%.*s\xe2\x80\xa6%s", (int)starts[head], s, s + starts[n - tail]);
}

static int utf8_len(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* ---- colour --------------------------------------------------------------- */

/* viridis at tenths, from its yellow end to its violet end */
static const unsigned char ramp[][3] = {
	{ 0xfd, 0xe7, 0x25 }, { 0xb5, 0xde, 0x2b }, { 0x6e, 0xce, 0x58 },
	{ 0x35, 0xb7, 0x79 }, { 0x1f, 0x9e, 0x89 }, { 0x26, 0x82, 0x8e },
	{ 0x31, 0x68, 0x8e }, { 0x3e, 0x4a, 0x89 }, { 0x48, 0x28, 0x78 },
	{ 0x44, 0x01, 0x54 },
};
#define RAMP_LEN ((int)(sizeof(ramp) / sizeof(ramp[0])))

/* t in [0, 1] -> "#rrggbb"; also whether text on it should be light. */
static void ramp_color(double t, char buf[8], bool *dark)
{
	double x, f;
	int i, rgb[3];

	if (t < 0)
		t = 0;
	if (t > 1)
		t = 1;
	x = t * (RAMP_LEN - 1);
	i = (int)x;
	if (i >= RAMP_LEN - 1)
		i = RAMP_LEN - 2;
	f = x - i;
	for (int k = 0; k < 3; k++)
		rgb[k] = (int)(ramp[i][k] + (ramp[i + 1][k] - ramp[i][k]) * f + 0.5);
	snprintf(buf, 8, "#%02x%02x%02x", rgb[0] & 0xff, rgb[1] & 0xff, rgb[2] & 0xff);
	if (dark)
		*dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 140;
}

/* 1 is the ramp's start and max its end; a map whose max is 1 shows its
 * cells at full strength. */
static double value_t(uint64_t v, uint64_t max)
{
	return max > 1 ? (double)(v - 1) / (double)(max - 1) : 1.0;
}

/* ---- style and script ------------------------------------------------------ */

const char html_heatmap_css[] =
	"figure.hmfig{margin:22px 0 6px}\n"
	"figure.hmfig figcaption{margin-bottom:6px}\n"
	"figure.hmfig figcaption b{font-size:14px}\n"
	"figure.hmfig figcaption span{display:block;color:var(--muted);font-size:12.5px}\n"
	"svg.hm{display:block;width:100%;height:auto}\n"
	"svg.hm text{font-size:12px;fill:#3b4452}\n"
	"svg.hm .rl{font-family:var(--mono)}\n"
	"svg.hm .cv{font-size:11px;pointer-events:none;font-variant-numeric:tabular-nums}\n"
	"svg.hm .cv.lt{fill:#fff}\n"
	"svg.hm .ax{stroke:#9aa4b2;stroke-width:1}\n"
	"svg.hm .hd{fill:var(--muted);font-size:11px}\n"
	"svg.hm rect.c:hover,svg.hm rect.c.sel{stroke:#111827;stroke-width:2}\n"
	".readout{display:flex;flex-wrap:wrap;gap:4px 14px;align-items:baseline;min-height:34px;"
	"margin:6px 0 0;padding:6px 12px;border-radius:8px;background:#f3f5f8;color:var(--muted);"
	"font-variant-numeric:tabular-nums}\n"
	".readout.on{background:#eef0fb;color:var(--fg)}\n"
	".readout .ro-l{font-family:var(--mono);font-weight:600}\n"
	".readout .ro-v{font-size:16px}\n";

/* The hover readout; see the top of this file. */
const char html_heatmap_script[] =
	"(function(){\n"
	"'use strict';\n"
	"function num(s){return String(Math.round(s*1000)/1000);}\n"
	"function part(out,tag,cls,text){var e=document.createElement(tag);e.className=cls;"
	"e.textContent=text;out.appendChild(e);}\n"
	"function show(svg,cell){\n"
	" var out=document.getElementById('readout-'+svg.id);\n"
	" var row=cell.getAttribute('data-row'),col=cell.getAttribute('data-col');\n"
	" var val=cell.getAttribute('data-value'),b=+svg.getAttribute('data-bucket-s');\n"
	" var lab=svg.querySelector('.rl[data-row=\"'+row+'\"]');\n"
	" var prev=svg.querySelector('rect.c.sel');\n"
	" if(prev)prev.classList.remove('sel');\n"
	" cell.classList.add('sel');\n"
	" if(!out)return;\n"
	" out.textContent='';\n"
	" part(out,'span','ro-l',lab?lab.getAttribute('data-label'):row);\n"
	" var e=+svg.getAttribute('data-end-s')||0,hi=(+col+1)*b;\n"
	" if(e&&hi>e)hi=e;\n"
	" part(out,'span','ro-t',num(col*b)+'\\u2013'+num(hi)+' s');\n"
	" part(out,'strong','ro-v',val);\n"
	" part(out,'span','ro-u',svg.getAttribute('data-unit')||'');\n"
	" out.setAttribute('data-row',row);out.setAttribute('data-col',col);\n"
	" out.setAttribute('data-value',val);out.classList.add('on');\n"
	"}\n"
	"var maps=document.querySelectorAll('svg.hm');\n"
	"for(var i=0;i<maps.length;i++)maps[i].addEventListener('mouseover',function(ev){\n"
	" var t=ev.target;\n"
	" if(t&&t.classList&&t.classList.contains('c'))show(this,t);\n"
	"});\n"
	"function fromHash(){\n"
	" var m=/^#hover=([A-Za-z0-9_-]+):([0-9]+):([0-9]+)$/.exec(location.hash);\n"
	" var svg=m&&document.getElementById(m[1]);\n"
	" var cell=svg&&svg.querySelector('rect.c[data-row=\"'+m[2]+'\"][data-col=\"'+m[3]+"
	"'\"]');\n"
	" if(cell)cell.dispatchEvent(new MouseEvent('mouseover',"
	"{bubbles:true,cancelable:true,view:window}));\n"
	"}\n"
	"fromHash();\n"
	"window.addEventListener('hashchange',fromHash);\n"
	"})();\n";

/* ---- drawing ---------------------------------------------------------------- */

/* A tick step in ms: the first "nice" one leaving at most 8 ticks at
 * least 56 px apart. */
static uint64_t tick_step_ns(uint64_t total_ns, uint64_t bucket_ns, double cw)
{
	static const uint64_t nice_ms[] = {
		100, 200, 250, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000,
		300000, 600000, 900000, 1800000, 3600000, 7200000, 10800000, 21600000,
		43200000, 86400000,
	};
	uint64_t step = 0;

	for (size_t i = 0; i < sizeof(nice_ms) / sizeof(nice_ms[0]); i++) {
		step = nice_ms[i] * 1000000ULL;
		if (step * 8 >= total_ns && (double)step / bucket_ns * cw >= 56)
			break;
	}
	return step;
}

/* The map's length: to the run's end where it ended inside the last
 * column (Ctrl-C between ticks), else whole columns. */
static uint64_t map_len_ns(const struct heatmap *h)
{
	return h->end_ns > h->t0_ns ? h->end_ns - h->t0_ns : heatmap_ncols(h) * h->bucket_ns;
}

static void svg_axis(FILE *out, const struct heatmap *h, double px, double y, double cw)
{
	uint64_t total = map_len_ns(h), step = tick_step_ns(total, h->bucket_ns, cw);
	double x1 = px + (double)total / h->bucket_ns * cw;
	bool end_label = total % step != 0;
	char b[32];

	fprintf(out, "<g class=\"xaxis\"><line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		     "y2=\"%.1f\"/>\n", px, y, x1, y);
	for (uint64_t t = 0; t <= total; t += step) {
		double x = px + (double)t / h->bucket_ns * cw;

		/* A tick too near the run's end gives its place to the end's. */
		fprintf(out, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			x, y, x, y + 5);
		if (!end_label || x1 - x >= 40)
			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
				x, y + 18, html_fmt_s(b, sizeof(b), t));
		fputc('\n', out);
		if (t > UINT64_MAX - step)
			break;
	}
	/* The run's end, where it is no tick. */
	if (end_label)
		fprintf(out, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			x1, y, x1, y + 5, x1, y + 18, html_fmt_s(b, sizeof(b), total));
	fprintf(out, "<text class=\"hd\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">seconds since "
		     "attach</text></g>\n", x1, y + 34);
}

/* Under the axis, aligned with the plot: "scale" where the row labels
 * are, the zero swatch, then the ramp from 1 to max. */
static void svg_legend(FILE *out, uint64_t max, const char *unit, double px, double y)
{
	double sw = (double)HM_LEGEND_W / HM_LEGEND_STEPS, gx = px + 44;
	char col[8];

	fprintf(out, "<g class=\"legend\"><text class=\"hd\" x=\"%.1f\" y=\"%.1f\" "
		     "text-anchor=\"end\">scale</text>\n"
		     "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"12\" rx=\"2\" fill=\"%s\" "
		     "stroke=\"#cfd5dd\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">0"
		     "</text>\n",
		px - 10, y + 10, px, y, HM_ZERO, px + 8, y + 26);
	for (int i = 0; i < HM_LEGEND_STEPS; i++) {
		/* max 1: one value, one colour, drawn as the ramp's end. */
		ramp_color(max > 1 ? (double)i / (HM_LEGEND_STEPS - 1) : 1, col, NULL);
		fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"12\" "
			     "fill=\"%s\"/>", gx + i * sw, y, sw + 0.3, col);
	}
	fprintf(out, "\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\">1</text>", gx, y + 26);
	if (max > 2)
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%llu</text>",
			gx + HM_LEGEND_W * value_t((max + 1) / 2, max), y + 26, ULL((max + 1) / 2));
	if (max > 1)
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%llu</text>",
			gx + HM_LEGEND_W, y + 26, ULL(max));
	fprintf(out, "<text class=\"hd\" x=\"%.1f\" y=\"%.1f\">", gx + HM_LEGEND_W + 12, y + 10);
	html_esc(out, unit && *unit ? unit : "count");
	fputs(" per cell, linear</text></g>\n", out);
}

/* An id part from a heatmap kind: [a-z0-9_] only, so it is safe in an
 * attribute, a CSS selector and the #hover fragment alike. */
static void kind_id(char *buf, size_t len, const char *kind)
{
	size_t i = 0;

	for (; *kind && i + 1 < len; kind++) {
		char c = *kind;

		buf[i++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ? c :
			   (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : '_';
	}
	buf[i] = '\0';
}

int html_label_chars(const struct heatmap *h, int at_least)
{
	for (int r = 0; r < h->nrows; r++) {
		int l = utf8_len(heatmap_label(h, r));

		if (l > at_least)
			at_least = l;
	}
	return at_least < HM_LABEL_CHARS ? at_least : HM_LABEL_CHARS;
}

static void svg_heatmap(FILE *out, const struct heatmap *h, const char *id, size_t merged,
			int labchars)
{
	size_t ncols = heatmap_ncols(h);
	uint64_t max = heatmap_max(h);
	double lw, cw, px, py = HM_PAD_T, w, ht, plot_w;
	char b1[32], b2[32], col[8], cut[HEATMAP_LABEL_LEN * 2];
	bool dark;

	lw = 18 + html_label_chars(h, labchars) * HM_CHAR_W;
	px = lw;
	plot_w = HM_W_MAX - lw - HM_RIGHT_W - HM_PAD_R;
	cw = plot_w / ncols;
	if (cw > HM_CELL_MAX)
		cw = HM_CELL_MAX;
	w = px + ncols * cw + HM_RIGHT_W + HM_PAD_R;
	/* A short run's map is narrow; the legend under it is not. */
	if (w < px + 44 + HM_LEGEND_W + 12 + HM_LEGEND_TEXT_W)
		w = px + 44 + HM_LEGEND_W + 12 + HM_LEGEND_TEXT_W;
	ht = py + h->nrows * HM_ROW_H + 96;

	/* Scaled to the page, but not below HM_W_SCROLL: on a phone the
	 * map scrolls sideways rather than shrink its text to nothing. */
	fprintf(out, "<div class=\"scroll\"><svg class=\"hm\" id=\"%s\" viewBox=\"0 0 %.0f %.0f\" "
		     "style=\"max-width:%.0fpx;min-width:%.0fpx\" role=\"img\" aria-label=\"",
		id, w, ht, w, w < HM_W_SCROLL ? w : HM_W_SCROLL);
	html_esc(out, h->title[0] ? h->title : h->kind);
	fprintf(out, "\" data-bucket-s=\"%.9g\" data-end-s=\"%.9g\" data-unit=\"", h->bucket_ns / 1e9,
		map_len_ns(h) / 1e9);
	html_esc(out, h->unit);
	fprintf(out, "\" data-rows=\"%d\" data-cols=\"%zu\" data-max=\"%llu\" "
		     "data-merged=\"%zu\">\n", h->nrows, ncols, ULL(max), merged);
	fprintf(out, "<text class=\"hd\" x=\"%.1f\" y=\"%d\">%s</text>\n", px + ncols * cw + 10,
		HM_PAD_T - 8, h->sampled ? "peak" : "total");

	for (int r = 0; r < h->nrows; r++) {
		const char *label = heatmap_label(h, r);
		double y = py + r * HM_ROW_H, cy = y + (HM_ROW_H - HM_ROW_GAP) / 2.0;
		double gap = cw >= 10 ? 2 : cw >= 4 ? 1 : 0;

		cut_middle(cut, sizeof(cut), label, HM_LABEL_CHARS);
		fprintf(out, "<text class=\"rl\" data-row=\"%d\" data-label=\"", r);
		html_esc(out, label);
		fprintf(out, "\" x=\"%.1f\" y=\"%.1f\" dy=\".35em\" text-anchor=\"end\">",
			px - 10, cy);
		html_esc(out, cut);
		fputs("</text>\n", out);
		for (size_t c = 0; c < ncols; c++) {
			uint64_t v = heatmap_cell(h, r, c);
			uint64_t hi = (c + 1) * h->bucket_ns;
			double x = px + c * cw, wc = cw;

			/* The last column as long as it lasted. */
			if (hi > map_len_ns(h)) {
				hi = map_len_ns(h);
				wc = (double)(hi - c * h->bucket_ns) / h->bucket_ns * cw;
			}
			if (v)
				ramp_color(value_t(v, max), col, &dark);
			fprintf(out, "<rect class=\"c\" data-row=\"%d\" data-col=\"%zu\" "
				     "data-value=\"%llu\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
				     "height=\"%d\"%s fill=\"%s\"><title>", r, c, ULL(v), x, y,
				wc > gap + 1 ? wc - gap : wc, HM_ROW_H - HM_ROW_GAP,
				gap >= 2 ? " rx=\"2\"" : "",
				v ? col : HM_ZERO);
			html_esc(out, label);
			fprintf(out, " &middot; %s&#8211;%s s &middot; %llu ",
				html_fmt_s(b1, sizeof(b1), c * h->bucket_ns),
				html_fmt_s(b2, sizeof(b2), hi), ULL(v));
			html_esc(out, h->unit);
			fputs("</title></rect>", out);
			/* The value in the cell where it fits: no hover needed. */
			if (v && wc >= 30 && snprintf(b1, sizeof(b1), "%llu", ULL(v)) * 7 <= wc - 6)
				fprintf(out, "<text class=\"cv%s\" x=\"%.1f\" y=\"%.1f\" "
					     "dy=\".35em\" text-anchor=\"middle\">%s</text>",
					dark ? " lt" : "", x + (wc - gap) / 2, cy, b1);
		}
		fprintf(out, "\n<text x=\"%.1f\" y=\"%.1f\" dy=\".35em\">%llu</text>\n",
			px + ncols * cw + 10, cy, ULL(heatmap_row_total(h, r)));
	}
	svg_axis(out, h, px, py + h->nrows * HM_ROW_H + 2, cw);
	svg_legend(out, max, h->unit, px, py + h->nrows * HM_ROW_H + 52);
	fputs("</svg></div>\n", out);
}

/* labchars: the label column's width in characters, shared by the maps of
 * one process so that their time axes line up. */
void html_heatmap(FILE *out, pid_t pid, const struct heatmap *src, const char *what_rows,
		  const char *what_cells, int labchars)
{
	struct heatmap merged;
	const struct heatmap *h = src;
	size_t k = 1;
	char id[64], kind[32], b[32];

	kind_id(kind, sizeof(kind), src->kind);
	snprintf(id, sizeof(id), "hm-%d-%s", pid, kind);
	if (!heatmap_ncols(src) || !src->nrows || !heatmap_max(src)) {
		fprintf(out, "<p class=\"note\" id=\"%s-none\">", id);
		html_esc(out, src->title[0] ? src->title : src->kind);
		fputs(": none in any interval.</p>\n", out);
		return;
	}
	if (heatmap_ncols(src) > HTML_MAX_COLS) {
		int err = heatmap_rebucket(src, &merged, HTML_MAX_COLS);

		if (err) {
			fprintf(out, "<p class=\"note\">%s: cannot draw it (%s).</p>\n", id,
				strerror(-err));
			return;
		}
		k = merged.bucket_ns / src->bucket_ns;
		h = &merged;
	}
	fputs("<figure class=\"hmfig\">\n<figcaption><b>", out);
	html_esc(out, h->title[0] ? h->title : h->kind);
	fputs("</b><span>", out);
	if (what_cells)
		fprintf(out, "Each cell: %s", what_cells);
	else if (h->sampled)
		fputs("Each cell: sockets alive at the sample taken in that interval", out);
	else
		fputs("Each cell: events in that interval", out);
	fprintf(out, "; one column = %s s", html_fmt_s(b, sizeof(b), h->bucket_ns));
	if (k > 1)
		fprintf(out, " (%zu intervals merged per column to fit, keeping the %s)", k,
			h->sampled ? "maximum" : "sum");
	if (what_rows)
		fprintf(out, "; %s", what_rows);
	fputs(". Hover a cell for its value.</span></figcaption>\n", out);
	svg_heatmap(out, h, id, k, labchars);
	fprintf(out, "<div id=\"readout-%s\" class=\"readout\" aria-live=\"polite\">"
		     "hover a cell to read its value</div>\n</figure>\n", id);
	if (h == &merged)
		heatmap_free(&merged);
}
