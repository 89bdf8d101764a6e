// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdlib.h>
#include <string.h>
#include "kfeatures.h"
#include "prom.h"
#include "report_cost.h"
#include "doctor.h"
#include "prom_findings.h"
#include "report_losses.h"
#include "reuse.h"
#include "utf8.h"
#include "version.h"


static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped, and valid
 * UTF-8 only: Prometheus rejects the whole scrape over one bad byte, and
 * any local user can name a process "\xff". Each byte that is not part of
 * a well-formed sequence becomes U+FFFD. */
static void label_value(FILE *out, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;

	while (*s) {
		size_t n = utf8_seq_len(s, 4);

		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else if (!n)
			fputs(UTF8_REPLACEMENT, out);
		else if (n > 1) {
			fwrite(s, 1, n, out);
			s += n;
			continue;
		} else
			fputc(*s, out);
		s++;
	}
}

static void proc_labels(FILE *out, pid_t pid, const char *comm)
{
	fprintf(out, "{pid=\"%d\",comm=\"", pid);
	label_value(out, comm);
	fputc('"', out);
}

void format_prom_sockstat(FILE *out, const struct sockstat *st)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} g[] = {
		{ "connscope_sockstat_sockets_used", "Sockets in use (/proc/net/sockstat)",
		  offsetof(struct sockstat, sockets_used) },
		{ "connscope_sockstat_TCP_inuse", "TCP sockets in use, IPv4",
		  offsetof(struct sockstat, tcp_inuse) },
		{ "connscope_sockstat_TCP_orphan", "Orphaned TCP sockets (host-wide)",
		  offsetof(struct sockstat, tcp_orphan) },
		{ "connscope_sockstat_TCP_tw", "TCP sockets in TIME_WAIT",
		  offsetof(struct sockstat, tcp_tw) },
		{ "connscope_sockstat_TCP_alloc", "TCP sockets allocated (host-wide)",
		  offsetof(struct sockstat, tcp_alloc) },
		{ "connscope_sockstat_TCP_mem", "TCP memory in pages",
		  offsetof(struct sockstat, tcp_mem) },
		{ "connscope_sockstat_UDP_inuse", "UDP sockets in use, IPv4",
		  offsetof(struct sockstat, udp_inuse) },
		{ "connscope_sockstat_TCP6_inuse", "TCP sockets in use, IPv6",
		  offsetof(struct sockstat, tcp6_inuse) },
		{ "connscope_sockstat_UDP6_inuse", "UDP sockets in use, IPv6",
		  offsetof(struct sockstat, udp6_inuse) },
		{ "connscope_tcp_curr_estab", "TCP connections in ESTABLISHED or CLOSE_WAIT "
		  "(/proc/net/snmp)", offsetof(struct sockstat, curr_estab) },
	};

	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		family(out, g[i].name, "gauge", g[i].help);
		fprintf(out, "%s %llu\n", g[i].name,
			(unsigned long long)*(const uint64_t *)((const char *)st + g[i].off));
	}
}

/* container and pod_uid, only where known: an empty label is no label to
 * Prometheus. */
static void container_labels(FILE *out, const char *container, const char *pod_uid)
{
	if (container[0]) {
		fputs(",container=\"", out);
		label_value(out, container);
		fputc('"', out);
	}
	if (pod_uid[0]) {
		fputs(",pod_uid=\"", out);
		label_value(out, pod_uid);
		fputc('"', out);
	}
}

void format_prom_summary(FILE *out, const struct summary *sum)
{
	static const char name[] = "connscope_process_tcp_sockets";
	size_t n = sum->nprocs < 1024 ? sum->nprocs : 1024;

	format_prom_sockstat(out, &sum->st);
	family(out, name, "gauge", "TCP sockets of the process by state (sock_diag + "
				   "/proc/PID/fd; TIME_WAIT and orphans joined by 4-tuple)");
	for (size_t i = 0; i < n; i++) {
		const struct summary_proc *p = &sum->procs[i];

		for (int k = 0; k < TCP_STATE_ORDER_LEN; k++) {
			fputs(name, out);
			proc_labels(out, p->pid, p->comm);
			container_labels(out, p->container, p->pod_uid);
			fprintf(out, ",state=\"%s\"} %u\n", tcp_state_name(tcp_state_order[k]),
				p->state[tcp_state_order[k]]);
		}
	}
	family(out, "connscope_unattributed_tcp_sockets", "gauge",
	       "TCP sockets with no owning file a process could be found for, by state");
	for (int k = 0; k < TCP_STATE_ORDER_LEN; k++)
		fprintf(out, "connscope_unattributed_tcp_sockets{state=\"%s\"} %u\n",
			tcp_state_name(tcp_state_order[k]), sum->unattributed.state[tcp_state_order[k]]);
}

/* The labels of a view: pid="other",comm="other" for the aggregate of
 * the rest, pid="children",comm=NAME,parent=PPID for a group. */
static void view_labels(FILE *out, const struct prom_view *v)
{
	if (v->group) {
		fputs("{pid=\"children\",comm=\"", out);
		label_value(out, v->comm);
		fprintf(out, "\",parent=\"%d\"", (int)v->parent);
		return;
	}
	if (!v->pid) {
		fputs("{pid=\"other\",comm=\"other\"", out);
		return;
	}
	proc_labels(out, v->pid, v->comm);
	container_labels(out, v->container, v->pod_uid);
}

static void view_sample(FILE *out, const char *name, const struct prom_view *v,
			const char *extra_label, const char *extra_value, unsigned long long val)
{
	fputs(name, out);
	view_labels(out, v);
	if (extra_label) {
		fprintf(out, ",%s=\"", extra_label);
		label_value(out, extra_value);
		fputc('"', out);
	}
	fprintf(out, "} %llu\n", val);
}

/* A log2 histogram as cumulative buckets. Bucket b holds values up to
 * 2^(b+1) - 1 units; scale turns units into the metric's base unit. Every
 * bucket, always: processes must share one bucket set for sum by (le) and
 * histogram_quantile to add up (PROM_HIST_SERIES series). */
static void histogram(FILE *out, const char *name, const struct prom_view *v,
		      const uint64_t *hist, double scale, double sum)
{
	uint64_t cum = 0, total = 0;

	for (int b = 0; b < REUSE_HIST_BUCKETS; b++)
		total += hist[b];
	for (int b = 0; b < REUSE_HIST_BUCKETS; b++) {
		cum += hist[b];
		fprintf(out, "%s_bucket", name);
		view_labels(out, v);
		fprintf(out, ",le=\"%g\"} %llu\n", (double)((2ULL << b) - 1) * scale,
			(unsigned long long)cum);
	}
	fprintf(out, "%s_bucket", name);
	view_labels(out, v);
	fprintf(out, ",le=\"+Inf\"} %llu\n", (unsigned long long)total);
	fprintf(out, "%s_sum", name);
	view_labels(out, v);
	fprintf(out, "} %g\n", sum);
	fprintf(out, "%s_count", name);
	view_labels(out, v);
	fprintf(out, "} %llu\n", (unsigned long long)total);
}

/* Endpoints of a view: its own ones (sticky, see prom_state.h), then
 * "other". */
static void endpoint_series(FILE *out, const struct prom_view *v, bool tw)
{
	const char *name = tw ? "connscope_process_endpoint_time_wait_sockets"
			      : "connscope_process_endpoint_connections_total";
	char label[64];

	for (size_t i = 0; i < v->neps; i++) {
		endpoint_format(label, sizeof(label), &v->eps[i].key);
		view_sample(out, name, v, "endpoint", label,
			    tw ? v->eps[i].tw_live : v->eps[i].conns);
	}
	if (v->ep_other)
		view_sample(out, name, v, "endpoint", "other",
			    tw ? v->ep_other_tw : v->ep_other_conns);
}

void prom_fd_from_report(const struct fd_report *fds, pid_t pid, struct prom_fd *out)
{
	const struct fdleak_proc *fp = fd_report_proc(fds, pid);

	memset(out, 0, sizeof(*out));
	if (!fp)
		return;
	out->valid = true;
	out->open = fp->inv.total;
	out->max = fp->lim.soft;
	memcpy(out->by_type, fp->inv.by_type, sizeof(out->by_type));
	/* Leak suspects need the fd tracing's sites (--fd-sites). */
	out->has_suspects = !fp->listing_only;
	for (size_t k = 0; k < fp->nsus; k++)
		out->suspects += fp->sus[k].old;
}

/* connscope_series_limit ... connscope_processes_other */
#define PROM_EXPORTER_SELF_SERIES 5

size_t prom_fixed_series(const struct run_info *run, const struct sockstat *st, bool exporter)
{
	/* sockstat 10, unattributed by state, tracked, events, lost, owner
	 * map full, mismatch, one per program, one per figure, fd source, the
	 * agent's cost, build_info, one per loss kind */
	return (st ? 10 : 0) + TCP_STATE_ORDER_LEN + 5 + PROM_LOSSES_SERIES + run->nprogs +
	       KF_FIG_MAX + 1 + 1 + prom_cost_series(run->doctor ? &run->doctor->cost : NULL) +
	       (run->quic ? PROM_QUIC_AGENT_SERIES : 0) +
	       (exporter ? PROM_EXPORTER_SELF_SERIES : 0);
}

static const struct {
	const char *name, *help;
	size_t off;
} counters[] = {
	{ "connscope_process_connections_opened_total", "Outgoing connections (connect)",
	  offsetof(struct proc_counters, opened) },
	{ "connscope_process_connections_accepted_total", "Connections accepted",
	  offsetof(struct proc_counters, accepted) },
	{ "connscope_process_connections_closed_total", "Connections that reached CLOSE",
	  offsetof(struct proc_counters, closed) },
	{ "connscope_process_connect_failed_total", "Connects that never established",
	  offsetof(struct proc_counters, connect_failed) },
	{ "connscope_process_connections_never_accepted_total", "Handshakes completed that "
	  "ended in the accept queue before accept() returned them",
	  offsetof(struct proc_counters, never_accepted) },
	{ "connscope_process_resets_total", "Connections ended by a reset",
	  offsetof(struct proc_counters, resets) },
	{ "connscope_process_time_wait_entered_total", "Connections that entered TIME_WAIT",
	  offsetof(struct proc_counters, tw_entered) },
	{ "connscope_process_time_wait_expired_total", "TIME_WAIT sockets that ran 60 s",
	  offsetof(struct proc_counters, tw_expired) },
	{ "connscope_process_time_wait_ended_early_total", "TIME_WAIT sockets ended early "
	  "(reuse, RST, ss -K)", offsetof(struct proc_counters, tw_killed) },
	{ "connscope_process_time_wait_end_unseen_total", "TIME_WAIT sockets gone from the "
	  "kernel without their end seen", offsetof(struct proc_counters, tw_end_unseen) },
	{ "connscope_process_time_wait_not_made_total", "Clean closes the kernel made no "
	  "TIME_WAIT for: its table was full (net.ipv4.tcp_max_tw_buckets)",
	  offsetof(struct proc_counters, tw_not_made) },
};

/* QUIC per process (PROM_QUIC_SERIES each): the figures of the report,
 * source = where the lifecycle ones come from (ngtcp2, kernel or wire). */
static void quic_families(FILE *out, const struct prom_view *v, size_t n)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} q[] = {
		{ "connscope_process_quic_connections_total",
		  "QUIC connections opened or accepted", offsetof(struct prom_quic, connections) },
		{ "connscope_process_quic_handshakes_completed_total", "QUIC handshakes completed",
		  offsetof(struct prom_quic, completed) },
		{ "connscope_process_quic_handshakes_failed_total",
		  "QUIC handshakes that failed (refused, timed out, abandoned)",
		  offsetof(struct prom_quic, failed) },
		{ "connscope_process_quic_retries_total", "QUIC connections that got a Retry (wire)",
		  offsetof(struct prom_quic, retries) },
		{ "connscope_process_quic_version_negotiations_total",
		  "QUIC Version Negotiation packets met (wire)",
		  offsetof(struct prom_quic, version_negotiations) },
		{ "connscope_process_quic_migrations_total",
		  "QUIC path changes: NAT rebinding (wire) plus initiated migrations (ngtcp2)",
		  offsetof(struct prom_quic, migrations) },
	};
	bool any = false;

	for (size_t i = 0; i < n; i++)
		any |= v[i].quic.valid;
	if (!any)
		return;
	for (size_t c = 0; c < sizeof(q) / sizeof(q[0]); c++) {
		family(out, q[c].name, "counter", q[c].help);
		for (size_t i = 0; i < n; i++)
			if (v[i].quic.valid)
				view_sample(out, q[c].name, &v[i], "source", v[i].quic.source,
					    *(const uint64_t *)((const char *)&v[i].quic + q[c].off));
	}
	family(out, "connscope_process_quic_handshake_seconds", "histogram",
	       "First Initial to handshake completion of QUIC connections");
	for (size_t i = 0; i < n; i++)
		if (v[i].quic.valid)
			histogram(out, "connscope_process_quic_handshake_seconds", &v[i],
				  v[i].quic.handshake_us_hist, 1e-6, v[i].quic.handshake_ns_sum / 1e9);
}

static void process_families(FILE *out, const struct prom_view *v, size_t n)
{
	bool any_fd = false, any_max = false, any_sus = false;

	for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		family(out, counters[c].name, "counter", counters[c].help);
		for (size_t i = 0; i < n; i++)
			view_sample(out, counters[c].name, &v[i], NULL, NULL,
				    *(const uint64_t *)((const char *)&v[i].total + counters[c].off));
	}
	family(out, "connscope_process_tcp_sockets", "gauge", "TCP sockets of the process by "
	       "state at the last reconcile (the kernel's socket tables, by the iter/tcp walk or "
	       "a sock_diag dump, + /proc/PID/fd; TIME_WAIT and orphans by 4-tuple)");
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < TCP_STATE_ORDER_LEN; k++)
			view_sample(out, "connscope_process_tcp_sockets", &v[i], "state",
				    tcp_state_name(tcp_state_order[k]), v[i].state[tcp_state_order[k]]);
	family(out, "connscope_process_tcp_orphans", "gauge",
	       "Sockets the process closed that the kernel still holds");
	for (size_t i = 0; i < n; i++)
		view_sample(out, "connscope_process_tcp_orphans", &v[i], NULL, NULL, v[i].orphan);
	family(out, "connscope_process_requests_total", "counter",
	       "Request/response exchanges on the process's connections");
	for (size_t i = 0; i < n; i++)
		view_sample(out, "connscope_process_requests_total", &v[i], NULL, NULL, v[i].requests);
	family(out, "connscope_process_connection_lifetime_seconds", "histogram",
	       "Lifetime of closed connections, first SYN or accept to CLOSE");
	for (size_t i = 0; i < n; i++)
		histogram(out, "connscope_process_connection_lifetime_seconds", &v[i],
			  v[i].lifetime_ms_hist, 1e-3, v[i].lifetime_ns_sum / 1e9);
	family(out, "connscope_process_requests_per_connection", "histogram",
	       "Request/response exchanges per closed connection");
	for (size_t i = 0; i < n; i++)
		histogram(out, "connscope_process_requests_per_connection", &v[i], v[i].rpc_hist, 1,
			  v[i].rpc_sum);
	family(out, "connscope_process_handshake_seconds", "histogram",
	       "SYN_SENT to ESTABLISHED time of outgoing connections");
	for (size_t i = 0; i < n; i++)
		histogram(out, "connscope_process_handshake_seconds", &v[i], v[i].handshake_us_hist,
			  1e-6, v[i].handshake_ns_sum / 1e9);
	quic_families(out, v, n);
	for (size_t i = 0; i < n; i++) {
		any_fd |= v[i].fd.valid;
		any_max |= v[i].fd.valid && v[i].fd.max != UINT64_MAX;
		any_sus |= v[i].fd.valid && v[i].fd.has_suspects;
	}
	if (any_fd) {
		family(out, "connscope_process_open_fds", "gauge", "Open fds (/proc/PID/fd)");
		for (size_t i = 0; i < n; i++)
			if (v[i].fd.valid)
				view_sample(out, "connscope_process_open_fds", &v[i], NULL, NULL,
					    v[i].fd.open);
	}
	if (any_max) {
		family(out, "connscope_process_max_fds", "gauge", "RLIMIT_NOFILE soft limit");
		for (size_t i = 0; i < n; i++)
			if (v[i].fd.valid && v[i].fd.max != UINT64_MAX)
				view_sample(out, "connscope_process_max_fds", &v[i], NULL, NULL,
					    v[i].fd.max);
	}
	if (any_fd) {
		family(out, "connscope_process_fds", "gauge", "Open fds by type");
		for (size_t i = 0; i < n; i++)
			for (int t = 0; v[i].fd.valid && t < FDT_MAX; t++)
				view_sample(out, "connscope_process_fds", &v[i], "type",
					    fdinv_type_name(t), v[i].fd.by_type[t]);
	}
	/* Endpoints: the first 10 of each process keep their series, the rest
	 * are "other", so the series stay bounded and counters monotonic. */
	family(out, "connscope_process_endpoint_connections_total", "counter",
	       "Connections opened to or accepted on an endpoint (first 10 + other)");
	for (size_t i = 0; i < n; i++)
		endpoint_series(out, &v[i], false);
	family(out, "connscope_process_endpoint_time_wait_sockets", "gauge",
	       "TIME_WAIT sockets by endpoint at the last reconcile (first 10 + other)");
	for (size_t i = 0; i < n; i++)
		endpoint_series(out, &v[i], true);
	if (any_sus) {
		family(out, "connscope_process_fd_leak_suspects", "gauge",
		       "Open fds older than the leak age, made at a known code site");
		for (size_t i = 0; i < n; i++)
			if (v[i].fd.valid && v[i].fd.has_suspects)
				view_sample(out, "connscope_process_fd_leak_suspects", &v[i], NULL,
					    NULL, v[i].fd.suspects);
	}
}

void format_prom_state(FILE *out, const struct prom_state *s, const struct agg *a,
		       const struct run_info *run, const struct sockstat *st, bool exporter)
{
	if (st)
		format_prom_sockstat(out, st);
	process_families(out, s->views, s->nviews);
	family(out, "connscope_unattributed_tcp_sockets", "gauge",
	       "TCP sockets with no owning file the books could charge, by state");
	for (int k = 0; k < TCP_STATE_ORDER_LEN; k++)
		fprintf(out, "connscope_unattributed_tcp_sockets{state=\"%s\"} %u\n",
			tcp_state_name(tcp_state_order[k]),
			a->unattributed.state[tcp_state_order[k]]);
	family(out, "connscope_tracked_connections", "gauge",
	       "Connections the books follow right now");
	fprintf(out, "connscope_tracked_connections %zu\n", a->conns.count + a->seeds.count);
	family(out, "connscope_events_total", "counter", "Events the BPF side wrote");
	fprintf(out, "connscope_events_total %llu\n", (unsigned long long)run->stats[CS_STAT_EVENTS]);
	family(out, "connscope_events_lost_total", "counter",
	       "Events lost: ring buffer reservations that failed");
	fprintf(out, "connscope_events_lost_total %llu\n",
		(unsigned long long)run->stats[CS_STAT_RB_LOST]);
	family(out, "connscope_owner_map_full_total", "counter",
	       "Owner map updates that failed (map full)");
	fprintf(out, "connscope_owner_map_full_total %llu\n",
		(unsigned long long)run->stats[CS_STAT_OWNER_FULL]);
	format_losses_prom(out, &run->losses);
	family(out, "connscope_books_mismatch_sockets", "gauge",
	       "Sockets where the books and the kernel disagreed at the last reconcile");
	fprintf(out, "connscope_books_mismatch_sockets %llu\n",
		(unsigned long long)a->mismatch_last);
	family(out, "connscope_program_attached", "gauge",
	       "1 when the BPF program runs, 0 when a fallback was chosen or it is off");
	for (int i = 0; i < run->nprogs; i++)
		fprintf(out, "connscope_program_attached{program=\"%s\"} %d\n", run->progs[i].name,
			run->progs[i].attached);
	family(out, "connscope_figure_available", "gauge",
	       "1 when this kernel has what the figure needs, 0 when the figure is off");
	for (int f = 0; f < KF_FIG_MAX; f++)
		fprintf(out, "connscope_figure_available{figure=\"%s\",needs=\"%s\"} %d\n",
			kf_figure(f)->figure, kf_figure(f)->needs_token,
			run->features ? run->features->on[f] : 1);
	prom_cost(out, run->doctor ? &run->doctor->cost : NULL, a);
	family(out, "connscope_fd_source", "gauge",
	       "1 for how fds are counted: listing (/proc/PID/fd each interval, no sites), "
	       "sites (also the fd syscall tracepoints, --fd-sites), off (--no-fd)");
	fprintf(out, "connscope_fd_source{mode=\"%s\"} 1\n",
		run->fds.listing_only ? "listing" : run->fds.procs ? "sites" : "off");
	if (run->quic) {
		/* PROM_QUIC_AGENT_SERIES of them. */
		const struct quic_run *q = run->quic;

		family(out, "connscope_quic_source_attached", "gauge",
		       "1 when the QUIC source runs: wire (cgroup_skb), ngtcp2 (uprobes on a "
		       "library a traced process maps), kernel (IPPROTO_QUIC found)");
		fprintf(out, "connscope_quic_source_attached{source=\"wire\"} %d\n", q->wire_on);
		fprintf(out, "connscope_quic_source_attached{source=\"ngtcp2\"} %d\n",
			q->lib_files > 0);
		fprintf(out, "connscope_quic_source_attached{source=\"kernel\"} %d\n",
			q->kernel_quic);
		family(out, "connscope_quic_packet_programs_attached", "gauge",
		       "1 once the wire source's cgroup_skb programs run (they run for every "
		       "packet on the machine, so only after a traced process held or made a UDP "
		       "socket)");
		fprintf(out, "connscope_quic_packet_programs_attached %d\n", q->skb_on);
		family(out, "connscope_quic_datagrams_total", "counter",
		       "UDP datagrams of traced sockets the wire source saw");
		fprintf(out, "connscope_quic_datagrams_total %llu\n",
			(unsigned long long)q->wire_stats[QW_STAT_DGRAMS]);
		family(out, "connscope_quic_events_lost_total", "counter",
		       "QUIC events lost: ring buffer reservations that failed (and on the wire, "
		       "datagrams left unparsed while an interrupted run held the parser)");
		fprintf(out, "connscope_quic_events_lost_total{source=\"wire\"} %llu\n",
			(unsigned long long)quic_wire_lost(q));
		fprintf(out, "connscope_quic_events_lost_total{source=\"ngtcp2\"} %llu\n",
			(unsigned long long)q->lib_stats[QN_STAT_RB_LOST]);
	}
	prom_findings(out, a, run);
	family(out, "connscope_build_info", "gauge", "connscope version and the hooks in use");
	fprintf(out, "connscope_build_info{version=\"%s\",hook=\"", CONNSCOPE_VERSION);
	label_value(out, run->hook ? run->hook : "");
	fprintf(out, "\"} 1\n");
	if (!exporter)
		return;
	/* PROM_EXPORTER_SELF_SERIES of them. */
	family(out, "connscope_series_limit", "gauge",
	       "Most series one scrape may hold (--max-series; 0: no limit)");
	fprintf(out, "connscope_series_limit %u\n", s->lim.max_series);
	family(out, "connscope_snapshot_series", "gauge", "Series in this snapshot");
	fprintf(out, "connscope_snapshot_series %zu\n", s->series);
	family(out, "connscope_snapshot_series_dropped", "gauge",
	       "Series this snapshot left out to stay within --max-series");
	fprintf(out, "connscope_snapshot_series_dropped %zu\n", s->dropped);
	family(out, "connscope_series_dropped_total", "counter",
	       "Series left out to stay within --max-series, summed over every snapshot");
	fprintf(out, "connscope_series_dropped_total %llu\n", (unsigned long long)s->dropped_total);
	family(out, "connscope_processes_other", "gauge",
	       "Live processes summed into pid=\"other\" (no free --top-processes slot when "
	       "they first showed activity; those gone stay in its counters)");
	fprintf(out, "connscope_processes_other %zu\n", prom_state_others(s));
}

static void fds_of_report(pid_t pid, struct prom_fd *out, void *ctx)
{
	prom_fd_from_report(ctx, pid, out);
}

void format_prom_attach(FILE *out, const struct agg *a, const struct run_info *run,
			const struct sockstat *st)
{
	/* One snapshot: every target, the children (--children) by group, no
	 * cap, endpoints ranked once. */
	struct prom_limits lim = { .group_children = run->follow_children };
	struct prom_update_in in = { .now_ns = a->now_ns,
				     .fds = run->fds.procs ? fds_of_report : NULL,
				     .ctx = (void *)&run->fds, .quic = run->quic };
	struct prom_state s;

	prom_state_init(&s, &lim);
	prom_state_update(&s, a, &in);
	format_prom_state(out, &s, a, run, st, false);
	prom_state_free(&s);
}
