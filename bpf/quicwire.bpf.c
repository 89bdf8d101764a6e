// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* QUIC on the wire: cgroup_skb on the root cgroup v2 sees every UDP
 * datagram a process sends (egress, in the sender's socket) or receives
 * (ingress, in the receiving socket), whatever library speaks QUIC.
 *
 * The owner of a UDP socket is kept in socket-local storage: put there at
 * socket creation (cgroup/sock_create runs in the creating task), at the
 * first send of a socket made before we attached, or from a seed user
 * space found by sock_diag cookie in the process's fd table, so even the
 * first datagram a listening server receives is charged to it.
 *
 * Connection state lives in user space. From here go: every datagram whose
 * first packet has a long header (a handful per handshake), and of the
 * short-header traffic only the first packet to each destination
 * connection ID and each change of that ID's 4-tuple. A short header does
 * not carry its DCID length: it is learned from the long headers, our own
 * SCID length for what we receive, the peer's for what we send. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "quic.h"
#include "tcpstate.h"	/* CS_TICK_NS */
#include "ringbuf_wakeup.bpf.h"
#include "agent.bpf.h"


#define AF_INET		2
#define AF_INET6	10
#define IPPROTO_UDP	17
#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86DD
#define IP_OFFSET_MASK	0x1fff

const volatile bool filter_tgid = true;		/* false: every process */
/* cgroup_skb may call bpf_get_current_{pid_tgid,task,comm} (not yet in
 * 6.12): false leaves the send-time owner out, and the verifier drops that
 * code unseen, so it loads where they are missing. */
const volatile bool skb_current = true;
/* Set by user space once cgroup_skb ingress/egress are attached: they run
 * for every packet on the machine, so they are attached only when a traced
 * process holds or makes a UDP socket, and until then each UDP socket a
 * traced process makes asks for them (QW_EV_UDP_SOCK). */
volatile __u32 skb_attached;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} quic_events SEC(".maps");

AGENT_TARGETS_MAP(qw_targets);

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct quic_sk_owner);
} qw_owner SEC(".maps");

/* Socket cookie -> owner, for UDP sockets that predate the agent. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct quic_sk_owner);
} qw_seeds SEC(".maps");

/* Learned connection ID lengths: which 0 = our own SCID length on local
 * port (0: any port of the process), 1 = the peer's at its address. */
struct qw_len_key {
	__u32 tgid;
	__u16 port;
	__u16 which;
	__u8 addr[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct qw_len_key);
	__type(value, __u8);
} qw_cid_len SEC(".maps");

/* Short-header flows seen: (process, direction, DCID) -> last 4-tuple. An
 * LRU: an idle connection's entry makes way for a new one; if it comes
 * back, user space sees its DCID again and knows it. */
struct qw_short_key {
	__u32 tgid;
	__u8 dir;
	__u8 dcid_len;
	__u8 dcid[QUIC_MAX_CID_LEN];
	__u16 pad;
};

struct qw_path {
	__u8 laddr[16];
	__u8 raddr[16];
	__u16 lport;
	__u16 rport;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct qw_short_key);
	__type(value, struct qw_path);
} qw_short SEC(".maps");

/* A datagram's payload, what the parser makes of it, and how many runs
 * on this CPU hold it now. */
struct qw_buf {
	__u8 b[QW_BUF_SIZE];
	struct quic_dgram d;
	__u32 busy;
};

/* This CPU's scratch, a slot for each direction (QW_SLOT). cgroup_skb
 * programs run with migration disabled, not preemption, and with no guard
 * against running again on the same CPU (bpf_prog_run_array_cg, unlike a
 * tracepoint's): a task's egress run can be interrupted by the softirq
 * that runs ingress there, and with one slot that ingress run overwrote
 * the payload or result of the egress run beneath it. A run that finds
 * its own slot held all the same (an egress in a softirq on top of a
 * task's, or on a fully preemptible kernel a task preempted in its run)
 * parses nothing and is counted (QW_STAT_SCRATCH_BUSY, with the lost
 * events). Ingress runs in softirq only, which does not nest. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct qw_buf);
} qw_scratch SEC(".maps");

#define QW_SLOT(dir) ((__u32)((dir) == QW_DIR_INGRESS))

AGENT_STATS_MAP(qw_stats, QW_STAT_MAX);

static __always_inline void stat_inc(__u32 idx)
{
	agent_stat_inc(&qw_stats, idx);
}

/* The current task's group leader start time: with the tgid, the identity
 * of a process (a pid can be reused). */
static __always_inline __u64 current_start_ns(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 start = BPF_CORE_READ(task, group_leader, start_boottime);

	/* The unit of every start time: whole ticks (tcpstate.h CS_TICK_NS). */
	return start - start % CS_TICK_NS;
}

static __always_inline bool is_target(__u32 tgid)
{
	return agent_traced(&qw_targets, filter_tgid, tgid);
}

/* Where a datagram sits in the skb, and its two ends. */
struct qw_flow {
	__u32 payload_off;
	__u32 udp_len;		/* payload bytes, from the UDP header */
	__u16 family;
	__u16 lport;
	__u16 rport;
	__u8 laddr[16];
	__u8 raddr[16];
};

/* IP and UDP headers; 0 when this is a whole UDP datagram we can read. */
static __always_inline int read_flow(struct __sk_buff *skb, __u8 dir, struct qw_flow *f)
{
	struct udphdr uh;
	__u32 l4;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct iphdr ih;

		if (bpf_skb_load_bytes(skb, 0, &ih, sizeof(ih)))
			return -1;
		if (ih.protocol != IPPROTO_UDP)
			return -1;
		if (ih.frag_off & bpf_htons(IP_OFFSET_MASK))
			return -2;	/* not the first fragment: no UDP header */
		l4 = ih.ihl * 4;
		f->family = AF_INET;
		__builtin_memcpy(dir == QW_DIR_EGRESS ? f->laddr : f->raddr, &ih.saddr, 4);
		__builtin_memcpy(dir == QW_DIR_EGRESS ? f->raddr : f->laddr, &ih.daddr, 4);
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ih;

		if (bpf_skb_load_bytes(skb, 0, &ih, sizeof(ih)))
			return -1;
		if (ih.nexthdr != IPPROTO_UDP)
			return -2;	/* extension headers: not walked */
		l4 = sizeof(ih);
		f->family = AF_INET6;
		__builtin_memcpy(dir == QW_DIR_EGRESS ? f->laddr : f->raddr, &ih.saddr, 16);
		__builtin_memcpy(dir == QW_DIR_EGRESS ? f->raddr : f->laddr, &ih.daddr, 16);
	} else {
		return -1;
	}
	if (bpf_skb_load_bytes(skb, l4, &uh, sizeof(uh)))
		return -1;
	f->lport = bpf_ntohs(dir == QW_DIR_EGRESS ? uh.source : uh.dest);
	f->rport = bpf_ntohs(dir == QW_DIR_EGRESS ? uh.dest : uh.source);
	f->payload_off = l4 + sizeof(uh);
	f->udp_len = bpf_ntohs(uh.len);
	f->udp_len = f->udp_len >= sizeof(uh) ? f->udp_len - sizeof(uh) : 0;
	return 0;
}

/* The owner of the socket the datagram belongs to, or NULL: not traced. */
static __always_inline struct quic_sk_owner *owner_of(struct bpf_sock *sk, __u8 dir, __u64 cookie)
{
	struct quic_sk_owner *o, *seed, fresh = {};
	__u32 tgid;

	o = bpf_sk_storage_get(&qw_owner, sk, 0, 0);
	if (o)
		return o;
	seed = bpf_map_lookup_elem(&qw_seeds, &cookie);
	if (seed) {
		fresh = *seed;
	} else if (dir == QW_DIR_EGRESS && skb_current) {
		/* UDP sends run in the sending task. */
		tgid = agent_current_tgid();
		if (!is_target(tgid))
			return NULL;
		fresh.tgid = tgid;
		fresh.flags = QW_OWNER_SEND;
		fresh.start_ns = current_start_ns();
		bpf_get_current_comm(fresh.comm, sizeof(fresh.comm));
	} else {
		return NULL;
	}
	return bpf_sk_storage_get(&qw_owner, sk, &fresh, BPF_SK_STORAGE_GET_F_CREATE);
}

static __always_inline void fill(struct quic_wire_event *e, const struct qw_flow *f,
				 const struct quic_sk_owner *o, __u64 cookie, __u8 type, __u8 dir)
{
	__u32 tgid = o->tgid;

	e->ts_ns = bpf_ktime_get_ns();
	e->cookie = cookie;
	e->tgid = tgid;
	e->type = type;
	e->dir = dir;
	e->family = f->family;
	__builtin_memcpy(e->laddr, f->laddr, 16);
	__builtin_memcpy(e->raddr, f->raddr, 16);
	e->lport = f->lport;
	e->rport = f->rport;
	e->udp_len = f->udp_len;
	__builtin_memcpy(e->comm, o->comm, sizeof(e->comm));
	e->start_ns = o->start_ns;
}

static __always_inline __u8 learned_len(__u32 tgid, const struct qw_flow *f, __u8 dir)
{
	struct qw_len_key k = { .tgid = tgid };
	__u8 *len;

	if (dir == QW_DIR_INGRESS) {
		/* Sent to us: our own SCID length. */
		k.port = f->lport;
		len = bpf_map_lookup_elem(&qw_cid_len, &k);
		if (!len) {
			k.port = 0;
			len = bpf_map_lookup_elem(&qw_cid_len, &k);
		}
	} else {
		k.which = 1;
		k.port = f->rport;
		__builtin_memcpy(k.addr, f->raddr, 16);
		len = bpf_map_lookup_elem(&qw_cid_len, &k);
	}
	return len ? *len : QUIC_DCID_LEN_UNKNOWN;
}

static __always_inline void learn_len(__u32 tgid, const struct qw_flow *f, __u8 dir,
				      __u8 scid_len)
{
	struct qw_len_key k = { .tgid = tgid };

	if (dir == QW_DIR_EGRESS) {
		k.port = f->lport;
		bpf_map_update_elem(&qw_cid_len, &k, &scid_len, BPF_ANY);
		k.port = 0;
		bpf_map_update_elem(&qw_cid_len, &k, &scid_len, BPF_ANY);
	} else {
		k.which = 1;
		k.port = f->rport;
		__builtin_memcpy(k.addr, f->raddr, 16);
		bpf_map_update_elem(&qw_cid_len, &k, &scid_len, BPF_ANY);
	}
}

static __always_inline bool path_eq(const struct qw_path *a, const struct qw_flow *f)
{
	if (a->lport != f->lport || a->rport != f->rport)
		return false;
#pragma unroll
	for (int i = 0; i < 16; i++)
		if (a->laddr[i] != f->laddr[i] || a->raddr[i] != f->raddr[i])
			return false;
	return true;
}

/* Short header: one lookup of (process, direction, DCID) on the hot path;
 * an event only for a new DCID or a new 4-tuple. */
static __noinline void on_short(struct __sk_buff *skb, const struct qw_flow *f,
				const struct quic_sk_owner *o, __u64 cookie, __u8 dir)
{
	__u32 tgid = o->tgid;
	struct qw_short_key k = { .tgid = tgid, .dir = dir };
	struct quic_wire_event *e;
	struct qw_path *seen, path = {};
	__u8 type = QW_EV_FIRST_SHORT;
	__u32 n;

	n = learned_len(tgid, f, dir);
	if (n > QUIC_MAX_CID_LEN) {
		stat_inc(QW_STAT_SHORT_NOLEN);
		return;
	}
	if (f->udp_len < 1 + n + QUIC_HP_MIN_AFTER_PN) {
		stat_inc(QW_STAT_MALFORMED);
		return;
	}
	k.dcid_len = n;
	/* The datagram holds at least 20 bytes after the DCID (the check
	 * above), so a fixed-size load is in bounds; what is past the DCID is
	 * cleared, the key is the CID alone. */
	if (bpf_skb_load_bytes(skb, f->payload_off + 1, k.dcid, QUIC_MAX_CID_LEN))
		return;
#pragma unroll
	for (int i = 0; i < QUIC_MAX_CID_LEN; i++)
		if (i >= n)
			k.dcid[i] = 0;
	seen = bpf_map_lookup_elem(&qw_short, &k);
	if (seen) {
		if (path_eq(seen, f))
			return;
		type = QW_EV_PATH_CHANGE;
	}
	__builtin_memcpy(path.laddr, f->laddr, 16);
	__builtin_memcpy(path.raddr, f->raddr, 16);
	path.lport = f->lport;
	path.rport = f->rport;
	bpf_map_update_elem(&qw_short, &k, &path, BPF_ANY);

	e = bpf_ringbuf_reserve(&quic_events, sizeof(*e), 0);
	if (!e) {
		stat_inc(QW_STAT_RB_LOST);
		return;
	}
	fill(e, f, o, cookie, type, dir);
	__builtin_memset(&e->dgram, 0, sizeof(e->dgram));
	e->dgram.len = f->udp_len;
	e->dgram.count = 1;
	e->dgram.pkt[0].form = QUIC_FORM_SHORT;
	e->dgram.pkt[0].type = QUIC_PT_1RTT;
	e->dgram.pkt[0].dcid_len = n;
	__builtin_memcpy(e->dgram.pkt[0].dcid, k.dcid, QUIC_MAX_CID_LEN);
	bpf_ringbuf_submit(e, rb_wakeup_flags(&quic_events));
	stat_inc(QW_STAT_EVENTS);
}

static __always_inline bool known_version(__u32 v)
{
	return v == QUIC_VERSION_1 || v == QUIC_VERSION_2 || v == QUIC_VERSION_NEG ||
	       (v & 0xffffff00u) == 0xff000000u || quic_version_is_grease(v);
}

/* The parser, as a global function: the verifier checks it once, on its
 * own, from arguments it knows nothing of, instead of inline in on_long()
 * once for each state on_long() reaches it in (a learned DCID length, none,
 * each lookup that found it...): it is most of the program. Scalars only
 * as arguments, as kernels before 5.12 require of a global function; the
 * datagram and the result are in this CPU's qw_scratch, in slot slot. */
__noinline int qw_parse(__u32 n, __u32 hint, __u32 slot)
{
	struct qw_buf *buf;
	__u32 key = slot;

	buf = bpf_map_lookup_elem(&qw_scratch, &key);
	if (!buf)
		return 0;
	return quic_parse_datagram_hint(buf->b, n, hint, &buf->d);
}

/* A long-header datagram in scratch slot buf (held by this run): parsed,
 * and sent if it is QUIC. */
static __always_inline void long_send(struct __sk_buff *skb, const struct qw_flow *f,
				      const struct quic_sk_owner *o, __u64 cookie, __u8 dir,
				      struct qw_buf *buf, __u32 slot)
{
	__u32 tgid = o->tgid, n = f->udp_len;
	struct quic_wire_event *e;
	__u8 hint;

	if (n > QW_BUF_SIZE)
		n = QW_BUF_SIZE;
	/* The same n, in a form the verifier bounds to [1, QW_BUF_SIZE] in
	 * the register it passes (a compare may be made on a copy). */
	n = ((n - 1) & (QW_BUF_SIZE - 1)) + 1;
	if (bpf_skb_load_bytes(skb, f->payload_off, buf->b, n))
		return;
	hint = learned_len(tgid, f, dir);

	e = bpf_ringbuf_reserve(&quic_events, sizeof(*e), 0);
	if (!e) {
		stat_inc(QW_STAT_RB_LOST);
		return;
	}
	qw_parse(n, hint, slot);
	__builtin_memcpy(&e->dgram, &buf->d, sizeof(e->dgram));
	if (!e->dgram.count) {
		stat_inc(QW_STAT_MALFORMED);
		bpf_ringbuf_discard(e, 0);
		return;
	}
	if (!known_version(e->dgram.pkt[0].version)) {
		stat_inc(QW_STAT_NOT_QUIC);
		bpf_ringbuf_discard(e, 0);
		return;
	}
	/* Our SCID on what we send, the peer's on what we receive: the DCID
	 * length of the short headers that follow. */
	if (e->dgram.pkt[0].type != QUIC_PT_VERSION_NEG && e->dgram.pkt[0].type != QUIC_PT_UNKNOWN)
		learn_len(tgid, f, dir, e->dgram.pkt[0].scid_len);
	fill(e, f, o, cookie, QW_EV_LONG, dir);
	e->dgram.len = f->udp_len;
	bpf_ringbuf_submit(e, rb_wakeup_flags(&quic_events));
	stat_inc(QW_STAT_EVENTS);
}

/* The direction's scratch slot held for the parse (agent_slot_hold): a
 * run that finds it held skips the datagram and counts it. */
static __noinline void on_long(struct __sk_buff *skb, const struct qw_flow *f,
			       const struct quic_sk_owner *o, __u64 cookie, __u8 dir)
{
	__u32 slot = QW_SLOT(dir);
	struct qw_buf *buf;

	if (f->udp_len < 7)
		return;
	buf = bpf_map_lookup_elem(&qw_scratch, &slot);
	if (!buf)
		return;
	if (!agent_slot_hold(&buf->busy)) {
		stat_inc(QW_STAT_SCRATCH_BUSY);
		return;
	}
	long_send(skb, f, o, cookie, dir, buf, slot);
	agent_slot_put(&buf->busy);
}

static __always_inline int on_skb(struct __sk_buff *skb, __u8 dir)
{
	struct quic_sk_owner *o;
	struct bpf_sock *sk;
	struct qw_flow f = {};
	__u64 cookie;
	__u8 first;
	int err;

	sk = skb->sk;
	if (!sk)
		return 1;
	sk = bpf_sk_fullsock(sk);
	if (!sk || sk->protocol != IPPROTO_UDP)
		return 1;
	cookie = bpf_get_socket_cookie(skb);
	o = owner_of(sk, dir, cookie);
	if (!o) {
		stat_inc(QW_STAT_UNOWNED);
		return 1;
	}
	err = read_flow(skb, dir, &f);
	if (err) {
		if (err == -2)
			stat_inc(QW_STAT_NOT_UDP_HDR);
		return 1;
	}
	stat_inc(QW_STAT_DGRAMS);
	if (!f.udp_len || bpf_skb_load_bytes(skb, f.payload_off, &first, 1))
		return 1;
	if (first & QUIC_FORM_BIT) {
		stat_inc(QW_STAT_LONG);
		on_long(skb, &f, o, cookie, dir);
	} else {
		stat_inc(QW_STAT_SHORT);
		on_short(skb, &f, o, cookie, dir);
	}
	return 1;
}

SEC("cgroup_skb/egress")
int qw_egress(struct __sk_buff *skb)
{
	return on_skb(skb, QW_DIR_EGRESS);
}

SEC("cgroup_skb/ingress")
int qw_ingress(struct __sk_buff *skb)
{
	return on_skb(skb, QW_DIR_INGRESS);
}

/* In the creating task: UDP sockets of traced processes get their owner
 * before their first datagram. */
SEC("cgroup/sock_create")
int qw_sock_create(struct bpf_sock *ctx)
{
	struct quic_sk_owner *o;
	__u32 tgid;

	if (ctx->protocol != IPPROTO_UDP || (ctx->family != AF_INET && ctx->family != AF_INET6))
		return 1;
	tgid = agent_current_tgid();
	if (!is_target(tgid))
		return 1;
	o = bpf_sk_storage_get(&qw_owner, ctx, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (o) {
		o->tgid = tgid;
		o->flags = QW_OWNER_CREATE;
		o->start_ns = current_start_ns();
		bpf_get_current_comm(o->comm, sizeof(o->comm));
	}
	if (!skb_attached) {
		struct quic_wire_event *e = bpf_ringbuf_reserve(&quic_events, sizeof(*e), 0);

		if (!e) {
			stat_inc(QW_STAT_RB_LOST);
			return 1;
		}
		__builtin_memset(e, 0, sizeof(*e));
		e->ts_ns = bpf_ktime_get_ns();
		e->cookie = bpf_get_socket_cookie(ctx);
		e->tgid = tgid;
		e->type = QW_EV_UDP_SOCK;
		e->family = ctx->family;
		/* Woken now, not at the next drain: its first datagrams are
		 * only seen once the packet programs are on. */
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
		stat_inc(QW_STAT_EVENTS);
	}
	return 1;
}

/* A traced UDP socket closed: the end of the connections it carried
 * alone (a client's connected socket). */
SEC("cgroup/sock_release")
int qw_sock_release(struct bpf_sock *ctx)
{
	struct quic_wire_event *e;
	struct quic_sk_owner *o;

	if (ctx->protocol != IPPROTO_UDP)
		return 1;
	o = bpf_sk_storage_get(&qw_owner, ctx, 0, 0);
	if (!o)
		return 1;
	e = bpf_ringbuf_reserve(&quic_events, sizeof(*e), 0);
	if (!e) {
		stat_inc(QW_STAT_RB_LOST);
		return 1;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->cookie = bpf_get_socket_cookie(ctx);
	e->tgid = o->tgid;
	e->start_ns = o->start_ns;
	__builtin_memcpy(e->comm, o->comm, sizeof(e->comm));
	e->type = QW_EV_RELEASE;
	e->family = ctx->family;
	bpf_ringbuf_submit(e, 0);
	stat_inc(QW_STAT_EVENTS);
	return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
