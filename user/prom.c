// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdlib.h>
#include <string.h>
#include "fdsession.h"
#include "prom.h"
#include "reuse.h"

#define CONNSCOPE_VERSION "0.1.0"

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped. */
static void label_value(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

static void proc_labels(FILE *out, pid_t pid, const char *comm)
{
	fprintf(out, "{pid=\"%d\",comm=\"", pid);
	label_value(out, comm);
	fputc('"', out);
}

static void proc_sample(FILE *out, const char *name, pid_t pid, const char *comm,
			const char *extra_label, const char *extra_value, unsigned long long v)
{
	fputs(name, out);
	proc_labels(out, pid, comm);
	if (extra_label) {
		fprintf(out, ",%s=\"", extra_label);
		label_value(out, extra_value);
		fputc('"', out);
	}
	fprintf(out, "} %llu\n", v);
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

static void states_family(FILE *out, const char *name, size_t n,
			  const pid_t *pids, const char (*comms)[16], const uint32_t (*states)[CS_TCP_MAX_STATES])
{
	family(out, name, "gauge", "TCP sockets of the process by state (sock_diag + "
				   "/proc/PID/fd; TIME_WAIT and orphans joined by 4-tuple)");
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < TCP_STATE_ORDER_LEN; k++)
			proc_sample(out, name, pids[i], comms[i], "state",
				    tcp_state_name(tcp_state_order[k]),
				    states[i][tcp_state_order[k]]);
}

void format_prom_summary(FILE *out, const struct summary *sum)
{
	pid_t pids[1024];
	char comms[1024][16];
	uint32_t states[1024][CS_TCP_MAX_STATES];
	size_t n = sum->nprocs < 1024 ? sum->nprocs : 1024;

	format_prom_sockstat(out, &sum->st);
	for (size_t i = 0; i < n; i++) {
		pids[i] = sum->procs[i].pid;
		memcpy(comms[i], sum->procs[i].comm, 16);
		memcpy(states[i], sum->procs[i].state, sizeof(states[i]));
	}
	states_family(out, "connscope_process_tcp_sockets", n, pids, (const char (*)[16])comms,
		      (const uint32_t (*)[CS_TCP_MAX_STATES])states);
	family(out, "connscope_unattributed_tcp_sockets", "gauge",
	       "TCP sockets with no owning file a process could be found for, by state");
	for (int k = 0; k < TCP_STATE_ORDER_LEN; k++)
		fprintf(out, "connscope_unattributed_tcp_sockets{state=\"%s\"} %u\n",
			tcp_state_name(tcp_state_order[k]), sum->unattributed.state[tcp_state_order[k]]);
}

/* A log2 histogram as cumulative buckets. Bucket b holds values up to
 * 2^(b+1) - 1 units; scale turns units into the metric's base unit. */
static void histogram(FILE *out, const char *name, const struct proc_books *p,
		      const uint64_t *hist, double scale, double sum)
{
	uint64_t cum = 0, total = 0;
	/* Every bucket, always: processes must share one bucket set for
	 * sum by (le) and histogram_quantile to add up. */
	int last = REUSE_HIST_BUCKETS - 1;

	for (int b = 0; b < REUSE_HIST_BUCKETS; b++)
		total += hist[b];
	for (int b = 0; b <= last; b++) {
		cum += hist[b];
		fprintf(out, "%s_bucket", name);
		proc_labels(out, p->pid, p->comm);
		fprintf(out, ",le=\"%g\"} %llu\n", (double)((2ULL << b) - 1) * scale,
			(unsigned long long)cum);
	}
	fprintf(out, "%s_bucket", name);
	proc_labels(out, p->pid, p->comm);
	fprintf(out, ",le=\"+Inf\"} %llu\n", (unsigned long long)total);
	fprintf(out, "%s_sum", name);
	proc_labels(out, p->pid, p->comm);
	fprintf(out, "} %g\n", sum);
	fprintf(out, "%s_count", name);
	proc_labels(out, p->pid, p->comm);
	fprintf(out, "} %llu\n", (unsigned long long)total);
}

#define MAX_PROM_PROCS 1024
#define PROM_TOP_ENDPOINTS 10

struct ep_val {
	struct endpoint_key key;
	uint64_t v;
};

static int by_val(const void *a, const void *b)
{
	const struct ep_val *x = a, *y = b;

	return x->v < y->v ? 1 : x->v > y->v ? -1 : memcmp(&x->key, &y->key, sizeof(x->key));
}

/* One series per endpoint of p, top PROM_TOP_ENDPOINTS by value. */
static void endpoint_series(FILE *out, const struct proc_books *p, bool tw)
{
	const char *name = tw ? "connscope_process_endpoint_time_wait_sockets"
			      : "connscope_process_endpoint_connections_total";
	struct ep_val *v = calloc(p->endpoints.count ? p->endpoints.count : 1, sizeof(*v));
	const struct endpoint_key *k;
	struct endpoint_stats *es;
	uint64_t other = 0;
	size_t n = 0;
	char label[64];

	if (!v)
		return;
	for (size_t i = 0; hmap_next(&p->endpoints, &i, (const void **)&k, (void **)&es);) {
		uint64_t val = tw ? es->tw_live : es->opened + es->accepted;

		if (val || (tw ? es->tw_entered : 0))
			v[n++] = (struct ep_val){ .key = *k, .v = val };
	}
	qsort(v, n, sizeof(*v), by_val);
	for (size_t i = 0; i < n; i++) {
		if (i >= PROM_TOP_ENDPOINTS) {
			other += v[i].v;
			continue;
		}
		endpoint_format(label, sizeof(label), &v[i].key);
		proc_sample(out, name, p->pid, p->comm, "endpoint", label, v[i].v);
	}
	if (n > PROM_TOP_ENDPOINTS)
		proc_sample(out, name, p->pid, p->comm, "endpoint", "other", other);
	free(v);
}

void format_prom_attach(FILE *out, const struct agg *a, const struct run_info *run,
			const struct sockstat *st)
{
	const struct proc_books *procs[MAX_PROM_PROCS];
	size_t n = report_procs(a, procs, MAX_PROM_PROCS);
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
		{ "connscope_process_resets_total", "Connections ended by a reset",
		  offsetof(struct proc_counters, resets) },
		{ "connscope_process_time_wait_entered_total", "Connections that entered TIME_WAIT",
		  offsetof(struct proc_counters, tw_entered) },
		{ "connscope_process_time_wait_expired_total", "TIME_WAIT sockets that ran 60 s",
		  offsetof(struct proc_counters, tw_expired) },
		{ "connscope_process_time_wait_ended_early_total", "TIME_WAIT sockets ended early "
		  "(reuse, RST, ss -K)", offsetof(struct proc_counters, tw_killed) },
	};

	if (st)
		format_prom_sockstat(out, st);
	for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		family(out, counters[c].name, "counter", counters[c].help);
		for (size_t i = 0; i < n; i++)
			proc_sample(out, counters[c].name, procs[i]->pid, procs[i]->comm, NULL, NULL,
				    *(const uint64_t *)((const char *)&procs[i]->total +
							counters[c].off));
	}
	family(out, "connscope_process_tcp_sockets", "gauge", "TCP sockets of the process by "
	       "state at the end (sock_diag + /proc/PID/fd; TIME_WAIT and orphans by 4-tuple)");
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < TCP_STATE_ORDER_LEN; k++)
			proc_sample(out, "connscope_process_tcp_sockets", procs[i]->pid,
				    procs[i]->comm, "state", tcp_state_name(tcp_state_order[k]),
				    procs[i]->truth.state[tcp_state_order[k]]);
	family(out, "connscope_process_tcp_orphans", "gauge",
	       "Sockets the process closed that the kernel still holds");
	for (size_t i = 0; i < n; i++)
		proc_sample(out, "connscope_process_tcp_orphans", procs[i]->pid, procs[i]->comm,
			    NULL, NULL, procs[i]->truth.orphan);
	family(out, "connscope_process_requests_total", "counter",
	       "Request/response exchanges on the process's connections");
	for (size_t i = 0; i < n; i++)
		proc_sample(out, "connscope_process_requests_total", procs[i]->pid, procs[i]->comm,
			    NULL, NULL, procs[i]->requests);
	family(out, "connscope_process_connection_lifetime_seconds", "histogram",
	       "Lifetime of closed connections, first SYN or accept to CLOSE");
	for (size_t i = 0; i < n; i++)
		histogram(out, "connscope_process_connection_lifetime_seconds", procs[i],
			  procs[i]->lifetime_ms_hist, 1e-3, procs[i]->lifetime_ns_sum / 1e9);
	family(out, "connscope_process_requests_per_connection", "histogram",
	       "Request/response exchanges per closed connection");
	for (size_t i = 0; i < n; i++)
		histogram(out, "connscope_process_requests_per_connection", procs[i],
			  procs[i]->rpc_hist, 1, procs[i]->rpc_sum);
	family(out, "connscope_process_handshake_seconds", "histogram",
	       "SYN_SENT to ESTABLISHED time of outgoing connections");
	for (size_t i = 0; i < n; i++)
		histogram(out, "connscope_process_handshake_seconds", procs[i],
			  procs[i]->handshake_us_hist, 1e-6, procs[i]->handshake_ns_sum / 1e9);
	if (run->fds) {
		family(out, "connscope_process_open_fds", "gauge", "Open fds (/proc/PID/fd)");
		for (size_t i = 0; i < n; i++) {
			const struct fdleak_proc *fp = fd_session_proc(run->fds, procs[i]->pid);

			if (fp)
				proc_sample(out, "connscope_process_open_fds", procs[i]->pid,
					    procs[i]->comm, NULL, NULL, fp->inv.total);
		}
		family(out, "connscope_process_max_fds", "gauge", "RLIMIT_NOFILE soft limit");
		for (size_t i = 0; i < n; i++) {
			const struct fdleak_proc *fp = fd_session_proc(run->fds, procs[i]->pid);

			if (fp && fp->lim.soft != UINT64_MAX)
				proc_sample(out, "connscope_process_max_fds", procs[i]->pid,
					    procs[i]->comm, NULL, NULL, fp->lim.soft);
		}
		family(out, "connscope_process_fds", "gauge", "Open fds by type");
		for (size_t i = 0; i < n; i++) {
			const struct fdleak_proc *fp = fd_session_proc(run->fds, procs[i]->pid);

			for (int t = 0; fp && t < FDT_MAX; t++)
				proc_sample(out, "connscope_process_fds", procs[i]->pid,
					    procs[i]->comm, "type", fdinv_type_name(t),
					    fp->inv.by_type[t]);
		}
	}
	/* Endpoints: the top 10 per process by connections, the rest as
	 * "other", so the series stay bounded. */
	family(out, "connscope_process_endpoint_connections_total", "counter",
	       "Connections opened to or accepted on an endpoint (top 10 + other)");
	for (size_t i = 0; i < n; i++)
		endpoint_series(out, procs[i], false);
	family(out, "connscope_process_endpoint_time_wait_sockets", "gauge",
	       "TIME_WAIT sockets by endpoint at the last reconcile (top 10 + other)");
	for (size_t i = 0; i < n; i++)
		endpoint_series(out, procs[i], true);
	if (run->fds) {
		family(out, "connscope_process_fd_leak_suspects", "gauge",
		       "Open fds older than the leak age, made at a known code site");
		for (size_t i = 0; i < n; i++) {
			const struct fdleak_proc *fp = fd_session_proc(run->fds, procs[i]->pid);
			unsigned long long old = 0;

			for (size_t k = 0; fp && k < fp->nsus; k++)
				old += fp->sus[k].old;
			if (fp)
				proc_sample(out, "connscope_process_fd_leak_suspects", procs[i]->pid,
					    procs[i]->comm, NULL, NULL, old);
		}
	}
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
	family(out, "connscope_books_mismatch_sockets", "gauge",
	       "Sockets where the books and the kernel disagreed at the last reconcile");
	fprintf(out, "connscope_books_mismatch_sockets %llu\n",
		(unsigned long long)a->mismatch_last);
	family(out, "connscope_program_attached", "gauge",
	       "1 when the BPF program runs, 0 when a fallback was chosen or it is off");
	for (int i = 0; i < run->nprogs; i++)
		fprintf(out, "connscope_program_attached{program=\"%s\"} %d\n", run->progs[i].name,
			run->progs[i].attached);
	family(out, "connscope_build_info", "gauge", "connscope version and the hooks in use");
	fprintf(out, "connscope_build_info{version=\"%s\",hook=\"", CONNSCOPE_VERSION);
	label_value(out, run->hook ? run->hook : "");
	fprintf(out, "\"} 1\n");
}
