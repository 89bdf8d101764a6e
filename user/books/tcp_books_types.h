/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the TCP books are made of: a process's books, a connection, a
 * TIME_WAIT entry, an endpoint's figures and the books as a whole (struct
 * agg). A header of its own, below tcp_books.h, so the parts the
 * aggregator calls (reuse.c, failbooks.c) read the books without
 * including the aggregator that includes them. */
#ifndef CONNSCOPE_TCP_BOOKS_TYPES_H
#define CONNSCOPE_TCP_BOOKS_TYPES_H

#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include "hashmap.h"
#include "tcpstate.h"
#include "tcp_state_names.h"
#include "heatmap.h"
#include "sk_books.h"

/* Event counters of one process; all from the BPF events. */
struct proc_counters {
	uint64_t opened;	/* CLOSE->SYN_SENT: outgoing connections */
	uint64_t accepted;	/* accept() returned a TCP socket (still a connection) */
	uint64_t never_accepted;/* handshake completed, ended in the accept queue
				 * before accept() returned it (CS_F_NOT_ACCEPTED) */
	uint64_t closed;	/* connections (not listeners) that reached CLOSE */
	uint64_t connect_failed;/* SYN_SENT->CLOSE */
	uint64_t resets;	/* reached CLOSE with ECONNRESET/EPIPE: resets received */
	uint64_t resets_sent;	/* aborted by this side (failbooks.c): resets sent */
	uint64_t tw_entered;	/* FIN_WAIT2/CLOSING->CLOSE, clean: now TIME_WAIT */
	uint64_t orphaned;	/* seen orphaned (closed by the app, alive) */
	uint64_t tw_expired;	/* TIME_WAIT that ran its 60 s (tw timer expired) */
	uint64_t tw_killed;	/* TIME_WAIT ended early: reuse, RST, ss -K */
	uint64_t tw_end_unseen;	/* TIME_WAIT gone from the kernel, how it ended not seen */
	uint64_t tw_not_made;	/* clean close the kernel made no TIME_WAIT for: its
				 * table was full (tcp_max_tw_buckets) */
	uint64_t closed_active;	/* this side closed first (ESTABLISHED->FIN_WAIT1) */
	uint64_t closed_passive;/* the peer closed first (ESTABLISHED->CLOSE_WAIT) */
	uint64_t ends_unrun;	/* connections (in opened or accepted, once) whose
				 * end the kernel ran no state program for: no record
				 * came (sk_books.h) */
};

/* The kernel's view of one process at a reconcile: sockets by state. */
struct proc_truth {
	uint32_t state[CS_TCP_MAX_STATES];
	uint32_t orphan;	/* no inode, charged via the books */
	uint32_t orphan_state[CS_TCP_MAX_STATES];	/* those orphans by state */
	bool valid;		/* a reconcile has filled it */
};

/* Where a TIME_WAIT socket points: the remote endpoint of an outgoing
 * connection, or the local listening port of an accepted one. */
#define EP_REMOTE 0
#define EP_LISTEN 1
struct endpoint_key {
	uint8_t family;
	uint8_t side;		/* EP_REMOTE / EP_LISTEN */
	uint16_t port;
	uint8_t addr[16];
};

#define REUSE_HIST_BUCKETS 32	/* log2 buckets: lifetime ms, requests, handshake us */

struct endpoint_stats {
	uint64_t tw_entered;
	uint32_t tw_live;	/* at the last reconcile */
	uint32_t tw_live_peak;
	/* Reuse (reuse.c): connections to or from this endpoint. */
	uint64_t opened, accepted, closed;
	uint64_t held;		/* connections it held when we attached (seeded): they
				 * carry requests like the ones opened after */
	uint64_t requests;	/* exchanges: (turns + 1) / 2 per connection */
	uint64_t bytes_sent, bytes_recv;	/* application data of its connections */
	uint32_t live, live_peak;
	uint64_t live_area;	/* integral of live over time (connection-ns) ... */
	uint64_t live_since;	/* ... up to this moment (ktime ns) */
	/* Changes of live not yet applied, each at its own time: records come
	 * a socket's birth and its end, not in time order (a close is told at
	 * CLOSE, after births that came later), so each tick applies them
	 * sorted (reuse_sweep). */
	uint64_t *pend;		/* each: its time * 2, + 1 for an open (live_change) */
	uint32_t npend, pend_cap;
	uint64_t horizon;	/* the earliest start of its connections still open:
				 * changes before it are final (reuse_sweep) */
	uint64_t lifetime_ms_hist[REUSE_HIST_BUCKETS];
	uint64_t rpc_hist[REUSE_HIST_BUCKETS];	/* requests per connection */
	/* How its connections failed (failbooks.c), from the CLOSE event. */
	uint64_t connect_refused, connect_timeout, connect_other;
	uint64_t resets_recv, resets_sent;
	/* Who closed its connections first (reuse_close_first): the doctor
	 * quotes a listener's own closes, not its process's over every port. */
	uint64_t closed_active, closed_passive;
};

#define ORPHAN_HIST_BUCKETS 32	/* log2 of milliseconds */

struct interval_row {
	uint64_t t_ns;		/* end of the interval, ns since the run began */
	struct proc_counters delta;
	struct proc_truth truth;
};

struct proc_books {
	pid_t pid;
	char comm[16];
	uint64_t start_ns;	/* boottime ns; 0 unknown */
	bool target;		/* asked for by the user (not only seen) */
	bool exited;
	pid_t ptgid;		/* its parent (fork, join or /proc); 0 unknown:
				 * reports group one server's children */
	uint32_t exe_id;	/* its executable's path hashed (/proc/PID/exe, read
				 * with its software; a child gone before that has
				 * its parent's: forked, not exec'd); 0 unknown.
				 * Groups are one name, parent and executable */
	char exe[16];		/* that executable's base name, "" unknown */
	uint64_t joined_ns;	/* ktime it became a target during the run (--comm,
				 * --cgroup: started, renamed, moved in); 0: at start */
	bool joined_said;	/* attach told the user (stderr) */
	uint8_t software;	/* enum sw_kind (software.h), from /proc while alive */
	bool software_probed;
	/* Its container (its name, else the short id) and Kubernetes pod UID,
	 * from its cgroup while alive; "" for neither. */
	char container[128];
	char pod_uid[40];
	bool container_probed;
	struct proc_counters total;
	struct proc_counters at_last_tick;
	/* Live sockets by state from the events (+ the start-up seed). */
	int64_t live[CS_TCP_MAX_STATES];
	struct proc_truth truth;	/* last reconcile */
	uint32_t seeded;		/* sockets it held when we attached */
	struct interval_row *rows;
	size_t nrows, rows_cap;
	struct hmap endpoints;		/* struct endpoint_key -> struct endpoint_stats */
	size_t ep_hint;			/* the last endpoint's entry (hmap_upsert_hint) */
	/* How long sockets stayed orphaned, log2(ms) buckets (bucket 0: < 2 ms). */
	uint64_t orphan_ms_hist[ORPHAN_HIST_BUCKETS];
	uint64_t orphan_ended;
	/* Reuse (reuse.c) */
	uint64_t requests;		/* exchanges on this process's connections */
	uint64_t bytes_sent, bytes_recv;
	uint64_t handshake_us_hist[REUSE_HIST_BUCKETS];
	uint64_t lifetime_ms_hist[REUSE_HIST_BUCKETS];
	uint64_t rpc_hist[REUSE_HIST_BUCKETS];
	/* Exact sums behind the histograms (Prometheus _sum). */
	uint64_t handshake_ns_sum, lifetime_ns_sum, rpc_sum;
	uint64_t ticks;			/* intervals closed */
	uint64_t t0_ns;			/* the run's start (ktime), for time-weighted means */
	struct heatmap hm_lifetime;	/* closed connections by lifetime (log2 ms) */
	struct heatmap hm_rpc;		/* closed connections by requests (log2) */
	bool hm_reuse_ready;
	uint16_t listen_ports[16];	/* where it listens: accepted sockets' endpoint */
	uint8_t nlisten;
	struct heatmap hm_tw;		/* live TIME_WAIT by endpoint, per interval */
	struct heatmap hm_orphan;	/* live orphans by state, per interval */
	bool hm_ready;
};

/* The unattributed sockets: no inode and not in the books (sockets that
 * predate the agent or whose owner was never seen). */
struct unattributed {
	uint32_t state[CS_TCP_MAX_STATES];
	uint32_t orphan;
};

/* The census's moment (census_cut.h). */
/* A connection that began or ended since the census began. */
struct cut_conn {
	struct cs_tuple tuple;
	pid_t pid;
	uint8_t ended;		/* its end noted (else a birth, still alive) */
	uint8_t born_in;	/* born since the census began too */
	uint8_t seen;		/* the census showed it, for pid */
	uint64_t ts;		/* its end (ktime) */
	uint64_t born_ns;	/* born_in: its birth (ktime) */
};

/* A birth noted: its time with it, as one after the census ended cannot
 * be the census's socket at its tuple. */
struct cut_birth {
	uint64_t sk;
	uint64_t ts;
};

struct census_cut {
	bool open;		/* from agg_census_begin to the reconcile */
	uint64_t end_ns;	/* when the census ended (ktime; 0: not said) */
	struct cut_conn *conns;	/* the ends; the reconcile adds the births */
	size_t n, cap;
	struct cut_birth *births;	/* the connections born since it began */
	size_t nbirths, births_cap;
	uint64_t dropped;	/* not noted (out of memory): a gap may show */
};

#define AGG_MAX_DUMPED_NS 64

/* One TIME_WAIT the census lacked, to be looked at again: t, the device
 * it is bound to and its cookie in, found, expires_ms and at_ns out (found: 1 the
 * kernel has it, with its timer's ms left as at at_ns, the caller's clock
 * as snapshot_ns, 0 not said: the census's start; 0 it has not; < 0 no
 * answer). */
struct agg_tw_look {
	struct cs_tuple t;
	uint32_t bound_if;
	int found;
	uint32_t expires_ms;
	uint64_t at_ns;
	uint64_t cookie;	/* in: its socket's cookie (0: any at t) */
};
/* Each of q[0..n) looked at, its answer in place. */
typedef void (*agg_tw_look_fn)(void *ctx, struct agg_tw_look *q, size_t n);

struct agg {
	struct hmap procs;	/* struct proc_key -> struct proc_books: every process
				 * seen, a reused pid's earlier ones included */
	struct hmap cur;	/* pid_t -> uint64_t proc_key.seq of its latest process */
	uint64_t proc_seq;	/* proc_key.seq of the last books made */
	struct hmap conns;	/* u64 sk -> struct conn */
	struct hmap orphans;	/* u64 sk -> u64 ts: when each connection with
				 * conn.orphan set was first seen orphaned; it
				 * leaves with its connection */
	bool end_orphan;	/* apply_summary is applying an end record that says
				 * orphaned at end_orphan_ns: no note for that one */
	uint64_t end_orphan_sk, end_orphan_ns;
	/* apply_summary's books of a connection whose whole life is one
	 * record: on its stack, never in conns (no insert and delete). */
	const struct conn *unbooked;
	/* Tests: every end record unfolded transition by transition, where
	 * apply_whole applies a whole life in one step (test_whole_record
	 * holds the two to the same books). */
	bool unfold_whole;
	/* apply_whole's connection, and its endpoint's figures as reuse_ep
	 * found them for ep_proc holding ep_count endpoints (NULL, 0 between
	 * records). */
	const struct conn *ep_conn;
	const struct proc_books *ep_proc;
	size_t ep_count;
	struct endpoint_stats *ep_es;
	struct hmap seeds;	/* struct cs_tuple -> struct conn (pre-existing, sk unknown) */
	struct hmap tw;		/* struct cs_tuple -> struct tw_entry */
	struct hmap tw_by_ptr;	/* u64 tw address -> struct cs_tuple */
	/* The TIME_WAIT table's entries by local port (65,536 counts, made
	 * with its first entry; NULL: none made, every look asks the table).
	 * A look for one at a tuple whose port has none is answered here:
	 * a server's child made looks for a TIME_WAIT it took over at its
	 * tuple, and a churn's server holds none at its listening port. */
	uint32_t *tw_ports;
	struct hmap listen_addrs;	/* struct listen_addr_key -> u8: the listeners seen
					 * (events, seeds), for their children's endpoints */
	struct hmap births_pending;	/* u64 cookie -> u64 ts: ended, said BORN, its
					 * birth record not yet come (birth_came_late) */
	uint64_t births_late;	/* birth records that came after their socket's end */
	uint64_t ends_unrun_born;	/* of the ends no program ran (ends_unrun), those
					 * of connections told by a birth record */
	struct hmap accepting;	/* u64 sk -> struct accept_wait: a listener's child
				 * that closed before its accept record came
				 * (per-transition mode; apply_accept) */
	uint64_t birth_pass_failed;	/* birth passes that missed a namespace */
	struct unattributed unattributed;
	uint64_t t0_ns;		/* bpf_ktime_get_ns() at start */
	uint64_t now_ns;	/* the latest event time seen */
	uint64_t ev_ns;		/* the time of the transition being applied (0: now_ns) */
	/* The load's window: the first and the last connection transition
	 * (a handshake begun or done, a close begun or done) at or after
	 * t0_ns. Rates are per second of it, not of an idle lead-in or
	 * tail (0: none seen). */
	uint64_t load_first_ns, load_last_ns;
	uint64_t bucket_ns;	/* heatmap column width: the interval (default 1 s) */
	uint64_t events;	/* events applied */
	uint64_t unknown_events;/* events for sockets with no owner */
	uint64_t tw_reused;	/* TIME_WAIT tuples taken over by a new connection */
	uint64_t mismatch_last;	/* sockets where books and kernel differ, last reconcile */
	uint64_t mismatch_max;	/* the largest such gap of the run */
	uint64_t reconciles;
	uint64_t tw_gone_unknown;	/* TIME_WAIT gone from the kernel, end not seen */
	uint64_t tw_timer_strays;	/* tw timer events for a TIME_WAIT the books
					 * do not hold (its close record unmatched) */
	uint64_t births_known_ns;	/* set by the caller: when the last birth pass began
					 * (ktime; 0: births come as they happen). A
					 * connection established before it that is still
					 * open has been told; one after, maybe not yet, so
					 * live changes from then on wait (reuse_sweep). */
	uint64_t snapshot_ns;	/* set by the caller: when the reconcile's dump began
				 * (ktime; 0: unknown), so TIME_WAIT entered later is kept */
	uint64_t tw_entered_during_dump;	/* kept by a reconcile: entered after its dump began */
	struct census_cut cut;	/* connections begun or ended since the census began */
	uint64_t live_dropped;	/* live changes not queued (out of memory) */
	uint64_t conns_replaced;	/* a socket's record found another socket's books at
					 * its address (that one's end record was lost) */
	/* The namespaces the reconcile's dump read (agg_set_dumped; none
	 * set: all). A TIME_WAIT of another namespace (a container whose
	 * traced processes are gone, or not reachable) is no absence there:
	 * it is left to its timer's events. */
	uint32_t dumped_ns[AGG_MAX_DUMPED_NS];
	size_t ndumped;
	bool dumped_known;	/* agg_set_dumped said which (none: all) */
	bool tw_census;		/* TIME_WAIT ends told by the dumps alone (no tw
				 * hook): gone at an age of TCP_TIMEWAIT_LEN or more
				 * is expired, younger ended early */
	bool final_reconcile;	/* set before the run's last reconcile: a TIME_WAIT
				 * whose making is still in doubt is judged on one
				 * dump */
	uint64_t tw_absent_once;	/* TIME_WAIT the last dump lacked for the first
					 * time: the next dump says if they are gone */
	/* The second look at a TIME_WAIT the census lacked once, where the
	 * caller has one (attach's last reconcile: sock_diag's exact look at
	 * its tuple, agg_tw_look_fn), in place of a second census. NULL:
	 * the next census is the second look. */
	agg_tw_look_fn tw_look;
	void *tw_look_ctx;
	uint64_t census_cpu_ns;		/* set by the caller: the last census's CPU
					 * (0: not said; then its wall time) */
	uint64_t tw_looked;		/* TIME_WAIT so looked at, over the run */
	uint64_t tw_looked_there;	/* of them, those the kernel still had */
	bool final_tick;	/* set before the last agg_tick: every queued live
				 * change is applied, open connections stay live */
	/* A daemon (the exporter) writes no report: no heatmaps, and only the
	 * last AGG_DAEMON_ROWS interval rows, so memory stays flat for as
	 * long as it runs. */
	bool daemon;
	/* Parents told at fork (CS_EV_FORK) of children not in the books yet:
	 * pid -> struct parent_note, taken when the child's books are made
	 * (parents.c). */
	struct hmap parents;
	uint64_t parents_dropped;	/* notes not kept: AGG_MAX_PARENT_NOTES held */
	size_t parents_iter;		/* where agg_parents_prune() goes on */
	/* agg_proc_gen's last answers, a slot per pid % 16: nearly
	 * every record names one of a few processes, and a hit saves the two
	 * lookups (cur, then procs). Valid while procs_gen is unchanged: books
	 * move when a->procs changes (proc_new, agg_drop_proc). */
	struct proc_cache_slot {
		pid_t pid;
		uint64_t start_ns;
		uint64_t gen;
		struct proc_books *p;
	} proc_cache[16];
	uint64_t procs_gen;	/* changes of a->procs */
	/* agg_holder's last answer: a TIME_WAIT's holder, asked for at each
	 * TIME_WAIT's end (valid while procs_gen is gen). */
	struct holder_memo {
		pid_t pid;
		uint64_t gen;
		struct proc_books *p;
	} holder_memo;
	uint64_t procs_dropped;	/* books deleted (agg_drop_proc): gone processes */
	uint64_t ends_dropped;	/* their connections opened + accepted, so totals over
				 * every process stay counters (cost_connections) */
	struct sk_books skb;	/* connections the kernel ended with no program run */
};

#define AGG_DAEMON_ROWS 4

/* A listener's child whose CLOSE came before its accept record (agg.
 * accepting): what that record is to count. */
struct accept_wait {
	uint64_t ts;		/* the CLOSE's (first: the tick prunes by it) */
	struct cs_tuple tuple;	/* the child's: a later socket at its address is
				 * not it */
	uint8_t counted;	/* its CLOSE counted it (never accepted): its
				 * accept counts nothing */
};

/* A live connection in the books: 80 bytes (88 with its key), one for
 * every traced socket, so a field here costs 8 MiB at 1M sockets; the
 * flags are bits, and the handshake's start is since_ns (syn_seen). */
struct conn {
	struct cs_tuple tuple;
	pid_t pid;
	uint8_t state;
	uint8_t orphan : 1;	/* counted as orphaned already */
	uint8_t seeded : 1;
	uint8_t passive : 1;	/* accepted: its local port is a listening port */
	uint8_t reuse_open : 1;	/* counted live at its endpoint (reuse.c) */
	uint8_t accepted : 1;	/* counted in its owner's accepted (CS_F_ACCEPTED) */
	uint8_t io_added : 1;	/* its live traffic was added at the end (agg_add_live_io) */
	uint8_t listen_any : 1;	/* passive: its listener is bound to the wildcard
				 * address (else to the address it was reached at) */
	uint8_t syn_seen : 1;	/* CLOSE->SYN_SENT seen: since_ns is the handshake's start */
	uint8_t queued : 1;	/* a listener's child not yet returned by accept(): counted
				 * at its endpoint, not yet concurrent (reuse.c) */
	uint8_t cw_seen : 1;	/* per-transition: the peer's FIN came (CLOSE_WAIT) while
				 * it counted concurrent, at the time agg.orphans holds
				 * for it until it is orphaned (its process has not
				 * closed it yet); released at that close, at its last
				 * byte if that came first (reuse_conn_done) */
	uint8_t cut_born : 1;	/* born since the census began (census_cut.h) */
	uint32_t open_us;	/* reuse_open: concurrent since since_ns + this (µs;
				 * in the padding before since_ns: reuse.c) */
	uint64_t since_ns;
	uint64_t cookie;	/* the socket's cookie (socket-storage records), 0 unknown */
	/* When it was first seen orphaned is not here but in agg.orphans:
	 * few sockets are orphaned at a time, and 8 bytes less a connection
	 * are 7.6 MiB less at 1M sockets (#23 item 7). */
};

struct tw_entry {
	pid_t pid;
	uint8_t cancelled;	/* timer cancelled: expiry or early end follows */
	uint8_t missed;		/* reconciles in a row whose dump lacked it */
	uint8_t maybe;		/* census mode, table full at its close (CS_F_TW_MAYBE):
				 * made or not is for the dumps to say; not yet
				 * counted entered */
	uint8_t seen;		/* in the dump being reconciled (agg_reconcile sets
				 * and clears it: no table of the seen a dump) */
	uint64_t entered_ns;
	uint64_t gone_ns;	/* the first dump that lacked it began then (0: none) */
	uint64_t deadline_ns;	/* census mode: when its timer runs out (entered + 60 s,
				 * then the last dump's idiag_expires: a re-armed
				 * timer, an orphaned FIN_WAIT2's tcp_fin_timeout) */
	uint64_t tw;		/* inet_timewait_sock address, 0 if unknown */
	struct endpoint_key ep;
	uint32_t bound_if1;	/* 1 + the device it is bound to, as the last census
				 * that showed it said (an exact look must name it);
				 * 0: no census has shown it */
	uint64_t cookie;	/* its socket's cookie, as its close record
				 * said (CS_SUM_COOKIE_BEFORE), else as the
				 * first census that showed it said (0: none
				 * yet, or not said): a TIME_WAIT of another
				 * cookie at its tuple is another connection's
				 * (the kernel took this one over), and the
				 * exact look names it */
};

#endif
