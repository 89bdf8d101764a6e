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
 * A socket sends one record, at CLOSE: its whole life folded into times
 * and CS_SUM_* bits. The transitions before (ESTABLISHED, FIN_WAIT1,
 * FIN_WAIT2, CLOSE_WAIT, LAST_ACK, CLOSING) only update the storage; user
 * space unfolds them from the CLOSE record. A socket that outlives an
 * interval sends one more, its birth, from the agent's birth pass
 * (birth_pass below: an iterator over this storage that the agent runs
 * before each reconcile, in its own context, not the workload's), so the
 * books hold every live connection when they are compared with the
 * kernel. Before, every socket sent its birth at ESTABLISHED: a record
 * cost ~425 ns of the state program (1.7k of its ~6.6k ns a connection
 * with both ends traced; measured by leaving the records out), and most
 * connections of a load test end within an interval.
 *
 * An accepted socket starts with its listener's owner (the storage is
 * cloned into each child of a listener, BPF_F_CLONE). The first send,
 * receive or close the socket sees in a task names the process that
 * really holds it: the same one (nothing to say), another target (one
 * CS_EV_OWNER record if the books know the socket by then) or a process
 * we do not trace (one CS_EV_OWNER with tgid 0 if they know it, and the
 * storage goes). So no accept() tracepoint is needed, and no syscall
 * tracepoint slows down every task on the machine. */
#ifndef CONNSCOPE_TCPSTATE_SK_BPF_H
#define CONNSCOPE_TCPSTATE_SK_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct cs_sk);
} sk_state SEC(".maps");

/* The clock, read once a run: the first use reads it into the run's now,
 * the others get the same time (0: not read yet). A transition that
 * stamps nothing reads it not at all; before, every run read it once, and
 * the CLOSE and LISTEN records once more (ev_reserve), as did every send
 * and receive. */
#define SK_NOW(now) ((now) ? (now) : ((now) = bpf_ktime_get_ns()))

/* The storages' books (cs_skb_key in tcpstate.h): per CPU, so a connection
 * adds to a line of its own CPU's (two atomic adds a connection, no line
 * shared between CPUs); user space sums them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* entries as keys appear */
	__uint(max_entries, 16384);
	__type(key, struct cs_skb_key);
	__type(value, struct cs_skb_val);
} sk_books SEC(".maps");

/* Written by the birth pass alone (the agent's own context): the booked
 * storages it found alive, per key. User space empties it after reading. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct cs_skb_key);
	__type(value, __u64);
} sk_alive SEC(".maps");

/* The socket's storage, or NULL. Every untraced socket of the machine
 * passes here on each state change, send and receive: one that holds no
 * BPF storage at all (sk_bpf_storage NULL, of any map) is told by a plain
 * load, without the helper call. */
static __always_inline struct cs_sk *sk_state_of(const struct sock *sk)
{
	if (!sk->sk_bpf_storage)
		return NULL;
	return bpf_sk_storage_get(&sk_state, (struct sock *)sk, 0, 0);
}

/* The key of a storage of owner tgid whose told bits (cs_sk.told, as its
 * caller read them) are told: CS_TOLD_BOOKS puts it under CS_SKB_TOLD. */
static __always_inline void skb_key(const struct sock *sk, const struct cs_sk *st, __u32 tgid,
				    __u32 told, struct cs_skb_key *k)
{
	/* Plain loads: every caller's sk is a typed pointer (a tp_btf
	 * argument, the iterator's tcp_sock). Two probe reads each before,
	 * four times a connection. */
	k->netns = sk->__sk_common.skc_net.net->ns.inum;
	k->tgid = tgid;
	k->flags = (st->sum & CS_SUM_PASSIVE ? CS_SKB_PASSIVE : 0) |
		   (told & CS_TOLD_BOOKS ? CS_SKB_TOLD : 0);
}

/* A made (end false) or ended storage, under owner tgid and told bits
 * told. Atomic: a softirq's state change can interrupt a task's on the
 * same CPU. */
static __always_inline void skb_count(const struct sock *sk, const struct cs_sk *st, __u32 tgid,
				      __u32 told, bool end)
{
	struct cs_skb_val zero = {}, *v;
	struct cs_skb_key k;

	skb_key(sk, st, tgid, told, &k);
	v = bpf_map_lookup_elem(&sk_books, &k);
	if (!v) {
		bpf_map_update_elem(&sk_books, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&sk_books, &k);
		if (!v) {
			stat_inc(CS_STAT_SKB_FULL);
			return;
		}
	}
	__sync_fetch_and_add(end ? &v->ended : &v->made, 1);
}

/* An established TCP connection's storage: booked once. Only TCP: the
 * birth pass (iter/tcp) that counts the alive ones sees no other. */
static __always_inline void skb_made(const struct sock *sk, struct cs_sk *st)
{
	if (st->booked || !sk_is_tcp(sk, true))
		return;
	st->booked = 1;
	/* Untold but for a seed's (CS_TOLD_BOOKS from its adoption). */
	skb_count(sk, st, st->owner.tgid, st->told, false);
}

/* Before the storage goes (bpf_sk_storage_delete): counted ended first, so
 * a pass that finds it gone finds it ended. told: cs_sk.told from the
 * caller's atomic OR of CS_TOLD_END or CS_TOLD_GONE on (its books' key: a
 * birth pass moves them once, and only if its exchange comes before that
 * OR, birth_tell). */
static __always_inline void skb_ended(const struct sock *sk, const struct cs_sk *st, __u32 told)
{
	if (st->booked)
		skb_count(sk, st, st->owner.tgid, told, true);
}

/* The socket's cookie, and whether it had one before: a plain load where
 * it has (made at its FIN_WAIT1, below, by a census or a birth), the
 * helper, which makes one, where not. */
static __always_inline __u64 sk_cookie(const struct sock *sk, bool *had)
{
	__u64 c = sk->__sk_common.skc_cookie.counter;

	*had = c;
	return c ? c : bpf_get_socket_cookie((void *)sk);
}

static __always_inline int emit_sk(const struct sock *sk, const struct cs_sk *st,
				   const struct cs_owner *o, __u8 type, int oldstate,
				   int newstate, __u8 flags, __u64 tw, __u64 now)
{
	struct cs_event *e = ev_reserve_at(sk, o, type, oldstate, newstate,
					   flags | CS_F_SUMMARY, tw, true, SK_NOW(now));
	bool had;

	if (!e)
		return -1;	/* counted lost */
	sk_read_tuple(sk, &e->tuple, true);
	e->io = st->io;
	e->syn_ns = st->syn_ns;
	e->est_ns = st->est_ns;
	e->fin_ns = st->fin_ns;
	e->orphan_ns = st->orphan_ns;
	e->cookie = sk_cookie(sk, &had);
	e->sum = st->sum | (had ? CS_SUM_COOKIE_BEFORE : 0);
	ev_submit(e);
	return 0;
}

/* In a task, on a socket whose owner is still its listener's: the task's
 * process is the real one. false: the socket is no longer traced (its
 * storage is gone; st must not be used). A record says so only if the
 * books have the socket's birth (told has CS_TOLD_BIRTH); else its birth
 * or end record carries the owner set here. The owner is written inside
 * CS_TOLD_SETTLING, and CS_TOLD_SETTLED stays after it, so a birth pass
 * running beside it on another CPU never sends a half-written or an
 * earlier owner, nor moves the books under it (birth_tell). Only the send
 * program's settle can have a pass beside it: at sock_send_length it runs
 * after tcp_sendmsg() released the socket's lock (at tcp_sendmsg_locked
 * it holds it), where a close or a read (state program,
 * tcp_rcv_space_adjust) settles with the lock held, which the pass holds
 * too (birth_pass). */
static __always_inline bool owner_settle(const struct sock *sk, struct cs_sk *st, __u64 now)
{
	__u32 told;

	/* accept() returned it before this: from here it carries requests
	 * (the books count it concurrent from this time, not from its
	 * handshake's end while it waited in the accept queue). A close
	 * brings its run's clock; a first send or receive reads it here,
	 * once a connection (they read none otherwise). */
	st->io.acc_us = SK_NOW(now) / 1000;
	if (agent_current_tgid() == st->owner.tgid) {
		st->owner.flags = CS_OWNER_ACCEPT;
		st->sum &= ~CS_SUM_PROVISIONAL;
		return true;
	}
	if (current_is_target()) {
		__u32 was = st->owner.tgid;

		__sync_fetch_and_or(&st->told, CS_TOLD_SETTLING);
		owner_from_current(&st->owner, CS_OWNER_ACCEPT);
		/* Its books move to the process that holds it, under the key
		 * they are in: a plain read of CS_TOLD_BOOKS, which no pass
		 * sets from the OR above on (birth_tell's exchange fails). */
		if (st->booked && st->owner.tgid != was) {
			skb_count(sk, st, was, st->told, true);
			skb_count(sk, st, st->owner.tgid, st->told, false);
		}
		__sync_fetch_and_or(&st->told, CS_TOLD_SETTLED);
		told = __sync_fetch_and_and(&st->told, ~CS_TOLD_SETTLING);
		st->sum &= ~CS_SUM_PROVISIONAL;
		if (told & CS_TOLD_BIRTH)
			emit_sk(sk, st, &st->owner, CS_EV_OWNER, 0, 0, CS_F_NEW_OWNER, 0, now);
		return true;
	}
	if (__sync_fetch_and_or(&st->told, CS_TOLD_GONE) & CS_TOLD_BIRTH)
		/* No owner: the record's is zeroed (no copy of one on the
		 * stack, which the send/receive program has no room for). */
		emit_sk(sk, st, NULL, CS_EV_OWNER, 0, 0, CS_F_NEW_OWNER, 0, now);
	skb_ended(sk, st, st->told);	/* its key: fixed by the OR, as above */
	bpf_sk_storage_delete(&sk_state, (struct sock *)sk);
	return false;
}

/* A seed's read position (tp_read_pos) at its adoption: io.bytes_recv is
 * its position less this, so what it read before the attach counts not,
 * as its sends and turns before do not. A connection seen from its start
 * has none (0). A storage of its own, made for seeds alone: a field more
 * in cs_sk took the send program past its 512-byte stack (sk_state_new's
 * init lives there). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} sk_rx_base SEC(".maps");

static __always_inline void seed_rx_base(const struct sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
	__u64 *base;

	if (!tp)
		return;
	base = bpf_sk_storage_get(&sk_rx_base, (struct sock *)sk, NULL,
				  BPF_SK_STORAGE_GET_F_CREATE);
	if (base)
		*base = tp_read_pos(tp);
}

/* Its base: 0 unless a seed's (CS_OWNER_SEED: a seed's owner, until the
 * socket is born again by a connect()). */
static __always_inline __u64 *seed_rx_base_of(const struct sock *sk, const struct cs_sk *st)
{
	if (!(st->owner.flags & CS_OWNER_SEED))
		return NULL;
	return bpf_sk_storage_get(&sk_rx_base, (struct sock *)sk, NULL, 0);
}

/* A handed connection's image (handoff_taken, handoff_close): the
 * target's, accepted by its listener as far as the books go (passive,
 * established, untold: the birth pass or its end record tells it,
 * accepted), from now on: its concurrency from here (accept() was another
 * process's), its bytes and turns from its first look (nothing counted
 * before it: its first read or send is this one). */
static __always_inline void handoff_image(const struct sock *sk, struct cs_sk *img)
{
	__u64 now = bpf_ktime_get_ns();
	int state = BPF_CORE_READ(sk, __sk_common.skc_state);

	owner_from_current(&img->owner, CS_OWNER_ACCEPT);
	img->sum = CS_SUM_PASSIVE | CS_SUM_EST;
	img->est_ns = now;
	img->io.acc_us = now / 1000;
	/* The peer's FIN came before its first look (its ESTABLISHED ->
	 * CLOSE_WAIT had no storage to mark): the peer closed first, as
	 * the transition would have said; its time is this look's, the
	 * first we know. */
	if (state == TCP_CLOSE_WAIT || state == TCP_LAST_ACK) {
		img->fin_ns = now;
		img->sum |= CS_SUM_PASSIVE_CLOSE;
	}
}

/* A handed connection's close in its target's task before any send or
 * read of it (its first look, then): its image in *init. */
static __always_inline bool handoff_close(const struct sock *sk, __u32 port, int oldstate,
					  int newstate, struct cs_sk *init)
{
	if (!handoff_port(port) ||
	    !((oldstate == TCP_ESTABLISHED && newstate == TCP_FIN_WAIT1) ||
	      (oldstate == TCP_CLOSE_WAIT && newstate == TCP_LAST_ACK)) ||
	    !current_is_target())
		return false;
	handoff_image(sk, init);
	return true;
}

/* A socket without storage: its owner if it is one of ours being born, a
 * child of a listener known only by key, a socket seeded from the
 * start-up snapshot, or one handed to a target and closed by it before
 * any send or read of its (the close in its task; seed_adopt, in
 * tcpstate_sk_seed.bpf.h, adopts the rest); NULL otherwise. */
static __always_inline struct cs_sk *sk_state_new(const struct sock *sk, int oldstate,
						  int newstate)
{
	struct cs_sk init = {};
	struct cs_owner *found;
	bool seed = false;
	__u32 port;
	struct cs_tuple t;
	struct cs_sk *st;

	if (oldstate == TCP_CLOSE && (newstate == TCP_SYN_SENT || newstate == TCP_LISTEN)) {
		if (!current_is_target()) {
			/* A listener no target holds, made while we trace
			 * in a namespace the agent reads: marked at once
			 * (user space marks those of each census, a listener
			 * made since only at the next), so a connection it
			 * hands a target in between is adopted too. */
			if (newstate == TCP_LISTEN) {
				/* Read here, not at every untraced connect(). */
				__u32 ns = sk->__sk_common.skc_net.net->ns.inum;

				if (bpf_map_lookup_elem(&handoff_netns, &ns))
					handoff_mark(sk_local_port_btf(sk));
			}
			return NULL;
		}
		owner_from_current(&init.owner,
				   newstate == TCP_LISTEN ? CS_OWNER_LISTEN : CS_OWNER_CONNECT);
	} else if (!seed_port(port = sk_local_port_btf(sk))) {
		/* Neither a seeded listener's child nor a seed: a handed
		 * connection's close, or nothing of ours. */
		if (!handoff_close(sk, port, oldstate, newstate, &init))
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
		if (found) {
			init.owner = *found;
			bpf_map_delete_elem(&seeds, &t);
			/* User space has it in its books since the start:
			 * not one it opened or accepted, should its end be
			 * lost. */
			init.sum = CS_SUM_BORN | CS_SUM_EST;
			init.told = CS_TOLD_BIRTH | CS_TOLD_BOOKS;
			seed = true;
		} else if (!handoff_close(sk, port, oldstate, newstate, &init)) {
			/* A port held seeds, and a handed one's close
			 * (80_reuse_handoff's listener both). */
			return NULL;
		}
	}
	init.sk = (__u64)sk;
	st = bpf_sk_storage_get(&sk_state, (struct sock *)sk, &init,
				BPF_SK_STORAGE_GET_F_CREATE);
	if (!st) {
		stat_inc(CS_STAT_OWNER_FULL);
	} else if (st->sum & CS_SUM_EST) {
		/* A seed, or a handed connection: established already. */
		if (seed)
			seed_rx_base(sk);
		skb_made(sk, st);
	}
	return st;
}

/* A listener's storage cloned into a child the kernel made before our
 * programs attached: user space put the storage on a listener held at the
 * start (pidfd_getfd(), between load and attach), children cloned it
 * meanwhile, and their LISTEN->SYN_RECV ran unseen. Such a storage is
 * still the listener's (st->sk is not this socket; a listener's own is
 * excluded by the caller): made the child's own here, a passive child
 * first seen now (its handshake's times unknown), like one made after
 * attach. Before, it kept the listener's owner with no CS_SUM_PASSIVE,
 * and its end was counted as a connection the server opened, towards an
 * endpoint named after the client's port (a server attached mid-load: 2
 * of 6 runs). */
static __always_inline __u64 sk_child_adopt(const struct sock *sk, struct cs_sk *st, int state,
					    __u64 now)
{
	if (st->sk == (__u64)sk)
		return now;
	st->owner.flags = CS_OWNER_LISTENER;
	st->sk = (__u64)sk;
	st->syn_ns = st->fin_ns = st->orphan_ns = 0;
	st->est_ns = state == TCP_SYN_RECV ? 0 : SK_NOW(now);
	__builtin_memset(&st->io, 0, sizeof(st->io));
	st->sum = CS_SUM_PASSIVE | CS_SUM_PROVISIONAL | (state == TCP_SYN_RECV ? 0 : CS_SUM_EST);
	st->told = 0;
	st->booked = 0;
	st->snd_ok = 0;
	st->snd_pend_us = 0;
	if (st->sum & CS_SUM_EST)
		skb_made(sk, st);
	return now;
}

static __always_inline void sk_state_reset(struct cs_sk *st, const struct sock *sk, __u8 sum,
					   __u64 now)
{
	st->sk = (__u64)sk;
	st->syn_ns = now;
	st->est_ns = st->fin_ns = st->orphan_ns = 0;
	__builtin_memset(&st->io, 0, sizeof(st->io));
	st->sum = sum;
	/* Not yet visible to the birth pass (no CS_SUM_EST): a plain store. */
	st->told = 0;
	/* Booked still, it reached ESTABLISHED and is born again with no end
	 * seen: the kernel ran nothing at its CLOSE, and its books keep it
	 * made and not ended (counted as such). */
	st->booked = 0;
	/* Its sends counted from its new life's first look: the last send
	 * run's clock is the earlier life's (a Fast Open SYN's data would
	 * take it for its time). */
	st->snd_ok = 0;
	st->snd_pend_us = 0;
}

/* What the socket queued to send since the last look, counted from
 * write_seq (send_wseq). tcp_sendmsg_locked runs before each chunk is
 * copied, so a send's bytes are known only at the next look: the next
 * send's run, a read, the close. Every look holds the socket's lock (or
 * runs in its softirq, which the lock excludes): plain stores. write_seq
 * also counts the FIN: the close's look comes before it is queued (the
 * ->FIN_WAIT1 and ->LAST_ACK transitions run just before tcp_send_fin),
 * and none after it. A socket seen from its connect() counts from its
 * first sequence number after the SYN: snd_una less bytes_acked (which
 * counted the SYN's ACK: + 1), so a Fast Open SYN's data, queued by
 * tcp_sendmsg_fastopen before the copy loop (no run), counts too; a
 * listener's child, a seed or a child adopted late counts from its first
 * look, as sock_send_length counted from its adoption. The bytes were
 * copied after the last run (a send that copied nothing, EAGAIN, moves
 * nothing and counts nothing): their time is that run's clock. */
static __always_inline void snd_sync(const struct sock *sk, const struct tcp_sock *tp,
				     struct cs_sk *st)
{
	__u32 seq;
	int state;
	__s32 d;

	if (!send_wseq || !tp)
		return;
	/* Its FIN queued (a read after shutdown(SHUT_WR) or close()): the
	 * sends' last look was at that transition. (At a transition's own
	 * look, skc_state is still the old state.) */
	state = sk->__sk_common.skc_state;
	if (state == TCP_FIN_WAIT1 || state == TCP_FIN_WAIT2 || state == TCP_CLOSING ||
	    state == TCP_LAST_ACK)
		return;
	seq = tp->write_seq;
	if (!st->snd_ok) {
		st->snd_ok = 1;
		st->snd_seq = st->syn_ns && !(st->sum & CS_SUM_PASSIVE) ?
			      tp->snd_una - (__u32)tp->bytes_acked + 1 : seq;
	}
	d = seq - st->snd_seq;
	if (d <= 0)
		return;
	st->snd_seq = seq;
	st->io.bytes_sent += d;
	if (st->io.last_dir != CS_DIR_SEND) {
		st->io.last_dir = CS_DIR_SEND;
		st->io.turns++;
	}
	/* No run before them: a Fast Open SYN's data, sent at connect. */
	st->io.last_us = st->snd_pend_us ? st->snd_pend_us : (__u32)(st->syn_ns / 1000);
}

static __always_inline int handle_state_sk(const struct sock *sk, int oldstate, int newstate,
					   bool quic)
{
	__u8 flags = quic ? CS_F_QUIC : 0;
	__u64 now = 0, tw = 0;
	struct cs_sk *st;
	__u32 told;

	st = sk_state_of(sk);
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
	if (oldstate != TCP_LISTEN && newstate != TCP_LISTEN && oldstate != TCP_CLOSE)
		now = sk_child_adopt(sk, st, oldstate, now);
	if (oldstate == TCP_CLOSE && (newstate == TCP_SYN_SENT || newstate == TCP_LISTEN)) {
		/* Born again (a connect() after a failed one reuses the socket):
		 * in this task, whose process holds it now. */
		if (!(flags & CS_F_NEW_OWNER) && current_is_target())
			owner_from_current(&st->owner, newstate == TCP_LISTEN ?
					   CS_OWNER_LISTEN : CS_OWNER_CONNECT);
		sk_state_reset(st, sk, 0, SK_NOW(now));
	} else if (oldstate == TCP_LISTEN && newstate == TCP_SYN_RECV) {
		/* The listener's storage, cloned: the child's own from here. */
		st->owner.flags = CS_OWNER_LISTENER;
		sk_state_reset(st, sk, CS_SUM_PASSIVE | CS_SUM_PROVISIONAL, SK_NOW(now));
		return 0;
	}
	/* The sends' last look, before the close queues the FIN (write_seq
	 * holds it from then on), or at a CLOSE that sent none (a reset, an
	 * abort, a refused connect). */
	if (!quic && (newstate == TCP_FIN_WAIT1 || newstate == TCP_LAST_ACK ||
		      (newstate == TCP_CLOSE && oldstate != TCP_FIN_WAIT1 &&
		       oldstate != TCP_FIN_WAIT2 && oldstate != TCP_CLOSING &&
		       oldstate != TCP_LAST_ACK && oldstate != TCP_LISTEN)))
		snd_sync(sk, send_wseq ? bpf_skc_to_tcp_sock((void *)sk) : NULL, st);
	if (newstate == TCP_ESTABLISHED) {
		st->est_ns = SK_NOW(now);
		st->sum |= CS_SUM_EST;
		if (!quic)
			skb_made(sk, st);
	}
	/* Its cookie made before its TIME_WAIT (sock_read.bpf.h). */
	SK_COOKIE_AT_FIN_WAIT1(sk, newstate, quic);
	if ((newstate == TCP_FIN_WAIT1 || newstate == TCP_CLOSE_WAIT) && !st->fin_ns) {
		st->fin_ns = SK_NOW(now);
		st->sum |= newstate == TCP_FIN_WAIT1 ? CS_SUM_ACTIVE_CLOSE : CS_SUM_PASSIVE_CLOSE;
	}
	if (!(st->sum & CS_SUM_ORPHAN) && sk_is_orphan(sk, true)) {
		st->orphan_ns = SK_NOW(now);
		st->sum |= CS_SUM_ORPHAN;
	}
	/* The application's close() runs in its task: the owner, if it was
	 * still the listener's. */
	if ((st->sum & CS_SUM_PROVISIONAL) &&
	    ((oldstate == TCP_ESTABLISHED && newstate == TCP_FIN_WAIT1) ||
	     (oldstate == TCP_CLOSE_WAIT && newstate == TCP_LAST_ACK)) &&
	    !owner_settle(sk, st, now))
		return 0;

	if (newstate == TCP_LISTEN)
		return emit_sk(sk, st, &st->owner, CS_EV_STATE, oldstate, newstate, flags, 0, now);
	if (newstate != TCP_CLOSE)
		return 0;	/* ESTABLISHED too: see birth_pass */
	if (oldstate == TCP_LISTEN) {
		/* A listener seeded at the start has a key too (user space
		 * puts it in both): before, it stayed, and the children of a
		 * later untraced listener at that address were charged to
		 * this owner. */
		struct cs_tuple t;

		sk_read_tuple(sk, &t, true);
		listen_key_drop(&t, st->owner.tgid);
	}
	if ((oldstate == TCP_FIN_WAIT2 || oldstate == TCP_CLOSING) && !quic) {
		if (tw_follow)
			tw = tw_adopt(sk, &st->owner, true, &flags);
		else
			tw_census_flags(sk, true, &flags);
	}
	/* Whether the books heard of its birth (a seed, or the birth pass),
	 * or learn it from this record (CS_F_ACCEPTED too). */
	told = __sync_fetch_and_or(&st->told, CS_TOLD_END);
	if (told & CS_TOLD_BIRTH)
		st->sum |= CS_SUM_BORN;
	/* Accepted means accept() returned it: a child that ended in the
	 * accept queue is counted apart. Before, every passive child was
	 * counted accepted at its end. */
	if ((st->sum & CS_SUM_PASSIVE) && sk_unaccepted(sk, true))
		flags |= CS_F_NOT_ACCEPTED;
	else if (!(st->sum & CS_SUM_BORN) && (st->sum & CS_SUM_PASSIVE) && !accept_tp)
		flags |= CS_F_ACCEPTED;
	emit_sk(sk, st, &st->owner, CS_EV_STATE, oldstate, newstate, flags, tw, now);
	skb_ended(sk, st, told);
	bpf_sk_storage_delete(&sk_state, (struct sock *)sk);
	return 0;
}

#include "tcpstate_sk_seed.bpf.h"
#include "tcpstate_sk_io.bpf.h"

/* The birth pass: every TCP socket of one network namespace (an iter/tcp
 * iterator the agent creates in each namespace it reads and runs before
 * each reconcile). A traced one established since the last pass and
 * still alive sends its birth with the handshake's times, as the state
 * program used to at ESTABLISHED.
 *
 * What the protocol rests on: the kernel runs this program with the
 * socket locked, and skips a socket already unhashed (closed):
 * bpf_iter_tcp_seq_show() takes lock_sock_fast() (5.15 to 6.4: the
 * socket's spinlock with softirqs off, or ownership if a task holds it)
 * or lock_sock() (6.5 on, kernel commit 9378096e8a65: ownership). So no
 * state change of the socket runs during it: a task's (connect, close,
 * shutdown, tcp_abort, the locked part of a send or read) waits for the
 * lock; a softirq's (segments in, RST, TCP's retransmit, delayed-ACK and
 * keepalive timers, which end FIN_WAIT2) spins on the spinlock under
 * lock_sock_fast(), and under lock_sock() finds the socket owned and is
 * queued to its backlog or deferred (TCP_*_DEFERRED, the keepalive timer
 * re-armed): it runs at release_sock(), after this program, in the
 * agent's task (so current is the agent there). What still runs beside it
 * on other CPUs, and is why told is set with atomics:
 * - the send program at sock_send_length, which fires after
 *   tcp_sendmsg() has released the lock, and a listener's child's first
 *   send settles its owner (owner_settle, CS_TOLD_SETTLING /
 *   CS_TOLD_SETTLED); at tcp_sendmsg_locked (send_wseq) it runs with the
 *   lock held, as the pass's look at the sends (snd_sync) needs;
 * - from 6.5, a listener's close() ending a child still in its accept
 *   queue: inet_csk_listen_stop() takes only the child's spinlock (it
 *   WARNs that the child is owned, and goes on), so that child's CLOSE
 *   can run during the pass; birth_tell() tells no such child (still
 *   queued: sk_unaccepted; orphaned by then: its claim finds the
 *   CLOSE's CS_TOLD_END, set before sock_orphan()).
 * So the atomic OR on told decides which of this pass and a record of the
 * socket's own tells the birth, and the record is reserved before that
 * OR: whatever the socket sends after it lost the race (its CLOSE, an
 * owner move) is reserved later, and user space reads the ring in
 * reservation order, so the birth always comes first.
 * A birth whose owner was being written meanwhile (CS_TOLD_SETTLING) is
 * dropped and its claim given back: the next pass tells it. (iter/bpf_sk_storage_map would
 * visit the traced sockets alone, but this kernel refuses to load it,
 * EPERM; iter/tcp visits every socket of the namespace, TIME_WAIT too.) */
/* The pass counts the booked storages alive. It runs each socket once:
 * the reader asks for at most 512 bytes a read, and bpf_seq_read stops at
 * that count, long before the seq buffer could overflow (the one case
 * where a socket is shown again). */
static __always_inline void skb_alive(const struct sock *sk, const struct cs_sk *st, __u32 told)
{
	struct cs_skb_key k;
	__u64 one = 1, *n;

	skb_key(sk, st, st->owner.tgid, told, &k);
	n = bpf_map_lookup_elem(&sk_alive, &k);
	if (n)
		(*n)++;
	else
		bpf_map_update_elem(&sk_alive, &k, &one, BPF_NOEXIST);
}

#include "tcpwalk.bpf.h"

/* Tells the birth of st's socket, established and untold (the pass's
 * record). true: told, and its books moved to the told key (CS_SKB_TOLD):
 * the books count it from this record, so an end of it that no program
 * runs is not counted opened or accepted again. Its CLOSE cannot run
 * while this does (the socket's lock; a child still in its accept queue,
 * whose CLOSE can from 6.5, is not told: birth_pass), but a settle at a
 * send can, and an end seen before the claim is in told: the OR of
 * CS_TOLD_BOOKS and the CLOSE's of CS_TOLD_END decide in one order
 * whether the books move (no end yet) or stay where its end counted them
 * (skb_ended's key comes from its OR). */
static __always_inline bool birth_tell(struct bpf_iter__tcp *ctx, struct sock *sk,
				       struct cs_sk *st)
{
	bool passive = st->sum & CS_SUM_PASSIVE;
	__u32 told, claim, e_tgid;
	struct cs_event *e;

	/* Still in the accept queue: not the application's connection yet.
	 * A later pass tells it once accept() returned it; if it ends in the
	 * queue, its end record says so (CS_F_NOT_ACCEPTED). */
	if (passive && sk_unaccepted(sk, true))
		return false;
	e = ev_reserve(sk, NULL, CS_EV_STATE, passive ? TCP_SYN_RECV : TCP_SYN_SENT,
		       TCP_ESTABLISHED, CS_F_SUMMARY | (passive && !accept_tp ? CS_F_ACCEPTED : 0),
		       0, true);
	if (!e)
		return false;	/* counted lost; its end record will tell it */
	claim = __sync_fetch_and_or(&st->told, CS_TOLD_BIRTH);
	if (claim & ~CS_TOLD_SETTLED) {
		bpf_ringbuf_discard(e, 0);
		return false;
	}
	claim |= CS_TOLD_BIRTH;
	e->owner = st->owner;
	e_tgid = e->owner.tgid;
	/* Nothing else set since the claim: the books move to the told key
	 * (CS_TOLD_BOOKS, below), and an end or a settle from here on finds
	 * them there. */
	told = __sync_val_compare_and_swap(&st->told, claim, claim | CS_TOLD_BOOKS);
	if (told & (CS_TOLD_SETTLING | (CS_TOLD_SETTLED & ~claim))) {
		/* The owner may be half-written, or an earlier one's (a settle
		 * began, or ran whole, since the claim): give the claim back,
		 * so the next pass tells this birth with the settled owner.
		 * Before, CS_TOLD_BIRTH stayed, no later pass told it, and the
		 * live connection was missing from the books until its end. A
		 * settle that saw the claim meanwhile sends an owner record
		 * the books drop (they do not know the socket yet); a CLOSE
		 * that saw it says BORN, which the books take whole. */
		__sync_fetch_and_and(&st->told, ~CS_TOLD_BIRTH);
		bpf_ringbuf_discard(e, 0);
		return false;
	}
	/* Out of the queue (above) but not yet used in a task: accepted
	 * by the pass's time at the latest. */
	e->io.acc_us = st->io.acc_us ? st->io.acc_us : passive ? e->ts_ns / 1000 : 0;
	e->ts_ns = st->est_ns ? st->est_ns : e->ts_ns;
	e->flags &= ~CS_F_ORPHAN;	/* a birth: its orphaning comes at its end */
	sk_read_tuple(sk, &e->tuple, true);
	e->syn_ns = st->syn_ns;
	e->est_ns = st->est_ns;
	e->cookie = bpf_get_socket_cookie(sk);
	e->sum = st->sum & ~(CS_SUM_ACTIVE_CLOSE | CS_SUM_PASSIVE_CLOSE | CS_SUM_ORPHAN);
	ev_submit(e);
	/* A byte to the reader for each birth: its read() returns after as
	 * many as it asked for, and it drains the ring before the next, so
	 * a pass over 100k new connections never fills the ring (it lost
	 * 74k of 100k births in one burst before). A census walk's
	 * record already is one, a socket. */
	if (!walk_census)
		bpf_seq_write(ctx->meta->seq, &passive, 1);
	/* Its end came first (or an untraced process took it): its books
	 * stay where that end counted them. */
	if (told != claim)
		return false;
	/* Under the owner copied above: a settle from the exchange on moves
	 * the told key's books from that one. */
	if (st->booked) {
		skb_count(sk, st, e_tgid, 0, true);
		skb_count(sk, st, e_tgid, CS_TOLD_BOOKS, false);
	}
	return true;
}

SEC("?iter/tcp")
int birth_pass(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp;
	struct sock *sk;
	struct cs_sk *st;
	__u32 told;

	if (!skc)
		return 0;
	if (walk_census)
		walk_emit(ctx, skc);	/* the census's record (tcpwalk.bpf.h) */
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;	/* TIME_WAIT, request socks */
	sk = (struct sock *)tp;
	st = bpf_sk_storage_get(&sk_state, sk, 0, 0);
	if (!st)
		return 0;
	/* The sends queued since the socket's last look (snd_sync): a send
	 * is counted only at a look, and the report reads a live
	 * connection's traffic after the end's pass, so an idle connection's
	 * last answer or a request still unanswered counts there. The
	 * socket's lock is held (above), as by every caller of
	 * tcp_sendmsg_locked and every other look. Not a listener, which
	 * sends nothing (its storage is cloned into its children), nor a
	 * child still in the accept queue: it sent nothing, and its
	 * listener's close may end it during the pass (above). */
	if (skc->skc_state != TCP_LISTEN &&
	    (!(st->sum & CS_SUM_PASSIVE) || !sk_unaccepted(sk, true)))
		snd_sync(sk, tp, st);
	told = st->told;
	if (!(told & ~CS_TOLD_SETTLED) && (st->sum & (CS_SUM_EST | CS_SUM_BORN)) == CS_SUM_EST &&
	    birth_tell(ctx, sk, st))
		told = CS_TOLD_BOOKS;
	/* Alive under the key its books are in now. */
	if (st->booked)
		skb_alive(sk, st, told);
	return 0;
}

#endif
