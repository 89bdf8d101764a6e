// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdlib.h>
#include <string.h>
#include "summary_format.h"

/* iproute2 misc/ss.c print_summary(): same sources, same arithmetic. */
struct ss_numbers {
	long long total, tcp_total, estab, closed, orphaned, timewait;
	long long raw4, raw6, udp4, udp6, tcp4, tcp6, frag4, frag6;
};

static void ss_numbers(const struct sockstat *st, struct ss_numbers *n)
{
	n->total = st->sockets_used;
	n->tcp_total = st->tcp_alloc + st->tcp_tw;
	n->estab = st->curr_estab;
	n->closed = (long long)st->tcp_alloc - ((long long)st->tcp_inuse + st->tcp6_inuse - st->tcp_tw);
	n->orphaned = st->tcp_orphan;
	n->timewait = st->tcp_tw;
	n->raw4 = st->raw_inuse, n->raw6 = st->raw6_inuse;
	n->udp4 = st->udp_inuse, n->udp6 = st->udp6_inuse;
	n->tcp4 = st->tcp_inuse, n->tcp6 = st->tcp6_inuse;
	n->frag4 = st->frag_inuse, n->frag6 = st->frag6_inuse;
}

void format_ss_summary(FILE *out, const struct sockstat *st)
{
	struct ss_numbers n;

	ss_numbers(st, &n);
	fprintf(out, "Total: %lld\n", n.total);
	fprintf(out, "TCP:   %lld (estab %lld, closed %lld, orphaned %lld, timewait %lld)\n",
		n.tcp_total, n.estab, n.closed, n.orphaned, n.timewait);
	fprintf(out, "\nTransport Total     IP        IPv6\n");
	fprintf(out, "RAW\t  %-9lld %-9lld %-9lld\n", n.raw4 + n.raw6, n.raw4, n.raw6);
	fprintf(out, "UDP\t  %-9lld %-9lld %-9lld\n", n.udp4 + n.udp6, n.udp4, n.udp6);
	fprintf(out, "TCP\t  %-9lld %-9lld %-9lld\n", n.tcp4 + n.tcp6, n.tcp4, n.tcp6);
	fprintf(out, "INET\t  %-9lld %-9lld %-9lld\n",
		n.raw4 + n.udp4 + n.tcp4 + n.raw6 + n.udp6 + n.tcp6, n.raw4 + n.udp4 + n.tcp4,
		n.raw6 + n.udp6 + n.tcp6);
	fprintf(out, "FRAG\t  %-9lld %-9lld %-9lld\n", n.frag4 + n.frag6, n.frag4, n.frag6);
	fprintf(out, "\n");
}

/* Column headers of the per-process table, in tcp_state_order: four
 * characters, so that PID, COMM and the twelve counts fit 80 columns. */
static const char *const state_hdr[TCP_STATE_ORDER_LEN] = {
	"ESTB", "SYNS", "SYNR", "FIN1", "FIN2", "TIMW", "CLOS", "CLSW", "LACK", "LSTN", "CLSG",
};

/* A count column is as wide as its header or its largest number: past
 * 9,999 sockets in a state the line grows, the columns stay aligned. */
#define COUNT_COLS (TCP_STATE_ORDER_LEN + 1)

static int digits(uint32_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static void widen(int *w, const struct summary_proc *p)
{
	for (int i = 0; i < COUNT_COLS; i++) {
		uint32_t v = i < TCP_STATE_ORDER_LEN ? p->state[tcp_state_order[i]] : p->orphan;

		if (digits(v) > w[i])
			w[i] = digits(v);
	}
}

static void format_proc_row(FILE *out, const char *pid, const char *comm,
			    const struct summary_proc *p, const int *w)
{
	fprintf(out, "%-7s %-12.12s", pid, comm);
	for (int i = 0; i < TCP_STATE_ORDER_LEN; i++)
		fprintf(out, " %*u", w[i], p->state[tcp_state_order[i]]);
	fprintf(out, " %*u\n", w[TCP_STATE_ORDER_LEN], p->orphan);
}

void format_summary_text(FILE *out, const struct summary *sum, bool header)
{
	int w[COUNT_COLS];
	char pid[16];

	for (int i = 0; i < COUNT_COLS; i++)
		w[i] = 4;
	for (size_t i = 0; i < sum->nprocs; i++)
		widen(w, &sum->procs[i]);
	widen(w, &sum->unattributed);
	format_ss_summary(out, &sum->st);
	/* -p with processes in several namespaces: a block for each other. */
	for (size_t i = 1; i < sum->nns; i++) {
		fprintf(out, "network namespace net:[%u] (of pid %d):\n", sum->ns[i].netns,
			sum->ns[i].pid);
		format_ss_summary(out, &sum->ns[i].st);
	}
	if (sum->other_netns)
		fprintf(out, "note: not the initial network namespace: TCP inuse/tw are this\n"
			     "  namespace's, orphaned/alloc (and so closed) are host-wide\n\n");
	if (header) {
		fprintf(out, "TCP sockets by process and state (sock_diag + /proc/PID/fd)\n");
		fprintf(out, "%-7s %-12s", "PID", "COMM");
		for (int i = 0; i < TCP_STATE_ORDER_LEN; i++)
			fprintf(out, " %*s", w[i], state_hdr[i]);
		fprintf(out, " %*s\n", w[TCP_STATE_ORDER_LEN], "ORPH");
	}
	for (size_t i = 0; i < sum->nprocs; i++) {
		snprintf(pid, sizeof(pid), "%d", sum->procs[i].pid);
		format_proc_row(out, pid, sum->procs[i].comm, &sum->procs[i], w);
	}
	format_proc_row(out, "-", "unattributed", &sum->unattributed, w);
	if (sum->unattributed.total)
		fprintf(out, "unattributed: %u sockets have no owning file (TIME_WAIT, orphaned,\n"
			     "  not yet accepted) or an owner not visible from here; `connscope\n"
			     "  attach` during the workload charges them to processes\n",
			sum->unattributed.total);
	if (sum->has_udp)
		format_udp_view_text(out, &sum->udp, sum->udp_all ? 10 : 0, header);
}

static void json_tcp_states(struct json *j, const struct summary_proc *p)
{
	json_key(j, "tcp");
	json_object_begin(j);
	for (int i = 0; i < TCP_STATE_ORDER_LEN; i++)
		json_kv_uint(j, tcp_state_name(tcp_state_order[i]), p->state[tcp_state_order[i]]);
	json_kv_uint(j, "orphan", p->orphan);
	json_object_end(j);
}

static void json_transport(struct json *j, const char *name, long long v4, long long v6)
{
	json_object_begin(j);
	json_kv_string(j, "name", name);
	json_kv_int(j, "total", v4 + v6);
	json_kv_int(j, "ip", v4);
	json_kv_int(j, "ipv6", v6);
	json_object_end(j);
}

void format_summary_json(FILE *out, const struct summary *sum)
{
	struct ss_numbers n;
	struct json j;

	ss_numbers(&sum->st, &n);
	json_init(&j, out, true);
	json_object_begin(&j);
	json_key(&j, "summary");
	json_object_begin(&j);
	json_kv_int(&j, "total", n.total);
	json_key(&j, "tcp");
	json_object_begin(&j);
	json_kv_int(&j, "total", n.tcp_total);
	json_kv_int(&j, "estab", n.estab);
	json_kv_int(&j, "closed", n.closed);
	json_kv_int(&j, "orphaned", n.orphaned);
	json_kv_int(&j, "timewait", n.timewait);
	json_object_end(&j);
	json_key(&j, "transport");
	json_array_begin(&j);
	json_transport(&j, "RAW", n.raw4, n.raw6);
	json_transport(&j, "UDP", n.udp4, n.udp6);
	json_transport(&j, "TCP", n.tcp4, n.tcp6);
	json_transport(&j, "INET", n.raw4 + n.udp4 + n.tcp4, n.raw6 + n.udp6 + n.tcp6);
	json_transport(&j, "FRAG", n.frag4, n.frag6);
	json_array_end(&j);
	json_kv_bool(&j, "other_netns", sum->other_netns);
	json_kv_uint(&j, "netns", sum->netns);
	json_object_end(&j);
	json_key(&j, "processes");
	json_array_begin(&j);
	for (size_t i = 0; i < sum->nprocs; i++) {
		json_object_begin(&j);
		json_kv_int(&j, "pid", sum->procs[i].pid);
		json_kv_string(&j, "comm", sum->procs[i].comm);
		/* As attach's and fdleak's JSON: name (else short id), pod UID. */
		json_key(&j, "container");
		if (sum->procs[i].container[0])
			json_string(&j, sum->procs[i].container);
		else
			json_null(&j);
		json_key(&j, "pod_uid");
		if (sum->procs[i].pod_uid[0])
			json_string(&j, sum->procs[i].pod_uid);
		else
			json_null(&j);
		json_tcp_states(&j, &sum->procs[i]);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "unattributed");
	json_object_begin(&j);
	json_kv_uint(&j, "total", sum->unattributed.total);
	json_tcp_states(&j, &sum->unattributed);
	json_kv_string(&j, "reason", "no owning file (TIME_WAIT, orphaned, accept queue) or "
				     "an owner not visible from here");
	json_object_end(&j);
	if (sum->has_udp)
		json_udp_view(&j, &sum->udp);
	json_key(&j, "sources");
	json_object_begin(&j);
	json_kv_string(&j, "summary", "/proc/net/sockstat, /proc/net/sockstat6, /proc/net/snmp");
	json_kv_string(&j, "processes", "sock_diag (inet_diag_req_v2) + /proc/PID/fd");
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}


void format_udp_view_text(FILE *out, const struct udp_view *v, size_t max, bool header)
{
	size_t shown = max && max < v->n ? max : v->n;
	uint64_t rest = 0;

	fputc('\n', out);
	if (header) {
		fprintf(out, "UDP sockets by process, QUIC stacks (sock_diag + /proc/PID/fd, libraries\n"
			     "  in /proc/PID/maps, else compiled into /proc/PID/exe); QUIC connections\n"
			     "  are counted by `connscope attach`\n");
		fprintf(out, "%-7s %-12s %5s  %s\n", "PID", "COMM", "UDP", "QUIC STACK");
	}
	for (size_t i = 0; i < shown; i++)
		fprintf(out, "%-7d %-12.12s %5u  %s\n", v->procs[i].pid, v->procs[i].comm,
			v->procs[i].udp, v->procs[i].quic_lib[0] ? v->procs[i].quic_lib : "-");
	for (size_t i = shown; i < v->n; i++)
		rest += v->procs[i].udp;
	if (shown < v->n)
		fprintf(out, "%-7s %-12s %5llu  (%zu more processes)\n", "-", "others",
			(unsigned long long)rest, v->n - shown);
	if (v->unattributed)
		fprintf(out, "%-7s %-12s %5u\n", "-", "unattributed", v->unattributed);
	fprintf(out, "in-kernel QUIC: %s\n", v->kernel_quic ? "present (IPPROTO_QUIC)" :
		"absent (no IPPROTO_QUIC sockets, no /proc/net/quic)");
	if (v->has_snmp)
		fprintf(out, "  established now %lld, passive %lld, active %lld "
			     "(/proc/net/quic/snmp)\n",
			(long long)quic_kernel_snmp_get(&v->snmp, "QuicConnCurrentEstabs"),
			(long long)quic_kernel_snmp_get(&v->snmp, "QuicConnPassiveEstabs"),
			(long long)quic_kernel_snmp_get(&v->snmp, "QuicConnActiveEstabs"));
}

void json_udp_view(struct json *j, const struct udp_view *v)
{
	json_key(j, "udp");
	json_object_begin(j);
	json_kv_bool(j, "kernel_quic", v->kernel_quic);
	if (v->has_snmp) {
		json_key(j, "kernel_quic_snmp");
		json_object_begin(j);
		for (size_t i = 0; i < v->snmp.n; i++)
			json_kv_uint(j, v->snmp.f[i].name, v->snmp.f[i].value);
		json_object_end(j);
	}
	json_kv_uint(j, "unattributed", v->unattributed);
	json_key(j, "processes");
	json_array_begin(j);
	for (size_t i = 0; i < v->n; i++) {
		json_object_begin(j);
		json_kv_int(j, "pid", v->procs[i].pid);
		json_kv_string(j, "comm", v->procs[i].comm);
		json_kv_uint(j, "udp_sockets", v->procs[i].udp);
		json_kv_string(j, "quic_library", v->procs[i].quic_lib);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}
