// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* QUIC report section. Every figure names its source: the lifecycle comes
 * from one source (quic_proc_view() picks it), Retry and Version
 * Negotiation from the wire, and where two sources saw the same thing
 * both counts are printed, so a disagreement shows. */
#include <stdio.h>
#include <string.h>
#include "report_quic.h"
#include "text_wrap.h"

static const struct quic_proc *proc_of(const struct quic_run *q, pid_t pid)
{
	return q && q->books ? quic_books_proc(q->books, pid) : NULL;
}

static unsigned long long u(uint64_t v)
{
	return (unsigned long long)v;
}

/* A time in ms, three significant digits, never in exponent form. */
static const char *ms_text(double ms, char *buf, size_t len)
{
	snprintf(buf, len, ms >= 1000 ? "%.0f" : "%.3g", ms);
	return buf;
}

/* Handshake times of one source: the exact mean (from the sum) and the
 * log2 bucket each percentile falls in, as bounds both ways: the bucket's
 * upper edge alone read as a percentile (32.8 ms for handshakes of 22). */
static void format_handshake_times(FILE *out, const struct quic_counts *c, int src)
{
	char m[16], l5[16], h5[16], l9[16], h9[16];
	double lo5, hi5, lo9, hi9;

	quic_hist_quantile_range_ms(c->handshake_us_hist, 0.5, &lo5, &hi5);
	quic_hist_quantile_range_ms(c->handshake_us_hist, 0.9, &lo9, &hi9);
	fprintf(out, "  %-13s mean %s ms, p50 %s-%s ms, p90 %s-%s ms [%s]\n", "",
		ms_text(quic_handshake_mean_ms(c), m, sizeof(m)), ms_text(lo5, l5, sizeof(l5)),
		ms_text(hi5, h5, sizeof(h5)), ms_text(lo9, l9, sizeof(l9)),
		ms_text(hi9, h9, sizeof(h9)), quic_source_name(src));
}

const char *quic_stack_lifecycle(const struct quic_proc *p)
{
	if ((p->sources & QSRC_NGTCP2) || p->lib_since_ns)
		return "ngtcp2";
	return p->sources & QSRC_KERNEL ? "kernel" : "wire";
}

/* The stack the process runs, as summary names it, and what can be
 * measured there. */
static void format_stack(FILE *out, const struct quic_proc *p)
{
	const char *life = quic_stack_lifecycle(p);

	if (!p->stack[0])
		return;
	fprintf(out, "  %-13s %s\n", "stack", p->stack);
	if (!strcmp(life, "wire"))
		fprintf(out, "  %-13s wire only: connections, handshakes, Retry, version\n"
			     "  %-13s negotiation, migrations; not closes (encrypted: a\n"
			     "  %-13s connection ends with its socket), handshakes that fail\n"
			     "  %-13s before 10 s, streams\n", "", "", "", "");
	else
		fprintf(out, "  %-13s %s: each connection's life; the wire: Retry,\n"
			     "  %-13s version negotiation, rebinding\n", "",
			strcmp(life, "ngtcp2") ? "in-kernel QUIC's socket states" : "ngtcp2 probes",
			"");
}

/* Every line fits 80 columns: the report is read in terminals. */
void format_quic_text(FILE *out, const struct quic_run *q, pid_t pid,
		      const struct tw_report_opts *o)
{
	const struct quic_proc *p = proc_of(q, pid);
	struct quic_view v;

	if (!p || (!p->src[0].connections && !p->src[1].connections && !p->src[2].connections &&
		   !p->src[0].version_negotiations && !p->unmatched_short))
		return;
	quic_proc_view(p, &v);
	fprintf(out, "  %-13s %llu connections (%llu as client, %llu as server) [%s]\n", "QUIC",
		u(v.c.connections), u(v.c.as_client), u(v.c.as_server),
		quic_source_name(v.lifecycle_src));
	/* Probes that came after its first connection saw none begun
	 * before them: said, with where the headline comes from then. */
	if (v.lib_late)
		fprintf(out, "  %-13s ngtcp2 probes came late, %.1f s after its first connection:\n"
			     "  %-13s %llu began before them; lifecycle from the %s\n", "",
			v.lib_late_s, "", u(v.lib_missed), quic_source_name(v.lifecycle_src));
	fprintf(out, "  %-13s %llu completed, %llu failed, %llu under way [%s]\n", "handshakes",
		u(v.c.handshakes_completed), u(v.c.handshakes_failed),
		u(quic_proc_in_progress(p)), quic_source_name(v.lifecycle_src));
	if (v.c.handshakes_completed)
		format_handshake_times(out, &v.c, v.lifecycle_src);
	/* The other sources time the handshake from other moments (the wire
	 * from the first Initial to the client's first 1-RTT packet, ngtcp2
	 * from conn_new to handshake_completed): said apart, never mixed. */
	for (int i = 0; i < QSRC_COUNT; i++)
		if (i != v.lifecycle_src && p->src[i].handshakes_completed)
			fprintf(out, "  %-13s %s: mean %s ms over %llu, timed from other moments\n",
				"", quic_source_name(i),
				ms_text(quic_handshake_mean_ms(&p->src[i]), (char[16]){ 0 }, 16),
				u(p->src[i].handshakes_completed));
	fprintf(out, "  %-13s Retry %llu, version negotiation %llu [wire]\n", "",
		u(v.c.retries), u(v.c.version_negotiations));
	fprintf(out, "  %-13s %llu: rebinding seen on the wire %llu", "migrations",
		u(v.c.migrations), u(p->src[0].migrations));
	if (p->sources & QSRC_NGTCP2)
		fprintf(out, ", initiated in ngtcp2 %llu", u(p->src[1].migrations));
	fputc('\n', out);
	for (int i = 0; i < QSRC_COUNT; i++)
		if (p->sources & (1u << i))
			fprintf(out, "  %-13s %-6s %llu connections, %llu completed, %llu failed\n",
				i == 0 || !(p->sources & ((1u << i) - 1)) ? "by source" : "",
				quic_source_name(i), u(p->src[i].connections),
				u(p->src[i].handshakes_completed), u(p->src[i].handshakes_failed));
	if (p->unmatched_short)
		fprintf(out, "  %-13s %llu short-header flows to IDs not seen starting\n", "",
			u(p->unmatched_short));
	format_stack(out, p);
	if (p->hm_ready) {
		format_heatmap_text(out, &p->hm_conns, o);
		format_heatmap_text(out, &p->hm_handshake, o);
	}
}

void format_quic_agent_text(FILE *out, const struct quic_run *q)
{
	if (!q)
		return;
	/* The reasons and counts are as long as they are: wrapped. */
	if (!q->wire_on)
		text_wrap(out, "QUIC wire: off: ", "  ", q->wire_error && *q->wire_error ?
			  q->wire_error : "not attached");
	else
		text_wrapf(out, "QUIC wire: ", "  ", "on cgroup %s: %llu datagrams (%llu long, "
			   "%llu short header), %llu not QUIC, %llu malformed, %llu short header "
			   "with no CID length learned, %llu events lost", q->cgroup,
			   u(q->wire_stats[QW_STAT_DGRAMS]), u(q->wire_stats[QW_STAT_LONG]),
			   u(q->wire_stats[QW_STAT_SHORT]), u(q->wire_stats[QW_STAT_NOT_QUIC]),
			   u(q->wire_stats[QW_STAT_MALFORMED]), u(q->wire_stats[QW_STAT_SHORT_NOLEN]),
			   u(quic_wire_lost(q)));
	/* Why not (only) the targets' own cgroups. */
	if (q->wire_on && q->cgroup_note && *q->cgroup_note)
		text_wrapf(out, "  ", "    ", "%s", q->cgroup_note);
	/* Attached above first, detached below then: not exact for that
	 * moment, so said. */
	if (q->wire_on && q->cgroup_swaps)
		text_wrapf(out, "  ", "    ", "%llu time%s a cgroup replaced the attach points "
			   "below it: for that moment, a datagram there may be counted twice",
			   u(q->cgroup_swaps), q->cgroup_swaps == 1 ? "" : "s");
	/* The packet programs run for every packet of those cgroups: said
	 * when they went on, or that they never had to. */
	if (q->wire_on && q->skb_on)
		text_wrapf(out, "  ", "    ", "cgroup_skb attached %.1f s into the run: %s",
			   q->skb_after_s, q->skb_why ? q->skb_why : "");
	else if (q->wire_on)
		fprintf(out, "  cgroup_skb never attached: no traced process held or made a UDP "
			     "socket\n");
	if (q->lib_files)
		text_wrapf(out, "QUIC ngtcp2: ", "  ", "uprobes on %d librar%s, %d target%s mapped "
			   "it; %llu events, %llu lost", q->lib_files, q->lib_files == 1 ? "y" : "ies",
			   q->lib_procs, q->lib_procs == 1 ? "" : "s", u(q->lib_stats[QN_STAT_EVENTS]),
			   u(q->lib_stats[QN_STAT_RB_LOST]));
	else
		fprintf(out, "QUIC ngtcp2: off (no traced process maps libngtcp2)\n");
	fprintf(out, "QUIC in kernel: %s\n", q->kernel_quic ? "present (IPPROTO_QUIC followed)" :
		"absent (no IPPROTO_QUIC sockets, no /proc/net/quic)");
	if (quic_wire_lost(q) || q->lib_stats[QN_STAT_RB_LOST])
		fprintf(out, "WARNING: QUIC events were lost: QUIC counts are low\n");
}

static void json_counts(struct json *j, const struct quic_counts *c)
{
	json_kv_uint(j, "connections", c->connections);
	json_kv_uint(j, "as_client", c->as_client);
	json_kv_uint(j, "as_server", c->as_server);
	json_kv_uint(j, "handshakes_completed", c->handshakes_completed);
	json_kv_uint(j, "handshakes_failed", c->handshakes_failed);
	json_kv_uint(j, "closed", c->closed);
	json_kv_uint(j, "retries", c->retries);
	json_kv_uint(j, "version_negotiations", c->version_negotiations);
	json_kv_uint(j, "migrations", c->migrations);
	json_kv_uint(j, "handshake_ns_sum", c->handshake_ns_sum);
	json_key(j, "handshake_us_log2");
	json_array_begin(j);
	for (int i = 0; i < QUIC_HIST_BUCKETS; i++)
		json_uint(j, c->handshake_us_hist[i]);
	json_array_end(j);
}

void json_quic_proc(struct json *j, const struct quic_run *q, pid_t pid)
{
	const struct quic_proc *p = proc_of(q, pid);
	static const struct quic_proc none;
	struct quic_view v;
	double lo, hi;

	if (!q)
		return;
	if (!p)
		p = &none;
	quic_proc_view(p, &v);
	json_key(j, "quic");
	json_object_begin(j);
	json_key(j, "sources");
	json_array_begin(j);
	for (int i = 0; i < QSRC_COUNT; i++)
		if (p->sources & (1u << i))
			json_string(j, quic_source_name(i));
	json_array_end(j);
	json_kv_string(j, "lifecycle_source", quic_source_name(v.lifecycle_src));
	json_counts(j, &v.c);
	json_kv_uint(j, "in_progress", p == &none ? 0 : quic_proc_in_progress(p));
	/* The ngtcp2 probes came after its first connection began: the
	 * connections begun before them are the wire's alone. */
	json_kv_bool(j, "ngtcp2_probes_late", v.lib_late);
	json_kv_double(j, "ngtcp2_probes_late_s", v.lib_late_s, 3);
	json_kv_uint(j, "ngtcp2_missed_connections", v.lib_missed);
	/* The handshake figures are the lifecycle source's alone; each
	 * percentile as the bounds of its log2 bucket. */
	json_kv_string(j, "handshake_source", quic_source_name(v.lifecycle_src));
	json_kv_double(j, "handshake_mean_ms", quic_handshake_mean_ms(&v.c), 3);
	quic_hist_quantile_range_ms(v.c.handshake_us_hist, 0.5, &lo, &hi);
	json_kv_double(j, "handshake_p50_ms_at_least", lo, 3);
	json_kv_double(j, "handshake_p50_ms_at_most", hi, 3);
	quic_hist_quantile_range_ms(v.c.handshake_us_hist, 0.9, &lo, &hi);
	json_kv_double(j, "handshake_p90_ms_at_least", lo, 3);
	json_kv_double(j, "handshake_p90_ms_at_most", hi, 3);
	/* The stack as summary names it ("" when none was found) and the
	 * source that follows its connections' lives. */
	json_kv_string(j, "stack", p->stack);
	json_kv_string(j, "stack_lifecycle", quic_stack_lifecycle(p));
	json_kv_uint(j, "unmatched_short_flows", p->unmatched_short);
	json_kv_uint(j, "short_flows_new_cid", p->short_by_path);
	json_key(j, "by_source");
	json_object_begin(j);
	for (int i = 0; i < QSRC_COUNT; i++) {
		if (!(p->sources & (1u << i)))
			continue;
		json_key(j, quic_source_name(i));
		json_object_begin(j);
		json_counts(j, &p->src[i]);
		json_object_end(j);
	}
	json_object_end(j);
	json_key(j, "heatmaps");
	json_array_begin(j);
	if (p->hm_ready) {
		json_heatmap(j, &p->hm_conns);
		json_heatmap(j, &p->hm_handshake);
	}
	json_array_end(j);
	json_object_end(j);
}

void json_quic_agent(struct json *j, const struct quic_run *q)
{
	if (!q)
		return;
	json_key(j, "quic");
	json_object_begin(j);
	json_kv_bool(j, "wire", q->wire_on);
	json_kv_string(j, "wire_error", q->wire_on ? "" : (q->wire_error ? q->wire_error : ""));
	json_kv_string(j, "cgroup", q->cgroup ? q->cgroup : "");
	json_kv_string(j, "cgroup_note", q->cgroup_note ? q->cgroup_note : "");
	json_kv_uint(j, "cgroup_swaps", q->cgroup_swaps);
	/* Datagrams of untraced UDP sockets the packet programs ran for. */
	json_kv_uint(j, "unowned_datagrams", q->wire_stats[QW_STAT_UNOWNED]);
	json_kv_bool(j, "packet_programs_attached", q->skb_on);
	if (q->skb_on) {
		json_kv_double(j, "packet_programs_after_s", q->skb_after_s, 3);
		json_kv_string(j, "packet_programs_why", q->skb_why ? q->skb_why : "");
	}
	json_kv_int(j, "ngtcp2_processes", q->lib_procs);
	json_kv_int(j, "ngtcp2_libraries", q->lib_files);
	json_kv_bool(j, "kernel_quic", q->kernel_quic);
	json_kv_uint(j, "udp_sockets_seeded", q->seeded);
	json_kv_uint(j, "datagrams", q->wire_stats[QW_STAT_DGRAMS]);
	json_kv_uint(j, "long_header", q->wire_stats[QW_STAT_LONG]);
	json_kv_uint(j, "short_header", q->wire_stats[QW_STAT_SHORT]);
	json_kv_uint(j, "not_quic", q->wire_stats[QW_STAT_NOT_QUIC]);
	json_kv_uint(j, "malformed", q->wire_stats[QW_STAT_MALFORMED]);
	json_kv_uint(j, "short_no_cid_length", q->wire_stats[QW_STAT_SHORT_NOLEN]);
	json_kv_uint(j, "ip_not_walked", q->wire_stats[QW_STAT_NOT_UDP_HDR]);
	json_kv_uint(j, "wire_events", q->wire_stats[QW_STAT_EVENTS]);
	json_kv_uint(j, "wire_events_lost", quic_wire_lost(q));
	json_kv_uint(j, "wire_parser_busy", q->wire_stats[QW_STAT_SCRATCH_BUSY]);
	json_kv_uint(j, "ngtcp2_events", q->lib_stats[QN_STAT_EVENTS]);
	json_kv_uint(j, "ngtcp2_events_lost", q->lib_stats[QN_STAT_RB_LOST]);
	json_kv_uint(j, "unowned_events", q->books ? q->books->unowned_events : 0);
	json_kv_uint(j, "malformed_events", q->books ? q->books->malformed_events : 0);
	json_object_end(j);
}


void format_quic_live(FILE *out, const struct quic_run *q, const char *clock)
{
	const struct quic_proc *p;
	struct quic_view v;

	if (!q || !q->books)
		return;
	for (size_t i = 0; hmap_next(&q->books->procs, &i, NULL, (void **)&p);) {
		quic_proc_view(p, &v);
		if (!v.c.connections && !v.c.version_negotiations)
			continue;
		/* Fits 80 columns up to 6-digit counts. */
		fprintf(out, "%-8s %-7d %-12.12s QUIC %llu conns, %llu done, %llu failed, "
			     "%llu open [%s]\n", clock, p->pid, p->comm[0] ? p->comm : "?",
			u(v.c.connections), u(v.c.handshakes_completed), u(v.c.handshakes_failed),
			u(quic_proc_in_progress(p)), quic_source_name(v.lifecycle_src));
	}
}
