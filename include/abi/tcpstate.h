/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Contract between tcpstate.bpf.c and user space: fixed-size types only. */
#ifndef CONNSCOPE_TCPSTATE_H
#define CONNSCOPE_TCPSTATE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>	/* user space; BPF gets the types from vmlinux.h */
#endif

#define CS_COMM_LEN 16

/* Process start times everywhere (BPF and /proc): boottime ns cut to whole
 * USER_HZ ticks, the unit of /proc/PID/stat field 22 (USER_HZ is 100 on
 * every architecture's user ABI but alpha). One unit, so one process's
 * start compares equal from both sides and a reused pid does not. */
#define CS_TICK_NS 10000000ULL

/* Event types on the ring buffer. */
#define CS_EV_STATE	1	/* inet_sock_set_state on a traced socket */
#define CS_EV_ACCEPT	2	/* accept()/accept4() returned a socket to a traced process */
#define CS_EV_TW_CANCEL	3	/* the tw timer of a traced TIME_WAIT socket was cancelled */
#define CS_EV_TW_EXPIRE	4	/* ... and ran: the TIME_WAIT socket expired after its 60 s */
#define CS_EV_ADOPT	5	/* a seeded socket met at its first send/recv: now known by sk */
#define CS_EV_PROC	6	/* a process became a target (--comm, --cgroup): owner says who */
#define CS_EV_TW_KILL	8	/* a traced TIME_WAIT socket ended early (inet_twsk_kill
				 * not from its timer: takeover, RST, ss -K) */
#define CS_EV_OWNER	7	/* an accepted socket's owner, learned at its first send,
				 * receive or close in a task (socket-storage mode): owner
				 * is the new one, tgid 0 when that process is not traced */
#define CS_EV_FORK	9	/* a target forked a child that is now traced (--children):
				 * owner is the child, ptgid its parent; not a join */

/* cs_owner.flags */
#define CS_OWNER_CONNECT	0x01	/* learned at CLOSE->SYN_SENT in the connecting task */
#define CS_OWNER_LISTEN		0x02	/* learned at CLOSE->LISTEN */
#define CS_OWNER_ACCEPT		0x04	/* learned at accept() exit (fd table walk) */
#define CS_OWNER_LISTENER	0x08	/* provisional: the listener's owner, until accept() */
#define CS_OWNER_SEED		0x10	/* seeded by user space from the start-up snapshot */

/* cs_event.flags */
#define CS_F_ORPHAN	0x01	/* sk_socket == NULL and SOCK_DEAD: closed by the app, alive in the kernel */
#define CS_F_NEW_OWNER	0x02	/* the owner was learned at this event */
#define CS_F_QUIC	0x04	/* an in-kernel QUIC socket (IPPROTO_QUIC), not TCP */
#define CS_F_SUMMARY	0x08	/* socket-storage mode: the transitions between the
				 * socket's records are folded into syn/est/fin/orphan
				 * times and sum (CS_SUM_*), not sent one by one */
#define CS_F_ACCEPTED	0x10	/* count the passive connection as accepted here (no
				 * accept() tracepoint in this mode) */
#define CS_F_NOT_ACCEPTED 0x20	/* ->CLOSE of a listener's child that accept() never
				 * returned: it ended in the accept queue (no struct
				 * socket was ever grafted on it; see sk_unaccepted) */
#define CS_F_TW_MAYBE	0x40	/* no TIME_WAIT hook (census mode): a clean
				 * FIN_WAIT2/CLOSING->CLOSE while the namespace's
				 * TIME_WAIT table was full; whether the kernel made
				 * one is for the dumps to say */
#define CS_F_TW_OVERFLOW 0x80	/* a clean FIN_WAIT2/CLOSING->CLOSE that made no
				 * TIME_WAIT: no tw timer started and the namespace's
				 * TIME_WAIT table is full (tcp_max_tw_buckets; the
				 * kernel's TcpExtTCPTimeWaitOverflow) */

/* cs_event.sum and the socket storage's: what the socket went through. */
#define CS_SUM_EST		0x01	/* reached ESTABLISHED (at est_ns) */
#define CS_SUM_ACTIVE_CLOSE	0x02	/* ESTABLISHED->FIN_WAIT1: this side closed first (fin_ns) */
#define CS_SUM_PASSIVE_CLOSE	0x04	/* ->CLOSE_WAIT: the peer closed first (fin_ns) */
#define CS_SUM_ORPHAN		0x08	/* seen orphaned (first at orphan_ns) */
#define CS_SUM_PASSIVE		0x10	/* a listener's child */
#define CS_SUM_PROVISIONAL	0x20	/* owner is the listener's, until a task's first
					 * send, receive or close names the real one */
#define CS_SUM_BORN		0x40	/* its birth record went out (a seed: the books
					 * had it from the start) */
#define CS_SUM_COOKIE_BEFORE	0x80	/* record only: the socket had its
					 * cookie before the record (made at
					 * FIN_WAIT1, by a census, a birth): a
					 * TIME_WAIT it entered has the same
					 * (inet_twsk_alloc copies it; one made
					 * at the CLOSE comes after the copy).
					 * Also on a per-transition close into
					 * TIME_WAIT. */

/* Per-CPU counters (stats map index). */
#define CS_STAT_EVENTS		0	/* events written to the ring buffer */
#define CS_STAT_RB_LOST		1	/* ring buffer reservations that failed: events lost */
#define CS_STAT_OWNER_FULL	2	/* owner map updates that failed (map full) */
#define CS_STAT_ACCEPT_MISS	3	/* accept() returned an fd we could not resolve to a TCP sock */
#define CS_STAT_STATE_CALLS	4	/* not counted since 2026-12-07: nothing read it, and
					 * it cost every state change a lookup and an add */
#define CS_STAT_FORKS		5	/* children added by follow-children */
#define CS_STAT_TW_UNMATCHED	6	/* clean FIN_WAIT2/CLOSING->CLOSE without a tw timer start */
#define CS_STAT_TARGETS_GONE	7	/* targets removed from the filter at their exit */
#define CS_STAT_STALE_OWNER	8	/* a socket's birth (connect, listen, a listener's child)
					 * found an owner left at its address by an
					 * earlier socket: dropped, not inherited */
#define CS_STAT_SKIPPED		9	/* filled by user space, not BPF: runs the kernel
					 * skipped because the same program was already
					 * running on that CPU (bpf_prog_info
					 * recursion_misses: a softirq's state change
					 * inside a task's), each an event unseen */
#define CS_STAT_NESTED		10	/* state changes that interrupted the main program
					 * on its CPU, taken by its second (see
					 * handle_set_state_nested) */
#define CS_STAT_TW_FULL		11	/* tw_owners updates that failed (map full): a traced
					 * TIME_WAIT whose end is not followed; raise
					 * --max-time-wait */
#define CS_STAT_SKB_FULL	12	/* sk_books updates that failed (map full): the
					 * storages' books stop counting there */
#define CS_STAT_ENDS_UNRUN	13	/* filled by user space, not BPF: connections whose
					 * storage went with no end record, the kernel having
					 * run no state program at their CLOSE (sk_books) */
#define CS_STAT_MAX		14

/* The owner of a socket: the process whose file table holds it. */
struct cs_owner {
	__u32 tgid;
	__u32 flags;		/* CS_OWNER_* */
	__u64 start_ns;		/* group leader's start (boottime ns, cut to whole clock
				 * ticks, the unit of /proc/PID/stat field 22, so the BPF
				 * and /proc values of one process compare equal) */
	char comm[CS_COMM_LEN];
};

/* Addresses as on the wire; v4 in the first 4 bytes. Ports host order. */
struct cs_tuple {
	__u8 saddr[16];
	__u8 daddr[16];
	__u16 sport;
	__u16 dport;
	__u16 family;
	__u16 pad;
	__u32 netns;		/* network namespace inode (/proc/PID/ns/net): the same
				 * 4-tuple in two namespaces is two connections */
};

/* Application data of one traced connection: bytes each way and turns, a
 * maximal run of sends or of receives (request/response exchanges are
 * (turns + 1) / 2). */
#define CS_DIR_SEND 1
#define CS_DIR_RECV 2
struct cs_conn_io {
	__u64 bytes_sent;
	__u64 bytes_recv;
	__u32 turns;
	__u8 last_dir;		/* CS_DIR_* */
	__u8 pad[3];
	/* The socket's own clock at its last send or receive (tcp_mstamp:
	 * the packet it last sent or took in, µs, cut to 32 bits): this side's
	 * last byte of the last answer it read or sent. No clock read of
	 * ours. 0 none. */
	__u32 last_us;
	/* A listener's child, socket-storage mode: when the process that
	 * accepted it first used it (its first send, receive or close in a
	 * task, where this mode learns accept() returned it; from here it
	 * carries requests), the clock's µs cut to 32 bits (the books take
	 * the first such time after the handshake's end: 71 min to choose
	 * from); 0 not yet. */
	__u32 acc_us;
};

/* A traced listener, for the children it takes before accept() when its
 * own socket storage cannot be read (classic tracepoint, listeners seeded
 * from the start-up snapshot): namespace, family, bound address, port.
 * A wildcard bind has an all-zero address. */
struct cs_listen_key {
	__u32 netns;
	__u16 family;
	__u16 port;
	__u8 addr[16];
};

struct cs_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns() */
	__u64 sk;		/* kernel address of the sock: identity while it lives;
				 * for CS_EV_TW_*: the inet_timewait_sock */
	__u64 tw;		/* ->CLOSE into TIME_WAIT: the inet_timewait_sock that
				 * took over (0 when the tw timer is not traced) */
	struct cs_owner owner;	/* tgid 0: owner unknown (only when no tgid filter) */
	struct cs_tuple tuple;
	__u32 cur_tgid;		/* task running at the event (softirq: anybody) */
	__u8 type;		/* CS_EV_* */
	__u8 oldstate;
	__u8 newstate;		/* for CS_EV_ACCEPT: the state at accept() */
	__u8 flags;		/* CS_F_* */
	__u16 sk_err;		/* sk->sk_err: 0, ECONNRESET, ECONNREFUSED, ETIMEDOUT... */
	__u8 sk_shutdown;	/* SHUTDOWN_MASK (3) on a normal close */
	__u8 pad[5];
	__u32 ptgid;		/* CS_EV_PROC, CS_EV_FORK: the process's parent (the
				 * agent's pid namespace; 0 unknown): report groups */
	struct cs_conn_io io;	/* ->CLOSE: the connection's whole traffic */
	/* CS_F_SUMMARY only; ktime ns, 0 when not reached or not seen. */
	__u64 syn_ns;		/* CLOSE->SYN_SENT or LISTEN->SYN_RECV: the handshake began */
	__u64 est_ns;		/* ->ESTABLISHED */
	__u64 fin_ns;		/* ->FIN_WAIT1 or ->CLOSE_WAIT: the close began */
	__u64 orphan_ns;	/* first seen orphaned */
	__u64 cookie;		/* the socket's cookie (SO_COOKIE, sock_diag's idiag_cookie);
				 * per-transition: only a close into TIME_WAIT's,
				 * with CS_SUM_COOKIE_BEFORE (else 0) */
	__u8 sum;		/* CS_SUM_* */
	__u8 pad2[7];
};

/* Socket-storage mode: what the kernel keeps on each traced socket, from
 * its birth (connect, listen, a listener's child) to its CLOSE. A
 * listener's is cloned into each child it makes. */
struct cs_sk {
	struct cs_owner owner;
	__u64 sk;		/* the sock's address, as cs_event.sk names it */
	__u64 syn_ns, est_ns, fin_ns, orphan_ns;
	struct cs_conn_io io;
	__u8 sum;		/* CS_SUM_* */
	__u8 booked;		/* counted made in sk_books (an established TCP
				 * connection's): its end is counted ended */
	__u8 snd_ok;		/* snd_seq holds a position (sends counted from
				 * write_seq: tcp_sendmsg_locked mode) */
	__u8 pad;
	__u32 told;		/* CS_TOLD_*, set with atomic ORs: the socket's own
				 * programs and the agent's birth pass race for it
				 * (the pass holds the socket's lock: what still runs
				 * beside it is said at birth_pass) */
	__u32 snd_seq;		/* write_seq where sends were last counted */
	__u32 snd_pend_us;	/* the clock's µs at the last tcp_sendmsg_locked run:
				 * the time of the bytes the next look finds queued */
};

/* The socket storages' books (socket-storage mode), per network
 * namespace, owner and side, in a per-CPU hash: a storage is made when its
 * TCP connection is established and ended when the state program sends its
 * end (or gives it to an untraced process). The agent's birth pass counts
 * those alive (sk_alive). The kernel on some hits runs no BPF program at
 * all for a tracepoint (this sandbox's 6.18 in a softirq on its agent's
 * threads, docs/reliability.md; under pgbench -C: 0-3 of ~2,400
 * FIN_WAIT2->CLOSE that tracefs records, recursion_misses 0): such a
 * connection sends nothing, and made - ended - alive is what counts it. */
struct cs_skb_key {
	__u32 netns;		/* inode of the socket's network namespace */
	__u32 tgid;		/* its owner (cs_sk.owner.tgid) */
	__u32 flags;		/* CS_SKB_* */
};

/* cs_skb_key.flags. A connection whose birth the books were told (the
 * birth pass's record, or a seed's adoption) is counted in opened or
 * accepted already: its books move to the CS_SKB_TOLD key when it is
 * told, so an end of it that no program ran is said lost but not counted
 * opened a second time (42_postgres_backends' client at -i 0.1: 1,203
 * opened of the kernel's 1,201 active opens, two ends lost, both of
 * connections the birth records had counted). */
#define CS_SKB_PASSIVE	0x01	/* a listener's child (accepted side) */
#define CS_SKB_TOLD	0x02	/* its birth was told (CS_TOLD_BOOKS) */

struct cs_skb_val {
	__u64 made, ended;
};

/* cs_sk.told: what user space has been told, or will be, of the socket. A
 * socket's birth is not sent when it is established: most connections of
 * a load test end within an interval, and their end record says all. The
 * agent's birth pass (an iterator over the socket storage, run before each
 * reconcile) tells the books of those still alive. Whoever sets a bit
 * first sends the record that goes with it. */
#define CS_TOLD_BIRTH	0x01	/* the birth pass sent (or lost) its birth record */
#define CS_TOLD_END	0x02	/* its end record went (CLOSE) */
#define CS_TOLD_GONE	0x04	/* taken by an untraced process: no more records */
#define CS_TOLD_SETTLING 0x08	/* its owner is being written (owner_settle): a birth
				 * pass that sees it drops its copy of the owner and
				 * gives CS_TOLD_BIRTH back (the next pass tells it) */
#define CS_TOLD_BOOKS	0x10	/* its books are under the CS_SKB_TOLD key: set by the
				 * pass that told its birth, in one exchange with
				 * nothing else set since its claim (it moves them
				 * there), or at a seed's adoption */
#define CS_TOLD_SETTLED	0x20	/* owner_settle wrote the owner: a pass whose claim
				 * came before that gives it back (its copy of the
				 * owner may be the earlier one) */

#endif
