// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The smallest witness of a kernel that does not run a tp_btf program for
 * every hit of its tracepoint: count inet_sock_set_state transitions and
 * tcp_destroy_sock calls of the client sockets towards one port, with
 * atomic adds, nothing else. run.sh compares the counts with tracefs's
 * own record of the same tracepoint (issue 22, item 2). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define DESTROYED 255	/* the key of tcp_destroy_sock's count */

/* oldstate * 16 + newstate -> transitions seen */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

static __always_inline void count(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&seen, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(on_state, const struct sock *sk, int oldstate, int newstate)
{
	if (sk->sk_protocol != IPPROTO_TCP || bpf_ntohs(sk->__sk_common.skc_dport) != PORT)
		return 0;
	count((oldstate & 15) * 16 + (newstate & 15));
	return 0;
}

SEC("tp_btf/tcp_destroy_sock")
int BPF_PROG(on_destroy, struct sock *sk)
{
	if (bpf_ntohs(sk->__sk_common.skc_dport) == PORT)
		count(DESTROYED);
	return 0;
}
