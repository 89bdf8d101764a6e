/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Socket-storage mode's traffic: a traced socket's bytes, turns and last
 * byte's time, from the send tracepoints (sock_send_length, or
 * tcp_sendmsg_locked and write_seq) and TCP's reads (tcp_rcv_space_adjust
 * and copied_seq). Part of tcpstate_sk.bpf.h (included there, after the
 * state program), in a file of its own by concern. */
#ifndef CONNSCOPE_TCPSTATE_SK_IO_BPF_H
#define CONNSCOPE_TCPSTATE_SK_IO_BPF_H

/* A send or receive of ret bytes on a traced socket: its bytes, a turn
 * where the direction changed, and its last byte's time (the books end
 * its concurrency there, not at a FIN that may come later). Both modes:
 * the socket's storage, or the per-transition mode's conn_io entry. */
static __always_inline void io_add(struct cs_conn_io *io, const struct sock *sk, int ret,
				   __u8 dir, bool trusted)
{
	if (dir == CS_DIR_SEND)
		__sync_fetch_and_add(&io->bytes_sent, ret);
	else
		__sync_fetch_and_add(&io->bytes_recv, ret);
	if (io->last_dir != dir) {
		io->last_dir = dir;
		__sync_fetch_and_add(&io->turns, 1);
	}
	io->last_us = sk_tcp_us(sk, trusted);
}

/* Every send and receive on every socket of the machine passes here. */
static __always_inline int count_io_sk(const struct sock *sk, int ret, __u8 dir)
{
	struct cs_sk *st;

	if (ret <= 0)
		return 0;
	st = sk_state_of(sk);
	if (!st) {
		/* A connection held since before we attached sends without a
		 * state change: adopt its seed here. Its protocol first: a
		 * plain load, where the port is a probe read (UDP and unix
		 * sockets pass here too). */
		if (!sk_is_tcp(sk, true))
			return 0;
		st = seed_adopt(sk);
		if (!st)
			return 0;
	} else if (sk->__sk_common.skc_state != TCP_LISTEN) {
		/* No clock unless adopted: a send or receive reads it not at
		 * all (it read it every run before). An adopted child has
		 * told nothing, so the settle below sends nothing: one read
		 * at most. (No run's now carried here: one more live value
		 * took the program past the 512-byte stack.) */
		sk_child_adopt(sk, st, sk->__sk_common.skc_state, 0);
	}
	if ((st->sum & CS_SUM_PROVISIONAL) && !owner_settle(sk, st, 0))
		return 0;
	io_add(&st->io, sk, ret, dir, true);
	return 0;
}

/* tcp:tcp_sendmsg_locked (send_wseq): a TCP send in a task, run before
 * each chunk it copies (msg_left bytes still to copy), so once for a
 * small send and once a chunk of a large one (~48 a MiB on loopback); no
 * run for UDP, unix or netlink sockets, which sock_send_length ran for
 * at every sendmsg. What was queued before this run is counted here
 * (snd_sync); this chunk, at the next look. */
static __always_inline int count_send_sk(const struct sock *sk)
{
	struct cs_sk *st = sk_state_of(sk);

	if (!st) {
		st = seed_adopt(sk);
		if (!st)
			return 0;
	} else if (sk->__sk_common.skc_state != TCP_LISTEN) {
		sk_child_adopt(sk, st, sk->__sk_common.skc_state, 0);
	}
	/* kTLS's tx worker and sockmap's redirect send in the kernel's
	 * context: only a task's send settles an owner. Such a run is a look
	 * all the same: a listener's child whose first sends came from there
	 * counts them (before, it returned here, its base was taken at its
	 * first task's look, after them, and they were lost). */
	if ((st->sum & CS_SUM_PROVISIONAL) && rx_in_task() && !owner_settle(sk, st, 0))
		return 0;
	snd_sync(sk, tp_view(sk), st);
	/* The clock, not the socket's own (tcp_mstamp is the last packet's,
	 * before this send; at the next look, a later one's, its ACK or the
	 * peer's FIN): ~80 ns of this run's ~200, measured, and what
	 * 95_doctor_concurrency's last_* cases check. */
	st->snd_pend_us = bpf_ktime_get_ns() / 1000;
	return 0;
}

/* Of a seed adopted at a read, what this read took already (its storage
 * was made after the read moved copied_seq): recvmsg runs
 * tcp_rcv_space_adjust after each chunk it copies and before it frees the
 * chunk's skb, still first in the receive queue, so copied_seq less that
 * skb's first sequence number is this read's chunk (and what a read
 * before the attach left of that skb, if it stopped inside one). A peek
 * or splice()'s read (tcp_read_sock frees its skbs first) finds an skb
 * not read yet, or none: 0, and a splice that adopts a seed is not
 * counted (its later ones are: 144 bytes counted for 160 by hand).
 *
 * Not exact from the socket at that point, checked against the kernel's
 * source: tcp_read_sock writes copied_seq, unlinks and frees the skbs it
 * read and only then runs tcp_rcv_space_adjust; the length it read lives
 * in its locals and the caller's read_descriptor_t, and the data in the
 * splice's pipe, none reachable from sk. No tcp_sock field keeps the read
 * position before this read: rcvq_space.seq is copied_seq at the last
 * receive-buffer measure, taken only once rcv_rtt_est.rtt_us is nonzero
 * (the receiver's RTT, measured on a full-MSS segment with timestamps or
 * once a whole receive window came in: never on a pool of small
 * requests) and an eighth of it has passed, so it can lie any number of
 * reads back, before the attach too; rcv_wup follows rcv_nxt, not
 * copied_seq. What could make it exact is user space: the seed's read
 * position at the start-up dump (tcp_info's tcpi_bytes_received less
 * idiag_rqueue, as tp_read_pos) put beside the seed by its tuple and
 * taken for the base at adoption, counting every read after the dump.
 * Its price: INET_DIAG_INFO in every start-up dump, a map lookup and a
 * pointer more on the send and read programs' stack, and a window of its
 * own (the dump reads idiag_rqueue outside the socket's lock and
 * tcp_info inside it: data arriving between them moves the base). Not
 * done. */
static __always_inline __u32 rx_seed_chunk(const struct sock *sk, const struct tcp_sock *tp)
{
	const struct sk_buff *skb = sk->sk_receive_queue.next;
	__u32 seq, done;

	if (!skb || (void *)skb == (void *)&sk->sk_receive_queue)
		return 0;
	/* tcp_skb_cb.seq: the first field of skb->cb in every kernel. */
	if (bpf_probe_read_kernel(&seq, sizeof(seq),
				  (const char *)skb + bpf_core_field_offset(struct sk_buff, cb)))
		return 0;
	done = tp->copied_seq - seq;
	return (__s32)done > 0 ? done : 0;
}

/* A read of a TCP socket that moved copied_seq (tp_btf
 * tcp:tcp_rcv_space_adjust, from inside TCP's reads: a recv() that
 * returns EAGAIN or only the EOF runs nothing, nor does any UDP or unix
 * socket, but splice()'s tcp_read_sock runs it for those too, and a peek
 * runs it: the position, unmoved, counts nothing then;
 * sock_recv_length ran for all of those, 4 of a keep-alive request's 6
 * calls were reads and 2 of them EAGAIN). It carries no length: the bytes
 * are the read position's move (tp_read_pos), and io.bytes_recv is that
 * position less its base (0 but for a seed's: sk_rx_base). Every caller holds the
 * socket's lock (tcp_rcv_space_adjust changes its receive buffer), so
 * two reads never run here at once: plain stores. It fires once for each
 * chunk copied: a bulk read moves it several times, turns count
 * direction changes only. */
static __always_inline int count_rx_sk(const struct sock *sk)
{
	struct tcp_sock *tp;
	struct cs_sk *st;
	__u64 pos, *base;

	st = sk_state_of(sk);
	if (!st) {
		/* A connection held since before we attached, read first:
		 * adopted here, as its first send does. Its bytes read count
		 * from this read on (sk_state_new took the position after
		 * it for its base; rx_seed_chunk gives this read back). */
		st = seed_adopt(sk);
		if (!st)
			return 0;
		tp = bpf_skc_to_tcp_sock((void *)sk);
		base = seed_rx_base_of(sk, st);
		if (tp && base) {
			__u32 chunk = rx_seed_chunk(sk, tp);

			*base = *base > chunk ? *base - chunk : 0;
		}
	} else if (sk->__sk_common.skc_state != TCP_LISTEN) {
		sk_child_adopt(sk, st, sk->__sk_common.skc_state, 0);
	}
	if (st->sum & CS_SUM_PROVISIONAL) {
		if (!rx_in_task())
			return 0;	/* counted at the task's next read */
		if (!owner_settle(sk, st, 0))
			return 0;
	}
	/* The hook's socket is a TCP full one: a view, not the helper's
	 * checked cast (~40 ns a run less, measured). */
	tp = tp_view(sk);
	/* Sends queued since the last look came before this read. */
	snd_sync(sk, tp, st);
	pos = tp_read_pos(tp);
	base = seed_rx_base_of(sk, st);
	if (base)
		pos = pos > *base ? pos - *base : 0;
	if (pos <= st->io.bytes_recv)
		return 0;	/* a peek, or nothing read (splice's EAGAIN or EOF) */
	st->io.bytes_recv = pos;
	if (st->io.last_dir != CS_DIR_RECV) {
		st->io.last_dir = CS_DIR_RECV;
		__sync_fetch_and_add(&st->io.turns, 1);
	}
	/* When the data came in, as at a send (sk_tcp_us): the last
	 * segment's, tcp_rcv_space_adjust refreshes it after this. */
	st->io.last_us = (__u32)tp->tcp_mstamp;
	return 0;
}

#endif
