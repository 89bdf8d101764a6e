// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Kernel features: the table of figures and the hooks they need, and the
 * decision from probe results. A kernel's BTF says which tracepoints it
 * has: every tracepoint has a btf_trace_NAME typedef there, so a tp_btf
 * program whose typedef is missing would fail the whole load. */
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include "kfeatures.h"

/* The tracepoints whose BTF typedefs a hook needs (NULL-terminated). */
static const char *const hook_tracepoints[KF_HOOK_MAX][4] = {
	[KF_HOOK_SET_STATE_BTF] = { "inet_sock_set_state" },
	[KF_HOOK_SOCK_LENGTH] = { "sock_send_length", "sock_recv_length" },
	[KF_HOOK_TW_TIMERS] = { "timer_start", "timer_cancel", "timer_expire_entry" },
	[KF_HOOK_FORK] = { "sched_process_fork" },
	[KF_HOOK_EXEC] = { "sched_process_exec" },
	[KF_HOOK_RENAME] = { "task_rename" },
	[KF_HOOK_EXIT] = { "sched_process_exit" },
	[KF_HOOK_SENDMSG_LOCKED] = { "tcp_sendmsg_locked" },
};

/* THE table: each figure, the hooks it needs, and what to tell the user.
 * A figure is on when all its hooks are there. */
static const struct {
	struct kf_figure_info info;
	enum kf_hook hooks[3];
	int nhooks;
} figures[KF_FIG_MAX] = {
	[KF_FIG_CONNECTION_IO] = {
		{ "connection_io",
		  "bytes, requests and turns per connection and endpoint; connections held "
		  "at start adopted at their first send",
		  "tracepoints sock:sock_send_length and sock:sock_recv_length (Linux 6.3)",
		  "linux-6.3" },
		{ KF_HOOK_SOCK_LENGTH }, 1 },
	[KF_FIG_TW_TIMERS] = {
		{ "time_wait_timers",
		  "--tw-timers: each TIME_WAIT end (expired or ended early) at its time, "
		  "from the tw timer; without it from the census each interval (sock_diag)",
		  "tp_btf timer:timer_start, timer_cancel, timer_expire_entry (Linux 5.5) and "
		  "tw_timer_handler in /proc/kallsyms",
		  "linux-5.5+kallsyms" },
		{ KF_HOOK_TW_TIMERS, KF_HOOK_SET_STATE_BTF }, 2 },
	[KF_FIG_CHILDREN] = {
		{ "children", "--children: processes forked by a target followed",
		  "tp_btf sched:sched_process_fork (Linux 5.5)", "linux-5.5" },
		{ KF_HOOK_FORK }, 1 },
	[KF_FIG_FD_EXEC] = {
		{ "fd_exec", "fds closed by exec (O_CLOEXEC) seen as it happens",
		  "tp_btf sched:sched_process_exec (Linux 5.5)", "linux-5.5" },
		{ KF_HOOK_EXEC }, 1 },
	[KF_FIG_TARGETS_JOIN] = {
		{ "targets_join",
		  "--comm/--cgroup: processes that fork, exec or rename into the target "
		  "during the run join it",
		  "tp_btf sched:sched_process_fork, sched:sched_process_exec and "
		  "task:task_rename (Linux 5.5)", "linux-5.5" },
		{ KF_HOOK_FORK, KF_HOOK_EXEC, KF_HOOK_RENAME }, 3 },
	[KF_FIG_TARGETS_EXIT] = {
		{ "targets_exit",
		  "targets leave the kernel filter when they exit, so a process that reuses "
		  "the pid is not traced",
		  "tp_btf sched:sched_process_exit (Linux 5.5)", "linux-5.5" },
		{ KF_HOOK_EXIT, KF_HOOK_SET_STATE_BTF }, 2 },
	[KF_FIG_FD_TRACKING] = {
		{ "fd_tracking", "fd tracking: fdleak and the fd part of attach",
		  "BPF helpers bpf_get_current_task_btf (Linux 5.11) and bpf_task_pt_regs "
		  "(Linux 5.15) in tracepoint programs", "linux-5.15" },
		{ KF_HOOK_TASK_HELPERS }, 1 },
	[KF_FIG_QUIC_WIRE] = {
		{ "quic_wire", "QUIC connections seen on the wire (UDP on the cgroup v2 root)",
		  "BPF cgroup_skb and cgroup_sock programs and sk_storage maps (Linux 5.9 "
		  "for cgroup/sock_release)", "linux-5.9" },
		{ KF_HOOK_CGROUP_SOCK }, 1 },
	[KF_FIG_QUIC_SEND_OWNER] = {
		{ "quic_send_owner",
		  "a UDP socket neither made during the run nor held at its start charged to "
		  "the process sending on it",
		  "BPF helpers bpf_get_current_pid_tgid, bpf_get_current_task and "
		  "bpf_get_current_comm in cgroup_skb programs (after Linux 6.12)",
		  "linux-after-6.12" },
		{ KF_HOOK_CGROUP_SOCK, KF_HOOK_SKB_CURRENT }, 2 },
};

static bool btf_has_tracepoint(const struct btf *btf, const char *tp)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
}

void kf_probe_btf(const struct btf *btf, struct kf_probe *p)
{
	for (int h = 0; h < KF_HOOK_MAX; h++) {
		if (!hook_tracepoints[h][0])
			continue;
		p->have[h] = true;
		for (int i = 0; i < 4 && hook_tracepoints[h][i]; i++)
			if (!btf_has_tracepoint(btf, hook_tracepoints[h][i]))
				p->have[h] = false;
	}
}

void kf_decide(const struct kf_probe *p, struct kf_plan *plan)
{
	plan->probe = *p;
	for (int f = 0; f < KF_FIG_MAX; f++) {
		plan->on[f] = true;
		for (int i = 0; i < figures[f].nhooks; i++)
			if (!p->have[figures[f].hooks[i]])
				plan->on[f] = false;
	}
}

bool kf_has(const struct kf_plan *plan, enum kf_hook hook)
{
	return plan->probe.have[hook];
}

const struct kf_figure_info *kf_figure(enum kf_figure fig)
{
	return &figures[fig].info;
}

size_t kf_unavailable(const struct kf_plan *plan, const struct kf_figure_info **out, size_t max)
{
	size_t n = 0;

	for (int f = 0; f < KF_FIG_MAX && n < max; f++)
		if (!plan->on[f])
			out[n++] = &figures[f].info;
	return n;
}
