/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Small helpers over libbpf shared by the BPF units' loaders. */
#ifndef CONNSCOPE_BPFUTIL_H
#define CONNSCOPE_BPFUTIL_H

#include <stdint.h>

/* out[k] = the sum over CPUs of key k of a per-CPU array of u64 counters,
 * for k < nkeys. Keys that cannot be read count 0. 0 or -errno. */
int bpf_percpu_sum(int map_fd, uint32_t nkeys, uint64_t *out);

struct bpf_link;

/* bpf_link__destroy() on links[0..n), NULL entries skipped, from a few
 * threads at once. A perf event link's detach (a classic tracepoint's, a
 * uprobe's) waits in the kernel for RCU grace periods: part of that under
 * event_mutex (perf_trace_event_unreg() ->
 * tracepoint_synchronize_unregister(), when no other perf event holds the
 * tracepoint), one detach at a time whatever the threads, and part
 * outside it, which detaches on several threads wait out together.
 * fdleak's 35 syscall tracepoints: 2.4-2.8 s one after another on this
 * VM's 6.18, 1.1-1.8 s so. Falls back to one after another where a thread
 * cannot be made. Every link is gone when it returns. */
void bpf_links_destroy(struct bpf_link **links, int n);

#endif
