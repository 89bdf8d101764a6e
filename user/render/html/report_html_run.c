/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The HTML report's last parts: the namespace's limits, the run's facts
 * (hooks, what this kernel cannot give, the agent's own counters, books
 * against the kernel) and the footer naming the counters' sources. Split
 * from report_html.c, which draws the page around them. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "kfeatures.h"
#include "report_cost.h"
#include "report_findings.h"
#include "report_tw.h"
#include "report_html.h"
#include "report_html_internal.h"
#include "report_losses.h"


void html_limits_section(FILE *out, const struct limits_view *v, const char *sockets_src)
{
	uint32_t ports;
	char dest[128], *buf = NULL;
	size_t len = 0;
	FILE *mem;
	double warn = v ? v->warn_share * 100 : 0;

	fputs("<section class=\"card\" id=\"limits\">\n<h2>Limits</h2>\n", out);
	if (!v || !v->valid) {
		fputs("<p class=\"note\">Not observed in this run.</p>\n</section>\n", out);
		return;
	}
	ports = netlimits_ports(&v->lim);
	fprintf(out, "<p class=\"sub\">This network namespace; %s, /proc/net/sockstat, "
		     "/proc/sys.</p>\n", sockets_src);
	/* The warnings exactly as the text report and stderr word them. */
	mem = open_memstream(&buf, &len);
	if (mem) {
		format_limits_warnings(mem, v);
		fclose(mem);
		html_warnings(out, buf);
		free(buf);
	}
	fprintf(out, "<dl class=\"facts\">\n<dt>ephemeral ports</dt><dd>%u&ndash;%u (%u), "
		     "tcp_tw_reuse %d</dd>\n", v->lim.port_lo, v->lim.port_hi, ports,
		v->lim.tw_reuse);
	fputs("<dt>TIME_WAIT (host)</dt><dd>", out);
	html_meter(out, html_pct(v->host_tw_peak, v->lim.max_tw_buckets), warn);
	fprintf(out, "%llu (peak %llu) of tcp_max_tw_buckets %llu (%.1f%%)</dd>\n",
		ULL(v->host_tw), ULL(v->host_tw_peak), ULL(v->lim.max_tw_buckets),
		html_pct(v->host_tw_peak, v->lim.max_tw_buckets));
	fputs("<dt>orphans (host)</dt><dd>", out);
	if (!v->lim.max_orphans_unread) {
		html_meter(out, html_pct(v->host_orphan_peak, v->lim.max_orphans), warn);
		fprintf(out, "%llu (peak %llu) of tcp_max_orphans %llu (%.1f%%)</dd>\n",
			ULL(v->host_orphan), ULL(v->host_orphan_peak), ULL(v->lim.max_orphans),
			html_pct(v->host_orphan_peak, v->lim.max_orphans));
	} else {
		fprintf(out, "%llu (peak %llu); ", ULL(v->host_orphan), ULL(v->host_orphan_peak));
		html_esc(out, ORPHAN_LIMIT_UNKNOWN);
		fputs("</dd>\n", out);
	}
	fprintf(out, "<dt>warn at</dt><dd>%.0f%% of a limit</dd>\n</dl>\n", warn);
	if (v->ndests) {
		fputs("<h3>Busiest destinations at the peak (ephemeral ports), of every process "
		      "in the namespace</h3>\n"
		      "<div class=\"scroll\"><table class=\"ep\">\n<thead><tr><th class=\"l\">"
		      "local &rarr; destination</th><th>ports</th><th>TIME_WAIT</th>"
		      "<th>established</th><th>other</th><th class=\"l\">share of range</th>"
		      "</tr></thead>\n<tbody>\n", out);
		for (size_t i = 0; i < v->ndests; i++) {
			const struct port_use *u = &v->dests[i];

			port_use_format(dest, sizeof(dest), u);
			fputs("<tr><td class=\"l mono\">", out);
			html_esc(out, dest);
			fprintf(out, "</td><td>%u</td><td>%u</td><td>%u</td><td>%u</td>"
				     "<td class=\"l\">", u->time_wait + u->established + u->other,
				u->time_wait, u->established, u->other);
			html_meter(out, 100 * u->share, warn);
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

/* One fact per figure this kernel cannot give, and what it needs. */
static void unavailable_facts(FILE *out, const struct kf_plan *plan)
{
	const struct kf_figure_info *off[KF_FIG_MAX];
	size_t n = plan ? kf_unavailable(plan, off, KF_FIG_MAX) : 0;

	for (size_t i = 0; i < n; i++) {
		fputs("<dt>unavailable on this kernel</dt><dd class=\"bad\" data-figure=\"", out);
		html_esc(out, off[i]->figure);
		fputs("\"><span class=\"mono\">", out);
		html_esc(out, off[i]->figure);
		fputs("</span>: ", out);
		html_esc(out, off[i]->what);
		fputs("; needs ", out);
		html_esc(out, off[i]->needs);
		fputs("</dd>\n", out);
	}
}

void html_run_section(FILE *out, const struct agg *a, const struct run_info *run)
{
	char b[32];

	fputs("<section class=\"card\" id=\"run\">\n<h2>Run</h2>\n<dl class=\"facts\">\n"
	      "<dt>hook</dt><dd class=\"mono\">", out);
	html_esc(out, run->hook);
	/* The other hooks the run used, as the text report's io: and accept:
	 * lines name them (on 6.1 the accept's is fexit/inet_csk_accept). */
	if (run->io_hook) {
		fputs("</dd>\n<dt>io hooks</dt><dd class=\"mono\">", out);
		html_esc(out, run->io_hook);
	}
	if (run->accept_hook) {
		fputs("</dd>\n<dt>accept hook</dt><dd class=\"mono\">", out);
		html_esc(out, run->accept_hook);
	}
	fputs("</dd>\n<dt>TIME_WAIT method</dt><dd>", out);
	if (run->tw_method)
		html_esc(out, run->tw_method);
	else
		fputs("<span class=\"none\">not followed</span>", out);
	fputs("</dd>\n", out);
	unavailable_facts(out, run->features);
	fputs("<dt>duration</dt><dd>", out);
	if (run->duration_s > 0)
		fprintf(out, "%s s asked",
			html_fmt_s(b, sizeof(b), (uint64_t)(run->duration_s * 1e9 + 0.5)));
	else
		fputs("until Ctrl-C", out);
	fprintf(out, ", %.1f s ran</dd>\n<dt>interval</dt><dd>%s s</dd>\n", run->elapsed_s,
		html_fmt_s(b, sizeof(b), (uint64_t)(run->interval_s * 1e9 + 0.5)));
	fputs("<dt>end reason</dt><dd>", out);
	html_esc(out, run->end_reason);
	fprintf(out, "</dd>\n<dt>follow children</dt><dd>%s</dd>\n",
		run->follow_children ? "yes" : "no");
	if (run->cgroup_path && run->cgroup.recreated) {
		fputs("<dt>cgroup re-created</dt><dd data-k=\"cgroup_recreated\">", out);
		html_esc(out, run->cgroup_path);
		fprintf(out, " %u time%s, the last %.1f s into the run (the new one followed)</dd>\n",
			run->cgroup.recreated, run->cgroup.recreated == 1 ? "" : "s",
			run->cgroup.recreated_s);
	}
	if (run->cgroup_path && run->cgroup.removed) {
		fputs("<dt>cgroup removed</dt><dd data-k=\"cgroup_removed\">", out);
		html_esc(out, run->cgroup_path);
		fprintf(out, " %.1f s into the run</dd>\n", run->cgroup.removed_s);
	}
	/* Which fd source ran: sites exist only with the fd syscall programs. */
	fprintf(out, "<dt>fd source</dt><dd data-k=\"fd_mode\">%s</dd>\n",
		run->fds.listing_only ? "listing: /proc/PID/fd each interval, no fd syscall "
					"tracing (leak sites need --fd-sites)" :
		run->fds.procs ? "sites: /proc/PID/fd listings and fd syscall tracepoints "
				 "(--fd-sites)" : "off (--no-fd)");
	dd_u(out, "events", run->stats[CS_STAT_EVENTS]);
	fprintf(out, "<dt>events lost</dt><dd%s>%llu</dd>\n",
		run->stats[CS_STAT_RB_LOST] ? " class=\"bad\"" : "",
		ULL(run->stats[CS_STAT_RB_LOST]));
	/* Each kind that lost something, as JSON agent.losses names it. */
	if (losses_total(&run->losses)) {
		fputs("<dt>losses</dt><dd class=\"bad\">", out);
		for (int k = 0, said = 0; k < LOSS_MAX; k++)
			if (run->losses.n[k])
				fprintf(out, "%s%s %llu", said++ ? ", " : "", loss_key(k),
					ULL(run->losses.n[k]));
		fputs("</dd>\n", out);
	} else {
		fputs("<dt>losses</dt><dd class=\"good\">none (no record lost, no map full, all "
		      "seeded and attached)</dd>\n", out);
	}
	dd_u(out, "owner map full", run->stats[CS_STAT_OWNER_FULL]);
	dd_u(out, "accept unresolved", run->stats[CS_STAT_ACCEPT_MISS]);
	dd_u(out, "children followed", run->stats[CS_STAT_FORKS]);
	dd_u(out, "unknown-owner events", a->unknown_events);
	dd_u(out, "TIME_WAIT reused", a->tw_reused);
	dd_u(out, "TIME_WAIT end unseen", a->tw_gone_unknown);
	dd_u(out, "TIME_WAIT timer unmatched", run->stats[CS_STAT_TW_UNMATCHED]);
	dd_u(out, "reconciles", a->reconciles);
	html_cost_facts(out, run->doctor ? &run->doctor->cost : NULL, a);
	fputs("<dt>books vs kernel</dt><dd>", out);
	if (a->mismatch_last)
		fprintf(out, "<span class=\"bad\">disagree by %llu sockets at the end</span> "
			     "(largest gap %llu)", ULL(a->mismatch_last), ULL(a->mismatch_max));
	else
		fprintf(out, "<span class=\"good\">agree at the end</span> (largest gap during "
			     "the run %llu)", ULL(a->mismatch_max));
	fputs("</dd>\n</dl>\n</section>\n", out);
}

/* Where the counters came from, naming only the hooks this run used: an
 * accept hook is there in per-transition mode alone (the default keeps
 * owners on the socket), and it is the one Run names (run->accept_hook:
 * the accept() exits where fexit on inet_csk_accept loaded but did not
 * attach). */
void html_footer(FILE *out, const struct run_info *run)
{
	char src[128];

	fputs("<footer data-k=\"sources\">Generated by connscope. Counters from BPF events (<span "
	      "class=\"mono\">", out);
	html_esc(out, run->hook && *run->hook ? run->hook : "inet_sock_set_state");
	fputs("</span>", out);
	if (run->accept_hook) {
		fputs(", accepts at <span class=\"mono\">", out);
		html_esc(out, run->accept_hook);
		fputs("</span>", out);
	}
	fputs("); sockets now from ", out);
	html_esc(out, run_census_source(run, src, sizeof(src)));
	fputs(" + /proc/PID/fd at the end, TIME_WAIT and orphans joined to owners by 4-tuple. "
	      "This page loads nothing from the network.</footer>\n", out);
}
