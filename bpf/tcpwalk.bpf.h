/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The census walk (#23 item 6): the birth pass (iter/tcp, birth_pass in
 * tcpstate_sk.bpf.h) already visits every TCP socket of the namespace each
 * interval, TIME_WAIT and request socks too; with walk_census set it also
 * writes each one's struct cs_walk_sock to its seq_file, what a sock_diag
 * dump would say of it, so the agent's census needs one walk of the
 * host's tables an interval, not two. Each field is computed as the
 * kernel's inet_diag.c / tcp_diag.c compute it (inet_sk_diag_fill,
 * inet_twsk_diag_fill, inet_req_diag_fill, tcp_diag_get_info), except the
 * timer's expiry, left in jiffies: a program cannot know HZ here
 * (CONFIG_HZ through __kconfig needs a kernel config file the guests do
 * not have), the agent learns it from hz_sample (below). */
#ifndef CONNSCOPE_TCPWALK_BPF_H
#define CONNSCOPE_TCPWALK_BPF_H

#include "tcpwalk.h"

/* Set by the agent before a pass (the skeleton's mmapped .bss): 1, write
 * every socket's record. */
volatile __u32 walk_census;

/* hz_sample's clock pair: the jiffies read between two reads of the clock
 * the agent's now_ns() reads too (CLOCK_MONOTONIC), so the agent knows how
 * close together they were. */
volatile __u64 hz_ns_before, hz_jiffies, hz_ns_after;

/* inet_connection_sock before 6.15 (commit "tcp: remove icsk->icsk_timeout"
 * moved the expiry to icsk_retransmit_timer.expires). */
struct inet_connection_sock___timeout {
	unsigned long icsk_timeout;
} __attribute__((preserve_access_index));

/* Before 6.18 sock_i_ino() read the inode through sk_socket; since, the
 * socket caches it in sk_ino. */
struct sock___ino {
	unsigned long sk_ino;
} __attribute__((preserve_access_index));

#define CS_ICSK_TIME_RETRANS	1
#define CS_ICSK_TIME_PROBE0	3
#define CS_ICSK_TIME_LOSS_PROBE	5
#define CS_ICSK_TIME_REO_TIMEOUT 6

static __always_inline __s32 walk_left(unsigned long expires, __u64 now)
{
	long d = (long)(expires - (unsigned long)now);

	/* sock_diag clamps a timer past due to 0 (jiffies_delta_to_msecs). */
	return d < 0 ? 0 : d > 0x7fffffff ? 0x7fffffff : (__s32)d;
}

static __always_inline void walk_tuple(struct cs_walk_sock *w, const struct sock_common *skc)
{
	w->family = skc->skc_family;
	w->sport = skc->skc_num;
	w->dport = bpf_ntohs(skc->skc_dport);
	w->bound_if = skc->skc_bound_dev_if;
	if (w->family == AF_INET6) {
		__builtin_memcpy(w->saddr, skc->skc_v6_rcv_saddr.in6_u.u6_addr8, 16);
		__builtin_memcpy(w->daddr, skc->skc_v6_daddr.in6_u.u6_addr8, 16);
	} else {
		__be32 s = skc->skc_rcv_saddr, d = skc->skc_daddr;

		__builtin_memcpy(w->saddr, &s, 4);
		__builtin_memcpy(w->daddr, &d, 4);
	}
}

/* A full TCP socket: inet_sk_diag_fill's timer, tcp_diag_get_info's
 * queues, sock_i_ino's inode. */
static __always_inline void walk_full(struct cs_walk_sock *w, struct tcp_sock *tp, __u32 uid,
				      __u64 now)
{
	struct inet_connection_sock *icsk = &tp->inet_conn;
	struct sock *sk = (struct sock *)tp;
	__u8 pending = icsk->icsk_pending;
	unsigned long timeout;

	w->state = sk->__sk_common.skc_state;
	if (bpf_core_field_exists(((struct inet_connection_sock___timeout *)0)->icsk_timeout))
		timeout = BPF_CORE_READ((struct inet_connection_sock___timeout *)icsk, icsk_timeout);
	else
		timeout = icsk->icsk_retransmit_timer.expires;
	if (pending == CS_ICSK_TIME_RETRANS || pending == CS_ICSK_TIME_REO_TIMEOUT ||
	    pending == CS_ICSK_TIME_LOSS_PROBE) {
		w->timer = 1;
		w->retrans = icsk->icsk_retransmits;
		w->expires_j = walk_left(timeout, now);
	} else if (pending == CS_ICSK_TIME_PROBE0) {
		w->timer = 4;
		w->retrans = icsk->icsk_probes_out;
		w->expires_j = walk_left(timeout, now);
	} else if (sk->sk_timer.entry.pprev) {	/* timer_pending(&sk->sk_timer) */
		w->timer = 2;
		w->retrans = icsk->icsk_probes_out;
		w->expires_j = walk_left(sk->sk_timer.expires, now);
	}
	if (w->state == TCP_LISTEN) {
		w->rqueue = sk->sk_ack_backlog;
		w->wqueue = sk->sk_max_ack_backlog;
	} else {
		int rq = (int)(tp->rcv_nxt - tp->copied_seq);

		w->rqueue = rq < 0 ? 0 : rq;
		w->wqueue = tp->write_seq - tp->snd_una;
	}
	w->uid = uid;
	if (bpf_core_field_exists(((struct sock___ino *)0)->sk_ino)) {
		w->inode = BPF_CORE_READ((struct sock___ino *)sk, sk_ino);
	} else {
		struct socket *sock = sk->sk_socket;

		/* SOCK_INODE(): the inode beside the socket in socket_alloc */
		if (sock)
			w->inode = BPF_CORE_READ((struct socket_alloc *)sock, vfs_inode.i_ino);
	}
}

/* One socket's record to the pass's seq_file. */
static __always_inline void walk_emit(struct bpf_iter__tcp *ctx, struct sock_common *skc)
{
	struct tcp_timewait_sock *tw;
	struct tcp_request_sock *req;
	struct cs_walk_sock w = {};
	struct tcp_sock *tp;
	__u64 now = bpf_jiffies64();

	walk_tuple(&w, skc);
	w.cookie = bpf_get_socket_cookie(skc);
	tp = bpf_skc_to_tcp_sock(skc);
	if (tp) {
		walk_full(&w, tp, ctx->uid, now);
	} else if ((tw = bpf_skc_to_tcp_timewait_sock(skc))) {
		w.state = tw->tw_sk.tw_substate;
		w.timer = 3;
		w.expires_j = walk_left(tw->tw_sk.tw_timer.expires, now);
	} else if ((req = bpf_skc_to_tcp_request_sock(skc))) {
		w.state = TCP_SYN_RECV;
		w.timer = 1;
		w.retrans = req->req.req.num_retrans;
		w.expires_j = walk_left(req->req.req.rsk_timer.expires, now);
	} else {
		return;
	}
	bpf_seq_write(ctx->meta->seq, &w, sizeof(w));
}

/* Run by the agent (BPF_PROG_TEST_RUN, attached to nothing) twice a
 * fraction of a second apart: the jiffies and the clock read together
 * each time, from which it learns the kernel's HZ (jiffies_hz.c) before
 * its first interval's census, where the walk then serves. */
SEC("?raw_tp")
int hz_sample(void *ctx)
{
	hz_ns_before = bpf_ktime_get_ns();
	hz_jiffies = bpf_jiffies64();
	hz_ns_after = bpf_ktime_get_ns();
	return 0;
}

#endif
