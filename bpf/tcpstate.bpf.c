// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* TCP state tracking on tcp_set_state (the sock:inet_sock_set_state
 * tracepoint) with per-process attribution.
 *
 * The owner of a socket is the process whose file table holds it. It is
 * learned where the kernel runs in that process's context: CLOSE->SYN_SENT
 * (connect), CLOSE->LISTEN (listen) and accept() exit. Handshakes on the
 * accept side finish in softirq, where current is whoever ran; such
 * sockets are charged to the listener's owner until accept() names the
 * real one. Sockets that existed before we attached are seeded by user
 * space by 4-tuple from a sock_diag + /proc snapshot. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "tcpstate.h"
#include "sock_read.bpf.h"
#include "ringbuf_wakeup.bpf.h"
#include "agent.bpf.h"

#define IPPROTO_TCP 6

/* Set by user space between open and load. */
const volatile bool filter_tgid = true;		/* false: every process */
const volatile __u64 tw_handler_addr = 0;	/* tw_timer_handler, from /proc/kallsyms */
/* TIME_WAIT sockets followed in the kernel (tw_owners): by the timer
 * tracepoints (tw_handler_addr) or by fentry on the TIME_WAIT functions.
 * Off: the CLOSE record begins a TIME_WAIT, the census ends it. */
const volatile bool tw_follow = false;
/* In-kernel QUIC (the out-of-tree IPPROTO_QUIC module) changes its
 * sockets' states through the same tracepoint, with TCP's numbering; set
 * when user space found the module. */
const volatile bool quic_kernel = false;
#define IPPROTO_QUIC 261
/* Targets beyond a pid list: every process whose name is in target_comms
 * (--comm), every process in the cgroup v2 subtree at index 0 of
 * target_cgroup (--cgroup); they join targets when they start, fork,
 * exec, are renamed, or first touch a socket. */
const volatile bool filter_comm = false;
const volatile bool filter_cgroup = false;
const volatile bool follow_children = false;
/* Socket-storage mode (tcpstate_sk.bpf.h): tp_btf and the send/receive
 * tracepoints are there. accept_tp: the accept() tracepoints are attached
 * and count the accepts (the other mode, or where asked). */
const volatile bool sk_mode = false;
const volatile bool accept_tp = true;
/* Socket-storage mode, TCP's sends counted at tcp:tcp_sendmsg_locked from
 * write_seq (handle_sendmsg_btf), not at sock_send_length, which runs for
 * every sendmsg of every socket of the machine (unix, UDP, netlink). */
const volatile bool send_wseq = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* Traced processes (tgid -> 1), filled after load. */
AGENT_TARGETS_MAP(targets);

/* Live sock -> owner. A plain hash, not an LRU: an LRU would make room by
 * dropping the owner of a live connection without a word, while a full
 * hash fails the update, which is counted (CS_STAT_OWNER_FULL) and
 * reported. Entries go at CLOSE, here in the kernel, whether or not the
 * ring buffer had room for the event. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct cs_owner);
} owners SEC(".maps");

/* Process names of --comm (CS_COMM_LEN bytes, NUL padded) -> 1. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, char[CS_COMM_LEN]);
	__type(value, __u8);
} target_comms SEC(".maps");

/* The --cgroup directory: bpf_current_task_under_cgroup() asks the kernel
 * whether the current task is in it or below it. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} target_cgroup SEC(".maps");

/* The owner of a traced listener, on the listener itself. BPF_F_CLONE
 * copies it to each child the listener makes (sk_clone_lock(), before the
 * child's LISTEN->SYN_RECV), so a child is charged to its own listener:
 * SO_REUSEPORT siblings, two bind addresses and two namespaces never mix. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct cs_owner);
} listen_owner SEC(".maps");

/* (namespace, family, address, port) -> owner of a traced listener: the
 * provisional owner of its children where the socket storage above cannot
 * be read (the classic tracepoint; listeners seeded by user space that
 * it could not reach through pidfd_getfd()). SO_REUSEPORT siblings share
 * a key here: the storage is what tells them apart. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct cs_listen_key);
	__type(value, struct cs_owner);
} listeners SEC(".maps");

/* 4-tuple -> owner for sockets that predate the agent, from user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct cs_tuple);
	__type(value, struct cs_owner);
} seeds SEC(".maps");

/* Local ports of the sockets user space seeded (connections held at the
 * start, listeners put in `listeners` by key), a byte a port (64 KiB; a
 * byte, not a bit, so that user space and a listen here can each set one
 * with a plain store). A socket without an owner whose port is not marked
 * can be neither a seed nor a seeded listener's child, so it costs no
 * tuple read and no lookup: the common case, every untraced socket of the
 * machine. Before, each of their state changes read the whole tuple and
 * looked it up in `seeds` (559 ns a run of the state program, measured on
 * an untraced churn). User space marks a port before it stores the seed;
 * a listen in the per-transition mode marks its own. Never cleared: a
 * stale mark costs only the lookup it used to. */
__u8 seed_ports[65536];

static __always_inline bool seed_port(__u32 port)
{
	/* The mask bounds the index for verifiers that do not follow a byte
	 * swap's range (6.12's does not); the empty asm keeps clang from
	 * dropping a mask it knows to be true. */
	asm volatile("" : "+r"(port));
	return seed_ports[port & 0xffff];
}

/* Local ports of listeners no target holds, marked by user space from
 * each census and by the state program at an untraced listen()
 * (socket-storage mode). A connection such a listener accepted
 * has no storage (its listener has none) and no accept() of a target's,
 * yet a target may serve it: a parent that alone listens and hands each
 * connection to a worker over a Unix socket (SCM_RIGHTS), as Node.js's
 * cluster does by default on Linux, traced by `attach -p` of the workers.
 * Such a socket is adopted at a target task's first send, read or close
 * of it (seed_adopt, sk_state_new), booked as one its listener accepted. Before, the
 * workers' connections handed after the attach were in no book at all.
 * An untraced socket at a marked port costs a look at the current task
 * and a lookup in targets at each send and read; unmarked ports, nothing
 * more. Never cleared, as seed_ports. */
__u8 handoff_ports[65536];

static __always_inline bool handoff_port(__u32 port)
{
	asm volatile("" : "+r"(port));	/* as seed_port */
	return handoff_ports[port & 0xffff];
}

/* The network namespaces the agent reads (inode -> 1, user space fills
 * it from each census): an untraced listen() marks its port only there,
 * not anywhere on the host (a Kubernetes node's every pod), since its
 * mark costs the sends and reads of every untraced socket at that port. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} handoff_netns SEC(".maps");

static __always_inline void handoff_mark(__u32 port)
{
	asm volatile("" : "+r"(port));	/* as seed_port */
	handoff_ports[port & 0xffff] = 1;
}

/* Traffic of traced connections, from first send/recv to CLOSE. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct cs_conn_io);
} conn_io SEC(".maps");

/* TIME_WAIT exactly: tcp_time_wait() arms the tw socket's timer
 * (timer_start) and then ends the full sock (->CLOSE) in the same softirq on
 * the same CPU, so the last tw timer started on this CPU is the successor of
 * the sock that closes next with the same 4-tuple. */
struct tw_started {
	__u64 tw;
	struct cs_tuple tuple;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tw_started);
} tw_last SEC(".maps");

struct tw_track {
	struct cs_owner owner;
	struct cs_tuple tuple;
};

/* Traced TIME_WAIT sockets: tw address -> last owner. A plain hash: a
 * full one fails the update, which is counted (CS_STAT_TW_FULL), where
 * an LRU would drop a live TIME_WAIT's owner without a word. Entries go at
 * expiry, and at an early cancel (tw_rearm below), so they are the traced
 * TIME_WAIT sockets alive. Sized by user space to what a namespace lets
 * exist (net.ipv4.tcp_max_tw_buckets) or --max-time-wait. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct tw_track);
} tw_owners SEC(".maps");

/* An early cancel of a tw timer is a kill (tcp_tw_reuse, an RST, ss -K)
 * or the first half of a re-arm (a retransmitted FIN: mod_timer detaches
 * the timer and enqueues it again, both under the timer base's lock with
 * interrupts off, so nothing else runs on that CPU in between). The cancel
 * cannot tell which, so it moves the entry out of tw_owners to here; the
 * start of a re-arm that follows puts it back. A kill's entry is simply
 * overwritten by the next cancel. Before, an entry ended early stayed until
 * a later tw at that address replaced it: tw_owners held ~9,500 entries for
 * ~6,200 live TIME_WAIT in a soak of 100 connections/s on loopback (where
 * tcp_tw_reuse kills a TIME_WAIT for each reused tuple). */
struct tw_rearm {
	__u64 tw;
	struct tw_track track;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tw_rearm);
} tw_rearm SEC(".maps");

AGENT_STATS_MAP(stats, CS_STAT_MAX);

/* No memcmp in BPF: compare the fixed-size tuple field by field. */
static __always_inline bool tuple_eq(const struct cs_tuple *a, const struct cs_tuple *b)
{
	if (a->sport != b->sport || a->dport != b->dport || a->family != b->family)
		return false;
#pragma unroll
	for (int i = 0; i < 16; i++)
		if (a->saddr[i] != b->saddr[i] || a->daddr[i] != b->daddr[i])
			return false;
	return true;
}

static __always_inline void stat_inc(__u32 idx)
{
	agent_stat_inc(&stats, idx);
}

static __always_inline void owner_from_task(struct cs_owner *o, struct task_struct *task)
{
	__u64 start = BPF_CORE_READ(task, group_leader, start_boottime);

	o->tgid = agent_task_tgid(task);
	o->flags = 0;
	o->start_ns = start - start % CS_TICK_NS;
	BPF_CORE_READ_STR_INTO(&o->comm, task, group_leader, comm);
}

/* A process joins the targets (--comm, --cgroup): user space hears of it
 * once, to give it books of its own. new_comm: the name it is taking
 * (task_rename fires before the task's comm changes), or NULL; ptgid its
 * parent (0: not known here). */
static __always_inline void target_join(struct task_struct *task, const char *new_comm,
					__u32 ptgid)
{
	struct cs_owner o = {};
	struct cs_event *e;
	__u8 one = 1;

	owner_from_task(&o, task);
	if (!o.tgid)
		return;		/* outside the agent's pid namespace: unseen */
	if (new_comm)
		bpf_probe_read_kernel_str(o.comm, sizeof(o.comm), new_comm);
	if (bpf_map_update_elem(&targets, &o.tgid, &one, BPF_NOEXIST))
		return;		/* already a target (or the map is full) */
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(CS_STAT_RB_LOST);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->owner = o;
	e->cur_tgid = o.tgid;
	e->type = CS_EV_PROC;
	e->ptgid = ptgid;
	bpf_ringbuf_submit(e, rb_wakeup_flags(&events));
	stat_inc(CS_STAT_EVENTS);
}

/* A target's child is traced from its fork (--children): user space hears
 * of its parent now, while both are known, so reports can group the
 * children of one server (a backend per connection lives milliseconds,
 * gone before /proc could be read). */
static __always_inline void child_forked(struct task_struct *child, __u32 ptgid)
{
	struct cs_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(CS_STAT_RB_LOST);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	owner_from_task(&e->owner, child);
	e->cur_tgid = ptgid;
	e->ptgid = ptgid;
	e->type = CS_EV_FORK;
	bpf_ringbuf_submit(e, rb_wakeup_flags(&events));
	stat_inc(CS_STAT_EVENTS);
}

static __always_inline bool comm_is_target(const char *comm)
{
	char key[CS_COMM_LEN] = {};

	bpf_probe_read_kernel_str(key, sizeof(key), comm);
	return bpf_map_lookup_elem(&target_comms, key) != NULL;
}

static __always_inline bool current_is_target(void)
{
	struct task_struct *task;

	if (agent_traced(&targets, filter_tgid, agent_current_tgid()))
		return true;
	if (!filter_comm && !filter_cgroup)
		return false;
	/* A process moved into the cgroup, or named so, after it started. */
	task = bpf_get_current_task_btf();
	if ((filter_cgroup && bpf_current_task_under_cgroup(&target_cgroup, 0) == 1) ||
	    (filter_comm && comm_is_target(BPF_CORE_READ(task, group_leader)->comm))) {
		/* No parent here: its reading would overflow the stack of
		 * the socket programs this is inlined into; user space reads
		 * it from /proc. */
		target_join(task, NULL, 0);
		return true;
	}
	return false;
}

/* A listener's key in the listeners map; wildcard: the address zeroed. */
static __always_inline void listen_key(struct cs_listen_key *k, const struct cs_tuple *t,
				       bool wildcard)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->netns = t->netns;
	k->family = t->family;
	k->port = t->sport;
	if (!wildcard)
		__builtin_memcpy(k->addr, t->saddr, 16);
}

/* The owner of the listener that made this child, or NULL. */
static __always_inline struct cs_owner *listener_of(const struct sock *sk,
						    const struct cs_tuple *t, bool trusted)
{
	struct cs_listen_key k;
	struct cs_owner *found;

	if (trusted) {
		found = bpf_sk_storage_get(&listen_owner, (struct sock *)sk, 0, 0);
		if (found)
			return found;
	}
	if (!seed_port(t->sport))
		return NULL;
	listen_key(&k, t, false);
	found = bpf_map_lookup_elem(&listeners, &k);
	if (found)
		return found;
	listen_key(&k, t, true);
	return bpf_map_lookup_elem(&listeners, &k);
}

/* A traced listener closes: its key goes, so that a later listener at the
 * same (namespace, address, port) that we do not trace has no children
 * charged to it. Only this process's entry: a sibling's stays. */
static __always_inline void listen_key_drop(const struct cs_tuple *t, __u32 tgid)
{
	struct cs_listen_key k;
	struct cs_owner *held;

	if (!seed_port(t->sport))
		return;
	listen_key(&k, t, false);
	held = bpf_map_lookup_elem(&listeners, &k);
	if (held && held->tgid == tgid)
		bpf_map_delete_elem(&listeners, &k);
}

/* tcp_time_wait() makes no TIME_WAIT when the namespace already holds
 * tcp_max_tw_buckets of them (inet_twsk_alloc: tw_refcount - 1 >= max;
 * the kernel counts TcpExtTCPTimeWaitOverflow) and ends the sock all the
 * same. Read only where no tw timer started, after the refused alloc: a
 * TIME_WAIT of the namespace ending meanwhile leaves the table one short
 * of full, still taken as full. */
static __always_inline bool tw_table_full(const struct sock *sk)
{
	struct net *net = BPF_CORE_READ(sk, __sk_common.skc_net.net);
	int used, max;

	if (!bpf_core_field_exists(net->ipv4.tcp_death_row))
		return false;
	used = BPF_CORE_READ(net, ipv4.tcp_death_row.tw_refcount.refs.counter);
	max = BPF_CORE_READ(net, ipv4.tcp_death_row.sysctl_max_tw_buckets);
	return used >= max;
}

/* Entering TIME_WAIT (->CLOSE from FIN_WAIT2 or CLOSING): adopt the tw
 * socket whose timer just started on this CPU; its address, or 0 (and
 * CS_F_TW_OVERFLOW in *flags when the kernel made none: its table full). */
static __always_inline __u64 tw_adopt(const struct sock *sk, const struct cs_owner *o,
				      bool trusted, __u8 *flags)
{
	struct tw_started *last;
	struct cs_tuple t;
	__u32 zero = 0;
	__u64 tw;

	last = bpf_map_lookup_elem(&tw_last, &zero);
	sk_read_tuple(sk, &t, trusted);
	if (last && last->tw && tuple_eq(&last->tuple, &t)) {
		struct tw_track track = { .owner = *o, .tuple = t };

		tw = last->tw;
		last->tw = 0;
		if (bpf_map_update_elem(&tw_owners, &tw, &track, BPF_ANY))
			stat_inc(CS_STAT_TW_FULL);
		return tw;
	}
	if (SK_FIELD(trusted, sk, sk_err))
		return 0;
	if (tw_table_full(sk))
		*flags |= CS_F_TW_OVERFLOW;
	else
		stat_inc(CS_STAT_TW_UNMATCHED);
	return 0;
}

/* Census mode (no TIME_WAIT hook): a clean close into TIME_WAIT needs
 * nothing here but this. inet_twsk_alloc refuses once the namespace holds
 * tcp_max_tw_buckets, and a made one can fill the table to exactly that,
 * so a full table read after the alloc cannot tell which happened: the
 * record says so and the next dumps decide (tw_table_full is loose by one
 * the same way, which only leaves more to them). */
static __always_inline void tw_census_flags(const struct sock *sk, bool trusted, __u8 *flags)
{
	if (!SK_FIELD(trusted, sk, sk_err) && tw_table_full(sk))
		*flags |= CS_F_TW_MAYBE;
}

static __always_inline void owner_put(__u64 key, const struct cs_owner *o)
{
	if (bpf_map_update_elem(&owners, &key, o, BPF_ANY))
		stat_inc(CS_STAT_OWNER_FULL);
}

/* A record about sk with what every one has, the rest zeroed; NULL when
 * the ring is full (counted). ev_submit() sends it. trusted: as in
 * sock_read.bpf.h. */
static __always_inline struct cs_event *ev_reserve_at(const struct sock *sk,
						      const struct cs_owner *o, __u8 type,
						      int oldstate, int newstate, __u8 flags,
						      __u64 tw, bool trusted, __u64 now)
{
	struct cs_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(CS_STAT_RB_LOST);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = now;
	e->sk = (__u64)sk;
	e->tw = tw;
	if (o)
		e->owner = *o;
	e->cur_tgid = agent_current_tgid();
	e->type = type;
	e->oldstate = oldstate;
	e->newstate = newstate;
	if (sk_is_orphan(sk, trusted))
		flags |= CS_F_ORPHAN;
	e->flags = flags;
	e->sk_err = SK_FIELD(trusted, sk, sk_err);
	e->sk_shutdown = SK_FIELD(trusted, sk, sk_shutdown);
	return e;
}

/* The same, stamped now: the state program's run has read the clock
 * already (one read a run). */
static __always_inline struct cs_event *ev_reserve(const struct sock *sk,
						   const struct cs_owner *o, __u8 type,
						   int oldstate, int newstate, __u8 flags, __u64 tw,
						   bool trusted)
{
	return ev_reserve_at(sk, o, type, oldstate, newstate, flags, tw, trusted,
			     bpf_ktime_get_ns());
}

static __always_inline void ev_submit(struct cs_event *e)
{
	bpf_ringbuf_submit(e, rb_wakeup_flags(&events));
	stat_inc(CS_STAT_EVENTS);
}

static __always_inline int emit(const struct sock *sk, const struct cs_owner *o,
				const struct cs_tuple *t, __u8 type, int oldstate,
				int newstate, __u8 flags, __u64 tw, bool trusted)
{
	struct cs_event *e = ev_reserve(sk, o, type, oldstate, newstate, flags, tw, trusted);

	if (!e)
		return 0;
	e->tuple = *t;
	/* A close into TIME_WAIT: the cookie its socket had before it (made
	 * at its FIN_WAIT1, handle_state), which the TIME_WAIT carries too.
	 * Only where sk is a BTF pointer; 0 where it had none. */
	if (trusted && type == CS_EV_STATE && newstate == TCP_CLOSE && !(flags & CS_F_QUIC) &&
	    (oldstate == TCP_FIN_WAIT2 || oldstate == TCP_CLOSING)) {
		e->cookie = sk->__sk_common.skc_cookie.counter;
		e->sum = e->cookie ? CS_SUM_COOKIE_BEFORE : 0;
	}
	/* Its traffic at its end, and so far where its process closes it
	 * (FIN_WAIT1, LAST_ACK): the books end its concurrency at its last
	 * byte sent or read (io.last_us), which these closes follow. */
	if (type == CS_EV_STATE && (newstate == TCP_CLOSE || newstate == TCP_FIN_WAIT1 ||
				    newstate == TCP_LAST_ACK)) {
		__u64 key = (__u64)sk;
		struct cs_conn_io *io = bpf_map_lookup_elem(&conn_io, &key);

		if (io) {
			e->io = *io;
			if (newstate == TCP_CLOSE)
				bpf_map_delete_elem(&conn_io, &key);
		}
	}
	ev_submit(e);
	return 0;
}

/* trusted: sk is a BTF pointer (tp_btf), so its socket storage can be used. */
static __always_inline int handle_state(const struct sock *sk, int oldstate, int newstate,
					bool quic, bool trusted)
{
	__u64 key = (__u64)sk, tw = 0;
	struct cs_owner *found, o = {};
	struct cs_tuple t;
	__u8 flags = quic ? CS_F_QUIC : 0;

	sk_read_tuple(sk, &t, trusted);
	found = bpf_map_lookup_elem(&owners, &key);
	/* A socket's life begins at connect(), listen() or as a listener's
	 * child: an owner already at its address is an earlier socket's,
	 * which the memory held before (its CLOSE raced an owner_put). */
	if (found && ((oldstate == TCP_CLOSE && (newstate == TCP_SYN_SENT || newstate == TCP_LISTEN)) ||
		      (oldstate == TCP_LISTEN && newstate == TCP_SYN_RECV))) {
		stat_inc(CS_STAT_STALE_OWNER);
		bpf_map_delete_elem(&owners, &key);
		found = NULL;
	}
	if (found) {
		o = *found;
	} else if (oldstate == TCP_CLOSE && (newstate == TCP_SYN_SENT || newstate == TCP_LISTEN)) {
		/* connect() and listen() run in the owner's context. */
		if (!current_is_target())
			return 0;
		owner_from_current(&o, newstate == TCP_LISTEN ? CS_OWNER_LISTEN : CS_OWNER_CONNECT);
		flags |= CS_F_NEW_OWNER;
	} else if (oldstate == TCP_LISTEN && newstate == TCP_SYN_RECV) {
		/* A child of a listener, in softirq: charge the listener's owner
		 * until accept() says who took it. */
		found = listener_of(sk, &t, trusted);
		if (!found)
			goto unknown;
		o = *found;
		o.flags = CS_OWNER_LISTENER;
		flags |= CS_F_NEW_OWNER;
		/* The child's clone of its listener's storage has served. */
		if (trusted)
			bpf_sk_storage_delete(&listen_owner, (struct sock *)sk);
	} else {
		found = seed_port(t.sport) ? bpf_map_lookup_elem(&seeds, &t) : NULL;
		if (!found)
			goto unknown;
		o = *found;
		bpf_map_delete_elem(&seeds, &t);
		flags |= CS_F_NEW_OWNER;
	}

	/* Its cookie made before its TIME_WAIT, for its close record (emit).
	 * The classic tracepoint's sock cannot be given to the helper. */
	if (trusted)
		SK_COOKIE_AT_FIN_WAIT1(sk, newstate, quic);
	if (newstate == TCP_CLOSE && (oldstate == TCP_FIN_WAIT2 || oldstate == TCP_CLOSING) &&
	    !quic) {
		if (tw_follow)
			tw = tw_adopt(sk, &o, trusted, &flags);
		else
			tw_census_flags(sk, trusted, &flags);
	}
	/* Still the listener's: no traced accept() took it; the kernel says
	 * whether any accept() did (an untraced one's took it out of owners). */
	if (newstate == TCP_CLOSE && o.flags == CS_OWNER_LISTENER && sk_unaccepted(sk, trusted))
		flags |= CS_F_NOT_ACCEPTED;
	if (newstate == TCP_LISTEN) {
		struct cs_listen_key k;

		if (trusted && !bpf_sk_storage_get(&listen_owner, (struct sock *)sk, &o,
						   BPF_SK_STORAGE_GET_F_CREATE))
			stat_inc(CS_STAT_OWNER_FULL);
		seed_ports[t.sport] = 1;
		listen_key(&k, &t, false);
		if (bpf_map_update_elem(&listeners, &k, &o, BPF_ANY))
			stat_inc(CS_STAT_OWNER_FULL);
	} else if (oldstate == TCP_LISTEN && newstate == TCP_CLOSE) {
		listen_key_drop(&t, o.tgid);
	}
	/* CLOSE ends this sock's life as a connection: a TIME_WAIT successor is
	 * a different kernel object that user space follows by 4-tuple. */
	if (newstate == TCP_CLOSE)
		bpf_map_delete_elem(&owners, &key);
	else if (flags & CS_F_NEW_OWNER)
		owner_put(key, &o);
	return emit(sk, &o, &t, CS_EV_STATE, oldstate, newstate, flags, tw, trusted);

unknown:
	/* Without a filter user space resolves the owner from its snapshot. */
	if (filter_tgid)
		return 0;
	return emit(sk, NULL, &t, CS_EV_STATE, oldstate, newstate, flags, 0, trusted);
}

#include "tcpstate_sk.bpf.h"

static __always_inline int set_state_btf(const struct sock *sk, int oldstate, int newstate)
{
	__u16 proto = sk->sk_protocol;	/* a tp_btf argument: a plain load */

	if (proto != IPPROTO_TCP && !(quic_kernel && proto == IPPROTO_QUIC))
		return 0;
	if (sk_mode)
		return handle_state_sk(sk, oldstate, newstate, proto == IPPROTO_QUIC);
	return handle_state(sk, oldstate, newstate, proto == IPPROTO_QUIC, true);
}

/* The kernel runs a tp_btf program at most once at a time on a CPU: a
 * state change in a softirq that interrupts this program in a task (a
 * connect() or close()) is skipped, and counted only as the program's
 * recursion_misses. Found by 58_tw_burst: up to 5% of a burst's
 * FIN_WAIT2->CLOSE lost that way, each leaving its owner behind for the
 * next socket at that address. So a second program, attached after this
 * one, takes the events this one did not finish: this one notes each
 * event it handled (nest_done), the second handles what it finds not
 * noted. Both cannot be running in one task at once, so one of the two
 * always sees an interrupting event. */
struct nest_key {
	__u64 sk;
	__u32 trans;		/* oldstate << 8 | newstate */
	__u32 pad;
};

struct nest_done {
	struct nest_key k[2];	/* the last two events handled, newest first */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nest_done);
} nest_done SEC(".maps");

static __always_inline bool nest_key_eq(const struct nest_key *a, __u64 sk, __u32 trans)
{
	return a->sk == sk && a->trans == trans;
}

SEC("?tp_btf/inet_sock_set_state")
int BPF_PROG(handle_set_state_btf, const struct sock *sk, const int oldstate, const int newstate)
{
	struct nest_done *d;
	__u32 zero = 0;

	set_state_btf(sk, oldstate, newstate);
	/* Noted when done, so an event interrupting it is not. */
	d = bpf_map_lookup_elem(&nest_done, &zero);
	if (d) {
		d->k[1] = d->k[0];
		d->k[0].sk = (__u64)sk;
		d->k[0].trans = oldstate << 8 | newstate;
	}
	return 0;
}

/* Must stay after handle_set_state_btf in this file: the skeleton
 * attaches in this order, and the tracepoint calls in attach order. */
SEC("?tp_btf/inet_sock_set_state")
int BPF_PROG(handle_set_state_nested, const struct sock *sk, const int oldstate,
	     const int newstate)
{
	__u32 zero = 0, trans = oldstate << 8 | newstate;
	struct nest_done *d = bpf_map_lookup_elem(&nest_done, &zero);

	if (!d)
		return 0;
	/* Handled: forget it, so a later event alike is not taken for it. */
	if (nest_key_eq(&d->k[0], (__u64)sk, trans)) {
		d->k[0].sk = 0;
		return 0;
	}
	if (nest_key_eq(&d->k[1], (__u64)sk, trans)) {
		d->k[1].sk = 0;
		return 0;
	}
	stat_inc(CS_STAT_NESTED);
	return set_state_btf(sk, oldstate, newstate);
}

/* Fallback where tp_btf does not load (no BTF for tracepoints). */
SEC("?tracepoint/sock/inet_sock_set_state")
int handle_set_state_tp(struct trace_event_raw_inet_sock_set_state *ctx)
{
	if (ctx->protocol != IPPROTO_TCP && !(quic_kernel && ctx->protocol == IPPROTO_QUIC))
		return 0;
	return handle_state((const struct sock *)ctx->skaddr, ctx->oldstate, ctx->newstate,
			    ctx->protocol == IPPROTO_QUIC, false);
}

#include "tcpstate_io.bpf.h"

#include "tcpstate_accept.bpf.h"

#include "tcpstate_tw.bpf.h"
#include "tcpstate_targets.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
