/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Loading and attaching the fdtrack BPF unit. Its ring buffers join the
 * caller's ring_buffer manager, so one poll loop serves every unit. */
#ifndef CONNSCOPE_FDTRACER_H
#define CONNSCOPE_FDTRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <bpf/libbpf.h>
#include "fdtrack.h"

struct fdtrack_bpf;

struct fd_tracer {
	struct fdtrack_bpf *skel;
	int attached;		/* programs attached */
	int failed;		/* programs whose tracepoint is missing here */
	char failed_names[256];	/* their names, comma-separated (cut) */
	struct bpf_link **links;
	int nlinks;
};

/* *rb: the ring_buffer manager to join; created here when NULL (the
 * caller frees it). targets_fd: a target map to share (-1: its own).
 * Returns 0 or a negative errno after printing why. */
int fd_tracer_open(struct fd_tracer *t, struct ring_buffer **rb, ring_buffer_sample_fn on_event,
		   ring_buffer_sample_fn on_snap, void *ctx, bool all, int targets_fd);
int fd_tracer_add_target(struct fd_tracer *t, pid_t pid);
int fd_tracer_stats(struct fd_tracer *t, uint64_t out[FD_STAT_MAX]);
/* The frame-pointer user stack stack_id: number of frames (0: none). */
int fd_tracer_stack(struct fd_tracer *t, int stack_id, uint64_t *ips, int max);
/* Doctor mode: count fd-making syscalls failing with EMFILE/ENFILE. */
void fd_tracer_count_errors(struct fd_tracer *t);
/* Those counts of pid (0 and 0 when none). */
int fd_tracer_errors(struct fd_tracer *t, pid_t pid, uint64_t *emfile, uint64_t *enfile);
void fd_tracer_close(struct fd_tracer *t);

#endif
