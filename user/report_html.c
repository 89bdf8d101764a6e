/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The attach report as one HTML page; see report_html.h.
 *
 * Self-contained on purpose: the file is mailed, attached to tickets and
 * opened on machines without network access, and a report that phones a
 * CDN would leak who looked at which host. So there is no external
 * resource of any kind (system fonts only), and a Content-Security-Policy
 * of default-src 'none' makes the browser refuse one should it ever slip
 * in. Inline SVG needs no xmlns in HTML, so the page holds no URL at all.
 *
 * The heatmaps are SVG generated here, not drawn by script: the page reads
 * the same with JavaScript off, a DOM dump holds every cell, and the
 * numbers come from the same heatmap_top() the JSON report uses, so the
 * two agree cell for cell (cells[row][col] there is data-row/data-col
 * here while the map needs no merging: at most HTML_MAX_COLS columns).
 * The small inline script only adds the hover readout:
 *
 *	<svg id="hm-PID-KIND" class="hm" data-bucket-s="0.5" data-unit="sockets">
 *	  <text class="rl" data-row="R" data-label="full label">cut label</text>
 *	  <rect class="c" data-row="R" data-col="C" data-value="V"><title>...</title></rect>
 *	<div id="readout-hm-PID-KIND" class="readout">
 *
 * KIND is the heatmap's kind ("time_wait", "orphan"). On mouseover of a
 * cell the readout shows row label, time range and value, and gets the
 * cell's data-row, data-col and data-value itself, so that a test reading
 * the DOM finds them in one place. A fragment #hover=ID:ROW:COL makes the
 * script dispatch a real mouseover on that cell once the page is up: the
 * headless test's way into the hover code.
 *
 * Colour: reversed viridis, light yellow at 1 to dark violet at the map's
 * maximum (darker = more, as on a light page one expects), linear like the
 * terminal's default. Zero is a neutral grey outside the ramp, and 1 maps
 * to the ramp's start rather than near it, so a single socket next to
 * thousands still stands apart from an empty cell. Every string that may
 * come from a process or the network (comm, endpoint labels) is escaped. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap_top.h"
#include "report_html.h"
#include "tcpstates.h"

#define HTML_MAX_PROCS 1024
/* More columns than this are merged (heatmap_rebucket): a cell narrower
 * than ~4 px can neither be seen nor hovered. */
#define HTML_MAX_COLS 240
#define TOP_DEFAULT 10

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

#define ULL(x) ((unsigned long long)(x))

/* ---- escaping ------------------------------------------------------------ */

/* Text and attribute values alike: the five characters that end or change
 * markup. Control characters are not allowed in HTML and a comm may hold
 * any; they become '?', as in the terminal renderer. At most n bytes, so a
 * comm[16] need not be terminated. */
static void esc_n(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = s[i];

		switch (c) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
		}
	}
}

static void esc(FILE *out, const char *s)
{
	esc_n(out, s ? s : "", (size_t)-1);
}

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

/* Seconds from nanoseconds with at most 3 decimals and no trailing zeros:
 * "0", "0.5", "12.25". The script's num() rounds the same way. */
static const char *fmt_s(char *buf, size_t len, uint64_t ns)
{
	char *p;

	snprintf(buf, len, "%.3f", ns / 1e9);
	p = buf + strlen(buf) - 1;
	while (p > buf && *p == '0')
		*p-- = '\0';
	if (*p == '.')
		*p = '\0';
	return buf;
}

static double per_s(uint64_t n, const struct run_info *run)
{
	return run->elapsed_s > 0 ? n / run->elapsed_s : 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
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

/* ---- page frame ------------------------------------------------------------ */

static const char css[] =
	":root{--fg:#1d2330;--muted:#5d6878;--line:#e4e8ee;--bg:#f5f6f8;--card:#fff;"
	"--accent:#3e4a89;--warn:#b45309;--warnbg:#fff7ed;--bad:#b91c1c;--good:#15803d;"
	"--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',"
	"'Liberation Mono',monospace}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;background:var(--bg);color:var(--fg);"
	"font:14px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans','DejaVu Sans',"
	"sans-serif}\n"
	"main{max-width:1180px;margin:0 auto;padding:28px 20px 56px}\n"
	"h1{font-size:22px;margin:0 0 2px;letter-spacing:-.01em}\n"
	"h2{font-size:17px;margin:0 0 12px}\n"
	"h3{font-size:15px;margin:18px 0 6px}\n"
	"p{margin:6px 0}\n"
	".sub{color:var(--muted)}\n"
	".mono{font-family:var(--mono);font-size:13px}\n"
	".card{background:var(--card);border:1px solid var(--line);border-radius:12px;"
	"padding:18px 22px;margin:18px 0;box-shadow:0 1px 2px rgba(16,24,40,.05)}\n"
	".kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:12px;"
	"margin:18px 0}\n"
	".kpi{background:var(--card);border:1px solid var(--line);border-radius:12px;"
	"padding:10px 16px}\n"
	".kpi .k{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.05em}\n"
	".kpi .v{font-size:20px;font-weight:650;font-variant-numeric:tabular-nums}\n"
	".kpi .v small{font-size:13px;font-weight:400;color:var(--muted)}\n"
	".good{color:var(--good)}.bad{color:var(--bad)}\n"
	".scroll{overflow-x:auto}\n"
	"table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}\n"
	"th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:right;"
	"white-space:nowrap;vertical-align:top}\n"
	"th{font-size:12px;color:var(--muted);font-weight:600}\n"
	"thead tr.grp th{border-bottom:2px solid var(--line);text-align:center}\n"
	"th.l,td.l{text-align:left}\n"
	"td.states{white-space:normal;text-align:left;min-width:220px}\n"
	"tbody tr:hover{background:#fafbfc}\n"
	"tr.unattr td{color:var(--muted)}\n"
	".chip{display:inline-block;padding:0 8px;margin:1px 4px 1px 0;border-radius:999px;"
	"background:#eef1f6;font-size:12px;line-height:20px}\n"
	".chip b{font-weight:650}\n"
	".badge{display:inline-block;padding:0 7px;margin-left:6px;border-radius:6px;"
	"font-size:11px;line-height:18px;background:#eef0fb;color:var(--accent);"
	"vertical-align:1px}\n"
	".badge.ex{background:#fdecec;color:var(--bad)}\n"
	".none{color:var(--muted)}\n"
	".proc h2 .pid{font-family:var(--mono)}\n"
	".facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 22px;margin:4px 0 8px}\n"
	".facts dt{color:var(--muted)}\n"
	".facts dd{margin:0;font-variant-numeric:tabular-nums}\n"
	"#run .facts{grid-template-columns:max-content 1fr max-content 1fr}\n"
	"@media (max-width:760px){#run .facts{grid-template-columns:max-content 1fr}}\n"
	"table.ep{width:auto;min-width:420px;margin:6px 0 4px}\n"
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
	".readout .ro-v{font-size:16px}\n"
	".note{color:var(--muted);font-style:italic;margin:14px 0 4px}\n"
	".warn{border-left:4px solid var(--warn);background:var(--warnbg);padding:8px 12px;"
	"border-radius:6px;margin:8px 0}\n"
	".warn.bad{border-color:var(--bad);background:#fdecec;color:var(--fg)}\n"
	".meter{display:inline-block;width:160px;height:8px;border-radius:4px;background:#eceff3;"
	"overflow:hidden;vertical-align:middle;margin-right:8px}\n"
	".meter>span{display:block;height:100%;background:var(--accent)}\n"
	".meter.hot>span{background:var(--warn)}\n"
	"footer{color:var(--muted);font-size:12.5px;margin-top:24px}\n";

/* The hover readout; see the top of this file. */
static const char script[] =
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
	" part(out,'span','ro-t',num(col*b)+'\\u2013'+num((+col+1)*b)+' s');\n"
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

/* ---- small pieces ----------------------------------------------------------- */

static void comm(FILE *out, const struct proc_books *p)
{
	esc_n(out, p->comm, sizeof(p->comm));
}

static void kpi(FILE *out, const char *k, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void kpi(FILE *out, const char *k, const char *cls, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, "<div class=\"kpi\"><div class=\"k\">%s</div><div class=\"v%s%s\">", k,
		cls ? " " : "", cls ? cls : "");
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputs("</div></div>\n", out);
}

/* Sockets by state as chips, in the order of the text report; "none". */
static void state_chips(FILE *out, const uint32_t *state, uint32_t orphan)
{
	bool any = false;

	for (int i = 0; i < TCP_STATE_ORDER_LEN; i++) {
		uint32_t v = state[tcp_state_order[i]];

		if (!v)
			continue;
		fprintf(out, "<span class=\"chip\" data-state=\"%s\">%s <b>%u</b></span>",
			tcp_state_name(tcp_state_order[i]), tcp_state_name(tcp_state_order[i]), v);
		any = true;
	}
	if (orphan)
		fprintf(out, "<span class=\"chip\" data-state=\"orphan\">orphan <b>%u</b></span>",
			orphan);
	if (!any && !orphan)
		fputs("<span class=\"none\">none</span>", out);
}

static void td_u(FILE *out, const char *key, uint64_t v)
{
	fprintf(out, "<td data-k=\"%s\">%llu</td>", key, ULL(v));
}

/* ---- header and summary ----------------------------------------------------- */

static void head(FILE *out, const struct proc_books **procs, size_t n)
{
	size_t shown = 0;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"generator\" content=\"connscope\">\n<title>connscope attach", out);
	for (size_t i = 0; i < n && shown < 4; i++) {
		if (!procs[i]->target)
			continue;
		fprintf(out, "%s %d ", shown ? "," : ":", procs[i]->pid);
		comm(out, procs[i]);
		shown++;
	}
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", css);
}

static void overview(FILE *out, const struct agg *a, const struct run_info *run,
		     const struct proc_books **procs, size_t n)
{
	uint64_t lost = run->stats[CS_STAT_RB_LOST];
	char b1[32];

	fputs("<header>\n<h1>connscope attach report</h1>\n<p class=\"sub\">", out);
	for (size_t i = 0, shown = 0; i < n; i++) {
		if (!procs[i]->target)
			continue;
		fprintf(out, "%sPID %d (", shown++ ? ", " : "", procs[i]->pid);
		comm(out, procs[i]);
		fputs(")", out);
	}
	fprintf(out, "%s%.1f s, ended: ", n ? " &middot; " : "", run->elapsed_s);
	esc(out, run->end_reason);
	fputs("</p>\n</header>\n", out);

	if (lost)
		fprintf(out, "<p class=\"warn bad\"><b>%llu events were lost</b> (ring buffer "
			     "full): event counts are low; raise --ringbuf-size</p>\n", ULL(lost));
	if (a->mismatch_last)
		fprintf(out, "<p class=\"warn\">books and kernel <b>disagree by %llu "
			     "sockets</b> at the end (largest gap %llu)</p>\n",
			ULL(a->mismatch_last),
			ULL(a->mismatch_max));

	fputs("<section class=\"kpis\">\n", out);
	kpi(out, "elapsed", NULL, "%.1f <small>s</small>", run->elapsed_s);
	kpi(out, "interval", NULL, "%s <small>s</small>",
	    fmt_s(b1, sizeof(b1), (uint64_t)(run->interval_s * 1e9 + 0.5)));
	kpi(out, "processes", NULL, "%zu", n);
	kpi(out, "events", NULL, "%llu", ULL(run->stats[CS_STAT_EVENTS]));
	kpi(out, "events lost", lost ? "bad" : "good", "%llu", ULL(lost));
	if (a->mismatch_last)
		kpi(out, "books vs kernel", "bad", "differ <small>by %llu</small>",
		    ULL(a->mismatch_last));
	else
		kpi(out, "books vs kernel", "good", "agree");
	fputs("</section>\n", out);
}

static void summary(FILE *out, const struct agg *a, const struct proc_books **procs, size_t n)
{
	fputs("<section class=\"card\" id=\"summary\">\n<h2>Processes</h2>\n"
	      "<div class=\"scroll\"><table>\n<thead>\n"
	      "<tr class=\"grp\"><th colspan=\"2\"></th><th colspan=\"3\">connections</th>"
	      "<th colspan=\"4\">TIME_WAIT</th><th>orphans</th><th></th></tr>\n"
	      "<tr><th>PID</th><th class=\"l\">comm</th><th>opened</th><th>accepted</th>"
	      "<th>closed</th><th>entered</th><th>live</th><th>expired</th>"
	      "<th>ended early</th><th>now</th><th class=\"l\">sockets now by state</th></tr>\n"
	      "</thead>\n<tbody>\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct proc_books *p = procs[i];
		const struct proc_counters *t = &p->total;

		fprintf(out, "<tr id=\"proc-%d\"><td data-k=\"pid\">%d</td><td class=\"l\">"
			     "<span data-k=\"comm\">", p->pid, p->pid);
		comm(out, p);
		fputs("</span>", out);
		if (!p->target)
			fputs("<span class=\"badge\">child</span>", out);
		if (p->exited)
			fputs("<span class=\"badge ex\">exited</span>", out);
		fputs("</td>", out);
		td_u(out, "connections_opened", t->opened);
		td_u(out, "connections_accepted", t->accepted);
		td_u(out, "connections_closed", t->closed);
		td_u(out, "time_wait_entered", t->tw_entered);
		td_u(out, "time_wait", p->truth.state[CS_TCP_TIME_WAIT]);
		td_u(out, "time_wait_expired", t->tw_expired);
		td_u(out, "time_wait_ended_early", t->tw_killed);
		td_u(out, "orphans_now", p->truth.orphan);
		fputs("<td class=\"states\">", out);
		state_chips(out, p->truth.state, p->truth.orphan);
		fputs("</td></tr>\n", out);
	}
	/* Dashes, not zeros: nothing counts events for these sockets. */
	fputs("<tr class=\"unattr\" id=\"unattributed\"><td>&ndash;</td><td class=\"l\">"
	      "unattributed</td><td>&ndash;</td><td>&ndash;</td><td>&ndash;</td><td>&ndash;</td>"
	      "<td>&ndash;</td><td>&ndash;</td><td>&ndash;</td>", out);
	td_u(out, "orphans_now", a->unattributed.orphan);
	fputs("<td class=\"states\">", out);
	state_chips(out, a->unattributed.state, a->unattributed.orphan);
	fputs("</td></tr>\n</tbody>\n</table></div>\n"
	      "<p class=\"sub\">Counters from BPF events during the run; TIME_WAIT live, orphans "
	      "and sockets now from sock_diag + /proc/PID/fd at the end. Unattributed: sockets "
	      "with no owning file, not seen being made by this run.</p>\n</section>\n", out);
}

/* ---- per process ------------------------------------------------------------ */

struct ep_row {
	struct endpoint_key key;
	struct endpoint_stats st;
};

/* Most TIME_WAIT entered first, ties by key: the text report's order. */
static int ep_cmp(const void *a, const void *b)
{
	const struct ep_row *x = a, *y = b;

	if (x->st.tw_entered != y->st.tw_entered)
		return x->st.tw_entered < y->st.tw_entered ? 1 : -1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

/* The upper edge of the log2(ms) bucket holding the q quantile, as the
 * text report computes it. */
static uint64_t quantile_ms(const uint64_t *hist, uint64_t n, double q)
{
	uint64_t want = (uint64_t)(q * n + 0.5), seen = 0;

	for (int b = 0; b < ORPHAN_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= want && hist[b])
			return 2ULL << b;
	}
	return 0;
}

static void endpoints_table(FILE *out, const struct proc_books *p, int top)
{
	const struct endpoint_key *k;
	struct endpoint_stats *es;
	struct ep_row *rows;
	uint64_t oe = 0, ol = 0, op = 0;
	size_t n = 0;
	char label[64];

	if (!p->endpoints.count)
		return;
	rows = calloc(p->endpoints.count, sizeof(*rows));
	if (!rows)
		return;
	for (size_t i = 0; hmap_next(&p->endpoints, &i, (const void **)&k, (void **)&es);)
		if (n < p->endpoints.count)
			rows[n++] = (struct ep_row){ .key = *k, .st = *es };
	qsort(rows, n, sizeof(*rows), ep_cmp);
	fprintf(out, "<h3>TIME_WAIT by endpoint</h3>\n<div class=\"scroll\"><table class=\"ep\" "
		     "id=\"ep-%d\">\n<thead><tr><th class=\"l\">endpoint</th><th>entered</th>"
		     "<th>live</th><th>peak</th></tr></thead>\n<tbody>\n", p->pid);
	for (size_t i = 0; i < n; i++) {
		if ((int)i >= top) {
			oe += rows[i].st.tw_entered;
			ol += rows[i].st.tw_live;
			op += rows[i].st.tw_live_peak;
			continue;
		}
		endpoint_format(label, sizeof(label), &rows[i].key);
		fputs("<tr><td class=\"l mono\">", out);
		esc(out, label);
		fprintf(out, "</td><td>%llu</td><td>%u</td><td>%u</td></tr>\n",
			ULL(rows[i].st.tw_entered), rows[i].st.tw_live, rows[i].st.tw_live_peak);
	}
	/* Like the text report: the peaks of the rest are summed, an upper
	 * bound of their joint peak. */
	if ((int)n > top)
		fprintf(out, "<tr><td class=\"l\">other (%zu endpoints)</td><td>%llu</td>"
			     "<td>%llu</td><td>%llu</td></tr>\n", n - top, ULL(oe), ULL(ol),
			ULL(op));
	fputs("</tbody></table></div>\n", out);
	free(rows);
}

static void facts(FILE *out, const struct proc_books *p, const struct run_info *run)
{
	const struct proc_counters *t = &p->total;

	fputs("<dl class=\"facts\">\n", out);
	fprintf(out, "<dt>connections</dt><dd>opened %llu (%.1f/s), accepted %llu (%.1f/s), "
		     "closed %llu</dd>\n", ULL(t->opened), per_s(t->opened, run), ULL(t->accepted),
		per_s(t->accepted, run), ULL(t->closed));
	if (t->connect_failed || t->resets)
		fprintf(out, "<dt>failures</dt><dd>connect failed %llu, reset %llu</dd>\n",
			ULL(t->connect_failed), ULL(t->resets));
	fprintf(out, "<dt>TIME_WAIT</dt><dd>entered %llu (%.1f/s), live %u, expired %llu, "
		     "ended early %llu</dd>\n", ULL(t->tw_entered), per_s(t->tw_entered, run),
		p->truth.state[CS_TCP_TIME_WAIT], ULL(t->tw_expired), ULL(t->tw_killed));
	fprintf(out, "<dt>closed first</dt><dd>by this side %llu, by the peer %llu</dd>\n",
		ULL(t->closed_active), ULL(t->closed_passive));
	if (p->orphan_ended || p->truth.orphan)
		fprintf(out, "<dt>orphans</dt><dd>now %u; %llu ended, stayed &le; %llu ms "
			     "(median), &le; %llu ms (max)</dd>\n", p->truth.orphan,
			ULL(p->orphan_ended),
			ULL(quantile_ms(p->orphan_ms_hist, p->orphan_ended, 0.5)),
			ULL(quantile_ms(p->orphan_ms_hist, p->orphan_ended, 1.0)));
	if (p->seeded)
		fprintf(out, "<dt>held at start</dt><dd>%u sockets (from the start-up "
			     "snapshot)</dd>\n", p->seeded);
	fputs("</dl>\n", out);
}

/* ---- heatmaps --------------------------------------------------------------- */

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

static void svg_axis(FILE *out, const struct heatmap *h, double px, double y, double cw)
{
	size_t ncols = heatmap_ncols(h);
	uint64_t total = ncols * h->bucket_ns, step = tick_step_ns(total, h->bucket_ns, cw);
	double x1 = px + ncols * cw;
	char b[32];

	fprintf(out, "<g class=\"xaxis\"><line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		     "y2=\"%.1f\"/>\n", px, y, x1, y);
	for (uint64_t t = 0; t <= total; t += step) {
		double x = px + (double)t / h->bucket_ns * cw;

		fprintf(out, "<line class=\"ax\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			x, y, x, y + 5, x, y + 18, fmt_s(b, sizeof(b), t));
		if (t > UINT64_MAX - step)
			break;
	}
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
	esc(out, unit && *unit ? unit : "count");
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

/* The label column in characters: the longest label, within bounds. */
static int label_chars(const struct heatmap *h, int at_least)
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

	lw = 18 + label_chars(h, labchars) * HM_CHAR_W;
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
	esc(out, h->title[0] ? h->title : h->kind);
	fprintf(out, "\" data-bucket-s=\"%.9g\" data-unit=\"", h->bucket_ns / 1e9);
	esc(out, h->unit);
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
		esc(out, label);
		fprintf(out, "\" x=\"%.1f\" y=\"%.1f\" dy=\".35em\" text-anchor=\"end\">",
			px - 10, cy);
		esc(out, cut);
		fputs("</text>\n", out);
		for (size_t c = 0; c < ncols; c++) {
			uint64_t v = heatmap_cell(h, r, c);
			double x = px + c * cw;

			if (v)
				ramp_color(value_t(v, max), col, &dark);
			fprintf(out, "<rect class=\"c\" data-row=\"%d\" data-col=\"%zu\" "
				     "data-value=\"%llu\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
				     "height=\"%d\"%s fill=\"%s\"><title>", r, c, ULL(v), x, y,
				cw - gap, HM_ROW_H - HM_ROW_GAP, gap >= 2 ? " rx=\"2\"" : "",
				v ? col : HM_ZERO);
			esc(out, label);
			fprintf(out, " &middot; %s&#8211;%s s &middot; %llu ",
				fmt_s(b1, sizeof(b1), c * h->bucket_ns),
				fmt_s(b2, sizeof(b2), (c + 1) * h->bucket_ns), ULL(v));
			esc(out, h->unit);
			fputs("</title></rect>", out);
			/* The value in the cell where it fits: no hover needed. */
			if (v && cw >= 30 && snprintf(b1, sizeof(b1), "%llu", ULL(v)) * 7 <= cw - 6)
				fprintf(out, "<text class=\"cv%s\" x=\"%.1f\" y=\"%.1f\" "
					     "dy=\".35em\" text-anchor=\"middle\">%s</text>",
					dark ? " lt" : "", x + (cw - gap) / 2, cy, b1);
		}
		fprintf(out, "\n<text x=\"%.1f\" y=\"%.1f\" dy=\".35em\">%llu</text>\n",
			px + ncols * cw + 10, cy, ULL(heatmap_row_total(h, r)));
	}
	svg_axis(out, h, px, py + h->nrows * HM_ROW_H + 2, cw);
	svg_legend(out, max, h->unit, px, py + h->nrows * HM_ROW_H + 52);
	fputs("</svg></div>\n", out);
}

/* One figure: title, what a cell means, the map and its readout; or a
 * line saying why there is no map. labchars: the label column's width in
 * characters, shared by the maps of one process so that their time axes
 * line up. */
static void html_heatmap(FILE *out, const struct proc_books *p, const struct heatmap *src,
			 const char *what_rows, int labchars)
{
	struct heatmap merged;
	const struct heatmap *h = src;
	size_t k = 1;
	char id[64], kind[32], b[32];

	kind_id(kind, sizeof(kind), src->kind);
	snprintf(id, sizeof(id), "hm-%d-%s", p->pid, kind);
	if (!heatmap_ncols(src) || !src->nrows || !heatmap_max(src)) {
		fprintf(out, "<p class=\"note\" id=\"%s-none\">", id);
		esc(out, src->title[0] ? src->title : src->kind);
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
	esc(out, h->title[0] ? h->title : h->kind);
	fputs("</b><span>", out);
	if (h->sampled)
		fputs("Each cell: sockets alive at the sample taken in that interval", out);
	else
		fputs("Each cell: events in that interval", out);
	fprintf(out, "; one column = %s s", fmt_s(b, sizeof(b), h->bucket_ns));
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

static void proc_section(FILE *out, const struct proc_books *p, const struct run_info *run)
{
	int top = run->tw.top > 0 ? run->tw.top : TOP_DEFAULT;
	struct heatmap tw;
	char rows[96];
	int labchars;

	fprintf(out, "<section class=\"card proc\" id=\"pid-%d\">\n<h2>PID <span class=\"pid\">%d"
		     "</span> &middot; ", p->pid, p->pid);
	comm(out, p);
	if (!p->target)
		fputs("<span class=\"badge\">child</span>", out);
	if (p->exited)
		fputs("<span class=\"badge ex\">exited during the run</span>", out);
	fputs("</h2>\n", out);
	facts(out, p, run);
	endpoints_table(out, p, top);
	if (!p->hm_ready) {
		fputs("<p class=\"note\">No interval ended: no heatmaps.</p>\n</section>\n", out);
		return;
	}
	/* The JSON report's rows: the top endpoints by peak, the rest as
	 * "other". */
	if (!heatmap_top(&p->hm_tw, &tw, top)) {
		labchars = label_chars(&tw, label_chars(&p->hm_orphan, 4));
		snprintf(rows, sizeof(rows), "rows: the %d busiest endpoints, the rest as "
			 "\"" HEATMAP_OTHER_LABEL "\"", top);
		html_heatmap(out, p, &tw, rows, labchars);
	} else {
		labchars = label_chars(&p->hm_orphan, 4);
		fputs("<p class=\"note\">TIME_WAIT heatmap: cannot draw it (out of memory).</p>\n",
		      out);
	}
	heatmap_free(&tw);
	html_heatmap(out, p, &p->hm_orphan, "rows: the states an orphan can linger in", labchars);
	fputs("</section>\n", out);
}

/* ---- limits and run ---------------------------------------------------------- */

static void meter(FILE *out, double pct_used, double warn_pct)
{
	if (pct_used > 100)
		pct_used = 100;
	fprintf(out, "<span class=\"meter%s\"><span style=\"width:%.1f%%\"></span></span>",
		pct_used >= warn_pct ? " hot" : "", pct_used);
}

static void limits_section(FILE *out, const struct limits_view *v)
{
	uint32_t ports;
	char dest[128], *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *mem;
	double warn = v ? v->warn_share * 100 : 0;

	fputs("<section class=\"card\" id=\"limits\">\n<h2>Limits</h2>\n", out);
	if (!v || !v->valid) {
		fputs("<p class=\"note\">Not observed in this run.</p>\n</section>\n", out);
		return;
	}
	ports = netlimits_ports(&v->lim);
	fputs("<p class=\"sub\">This network namespace; sock_diag, /proc/net/sockstat, "
	      "/proc/sys.</p>\n", out);
	/* The warnings exactly as the text report and stderr word them. */
	mem = open_memstream(&buf, &len);
	if (mem) {
		format_limits_warnings(mem, v);
		fclose(mem);
		for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line;
		     line = strtok_r(NULL, "\n", &save)) {
			if (!strncmp(line, "WARNING: ", 9))
				line += 9;
			fputs("<p class=\"warn\"><b>warning:</b> ", out);
			esc(out, line);
			fputs("</p>\n", out);
		}
		free(buf);
	}
	fprintf(out, "<dl class=\"facts\">\n<dt>ephemeral ports</dt><dd>%u&ndash;%u (%u), "
		     "tcp_tw_reuse %d</dd>\n", v->lim.port_lo, v->lim.port_hi, ports,
		v->lim.tw_reuse);
	fputs("<dt>TIME_WAIT (host)</dt><dd>", out);
	meter(out, pct(v->host_tw_peak, v->lim.max_tw_buckets), warn);
	fprintf(out, "%llu (peak %llu) of tcp_max_tw_buckets %llu (%.1f%%)</dd>\n",
		ULL(v->host_tw), ULL(v->host_tw_peak), ULL(v->lim.max_tw_buckets),
		pct(v->host_tw_peak, v->lim.max_tw_buckets));
	fputs("<dt>orphans (host)</dt><dd>", out);
	meter(out, pct(v->host_orphan_peak, v->lim.max_orphans), warn);
	fprintf(out, "%llu (peak %llu) of tcp_max_orphans %llu (%.1f%%)</dd>\n",
		ULL(v->host_orphan), ULL(v->host_orphan_peak), ULL(v->lim.max_orphans),
		pct(v->host_orphan_peak, v->lim.max_orphans));
	fprintf(out, "<dt>warn at</dt><dd>%.0f%% of a limit</dd>\n</dl>\n", warn);
	if (v->ndests) {
		fputs("<h3>Busiest destinations at the peak (ephemeral ports)</h3>\n"
		      "<div class=\"scroll\"><table class=\"ep\">\n<thead><tr><th class=\"l\">"
		      "local &rarr; destination</th><th>ports</th><th>TIME_WAIT</th>"
		      "<th>established</th><th>other</th><th class=\"l\">share of range</th>"
		      "</tr></thead>\n<tbody>\n", out);
		for (size_t i = 0; i < v->ndests; i++) {
			const struct port_use *u = &v->dests[i];

			port_use_format(dest, sizeof(dest), u);
			fputs("<tr><td class=\"l mono\">", out);
			esc(out, dest);
			fprintf(out, "</td><td>%u</td><td>%u</td><td>%u</td><td>%u</td>"
				     "<td class=\"l\">", u->time_wait + u->established + u->other,
				u->time_wait, u->established, u->other);
			meter(out, 100 * u->share, warn);
			fprintf(out, "%.1f%%</td></tr>\n", 100 * u->share);
		}
		fputs("</tbody></table></div>\n", out);
	}
	fputs("</section>\n", out);
}

static void dd_u(FILE *out, const char *k, uint64_t v)
{
	fprintf(out, "<dt>%s</dt><dd>%llu</dd>\n", k, ULL(v));
}

static void run_section(FILE *out, const struct agg *a, const struct run_info *run)
{
	char b[32];

	fputs("<section class=\"card\" id=\"run\">\n<h2>Run</h2>\n<dl class=\"facts\">\n"
	      "<dt>hook</dt><dd class=\"mono\">", out);
	esc(out, run->hook);
	fputs("</dd>\n<dt>TIME_WAIT method</dt><dd>", out);
	if (run->tw_method)
		esc(out, run->tw_method);
	else
		fputs("<span class=\"none\">not followed</span>", out);
	fputs("</dd>\n<dt>duration</dt><dd>", out);
	if (run->duration_s > 0)
		fprintf(out, "%s s asked",
			fmt_s(b, sizeof(b), (uint64_t)(run->duration_s * 1e9 + 0.5)));
	else
		fputs("until Ctrl-C", out);
	fprintf(out, ", %.1f s ran</dd>\n<dt>interval</dt><dd>%s s</dd>\n", run->elapsed_s,
		fmt_s(b, sizeof(b), (uint64_t)(run->interval_s * 1e9 + 0.5)));
	fputs("<dt>end reason</dt><dd>", out);
	esc(out, run->end_reason);
	fprintf(out, "</dd>\n<dt>follow children</dt><dd>%s</dd>\n",
		run->follow_children ? "yes" : "no");
	dd_u(out, "events", run->stats[CS_STAT_EVENTS]);
	fprintf(out, "<dt>events lost</dt><dd%s>%llu</dd>\n",
		run->stats[CS_STAT_RB_LOST] ? " class=\"bad\"" : "",
		ULL(run->stats[CS_STAT_RB_LOST]));
	dd_u(out, "owner map full", run->stats[CS_STAT_OWNER_FULL]);
	dd_u(out, "accept unresolved", run->stats[CS_STAT_ACCEPT_MISS]);
	dd_u(out, "children followed", run->stats[CS_STAT_FORKS]);
	dd_u(out, "unknown-owner events", a->unknown_events);
	dd_u(out, "TIME_WAIT reused", a->tw_reused);
	dd_u(out, "TIME_WAIT end unseen", a->tw_gone_unknown);
	dd_u(out, "TIME_WAIT timer unmatched", run->stats[CS_STAT_TW_UNMATCHED]);
	dd_u(out, "reconciles", a->reconciles);
	fputs("<dt>books vs kernel</dt><dd>", out);
	if (a->mismatch_last)
		fprintf(out, "<span class=\"bad\">disagree by %llu sockets at the end</span> "
			     "(largest gap %llu)", ULL(a->mismatch_last), ULL(a->mismatch_max));
	else
		fprintf(out, "<span class=\"good\">agree at the end</span> (largest gap during "
			     "the run %llu)", ULL(a->mismatch_max));
	fputs("</dd>\n</dl>\n</section>\n", out);
}

int format_report_html(FILE *out, const struct agg *a, const struct run_info *run)
{
	static const struct proc_books *procs[HTML_MAX_PROCS];
	size_t n = report_procs(a, procs, HTML_MAX_PROCS);

	head(out, procs, n);
	overview(out, a, run, procs, n);
	summary(out, a, procs, n);
	for (size_t i = 0; i < n; i++)
		proc_section(out, procs[i], run);
	limits_section(out, run->limits);
	run_section(out, a, run);
	fputs("<footer>Generated by connscope. Counters from BPF events (inet_sock_set_state, "
	      "accept exit); sockets now from sock_diag + /proc/PID/fd at the end, TIME_WAIT and "
	      "orphans joined to owners by 4-tuple. This page loads nothing from the network."
	      "</footer>\n</main>\n<script>\n", out);
	fputs(script, out);
	fputs("</script>\n</body>\n</html>\n", out);
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}
