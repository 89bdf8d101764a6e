// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Programs are attached one by one: a syscall this kernel lacks (an old
 * one like creat, or a new one like openat2) costs its events, not the
 * run, and is named in the report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bpfutil.h"
#include "fd_tracer.h"
#include "kfeatures_probe.h"
#include "fdtrack.skel.h"
#include "pidns.h"
#include "text_wrap.h"

int fd_tracer_open(struct fd_tracer *t, struct ring_buffer **rb, ring_buffer_sample_fn on_event,
		   ring_buffer_sample_fn on_snap, void *ctx, bool all, int targets_fd)
{
	struct bpf_program *prog;
	int err, n = 0;

	memset(t, 0, sizeof(*t));
	if (!kf_has(kf_plan(NULL), KF_HOOK_TASK_HELPERS)) {
		text_err("connscope: fd tracking needs %s\n",
			 kf_figure(KF_FIG_FD_TRACKING)->needs);
		return -ENOTSUP;
	}
	t->skel = fdtrack_bpf__open();
	if (!t->skel)
		return -errno;
	t->skel->rodata->filter_tgid = !all;
	t->skel->rodata->agent_pidns_ino = pidns_bpf_ino();
	/* A tracepoint this kernel lacks is left out before the load (it
	 * would fail it), and named like one that failed to attach. */
	bpf_object__for_each_program(prog, t->skel->obj) {
		const char *sec = bpf_program__section_name(prog);
		char path[256];

		if (!strncmp(sec, "tracepoint/", 11)) {
			snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s", sec + 11);
			if (access(path, F_OK) && access("/sys/kernel/tracing/events", F_OK) == 0)
				bpf_program__set_autoload(prog, false);
		}
	}
	bpf_program__set_autoload(t->skel->progs.handle_exec_btf,
				  kf_has(kf_plan(NULL), KF_HOOK_EXEC));
	/* The tcpstate unit's filter, where there is one: processes that join
	 * it (children, --comm, --cgroup) have their fds traced too. */
	err = targets_fd >= 0 ? bpf_map__reuse_fd(t->skel->maps.fd_targets, targets_fd) : 0;
	if (!err)
		err = fdtrack_bpf__load(t->skel);
	if (err) {
		text_err("connscope: cannot load the fd tracking programs: %s (run with -v "
			 "for the verifier's log)\n", strerror(-err));
		goto fail;
	}
	bpf_object__for_each_program(prog, t->skel->obj)
		n++;
	t->links = calloc(n, sizeof(*t->links));
	if (!t->links) {
		err = -ENOMEM;
		goto fail;
	}
	bpf_object__for_each_program(prog, t->skel->obj) {
		struct bpf_link *l = bpf_program__autoload(prog) ? bpf_program__attach(prog) : NULL;

		if (!l) {
			size_t used = strlen(t->failed_names);

			t->failed++;
			snprintf(t->failed_names + used, sizeof(t->failed_names) - used, "%s%s",
				 used ? "," : "", bpf_program__name(prog));
			continue;
		}
		t->links[t->nlinks++] = l;
		t->attached++;
	}
	if (!t->attached) {
		err = -ENOENT;
		fprintf(stderr, "connscope: no fd tracking program could attach (syscall "
				"tracepoints missing?)\n");
		goto fail;
	}
	if (*rb) {
		err = ring_buffer__add(*rb, bpf_map__fd(t->skel->maps.fd_events), on_event, ctx);
	} else {
		*rb = ring_buffer__new(bpf_map__fd(t->skel->maps.fd_events), on_event, ctx, NULL);
		err = *rb ? 0 : -errno;
	}
	if (!err)
		err = ring_buffer__add(*rb, bpf_map__fd(t->skel->maps.fd_snaps), on_snap, ctx);
	if (err) {
		fprintf(stderr, "connscope: cannot read the fd ring buffers: %s\n", strerror(-err));
		goto fail;
	}
	return 0;
fail:
	fd_tracer_close(t);
	return err;
}

int fd_tracer_add_target(struct fd_tracer *t, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (!t->skel)
		return -ENOENT;
	return bpf_map_update_elem(bpf_map__fd(t->skel->maps.fd_targets), &key, &one, BPF_ANY);
}

int fd_tracer_stats(struct fd_tracer *t, uint64_t out[FD_STAT_MAX])
{
	/* Not opened: fds from /proc listings alone, nothing counted here. */
	if (!t->skel) {
		memset(out, 0, FD_STAT_MAX * sizeof(out[0]));
		return 0;
	}
	return bpf_percpu_sum(bpf_map__fd(t->skel->maps.fd_stats), FD_STAT_MAX, out);
}

int fd_tracer_stack(struct fd_tracer *t, int stack_id, uint64_t *ips, int max)
{
	uint64_t frames[FD_STACK_DEPTH] = { 0 };
	__u32 key = stack_id;
	int n = 0;

	if (stack_id < 0 || bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.fd_stacks), &key, frames))
		return 0;
	while (n < max && n < FD_STACK_DEPTH && frames[n]) {
		ips[n] = frames[n];
		n++;
	}
	return n;
}

void fd_tracer_count_errors(struct fd_tracer *t)
{
	if (t->skel)
		t->skel->bss->count_errors = true;
}

int fd_tracer_errors(struct fd_tracer *t, pid_t pid, uint64_t *emfile, uint64_t *enfile)
{
	struct fd_err_count c = { 0 };
	__u32 key = pid;
	int err = 0;

	if (!t->skel)
		return -ENOENT;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.fd_errors), &key, &c))
		err = errno == ENOENT ? 0 : -errno;
	*emfile = c.emfile;
	*enfile = c.enfile;
	return err;
}

void fd_tracer_close(struct fd_tracer *t)
{
	bpf_links_destroy(t->links, t->nlinks);
	free(t->links);
	t->links = NULL;
	t->nlinks = 0;
	fdtrack_bpf__destroy(t->skel);
	t->skel = NULL;
}
