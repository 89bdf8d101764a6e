// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <string.h>
#include "doctor_books.h"
#include "tcp_state_names.h"

static struct listen_sample *listener(struct doctor_run *d, pid_t pid, uint8_t family,
				      uint16_t port, const uint8_t *addr)
{
	for (size_t i = 0; i < d->nlisteners; i++) {
		struct listen_sample *l = &d->listeners[i];

		if (l->pid == pid && l->family == family && l->port == port &&
		    !memcmp(l->addr, addr, sizeof(l->addr)))
			return l;
	}
	if (d->nlisteners == DR_MAX_LISTENERS)
		return NULL;
	d->listeners[d->nlisteners] = (struct listen_sample){ .pid = pid, .family = family,
							      .port = port };
	memcpy(d->listeners[d->nlisteners].addr, addr, sizeof(d->listeners[0].addr));
	return &d->listeners[d->nlisteners++];
}

void doctor_observe_listeners(struct doctor_run *d, const struct sd_sock *socks, size_t n,
			      const struct inode_map *owners)
{
	for (size_t i = 0; i < n; i++) {
		const struct sd_sock *s = &socks[i];
		const struct inode_owner *o;
		struct listen_sample *l;

		if (s->state != CS_TCP_LISTEN || !s->inode)
			continue;
		o = inode_map_get(owners, s->inode);
		if (!o || !(l = listener(d, o->pid, s->family, s->sport, s->saddr)))
			continue;
		/* On a LISTEN socket sock_diag gives the accept queue as
		 * idiag_rqueue (sk_ack_backlog) and the backlog as idiag_wqueue
		 * (sk_max_ack_backlog); the kernel drops once it is above. */
		l->backlog = s->wqueue;
		l->queue_now = s->rqueue;
		if (s->rqueue > l->queue_peak)
			l->queue_peak = s->rqueue;
		l->samples++;
		if (s->wqueue && s->rqueue >= s->wqueue)
			l->samples_full++;
	}
}

void doctor_observe_netstat(struct doctor_run *d, pid_t pid, uint64_t ns_ino,
			    const struct listen_counters *c)
{
	struct netstat_ns *n = NULL;

	for (size_t i = 0; i < d->nns; i++)
		if (d->ns[i].ns_ino == ns_ino)
			n = &d->ns[i];
	if (!n) {
		if (d->nns == DR_MAX_NETNS)
			return;
		n = &d->ns[d->nns++];
		*n = (struct netstat_ns){ .ns_ino = ns_ino, .pid = pid, .valid = true,
					  .overflows_first = c->overflows, .drops_first = c->drops,
					  .overflows_last = c->overflows, .drops_last = c->drops,
					  .tw_recycled_first = c->tw_recycled,
					  .tw_recycled_last = c->tw_recycled };
		return;
	}
	if (c->overflows > n->overflows_last &&
	    c->overflows - n->overflows_last > n->overflows_peak_interval)
		n->overflows_peak_interval = c->overflows - n->overflows_last;
	n->overflows_last = c->overflows;
	n->drops_last = c->drops;
	n->tw_recycled_last = c->tw_recycled;
}

void doctor_observe_fderr(struct doctor_run *d, pid_t pid, uint64_t emfile, uint64_t enfile)
{
	size_t i;

	for (i = 0; i < d->nfderr && d->fderr[i].pid != pid; i++)
		;
	if (i == d->nfderr) {
		if (d->nfderr == DR_MAX_PROCS)
			return;
		d->nfderr++;
	}
	d->fderr[i] = (struct fd_errors){ .pid = pid, .emfile = emfile, .enfile = enfile };
}
