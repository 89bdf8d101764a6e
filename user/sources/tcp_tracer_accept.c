// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Who took a listener's child, per transition: the accept hook's attach.
 * The start-up probe (kfeatures_probe.c, KF_HOOK_ACCEPT_FEXIT) proves that
 * fexit on inet_csk_accept loads, not that it attaches: the kernel can
 * still refuse the trampoline (another ftrace user holding the function
 * with IPMODIFY, a livepatch, BPF_MAX_TRAMP_LINKS reached by other tools).
 * Before, tcpstate_bpf__attach() then failed as a whole and the run
 * stopped, although the accept() exit tracepoints would have worked.
 * Now the fexit goes on by itself, first; refused, the accept() exits run
 * in its place, from a second load of the unit that takes every map of
 * the first (its load is over, and the other units share its targets
 * map), and the run says so once on stderr. That load parses the kernel's
 * BTF again, after the ring is mapped (tracer_map_ring): in Debian's 6.1
 * (a QEMU guest at -icount shift=2) it cost a refused start 7% more CPU
 * and 1.7 MiB of RSS; the exits loaded beside the fexit instead cost
 * each start it attaches 4%: not built (docs/performance-kernel.md,
 * "Where the kernel refuses the fexit"). */
#define _GNU_SOURCE	/* strerrorname_np */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "tcp_tracer.h"
#include "tcpstate.skel.h"
#include "text_wrap.h"

/* CONNSCOPE_HOOK_FAULT=accept-fexit, for tests: the fexit's attach fails
 * as a trampoline another ftrace user holds would (EBUSY), so the
 * fallback runs on kernels where fexit attaches. Where it is not loaded
 * (socket storage, or kernels where fexit does not load) it changes
 * nothing. */
static bool fexit_fault(void)
{
	const char *f = getenv("CONNSCOPE_HOOK_FAULT");

	return f && !strcmp(f, "accept-fexit");
}

/* The unit again, only its accept() exits loaded, on the first load's
 * maps: one set of owners, events, targets and stats, and the first
 * one's rodata (accept_tp, the filters), which the kernel reads frozen. */
static int load_accept_exits(struct tracer *t, const struct tracer_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = o->btf_path);
	struct tcpstate_bpf *s = tcpstate_bpf__open_opts(&open_opts);
	struct bpf_map *m, *first = NULL;
	struct bpf_program *prog;
	int err = 0;

	if (!s)
		return -errno;
	bpf_object__for_each_program(prog, s->obj)
		bpf_program__set_autoload(prog, prog == s->progs.handle_accept_exit ||
					  prog == s->progs.handle_accept4_exit);
	/* Both objects list the same maps in the same order (one ELF). */
	bpf_object__for_each_map(m, s->obj) {
		first = bpf_object__next_map(t->skel->obj, first);
		if (!first || strcmp(bpf_map__name(m), bpf_map__name(first))) {
			err = -EINVAL;
			break;
		}
		err = bpf_map__reuse_fd(m, bpf_map__fd(first));
		if (err)
			break;
	}
	if (!err)
		err = tcpstate_bpf__load(s);
	if (err) {
		tcpstate_bpf__destroy(s);
		return err;
	}
	t->accept_skel = s;
	return 0;
}

/* An errno's name (EBUSY) for a line that must fit 80 columns, its
 * number where the C library names none. */
static const char *errno_name(int err, char *buf, size_t len)
{
	const char *name = strerrorname_np(err);

	if (name)
		return name;
	snprintf(buf, len, "errno %d", err);
	return buf;
}

int tracer_attach_accept(struct tracer *t, const struct tracer_opts *o)
{
	char b1[24], b2[24];
	struct bpf_program *fexit = t->skel->progs.handle_accept_fexit;
	struct bpf_link *link = NULL;
	int err, lerr;

	if (!bpf_program__autoload(fexit))
		return 0;	/* the accept() exits or none: with the state programs */
	bpf_program__set_autoattach(fexit, false);
	if (fexit_fault())
		err = -EBUSY;
	else {
		link = bpf_program__attach(fexit);
		err = link ? 0 : -errno;
	}
	if (link) {
		t->skel->links.handle_accept_fexit = link;	/* destroyed with the skeleton */
		return 0;
	}
	lerr = load_accept_exits(t, o);
	/* One line of at most 80 columns: the hook refused, why, and what
	 * runs instead (run.accept_hook names the tracepoints, as do the
	 * text report's accept: line and the HTML Run). */
	if (lerr) {
		text_err("connscope: no accept hook: fexit/inet_csk_accept %s, "
			 "accept() exits %s\n",
			 errno_name(-err, b1, sizeof(b1)), errno_name(-lerr, b2, sizeof(b2)));
		return lerr;
	}
	fprintf(stderr, "connscope: fexit/inet_csk_accept refused (%s); using the accept() "
			"exits\n", errno_name(-err, b1, sizeof(b1)));
	t->accept_method = TRACER_ACCEPT_EXITS;
	return 0;
}
