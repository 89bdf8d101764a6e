/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Per-process fd books from fdtrack events: which fds are open, since
 * when, made by which code site; reconciled against /proc/PID/fd so that
 * missed events (io_uring, SCM_RIGHTS, exec's O_CLOEXEC) never leave
 * phantom fds. Pure state: driven by recorded events in the unit tests. */
#ifndef CONNSCOPE_FDBOOKS_H
#define CONNSCOPE_FDBOOKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "fdtrack.h"
#include "hashmap.h"
#include "heatmap.h"

#define FD_AGE_BUCKETS 24	/* log2 of seconds: <1 s, 1-2 s, ... */
#define FD_HIST 32		/* listings kept for fd_proc_mid_count */

struct fd_open {
	uint64_t site;		/* 0: held before we attached, or made unseen */
	uint64_t created_ns;	/* 0: unknown (held at start) */
	int32_t stack_id;
	uint8_t how;		/* FD_HOW_*, 0 unknown */
	uint8_t seen;		/* its creation was an event */
	/* Two-phase reconcile: /proc and the events race by a few ms, so a
	 * difference counts only if it is still there at the next listing. */
	uint8_t missing;	/* not in the last /proc listing */
	uint8_t provisional;	/* in /proc, no event yet */
	uint64_t ino;		/* listing-only books: the inode the fd named */
};

struct fd_site_key {
	uint64_t site;
	pid_t pid;
	uint32_t pad;
};

struct fd_site {
	uint64_t site;
	pid_t pid;
	uint8_t how;
	int32_t stack_id;
	uint64_t opened, closed;	/* fds this site made / that were closed since */
	uint32_t open_now;
	uint64_t first_ns, last_ns;
	/* The first fd's registers and user stack, for DWARF unwinding. */
	uint64_t regs[FD_NREGS];
	uint8_t *stack;
	uint32_t stack_len;
	bool has_snapshot;
};

struct fd_sample {
	uint64_t t_ns;
	uint32_t count;		/* /proc/PID/fd at that moment */
};

struct fd_proc {
	pid_t pid;
	struct hmap fds;		/* int32 fd -> struct fd_open */
	struct hmap recent_close;	/* int32 fd -> close time, since the last listing */
	uint64_t created, closed;	/* events */
	uint64_t by_how[FD_HOW_MAX];
	uint64_t phantom;		/* in the books, not in /proc: a close we missed */
	uint64_t unseen;		/* in /proc, not in the books: made without an event */
	uint32_t held_at_start;
	uint32_t execs;			/* exec() seen: older sites belong to the old image */
	uint64_t image;			/* the executable (fd_books_image), 0: not read */
	bool reconciled;
	/* Listing-only books (no fd events): fds that a listing showed and the
	 * one before it did not, and the reverse. An fd made and closed between
	 * two listings is in neither. */
	uint64_t appeared, disappeared, listings;
	uint64_t list_ns;		/* when the last /proc listing began */
	/* The fd count over time, as the running sums of a least-squares
	 * fit (x: s since the first listing, y: fds): constant memory and
	 * O(1) per listing however long the run, not an array walked each
	 * interval. */
	size_t nsamples;
	uint64_t first_sample_ns;
	uint32_t first_count, peak_count;	/* fds at the first listing, most at any */
	double sx, sy, sxx, sxy;
	/* Some listings over the whole run (every hist_stride-th; the stride
	 * doubles when full, so at most FD_HIST however long the run): where
	 * the count stood half way (fd_proc_mid_count). */
	struct fd_sample hist[FD_HIST];
	uint32_t nhist, hist_stride, hist_skip;
	uint64_t last_sample_ns;
	struct heatmap hm_type;		/* fds by type, per interval */
	struct heatmap hm_age;		/* open fds by age (log2 s), per interval */
	bool hm_ready;
};

struct fd_books {
	struct hmap procs;	/* pid_t -> struct fd_proc */
	struct hmap sites;	/* struct fd_site_key -> struct fd_site */
	uint64_t t0_ns, bucket_ns;
	uint64_t events, snapshots;
	/* A daemon (the exporter) writes no report: no heatmap columns,
	 * which would grow by one per process every interval. */
	bool no_heatmaps;
	/* No fd events: the books mirror the /proc listings (fd_books_listing),
	 * so there are counts, growth and ages but no creation sites. */
	bool listing_only;
};

void fd_books_init(struct fd_books *b, uint64_t t0_ns, uint64_t bucket_ns);
void fd_books_free(struct fd_books *b);
/* agg_fit_clock (tcp_books.h) for the fd books. */
void fd_books_fit_clock(struct fd_books *b, uint64_t t0_ns, uint64_t end_ns);
struct fd_proc *fd_books_proc(struct fd_books *b, pid_t pid);

void fd_books_event(struct fd_books *b, const struct fd_event *e);
void fd_books_snapshot(struct fd_books *b, const struct fd_site_snap *s);

/* One /proc/PID/fd listing: fds[i] with type names types[i] (for the type
 * heatmap; NULL to skip). The first one seeds the books (held at start). */
/* Call with the listing taken at list_ns and the ring drained after it,
 * so the books hold every event up to now. final: the end of the run, so
 * every difference counts at once instead of at the second listing. */
void fd_books_reconcile(struct fd_books *b, pid_t pid, const int32_t *fds, size_t n,
			const char *const *types, uint64_t list_ns, bool final);

/* Listing-only books: one /proc/PID/fd listing (fds[i] naming inode
 * inos[i], 0 when unknown) taken at list_ns. The first one is what pid
 * held at start; then an fd absent from the last listing has appeared (its
 * age counts from list_ns: it was made after the last listing), an fd gone
 * from it has disappeared, and an fd number naming another inode did both. */
void fd_books_listing(struct fd_books *b, pid_t pid, const int32_t *fds, const uint64_t *inos,
		      size_t n, const char *const *types, uint64_t list_ns);

/* Least-squares slope of the fd count over the samples, fds per second. */
/* The executable the process runs as its next listing is taken (an id of
 * /proc/PID/exe's file; 0: unknown, ignored). A change is an exec the
 * listings saw: the fd count's growth restarts at the new image, since
 * what a program held before its exec (`connscope run` lists COMMAND
 * while it waits to exec) says nothing of its leaks. */
void fd_books_image(struct fd_books *b, pid_t pid, uint64_t image);
double fd_proc_slope(const struct fd_proc *p);
/* The fd count half way between the first listing and the last (the
 * latest kept listing at or before that moment): a count that grew then
 * held (a program opening its fds as it starts) stands as high half way
 * as at the end; a leak's is still rising. */
uint32_t fd_proc_mid_count(const struct fd_proc *p);

/* Leak suspects: open fds made by a site more than leak_age_ns ago. */
struct fd_suspect {
	const struct fd_site *site;
	uint32_t old;		/* open and older than the leak age */
	double per_s;		/* opened-and-still-open per second of the window */
};

/* Fills out with pid's suspect sites, most old fds first; returns count. */
size_t fd_books_suspects(const struct fd_books *b, pid_t pid, uint64_t now_ns,
			 uint64_t leak_age_ns, struct fd_suspect *out, size_t max);

const char *fd_how_name(int how);

#endif
