/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* BPF-only helpers to read a struct sock and a task's fd table with CO-RE.
 *
 * trusted: sk is a pointer the verifier knows the type of (a tp_btf
 * argument), so a field is a plain load (which the JIT guards with an
 * exception-table entry); otherwise (classic tracepoints, a sock found
 * through a task's fd table) a probe read, a helper call each. Measured on
 * a loopback churn: the state program took 780 ns a run with probe reads
 * only, 528 with direct loads. Every caller passes a constant, so only one
 * of the two branches is compiled. */
#ifndef CONNSCOPE_SOCK_READ_BPF_H
#define CONNSCOPE_SOCK_READ_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "tcpstate.h"
#include "agent.bpf.h"

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif
#ifndef AF_UNIX
#define AF_UNIX 1
#endif
#define CS_S_IFMT   00170000
#define CS_S_IFSOCK 0140000

/* A field of p: a load where p is trusted, a probe read where not. */
#define SK_FIELD(trusted, p, f) ((trusted) ? (p)->f : BPF_CORE_READ(p, f))

/* The local port, host order (at any ->CLOSE transition skc_num is
 * already 0; tcp keeps inet_sport until the end). Always a probe read: the
 * verifier types a tp_btf sock as a struct sock, and an inet_sock field
 * lies beyond it. */
static __always_inline __u16 sk_local_port(const struct sock *sk)
{
	const struct inet_sock *inet = (const struct inet_sock *)sk;

	return bpf_ntohs(BPF_CORE_READ(inet, inet_sport));
}

/* The same from a typed sock (a tp_btf argument): skc_num, a plain load in
 * struct sock_common, holds that port wherever it is set (bound, connected,
 * a listener's child); the probe read only where it is 0 already (any
 * ->CLOSE, above). Every untraced TCP socket's state changes, sends and
 * receives ask it (seed_ports): a probe read each before. */
static __always_inline __u16 sk_local_port_btf(const struct sock *sk)
{
	__u16 num = sk->__sk_common.skc_num;

	return num ? num : sk_local_port(sk);
}

/* Fill t from the socket. */
static __always_inline void sk_read_tuple(const struct sock *sk, struct cs_tuple *t,
					  bool trusted)
{
	__u16 family = SK_FIELD(trusted, sk, __sk_common.skc_family);

	__builtin_memset(t, 0, sizeof(*t));
	t->family = family;
	t->netns = trusted ? sk->__sk_common.skc_net.net->ns.inum :
			     BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	t->sport = sk_local_port(sk);
	t->dport = bpf_ntohs(SK_FIELD(trusted, sk, __sk_common.skc_dport));
	if (family == AF_INET6 && trusted) {
		__builtin_memcpy(t->saddr, sk->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8, 16);
		__builtin_memcpy(t->daddr, sk->__sk_common.skc_v6_daddr.in6_u.u6_addr8, 16);
	} else if (family == AF_INET6) {
		/* &array: BPF_CORE_READ_INTO reads sizeof(*dst) bytes */
		BPF_CORE_READ_INTO(&t->saddr, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);
		BPF_CORE_READ_INTO(&t->daddr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	} else {
		__be32 s = SK_FIELD(trusted, sk, __sk_common.skc_rcv_saddr);
		__be32 d = SK_FIELD(trusted, sk, __sk_common.skc_daddr);

		__builtin_memcpy(t->saddr, &s, 4);
		__builtin_memcpy(t->daddr, &d, 4);
	}
}

/* Only TCP sockets enter the TCP books. The send and receive tracepoints
 * fire for every socket family and protocol, and an HTTP/3 server holds a
 * UDP socket on the same address and port as its TCP listener: without
 * this check the UDP socket matched the listener's seed and its datagrams
 * were counted as TCP requests. */
static __always_inline bool sk_is_tcp(const struct sock *sk, bool trusted)
{
	return SK_FIELD(trusted, sk, sk_protocol) == IPPROTO_TCP;
}

/* A read-only view of a TCP socket through a pointer the verifier types as
 * struct sock (a tp_btf or fentry argument of a TCP function): the kfunc
 * bpf_rdonly_cast (Linux 6.2; the verifier turns it into a register move,
 * and the loads through it are fault-checked), where bpf_skc_to_tcp_sock
 * is a helper call that checks what the hook guarantees already. Weak:
 * 6.1, which has it not, loads none of its callers (socket-storage
 * mode's, 6.3 and later). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

static __always_inline struct tcp_sock *tp_view(const struct sock *sk)
{
	return bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct tcp_sock));
}

/* The socket's own clock, cut to 32 bits: tcp_mstamp, the µs of the
 * packet it last sent or took in (tcp_mstamp_refresh, at every segment
 * received and every transmit), of the clock bpf_ktime_get_ns() reads.
 * Read at a send or receive, it is when that data left or came in: no
 * clock read of ours. 0 not TCP. */
static __always_inline __u32 sk_tcp_us(const struct sock *sk, bool trusted)
{
	if (trusted) {
		struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);

		return tp ? (__u32)tp->tcp_mstamp : 0;
	}
	if (!sk_is_tcp(sk, false))
		return 0;
	return (__u32)BPF_CORE_READ((const struct tcp_sock *)sk, tcp_mstamp);
}

/* What the application has read of a TCP connection since it began, in
 * bytes: bytes_received counts every in-order byte the socket took in
 * (the FIN's sequence number too), rcv_nxt - copied_seq what it has not
 * read yet. Reading the EOF moves copied_seq past the FIN (tcp_recvmsg):
 * that is no data. Every way of reading moves copied_seq (recv, read,
 * splice's tcp_read_sock); a peek does not. */
static __always_inline __u64 tp_read_pos(const struct tcp_sock *tp)
{
	__u32 unread = tp->rcv_nxt - tp->copied_seq;
	__u64 pos = tp->bytes_received - unread;

	if (!unread && (tp->inet_conn.icsk_inet.sk.__sk_common.skc_flags & (1UL << SOCK_DONE)))
		pos--;
	return pos;
}

/* Closed by the application but still alive in the kernel: no struct
 * socket any more and SOCK_DEAD set (sock_orphan()). A socket waiting in an
 * accept queue also has no struct socket, but is not dead. */
static __always_inline bool sk_is_orphan(const struct sock *sk, bool trusted)
{
	unsigned long flags = SK_FIELD(trusted, sk, __sk_common.skc_flags);

	return !SK_FIELD(trusted, sk, sk_socket) && (flags & (1UL << SOCK_DEAD));
}

/* A listener's child that accept() has not returned (yet): it waits in the
 * accept queue. accept() grafts a struct socket on the child (sock_graft()
 * in inet_accept()), and the application's close() takes it away again
 * only with SOCK_DEAD set (sock_orphan()). A child that ends in the queue
 * reaches CLOSE with neither: by a reset or a timeout (tcp_done() leaves it
 * queued, not dead), or when its listener closes (inet_child_forget() runs
 * ->disconnect(), hence CLOSE, before sock_orphan()). Meaningful on
 * passive children only. */
static __always_inline bool sk_unaccepted(const struct sock *sk, bool trusted)
{
	unsigned long flags = SK_FIELD(trusted, sk, __sk_common.skc_flags);

	return !SK_FIELD(trusted, sk, sk_socket) && !(flags & (1UL << SOCK_DEAD));
}

/* A TCP socket's cookie, made at its FIN_WAIT1 where nothing made one yet
 * (a census, a birth pass, a record): tcp_time_wait() copies the cookie
 * into the tw socket (inet_twsk_alloc) before tcp_done() runs the CLOSE,
 * so one first made for the CLOSE record is not the TIME_WAIT's, which
 * gets one of its own when a census asks. The books tell the TIME_WAIT
 * from another connection's at its tuple by it (review-s40 C1). Only an
 * active close enters TIME_WAIT, and always through FIN_WAIT1. sk is a
 * tp_btf argument (trusted): a plain load, and bpf_get_socket_cookie()
 * takes it.
 * A macro: as an inline function it moved the state programs' register
 * allocation, and 6.1's verifier walked 8,919 more instructions at load
 * (129,208 for the default's 10 programs, from 120,289); expanded, the
 * object code is the same as the two copies it replaces. */
#define SK_COOKIE_AT_FIN_WAIT1(sk, newstate, quic)					\
	do {										\
		if ((newstate) == TCP_FIN_WAIT1 && !(quic) &&				\
		    !(sk)->__sk_common.skc_cookie.counter)				\
			bpf_get_socket_cookie((void *)(sk));				\
	} while (0)

/* The sock behind fd in the current task's file table, or NULL when fd is
 * not a socket. fdt->fd[] is indexed by a runtime value, hence probe reads. */
static __always_inline struct sock *current_fd_sock(int fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *f = NULL;
	struct socket *sock;
	umode_t mode;

	if (!fdt || fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return NULL;
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	if ((mode & CS_S_IFMT) != CS_S_IFSOCK)
		return NULL;
	sock = BPF_CORE_READ(f, private_data);
	return sock ? BPF_CORE_READ(sock, sk) : NULL;
}

/* Owner identity of the current task's process (thread group). */
static __always_inline void owner_from_current(struct cs_owner *o, __u32 flags)
{
	struct task_struct *task = bpf_get_current_task_btf();

	struct task_struct *leader = task->group_leader;	/* trusted: plain loads */
	__u64 start = leader->start_boottime;

	o->tgid = agent_current_tgid();
	o->flags = flags;
	/* /proc/PID/stat field 22 is start_boottime in ticks: cut to those. */
	o->start_ns = start - start % CS_TICK_NS;
	/* comm is NUL-terminated within its 16 bytes (set_task_comm). */
	__builtin_memcpy(o->comm, leader->comm, sizeof(o->comm));
}

#endif
