// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* fd life of traced processes from the syscall tracepoints: every way a
 * process makes an fd, close/close_range, dup2 over an open fd, exec.
 * Classic per-syscall tracepoints, so syscalls we do not care about (read,
 * write, epoll_wait...) run no BPF at all.
 *
 * Creation sites: each OPEN event carries a site key (the syscall's user ip
 * and the word at the user sp, which for a simple libc wrapper is the
 * return address into its caller, plus the frame-pointer stack id). The
 * first time a process uses a site, the user registers and a copy of the
 * user stack go to user space, which unwinds them with DWARF CFI: that
 * names the site in programs built without frame pointers. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "fdtrack.h"
#include "ringbuf_wakeup.bpf.h"
#include "agent.bpf.h"

#define O_CLOEXEC_FLAG 02000000	/* O_CLOEXEC == SOCK_CLOEXEC == EFD_CLOEXEC... on x86 */
#define F_DUPFD 0
#define F_DUPFD_CLOEXEC 1030
#define CLOSE_RANGE_CLOEXEC (1U << 2)

const volatile bool filter_tgid = true;
/* Set by user space after load in doctor mode: count EMFILE/ENFILE. A
 * .bss flag, not rodata, so attach shares the one loaded object. */
bool count_errors = false;

#define EMFILE_ERR 24
#define ENFILE_ERR 23

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} fd_events SEC(".maps");

/* Snapshots are big and rare: their own ring, so they never crowd out
 * the events. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} fd_snaps SEC(".maps");

AGENT_TARGETS_MAP(fd_targets);

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, FD_STACK_DEPTH * sizeof(__u64));
} fd_stacks SEC(".maps");

struct site_key {
	__u64 site;
	__u32 tgid;
	__u32 pad;
};

/* Sites whose snapshot was sent. LRU: a forgotten site only costs one
 * more snapshot. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct site_key);
	__type(value, __u8);
} fd_sites SEC(".maps");

/* Arguments saved at sys_enter for the exit (per thread). */
struct enter_args {
	__u64 a0, a1, a2;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct enter_args);
} fd_enter SEC(".maps");

AGENT_STATS_MAP(fd_stats, FD_STAT_MAX);

static __always_inline void stat_inc(__u32 idx)
{
	agent_stat_inc(&fd_stats, idx);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct fd_err_count);
} fd_errors SEC(".maps");

static __always_inline bool is_target(void);

/* The failure path only: a syscall that made no fd because the process or
 * the system has none left. */
static __always_inline void count_error(long ret)
{
	struct fd_err_count zero = {}, *c;
	__u32 tgid;

	if (!count_errors || (ret != -EMFILE_ERR && ret != -ENFILE_ERR) || !is_target())
		return;
	tgid = agent_current_tgid();
	c = bpf_map_lookup_elem(&fd_errors, &tgid);
	if (!c) {
		bpf_map_update_elem(&fd_errors, &tgid, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&fd_errors, &tgid);
		if (!c)
			return;
	}
	if (ret == -EMFILE_ERR)
		__sync_fetch_and_add(&c->emfile, 1);
	else
		__sync_fetch_and_add(&c->enfile, 1);
}

static __always_inline bool is_target(void)
{
	return agent_traced(&fd_targets, filter_tgid, agent_current_tgid());
}

/* Syscall tracepoint records: enter has args as u64s, exit the return. */
struct sys_enter_ctx {
	__u64 common;
	int nr;
	int pad;
	__u64 args[6];
};

struct sys_exit_ctx {
	__u64 common;
	int nr;
	int pad;
	long ret;
};

static __always_inline void send_snapshot(struct pt_regs *regs, __u64 site, __u32 tgid)
{
	struct site_key k = { .site = site, .tgid = tgid };
	struct fd_site_snap *s;
	__u64 sp;
	__u8 one = 1;

	if (bpf_map_update_elem(&fd_sites, &k, &one, BPF_NOEXIST))
		return;		/* sent already */
	s = bpf_ringbuf_reserve(&fd_snaps, sizeof(*s), 0);
	if (!s) {
		stat_inc(FD_STAT_SNAP_LOST);
		bpf_map_delete_elem(&fd_sites, &k);
		return;
	}
	s->site = site;
	s->tgid = tgid;
	bpf_probe_read_kernel(s->regs, sizeof(s->regs), regs);
	sp = s->regs[FD_REG_SP];
	/* The copy fails as a whole when it crosses the top of the stack:
	 * try shorter ones. */
	if (!bpf_probe_read_user(s->stack, FD_SNAP_BYTES, (void *)sp))
		s->len = FD_SNAP_BYTES;
	else if (!bpf_probe_read_user(s->stack, FD_SNAP_BYTES / 2, (void *)sp))
		s->len = FD_SNAP_BYTES / 2;
	else if (!bpf_probe_read_user(s->stack, FD_SNAP_BYTES / 8, (void *)sp))
		s->len = FD_SNAP_BYTES / 8;
	else
		s->len = 0;
	if (s->len < FD_SNAP_BYTES)
		stat_inc(FD_STAT_SNAP_SHORT);
	bpf_ringbuf_submit(s, 0);
}

static __always_inline int emit(void *ctx, __u8 type, __u8 how, int fd, int fd2, bool cloexec)
{
	__u64 pid_tgid = agent_current_pid_tgid();
	struct fd_event *e;

	e = bpf_ringbuf_reserve(&fd_events, sizeof(*e), 0);
	if (!e) {
		stat_inc(FD_STAT_RB_LOST);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->tgid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->type = type;
	e->how = how;
	e->fd = fd;
	e->fd2 = fd2;
	e->cloexec = cloexec;
	e->stack_id = -1;
	if (type == FD_EV_OPEN) {
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		__u64 ip = BPF_CORE_READ(regs, ip), sp = BPF_CORE_READ(regs, sp), ret = 0;

		e->stack_id = bpf_get_stackid(ctx, &fd_stacks, BPF_F_USER_STACK | BPF_F_REUSE_STACKID);
		if (e->stack_id < 0)
			stat_inc(FD_STAT_STACK_FAIL);
		bpf_probe_read_user(&ret, sizeof(ret), (void *)sp);
		/* The site: where the syscall is made and who called that. */
		e->site = ip * 0x9E3779B97F4A7C15ULL ^ ret * 0xC2B2AE3D27D4EB4FULL ^
			  (__u64)(__u32)e->stack_id;
		send_snapshot(regs, e->site, e->tgid);
	}
	bpf_ringbuf_submit(e, rb_wakeup_flags(&fd_events));
	stat_inc(FD_STAT_EVENTS);
	return 0;
}

static __always_inline int save_args(__u64 a0, __u64 a1, __u64 a2)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct enter_args a = { a0, a1, a2 };

	if (!is_target())
		return 0;
	bpf_map_update_elem(&fd_enter, &id, &a, BPF_ANY);
	return 0;
}

static __always_inline struct enter_args *take_args(struct enter_args *copy)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct enter_args *a = bpf_map_lookup_elem(&fd_enter, &id);

	if (!a)
		return NULL;
	*copy = *a;
	bpf_map_delete_elem(&fd_enter, &id);
	return copy;
}

/* Syscalls whose return value is the new fd. cloexec from the flags when
 * the flag argument is known at exit is not worth a second program: the
 * /proc reconcile reads it from fdinfo. */
#define FD_RET_EXIT(name, how)						\
SEC("tracepoint/syscalls/sys_exit_" #name)				\
int handle_exit_##name(struct sys_exit_ctx *ctx)			\
{									\
	if (ctx->ret < 0) {						\
		count_error(ctx->ret);					\
		return 0;						\
	}								\
	if (!is_target())						\
		return 0;						\
	return emit(ctx, FD_EV_OPEN, how, ctx->ret, -1, false);	\
}

FD_RET_EXIT(socket, FD_HOW_SOCKET)
FD_RET_EXIT(accept, FD_HOW_ACCEPT)
FD_RET_EXIT(accept4, FD_HOW_ACCEPT)
FD_RET_EXIT(open, FD_HOW_OPEN)
FD_RET_EXIT(openat, FD_HOW_OPEN)
FD_RET_EXIT(openat2, FD_HOW_OPEN)
FD_RET_EXIT(creat, FD_HOW_OPEN)
FD_RET_EXIT(dup, FD_HOW_DUP)
FD_RET_EXIT(eventfd, FD_HOW_EVENTFD)
FD_RET_EXIT(eventfd2, FD_HOW_EVENTFD)
FD_RET_EXIT(epoll_create, FD_HOW_EPOLL)
FD_RET_EXIT(epoll_create1, FD_HOW_EPOLL)
FD_RET_EXIT(timerfd_create, FD_HOW_TIMERFD)
FD_RET_EXIT(signalfd, FD_HOW_SIGNALFD)
FD_RET_EXIT(signalfd4, FD_HOW_SIGNALFD)
FD_RET_EXIT(inotify_init, FD_HOW_INOTIFY)
FD_RET_EXIT(inotify_init1, FD_HOW_INOTIFY)
FD_RET_EXIT(memfd_create, FD_HOW_MEMFD)
FD_RET_EXIT(pidfd_open, FD_HOW_PIDFD)
FD_RET_EXIT(fanotify_init, FD_HOW_FANOTIFY)

/* pipe/pipe2/socketpair write two fds to user memory: keep the pointer. */
SEC("tracepoint/syscalls/sys_enter_pipe")
int handle_enter_pipe(struct sys_enter_ctx *ctx)
{
	return save_args(ctx->args[0], 0, 0);
}

SEC("tracepoint/syscalls/sys_enter_pipe2")
int handle_enter_pipe2(struct sys_enter_ctx *ctx)
{
	return save_args(ctx->args[0], ctx->args[1], 0);
}

SEC("tracepoint/syscalls/sys_enter_socketpair")
int handle_enter_socketpair(struct sys_enter_ctx *ctx)
{
	return save_args(ctx->args[3], ctx->args[1], 0);
}

static __always_inline int pair_exit(struct sys_exit_ctx *ctx, __u8 how)
{
	struct enter_args a;
	int fds[2];

	if (!take_args(&a))
		return 0;
	if (ctx->ret < 0) {
		count_error(ctx->ret);
		return 0;
	}
	if (bpf_probe_read_user(fds, sizeof(fds), (void *)a.a0))
		return 0;
	return emit(ctx, FD_EV_OPEN, how, fds[0], fds[1], false);
}

SEC("tracepoint/syscalls/sys_exit_pipe")
int handle_exit_pipe(struct sys_exit_ctx *ctx)
{
	return pair_exit(ctx, FD_HOW_PIPE);
}

SEC("tracepoint/syscalls/sys_exit_pipe2")
int handle_exit_pipe2(struct sys_exit_ctx *ctx)
{
	return pair_exit(ctx, FD_HOW_PIPE);
}

SEC("tracepoint/syscalls/sys_exit_socketpair")
int handle_exit_socketpair(struct sys_exit_ctx *ctx)
{
	return pair_exit(ctx, FD_HOW_SOCKETPAIR);
}

/* fcntl makes an fd only for F_DUPFD / F_DUPFD_CLOEXEC. */
SEC("tracepoint/syscalls/sys_enter_fcntl")
int handle_enter_fcntl(struct sys_enter_ctx *ctx)
{
	if (ctx->args[1] != F_DUPFD && ctx->args[1] != F_DUPFD_CLOEXEC)
		return 0;
	return save_args(ctx->args[0], ctx->args[1], 0);
}

SEC("tracepoint/syscalls/sys_exit_fcntl")
int handle_exit_fcntl(struct sys_exit_ctx *ctx)
{
	struct enter_args a;

	if (!take_args(&a) || ctx->ret < 0)
		return 0;
	return emit(ctx, FD_EV_OPEN, FD_HOW_DUP, ctx->ret, -1, a.a1 == F_DUPFD_CLOEXEC);
}

/* dup2/dup3 onto an open newfd closes it first: one event says both. */
SEC("tracepoint/syscalls/sys_exit_dup2")
int handle_exit_dup2(struct sys_exit_ctx *ctx)
{
	if (ctx->ret < 0 || !is_target())
		return 0;
	return emit(ctx, FD_EV_DUP2, FD_HOW_DUP, ctx->ret, ctx->ret, false);
}

SEC("tracepoint/syscalls/sys_exit_dup3")
int handle_exit_dup3(struct sys_exit_ctx *ctx)
{
	if (ctx->ret < 0 || !is_target())
		return 0;
	return emit(ctx, FD_EV_DUP2, FD_HOW_DUP, ctx->ret, ctx->ret, false);
}

SEC("tracepoint/syscalls/sys_enter_close")
int handle_enter_close(struct sys_enter_ctx *ctx)
{
	return save_args(ctx->args[0], 0, 0);
}

SEC("tracepoint/syscalls/sys_exit_close")
int handle_exit_close(struct sys_exit_ctx *ctx)
{
	struct enter_args a;

	if (!take_args(&a) || ctx->ret < 0)
		return 0;
	return emit(ctx, FD_EV_CLOSE, 0, (int)a.a0, -1, false);
}

SEC("tracepoint/syscalls/sys_enter_close_range")
int handle_enter_close_range(struct sys_enter_ctx *ctx)
{
	if (ctx->args[2] & CLOSE_RANGE_CLOEXEC)
		return 0;	/* only marks them close-on-exec */
	return save_args(ctx->args[0], ctx->args[1], ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_exit_close_range")
int handle_exit_close_range(struct sys_exit_ctx *ctx)
{
	struct enter_args a;

	if (!take_args(&a) || ctx->ret < 0)
		return 0;
	/* max_fd may be ~0U: keep it as an int range end. */
	return emit(ctx, FD_EV_CLOSE_RANGE, 0, (int)a.a0,
		    a.a1 > 0x7fffffff ? 0x7fffffff : (int)a.a1, false);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec_btf, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (!is_target())
		return 0;
	return emit(ctx, FD_EV_EXEC, 0, -1, -1, false);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
