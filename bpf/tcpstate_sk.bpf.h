/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Socket-storage mode of tcpstate.bpf.c (tp_btf with the send/receive
 * tracepoints: Linux 6.3 and later). Included by tcpstate.bpf.c after its
 * maps and helpers.
 *
 * What the kernel knows of a traced socket lives on the socket itself
 * (BPF_MAP_TYPE_SK_STORAGE): its owner, when its handshake began and
 * ended, when its close began, when it was orphaned, its traffic. The
 * storage dies with the socket, so no socket ever inherits another's owner
 * from a reused address, and nothing is evicted. An untraced socket costs
 * one storage lookup that finds nothing and a look at its local port
 * (seed_ports).
 *
 * A socket sends at most two records: at ESTABLISHED (its birth, with the
 * handshake's times) and at CLOSE (its whole life folded into times and
 * CS_SUM_* bits). A connect() that fails sends one. The transitions in
 * between (FIN_WAIT1, FIN_WAIT2, CLOSE_WAIT, LAST_ACK, CLOSING) only
 * update the storage; user space unfolds them from the CLOSE record.
 *
 * An accepted socket starts with its listener's owner (the storage is
 * cloned into each child of a listener, BPF_F_CLONE). The first send,
 * receive or close the socket sees in a task names the process that
 * really holds it: the same one (nothing to say), another target (one
 * CS_EV_OWNER record) or a process we do not trace (one CS_EV_OWNER with
 * tgid 0, and the storage goes). So no accept() tracepoint is needed, and
 * no syscall tracepoint slows down every task on the machine. */
#ifndef CONNSCOPE_TCPSTATE_SK_BPF_H
#define CONNSCOPE_TCPSTATE_SK_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct cs_sk);
} sk_state SEC(".maps");

static __always_inline int emit_sk(const struct sock *sk, const struct cs_sk *st,
				   const struct cs_owner *o, __u8 type, int oldstate,
				   int newstate, __u8 flags, __u64 tw)
{
	struct cs_event *e = ev_reserve(sk, o, type, oldstate, newstate, flags | CS_F_SUMMARY,
					tw, true);

	if (!e)
		return -1;	/* counted lost */
	sk_read_tuple(sk, &e->tuple, true);
	e->io = st->io;
	e->syn_ns = st->syn_ns;
	e->est_ns = st->est_ns;
	e->fin_ns = st->fin_ns;
	e->orphan_ns = st->orphan_ns;
	e->cookie = bpf_get_socket_cookie((void *)sk);
	e->sum = st->sum;
	ev_submit(e);
	return 0;
}

/* In a task, on a socket whose owner is still its listener's: the task's
 * process is the real one. false: the socket is no longer traced (its
 * storage is gone; st must not be used). */
static __always_inline bool owner_settle(const struct sock *sk, struct cs_sk *st)
{
	struct cs_owner none = {};

	st->sum &= ~CS_SUM_PROVISIONAL;
	if (agent_current_tgid() == st->owner.tgid) {
		st->owner.flags = CS_OWNER_ACCEPT;
		return true;
	}
	if (current_is_target()) {
		owner_from_current(&st->owner, CS_OWNER_ACCEPT);
		emit_sk(sk, st, &st->owner, CS_EV_OWNER, 0, 0, CS_F_NEW_OWNER, 0);
		return true;
	}
	emit_sk(sk, st, &none, CS_EV_OWNER, 0, 0, CS_F_NEW_OWNER, 0);
	bpf_sk_storage_delete(&sk_state, (struct sock *)sk);
	return false;
}

/* A socket without storage: its owner if it is one of ours being born, a
 * child of a listener known only by key, or a socket seeded from the
 * start-up snapshot; NULL otherwise. */
static __always_inline struct cs_sk *sk_state_new(const struct sock *sk, int oldstate,
						  int newstate)
{
	struct cs_sk init = {};
	struct cs_owner *found;
	struct cs_tuple t;
	struct cs_sk *st;

	if (oldstate == TCP_CLOSE && (newstate == TCP_SYN_SENT || newstate == TCP_LISTEN)) {
		if (!current_is_target())
			return NULL;
		owner_from_current(&init.owner,
				   newstate == TCP_LISTEN ? CS_OWNER_LISTEN : CS_OWNER_CONNECT);
	} else if (!seed_port(sk_local_port(sk))) {
		/* Neither a seeded listener's child nor a seed. */
		return NULL;
	} else if (oldstate == TCP_LISTEN && newstate == TCP_SYN_RECV) {
		sk_read_tuple(sk, &t, true);
		found = listener_of(sk, &t, false);
		if (!found)
			return NULL;
		init.owner = *found;
	} else {
		sk_read_tuple(sk, &t, true);
		found = bpf_map_lookup_elem(&seeds, &t);
		if (!found)
			return NULL;
		init.owner = *found;
		bpf_map_delete_elem(&seeds, &t);
		/* User space has it in its books since the start. */
		init.sum = CS_SUM_BORN | CS_SUM_EST;
	}
	init.sk = (__u64)sk;
	st = bpf_sk_storage_get(&sk_state, (struct sock *)sk, &init,
				BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		stat_inc(CS_STAT_OWNER_FULL);
	return st;
}

static __always_inline void sk_state_reset(struct cs_sk *st, const struct sock *sk, __u8 sum,
					   __u64 now)
{
	st->sk = (__u64)sk;
	st->syn_ns = now;
	st->est_ns = st->fin_ns = st->orphan_ns = 0;
	__builtin_memset(&st->io, 0, sizeof(st->io));
	st->sum = sum;
}

static __always_inline int handle_state_sk(const struct sock *sk, int oldstate, int newstate,
					   bool quic)
{
	__u8 flags = quic ? CS_F_QUIC : 0;
	struct cs_sk *st;
	__u64 now, tw = 0;

	stat_inc(CS_STAT_STATE_CALLS);
	st = bpf_sk_storage_get(&sk_state, (struct sock *)sk, 0, 0);
	if (!st) {
		st = sk_state_new(sk, oldstate, newstate);
		if (!st) {
			struct cs_tuple t;

			if (filter_tgid)
				return 0;
			/* --all: a socket from before the start, its owner
			 * unknown here; user space counts it (unknown_events). */
			sk_read_tuple(sk, &t, true);
			return emit(sk, NULL, &t, CS_EV_STATE, oldstate, newstate, flags, 0, true);
		}
		flags |= CS_F_NEW_OWNER;
	}
	now = bpf_ktime_get_ns();
	if (oldstate == TCP_CLOSE && (newstate == TCP_SYN_SENT || newstate == TCP_LISTEN)) {
		/* Born again (a connect() after a failed one reuses the socket):
		 * in this task, whose process holds it now. */
		if (!(flags & CS_F_NEW_OWNER) && current_is_target())
			owner_from_current(&st->owner, newstate == TCP_LISTEN ?
					   CS_OWNER_LISTEN : CS_OWNER_CONNECT);
		sk_state_reset(st, sk, 0, now);
	} else if (oldstate == TCP_LISTEN && newstate == TCP_SYN_RECV) {
		/* The listener's storage, cloned: the child's own from here. */
		st->owner.flags = CS_OWNER_LISTENER;
		sk_state_reset(st, sk, CS_SUM_PASSIVE | CS_SUM_PROVISIONAL, now);
		return 0;
	}
	if (newstate == TCP_ESTABLISHED) {
		st->est_ns = now;
		st->sum |= CS_SUM_EST;
	}
	if ((newstate == TCP_FIN_WAIT1 || newstate == TCP_CLOSE_WAIT) && !st->fin_ns) {
		st->fin_ns = now;
		st->sum |= newstate == TCP_FIN_WAIT1 ? CS_SUM_ACTIVE_CLOSE : CS_SUM_PASSIVE_CLOSE;
	}
	if (!(st->sum & CS_SUM_ORPHAN) && sk_is_orphan(sk, true)) {
		st->orphan_ns = now;
		st->sum |= CS_SUM_ORPHAN;
	}
	/* The application's close() runs in its task: the owner, if it was
	 * still the listener's. */
	if ((st->sum & CS_SUM_PROVISIONAL) &&
	    ((oldstate == TCP_ESTABLISHED && newstate == TCP_FIN_WAIT1) ||
	     (oldstate == TCP_CLOSE_WAIT && newstate == TCP_LAST_ACK)) &&
	    !owner_settle(sk, st))
		return 0;

	if (newstate == TCP_LISTEN)
		return emit_sk(sk, st, &st->owner, CS_EV_STATE, oldstate, newstate, flags, 0);
	if (newstate == TCP_ESTABLISHED) {
		if ((st->sum & CS_SUM_PASSIVE) && !accept_tp)
			flags |= CS_F_ACCEPTED;
		if (st->sum & CS_SUM_BORN)
			return 0;	/* seeded: its books exist */
		/* Born only once its record is out: if the ring was full, the
		 * end record still carries the birth (CS_F_ACCEPTED too). */
		st->sum |= CS_SUM_BORN;
		if (emit_sk(sk, st, &st->owner, CS_EV_STATE, oldstate, newstate, flags, 0))
			st->sum &= ~CS_SUM_BORN;
		return 0;
	}
	if (newstate != TCP_CLOSE)
		return 0;
	if ((oldstate == TCP_FIN_WAIT2 || oldstate == TCP_CLOSING) && tw_handler_addr && !quic)
		tw = tw_adopt(sk, &st->owner, true);
	if (!(st->sum & CS_SUM_BORN) && (st->sum & CS_SUM_PASSIVE) && !accept_tp)
		flags |= CS_F_ACCEPTED;
	emit_sk(sk, st, &st->owner, CS_EV_STATE, oldstate, newstate, flags, tw);
	bpf_sk_storage_delete(&sk_state, (struct sock *)sk);
	return 0;
}

/* Every send and receive on every socket of the machine passes here. */
static __always_inline int count_io_sk(const struct sock *sk, int ret, __u8 dir)
{
	struct cs_conn_io *io;
	struct cs_sk *st;

	if (ret <= 0)
		return 0;
	st = bpf_sk_storage_get(&sk_state, (struct sock *)sk, 0, 0);
	if (!st) {
		/* A connection held since before we attached sends without a
		 * state change: adopt its seed here. */
		int state;

		if (!seed_port(sk_local_port(sk)))
			return 0;
		state = sk->__sk_common.skc_state;
		st = sk_state_new(sk, state, state);
		if (!st)
			return 0;
		emit_sk(sk, st, &st->owner, CS_EV_ADOPT, state, state, CS_F_NEW_OWNER, 0);
	}
	if ((st->sum & CS_SUM_PROVISIONAL) && !owner_settle(sk, st))
		return 0;
	io = &st->io;
	if (dir == CS_DIR_SEND)
		__sync_fetch_and_add(&io->bytes_sent, ret);
	else
		__sync_fetch_and_add(&io->bytes_recv, ret);
	if (io->last_dir != dir) {
		io->last_dir = dir;
		__sync_fetch_and_add(&io->turns, 1);
	}
	return 0;
}

#endif
