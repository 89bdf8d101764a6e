/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The traffic of a connection: bytes and turns (requests) from the send
 * and receive tracepoints, and TCP's reads at tcp_rcv_space_adjust. Part
 * of tcpstate.bpf.c (included there, after the state programs), in a file
 * of its own by concern. */

/* A new connection's traffic, from .rodata: not a zeroed copy on the
 * send/receive program's stack, which has no room left. */
static const struct cs_conn_io io_zero = {};

/* Every send and receive on every socket passes here: a lookup in the
 * owner map and a return for all but the traced ones. */
static __always_inline int count_io(const struct sock *sk, int ret, __u8 dir, bool trusted)
{
	__u64 key = (__u64)sk;
	struct cs_conn_io *io;

	if (ret <= 0)
		return 0;
	if (!bpf_map_lookup_elem(&owners, &key)) {
		/* A connection held since before we attached sends without a
		 * state change: adopt its seed here. */
		const struct inet_sock *inet = (const struct inet_sock *)sk;
		__u16 lport = bpf_ntohs(BPF_CORE_READ(inet, inet_sport));
		struct cs_owner *seed;
		struct cs_tuple t;

		if (!seed_port(lport) || !sk_is_tcp(sk, trusted))
			return 0;
		sk_read_tuple(sk, &t, trusted);
		seed = bpf_map_lookup_elem(&seeds, &t);
		if (!seed)
			return 0;
		int state = BPF_CORE_READ(sk, __sk_common.skc_state);

		/* The seed's entry itself, not a copy on the stack (this
		 * program has no room for one); deleted once it is used. */
		owner_put(key, seed);
		emit(sk, seed, &t, CS_EV_ADOPT, state, state, CS_F_NEW_OWNER, 0, trusted);
		bpf_map_delete_elem(&seeds, &t);
	}
	io = bpf_map_lookup_elem(&conn_io, &key);
	if (!io) {
		bpf_map_update_elem(&conn_io, &key, &io_zero, BPF_NOEXIST);
		io = bpf_map_lookup_elem(&conn_io, &key);
		if (!io)
			return 0;
	}
	io_add(io, sk, ret, dir, trusted);
	return 0;
}

#define MSG_PEEK_FLAG 2

SEC("?tp_btf/sock_send_length")
int BPF_PROG(handle_send_btf, struct sock *sk, int ret, int flags)
{
	/* Where TCP's sends are counted at tcp_sendmsg_locked
	 * (handle_sendmsg_btf), this program is loaded only for the
	 * kernel's QUIC sockets. */
	if (sk_mode)
		return send_wseq && sk_is_tcp(sk, true) ? 0 : count_io_sk(sk, ret, CS_DIR_SEND);
	return count_io(sk, ret, CS_DIR_SEND, true);
}

SEC("?tp_btf/tcp_sendmsg_locked")
int BPF_PROG(handle_sendmsg_btf, struct sock *sk)
{
	return count_send_sk(sk);
}

/* The same where the kernel has no such tracepoint but lets fentry load
 * (Debian's 6.12): once a call, before it copies anything, with the
 * socket's lock held (tcp_sendmsg_locked's contract), so each call's
 * bytes are found at the next look as the tracepoint's chunks are. */
SEC("?fentry/tcp_sendmsg_locked")
int BPF_PROG(handle_sendmsg_fentry, struct sock *sk)
{
	return count_send_sk(sk);
}

SEC("?tp_btf/sock_recv_length")
int BPF_PROG(handle_recv_btf, struct sock *sk, int ret, int flags)
{
	/* A peek reads nothing away: the same bytes come again. */
	if (flags & MSG_PEEK_FLAG)
		return 0;
	/* Socket-storage mode reads TCP's through tcp_rcv_space_adjust
	 * (handle_rcv_space_btf); this program is loaded there only for the
	 * kernel's QUIC sockets. */
	if (sk_mode)
		return sk_is_tcp(sk, true) ? 0 : count_io_sk(sk, ret, CS_DIR_RECV);
	return count_io(sk, ret, CS_DIR_RECV, true);
}

SEC("?tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(handle_rcv_space_btf, struct sock *sk)
{
	return count_rx_sk(sk);
}

SEC("?tracepoint/sock/sock_send_length")
int handle_send_tp(struct trace_event_raw_sock_msg_length *ctx)
{
	/* Linux < 6.3 has no such record: the loader leaves this program out
	 * there, and this keeps its CO-RE reads from failing the load. */
	if (!bpf_core_type_exists(struct trace_event_raw_sock_msg_length))
		return 0;
	return count_io(ctx->sk, ctx->ret, CS_DIR_SEND, false);
}

SEC("?tracepoint/sock/sock_recv_length")
int handle_recv_tp(struct trace_event_raw_sock_msg_length *ctx)
{
	if (!bpf_core_type_exists(struct trace_event_raw_sock_msg_length))
		return 0;
	if (ctx->flags & MSG_PEEK_FLAG)
		return 0;
	return count_io(ctx->sk, ctx->ret, CS_DIR_RECV, false);
}
