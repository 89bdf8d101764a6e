// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "fdsites.h"

/* Frames of the C library's syscall wrappers and the like are where the fd
 * is made, not who asked for it. */
static bool is_runtime(const struct sym_frame *f)
{
	return !strncmp(f->module, "libc.so", 7) || !strncmp(f->module, "libc-", 5) ||
	       !strncmp(f->module, "ld-linux", 8) || !strncmp(f->module, "linux-vdso", 10) ||
	       !strncmp(f->module, "libpthread", 10) || !strncmp(f->module, "[vdso]", 6);
}

static void symbolize_all(struct symbolizer *sym, const uint64_t *ips, const bool *activation,
			  int n, struct site_frames *out)
{
	out->n = 0;
	for (int i = 0; i < n && out->n < SITE_MAX_FRAMES; i++) {
		bool ret = activation ? !activation[i] : i > 0;

		symbolize_ip(sym, ips[i], ret, &out->frames[out->n++]);
	}
	out->site_idx = 0;
	for (int i = 0; i < out->n; i++) {
		if (!is_runtime(&out->frames[i])) {
			out->site_idx = i;
			break;
		}
	}
}

int fdsite_resolve(struct symbolizer *sym, struct fd_tracer *t, const struct fd_site *s,
		   struct site_frames *out)
{
	uint64_t ips[SITE_MAX_FRAMES];
	bool act[SITE_MAX_FRAMES];
	int n = 0;

	memset(out, 0, sizeof(*out));
	out->method = "none";
	if (!sym)
		return -EINVAL;
	if (s->has_snapshot && s->stack_len) {
		n = unwind_snapshot_ex(sym, (const struct user_regs_x86 *)s->regs, s->stack,
				       s->stack_len, ips, act, SITE_MAX_FRAMES);
		if (n >= 2) {
			out->method = "dwarf unwinding of the stack copy";
			symbolize_all(sym, ips, act, n, out);
			return 0;
		}
	}
	if (t && s->stack_id >= 0) {
		n = fd_tracer_stack(t, s->stack_id, ips, SITE_MAX_FRAMES);
		if (n >= 2) {
			out->method = "frame pointers";
			symbolize_all(sym, ips, NULL, n, out);
			return 0;
		}
	}
	/* A simple libc wrapper pushes no frame: the word at sp is the return
	 * address into its caller. */
	if (s->has_snapshot && s->stack_len >= 8) {
		ips[0] = s->regs[FD_REG_IP];
		memcpy(&ips[1], s->stack, 8);
		act[0] = true;
		act[1] = false;
		out->method = "return address at the user sp";
		symbolize_all(sym, ips, act, 2, out);
		return 0;
	}
	if (s->has_snapshot) {
		ips[0] = s->regs[FD_REG_IP];
		out->method = "syscall ip only";
		symbolize_all(sym, ips, NULL, 1, out);
		return 0;
	}
	return -ENOENT;
}

