// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The other tracer of tp_flap (run.sh): a program that does nothing, to
 * be attached to and detached from inet_sock_set_state over and over, so
 * the tracepoint's probe array is replaced while connscope's programs are
 * on it and a churn runs through it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/inet_sock_set_state")
int flap_state(void *ctx)
{
	return 0;
}
