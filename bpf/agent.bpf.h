/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What every tracing unit has: counters of its own (what it saw, what it
 * lost) and a filter on the traced processes. One definition here, so the
 * units cannot drift apart; user space shares the tcpstate unit's target
 * map with the others (bpf_map__reuse_fd), which needs the same shape. */
#ifndef CONNSCOPE_AGENT_BPF_H
#define CONNSCOPE_AGENT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* Traced processes: tgid -> 1, filled by user space after the load. */
#define AGENT_MAX_TARGETS 4096
#define AGENT_TARGETS_MAP(name)					\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__uint(max_entries, AGENT_MAX_TARGETS);		\
		__type(key, __u32);					\
		__type(value, __u8);					\
	} name SEC(".maps")

/* A unit's counters: per CPU, summed by user space (bpf_percpu_sum). */
#define AGENT_STATS_MAP(name, n)					\
	struct {							\
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);		\
		__uint(max_entries, (n));				\
		__type(key, __u32);					\
		__type(value, __u64);					\
	} name SEC(".maps")

static __always_inline void agent_stat_inc(void *stats, __u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(stats, &idx);

	if (v)
		(*v)++;
}

/* filter false: every process is traced (--all). */
static __always_inline bool agent_traced(void *targets, bool filter, __u32 tgid)
{
	return !filter || bpf_map_lookup_elem(targets, &tgid);
}

static __always_inline __u32 agent_current_tgid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

#endif
