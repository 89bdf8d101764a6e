// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sockops_ab: the bench's two ways of following TCP state changes, side by
 * side (issue #23, "A cgroup-scoped design (sock_ops), measured" in
 * docs/performance-kernel.md). Not part of connscope.
 *
 *  - tp_btf on sock:inet_sock_set_state, a main program and its nested
 *    twin (the kernel skips a tracing program already running on that
 *    CPU; the twin takes what the main one did not note), as
 *    bpf/tcpstate.bpf.c does. It runs for every socket of the machine; a
 *    socket is traced when it has storage, made at CLOSE->SYN_SENT and
 *    CLOSE->LISTEN in the target network namespace (a listener's clones
 *    into its children).
 *  - sock_ops attached to one cgroup: only that cgroup's sockets run it.
 *    BPF_SOCK_OPS_STATE_CB_FLAG is set at TCP_CONNECT_CB,
 *    ACTIVE/PASSIVE_ESTABLISHED_CB and TCP_LISTEN_CB; the storage is made
 *    at connect and listen (cloned into children).
 *
 * Both carry the same body when `body` is set: storage get (create at the
 * socket's birth), a clock read at ESTABLISHED, a 200-byte ring record at
 * CLOSE and the storage's delete. Each also counts every transition it
 * sees (old x new) so that the two can be compared over one workload. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define NST 16			/* TCP states 1..12 fit */
#define NOPS 32			/* BPF_SOCK_OPS_* callbacks */
#define IPPROTO_TCP_ 6

enum { H_TP, H_TP_NESTED, H_SOCKOPS, H_N };

const volatile __u32 netns_ino = 0;	/* the tracepoint's target namespace */
const volatile bool body = false;	/* the state program's work, or counts alone */
const volatile bool count_all = false;	/* count every socket of netns_ino, traced or not,
					 * every sock_ops callback and nested run */
const volatile __u32 spin = 0;		/* bpf_loop iterations added in task context (the
					 * recursion check: a longer window for a softirq) */
const volatile bool listen_flag = true;	/* STATE_CB asked for at TCP_LISTEN_CB (false: as for a
					 * listener older than the attach) */

/* Transitions seen: hook * NST * NST + old * NST + new. A map, not an
 * array in .bss: the lookup bounds the index for every verifier (6.1's and
 * clang's arithmetic disagree on a computed one). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, H_N * NST * NST);
	__type(key, __u32);
	__type(value, __u64);
} trans SEC(".maps");

/* Read by the loader through the skeleton's mmap: */
__u64 ops[NOPS];		/* sock_ops callbacks, by op */
__u64 sockops_nested;		/* a sock_ops run begun while another ran on that CPU */
__u32 so_off;			/* set by cover: sock_ops does nothing (as before an attach) */
__u64 adopted;			/* sockets given STATE_CB by the iterator */
__s64 adopt_err;		/* bpf_setsockopt's last error there (6.1: -EINVAL) */
__u64 records, records_lost;

struct sk_rec {
	__u64 born_ns;
	__u64 est_ns;
	__u64 cookie;
	__u32 transitions;
	__u32 last;
};

/* One storage a hook, so that both can be attached at once. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct sk_rec);
} socks_tp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct sk_rec);
} socks_so SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/* As big as connscope's cs_event. */
struct end_rec {
	__u64 cookie, born_ns, est_ns, end_ns;
	__u32 oldstate, newstate, transitions, hook;
	__u8 pad[160];
};

static __always_inline void count(int hook, int old, int new)
{
	__u32 k = (hook * NST + (__u32)old) * NST + (__u32)new;
	__u64 *v;

	if ((__u32)old >= NST || (__u32)new >= NST)
		return;
	v = bpf_map_lookup_elem(&trans, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
}

/* The body, once the socket is known to be traced: its storage `s`. */
static __always_inline void end_record(struct sk_rec *s, int old, int new, int hook, __u64 now)
{
	struct end_rec *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&records_lost, 1);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->cookie = s->cookie;
	e->born_ns = s->born_ns;
	e->est_ns = s->est_ns;
	e->end_ns = now;
	e->oldstate = old;
	e->newstate = new;
	e->transitions = s->transitions;
	e->hook = hook;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	__sync_fetch_and_add(&records, 1);
}

static __always_inline void on_change(struct sk_rec *s, int new)
{
	s->transitions++;
	s->last = new;
	if (new == TCP_ESTABLISHED)
		s->est_ns = bpf_ktime_get_ns();
}

static long spin_one(__u64 i, void *ctx)
{
	return 0;
}

/* The recursion check's window: the transitions made in a task (connect,
 * close()) run longer by `spin` empty iterations, so that a softirq's
 * state change on that CPU lands inside them more often. */
static __always_inline void spin_in_task(int old, int new)
{
	if (spin && ((old == TCP_CLOSE && new == TCP_SYN_SENT) ||
		     (old == TCP_ESTABLISHED && new == TCP_FIN_WAIT1) ||
		     (old == TCP_CLOSE_WAIT && new == TCP_LAST_ACK)))
		bpf_loop(spin, spin_one, NULL, 0);
}

/* ---- tracepoint pair ---- */

struct nest_key {
	__u64 sk;
	__u32 trans;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nest_key[2]);
} nest_done SEC(".maps");

static __always_inline void tp_state(struct sock *sk, int old, int new, int hook)
{
	struct sk_rec *s;
	bool birth;

	if (sk->sk_protocol != IPPROTO_TCP_)
		return;
	if (count_all && sk->__sk_common.skc_net.net->ns.inum == netns_ino)
		count(hook, old, new);
	if (!body)
		return;
	birth = old == TCP_CLOSE && (new == TCP_SYN_SENT || new == TCP_LISTEN);
	/* An untraced socket: one load (connscope's early return). */
	if (!birth && !sk->sk_bpf_storage)
		return;
	if (birth) {
		if (sk->__sk_common.skc_net.net->ns.inum != netns_ino)
			return;
		s = bpf_sk_storage_get(&socks_tp, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!s)
			return;
		s->born_ns = bpf_ktime_get_ns();
		s->cookie = bpf_get_socket_cookie(sk);
		s->est_ns = 0;
		s->transitions = 0;
	} else {
		s = bpf_sk_storage_get(&socks_tp, sk, 0, 0);
		if (!s)
			return;
	}
	if (!count_all)
		count(hook, old, new);
	on_change(s, new);
	if (new == TCP_CLOSE) {
		end_record(s, old, new, hook, bpf_ktime_get_ns());
		bpf_sk_storage_delete(&socks_tp, sk);
	}
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(handle_state_tp, struct sock *sk, int oldstate, int newstate)
{
	struct nest_key *d;
	__u32 zero = 0;

	tp_state(sk, oldstate, newstate, H_TP);
	spin_in_task(oldstate, newstate);
	d = bpf_map_lookup_elem(&nest_done, &zero);
	if (d) {
		d[1] = d[0];
		d[0].sk = (__u64)sk;
		d[0].trans = oldstate << 8 | newstate;
	}
	return 0;
}

/* Attached after handle_state_tp: what it finds not noted, the main
 * program was skipped for (it was running on this CPU). */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(handle_state_tp_nested, struct sock *sk, int oldstate, int newstate)
{
	__u32 zero = 0, t = oldstate << 8 | newstate;
	struct nest_key *d = bpf_map_lookup_elem(&nest_done, &zero);

	if (!d)
		return 0;
	if (d[0].sk == (__u64)sk && d[0].trans == t) {
		d[0].sk = 0;
		return 0;
	}
	if (d[1].sk == (__u64)sk && d[1].trans == t) {
		d[1].sk = 0;
		return 0;
	}
	tp_state(sk, oldstate, newstate, H_TP_NESTED);
	return 0;
}

/* ---- sock_ops ---- */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} so_depth SEC(".maps");

static __always_inline void so_body(struct bpf_sock_ops *skops, __u32 op)
{
	struct bpf_sock *sk = skops->sk;
	struct sk_rec *s;
	int old, new;

	if (!sk)
		return;
	switch (op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		if (op == BPF_SOCK_OPS_TCP_LISTEN_CB && !listen_flag)
			return;
		if (op == BPF_SOCK_OPS_TCP_CONNECT_CB)
			spin_in_task(TCP_CLOSE, TCP_SYN_SENT);
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					  BPF_SOCK_OPS_STATE_CB_FLAG);
		if (!body)
			return;
		s = bpf_sk_storage_get(&socks_so, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!s)
			return;
		s->born_ns = bpf_ktime_get_ns();
		s->cookie = bpf_get_socket_cookie(skops);
		s->est_ns = 0;
		s->transitions = 0;
		return;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		/* A child of a listener that had none, or a connect the
		 * program was not attached for yet. */
		if (!(skops->bpf_sock_ops_cb_flags & BPF_SOCK_OPS_STATE_CB_FLAG))
			bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
						  BPF_SOCK_OPS_STATE_CB_FLAG);
		return;
	case BPF_SOCK_OPS_STATE_CB:
		old = skops->args[0];
		new = skops->args[1];
		count(H_SOCKOPS, old, new);
		spin_in_task(old, new);
		if (!body)
			return;
		s = bpf_sk_storage_get(&socks_so, sk, 0, 0);
		if (!s)
			return;
		on_change(s, new);
		if (new == TCP_CLOSE) {
			end_record(s, old, new, H_SOCKOPS, bpf_ktime_get_ns());
			bpf_sk_storage_delete(&socks_so, sk);
		}
		return;
	}
}

SEC("sockops")
int handle_sockops(struct bpf_sock_ops *skops)
{
	__u32 op = skops->op, zero = 0;
	__u32 *depth;

	if (so_off)
		return 1;
	/* The cost runs (count_all off) run the body alone. */
	if (!count_all) {
		so_body(skops, op);
		return 1;
	}
	if (op < NOPS)
		__sync_fetch_and_add(&ops[op], 1);
	depth = bpf_map_lookup_elem(&so_depth, &zero);
	if (!depth)
		return 1;
	/* No per-program recursion guard on cgroup programs: a softirq's run
	 * over a task's on the same CPU shows here. */
	if (*depth)
		__sync_fetch_and_add(&sockops_nested, 1);
	*depth += 1;
	so_body(skops, op);
	*depth -= 1;
	return 1;
}

/* ---- connections older than the attach ---- */

#define SOL_TCP_ 6

/* A tcp iterator (connscope's birth pass is one) asking STATE_CB for every
 * full TCP socket of its namespace: sockets made before sock_ops was
 * attached get no callback that could set it. The iterator holds each
 * socket's lock, which bpf_setsockopt needs. */
SEC("iter/tcp")
int adopt_tcp(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp;
	int flags;
	long err;

	if (!skc)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;
	flags = tp->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_STATE_CB_FLAG;
	err = bpf_setsockopt(tp, SOL_TCP_, TCP_BPF_SOCK_OPS_CB_FLAGS, &flags, sizeof(flags));
	if (!err)
		__sync_fetch_and_add(&adopted, 1);
	else
		adopt_err = err;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
