/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Contract between the QUIC BPF units (quicwire.bpf.c: the wire, seen by
 * cgroup_skb; ngtcp2.bpf.c: libngtcp2 uprobes) and user space. Fixed-size
 * types only. The wire unit sends every datagram that holds a long header
 * (a handful per connection: Initial, Handshake, Retry, Version
 * Negotiation, 0-RTT) and, of the short-header traffic, only the first
 * packet of each destination connection ID and each change of its 4-tuple;
 * user space runs the connection state machine on those. */
#ifndef CONNSCOPE_QUIC_H
#define CONNSCOPE_QUIC_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Bytes of a datagram the wire unit copies for the parser: an Initial is
 * 1200 bytes or more, and the packets coalesced after it must still be in
 * the copy for their headers to be read. BPF parses from that copy. */
#define QW_BUF_SIZE 2048
#if (defined(__bpf__) || defined(__BPF__)) && !defined(QUIC_BUF_SIZE)
#define QUIC_BUF_SIZE QW_BUF_SIZE
#endif
#include "quic_parse.h"

/* quic_wire_event.type */
#define QW_EV_LONG		1	/* a datagram with a long header: dgram holds its packets */
#define QW_EV_FIRST_SHORT	2	/* first short header to this DCID (per process, direction) */
#define QW_EV_PATH_CHANGE	3	/* a known short-header DCID on a new 4-tuple */
#define QW_EV_RELEASE		4	/* a traced UDP socket was closed (cgroup/sock_release) */
#define QW_EV_UDP_SOCK		5	/* a traced process made a UDP socket while the packet
					 * programs are off: user space attaches them */

/* quic_wire_event.dir */
#define QW_DIR_EGRESS	1	/* sent by the owning process */
#define QW_DIR_INGRESS	2	/* received by it */

/* quic_sk_owner.flags: how the owner of a UDP socket was learned */
#define QW_OWNER_CREATE	0x01	/* cgroup/sock_create, in the creating task */
#define QW_OWNER_SEND	0x02	/* first datagram sent, in the sending task */
#define QW_OWNER_SEED	0x04	/* user space: sock_diag cookie + /proc fd */

/* Per-CPU counters (qw_stats index). */
#define QW_STAT_DGRAMS		0	/* UDP datagrams of traced sockets */
#define QW_STAT_LONG		1	/* ... with a long header first */
#define QW_STAT_SHORT		2	/* ... with a short header first */
#define QW_STAT_NOT_QUIC	3	/* long-header look but no QUIC version we know */
#define QW_STAT_MALFORMED	4	/* the parser stopped before the first packet ended */
#define QW_STAT_SHORT_NOLEN	5	/* short header, but no DCID length learned for the flow */
#define QW_STAT_EVENTS		6	/* events written */
#define QW_STAT_RB_LOST		7	/* ring buffer reservations that failed */
#define QW_STAT_UNOWNED		8	/* UDP datagrams on sockets of no traced process (filter on) */
#define QW_STAT_NOT_UDP_HDR	9	/* IP header we do not walk (v6 extension headers, fragments) */
#define QW_STAT_SCRATCH_BUSY	10	/* long-header datagrams not parsed: the run this one
					 * interrupted on its CPU held the parser's scratch */
#define QW_STAT_MAX		12

/* Socket-local storage of a traced UDP socket. */
struct quic_sk_owner {
	__u32 tgid;
	__u32 flags;		/* QW_OWNER_* */
	__u64 start_ns;		/* group leader's start_boottime: tells a reused pid apart */
	char comm[16];		/* the owner's at the time it was learned */
};

struct quic_wire_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns() */
	__u64 cookie;		/* socket cookie (sock_diag's idiag_cookie) */
	__u32 tgid;		/* owner */
	__u8 type;		/* QW_EV_* */
	__u8 dir;		/* QW_DIR_* */
	__u16 family;		/* AF_INET, AF_INET6 */
	/* Addresses as on the wire (v4 in the first 4 bytes), ports host order:
	 * l = the owner's side, r = the peer. */
	__u8 laddr[16];
	__u8 raddr[16];
	__u16 lport;
	__u16 rport;
	__u32 udp_len;		/* UDP payload bytes */
	__u64 start_ns;		/* the owner's start (0: not known) */
	char comm[16];		/* the owner's, as learned */
	struct quic_dgram dgram;	/* QW_EV_LONG: all; FIRST_SHORT/PATH_CHANGE: pkt[0] */
};

/* ngtcp2 unit. */
#define QN_EV_NEW	1	/* ngtcp2_conn_{client,server}_new returned 0 */
#define QN_EV_HANDSHAKE	2	/* ngtcp2_conn_handshake_completed */
#define QN_EV_DEL	3	/* ngtcp2_conn_del */
#define QN_EV_MIGRATE	4	/* ngtcp2_conn_initiate_{,immediate_}migration returned 0 */
#define QN_EV_NEW_FAIL	5	/* ngtcp2_conn_*_new returned an error */

#define QN_ROLE_CLIENT	1
#define QN_ROLE_SERVER	2

#define QN_STAT_EVENTS	0
#define QN_STAT_RB_LOST	1
#define QN_STAT_CALLS_FULL	2	/* ng_calls updates that failed: a connection not seen */
#define QN_STAT_MAX	4

struct quic_lib_event {
	__u64 ts_ns;
	__u64 conn;		/* the ngtcp2_conn pointer: identity in the process */
	__u32 tgid;
	__u8 type;		/* QN_EV_* */
	__u8 role;		/* QN_ROLE_*, for QN_EV_NEW{,_FAIL} */
	__u8 scid_len;		/* QN_EV_NEW: the connection's own (source) CID */
	__u8 dcid_len;
	__s32 rc;		/* return value where there is one */
	char comm[16];
	__u8 scid[QUIC_MAX_CID_LEN];
	__u8 dcid[QUIC_MAX_CID_LEN];
};

#endif
