// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* tp_btf is tried first (typed, cheaper arguments); a kernel without BTF
 * for tracepoints gets the classic tracepoint. Both are SEC("?...") so only
 * the chosen one loads. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <malloc.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "bpfutil.h"
#include "grow.h"
#include "kfeatures_probe.h"
#include "netns.h"
#include "procfs.h"
#include "sockdiag.h"
#include "tcp_books.h"
#include "sk_books.h"
#include "tcp_tracer.h"
#include "tcpstate.skel.h"
#include "pidns.h"
#include "text_wrap.h"


static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return vfprintf(stderr, fmt, args);
}

/* tw_timer_handler's address: the TIME_WAIT timers are told from the
 * kernel's other timers by their function. 0 when hidden (kptr_restrict). */
static uint64_t kallsyms_addr(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Traced TIME_WAIT sockets alive at once (tw_owners): as many as a
 * network namespace lets exist (net.ipv4.tcp_max_tw_buckets of the
 * agent's own; a namespace of its own may allow another number: then
 * --max-time-wait), at least 1024 and at most 2^20 (~140 MiB of
 * preallocated entries); 65536 where the sysctl cannot be read. Before,
 * 65,536 whatever the namespace allowed, and --max-sockets did not
 * change it. */
static uint32_t tw_map_size(const struct tracer_opts *o)
{
	unsigned long long v = 0;
	FILE *f;

	if (o->max_time_wait)
		return o->max_time_wait;
	f = fopen("/proc/sys/net/ipv4/tcp_max_tw_buckets", "r");
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	if (!v)
		return 65536;
	return v < 1024 ? 1024 : v > (1u << 20) ? 1u << 20 : (uint32_t)v;
}

static int open_and_load(struct tracer *t, const struct tracer_opts *o, bool use_btf,
			 bool allow_sk)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = o->btf_path);
	struct tcpstate_bpf *skel = tcpstate_bpf__open_opts(&open_opts);
	/* Only what this kernel has (kfeatures.c): one missing tracepoint
	 * would fail the whole load. */
	const struct kf_plan *kf = kf_plan(o->btf_path);
	bool io = kf_has(kf, KF_HOOK_SOCK_LENGTH);
	uint64_t tw_addr;
	bool tw_fn, tw_sched, wseq, wseq_fn, accept_fn;
	int err;

	if (!skel)
		return -errno;
	if (use_btf && !kf_has(kf, KF_HOOK_SET_STATE_BTF)) {
		tcpstate_bpf__destroy(skel);
		return -ENOENT;
	}
	bpf_program__set_autoload(skel->progs.handle_set_state_btf, use_btf);
	bpf_program__set_autoload(skel->progs.handle_set_state_nested, use_btf);
	bpf_program__set_autoload(skel->progs.handle_set_state_tp, !use_btf);
	bool by_name = o->ncomms > 0, by_cgroup = o->cgroup_path != NULL;

	bpf_program__set_autoload(skel->progs.handle_fork_btf,
				  (o->follow_children || by_name || by_cgroup) &&
				  kf_has(kf, KF_HOOK_FORK));
	bpf_program__set_autoload(skel->progs.handle_exec_btf,
				  (by_name || by_cgroup) && kf_has(kf, KF_HOOK_EXEC));
	bpf_program__set_autoload(skel->progs.handle_rename_btf,
				  by_name && kf_has(kf, KF_HOOK_RENAME));
	/* Targets leave the filter at exit (tp_btf only: a kernel without it
	 * keeps them, as before). sched_process_exit runs for every thread
	 * of the machine, so only where the set grows in the kernel (fork,
	 * exec, rename: those hooks run machine-wide already). A fixed list
	 * of pids leaves it from user space once a pid is gone
	 * (tracer_remove_target): a pid is reused only after the kernel's pid
	 * counter wraps, pid_max forks later, not within an interval. */
	bpf_program__set_autoload(skel->progs.handle_exit_btf,
				  use_btf && !o->all && (o->follow_children || by_name || by_cgroup) &&
				  kf_has(kf, KF_HOOK_EXIT));
	skel->rodata->follow_children = o->follow_children;
	skel->rodata->filter_comm = by_name;
	skel->rodata->filter_cgroup = by_cgroup;
	bpf_program__set_autoload(skel->progs.handle_send_btf, use_btf && io);
	bpf_program__set_autoload(skel->progs.handle_recv_btf, use_btf && io);
	bpf_program__set_autoload(skel->progs.handle_send_tp, !use_btf && io);
	bpf_program__set_autoload(skel->progs.handle_recv_tp, !use_btf && io);
	/* The tw timer tracepoints (tp_btf only) run for every timer of the
	 * host: only on request (--tw-timers). Without them a TIME_WAIT
	 * begins at its CLOSE record and ends in the census (the dump each
	 * interval), by its age. */
	tw_addr = o->tw_timers && use_btf && kf_has(kf, KF_HOOK_TW_TIMERS) ?
		  kallsyms_addr("tw_timer_handler") : 0;
	bpf_program__set_autoload(skel->progs.handle_timer_start_btf, tw_addr != 0);
	bpf_program__set_autoload(skel->progs.handle_timer_cancel_btf, tw_addr != 0);
	bpf_program__set_autoload(skel->progs.handle_timer_expire_btf, tw_addr != 0);
	/* Where fentry works, the TIME_WAIT functions themselves: they run
	 * once per TIME_WAIT begin and end, nothing else of the host's. */
	tw_fn = !tw_addr && use_btf && kf_has(kf, KF_HOOK_TW_FENTRY);
	tw_sched = tw_fn && libbpf_find_vmlinux_btf_id("inet_twsk_hashdance_schedule",
						       BPF_TRACE_FENTRY) > 0;
	bpf_program__set_autoload(skel->progs.handle_tw_begin_fentry, tw_fn && !tw_sched);
	bpf_program__set_autoload(skel->progs.handle_tw_begin_sched_fentry, tw_sched);
	bpf_program__set_autoload(skel->progs.handle_tw_expire_fentry, tw_fn);
	bpf_program__set_autoload(skel->progs.handle_tw_kill_fentry, tw_fn);
	skel->rodata->tw_follow = tw_addr || tw_fn;
	/* Socket storage where both the state and the send/receive hooks are
	 * tp_btf (Linux 6.3+): owners on the sockets, a record a socket at its
	 * end (and one at the birth pass for those that outlive an interval),
	 * and no accept() tracepoint (tcpstate_sk.bpf.h). Elsewhere owners by
	 * address, a record a transition, and accept() to learn who took a
	 * listener's child. */
	t->sk_mode = use_btf && io && !o->no_sk_storage && allow_sk;
	skel->rodata->sk_mode = t->sk_mode;
	/* Socket-storage mode counts TCP's reads where they move copied_seq
	 * (tcp:tcp_rcv_space_adjust, in every kernel that has the send and
	 * receive tracepoints): no call for a read that returns EAGAIN or
	 * the EOF, nor for UDP and unix sockets. sock_recv_length stays for
	 * the owners-map mode, and for the kernel's QUIC sockets. */
	bpf_program__set_autoload(skel->progs.handle_recv_btf,
				  use_btf && io && (!t->sk_mode || o->quic_kernel));
	bpf_program__set_autoload(skel->progs.handle_rcv_space_btf, t->sk_mode);
	/* And TCP's sends at tcp:tcp_sendmsg_locked where the kernel has it,
	 * from write_seq: sock_send_length runs for every sendmsg of every
	 * socket of the machine (unix, UDP, netlink), this one for TCP's
	 * alone. sock_send_length stays where it is missing, for the
	 * owners-map mode and for the kernel's QUIC sockets. */
	wseq = t->sk_mode && kf_has(kf, KF_HOOK_SENDMSG_LOCKED);
	/* Where the tracepoint is missing, fentry on the function itself if
	 * the kernel allows it (Debian's 6.12): the same body, once a call. */
	wseq_fn = t->sk_mode && !wseq && kf_has(kf, KF_HOOK_SENDMSG_FENTRY);
	wseq = wseq || wseq_fn;
	skel->rodata->send_wseq = wseq;
	bpf_program__set_autoload(skel->progs.handle_sendmsg_btf, wseq && !wseq_fn);
	bpf_program__set_autoload(skel->progs.handle_sendmsg_fentry, wseq_fn);
	bpf_program__set_autoload(skel->progs.handle_send_btf,
				  use_btf && io && (!wseq || o->quic_kernel));
	/* Its births are told by the agent's birth pass (tcpstate_sk.bpf.h),
	 * attached by hand: an iterator needs its map at attach. */
	bpf_program__set_autoload(skel->progs.birth_pass, t->sk_mode);
	bpf_program__set_autoattach(skel->progs.birth_pass, false);
	/* Run by the agent to learn HZ for the walk (tcp_walk.c). */
	bpf_program__set_autoload(skel->progs.hz_sample, t->sk_mode);
	bpf_program__set_autoattach(skel->progs.hz_sample, false);
	/* Who took a listener's child, in the other mode: at the return of
	 * inet_csk_accept where fexit loads (Debian's 6.1 and 6.12), which
	 * runs for accepts alone; else at the accept() exits, classic syscall
	 * tracepoints that put every syscall of every task of the machine on
	 * the tracing path (1.9-5.2 M a minute on this VM, #23). */
	accept_fn = use_btf && !t->sk_mode && kf_has(kf, KF_HOOK_ACCEPT_FEXIT);
	skel->rodata->accept_tp = !t->sk_mode;
	bpf_program__set_autoload(skel->progs.handle_accept_fexit, accept_fn);
	bpf_program__set_autoload(skel->progs.handle_accept_exit, !t->sk_mode && !accept_fn);
	bpf_program__set_autoload(skel->progs.handle_accept4_exit, !t->sk_mode && !accept_fn);
	if (t->sk_mode) {
		/* Not used there: the least the kernel lets a map be. */
		bpf_map__set_max_entries(skel->maps.owners, 1);
		bpf_map__set_max_entries(skel->maps.conn_io, 1);
	}
	skel->rodata->tw_handler_addr = tw_addr;
	skel->rodata->filter_tgid = !o->all;
	skel->rodata->agent_pidns_ino = pidns_bpf_ino();
	skel->rodata->quic_kernel = o->quic_kernel;
	if (o->ringbuf_bytes)
		bpf_map__set_max_entries(skel->maps.events, o->ringbuf_bytes);
	if (o->max_sockets) {
		if (!t->sk_mode) {
			bpf_map__set_max_entries(skel->maps.owners, o->max_sockets);
			bpf_map__set_max_entries(skel->maps.conn_io, o->max_sockets);
		}
		/* Sockets held at start are sockets too: their seeds fit the
		 * same budget (what does not fit is counted: tcp_seeds). */
		bpf_map__set_max_entries(skel->maps.seeds, o->max_sockets);
	}
	/* Only the timer programs keep TIME_WAIT in the kernel: elsewhere the
	 * least the kernel lets a map be (200,000 preallocated entries were
	 * ~27 MiB of kernel memory for nothing). */
	bpf_map__set_max_entries(skel->maps.tw_owners, tw_addr || tw_fn ? tw_map_size(o) : 1);
	err = tcpstate_bpf__load(skel);
	for (size_t i = 0; !err && i < o->ncomms; i++) {
		char key[CS_COMM_LEN] = {};
		__u8 one = 1;

		strncpy(key, o->comms[i], sizeof(key) - 1);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.target_comms), key, &one, BPF_ANY))
			err = -errno;
	}
	if (!err && by_cgroup) {
		__u32 zero = 0, cgfd = o->cgroup_fd;

		if (bpf_map_update_elem(bpf_map__fd(skel->maps.target_cgroup), &zero, &cgfd, BPF_ANY))
			err = -errno;
	}
	if (!err && t->sk_mode) {
		t->birth_link = bpf_program__attach_iter(skel->progs.birth_pass, NULL);
		if (!t->birth_link)
			err = -EPROTONOSUPPORT;	/* tracer_open: without socket storage */
	}
	if (err) {
		tcpstate_bpf__destroy(skel);
		return err;
	}
	t->skel = skel;
	t->method = use_btf ? "tp_btf/inet_sock_set_state" : "tracepoint/sock/inet_sock_set_state";
	/* Sends first, then reads (the report's "io:" line, JSON io_hook). */
	t->io_method = !io ? NULL	/* said by the unavailable figure */
		       : wseq_fn ? "fentry/tcp_sendmsg_locked, tp_btf/tcp_rcv_space_adjust"
		       : wseq ? "tp_btf/tcp_sendmsg_locked, tp_btf/tcp_rcv_space_adjust"
		       : t->sk_mode ? "tp_btf/sock_send_length, tp_btf/tcp_rcv_space_adjust"
		       : use_btf ? "tp_btf/sock_send_length, tp_btf/sock_recv_length"
		       : "tracepoint/sock/sock_send_length, tracepoint/sock/sock_recv_length";
	t->accept_method = t->sk_mode ? NULL	/* the child's first task says it */
			   : accept_fn ? "fexit/inet_csk_accept"
			   : TRACER_ACCEPT_EXITS;
	t->tw_events = tw_addr || tw_fn;
	t->tw_method = tw_addr ? "tw timer (tp_btf/timer_start,timer_cancel,timer_expire_entry)"
		       : tw_sched ? "fentry (inet_twsk_hashdance_schedule,tw_timer_handler,inet_twsk_kill)"
		       : tw_fn ? "fentry (inet_twsk_hashdance,tw_timer_handler,inet_twsk_kill)"
		       : "state transitions + sock_diag census";
	return 0;
}

struct early_listen {
	struct tracer *t;
	pid_t pid;
	uint32_t netns;
	struct cs_owner owner;
};

static int early_listener(const struct sd_sock *s, void *ctx)
{
	struct early_listen *l = ctx;
	struct sd_sock copy = *s;
	struct cs_tuple tuple;
	int fd;

	if (!s->inode)
		return 0;
	fd = procfs_socket_fd(l->pid, s->inode);
	if (fd < 0)
		return 0;	/* another process's: not one of ours */
	copy.netns = l->netns;
	tuple_from_sd(&tuple, &copy);
	tracer_seed_listener_sock(l->t, l->pid, fd, &l->owner);
	tracer_seed_listener(l->t, &tuple, &l->owner);
	return 0;
}

/* Between load and attach: the targets' listeners get their owner on the
 * socket (and by key), so each child they make from the first one on is
 * charged to them. Socket-storage mode has no accept() tracepoint to
 * catch a child born before the start-up seeding (attach_seed) ran. Best
 * effort: whatever fails here is seeded there, as before. */
static void seed_listeners_early(struct tracer *t, const struct tracer_opts *o)
{
	for (size_t i = 0; i < o->npids; i++) {
		struct early_listen l = { .t = t, .pid = o->pids[i] };
		struct proc_ident id;

		if (procfs_read_ident(l.pid, &id) || netns_of_pid(l.pid, &l.netns))
			continue;
		l.owner.tgid = l.pid;
		l.owner.flags = CS_OWNER_LISTEN | CS_OWNER_SEED;
		l.owner.start_ns = procfs_start_ns(&id);
		memcpy(l.owner.comm, id.comm, sizeof(l.owner.comm));
		sockdiag_dump_tcp_of(l.pid, 1u << CS_TCP_LISTEN, early_listener, &l);
	}
}

/* The hooks that grow the target set (fork, exec, rename) and shrink it
 * (exit) go on right after the load, not with the state programs: the
 * command reads the descendants and the processes by name from /proc
 * next, and a child forked after that read must find its hook already on
 * (the other units' loads come between, ~1 s). The skeleton's attach
 * leaves them alone (autoattach off) and its destroy detaches them. */
static int attach_target_hooks(struct tracer *t)
{
	struct tcpstate_bpf *skel = t->skel;
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
	} hooks[] = {
		{ skel->progs.handle_fork_btf, &skel->links.handle_fork_btf },
		{ skel->progs.handle_exec_btf, &skel->links.handle_exec_btf },
		{ skel->progs.handle_rename_btf, &skel->links.handle_rename_btf },
		{ skel->progs.handle_exit_btf, &skel->links.handle_exit_btf },
	};

	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		if (!bpf_program__autoload(hooks[i].prog))
			continue;
		bpf_program__set_autoattach(hooks[i].prog, false);
		*hooks[i].link = bpf_program__attach(hooks[i].prog);
		if (!*hooks[i].link) {
			int err = -errno;

			text_err("connscope: cannot attach %s: %s (run with -v for details)\n",
				 bpf_program__name(hooks[i].prog), strerror(-err));
			return err;
		}
	}
	return 0;
}

int tracer_open(struct tracer *t, const struct tracer_opts *o, ring_buffer_sample_fn cb,
		void *ctx)
{
	int err;

	memset(t, 0, sizeof(*t));
	libbpf_set_print(o->verbose ? print_libbpf : NULL);
	err = o->classic_tp ? -ENOTSUP : open_and_load(t, o, true, true);
	/* The birth pass did not attach: socket storage without it would
	 * leave the books without the live connections until they end, so a
	 * record a transition instead (the 6.1 way; said with -v). */
	if (err == -EPROTONOSUPPORT) {
		if (o->verbose)
			fprintf(stderr, "connscope: the birth pass (iter/tcp) "
					"did not attach: a record a state transition\n");
		err = open_and_load(t, o, true, false);
	}
	/* Following children, names and cgroups needs tp_btf (sched hooks). */
	if (err && !o->follow_children && !o->ncomms && !o->cgroup_path)
		err = open_and_load(t, o, false, false);
	if (err) {
		text_err("connscope: cannot load the BPF programs: %s%s\n", strerror(-err),
			 err == -EPERM ? " (run as root; a kernel lockdown or seccomp policy may "
					 "forbid BPF)" : " (run with -v for the verifier's log)");
		return err;
	}
	err = attach_target_hooks(t);
	if (err) {
		tracer_close(t);
		return err;
	}
	t->ring_bytes = bpf_map__max_entries(t->skel->maps.events);
	t->cb = cb;
	t->cb_ctx = ctx;
	t->follow_children = o->follow_children;
	if (o->follow_children && !kf_has(kf_plan(o->btf_path), KF_HOOK_FORK))
		text_err("connscope: --children is off: it needs %s\n",
			 kf_figure(KF_FIG_CHILDREN)->needs);
	return 0;
}

int tracer_attach(struct tracer *t, const struct tracer_opts *o)
{
	int err;

	if (!o->all)
		seed_listeners_early(t, o);
	/* The accept hook first: where fexit on inet_csk_accept does not
	 * attach, its fallback loads before any state program runs. */
	err = tracer_attach_accept(t, o);
	if (err) {
		tracer_close(t);
		return err;
	}
	/* The target-set hooks went on at the load (attach_target_hooks). */
	err = tcpstate_bpf__attach(t->skel);
	if (!err && t->accept_skel)
		err = tcpstate_bpf__attach(t->accept_skel);
	if (err) {
		text_err("connscope: cannot attach to the tracepoints: %s "
			 "(run with -v for details)\n", strerror(-err));
		tracer_close(t);
	}
	return err;
}

int tracer_map_ring(struct tracer *t)
{
	int err;

	/* libbpf's parses of the kernel's BTF are freed by now, but glibc
	 * keeps the last one's ~12 MiB of heap (its free raised the mmap
	 * threshold past them): given back before the ring's pages come. */
	malloc_trim(0);
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), t->cb, t->cb_ctx, NULL);
	if (t->rb)
		return 0;
	err = -errno;
	fprintf(stderr, "connscope: cannot open the ring buffer: %s\n", strerror(-err));
	return err;
}

int tracer_add_target(struct tracer *t, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	return bpf_map_update_elem(bpf_map__fd(t->skel->maps.targets), &key, &one, BPF_ANY);
}

int tracer_remove_target(struct tracer *t, pid_t pid)
{
	__u32 key = pid;

	if (!t->skel)
		return -ENOENT;
	if (bpf_map_delete_elem(bpf_map__fd(t->skel->maps.targets), &key))
		return -errno;
	t->targets_removed++;
	return 0;
}

int tracer_set_cgroup(struct tracer *t, int cgroup_fd)
{
	__u32 zero = 0, fd = cgroup_fd;

	/* The array holds a reference on the cgroup itself, not on the fd:
	 * the old one is let go here. */
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.target_cgroup), &zero, &fd, BPF_ANY))
		return -errno;
	return 0;
}

int tracer_seed(struct tracer *t, const struct cs_tuple *tuple, const struct cs_owner *owner)
{
	int err;

	/* Marked first: the BPF side looks a seed up only at a marked port. A
	 * seed that does not fit (more sockets held at start than the map
	 * takes) leaves that socket's events unowned: counted, reported. */
	t->skel->bss->seed_ports[tuple->sport] = 1;
	err = bpf_map_update_elem(bpf_map__fd(t->skel->maps.seeds), tuple, owner, BPF_ANY);
	if (err)
		t->seeds_failed++;
	return err;
}

void tracer_handoff_port(struct tracer *t, uint16_t port)
{
	/* Not with --all: every process is a target there, and a socket
	 * met without storage was made before the attach (unknown_events),
	 * not handed. */
	if (t->sk_mode && t->skel->rodata->filter_tgid)
		t->skel->bss->handoff_ports[port] = 1;
}

void tracer_handoff_netns(struct tracer *t, uint32_t netns)
{
	__u8 one = 1;

	/* Full (64 namespaces read): a listener made since in another is
	 * marked at the next census instead, as before this map. */
	if (t->sk_mode && t->skel->rodata->filter_tgid)
		bpf_map_update_elem(bpf_map__fd(t->skel->maps.handoff_netns), &netns, &one,
				    BPF_ANY);
}

int tracer_seed_listener(struct tracer *t, const struct cs_tuple *tuple,
			 const struct cs_owner *owner)
{
	struct cs_listen_key key = {
		.netns = tuple->netns, .family = tuple->family, .port = tuple->sport,
	};
	int err;

	memcpy(key.addr, tuple->saddr, sizeof(key.addr));
	t->skel->bss->seed_ports[tuple->sport] = 1;
	err = bpf_map_update_elem(bpf_map__fd(t->skel->maps.listeners), &key, owner, BPF_NOEXIST);
	/* EEXIST: a listener the BPF side learned first, which wins. */
	if (err && err != -EEXIST)
		t->seeds_failed++;
	return err == -EEXIST ? 0 : err;
}

int tracer_seed_listener_sock(struct tracer *t, pid_t pid, int fd, const struct cs_owner *owner)
{
	int pidfd, sfd, err = 0;

	/* A copy of the target's fd in this process: the socket storage map
	 * takes a socket by one of our own fds. */
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	sfd = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (sfd < 0)
		err = -errno;
	else if (t->sk_mode) {
		struct cs_sk st = { .owner = *owner };

		if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.sk_state), &sfd, &st,
					BPF_NOEXIST))
			err = -errno;
	} else if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.listen_owner), &sfd, owner,
					 BPF_NOEXIST))
		err = -errno;
	if (sfd >= 0)
		close(sfd);
	close(pidfd);
	return err;
}

/* The runs that program of OBJ skipped, a program of it running on that
 * CPU already (recursion_misses), summed: the state-change pair's left
 * out, each covering the other's misses. */
static uint64_t obj_skipped(struct tracer *t, struct bpf_object *obj)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (prog == t->skel->progs.handle_set_state_btf ||
		    prog == t->skel->progs.handle_set_state_nested)
			continue;
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

int tracer_stats(struct tracer *t, uint64_t out[CS_STAT_MAX])
{
	int err = bpf_percpu_sum(bpf_map__fd(t->skel->maps.stats), CS_STAT_MAX, out);

	if (err)
		return err;
	out[CS_STAT_ENDS_UNRUN] = t->ends_unrun;
	out[CS_STAT_TARGETS_GONE] += t->targets_removed;
	/* The accept() exits that run in the refused fexit's place are the
	 * second load's (tcp_tracer_accept.c): its only programs loaded. */
	out[CS_STAT_SKIPPED] = obj_skipped(t, t->skel->obj);
	if (t->accept_skel)
		out[CS_STAT_SKIPPED] += obj_skipped(t, t->accept_skel->obj);
	return 0;
}

/* Every key of a map whose values are read by fn into line. */
static int skb_dump(int fd, size_t vsize, void (*fn)(struct skb_line *, const void *, int),
		    bool take, struct skb_line **out)
{
	int ncpu = libbpf_num_possible_cpus(), n = 0, err = 0;
	struct cs_skb_key k, next, *prev = NULL;
	struct skb_line *l = NULL;
	size_t cap = 0;
	void *v;

	*out = NULL;
	if (ncpu < 1)
		return -EINVAL;
	v = calloc(ncpu, vsize);
	if (!v)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (bpf_map_lookup_elem(fd, &next, v)) {
			if (errno == ENOENT)	/* deleted meanwhile: next from the start */
				continue;
			err = -errno;
			break;
		}
		if (grow_room((void **)&l, &cap, n, 1, sizeof(*l), 64)) {
			err = -ENOMEM;
			break;
		}
		memset(&l[n], 0, sizeof(l[n]));
		l[n].k = next;
		fn(&l[n++], v, ncpu);
		k = next;
		prev = &k;
	}
	free(v);
	if (!err && take)
		for (int i = 0; i < n; i++)
			bpf_map_delete_elem(fd, &l[i].k);
	if (err) {
		free(l);
		return err;
	}
	*out = l;
	return n;
}

static void skb_sum(struct skb_line *l, const void *v, int ncpu)
{
	const struct cs_skb_val *c = v;

	/* Per-CPU values come each rounded up to 8 bytes: 16 already. */
	for (int i = 0; i < ncpu; i++) {
		l->made += c[i].made;
		l->ended += c[i].ended;
	}
}

static void skb_alive_one(struct skb_line *l, const void *v, int ncpu)
{
	(void)ncpu;
	l->made = *(const uint64_t *)v;
}

int tracer_sk_books(struct tracer *t, struct skb_line **out)
{
	*out = NULL;
	if (!t->sk_mode)
		return 0;
	return skb_dump(bpf_map__fd(t->skel->maps.sk_books), sizeof(struct cs_skb_val), skb_sum,
			false, out);
}

int tracer_sk_alive_take(struct tracer *t, struct skb_line **out)
{
	*out = NULL;
	if (!t->sk_mode)
		return 0;
	/* The agent alone runs the pass, between these calls: nothing adds
	 * to the map while it is read and emptied. */
	return skb_dump(bpf_map__fd(t->skel->maps.sk_alive), sizeof(uint64_t), skb_alive_one,
			true, out);
}

int tracer_sk_books_drop(struct tracer *t, const struct cs_skb_key *k)
{
	return bpf_map_delete_elem(bpf_map__fd(t->skel->maps.sk_books), k) ? -errno : 0;
}

bool tracer_hold_ns(struct tracer *t, uint32_t ino, pid_t pid)
{
	int fd;

	for (size_t i = 0; i < t->nheld_ns; i++)
		if (t->held_ns[i].ino == ino)
			return true;
	if (t->nheld_ns == TRACER_HELD_NS || !ino)
		return false;
	fd = netns_open(pid);
	if (fd < 0)
		return false;
	t->held_ns[t->nheld_ns++] = (struct tracer_ns){ ino, fd };
	return true;
}

void tracer_release_ns(struct tracer *t, size_t i)
{
	if (i >= t->nheld_ns)
		return;
	close(t->held_ns[i].fd);
	t->held_ns[i] = t->held_ns[--t->nheld_ns];
}

void tracer_close(struct tracer *t)
{
	while (t->nheld_ns)
		tracer_release_ns(t, 0);
	bpf_link__destroy(t->birth_link);
	t->birth_link = NULL;
	ring_buffer__free(t->rb);
	tcpstate_bpf__destroy(t->accept_skel);
	tcpstate_bpf__destroy(t->skel);
	t->rb = NULL;
	t->accept_skel = NULL;
	t->skel = NULL;
}

/* Socket-storage mode: the storage is read through a socket fd, so each
 * socket fd of pid is copied here (pidfd_getfd) and looked up. Where sends
 * are counted from write_seq (send_wseq), the storage holds them as of the
 * socket's last look: the caller runs a birth pass first (it looks at
 * every traced socket: snd_sync), as attach's end does with its last
 * reconcile. */
int tracer_live_io(struct tracer *t, pid_t pid, tracer_io_fn fn, void *ctx)
{
	char path[64];
	struct dirent *de;
	int pidfd, n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/fd", procfs_root, pid);
	d = opendir(path);
	if (!d)
		return -errno;
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		closedir(d);
		return -errno;
	}
	while ((de = readdir(d))) {
		char link[64];
		struct cs_sk st;
		ssize_t l;
		int sfd;

		if (de->d_name[0] == '.')
			continue;
		l = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (l <= 0 || strncmp(link, "socket:", 7))
			continue;
		sfd = syscall(SYS_pidfd_getfd, pidfd, atoi(de->d_name), 0);
		if (sfd < 0)
			continue;
		if (!bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.sk_state), &sfd, &st)) {
			fn(ctx, st.sk, &st.io);
			n++;
		}
		close(sfd);
	}
	close(pidfd);
	closedir(d);
	return n;
}

int tracer_conn_io(struct tracer *t, uint64_t sk, struct cs_conn_io *io)
{
	return bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.conn_io), &sk, io) ? -errno : 0;
}

int tracer_programs(struct tracer *t, const char **names, bool *attached, int max)
{
	struct bpf_program *prog;
	int n = 0;

	if (!t->skel)
		return 0;
	/* tcpstate_bpf__attach() attached every autoloaded program or failed
	 * as a whole, so autoload is what runs; but for the accept hook
	 * whose fexit did not attach: the accept() exits of the second load
	 * ran in its place (tracer_attach_accept). */
	bpf_object__for_each_program(prog, t->skel->obj) {
		bool exits = prog == t->skel->progs.handle_accept_exit ||
			     prog == t->skel->progs.handle_accept4_exit;

		if (n == max)
			break;
		names[n] = bpf_program__name(prog);
		attached[n] = !t->accept_skel ? bpf_program__autoload(prog)
			      : prog == t->skel->progs.handle_accept_fexit ? false
			      : exits || bpf_program__autoload(prog);
		n++;
	}
	return n;
}

int tracer_targets_fd(struct tracer *t)
{
	return t->skel ? bpf_map__fd(t->skel->maps.targets) : -1;
}
