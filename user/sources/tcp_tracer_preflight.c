// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The tracer's preflight: what can be checked before any BPF is loaded
 * (privileges, kernel BTF, tracefs, a seccomp or lockdown refusal), each
 * failure one message that names the problem and the fix. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "kfeatures_probe.h"
#include "tcp_tracer.h"
#include "text_wrap.h"

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"
#define CAP_BPF_BIT 39
#define CAP_PERFMON_BIT 38
#define CAP_SYS_ADMIN_BIT 21

static uint64_t effective_caps(void)
{
	char line[256];
	uint64_t caps = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %lx", &caps) == 1)
			break;
	fclose(f);
	return caps;
}

/* The tracefs root: CONNSCOPE_TRACEFS for tests, else the usual mount,
 * mounted here when absent (KERNEL-FACTS: it may not be). */
static const char *tracefs_root(void)
{
	const char *env = getenv("CONNSCOPE_TRACEFS");
	struct stat st;

	if (env)
		return env;
	if (stat("/sys/kernel/tracing/events", &st) && errno == ENOENT)
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	return "/sys/kernel/tracing";
}

int tracer_preflight(const struct tracer_opts *o)
{
	uint64_t caps = effective_caps();
	char path[512];
	struct stat st;
	int err;

	bool may_bpf = ((caps >> CAP_SYS_ADMIN_BIT) & 1) ||
		       (((caps >> CAP_BPF_BIT) & 1) && ((caps >> CAP_PERFMON_BIT) & 1));

	/* Root without its capabilities (setpriv, a container's bounding
	 * set): said before the feature probes, whose loads would fail too
	 * and read as a kernel without BPF. */
	if (geteuid() == 0 && !may_bpf) {
		text_err("connscope: cannot load the BPF programs: %s (run as root with "
			 "its capabilities: CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN; this "
			 "root has neither)\n", strerror(EPERM));
		return 1;
	}
	if (geteuid() != 0 && !may_bpf) {
		text_err("connscope: loading BPF programs needs root (or CAP_BPF, "
			 "CAP_PERFMON and CAP_DAC_READ_SEARCH, plus CAP_SYS_PTRACE for other "
			 "processes' fds and CAP_NET_ADMIN for QUIC on the wire): run it "
			 "with sudo\n");
		return 1;
	}
	if (o->btf_path) {
		if (stat(o->btf_path, &st)) {
			text_err("connscope: cannot read BTF file %s: %s: pass a vmlinux BTF "
				 "file for this kernel (e.g. from BTFHub)\n",
				o->btf_path, strerror(errno));
			return 1;
		}
		/* Parsed here too: libbpf would fail later with an errno that
		 * says nothing about the file (4001, EIO). */
		{
			libbpf_print_fn_t was = libbpf_set_print(NULL);	/* one message: ours */
			struct btf *btf = btf__parse(o->btf_path, NULL);

			libbpf_set_print(was);
			if (!btf) {
				text_err("connscope: --btf %s is not a BTF file: pass this "
					 "kernel's vmlinux BTF (/sys/kernel/btf/vmlinux on the "
					 "kernel itself, or from BTFHub)\n", o->btf_path);
				return 1;
			}
			btf__free(btf);
		}
	} else if (stat(KERNEL_BTF, &st)) {
		text_err("connscope: kernel BTF not found at %s: connscope needs a kernel "
			 "built with CONFIG_DEBUG_INFO_BTF=y, or --btf FILE with this "
			 "kernel's BTF (e.g. from BTFHub)\n", KERNEL_BTF);
		return 1;
	}
	/* A container runtime's default seccomp profile refuses bpf() to
	 * anything without CAP_SYS_ADMIN: every feature probe then reads as
	 * missing, so the cause is told before the first of them. */
	err = kf_bpf_refused();
	if ((err == EPERM || err == ENOSYS) && kf_seccomp_filtered()) {
		text_err("connscope: bpf() is refused (%s) by this process's seccomp filter "
			 "(a container runtime's default profile allows bpf() and "
			 "perf_event_open() only with CAP_SYS_ADMIN): run it with the profile "
			 "dist/container/seccomp.sh writes, which allows them to CAP_BPF and "
			 "CAP_PERFMON (podman/docker --security-opt seccomp=FILE; Kubernetes "
			 "seccompProfile Localhost; docs/image.md)\n", strerror(err));
		return 1;
	}
	if (!kf_has(kf_plan(o->btf_path), KF_HOOK_RINGBUF)) {
		text_err("connscope: this kernel has no BPF ring buffer "
			 "(BPF_MAP_TYPE_RINGBUF): connscope needs Linux >= 5.11\n");
		return 1;
	}
	if (!kf_has(kf_plan(o->btf_path), KF_HOOK_CURRENT_TASK)) {
		text_err("connscope: this kernel has no BPF helper bpf_get_current_task_btf "
			 "(it finds accepted sockets): connscope needs Linux >= 5.11\n");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/events/sock/inet_sock_set_state", tracefs_root());
	if (stat(path, &st) && errno == EACCES) {
		/* tracefs is root's (0700): without root, CAP_DAC_READ_SEARCH. */
		text_err("connscope: cannot read tracefs (%s: %s): run as root or give "
			 "CAP_DAC_READ_SEARCH too\n", path, strerror(errno));
		return 1;
	}
	if (stat(path, &st)) {
		text_err("connscope: tracepoint sock:inet_sock_set_state not found (%s: %s): "
			 "it needs Linux >= 4.16 with tracefs mounted at /sys/kernel/tracing\n",
			path, strerror(errno));
		return 1;
	}
	return 0;
}
