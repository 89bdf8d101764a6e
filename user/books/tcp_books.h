/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Per-process books built from tcpstate events and reconciled against the
 * kernel's own view (sock_diag + /proc). Pure state: no kernel access, so
 * it is driven by recorded events in the unit tests. */
#ifndef CONNSCOPE_AGGREGATE_H
#define CONNSCOPE_AGGREGATE_H

#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include "hashmap.h"
#include "tcp_state_names.h"
#include "tcpstate.h"
#include "kernel_view.h"
#include "heatmap.h"
#include "inode_owners.h"
#include "tcp_books_types.h"
#include "endpoint.h"

void agg_init(struct agg *a, uint64_t t0_ns);
/* Every process's books and the process table (agg_free's part). */
void agg_procs_free(struct agg *a);
void agg_free(struct agg *a);

/* Books are per process, a (pid, start time) pair: a pid reused by a new
 * process gets new books and the old ones stay (exited). Keyed by the
 * order they were made in, so books made before their start time was
 * known keep their key. */
struct proc_key {
	pid_t pid;
	uint32_t zero;
	uint64_t seq;
};

/* The books of pid's latest process, created when absent (NULL: out of
 * memory). */
struct proc_books *agg_proc(struct agg *a, pid_t pid);
struct proc_books *agg_find_proc(const struct agg *a, pid_t pid);
/* agg_find_proc, its last answer kept (a TIME_WAIT's holder: a churn's
 * every TIME_WAIT is one process's). */
struct proc_books *agg_holder(struct agg *a, pid_t pid);
/* When the connection at sk was first seen orphaned (0: it is not). */
uint64_t agg_orphan_since(const struct agg *a, uint64_t sk);
/* n connections of tgid whose end the kernel ran no program for (an
 * skb_count_fn, ctx the agg; flags CS_SKB_*): in its ends_unrun, and in
 * its opened (or accepted when passive) unless told (CS_SKB_TOLD: counted
 * there from their birth records already; a->ends_unrun_born). */
void agg_ends_unrun(void *ctx, uint32_t tgid, uint32_t flags, uint64_t n);
/* Processes whose executable is unknown (gone before it was read) and
 * whose parent of the same name is known: theirs is the parent's. */
void agg_inherit_exe(struct agg *a);
/* The books of the process (pid, start_ns) (start_ns 0: pid's latest),
 * created when absent; a later start than the latest's means the pid was
 * reused: the earlier process is marked exited. */
struct proc_books *agg_proc_gen(struct agg *a, pid_t pid, uint64_t start_ns);
/* Deletes one process's books (its key in a->procs): a daemon forgets
 * processes that are gone, or its memory would grow with every pid it
 * ever saw. Pointers to any books may move (hmap_del). Events that still
 * come for the pid make new books. */
void agg_drop_proc(struct agg *a, const struct proc_key *key);

/* Parents (parents.c). A child forked by a target (CS_EV_FORK) is noted
 * until its books are made (most children of a server never touch a
 * socket: no books for them). */
#define AGG_MAX_PARENT_NOTES 65536
struct parent_note {
	uint64_t start_ns;
	uint64_t gone_ns;	/* ktime a prune found the child gone; 0: not yet */
	pid_t ptgid;
	uint32_t pad;
};
void agg_parent_note(struct agg *a, pid_t pid, uint64_t start_ns, pid_t ptgid);
/* The note for p's process, if any, into p->ptgid (and the note goes). */
void agg_parent_take(struct agg *a, struct proc_books *p);
/* Drops the notes of children gone without books; gone() says (the
 * caller reads /proc: the books never do), now_ns is ktime. */
void agg_parents_prune(struct agg *a, bool (*gone)(pid_t pid), uint64_t now_ns);

/* A socket the process held when we attached (from sock_diag + /proc). */
void agg_seed(struct agg *a, pid_t pid, const struct sd_sock *s);
/* A listener of the same snapshot, whoever holds it (traced or not): its
 * address noted, so that a connection held at its address and port is
 * seeded as accepted there. Call it for every listener before agg_seed's
 * connections; a socket of another state is passed over. */
void agg_seed_listener(struct agg *a, const struct sd_sock *s);

/* Apply one event from the ring buffer. */
void agg_event(struct agg *a, const struct cs_event *e);

/* Close the current interval of every process at now_ns (ktime). */
void agg_tick(struct agg *a, uint64_t now_ns);
/* Seconds from the first to the last connection transition of the run,
 * never less than min_s nor more than max_s; max_s when none was seen. */
double agg_load_s(const struct agg *a, double min_s, double max_s);
/* The run's clock as it really went: it starts at t0_ns, once every
 * program is loaded (loading takes seconds on a busy host: what came in
 * meanwhile counts in the first interval, not in columns of its own before
 * tracing began), and, end_ns > 0, ends there (a duration's deadline: the
 * last readings after it count in the last interval, not in a column of a
 * few ms). The heatmaps are laid out anew over [t0_ns, end_ns). */
void agg_fit_clock(struct agg *a, uint64_t t0_ns, uint64_t end_ns);

/* One kernel snapshot: every TCP socket, and inode -> pid of the processes
 * in the books. Fills each process's truth, moves TIME_WAIT tuples that
 * the kernel no longer has out of the books, counts the unattributed and
 * counts book/kernel differences. */
struct inode_map;
void agg_reconcile(struct agg *a, const struct sd_sock *socks, size_t n,
		   const struct inode_map *owners);

/* A TIME_WAIT's exact look (agg.tw_look, sock_diag without NLM_F_DUMP):
 * ~1.5-1.8 us of CPU here, mostly the kernel's (20,000 looks finding
 * none in a row, 5 runs: 1.38-1.53 us each; in attach's last reconcile,
 * the books' share with it, 1.63-1.75). More looks than the census's
 * time at this cost each: a second census instead. Without the
 * census's time, AGG_TW_LOOK_FEW at most. */
#define AGG_TW_LOOK_NS 1750ULL
#define AGG_TW_LOOK_FEW 64
/* Whether got, what the exact look at t found, is a TIME_WAIT at that very
 * tuple: a tw socket (timer 3: TIME_WAIT, or an orphaned FIN_WAIT2 the
 * kernel parks as one), no file, t's family, addresses and ports (got's
 * namespace is t's: the look was made there). Not the listener the
 * kernel's look falls back to where the tuple holds no connection (its
 * peer port 0), nor a connection that took the tuple over. */
bool agg_tw_look_is_tw(const struct cs_tuple *t, const struct sd_sock *got);

/* The namespaces the next reconcile's dump read (at most
 * AGG_MAX_DUMPED_NS; more: all are taken as read). */
void agg_set_dumped(struct agg *a, const uint32_t *netns, size_t n);

/* TCP_TIMEWAIT_LEN (60 s) and a margin: a TIME_WAIT of a namespace no
 * dump reads, still in the books after that, missed its timer's end (a
 * lost event) and is judged by the dumps again. */
#define AGG_TW_TIMER_BOUND_NS (65ULL * 1000000000ULL)

/* TCP_TIMEWAIT_LEN (include/net/tcp.h: 60 * HZ): the length of every
 * TIME_WAIT on Linux. tcp_fin_timeout does not shorten it (it is the
 * orphaned FIN_WAIT2's time, tcp_fin_time()), and the timer fires no
 * earlier (timer wheel: late by up to an eighth, never early). */
#define AGG_TW_LEN_NS (60ULL * 1000000000ULL)
/* The timer runs out in whole jiffies and a dump reads idiag_expires in
 * ms after its start: a TIME_WAIT gone this close to its deadline ran out. */
#define AGG_TW_DEADLINE_SLACK_NS (10ULL * 1000000ULL)

/* A TIME_WAIT tuple leaves the books; how it ended is counted by the caller. */
void agg_tw_forget(struct agg *a, const struct cs_tuple *t);
/* The TIME_WAIT entry at t, or NULL; none looked for where the table
 * holds none at t's local port (agg.tw_ports). */
struct tw_entry *agg_tw_find(const struct agg *a, const struct cs_tuple *t);
/* t's entry made (fresh) or found in the TIME_WAIT table, its port
 * counted; NULL only when memory runs out. */
struct tw_entry *agg_tw_upsert(struct agg *a, const struct cs_tuple *t, bool *fresh);
/* A TIME_WAIT known to have ended: counted to its holder (ended early, or
 * end unseen when early is false), then forgotten. */
void agg_tw_ended(struct agg *a, const struct cs_tuple *t, bool early);
/* Whether tw's end comes from its timer's events: the tw hooks are on and
 * its close was matched to a timer (a cancel seen counts, though a newer
 * TIME_WAIT at its address has taken the pointer since). Otherwise the
 * dumps judge it by its age (the census). */
static inline bool agg_tw_timed(const struct agg *a, const struct tw_entry *tw)
{
	return !a->tw_census && (tw->tw || tw->cancelled);
}
/* A TIME_WAIT known gone by when_ns (a dump that lacked it began then, or
 * a new connection took its tuple). Timed (agg_tw_timed): ended early when
 * early (a takeover) or its timer was cancelled, else end unseen. Else by
 * its age at when_ns: expired at its deadline or later, ended early
 * before. */
void agg_tw_gone(struct agg *a, const struct cs_tuple *t, uint64_t when_ns, bool early);
/* agg_tw_gone of t's entry tw, found already. */
void agg_tw_gone_at(struct agg *a, const struct cs_tuple *t, struct tw_entry *tw,
		    uint64_t when_ns, bool early);
/* A TIME_WAIT in doubt (maybe) shown made: counted entered now. */
void agg_tw_confirm(struct agg *a, struct tw_entry *tw);

/* TIME_WAIT sockets the books charge to pid (tuples still alive). */
uint32_t agg_tw_count(const struct agg *a, pid_t pid);
/* The same for every pid at once, in one pass over the table: by_pid maps
 * pid_t -> uint32_t (initialised here; hmap_free it). A pid absent holds
 * none. -1 when memory ran out (by_pid then empty): ask agg_tw_count. */
int agg_tw_counts(const struct agg *a, struct hmap *by_pid);

/* Traffic of a connection still open at the end (read from the kernel):
 * its requests count too. */
void agg_add_live_io(struct agg *a, uint64_t sk, const struct cs_conn_io *io);

/* A listener seen at its bound address (namespace, family, port). */
struct listen_addr_key {
	uint32_t netns;
	uint16_t family, port;
	uint8_t addr[16];
};

#endif
