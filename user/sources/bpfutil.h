/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Small helpers over libbpf shared by the BPF units' loaders. */
#ifndef CONNSCOPE_BPFUTIL_H
#define CONNSCOPE_BPFUTIL_H

#include <stdint.h>

/* out[k] = the sum over CPUs of key k of a per-CPU array of u64 counters,
 * for k < nkeys. Keys that cannot be read count 0. 0 or -errno. */
int bpf_percpu_sum(int map_fd, uint32_t nkeys, uint64_t *out);

#endif
