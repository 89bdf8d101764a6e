/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Opening, configuring, loading and attaching the tcpstate BPF unit, with
 * the run-time choice between tp_btf and the classic tracepoint. */
#ifndef CONNSCOPE_LOADER_H
#define CONNSCOPE_LOADER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <bpf/libbpf.h>
#include "jiffies_hz.h"
#include "tcpstate.h"

struct tracer_opts {
	bool all;		/* no tgid filter: every process */
	bool follow_children;
	const char *btf_path;	/* --btf FILE, NULL: the kernel's own */
	uint32_t ringbuf_bytes;	/* power of two, >= page size */
	uint32_t max_sockets;	/* owner map entries */
	uint32_t max_time_wait;	/* traced TIME_WAIT map entries; 0: the agent's
				 * namespace's net.ipv4.tcp_max_tw_buckets */
	bool verbose;		/* libbpf's own messages */
	bool classic_tp;	/* skip tp_btf: the classic tracepoint only */
	bool quic_kernel;	/* also IPPROTO_QUIC sockets (CS_F_QUIC events) */
	bool tw_timers;		/* --tw-timers: TIME_WAIT ends from the timer
				 * tracepoints (every kernel timer of the host)
				 * where the kernel has no TIME_WAIT hook */
	bool no_sk_storage;	/* --per-transition: owners by address and a record a
				 * transition even where socket storage works */
	/* Targets beyond a pid list (CS_EV_PROC when one joins). */
	const char (*comms)[16];	/* --comm NAME..., ncomms of them */
	size_t ncomms;
	const char *cgroup_path;	/* --cgroup PATH, NULL: none ... */
	int cgroup_fd;			/* ... and that directory, open */
	/* The processes traced from the start: their listeners are put on
	 * the sockets before the programs attach, so no child a listener
	 * makes meanwhile is missed. */
	const pid_t *pids;
	size_t npids;
};

struct tcpstate_bpf;

#define TRACER_HELD_NS 16

/* The accept() exit tracepoints, as run.accept_hook names them. */
#define TRACER_ACCEPT_EXITS "tracepoint/syscalls/sys_exit_accept, sys_exit_accept4"

struct tracer {
	struct tcpstate_bpf *skel;
	/* The accept() exits, a second load of the unit on the first one's
	 * maps, where fexit on inet_csk_accept loaded but did not attach
	 * (tracer_attach); NULL otherwise. */
	struct tcpstate_bpf *accept_skel;
	struct ring_buffer *rb;	/* NULL until tracer_map_ring() */
	ring_buffer_sample_fn cb;	/* what the events ring is read into */
	void *cb_ctx;
	const char *method;	/* the set_state hook in use */
	const char *io_method;	/* where sends and reads are counted */
	const char *accept_method;	/* who took a listener's child; NULL: socket storage */
	const char *tw_method;	/* how TIME_WAIT entry and end are seen */
	bool tw_events;		/* TIME_WAIT ends come as events (else: the census) */
	bool follow_children;
	bool sk_mode;		/* socket-storage mode (tcpstate_sk.bpf.h) */
	struct bpf_link *birth_link;	/* sk_mode: the birth pass (birth_pass) */
	uint32_t ring_bytes;		/* the events ring's size */
	uint64_t seeds_failed;	/* seeds / seed ports / listeners not stored (map full) */
	uint64_t ends_unrun;	/* set by the command from its sk_books: tracer_stats
				 * reports it as CS_STAT_ENDS_UNRUN */
	uint64_t targets_removed;	/* gone targets taken out by user space:
					 * CS_STAT_TARGETS_GONE with the kernel's */
	/* sk_mode: namespaces passed, held open so a pass can still visit one
	 * after its targets are gone, while its storages' books do not
	 * balance (sk_books.h): a connection the kernel ended with no program
	 * run is counted only when a pass has looked there. */
	struct tracer_ns {
		uint32_t ino;
		int fd;
	} held_ns[TRACER_HELD_NS];
	size_t nheld_ns;
	/* The census walk (tcp_walk.c): the kernel's HZ once learnt from two
	 * (jiffies, clock) pairs (0: not yet, the census dumps), the first
	 * pair, and whether the walk may be used at all. */
	uint32_t walk_hz;
	struct jiffies_pair walk_hz0;	/* the first pair; .ns 0: none yet */
	bool walk_off;
};

/* Checks that need no BPF: privileges, BTF, tracefs. Prints one message
 * naming the problem and the fix; returns 0 or a nonzero exit status. */
int tracer_preflight(const struct tracer_opts *o);

/* Open and load, and attach the hooks that follow the target set (fork,
 * exec, rename, exit, where the options need them); events go to
 * cb(ctx, data, size) once attached
 * (tracer_attach) and tracer_map_ring() has mapped the events ring (the
 * kernel keeps them until then). Returns 0 or a negative errno after
 * printing why. */
int tracer_open(struct tracer *t, const struct tracer_opts *o, ring_buffer_sample_fn cb,
		void *ctx);
/* The state programs on: after every other unit's load, right before the
 * start-up snapshot. From here to the seeds it writes, a connection held
 * since before is not yet adopted and its traffic goes uncounted, while a
 * new one's is counted: loading the QUIC unit in that window (~0.9-1.1
 * s) read 1.68-1.76 requests a connection for the demo's 2.0 when attached
 * mid-run. The targets' listeners get their owner first, and the accept
 * hook goes on before the state programs: fexit on inet_csk_accept where
 * it loaded, or, where the kernel refuses its attach, the accept() exits
 * instead (said once on stderr; accept_method names what runs). 0 or
 * -errno after printing why (the tracer is closed then). */
int tracer_attach(struct tracer *t, const struct tracer_opts *o);
/* The accept hook's part of tracer_attach (tcp_tracer_accept.c): nothing
 * where fexit on inet_csk_accept was not loaded. 0 or -errno after
 * printing why. */
int tracer_attach_accept(struct tracer *t, const struct tracer_opts *o);
/* Maps the events ring into t->rb: after every other BPF object is
 * loaded. libbpf maps a ring's data twice (8 MiB ring, 16 MiB of RSS) and
 * parses the kernel's BTF at each object's load (~12 MiB of heap while
 * it lasts); one after the other, the agent's peak RSS holds only the
 * larger of the two (#23 item 7, docs/performance.md). 0 or -errno after
 * printing why. */
int tracer_map_ring(struct tracer *t);
int tracer_add_target(struct tracer *t, pid_t pid);
/* A target gone (its last thread exited): out of the kernel's filter,
 * which the other units share. 0 or -errno (-ENOENT: the kernel's exit
 * hook took it out already). */
int tracer_remove_target(struct tracer *t, pid_t pid);
/* --cgroup: the directory (an open fd) whose processes join from now on,
 * in place of the one given at open (a cgroup made again at its path).
 * 0 or -errno. */
int tracer_set_cgroup(struct tracer *t, int cgroup_fd);
/* Owner of a socket that predates the agent, matched by 4-tuple. */
int tracer_seed(struct tracer *t, const struct cs_tuple *tuple, const struct cs_owner *owner);
/* A listener no target holds, at local port port: a connection it accepts
 * and a target then serves (handed over a Unix socket) is adopted at the
 * target's first send, read or close (socket-storage mode; elsewhere a
 * no-op). The port stays marked for the run. */
void tracer_handoff_port(struct tracer *t, uint16_t port);
/* A network namespace the agent reads (its inode): an untraced listen()
 * there marks its port at once (handoff_netns); elsewhere it does not. */
void tracer_handoff_netns(struct tracer *t, uint32_t netns);
/* A listener that predates the agent: connections it takes before accept()
 * are charged to owner (as CLOSE->LISTEN does for a listener made while
 * traced). A listener already known there is kept. */
int tracer_seed_listener(struct tracer *t, const struct cs_tuple *tuple,
			 const struct cs_owner *owner);
/* The same on the listening socket itself (fd in process pid, reached with
 * pidfd_getfd()), so its children are told from an SO_REUSEPORT sibling's.
 * 0, or -errno when the socket cannot be reached (the key above serves). */
int tracer_seed_listener_sock(struct tracer *t, pid_t pid, int fd, const struct cs_owner *owner);
/* Socket-storage mode: the birth pass over the network namespace of
 * in_ns_of (0: ours). Every traced socket there established and still
 * alive whose birth the books have not had sends it now (a ring record
 * each). Run before each reconcile and at the end, so the books hold the
 * live connections when they meet the kernel's dump. 0 (nothing to do in
 * the other mode) or -errno. */
int tracer_birth_pass(struct tracer *t, pid_t in_ns_of);
/* Socket-storage mode: the storages' books (sk_books map), each key's made
 * and ended summed over CPUs, into *out (malloc'd, the caller frees).
 * How many, or -errno; 0 in the other mode. */
struct skb_line;
int tracer_sk_books(struct tracer *t, struct skb_line **out);
/* What the birth passes since the last call counted alive (sk_alive, in
 * each line's made), and the map emptied for the next. Same returns. */
int tracer_sk_alive_take(struct tracer *t, struct skb_line **out);
/* A key's books deleted (balanced, its owner gone): 0 or -errno. */
int tracer_sk_books_drop(struct tracer *t, const struct cs_skb_key *k);
/* Hold the namespace ino of pid (a pass just ran there) open; false when
 * it cannot be (full, or gone). */
bool tracer_hold_ns(struct tracer *t, uint32_t ino, pid_t pid);
/* The birth pass in held namespace i; 0 or -errno. */
int tracer_birth_pass_held(struct tracer *t, size_t i);
/* The census walk (tcp_walk.c): the birth pass over pid's namespace that
 * also gives every TCP socket there to cb, as a sock_diag dump would
 * (netns left 0 for the caller). -EAGAIN while the walk cannot stand in
 * for the dump (HZ not learnt yet, not socket-storage mode, or the walk
 * turned off): then nothing ran, the caller dumps and passes as before.
 * 0, -errno, or cb's nonzero value. */
struct sd_sock;
int tracer_walk(struct tracer *t, pid_t in_ns_of, int (*cb)(const struct sd_sock *, void *),
		void *ctx);
/* Let held namespace i go. */
void tracer_release_ns(struct tracer *t, size_t i);
/* Sum of the per-CPU counters (CS_STAT_*). */
int tracer_stats(struct tracer *t, uint64_t out[CS_STAT_MAX]);
/* Names of the unit's programs and whether each one runs (autoloaded and
 * attached); returns how many were filled (<= max). */
int tracer_programs(struct tracer *t, const char **names, bool *attached, int max);
/* The traffic so far of a live traced connection; -ENOENT when none. */
/* Socket-storage mode: the traffic so far of each traced socket pid holds
 * an fd of, fn(ctx, sk, io) for each. Needs pidfd_getfd (CAP_SYS_PTRACE).
 * How many, or -errno. */
typedef void (*tracer_io_fn)(void *ctx, uint64_t sk, const struct cs_conn_io *io);
int tracer_live_io(struct tracer *t, pid_t pid, tracer_io_fn fn, void *ctx);
int tracer_conn_io(struct tracer *t, uint64_t sk, struct cs_conn_io *io);
/* The fd of the tgid filter map, for units that share it; -1 when none. */
int tracer_targets_fd(struct tracer *t);
void tracer_close(struct tracer *t);

#endif
