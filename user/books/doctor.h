/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `connscope doctor`: rules over a snapshot of the books -> findings, each
 * with a rule id, a severity, a one-sentence verdict, the numbers that
 * prove it (each with its source) and the fix.
 *
 * Three layers, one way:
 *   struct doctor_run   what the run collected beyond the books (listen
 *                       queues, netstat, EMFILE counts, agent cost), filled
 *                       by attach.c from the sources each interval;
 *   struct dr_facts     one flat snapshot of everything the rules read,
 *                       built from the books by doctor_facts_build();
 *   doctor_rules()      pure functions of dr_facts (doctor_rules.c): no
 *                       kernel, no /proc, so the unit tests drive them. */
#ifndef CONNSCOPE_DOCTOR_H
#define CONNSCOPE_DOCTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "kernel_view.h"

/* ---- findings -------------------------------------------------------- */

enum dr_severity { DR_INFO = 1, DR_WARNING = 2, DR_CRITICAL = 3 };

/* Where a number comes from; printed beside it. */
#define DR_SRC_BPF	"BPF events"
#define DR_SRC_BPFERR	"BPF syscall exits"
#define DR_SRC_BPFSTATS	"BPF run-time stats"
#define DR_SRC_SOCKDIAG	"sock_diag"
#define DR_SRC_PROCFD	"/proc/PID/fd"
#define DR_SRC_LIMITS	"/proc/PID/limits"
#define DR_SRC_STAT	"/proc/PID/stat"
#define DR_SRC_SOCKSTAT	"/proc/net/sockstat"
#define DR_SRC_NETSTAT	"/proc/net/netstat"
#define DR_SRC_SYSCTL	"/proc/sys"
#define DR_SRC_RUSAGE	"getrusage"
#define DR_SRC_DERIVED	"derived"

#define DR_MAX_EVIDENCE 10
#define DR_MAX_PIDS 16

struct dr_evidence {
	char name[40];		/* "time_wait_peak" */
	double value;
	char unit[16];		/* "sockets", "/s", "%", "s" ... */
	const char *source;	/* DR_SRC_* */
};

struct finding {
	char rule[24];		/* DR rule ids: see doctor_rule_ids[] */
	int severity;		/* enum dr_severity */
	pid_t pid;		/* 0: host or namespace wide, or a service (pids) */
	char comm[16];
	/* A service of several processes (every one accepting on a listener,
	 * as pre-forked workers do): the first DR_MAX_PIDS of them, by pid,
	 * and how many; pid is then 0 and comm the service's. */
	pid_t pids[DR_MAX_PIDS];
	uint32_t npids;
	char endpoint[64];	/* "" when the finding is not about one endpoint */
	char verdict[384];	/* one sentence */
	char fix[1536];	/* the software's own settings first, the generic last */
	struct dr_evidence ev[DR_MAX_EVIDENCE];
	int nev;
	/* churn: the counts its text gives (kept as JSON members). */
	uint64_t connections, requests;
	uint32_t concurrency;
};

#define DR_MAX_FINDINGS 64

/* Rule ids in the order a tie in severity is broken; agent_cost is first
 * whatever its severity, so no one blames the workload for it. */
extern const char *const doctor_rule_ids[];
extern const size_t doctor_nrules;

const char *dr_severity_name(int severity);

/* ---- what the run collects beyond the books ---------------------------- */

#define DR_MAX_LISTENERS 64
#define DR_MAX_NETNS 8
#define DR_MAX_PROCS 64

/* A LISTEN socket of a traced process, sampled each interval (sock_diag:
 * idiag_rqueue is the accept queue now, idiag_wqueue the backlog). */
struct listen_sample {
	pid_t pid;
	uint8_t family;
	uint16_t port;
	uint8_t addr[16];	/* bound address; all zero: the wildcard */
	uint32_t backlog;
	uint32_t queue_now, queue_peak;
	uint32_t samples, samples_full;	/* intervals seen; at its backlog */
};

/* TcpExt ListenOverflows / ListenDrops of one network namespace. */
struct netstat_ns {
	uint64_t ns_ino;	/* /proc/PID/ns/net inode */
	pid_t pid;		/* a target in it (whose /proc/PID/net/netstat is read) */
	uint64_t overflows_first, drops_first;
	uint64_t overflows_last, drops_last;
	uint64_t overflows_peak_interval;	/* largest rise in one interval */
	uint64_t tw_recycled_first, tw_recycled_last;
	bool valid;
};

/* TcpExt counters of one namespace at one moment (sources/netstat.c). */
struct listen_counters {
	uint64_t overflows;	/* TcpExt ListenOverflows: accept queue full */
	uint64_t drops;		/* TcpExt ListenDrops: every SYN dropped at a listener */
	uint64_t tw_recycled;	/* TcpExt TWRecycled: TIME_WAIT ports connect() reused */
};

/* EMFILE / ENFILE returned by fd-making syscalls (doctor mode only). */
struct fd_errors {
	pid_t pid;
	uint64_t emfile, enfile;
};

/* One of connscope's BPF programs over the window (BPF run-time stats). */
#define AGENT_COST_MAX_PROGS 64
struct prog_cost {
	char name[64];		/* its function's name in its BTF: the kernel's
				 * bpf_prog_info.name keeps 15 chars, and
				 * handle_set_state_btf and _nested both read
				 * "handle_set_stat" there */
	uint32_t id;
	uint64_t run_ns, runs;
};

/* What connscope itself cost over the window. */
struct agent_cost {
	bool valid;
	double bpf_s;		/* run time of connscope's BPF programs, in the
				 * measured intervals (stats_s of window_s) */
	uint64_t bpf_runs;
	double agent_cpu_s;	/* connscope's own user+system CPU */
	double targets_cpu_s;	/* the traced processes' CPU over the window */
	double window_s;	/* since the readings started */
	double stats_s;		/* of it, how long BPF run-time stats were on */
	uint32_t every;		/* stats on one interval in every this many (1: all) */
	uint64_t stats_conns;	/* connection ends the books saw in those intervals:
				 * what bpf_s is per */
	struct prog_cost progs[AGENT_COST_MAX_PROGS];	/* by run time, largest first */
	size_t nprogs;
};

struct doctor_run {
	bool doctor_mode;	/* `connscope doctor`: fd errors counted */
	const char *command;	/* the command the reports name: "doctor", "run" */
	struct listen_sample listeners[DR_MAX_LISTENERS];
	size_t nlisteners;
	struct netstat_ns ns[DR_MAX_NETNS];
	size_t nns;
	struct fd_errors fderr[DR_MAX_PROCS];
	size_t nfderr;
	bool fderr_counted;
	struct agent_cost cost;
};

/* ---- the snapshot the rules read ---------------------------------------- */

struct dr_endpoint {
	char label[64];
	bool listen;		/* a local listening port, not a remote endpoint */
	uint64_t opened, accepted, requests;
	uint32_t live_peak;
	uint64_t tw_entered;
	uint32_t tw_peak;
	/* Its TIME_WAIT sockets at each interval (column c: the run's
	 * interval c; sock_diag, as the books attribute them), NULL when only
	 * the peak is known: a listener's pool adds its processes' columns,
	 * so its peak is the largest sum at one moment. */
	const uint32_t *tw_cols;
	size_t tw_ncols;
	uint64_t refused, timeouts, failed_other, resets_recv, resets_sent;
	/* Its connections closed first by this side / by the peer: a
	 * listener's TIME_WAIT is explained by its own closes, not by its
	 * process's over every port (BPF events). */
	uint64_t closed_active, closed_passive;
	/* Ephemeral ports towards it at its busiest moment (sock_diag). */
	bool ports_known;
	uint32_t ports_peak;
	double port_share_peak;
};

#define DR_MAX_EPS 32

struct dr_proc {
	pid_t pid;
	char comm[16];
	uint8_t software;	/* enum sw_kind: the fixes speak its words */
	bool target;
	uint64_t opened, accepted, closed, requests;
	uint64_t never_accepted;	/* handshakes that ended in the accept queue */
	uint64_t closed_active, closed_passive;
	uint64_t tw_entered;
	uint64_t tw_not_made;		/* clean closes with no TIME_WAIT: table full */
	uint32_t tw_now, tw_peak;	/* its TIME_WAIT sockets, per interval */
	uint32_t orphan_now, orphan_peak;
	uint64_t orphaned;		/* passed through an orphan state (normal) */
	uint64_t orphan_long;		/* orphaned longer than DR_ORPHAN_LONG_MS */
	struct dr_endpoint eps[DR_MAX_EPS];
	size_t neps;
	/* fds (NULL-able: fd tracking off) */
	bool fd_known;
	bool fd_sites;			/* traced by the fd syscall programs (--fd-sites):
					 * leak sites known; else /proc listings only */
	uint32_t fd_start, fd_now, fd_peak;
	uint32_t fd_mid;		/* half way through the listings (fd_proc_mid_count) */
	uint64_t fd_listings;		/* listings the growth is fitted to */
	double fd_span_s;		/* from the first of them to the last */
	uint64_t fd_limit;		/* RLIMIT_NOFILE soft; UINT64_MAX unlimited */
	double fd_slope;		/* fds per second */
	double fd_seconds_to_limit;	/* < 0: not growing */
	uint32_t leak_old;		/* fds of the top suspect site */
	double leak_age_s;
	char leak_site[160];		/* "leak_sockets (leakfix.c:42)" */
	bool fderr_known;
	uint64_t emfile, enfile;
};

struct dr_facts {
	double window_s;		/* the load's seconds (run_info.load_s): rates are per second of it */
	struct dr_proc *procs;
	size_t nprocs;
	const struct listen_sample *listeners;
	size_t nlisteners;
	const struct netstat_ns *ns;
	size_t nns;
	bool lim_known;
	struct netlimits lim;
	uint64_t host_tw_peak, host_orphan_peak;
	struct agent_cost cost;
};

/* ---- thresholds (docs/doctor.md lists them) ---------- */

/* churn, judged by what it costs (dr_churn_costs, used by the doctor and
 * attach's findings alike): each slot of peak concurrency opened more than
 * 3 connections, and handshakes were at least 5 % of the round trips (a
 * new connection costs a round trip before its first request, and a
 * TIME_WAIT after): fewer than 19 requests a connection, so pgbench -C at
 * ~10 turns a transaction is not decided by a hair. At least 4
 * connections. DR_CHURN_MAX_RPC: "a connection for (nearly) every
 * request", the client asking the server to close. */
#define DR_CHURN_CONNS_PER_SLOT	3
#define DR_CHURN_HANDSHAKE_SHARE 0.05
#define DR_CHURN_MAX_RPC	10
#define DR_CHURN_MIN_CONNS	4

/* The share of round trips spent opening connections. */
static inline double dr_handshake_share(uint64_t opened, uint64_t requests)
{
	return opened ? (double)opened / (double)(opened + requests) : 0;
}

static inline bool dr_churn_costs(uint64_t opened, uint64_t requests, uint32_t live_peak)
{
	return live_peak && requests && opened > DR_CHURN_CONNS_PER_SLOT * (uint64_t)live_peak &&
	       dr_handshake_share(opened, requests) >= DR_CHURN_HANDSHAKE_SHARE;
}
/* TIME_WAIT: 1000 sockets held by one process at the peak is a pile-up
 * worth acting on (a 60 s TIME_WAIT at only 17 connections/s); it is
 * critical when one destination's ports are half used or would run out
 * within 10 minutes at the current rate. */
#define DR_TW_PEAK_WARN		1000
#define DR_PORT_SHARE_WARN	0.25
#define DR_PORT_SHARE_CRIT	0.50
#define DR_PORT_EXHAUST_CRIT_S	600
#define DR_TW_SECONDS		60	/* Linux TCP_TIMEWAIT_LEN */
#define DR_TW_BUCKETS_WARN	0.50	/* of net.ipv4.tcp_max_tw_buckets */
/* fd leak: growing by at least 0.5 fd/s, 20 fds over the window, and one
 * site holding 10 fds older than the leak age; critical when the limit is
 * less than an hour away at that slope. */
#define DR_LEAK_SLOPE		0.5
#define DR_LEAK_MIN_GROWTH	20
#define DR_LEAK_MIN_OLD		10
/* The listings' span a leak is judged on at least: a runtime's start-up
 * (Node's ~0.6 s from 7 to 30 fds, listed every 0.3 s) fills half of a
 * shorter one. */
#define DR_LEAK_MIN_SPAN_S	2.0
#define DR_LEAK_CRIT_S		3600
/* fd limit: peak use at 80 % of RLIMIT_NOFILE warns, 95 % or any EMFILE /
 * ENFILE is critical. */
#define DR_FDLIM_WARN		0.80
#define DR_FDLIM_CRIT		0.95
/* connect failures / resets: at least 5 and 1 % of the attempts (closed
 * connections for resets); half of them failing is critical. */
#define DR_FAIL_MIN		5
#define DR_FAIL_SHARE		0.01
#define DR_FAIL_CRIT_SHARE	0.50
/* listen backlog: an accept queue seen at 80 % of its backlog; full
 * (>= backlog) with ListenOverflows rising in its namespace is critical. */
#define DR_BACKLOG_SHARE	0.80
/* ... or completed handshakes that ended in the accept queue before
 * accept() took them (clients that gave up waiting): 10 and 1 % of the
 * passive handshakes. */
#define DR_NEVER_ACCEPTED_MIN	10
#define DR_NEVER_ACCEPTED_SHARE	0.01
/* orphans: 64 live orphans of one process, or 10 that stayed orphaned
 * longer than 8 s (peers that never close), or the host at 50 % of
 * net.ipv4.tcp_max_orphans (critical). */
#define DR_ORPHAN_LIVE		64
#define DR_ORPHAN_LONG_MS	8192	/* a log2 bucket edge of the orphan histogram */
#define DR_ORPHAN_LONG_MIN	10
#define DR_ORPHAN_HOST_CRIT	0.50
/* agent cost: connscope's BPF programs' run time as a share of the CPU
 * time the traced processes used, always shown (a footer). It is a
 * finding only from 20 %: the counts are exact whatever the cost, but a
 * workload slowed by a fifth reads its rates and times (how soon ports
 * run out, how fast accept() drains, an fd slope) a fifth off, enough to
 * move a verdict; below, it moves none (DESIGN.md budgets 3 %). */
#define DR_COST_DISTORT		0.20
/* BPF run time is host-wide (each program runs for every matching event on
 * the host and returns early for the others): an upper bound of the cost
 * on the targets, meaningful only once they used a second of CPU. */
#define DR_COST_MIN_CPU_S	1.0

/* The BPF run time's share of the traced processes' CPU (rates compared:
 * the BPF time is measured in some intervals, --cost-every), or -1 when
 * there is too little to say (not measured, under DR_COST_MIN_CPU_S). */
double dr_cost_share(const struct agent_cost *c);

/* ---- API ---------------------------------------------------------------- */

/* Runs every rule over f; out sorted: agent_cost first, then by severity
 * (worst first), rule order, pid and endpoint. Returns how many. */
size_t doctor_rules(const struct dr_facts *f, struct finding *out, size_t max);

/* The one-sentence healthy verdict with the key numbers (no findings). */
int doctor_healthy_text(const struct dr_facts *f, char *buf, size_t len);

/* Books -> facts (render/doctor_facts.c). run is struct run_info (run_info.h); the
 * caller frees with doctor_facts_free. */
struct agg;
struct run_info;
int doctor_facts_build(struct dr_facts *f, const struct agg *a, const struct run_info *run);
void doctor_facts_free(struct dr_facts *f);

/* Facts + rules in one: what the renderers call. */
size_t doctor_findings(const struct agg *a, const struct run_info *run, struct finding *out,
		       size_t max, char *healthy, size_t healthy_len);

/* Evidence helper for the rules. */
void dr_ev(struct finding *f, const char *name, double value, const char *unit,
	   const char *source);

#endif
