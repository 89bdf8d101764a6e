/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The probe of the running kernel behind lib/kfeatures.h's plan. */
#ifndef CONNSCOPE_KFEATURES_PROBE_H
#define CONNSCOPE_KFEATURES_PROBE_H

#include "kfeatures.h"

/* The whole probe of the running kernel: its BTF (btf_path when given:
 * --btf FILE, else /sys/kernel/btf/vmlinux), /proc/kallsyms and libbpf's
 * feature probes. Needs the privileges loading BPF needs. 0 or -errno
 * (no BTF to read). */
int kf_probe_kernel(const char *btf_path, struct kf_probe *p);

/* The process's plan: probed on the first call (btf_path as above), the
 * same plan after. Never NULL; if probing failed every hook counts as
 * there and loading says what is missing. */
const struct kf_plan *kf_plan(const char *btf_path);

/* bpf() itself refused (the smallest map create): EPERM, or a seccomp
 * profile's errno; 0 when allowed. */
int kf_bpf_refused(void);
/* A seccomp filter is on this process (/proc/self/status Seccomp: 2). */
bool kf_seccomp_filtered(void);

#endif
