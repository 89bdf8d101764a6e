/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What every tracing unit has: counters of its own (what it saw, what it
 * lost) and a filter on the traced processes. One definition here, so the
 * units cannot drift apart; user space shares the tcpstate unit's target
 * map with the others (bpf_map__reuse_fd), which needs the same shape. */
#ifndef CONNSCOPE_AGENT_BPF_H
#define CONNSCOPE_AGENT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

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

/* An atomic add, though the counter is this CPU's own: one CPU runs our
 * programs nested (a softirq's state change or packet on top of a task's
 * send, read or egress run: different programs, so the kernel's recursion
 * guard does not stop it), and a plain load-add-store interrupted between
 * its load and store would lose the inner run's count, a loss counter
 * among them ("0 lost" where one was). */
static __always_inline void agent_stat_inc(void *stats, __u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(stats, &idx);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* A per-CPU scratch slot held by its busy count: an atomic add, then a
 * look. A run that sees another's add beside its own backs off (two may
 * both), and one that holds the slot keeps its add until agent_slot_put,
 * so no two runs ever use a slot at once, nested on one CPU or preempted
 * there. true: held. */
static __always_inline bool agent_slot_hold(__u32 *busy)
{
	__sync_fetch_and_add(busy, 1);
	if (*(volatile __u32 *)busy == 1)
		return true;
	__sync_fetch_and_add(busy, -1);
	return false;
}

static __always_inline void agent_slot_put(__u32 *busy)
{
	__sync_fetch_and_add(busy, -1);
}

/* filter false: every process is traced (--all). */
static __always_inline bool agent_traced(void *targets, bool filter, __u32 tgid)
{
	return !filter || bpf_map_lookup_elem(targets, &tgid);
}

/* The pid namespace whose numbers the agent's /proc shows, by inode (user
 * space sets it between open and load). 0: the host's, where a pid is the
 * kernel's own (bpf_get_current_pid_tgid), as fast as before. Else every
 * pid this side hands over or looks up in a map that user space fills is
 * the one that namespace numbers the process by, and 0 for a process
 * outside it (the agent cannot see it; user space says so). Read from the
 * task's struct pid, which holds its number in each namespace from the
 * host's down (numbers[level]): that works for any task pointer (a fork's
 * child, an exiting task) on every kernel, where
 * bpf_get_ns_current_pid_tgid() answers only for current, and only when
 * current lives in exactly that namespace (not in one nested below it). */
const volatile __u32 agent_pidns_ino = 0;
/* Namespace levels walked below the host's: containers nest 1 or 2 deep;
 * the kernel allows 32. */
#define AGENT_PIDNS_MAX_LEVEL 8

/* Inline, as every helper here (a subprogram call made 6.1 refuse the
 * tp_btf programs), but a loop not unrolled: unrolled at every pid read it
 * made the units' objects up to 3x larger for a path the verifier drops
 * unseen in the host's namespace. */
static __always_inline __u32 agent_pid_nr(struct pid *pid)
{
	unsigned int level = BPF_CORE_READ(pid, level);
	__u64 base = (__u64)pid + bpf_core_field_offset(struct pid, numbers);
	struct upid up;

#pragma clang loop unroll(disable)
	for (int i = 1; i <= AGENT_PIDNS_MAX_LEVEL; i++) {
		if (i > level)
			break;
		if (bpf_probe_read_kernel(&up, sizeof(up),
					  (void *)(base + i * sizeof(struct upid))))
			break;
		if (BPF_CORE_READ(up.ns, ns.inum) == agent_pidns_ino)
			return up.nr;
	}
	return 0;
}

/* A task's process (leader: its thread group's) or thread number there. */
static __always_inline __u32 agent_task_nr(struct task_struct *task, bool leader)
{
	struct pid *pid;

	if (leader)
		pid = BPF_CORE_READ(task, group_leader, thread_pid);
	else
		pid = BPF_CORE_READ(task, thread_pid);
	return agent_pid_nr(pid);
}

/* A task's process (thread group) and thread, as the agent's /proc. */
static __always_inline __u32 agent_task_tgid(struct task_struct *task)
{
	if (!agent_pidns_ino)
		return BPF_CORE_READ(task, tgid);
	return agent_task_nr(task, true);
}

static __always_inline __u32 agent_task_tid(struct task_struct *task)
{
	if (!agent_pidns_ino)
		return BPF_CORE_READ(task, pid);
	return agent_task_nr(task, false);
}

static __always_inline __u32 agent_current_nr(bool leader)
{
	return agent_task_nr((struct task_struct *)bpf_get_current_task(), leader);
}

static __always_inline __u32 agent_current_tgid(void)
{
	if (!agent_pidns_ino)
		return bpf_get_current_pid_tgid() >> 32;
	return agent_current_nr(true);
}

/* tgid << 32 | tid, as bpf_get_current_pid_tgid() lays them out. */
static __always_inline __u64 agent_current_pid_tgid(void)
{
	if (!agent_pidns_ino)
		return bpf_get_current_pid_tgid();
	return (__u64)agent_current_nr(true) << 32 | agent_current_nr(false);
}

#endif
