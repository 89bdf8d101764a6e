/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* TIME_WAIT of tcpstate.bpf.c: the tw socket's own timer (timer_start,
 * timer_cancel, timer_expire_entry on tw_timer_handler) tells when a
 * traced TIME_WAIT began, was re-armed or ended early, and expired.
 * Included by tcpstate.bpf.c after its maps, helpers and state programs. */
#ifndef CONNSCOPE_TCPSTATE_TW_BPF_H
#define CONNSCOPE_TCPSTATE_TW_BPF_H

/* A tw socket's 4-tuple; its local port is skc_num (host order). */
static __always_inline void tw_read_tuple(const struct sock_common *skc, struct cs_tuple *t)
{
	__u16 family = BPF_CORE_READ(skc, skc_family);

	__builtin_memset(t, 0, sizeof(*t));
	t->family = family;
	t->netns = BPF_CORE_READ(skc, skc_net.net, ns.inum);
	t->sport = BPF_CORE_READ(skc, skc_num);
	t->dport = bpf_ntohs(BPF_CORE_READ(skc, skc_dport));
	if (family == AF_INET6) {
		BPF_CORE_READ_INTO(&t->saddr, skc, skc_v6_rcv_saddr.in6_u.u6_addr8);
		BPF_CORE_READ_INTO(&t->daddr, skc, skc_v6_daddr.in6_u.u6_addr8);
	} else {
		__be32 s = BPF_CORE_READ(skc, skc_rcv_saddr);
		__be32 d = BPF_CORE_READ(skc, skc_daddr);

		__builtin_memcpy(t->saddr, &s, 4);
		__builtin_memcpy(t->daddr, &d, 4);
	}
}

static __always_inline __u64 tw_of_timer(struct timer_list *timer)
{
	return (__u64)timer - bpf_core_field_offset(struct inet_timewait_sock, tw_timer);
}

/* The timer programs, unlike the state programs (handle_set_state_nested),
 * need no second program to take what a nested run skips: the kernel
 * fires timer_start (enqueue_timer) and timer_cancel (detach_timer) with
 * the timer base's lock held and interrupts off, so no softirq can start
 * or cancel a tw timer while one of these runs on that CPU. Measured: the
 * first program of each pair they were missed no run in 5.6M (the first
 * 20 minutes of a soak), while the second cost ~68 ns for each of them.
 * Any run the kernel does skip is still counted (recursion_misses, as
 * tcp_events_skipped). */

static __always_inline int tw_timer_started(struct timer_list *timer)
{
	struct tw_rearm *rearm;
	struct tw_started *last;
	struct tw_track *track;
	struct cs_tuple t;
	__u32 zero = 0;
	__u64 tw;

	tw = tw_of_timer(timer);
	tw_read_tuple((const struct sock_common *)tw, &t);
	/* The second half of a re-arm: the entry its cancel moved out. */
	rearm = bpf_map_lookup_elem(&tw_rearm, &zero);
	if (rearm && rearm->tw == tw) {
		rearm->tw = 0;
		if (tuple_eq(&rearm->track.tuple, &t) &&
		    bpf_map_update_elem(&tw_owners, &tw, &rearm->track, BPF_ANY))
			stat_inc(CS_STAT_TW_FULL);
	}
	track = bpf_map_lookup_elem(&tw_owners, &tw);
	/* A freed tw whose memory now holds another connection keeps no
	 * owner. One with the same 4-tuple is a re-arm (its entry just put
	 * back) or, under tcp_tw_reuse, the next TIME_WAIT of that tuple at
	 * the same address: noted below either way, so that one is
	 * adopted at its CLOSE (which only a new TIME_WAIT has, and its
	 * timer always starts first). Returning early here left each such
	 * TIME_WAIT unmatched (59_identity: 2-12 of 40 under tw_reuse). */
	if (track && !tuple_eq(&track->tuple, &t))
		bpf_map_delete_elem(&tw_owners, &tw);
	last = bpf_map_lookup_elem(&tw_last, &zero);
	if (last) {
		last->tw = tw;
		last->tuple = t;
	}
	return 0;
}

/* Fires for every kernel timer: a compare and a return on the hot path. */
SEC("?tp_btf/timer_start")
int BPF_PROG(handle_timer_start_btf, struct timer_list *timer, unsigned long expires)
{
	if ((__u64)timer->function != tw_handler_addr)
		return 0;
	return tw_timer_started(timer);
}

/* The end of a followed TIME_WAIT (a timer's expiry or early cancel, or
 * inet_twsk_kill): one record naming its owner and tuple; lost counted. */
static __always_inline void tw_end_record(__u64 tw, const struct tw_track *track, __u8 type)
{
	struct cs_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(CS_STAT_RB_LOST);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->sk = tw;
	e->tw = tw;
	e->owner = track->owner;
	e->tuple = track->tuple;
	e->cur_tgid = agent_current_tgid();
	e->type = type;
	e->oldstate = e->newstate = TCP_TIME_WAIT;
	bpf_ringbuf_submit(e, rb_wakeup_flags(&events));
	stat_inc(CS_STAT_EVENTS);
}

static __always_inline int tw_timer_event(struct timer_list *timer, __u8 type)
{
	struct tw_track *track;
	__u64 tw;

	tw = tw_of_timer(timer);
	track = bpf_map_lookup_elem(&tw_owners, &tw);
	if (!track)
		return 0;
	/* A cancel at expiry (the timer softirq detaches the timer before it
	 * runs it) says nothing the expiry does not: only an early one
	 * (the TIME_WAIT killed, or its timer re-armed) is sent. */
	if (type == CS_EV_TW_CANCEL && timer->expires <= bpf_jiffies64())
		return 0;
	tw_end_record(tw, track, type);
	if (type == CS_EV_TW_CANCEL) {
		__u32 zero = 0;
		struct tw_rearm *rearm = bpf_map_lookup_elem(&tw_rearm, &zero);

		if (rearm) {
			rearm->tw = tw;
			rearm->track = *track;
		}
	}
	bpf_map_delete_elem(&tw_owners, &tw);
	return 0;
}

/* Expiry is timer_cancel (detach in the timer softirq) then
 * timer_expire_entry; an early end (reuse, RST, ss -K) is timer_cancel
 * alone; a re-arm is timer_cancel then timer_start (see tw_rearm). */
SEC("?tp_btf/timer_cancel")
int BPF_PROG(handle_timer_cancel_btf, struct timer_list *timer)
{
	if ((__u64)timer->function != tw_handler_addr)
		return 0;
	return tw_timer_event(timer, CS_EV_TW_CANCEL);
}

SEC("?tp_btf/timer_expire_entry")
int BPF_PROG(handle_timer_expire_btf, struct timer_list *timer, unsigned long baseclk)
{
	if ((__u64)timer->function != tw_handler_addr)
		return 0;
	return tw_timer_event(timer, CS_EV_TW_EXPIRE);
}

/* The TIME_WAIT functions themselves, where the kernel allows fentry
 * (Debian's 6.1 and 6.12; not a kernel that refuses fentry, as 6.18 here
 * does): each runs once per TIME_WAIT event, not for every timer of the
 * host. The begin hands over the tw socket before the full one's
 * FIN_WAIT2/CLOSING->CLOSE, on the same CPU, as timer_start did. */
static __always_inline int tw_began(struct inet_timewait_sock *tw)
{
	struct tw_started *last;
	struct tw_track *track;
	struct cs_tuple t;
	__u32 zero = 0;

	tw_read_tuple(&tw->__tw_common, &t);
	/* A freed tw's memory holding another connection: not its owner. */
	track = bpf_map_lookup_elem(&tw_owners, &(__u64){ (__u64)tw });
	if (track && !tuple_eq(&track->tuple, &t))
		bpf_map_delete_elem(&tw_owners, &(__u64){ (__u64)tw });
	last = bpf_map_lookup_elem(&tw_last, &zero);
	if (last) {
		last->tw = (__u64)tw;
		last->tuple = t;
	}
	return 0;
}

/* Up to 6.7: inet_twsk_hashdance(tw, sk, hashinfo), after the timer is
 * scheduled (inet_twsk_schedule). */
SEC("?fentry/inet_twsk_hashdance")
int BPF_PROG(handle_tw_begin_fentry, struct inet_timewait_sock *tw)
{
	return tw_began(tw);
}

/* Later kernels (6.12 and 6.18 have it, 6.1 not): the hash and the timer
 * in one, inet_twsk_hashdance_schedule(tw, sk, hashinfo, timeo). The user
 * side loads whichever this kernel's BTF names. */
SEC("?fentry/inet_twsk_hashdance_schedule")
int BPF_PROG(handle_tw_begin_sched_fentry, struct inet_timewait_sock *tw)
{
	return tw_began(tw);
}

/* The tw socket whose timer is running on this CPU: tw_timer_handler
 * calls inet_twsk_kill at once, and every other inet_twsk_kill is an
 * early end (inet_twsk_deschedule_put: a takeover, an RST, ss -K, a
 * namespace's purge). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} tw_expiring SEC(".maps");

SEC("?fentry/tw_timer_handler")
int BPF_PROG(handle_tw_expire_fentry, struct timer_list *timer)
{
	__u32 zero = 0;
	__u64 *tw = bpf_map_lookup_elem(&tw_expiring, &zero);

	if (tw)
		*tw = tw_of_timer(timer);
	return 0;
}

SEC("?fentry/inet_twsk_kill")
int BPF_PROG(handle_tw_kill_fentry, struct inet_timewait_sock *tw)
{
	__u64 key = (__u64)tw, *expiring;
	struct tw_track *track;
	__u32 zero = 0;
	__u8 type = CS_EV_TW_KILL;

	expiring = bpf_map_lookup_elem(&tw_expiring, &zero);
	if (expiring && *expiring == key) {
		*expiring = 0;
		type = CS_EV_TW_EXPIRE;
	}
	track = bpf_map_lookup_elem(&tw_owners, &key);
	if (!track)
		return 0;
	tw_end_record(key, track, type);
	bpf_map_delete_elem(&tw_owners, &key);
	return 0;
}

#endif
