// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include "runloop.h"
#include "run_notes.h"
#include "timeutil.h"

/* Waits until a ring manager has data or timeout_ms passes, then drains
 * every one: events come without wakeups (ringbuf_wakeup.bpf.h), so a
 * wakeup is a hint, and each tick reads all that is there. */
static int poll_rings(struct run_loop *l, int timeout_ms)
{
	struct pollfd pfd[RUN_MAX_RINGS];
	int n = 0, err;

	for (int i = 0; i < RUN_MAX_RINGS; i++)
		if (l->rb[i])
			pfd[n++] = (struct pollfd){ .fd = ring_buffer__epoll_fd(l->rb[i]),
						    .events = POLLIN };
	if (poll(pfd, n, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < RUN_MAX_RINGS; i++) {
		if (!l->rb[i])
			continue;
		err = ring_buffer__consume(l->rb[i]);
		if (err < 0)
			return err;
	}
	return 0;
}

int run_loop(struct run_loop *l, volatile sig_atomic_t *exiting)
{
	uint64_t next = l->t0_ns + l->tick_ns;
	uint64_t deadline = l->duration_s > 0 ? l->t0_ns + (uint64_t)(l->duration_s * 1e9)
					      : UINT64_MAX;
	int err;

	l->end_reason = "interrupted";
	while (!*exiting) {
		uint64_t now = now_ns(), wake = next < deadline ? next : deadline;
		int timeout = wake > now ? (int)((wake - now) / 1000000) : 0;

		err = poll_rings(l, timeout > 100 ? 100 : timeout);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "connscope: reading the ring buffer failed: %s\n",
				strerror(-err));
			return err;
		}
		err = l->alive(l->ctx, now_ns());
		now = now_ns();
		if (now >= deadline) {
			l->end_reason = "duration";
			l->end_ns = deadline;
			return 0;
		}
		if (!err) {
			l->end_reason = "target exited";
			l->end_ns = now;
			return 0;
		}
		if (now < next)
			continue;
		l->due_ns = next;
		err = l->tick(l->ctx, now);
		if (err)
			return err;
		next += l->tick_ns;
		/* A tick a whole interval late is not run twice: the next is
		 * the first one due after now, on the same grid, so the labels
		 * stay the schedule's. */
		if (next < now)
			next += (now - next) / l->tick_ns * l->tick_ns + l->tick_ns;
	}
	l->end_ns = now_ns();
	return 0;
}

void run_say_exited(const struct run_loop *l, int pid, const char *comm)
{
	format_exited_note(stderr, pid, comm, (now_ns() - l->t0_ns) / 1e9);
}
