/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Which process took a listener's child. Attached in the per-transition
 * mode only (accept_tp); the socket-storage mode learns it from the
 * child's first task instead. Where fexit loads (Debian's 6.1 and 6.12),
 * at the return of inet_csk_accept(), which hands the child over in the
 * accepting task and runs for accepts alone. Elsewhere at the exits of
 * accept() and accept4(): a classic syscall tracepoint, which puts every
 * syscall of every task of the machine on the tracing path
 * (SYSCALL_WORK_SYSCALL_TRACEPOINT). Included by tcpstate.bpf.c after its
 * maps and helpers. */
#ifndef CONNSCOPE_TCPSTATE_ACCEPT_BPF_H
#define CONNSCOPE_TCPSTATE_ACCEPT_BPF_H

/* syscalls:sys_exit_accept{,4}: the layout of the syscall exit records. */
struct syscall_exit_ctx {
	__u64 common;
	int syscall_nr;
	long ret;
};

/* Accepted by a process we do not trace: a child still charged to its
 * listener's owner (a worker sharing a traced parent's listener) leaves
 * the books (CS_EV_OWNER, tgid 0, as the socket-storage mode says it) and
 * the owners map, so its close is not charged to a process that never held
 * it (59_identity workers_one_untraced: every close of the untraced
 * worker's was the parent's before). */
static __always_inline int accept_untraced(struct sock *sk)
{
	struct cs_owner *found;
	struct cs_tuple t;
	__u64 key;
	int state;

	key = (__u64)sk;
	found = bpf_map_lookup_elem(&owners, &key);
	if (!found || found->flags != CS_OWNER_LISTENER)
		return 0;
	bpf_map_delete_elem(&owners, &key);
	state = BPF_CORE_READ(sk, __sk_common.skc_state);
	sk_read_tuple(sk, &t, false);
	return emit(sk, NULL, &t, CS_EV_OWNER, state, state, CS_F_NEW_OWNER, 0, false);
}

/* A traced process took sk, a TCP listener's child. */
static __always_inline int accept_traced(struct sock *sk)
{
	struct cs_owner o = {};
	struct cs_tuple t;
	__u32 flags = CS_F_NEW_OWNER;
	__u64 key;
	int state;

	owner_from_current(&o, CS_OWNER_ACCEPT);
	state = BPF_CORE_READ(sk, __sk_common.skc_state);
	key = (__u64)sk;
	/* A peer may have reset it already; a CLOSEd sock has no life left. */
	if (state != TCP_CLOSE) {
		owner_put(key, &o);
		/* A reset since the read above. Its CLOSE record is in the
		 * ring before ours (the tracepoint runs before the state is
		 * stored), so the record says CLOSE too: ESTABLISHED after its
		 * end made the books a live connection that never closed.
		 * Before our put, that CLOSE found the listener's owner and
		 * counted the child itself (never accepted where not grafted
		 * yet, as at fexit; else accept()'s, to come): our entry is
		 * still here, dropped, or the next socket at this address would
		 * inherit it. After the put, it found ours and dropped it: its
		 * end is counted, its accept is ours to count (CS_F_ACCEPTED;
		 * before, counted once more as never accepted at fexit). */
		if (BPF_CORE_READ(sk, __sk_common.skc_state) == TCP_CLOSE) {
			if (bpf_map_delete_elem(&owners, &key))
				flags |= CS_F_ACCEPTED;
			state = TCP_CLOSE;
		}
	}
	sk_read_tuple(sk, &t, false);
	return emit(sk, &o, &t, CS_EV_ACCEPT, state, state, flags, 0, false);
}

#define CS_IPPROTO_MPTCP 262	/* include/uapi/linux/in.h */

/* The accept() exits: the fd it returned, back to its sock. A socket of
 * another family (unix, AF_ALG's crypto requests, vsock) or an inet one
 * not TCP (SCTP) is none of ours, not a miss: before, each counted in
 * accept_unresolved, a loss (63_accept_unix: 5 for 5). A miss is an fd
 * that led to no sock, or MPTCP's (its TCP subflows' taker unknown). */
static __always_inline int handle_accept(long ret)
{
	struct sock *sk;
	int family, proto;

	if (ret < 0)
		return 0;
	sk = current_fd_sock(ret);
	if (!current_is_target())
		return sk ? accept_untraced(sk) : 0;
	if (!sk) {
		stat_inc(CS_STAT_ACCEPT_MISS);
		return 0;
	}
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return 0;
	proto = BPF_CORE_READ(sk, sk_protocol);
	if (proto != IPPROTO_TCP) {
		if (proto == CS_IPPROTO_MPTCP)
			stat_inc(CS_STAT_ACCEPT_MISS);
		return 0;
	}
	return accept_traced(sk);
}

/* inet_csk_accept() returns the child it took off the listener's queue,
 * or NULL (EAGAIN, a signal, an error), in the accepting task: accept(),
 * accept4(), io_uring's accept (which the syscall exits miss), a kernel
 * accept. Its return value read with bpf_get_func_ret(), whatever the
 * arguments before it (6.10 folded flags, err and kern into struct
 * proto_accept_arg). It runs before accept() installs the fd, which an
 * accept() that fails after it (copying the peer's address out) closes
 * again: counted accepted then, and its close follows. Not TCP (DCCP):
 * not ours, and nothing to resolve (no accept_unresolved). */
SEC("?fexit/inet_csk_accept")
int handle_accept_fexit(__u64 *ctx)
{
	__u64 ret = 0;
	struct sock *sk;

	if (bpf_get_func_ret(ctx, &ret) || !ret)
		return 0;
	sk = (struct sock *)ret;
	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	if (!current_is_target())
		return accept_untraced(sk);
	return accept_traced(sk);
}

SEC("?tracepoint/syscalls/sys_exit_accept4")
int handle_accept4_exit(struct syscall_exit_ctx *ctx)
{
	return handle_accept(ctx->ret);
}

SEC("?tracepoint/syscalls/sys_exit_accept")
int handle_accept_exit(struct syscall_exit_ctx *ctx)
{
	return handle_accept(ctx->ret);
}

#endif
