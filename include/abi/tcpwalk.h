/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The census walk's record: one TCP socket of a namespace as the birth
 * pass (iter/tcp, tcpwalk.bpf.h) writes it to its seq_file, the fields a
 * sock_diag dump gives (struct sd_sock in user/books/kernel_view.h), so
 * one walk an interval does both (#23 item 6). */
#ifndef CONNSCOPE_TCPWALK_H
#define CONNSCOPE_TCPWALK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>	/* user space; BPF gets the types from vmlinux.h */
#endif

struct cs_walk_sock {
	__u8 family;		/* AF_INET or AF_INET6 */
	__u8 state;		/* as sock_diag: tw_substate for a tw sock,
				 * TCP_SYN_RECV for a request sock */
	__u8 timer;		/* idiag_timer: 0 none, 1 retrans, 2 keepalive,
				 * 3 TIME_WAIT, 4 zero-window probe */
	__u8 retrans;		/* idiag_retrans */
	__u16 sport, dport;	/* host order */
	__u8 saddr[16], daddr[16];	/* as on the wire; v4 in the first 4 */
	__s32 expires_j;	/* the timer's expiry - jiffies, in jiffies (the
				 * agent turns it into ms: it learns HZ) */
	__u32 rqueue, wqueue;	/* idiag_rqueue / idiag_wqueue */
	__u32 uid, inode;	/* idiag_uid (0 for tw and request socks), inode */
	__u32 bound_if;		/* skc_bound_dev_if (sock_diag's idiag_if): the
				 * device an exact look at its tuple must name */
	__u64 cookie;		/* the socket cookie (sock_diag's idiag_cookie) */
};

#endif
