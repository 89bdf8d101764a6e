/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Who is traced, as processes come and go: children of targets
 * (--children), processes by name (--comm) or cgroup (--cgroup) joining,
 * targets leaving at exit. Included by tcpstate.bpf.c after its maps and
 * helpers. */
#ifndef CONNSCOPE_TCPSTATE_TARGETS_BPF_H
#define CONNSCOPE_TCPSTATE_TARGETS_BPF_H

/* A new process (not a thread): a child of a target with --children; one
 * of that name (--comm) or in that cgroup (--cgroup). The child is in its
 * parent's cgroup, and current is the parent. */
SEC("?tp_btf/sched_process_fork")
int BPF_PROG(handle_fork_btf, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = agent_task_tgid(parent), ctgid = agent_task_tgid(child);
	__u8 one = 1;

	if (ptgid == ctgid)
		return 0;
	if (follow_children && bpf_map_lookup_elem(&targets, &ptgid)) {
		if (!bpf_map_update_elem(&targets, &ctgid, &one, BPF_NOEXIST)) {
			stat_inc(CS_STAT_FORKS);
			child_forked(child, ptgid);
		}
		return 0;
	}
	if ((filter_comm && comm_is_target(child->comm)) ||
	    (filter_cgroup && bpf_current_task_under_cgroup(&target_cgroup, 0) == 1))
		target_join(child, NULL, ptgid);
	return 0;
}

/* exec gives a process its new name (--comm), in its own context. */
SEC("?tp_btf/sched_process_exec")
int BPF_PROG(handle_exec_btf, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if ((filter_comm && comm_is_target(BPF_CORE_READ(p, group_leader)->comm)) ||
	    (filter_cgroup && bpf_current_task_under_cgroup(&target_cgroup, 0) == 1))
		target_join(p, NULL, agent_task_tgid(BPF_CORE_READ(p, real_parent)));
	return 0;
}

/* prctl(PR_SET_NAME) and the like: a process's name is its leader's. */
SEC("?tp_btf/task_rename")
int BPF_PROG(handle_rename_btf, struct task_struct *task, const char *comm)
{
	if (BPF_CORE_READ(task, pid) == BPF_CORE_READ(task, tgid) && comm_is_target(comm))
		target_join(task, comm, agent_task_tgid(BPF_CORE_READ(task, real_parent)));
	return 0;
}

/* A target's last thread exits: it leaves the filter, so the map never
 * fills with dead pids and a reused pid is not traced by mistake. */
SEC("?tp_btf/sched_process_exit")
int BPF_PROG(handle_exit_btf, struct task_struct *p)
{
	__u32 tgid;

	/* do_exit() counts the thread out of signal->live first: 0 is the
	 * last one (group_dead, which 6.1's tracepoint does not pass). */
	if (BPF_CORE_READ(p, signal, live.counter))
		return 0;
	tgid = agent_task_tgid(p);
	if (!bpf_map_delete_elem(&targets, &tgid))
		stat_inc(CS_STAT_TARGETS_GONE);
	return 0;
}

#endif
