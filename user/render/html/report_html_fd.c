/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The fd part of the HTML report, for each process the run traced fds of:
 * fds now against RLIMIT_NOFILE, by type, growth and time to the limit,
 * the books against /proc, the two fd heatmaps and the leak-suspect sites
 * with their stacks. The numbers are the fd session's, as the text and
 * JSON reports print them; a number the session does not have is said to
 * be missing, never made up. Function, file and module names come from
 * the traced process's binaries and are escaped like every other string
 * (C++ names hold '<' and '>' as a matter of course). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fd_report.h"
#include "fdleak_report.h"
#include "report.h"
#include "report_html_internal.h"

#define FD_SITE_NAME_LEN 512
#define FD_FRAME_LEN 1024

const char html_fd_css[] =
	".fdpart{margin-top:26px;padding-top:14px;border-top:1px solid var(--line)}\n"
	".fdpart h3:first-child{margin-top:0}\n"
	".fdpart .chip[data-fdtype]{background:#eef0fb}\n"
	".fdpart tr.hasfr td{border-bottom:0;padding-bottom:0}\n"
	".fdpart tr.frames td{padding-top:0}\n"
	".fdpart details summary{cursor:pointer}\n"
	".fdpart ol.frames{margin:6px 0 4px;padding-left:34px;font-family:var(--mono);"
	"font-size:12px;color:var(--muted)}\n"
	/* Frames scroll with the table rather than wrap mid-name. */
	".fdpart ol.frames li{white-space:nowrap}\n"
	".fdpart ol.frames li.site{color:var(--fg);font-weight:650}\n"
	".fdpart ol.frames li.site::marker{color:var(--warn)}\n"
	".fdpart ol.frames .badge{font-family:system-ui,sans-serif;font-weight:400}\n"
	/* Old fds rank the sites: the number to read first. */
	".fdpart td.old{color:var(--bad);font-weight:650}\n";

/* The process's fd part, or NULL: fd tracking off, or pid not traced
 * (children are not). */
static const struct fdleak_proc *fd_proc_of(const struct run_info *run, pid_t pid)
{
	return fd_report_proc(&run->fds, pid);
}

int html_fd_label_chars(const struct run_info *run, pid_t pid, int at_least)
{
	const struct fdleak_proc *p = fd_proc_of(run, pid);

	if (!p || !p->books || !p->books->hm_ready)
		return at_least;
	return html_label_chars(&p->books->hm_type, html_label_chars(&p->books->hm_age, at_least));
}

void html_fd_summary_cells(FILE *out, const struct run_info *run, pid_t pid)
{
	const struct fdleak_proc *p = fd_proc_of(run, pid);

	if (!p) {
		fputs("<td>&ndash;</td><td>&ndash;</td>", out);
		return;
	}
	fprintf(out, "<td data-k=\"fds_now\">%llu</td><td data-k=\"fds_growth_per_s\">%+.1f</td>",
		ULL(p->inv.total), fd_growth_shown(p->slope));
}

/* "840 s (about 14 min)": seconds as the JSON has them, and a reading
 * for people once they are many. */
static void fmt_duration(FILE *out, double s)
{
	fprintf(out, "%.0f s", s);
	if (s >= 86400 * 2)
		fprintf(out, " (about %.0f days)", s / 86400);
	else if (s >= 3600 * 2)
		fprintf(out, " (about %.0f h)", s / 3600);
	else if (s >= 120)
		fprintf(out, " (about %.0f min)", s / 60);
}

static void limit_fact(FILE *out, const struct fdleak_proc *p, double warn_pct)
{
	const struct fd_limits *l = &p->lim;

	fputs("<dt>fds now</dt><dd>", out);
	if (!l->soft) {
		fprintf(out, "<span data-k=\"fds_now\">%llu</span>; RLIMIT_NOFILE not read</dd>\n",
			ULL(p->inv.total));
		return;
	}
	if (l->soft == UINT64_MAX) {
		fprintf(out, "<span data-k=\"fds_now\">%llu</span> (RLIMIT_NOFILE unlimited)"
			     "</dd>\n", ULL(p->inv.total));
		return;
	}
	html_meter(out, html_pct(p->inv.total, l->soft), warn_pct);
	fprintf(out, "<span data-k=\"fds_now\">%llu</span> of RLIMIT_NOFILE %llu (%.1f%%), hard ",
		ULL(p->inv.total), ULL(l->soft), html_pct(p->inv.total, l->soft));
	if (l->hard == UINT64_MAX)
		fputs("unlimited", out);
	else
		fprintf(out, "%llu", ULL(l->hard));
	fputs("</dd>\n", out);
}

/* Types in enum order, the order of the JSON's by_type; "none". */
static void type_chips(FILE *out, const struct fd_inventory *inv)
{
	for (int t = 0; t < FDT_MAX; t++)
		if (inv->by_type[t])
			fprintf(out, "<span class=\"chip\" data-fdtype=\"%s\">%s <b>%llu</b>"
				     "</span>", fdinv_type_name(t), fdinv_type_name(t),
				ULL(inv->by_type[t]));
	if (!inv->total)
		fputs("<span class=\"none\">none</span>", out);
}

static void tcp_chips(FILE *out, const struct fd_inventory *inv)
{
	for (int s = 1; s < FDINV_TCP_STATES; s++)
		if (inv->tcp_state[s])
			fprintf(out, "<span class=\"chip\">%s <b>%llu</b></span>",
				tcp_state_name(s), ULL(inv->tcp_state[s]));
	/* Told apart from a state: a TCP socket nobody named the state of. */
	if (inv->tcp_state[0])
		fprintf(out, "<span class=\"chip\">state unknown <b>%llu</b></span>",
			ULL(inv->tcp_state[0]));
}

static void facts(FILE *out, const struct fdleak_proc *p, double warn_pct)
{
	const struct fd_proc *b = p->books;

	fputs("<dl class=\"facts\">\n", out);
	limit_fact(out, p, warn_pct);
	fputs("<dt>by type</dt><dd>", out);
	type_chips(out, &p->inv);
	fputs("</dd>\n", out);
	if (p->inv.by_type[FDT_TCP]) {
		fputs("<dt>TCP fds by state</dt><dd>", out);
		tcp_chips(out, &p->inv);
		fputs("</dd>\n", out);
	}
	fprintf(out, "<dt>growth</dt><dd><span data-k=\"fds_growth_per_s\">%+.1f</span> fds/s "
		     "(least squares over %zu listings)", fd_growth_shown(p->slope),
		     b ? b->nsamples : 0);
	if (p->seconds_to_limit >= 0) {
		fputs("; <span class=\"bad\">at this rate the limit is reached in ", out);
		fmt_duration(out, p->seconds_to_limit);
		fputs("</span>", out);
	} else {
		fputs("; not growing towards the limit", out);
	}
	fputs("</dd>\n", out);
	if (b && p->listing_only) {
		/* No fd events: only what changed between two listings. */
		fprintf(out, "<dt>between listings</dt><dd><span data-k=\"fds_appeared\">%llu</span> "
			     "appeared, <span data-k=\"fds_disappeared\">%llu</span> disappeared "
			     "over %llu listings; %u held at start (fds made and closed between "
			     "two listings are in neither)</dd>\n", ULL(b->appeared),
			ULL(b->disappeared), ULL(b->listings), b->held_at_start);
	} else if (b) {
		fprintf(out, "<dt>events</dt><dd>created %llu, closed %llu</dd>\n", ULL(b->created),
			ULL(b->closed));
		/* What the books missed and /proc told: nonzero is not an error
		 * (io_uring, SCM_RIGHTS, exec's O_CLOEXEC make fds without an
		 * event), but it says how far the sites can be trusted. */
		fprintf(out, "<dt>books vs /proc</dt><dd>%llu closed unseen, %llu made unseen; "
			     "%u held at start</dd>\n", ULL(b->phantom), ULL(b->unseen),
			b->held_at_start);
	} else {
		fputs("<dt>events</dt><dd><span class=\"none\">no fd books for this process"
		      "</span></dd>\n", out);
	}
	fputs("</dl>\n", out);
}

static void frames_list(FILE *out, const struct site_frames *f, bool open)
{
	char buf[FD_FRAME_LEN];

	fprintf(out, "<details%s><summary>stack, %d frame%s</summary>\n<ol class=\"frames\" "
		     "start=\"0\">\n", open ? " open" : "", f->n, f->n == 1 ? "" : "s");
	for (int i = 0; i < f->n; i++) {
		sym_frame_format(&f->frames[i], buf, sizeof(buf));
		fputs(i == f->site_idx ? "<li class=\"site\" title=\"the site: first frame outside "
					 "libc, the loader and the vDSO\">" : "<li>", out);
		html_esc(out, buf);
		fputs(i == f->site_idx ? "<span class=\"badge\">site</span></li>\n" : "</li>\n",
		      out);
	}
	fputs("</ol></details>", out);
}

static void suspects(FILE *out, const struct fdleak_proc *p, double leak_age_s)
{
	char name[FD_SITE_NAME_LEN], b[32];
	uint64_t age_ns = (uint64_t)(leak_age_s * 1e9 + 0.5);

	if (!p->nsus) {
		fprintf(out, "<p class=\"note\" id=\"fdsites-%d-none\">No leak suspects: no fd "
			     "made during the run is older than %s s.</p>\n", p->pid,
			html_fmt_s(b, sizeof(b), age_ns));
		return;
	}
	fprintf(out, "<h3>Leak suspects</h3>\n<p class=\"sub\">fds open longer than %s s, by the "
		     "code site that made them; the site is the first frame outside libc, the "
		     "loader and the vDSO.</p>\n<div class=\"scroll\"><table class=\"ep fdsites\" "
		     "id=\"fdsites-%d\">\n<thead><tr><th>#</th><th>old fds</th><th>opened</th>"
		     "<th>closed</th><th>rate /s</th><th class=\"l\">site</th>"
		     "<th class=\"l\">made by</th><th class=\"l\">stack from</th></tr></thead>\n"
		     "<tbody>\n",
		html_fmt_s(b, sizeof(b), age_ns), p->pid);
	for (size_t k = 0; k < p->nsus; k++) {
		const struct fd_suspect *s = &p->sus[k];
		const struct site_frames *f = &p->frames[k];

		fprintf(out, "<tr data-rank=\"%zu\"%s><td>%zu</td><td class=\"old\" data-k=\"old\">"
			     "%u</td><td data-k=\"opened\">%llu</td><td data-k=\"closed\">%llu</td>"
			     "<td data-k=\"per_s\">%.1f</td><td class=\"l site\">"
			     "<span class=\"mono\" data-k=\"site\">", k + 1,
			f->n ? " class=\"hasfr\"" : "", k + 1, s->old, ULL(s->site->opened),
			ULL(s->site->closed), s->per_s);
		html_esc(out, fdsite_name(f, name, sizeof(name)));
		fputs("</span></td><td class=\"l mono\" data-k=\"made_by\">", out);
		html_esc(out, fd_how_name(s->site->how));
		fputs("()</td><td class=\"l\" data-k=\"stack_method\">", out);
		if (f->method)
			html_esc(out, f->method);
		else
			fputs("<span class=\"none\">not resolved</span>", out);
		fputs("</td></tr>\n", out);
		/* The frames in a row of their own under the site: a frame is
		 * wider than the site column, and wrapped it misreads. The top
		 * suspect's stack is what one opens first anyway. */
		if (f->n) {
			fputs("<tr class=\"frames\"><td colspan=\"5\"></td><td class=\"l\" "
			      "colspan=\"3\">", out);
			frames_list(out, f, k == 0);
			fputs("</td></tr>\n", out);
		}
	}
	fputs("</tbody></table></div>\n", out);
}

void html_fd_part(FILE *out, pid_t pid, const struct run_info *run, int labchars)
{
	const struct fdleak_proc *p = fd_proc_of(run, pid);
	/* The threshold attach warns at: the same for sockets and fds. */
	double warn = run->limits && run->limits->warn_share > 0 ? run->limits->warn_share : 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;

	if (!p)
		return;
	fprintf(out, "<div class=\"fdpart\" id=\"fd-%d\">\n<h3>File descriptors</h3>\n", pid);
	/* Its fds are not listed after it exited: say whose numbers these are. */
	if (p->exited)
		fputs("<p class=\"note\">Exited during the run: fds as of its last listing.</p>\n",
		      out);
	/* The warning exactly as the text report and stderr word it. */
	if (warn && (mem = open_memstream(&buf, &len))) {
		format_fdleak_warnings(mem, p, warn);
		fclose(mem);
		html_warnings(out, buf);
		free(buf);
	}
	facts(out, p, warn ? warn * 100 : 101);
	if (p->books && p->books->hm_ready) {
		html_heatmap(out, pid, &p->books->hm_type, "rows: fd types as /proc/PID/fd tells "
			     "them", "fds open at the /proc listing of that interval", labchars);
		html_heatmap(out, pid, &p->books->hm_age, p->listing_only ?
			     "rows: time since the listing that first showed the fd, in powers "
			     "of two (fds held at start count from the attach)" :
			     "rows: time since the fd was made, in "
			     "powers of two (fds held at start count from the attach)",
			     "open fds at the /proc listing of that interval", labchars);
	} else {
		fputs("<p class=\"note\">No fd listing ended an interval: no fd heatmaps.</p>\n",
		      out);
	}
	if (p->listing_only) {
		fprintf(out, "<p class=\"note\" id=\"fdsites-%d-off\">Leak sites need "
			     "<code>attach --fd-sites</code>: this run counted fds from /proc "
			     "listings only, with no fd syscall tracing.</p>\n", pid);
		fputs("<p class=\"sub\" data-k=\"fd_mode\" data-mode=\"listing\">fd counts, "
		      "growth and ages from /proc/PID/fd listings each interval (+ /proc/PID/net), "
		      "limits from /proc/PID/limits; no fd events, no sites.</p>\n</div>\n", out);
		return;
	}
	suspects(out, p, run->fds.leak_age_s);
	fputs("<p class=\"sub\" data-k=\"fd_mode\" data-mode=\"sites\">fds now and by type "
	      "from /proc/PID/fd (+ /proc/PID/net), limits from /proc/PID/limits; events and "
	      "sites from syscall tracepoints (--fd-sites).</p>\n</div>\n", out);
}
