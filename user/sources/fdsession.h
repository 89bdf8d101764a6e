/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* fd tracking for a set of processes, shared by `fdleak` and `attach`:
 * the fdtrack programs, the fd books, a /proc listing per interval, and at
 * the end the leak suspects resolved to code sites. */
#ifndef CONNSCOPE_FDSESSION_H
#define CONNSCOPE_FDSESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <bpf/libbpf.h>
#include "fd_books.h"
#include "fd_report.h"
#include "fd_tracer.h"
#include "fdstates.h"
#include "snapshot.h"
#include "symbolize.h"

struct fd_session {
	struct fd_books books;
	struct fd_tracer ft;
	/* The fd rings alone: a listing drains them and nothing else, so it
	 * never applies another source's events as a side effect. */
	struct ring_buffer *rb;
	struct fdleak_proc *procs;	/* one per traced process, in -p order */
	struct symbolizer **syms;	/* per process; NULL where maps could not be read */
	size_t nprocs;
	double leak_age_s;
	int top;			/* suspect sites per process */
	uint32_t *execs_done;		/* per process: execs whose sites are resolved */
	/* Sites resolved before an exec replaced the image their addresses
	 * belong to: struct fd_site_key -> struct site_frames. */
	struct hmap resolved;
	bool open;
	uint64_t list_failed;		/* /proc/PID/fd listings that failed (not: gone) */
	/* TCP states of the listed sockets (fdstates.h), from a dump that
	 * began after the listings: a snapshot handed in
	 * (fd_session_tcp_states) or dumped here after each tick's. */
	struct fd_tcp_states tcp;
	/* Set by a caller that hands its snapshot in after each tick: the
	 * tick then dumps nothing itself. */
	bool tcp_from_snapshot;
	/* Optional: the caller's other rings, drained between processes and
	 * every FDINV_PROGRESS_EVERY fds of a listing, so a listing of 100k
	 * fds never stalls them (attach: the TCP ring). */
	void (*drain)(void *ctx);
	void *drain_ctx;
	uint64_t *listed_ns;		/* per process: when its last listing began,
					 * 0 when it failed */
};

/* With sites: loads and attaches the fd programs with a ring manager of
 * their own (s->rb: the run loop polls it beside the others) and adds the
 * targets; without: no BPF at all (s->rb stays NULL), the books mirror
 * the /proc listings. Then the first listing (the fds held at start).
 * comms may be NULL. 0 or -errno after printing why. */
int fd_session_open(struct fd_session *s, const pid_t *pids,
		    const char (*comms)[16], size_t n, uint64_t t0_ns, uint64_t bucket_ns,
		    double leak_age_s, int top, int targets_fd, bool sites);

/* A process that joined the targets during the run (a child, --comm,
 * --cgroup): its fds from now on. 0 or -errno. */
int fd_session_add(struct fd_session *s, pid_t pid, const char *comm);

/* One /proc listing per live process into the books (the ring is drained
 * after each listing); final: the last one of the run. Then their TCP
 * states from a dump of each namespace, unless tcp_from_snapshot. */
void fd_session_tick(struct fd_session *s, bool final);

/* The TCP states of the last listings from a sock_diag snapshot taken
 * after them (attach's reconcile; NULL: none), each namespace it did not
 * read dumped here. A socket listed and absent from the dump was in no
 * hash (TCP_CLOSE); one listed after the dump began has no state told. */
void fd_session_tcp_states(struct fd_session *s, const struct tcp_snapshot *snap);

/* The socket inodes of pid's last listing, put in m (snapshot.h's
 * owners_of, ctx a struct fd_session): 0, or -EAGAIN when pid is not
 * listed here, its last listing failed or began before since_ns. */
int fd_session_owners(void *ctx, pid_t pid, uint64_t since_ns, struct inode_map *m);

/* Marks pid exited (its books stop; its report stays). */
void fd_session_exited(struct fd_session *s, pid_t pid);

/* Slope, time to the limit and the suspects; with resolve_sites also the
 * code sites (DWARF unwinding and symbols: the end of the run only). */
void fd_session_analyze(struct fd_session *s, bool resolve_sites);

/* The resolved report part of pid, or NULL when pid is not traced. */
const struct fdleak_proc *fd_session_proc(const struct fd_session *s, pid_t pid);

/* What the renderers take: every process's resolved fd part (s may be NULL). */
struct fd_report fd_session_report(const struct fd_session *s);

/* Agent facts for the report (programs, events, losses). */
void fd_session_run_facts(struct fd_session *s, struct fdleak_run *run);

void fd_session_close(struct fd_session *s);

#endif
