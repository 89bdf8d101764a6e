// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Which tasks does this kernel run no BPF program in? A tp_btf program on
 * sched_switch counts, per task, its switches out (the program runs in
 * that task's own context) and in (it runs in the task before it). A task
 * switched in again and again but never seen switched out is one in whose
 * context the kernel runs no tracing program: not its own events, not a
 * softirq that lands on it (tasks.sh; issue 22, item 2). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct seen {
	__u64 out, in;
};

/* pid (thread id) -> its switches */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct seen);
} tasks SEC(".maps");

static __always_inline struct seen *of(__u32 pid)
{
	struct seen zero = {}, *s = bpf_map_lookup_elem(&tasks, &pid);

	if (s)
		return s;
	bpf_map_update_elem(&tasks, &pid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&tasks, &pid);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct seen *s = of(prev->pid);

	if (s)
		__sync_fetch_and_add(&s->out, 1);
	s = of(next->pid);
	if (s)
		__sync_fetch_and_add(&s->in, 1);
	return 0;
}
