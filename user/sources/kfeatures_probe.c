// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The running kernel's features, probed once at start: its BTF (or --btf
 * FILE) for the tracepoints, /proc/kallsyms for tw_timer_handler, and
 * libbpf's probes (each loads a tiny program or map) for map types and
 * program types, and tiny programs of our own for helpers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
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

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						.off = (o), .imm = (i) })
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, (f))
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, (d), 0, 0, (i))
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, (d), (s), 0, 0)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, (d), 0, 0, (i))
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* Whether a program that calls the helpers loads: the verifier's own
 * answer. libbpf 1.1's helper probe reads the verifier's message instead,
 * and takes newer kernels' wording ("program of this type cannot use
 * helper", 6.12 on cgroup_skb) for a yes. 1 loads, 0 refused, -errno when
 * BPF cannot be used at all (no privilege). */
static int prog_loads(enum bpf_prog_type type, enum bpf_attach_type attach,
		      const struct bpf_insn *insns, size_t n)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach);
	int fd = bpf_prog_load(type, NULL, "GPL", insns, n, &opts);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EINVAL || errno == EACCES ? 0 : -errno;
}

/* call f; r0 = ret; exit */
static int helper_loads(enum bpf_prog_type type, enum bpf_attach_type attach, int f, int ret)
{
	const struct bpf_insn insns[] = { CALL(f), MOV_IMM(0, ret), EXIT() };

	return prog_loads(type, attach, insns, 3);
}

static bool tracing_helpers(struct kf_probe *p)
{
	/* task_pt_regs takes the task get_current_task_btf gives. */
	const struct bpf_insn regs[] = {
		CALL(BPF_FUNC_get_current_task_btf), MOV_REG(1, 0), CALL(BPF_FUNC_task_pt_regs),
		MOV_IMM(0, 0), EXIT(),
	};

	p->have[KF_HOOK_CURRENT_TASK] = probe_says_yes(
		helper_loads(BPF_PROG_TYPE_TRACEPOINT, 0, BPF_FUNC_get_current_task_btf, 0));
	return p->have[KF_HOOK_CURRENT_TASK] &&
	       probe_says_yes(prog_loads(BPF_PROG_TYPE_TRACEPOINT, 0, regs, 5));
}

static bool skb_current_helpers(void)
{
	const struct bpf_insn comm[] = {
		MOV_REG(1, 10), ADD_IMM(1, -16), MOV_IMM(2, 16), CALL(BPF_FUNC_get_current_comm),
		MOV_IMM(0, 1), EXIT(),
	};

	return probe_says_yes(helper_loads(BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS,
					   BPF_FUNC_get_current_pid_tgid, 1)) &&
	       probe_says_yes(helper_loads(BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS,
					   BPF_FUNC_get_current_task, 1)) &&
	       probe_says_yes(prog_loads(BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS, comm, 6));
}

/* A tracing program lets itself load at fentry (or fexit: at) of the
 * function fn of this kernel's BTF (6.18 here refuses every fentry and
 * fexit with EPERM; Debian's 6.1 and 6.12 allow them). */
static bool trampoline_loads(const struct btf *btf, const char *fn, enum bpf_attach_type at)
{
	/* fexit: with the call its program makes, bpf_get_func_ret (5.17;
	 * fexit itself is 5.5). r1 is the context. */
	const struct bpf_insn insns[] = {
		INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0), MOV_REG(2, 10), ADD_IMM(2, -8),
		CALL(BPF_FUNC_get_func_ret), MOV_IMM(0, 0), EXIT(),
	};
	int id = btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC), fd;
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = at, .attach_btf_id = id);
	bool ret = at == BPF_TRACE_FEXIT;

	if (id <= 0)
		return false;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", ret ? insns : insns + 4,
			   ret ? 6 : 2, &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* fentry on the TIME_WAIT functions: all in this kernel's BTF, and fentry
 * loads there. */
static bool tw_fentry(const struct btf *btf)
{
	if (btf__find_by_name_kind(btf, "tw_timer_handler", BTF_KIND_FUNC) <= 0 ||
	    (btf__find_by_name_kind(btf, "inet_twsk_hashdance", BTF_KIND_FUNC) <= 0 &&
	     btf__find_by_name_kind(btf, "inet_twsk_hashdance_schedule", BTF_KIND_FUNC) <= 0))
		return false;
	return trampoline_loads(btf, "inet_twsk_kill", BPF_TRACE_FENTRY);
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
	/* The kernel's own BTF only: a --btf file is for a kernel without it,
	 * where fentry cannot attach. */
	p->have[KF_HOOK_TW_FENTRY] = !btf_path && tw_fentry(btf);
	/* TCP's sends at fentry where the tracepoint is missing (6.12). */
	p->have[KF_HOOK_SENDMSG_FENTRY] = !btf_path && !p->have[KF_HOOK_SENDMSG_LOCKED] &&
					  trampoline_loads(btf, "tcp_sendmsg_locked", BPF_TRACE_FENTRY);
	/* Who took a listener's child, at accept's own return (6.1, 6.12).
	 * Proven to load, not to attach: tracer_attach_accept falls back to
	 * the accept() exits where the kernel refuses the attach. */
	p->have[KF_HOOK_ACCEPT_FEXIT] = !btf_path &&
					trampoline_loads(btf, "inet_csk_accept", BPF_TRACE_FEXIT);
	btf__free(btf);
	if (p->have[KF_HOOK_TW_TIMERS] && !kallsyms_has("tw_timer_handler"))
		p->have[KF_HOOK_TW_TIMERS] = false;
	p->have[KF_HOOK_RINGBUF] = probe_says_yes(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF,
									    NULL));
	p->have[KF_HOOK_TASK_HELPERS] = tracing_helpers(p);
	p->have[KF_HOOK_CGROUP_SOCK] =
		probe_says_yes(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SKB, NULL)) &&
		probe_says_yes(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SOCK, NULL)) &&
		probe_says_yes(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_SK_STORAGE, NULL));
	p->have[KF_HOOK_SKB_CURRENT] = p->have[KF_HOOK_CGROUP_SOCK] && skb_current_helpers();
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

int kf_bpf_refused(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);

	if (fd < 0)
		return -fd;
	close(fd);
	return 0;
}

bool kf_seccomp_filtered(void)
{
	char line[128];
	bool on = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8)) {
			on = atoi(line + 8) == 2;	/* SECCOMP_MODE_FILTER */
			break;
		}
	fclose(f);
	return on;
}
