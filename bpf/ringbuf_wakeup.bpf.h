/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* When to wake the ring buffer's reader. A wakeup per event makes the
 * traced workload pay for the agent's context switch on every connection
 * (on a 2-core machine the agent then competes with it for the cores). The
 * agent drains its rings on a timer, at most 100 ms apart, so an event
 * needs no wakeup of its own; only a ring filling up (a quarter of it)
 * wakes the reader early, so a burst cannot overrun it. */
#ifndef CONNSCOPE_RINGBUF_WAKEUP_BPF_H
#define CONNSCOPE_RINGBUF_WAKEUP_BPF_H

static __always_inline __u64 rb_wakeup_flags(void *ring)
{
	__u64 avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(ring, BPF_RB_RING_SIZE);

	return avail >= size / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

#endif
