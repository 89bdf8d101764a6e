/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the running kernel offers connscope's BPF units and which figures
 * that turns on or off. One table (kfeatures.c) says which kernel hooks
 * each figure needs; sources/kfeatures_probe.c fills the probe results
 * from the running kernel, the loaders load only programs whose hooks are
 * there, and every renderer names the figures that are off and what they
 * need. Pure: nothing here touches the kernel. */
#ifndef CONNSCOPE_KFEATURES_H
#define CONNSCOPE_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>

struct btf;

enum kf_hook {
	KF_HOOK_RINGBUF,	/* BPF_MAP_TYPE_RINGBUF: every unit's events */
	KF_HOOK_CURRENT_TASK,	/* bpf_get_current_task_btf: accept's fd walk */
	KF_HOOK_SET_STATE_BTF,	/* tp_btf sock:inet_sock_set_state */
	KF_HOOK_SOCK_LENGTH,	/* sock:sock_send_length + sock:sock_recv_length */
	KF_HOOK_TW_TIMERS,	/* tp_btf timer_start/cancel/expire_entry + tw_timer_handler */
	KF_HOOK_TW_FENTRY,	/* fentry on inet_twsk_kill, tw_timer_handler and
				 * inet_twsk_hashdance(_schedule) */
	KF_HOOK_FORK,		/* tp_btf sched:sched_process_fork */
	KF_HOOK_EXEC,		/* tp_btf sched:sched_process_exec */
	KF_HOOK_RENAME,		/* tp_btf task:task_rename */
	KF_HOOK_EXIT,		/* tp_btf sched:sched_process_exit */
	KF_HOOK_TASK_HELPERS,	/* bpf_task_pt_regs (with bpf_get_current_task_btf) */
	KF_HOOK_CGROUP_SOCK,	/* cgroup_skb + cgroup_sock programs, sk_storage maps */
	KF_HOOK_SKB_CURRENT,	/* current task helpers in cgroup_skb programs */
	KF_HOOK_SENDMSG_LOCKED,	/* tp_btf tcp:tcp_sendmsg_locked (6.18 has it, Debian's
				 * 6.12 not): TCP's sends without sock_send_length */
	KF_HOOK_SENDMSG_FENTRY,	/* fentry on tcp_sendmsg_locked: the same where the
				 * tracepoint is missing and fentry loads (6.12) */
	KF_HOOK_ACCEPT_FEXIT,	/* fexit on inet_csk_accept: who took a listener's
				 * child without the accept() exits, which put every
				 * syscall on the tracing path (6.1, 6.12) */
	KF_HOOK_MAX
};

enum kf_figure {
	KF_FIG_CONNECTION_IO,	/* bytes, requests, turns per connection */
	KF_FIG_TW_TIMERS,	/* exact TIME_WAIT end from the tw timer */
	KF_FIG_CHILDREN,	/* --children */
	KF_FIG_FD_EXEC,		/* fds closed by exec, as it happens */
	KF_FIG_TARGETS_JOIN,	/* --comm/--cgroup: processes joining during the run */
	KF_FIG_TARGETS_EXIT,	/* targets leave the kernel filter at exit */
	KF_FIG_FD_TRACKING,	/* fdleak, attach's fd part */
	KF_FIG_QUIC_WIRE,	/* QUIC seen on the wire */
	KF_FIG_QUIC_SEND_OWNER,	/* a UDP socket charged to its sender at a send */
	KF_FIG_MAX
};

struct kf_figure_info {
	const char *figure;	/* short name, as in JSON and Prometheus labels */
	const char *what;	/* what the figure is */
	const char *needs;	/* the kernel feature it needs, with the version */
	const char *needs_token;	/* the same as a short label value
					 * ("linux-6.3"): Prometheus' needs="" */
};

/* Probe results, one per hook: true when this kernel has it. */
struct kf_probe {
	bool have[KF_HOOK_MAX];
};

struct kf_plan {
	struct kf_probe probe;
	bool on[KF_FIG_MAX];
	bool probed;		/* filled by a probe (else: everything assumed there) */
};

/* The BTF part of a probe: the tracepoint typedefs (btf_trace_NAME) this
 * BTF holds. Other hooks are left as they are. Pure: no kernel access. */
void kf_probe_btf(const struct btf *btf, struct kf_probe *p);
/* Figures from probe results, by the one table. Pure. */
void kf_decide(const struct kf_probe *p, struct kf_plan *plan);

bool kf_has(const struct kf_plan *plan, enum kf_hook hook);
const struct kf_figure_info *kf_figure(enum kf_figure fig);
/* The figures that are off: fills out[] with up to max, returns how many. */
size_t kf_unavailable(const struct kf_plan *plan, const struct kf_figure_info **out, size_t max);

#endif
