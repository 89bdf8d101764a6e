/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* QUIC books per process: the connection state machines fed by the wire
 * events (quicwire.bpf.c), the libngtcp2 lifecycle events (ngtcp2.bpf.c)
 * and, where the kernel has it, in-kernel QUIC's socket states. Each
 * source keeps its own counts: they see different things, and a report
 * says which source each number comes from. Pure user-space state, so the
 * unit tests drive it with recorded events. */
#ifndef CONNSCOPE_QUICBOOKS_H
#define CONNSCOPE_QUICBOOKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "hashmap.h"
#include "heatmap.h"
#include "quic.h"

#define QUIC_HIST_BUCKETS 32		/* log2 µs, as the TCP handshake histogram */
/* A connection whose handshake has not completed this long after its
 * first Initial counts as failed (ngtcp2's and quiche's default handshake
 * timeouts are 10 s). */
#define QUIC_HS_TIMEOUT_NS (10ULL * 1000000000ULL)
/* Connections kept per process and source; past it, finished ones go. */
#define QUIC_MAX_CONNS 65536

/* Sources (bits of quic_proc.sources). */
#define QSRC_WIRE	0x01	/* cgroup_skb: datagram headers */
#define QSRC_NGTCP2	0x02	/* libngtcp2 uprobes */
#define QSRC_KERNEL	0x04	/* in-kernel QUIC (IPPROTO_QUIC) socket states */
#define QSRC_COUNT	3

struct quic_counts {
	uint64_t connections;		/* opened or accepted */
	uint64_t as_client, as_server;
	uint64_t handshakes_completed;
	uint64_t handshakes_failed;
	uint64_t closed;		/* ended where the source sees an end */
	uint64_t retries;		/* connections that got a Retry */
	uint64_t version_negotiations;	/* Version Negotiation packets met */
	uint64_t migrations;		/* wire: 4-tuple changes of a known DCID; ngtcp2: initiated */
	uint64_t handshake_us_hist[QUIC_HIST_BUCKETS];
	uint64_t handshake_ns_sum;
};

struct quic_proc {
	pid_t pid;
	char comm[16];			/* from the events: "" until one carries it */
	bool gone;			/* quic_books_proc_gone() ran */
	uint64_t start_ns;		/* the process's start (boottime ns) from the wire events */
	uint32_t sources;		/* QSRC_* that reported for it */
	struct quic_counts src[QSRC_COUNT];	/* [0] wire, [1] ngtcp2, [2] kernel */
	/* Wire: client SCID (survives Retry) -> struct qwconn; any CID of a
	 * connection -> its client SCID. */
	struct hmap wconns;
	struct hmap cid_ix;
	/* Long headers of an unknown version (before Version Negotiation):
	 * client SCID -> first seen ns. Not connections yet. */
	struct hmap attempts;
	struct hmap lconns;		/* ngtcp2_conn pointer -> struct qlconn */
	struct hmap kconns;		/* in-kernel QUIC: sock address -> struct qkconn */
	struct hmap cookies;		/* wire: socket cookie -> its connections */
	struct hmap paths;		/* wire: 4-tuple -> the connection last seen on it */
	uint64_t unmatched_short;	/* first short headers to a DCID we never saw start */
	uint64_t short_by_path;		/* ... to a new DCID, matched by a connection's 4-tuple */
	uint64_t evicted;		/* finished connections dropped at QUIC_MAX_CONNS */
	uint64_t attempts_full;		/* attempts / Version Negotiations not kept: cap reached */
	uint64_t attempts_expired;	/* attempts no connection followed in QUIC_HS_TIMEOUT_NS */
	/* When the ngtcp2 probes of the library it maps went on (0: never),
	 * and when the wire saw its first connection begin: probes that came
	 * after it saw none of the connections begun before them. */
	uint64_t lib_since_ns;
	uint64_t wire_first_ns;
	/* The QUIC stack it runs, as summary names it: the library it maps,
	 * else the one compiled in ("quic-go 0.29.0-1 (statically linked;
	 * Debian)"); "" when none was found. Looked for once. */
	char stack[80];
	bool stack_looked;
	struct heatmap hm_conns;	/* per interval: opened / completed / failed */
	struct heatmap hm_handshake;	/* completed handshakes by log2 time */
	bool hm_ready;
};

struct quic_books {
	struct hmap procs;		/* pid_t -> struct quic_proc */
	uint64_t t0_ns, bucket_ns;
	uint64_t malformed_events;	/* events too short or of an unknown type */
	uint64_t unowned_events;	/* tgid 0 */
	bool no_heatmaps;		/* a daemon: nothing renders them */
};

void quic_books_init(struct quic_books *b, uint64_t t0_ns, uint64_t bucket_ns);
void quic_books_free(struct quic_books *b);
/* agg_fit_clock (tcp_books.h) for the QUIC books. */
void quic_books_fit_clock(struct quic_books *b, uint64_t t0_ns, uint64_t end_ns);
/* Deletes pid's QUIC books (a daemon forgetting a process that is gone). */
void quic_books_drop(struct quic_books *b, pid_t pid);

void quic_books_wire(struct quic_books *b, const struct quic_wire_event *e);
void quic_books_lib(struct quic_books *b, const struct quic_lib_event *e);
/* pid maps a libngtcp2 whose probes went on at since_ns (a process
 * started before the probes of its copy of the library: they may have
 * come late for it). The earliest note stays. */
void quic_books_lib_probes(struct quic_books *b, pid_t pid, uint64_t since_ns);
/* The stack pid runs (NULL or "": none found); the command looks once. */
void quic_books_stack(struct quic_books *b, pid_t pid, const char *name);
/* In-kernel QUIC (IPPROTO_QUIC, out-of-tree module): its sockets change
 * state through inet_sock_set_state with TCP's numbering, CLOSE ->
 * SYN_SENT (connect) or SYN_RECV (a server's new connection) ->
 * ESTABLISHED (handshake done) -> CLOSE. */
void quic_books_kernel_state(struct quic_books *b, pid_t pid, uint64_t ts_ns, uint64_t sk,
			     int oldstate, int newstate);

/* pid exited: what it had open is closed, handshakes under way failed
 * (a process that exits without ngtcp2_conn_del, say). */
void quic_books_proc_gone(struct quic_books *b, pid_t pid, uint64_t ts_ns);
/* Interval end: handshakes past QUIC_HS_TIMEOUT_NS fail, finished
 * connections beyond QUIC_MAX_CONNS go, heatmaps get their column. */
void quic_books_tick(struct quic_books *b, uint64_t now_ns);

/* NULL when nothing was seen for pid. */
const struct quic_proc *quic_books_proc(const struct quic_books *b, pid_t pid);
/* Connections of pid whose handshake is still under way, by the source
 * quic_proc_view() takes the lifecycle from. */
uint64_t quic_proc_in_progress(const struct quic_proc *p);
/* Wire connections of pid that began before its ngtcp2 probes went on
 * (those still in the books). */
uint64_t quic_proc_lib_missed(const struct quic_proc *p);

/* The figure a report shows for each field, and the source it comes from:
 * lifecycle (connections, handshakes, closed) from ngtcp2 where it
 * reported, else in-kernel QUIC, else the wire; Retry and Version
 * Negotiation only the wire sees; migrations are the wire's rebindings
 * plus the library's deliberate migrations. A process whose ngtcp2 probes
 * came after the wire saw its first connection begin (lib_late) takes its
 * lifecycle from the wire when the wire saw more connections: the
 * headline never drops below what the wire saw, and each figure still
 * comes from one source (the two time a handshake from other moments). */
struct quic_view {
	struct quic_counts c;
	int lifecycle_src;		/* index into src[] */
	uint32_t sources;
	bool lib_late;			/* its ngtcp2 probes came after its first connection */
	uint64_t lib_missed;		/* wire connections begun before the probes */
	double lib_late_s;		/* how long after that first connection they came */
};
void quic_proc_view(const struct quic_proc *p, struct quic_view *v);

/* What a report needs to know of the run's QUIC sources, filled by the
 * command from the tracer: renderers never ask the kernel. */
struct quic_run {
	const struct quic_books *books;
	bool wire_on;			/* the wire unit is loaded, sock_create attached */
	const char *wire_error;		/* why not, when !wire_on */
	/* Its per-packet programs (cgroup_skb ingress/egress): attached only
	 * once a traced process holds or makes a UDP socket. */
	bool skb_on;
	double skb_after_s;		/* seconds into the run they went on */
	const char *skb_why;
	const char *cgroup;		/* where it is attached: cgroup v2 directories, "A, B" */
	const char *cgroup_note;	/* why not the targets' own cgroups ("" or NULL) */
	/* Times a cgroup replaced attach points below it: each a moment in
	 * which a datagram there may have been counted twice. */
	uint64_t cgroup_swaps;
	bool kernel_quic;		/* in-kernel QUIC detected (and followed) */
	uint32_t seeded;		/* UDP sockets found at start */
	uint64_t seed_failed;		/* ... that could not be seeded */
	int lib_procs;			/* targets found mapping libngtcp2 */
	int lib_files;			/* libngtcp2 files with the probes */
	uint64_t wire_stats[QW_STAT_MAX];
	uint64_t lib_stats[QN_STAT_MAX];
};

/* The wire's events lost: its ring buffer full, or a long-header datagram
 * left unparsed because the run it interrupted held the parser's scratch
 * (quicwire.bpf.c, qw_scratch). */
static inline uint64_t quic_wire_lost(const struct quic_run *q)
{
	return q->wire_stats[QW_STAT_RB_LOST] + q->wire_stats[QW_STAT_SCRATCH_BUSY];
}

const char *quic_source_name(int idx);
/* "wire,ngtcp2"; "none" for 0. Returns buf. */
const char *quic_sources_label(uint32_t sources, char *buf, size_t len);
/* p-quantile (0..1) of a log2 µs histogram, in ms, from bucket upper bounds. */
double quic_hist_quantile_ms(const uint64_t *hist, double q);
/* The bounds of the log2 bucket the p-quantile falls in, in ms: all the
 * histogram knows of it. false (and 0, 0) when it is empty. */
bool quic_hist_quantile_range_ms(const uint64_t *hist, double q, double *lo, double *hi);
/* Mean handshake time in ms from the exact sum; 0 without completions. */
double quic_handshake_mean_ms(const struct quic_counts *c);

#endif
