// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Renderers of the fdleak report: pure functions of the resolved report. */
#include <stdint.h>
#include <string.h>
#include "fdleak_report.h"
#include "heatmap_top.h"
#include "json.h"
#include "report_kf.h"
#include "report_cgroup.h"
#include "report_tw.h"
#include "text_wrap.h"

int format_fdleak_warnings(FILE *out, const struct fdleak_proc *p, double warn_share)
{
	int n = 0;

	if (p->lim.soft && p->lim.soft != UINT64_MAX &&
	    p->inv.total >= warn_share * p->lim.soft) {
		text_wrapf(out, "", "  ", "WARNING: pid %d (%s) holds %llu fds, %.0f%% of its "
			   "RLIMIT_NOFILE %llu: accept() and open() fail with EMFILE at the limit",
			   p->pid, p->comm, (unsigned long long)p->inv.total,
			   100.0 * p->inv.total / p->lim.soft, (unsigned long long)p->lim.soft);
		n++;
	}
	return n;
}

static void text_types(FILE *out, const struct fd_inventory *inv)
{
	int col = 16;

	fprintf(out, "  %-13s", "by type");
	for (int t = 0; t < FDT_MAX; t++) {
		char item[48];
		int len;

		if (!inv->by_type[t])
			continue;
		len = snprintf(item, sizeof(item), " %s %llu", fdinv_type_name(t),
			       (unsigned long long)inv->by_type[t]);
		if (col + len > 78) {
			fprintf(out, "\n  %-13s", "");
			col = 16;
		}
		fputs(item, out);
		col += len;
	}
	fprintf(out, "%s\n", inv->total ? "" : " none");
	if (inv->by_type[FDT_TCP]) {
		fprintf(out, "  %-13s", "tcp states");
		for (int s = 1; s < FDINV_TCP_STATES; s++)
			if (inv->tcp_state[s])
				fprintf(out, " %s %llu", tcp_state_name(s),
					(unsigned long long)inv->tcp_state[s]);
		/* Sockets younger than the state dump, and MPTCP: no state
		 * is made up for them. */
		if (inv->tcp_state[0])
			fprintf(out, " state-unknown %llu", (unsigned long long)inv->tcp_state[0]);
		fprintf(out, "\n");
	}
}

static void render_map(FILE *out, const struct heatmap *h, bool color, int top)
{
	struct heatmap t;
	struct heatmap_term_opts o = { .width = 80, .color = color, .unicode = color };

	if (!heatmap_ncols(h) || !heatmap_max(h) || heatmap_top(h, &t, top))
		return;
	fprintf(out, "\n");
	format_heatmap_term(out, &t, &o);
	heatmap_free(&t);
}

void format_fdleak_text(FILE *out, const struct fdleak_proc *procs, size_t n,
			const struct fdleak_run *run, bool color)
{
	char name[256], frame[512];

	fprintf(out, "\nconnscope fdleak: %.1f s (%s), interval %g s, leak age %g s\n",
		run->elapsed_s, run->end_reason, run->interval_s, run->leak_age_s);
	format_cgroup_text(out, run->cgroup_path, &run->cgroup);
	format_unavailable_text(out, run->features);
	for (size_t i = 0; i < n; i++) {
		const struct fdleak_proc *p = &procs[i];
		const struct fd_proc *b = p->books;

		fprintf(out, "\nPID %d (%s)%s\n", p->pid, p->comm,
			p->exited ? " exited during the run" : "");
		if (p->lim.soft == UINT64_MAX)
			fprintf(out, "  %-13s %llu (RLIMIT_NOFILE unlimited)\n", "fds now",
				(unsigned long long)p->inv.total);
		else
			fprintf(out, "  %-13s %llu of RLIMIT_NOFILE %llu (%.0f%%), hard %llu\n",
				"fds now", (unsigned long long)p->inv.total,
				(unsigned long long)p->lim.soft,
				p->lim.soft ? 100.0 * p->inv.total / p->lim.soft : 0,
				(unsigned long long)p->lim.hard);
		text_types(out, &p->inv);
		fprintf(out, "  %-13s %+.1f fds/s (least squares over %zu samples)", "growth",
			fd_growth_shown(p->slope), b ? b->nsamples : 0);
		if (p->seconds_to_limit >= 0)
			fprintf(out, "; limit in %.0f s", p->seconds_to_limit);
		fprintf(out, "\n");
		if (b)
			text_wrapf(out, "  events        ", "                ", "created %llu, "
				   "closed %llu; books vs /proc: %llu closed unseen, %llu made "
				   "unseen", (unsigned long long)b->created,
				   (unsigned long long)b->closed, (unsigned long long)b->phantom,
				   (unsigned long long)b->unseen);
		if (!p->nsus) {
			fprintf(out, "  no leak suspects: no fd made during the run is older than "
				     "%g s\n", run->leak_age_s);
		} else {
			fprintf(out, "  leak suspects: fds open longer than %g s, by the code site "
				     "that made them\n", run->leak_age_s);
			fprintf(out, "  %2s %6s %7s %7s %7s  %s\n", "#", "OLD", "OPENED", "CLOSED",
				"RATE/s", "SITE");
		}
		for (size_t k = 0; k < p->nsus; k++) {
			const struct fd_suspect *s = &p->sus[k];
			const struct site_frames *f = &p->frames[k];

			fdsite_name(f, name, sizeof(name));
			fprintf(out, "  %2zu %6u %7llu %7llu %7.1f  %.40s\n", k + 1, s->old,
				(unsigned long long)s->site->opened,
				(unsigned long long)s->site->closed, s->per_s, name);
			fprintf(out, "     made by %s(); stack from %s\n", fd_how_name(s->site->how),
				f->method);
			for (int fi = 0; fi < f->n && fi < 8; fi++) {
				sym_frame_format(&f->frames[fi], frame, sizeof(frame));
				fprintf(out, "       %c#%-2d %.68s\n", fi == f->site_idx ? '>' : ' ',
					fi, frame);
			}
		}
		if (b && b->hm_ready) {
			render_map(out, &b->hm_type, color, 10);
			render_map(out, &b->hm_age, color, 24);
		}
		format_fdleak_warnings(out, p, run->warn_share);
	}
	fprintf(out, "\nsources: fds now and by type from /proc/PID/fd (+ /proc/PID/net), limits "
		     "from\n  /proc/PID/limits; events and sites from syscall tracepoints\n");
	/* The programs that failed are named: as many as there are. */
	text_wrapf(out, "agent: ", "  ", "%llu events, %llu lost, %llu stack copies (%llu lost); "
		   "%d programs, %d missing%s%s", (unsigned long long)run->stats[FD_STAT_EVENTS],
		   (unsigned long long)run->stats[FD_STAT_RB_LOST],
		   (unsigned long long)run->snapshots,
		   (unsigned long long)run->stats[FD_STAT_SNAP_LOST], run->progs_attached,
		   run->progs_missing, run->progs_missing ? ": " : "",
		   run->progs_missing && run->missing_names ? run->missing_names : "");
	if (run->stats[FD_STAT_RB_LOST])
		fprintf(out, "WARNING: %llu fd events were lost: counts and sites are incomplete\n",
			(unsigned long long)run->stats[FD_STAT_RB_LOST]);
}

static void json_frame(struct json *j, const struct sym_frame *f)
{
	json_object_begin(j);
	json_kv_uint(j, "ip", f->ip);
	json_kv_string(j, "func", f->func);
	json_kv_uint(j, "offset", f->offset);
	json_kv_string(j, "module", f->module);
	json_kv_string(j, "file", f->file);
	json_kv_int(j, "line", f->line);
	json_object_end(j);
}

static void json_leak_sites(struct json *j, const struct fdleak_proc *p)
{
	char name[256];

	json_key(j, "leak_sites");
	json_array_begin(j);
	for (size_t k = 0; k < p->nsus; k++) {
		const struct fd_suspect *s = &p->sus[k];
		const struct site_frames *f = &p->frames[k];

		json_object_begin(j);
		json_kv_uint(j, "rank", k + 1);
		json_kv_string(j, "site", fdsite_name(f, name, sizeof(name)));
		if (f->n) {
			json_kv_string(j, "func", f->frames[f->site_idx].func);
			json_kv_string(j, "file", f->frames[f->site_idx].file);
			json_kv_int(j, "line", f->frames[f->site_idx].line);
		}
		json_kv_string(j, "made_by", fd_how_name(s->site->how));
		json_kv_string(j, "stack_method", f->method);
		json_kv_uint(j, "old", s->old);
		json_kv_uint(j, "opened", s->site->opened);
		json_kv_uint(j, "closed", s->site->closed);
		json_kv_uint(j, "open_now", s->site->open_now);
		json_kv_double(j, "per_s", s->per_s, 3);
		json_key(j, "frames");
		json_array_begin(j);
		for (int fi = 0; fi < f->n; fi++)
			json_frame(j, &f->frames[fi]);
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
}

void json_fdleak_proc(struct json *j, const struct fdleak_proc *p)
{
	const struct fd_proc *b = p->books;

	json_kv_int(j, "pid", p->pid);
	json_kv_string(j, "comm", p->comm);
	/* As attach's JSON: the container's name (else short id), pod UID. */
	json_key(j, "container");
	if (p->container[0])
		json_string(j, p->container);
	else
		json_null(j);
	json_key(j, "pod_uid");
	if (p->pod_uid[0])
		json_string(j, p->pod_uid);
	else
		json_null(j);
	json_kv_bool(j, "exited", p->exited);
	/* "listing": counts from /proc listings only; "sites": fd syscall
	 * events too, and the leak sites. */
	json_kv_string(j, "mode", p->listing_only ? "listing" : "sites");
	json_key(j, "fds");
	json_object_begin(j);
	json_kv_uint(j, "total", p->inv.total);
	json_kv_int(j, "max_fd", p->inv.max_fd);
	json_key(j, "by_type");
	json_object_begin(j);
	for (int t = 0; t < FDT_MAX; t++)
		json_kv_uint(j, fdinv_type_name(t), p->inv.by_type[t]);
	json_object_end(j);
	json_key(j, "tcp");
	json_object_begin(j);
	for (int s = 1; s < FDINV_TCP_STATES; s++)
		json_kv_uint(j, tcp_state_name(s), p->inv.tcp_state[s]);
	/* No state told (younger than the dump, MPTCP): the states sum to
	 * by_type.tcp with it. */
	json_kv_uint(j, "unknown", p->inv.tcp_state[0]);
	json_object_end(j);
	json_object_end(j);
	json_key(j, "limits");
	json_object_begin(j);
	json_kv_uint(j, "rlimit_nofile_soft", p->lim.soft);
	json_kv_uint(j, "rlimit_nofile_hard", p->lim.hard);
	json_kv_uint(j, "system_open", p->lim.sys_open);
	json_kv_uint(j, "system_max", p->lim.sys_max);
	json_object_end(j);
	json_kv_double(j, "growth_fds_per_s", p->slope, 3);
	if (p->seconds_to_limit >= 0)
		json_kv_double(j, "seconds_to_limit", p->seconds_to_limit, 1);
	else {
		json_key(j, "seconds_to_limit");
		json_null(j);
	}
	if (b && p->listing_only) {
		json_key(j, "listing");
		json_object_begin(j);
		json_kv_uint(j, "listings", b->listings);
		json_kv_uint(j, "held_at_start", b->held_at_start);
		json_kv_uint(j, "appeared", b->appeared);
		json_kv_uint(j, "disappeared", b->disappeared);
		json_kv_string(j, "note", "fds seen appearing and disappearing between /proc "
					  "listings; fds made and closed between two listings are "
					  "in neither; leak sites need attach --fd-sites");
		json_object_end(j);
	} else if (b) {
		json_key(j, "events");
		json_object_begin(j);
		json_kv_uint(j, "created", b->created);
		json_kv_uint(j, "closed", b->closed);
		json_key(j, "created_by");
		json_object_begin(j);
		for (int h = 1; h < FD_HOW_MAX; h++)
			json_kv_uint(j, fd_how_name(h), b->by_how[h]);
		json_object_end(j);
		json_object_end(j);
		json_key(j, "books");
		json_object_begin(j);
		json_kv_uint(j, "held_at_start", b->held_at_start);
		json_kv_uint(j, "closed_unseen", b->phantom);
		json_kv_uint(j, "made_unseen", b->unseen);
		json_kv_uint(j, "open_in_books", b->fds.count);
		json_object_end(j);
	}
	if (p->listing_only) {
		/* No fd syscall programs ran: no sites to rank, said so. */
		json_key(j, "leak_sites");
		json_null(j);
		json_kv_string(j, "leak_sites_need", "--fd-sites");
	} else {
		json_leak_sites(j, p);
	}
	json_key(j, "heatmaps");
	json_object_begin(j);
	if (b && b->hm_ready) {
		json_key(j, "fd_type");
		json_heatmap(j, &b->hm_type);
		json_key(j, "fd_age");
		json_heatmap(j, &b->hm_age);
	}
	json_object_end(j);
}

void format_fdleak_json(FILE *out, const struct fdleak_proc *procs, size_t n,
			const struct fdleak_run *run)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_key(&j, "run");
	json_object_begin(&j);
	json_kv_string(&j, "command", "fdleak");
	json_kv_double(&j, "elapsed_s", run->elapsed_s, 3);
	json_kv_double(&j, "interval_s", run->interval_s, 3);
	json_kv_double(&j, "leak_age_s", run->leak_age_s, 3);
	json_kv_string(&j, "end_reason", run->end_reason);
	json_cgroup(&j, run->cgroup_path, &run->cgroup);
	json_unavailable(&j, run->features);
	json_object_end(&j);
	json_key(&j, "processes");
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(&j);
		json_fdleak_proc(&j, &procs[i]);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "agent");
	json_object_begin(&j);
	json_kv_uint(&j, "events", run->stats[FD_STAT_EVENTS]);
	json_kv_uint(&j, "events_lost", run->stats[FD_STAT_RB_LOST]);
	json_kv_uint(&j, "stack_copies", run->snapshots);
	json_kv_uint(&j, "stack_copies_lost", run->stats[FD_STAT_SNAP_LOST]);
	json_kv_uint(&j, "stack_copies_short", run->stats[FD_STAT_SNAP_SHORT]);
	json_kv_int(&j, "programs_attached", run->progs_attached);
	json_kv_int(&j, "programs_missing", run->progs_missing);
	json_kv_string(&j, "programs_missing_names", run->missing_names ? run->missing_names : "");
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

void format_fd_brief(FILE *out, const struct fdleak_proc *p, bool color)
{
	const struct fd_proc *b = p->books;
	char name[256];

	fprintf(out, "\n");
	if (p->lim.soft && p->lim.soft != UINT64_MAX)
		fprintf(out, "  %-13s %llu of limit %llu (%.0f%%), %+.1f/s", "fds",
			(unsigned long long)p->inv.total, (unsigned long long)p->lim.soft,
			100.0 * p->inv.total / p->lim.soft, fd_growth_shown(p->slope));
	else
		fprintf(out, "  %-13s %llu, %+.1f/s", "fds", (unsigned long long)p->inv.total,
			fd_growth_shown(p->slope));
	if (b && !p->listing_only)
		fprintf(out, ", made %llu, closed %llu", (unsigned long long)b->created,
			(unsigned long long)b->closed);
	fprintf(out, "\n");
	text_types(out, &p->inv);
	if (b && p->listing_only)
		fprintf(out, "  %-13s %llu appeared, %llu disappeared between %llu listings\n",
			"fds seen", (unsigned long long)b->appeared,
			(unsigned long long)b->disappeared, (unsigned long long)b->listings);
	if (p->listing_only)
		fprintf(out, "  %-13s counts from /proc/PID/fd listings each interval; leak "
			     "sites need\n  %-13s attach --fd-sites\n", "fd source", "");
	for (size_t k = 0; k < p->nsus && k < 3; k++)
		fprintf(out, "  %-13s %u open, %llu made: %.44s\n", k ? "" : "leak suspects",
			p->sus[k].old, (unsigned long long)p->sus[k].site->opened,
			fdsite_name(&p->frames[k], name, sizeof(name)));
	if (b && b->hm_ready) {
		render_map(out, &b->hm_type, color, 10);
		render_map(out, &b->hm_age, color, 24);
	}
}
