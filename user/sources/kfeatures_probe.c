// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The running kernel's features, probed once at start: its BTF (or --btf
 * FILE) for the tracepoints, /proc/kallsyms for tw_timer_handler, and
 * libbpf's probes (each loads a tiny program or map) for map types,
 * program types and helpers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kfeatures_probe.h"

static bool kallsyms_has(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return false;
	/* An address of 0 is kptr_restrict hiding it: as good as missing. */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			found = addr != 0;
			break;
		}
	fclose(f);
	return found;
}

/* libbpf's probes answer 1 (there), 0 (not there) or -errno (could not
 * tell, e.g. no privilege): only a 0 turns a figure off, the load says the
 * rest. */
static bool probe_says_yes(int ret)
{
	return ret != 0;
}

int kf_probe_kernel(const char *btf_path, struct kf_probe *p)
{
	struct btf *btf = btf_path ? btf__parse(btf_path, NULL) : btf__load_vmlinux_btf();
	int err = libbpf_get_error(btf);

	memset(p, 0, sizeof(*p));
	if (err) {
		for (int h = 0; h < KF_HOOK_MAX; h++)
			p->have[h] = true;
		return err;
	}
	kf_probe_btf(btf, p);
	btf__free(btf);
	if (p->have[KF_HOOK_TW_TIMERS] && !kallsyms_has("tw_timer_handler"))
		p->have[KF_HOOK_TW_TIMERS] = false;
	p->have[KF_HOOK_RINGBUF] = probe_says_yes(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF,
									    NULL));
	p->have[KF_HOOK_CURRENT_TASK] =
		probe_says_yes(libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
						       BPF_FUNC_get_current_task_btf, NULL));
	p->have[KF_HOOK_TASK_HELPERS] = p->have[KF_HOOK_CURRENT_TASK] &&
		probe_says_yes(libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
						       BPF_FUNC_task_pt_regs, NULL));
	p->have[KF_HOOK_CGROUP_SOCK] =
		probe_says_yes(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SKB, NULL)) &&
		probe_says_yes(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SOCK, NULL)) &&
		probe_says_yes(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_SK_STORAGE, NULL));
	return 0;
}

const struct kf_plan *kf_plan(const char *btf_path)
{
	static struct kf_plan plan;
	static bool done;
	struct kf_probe p;
	int err;

	if (done)
		return &plan;
	done = true;
	err = kf_probe_kernel(btf_path, &p);
	kf_decide(&p, &plan);
	plan.probed = !err;
	return &plan;
}
