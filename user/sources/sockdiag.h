/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* sock_diag (NETLINK_SOCK_DIAG, inet_diag_req_v2) snapshots of TCP sockets:
 * the kernel's own truth about every TCP socket, v4 and v6. */
#ifndef CONNSCOPE_SOCKDIAG_H
#define CONNSCOPE_SOCKDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kernel_view.h"


/* Called once per socket; return nonzero to stop the dump (that value is
 * returned by sockdiag_dump_tcp). */
typedef int (*sd_sock_cb)(const struct sd_sock *s, void *ctx);

/* Dump every TCP socket whose state bit is set in state_mask (1 << TCP_*;
 * SD_ALL_STATES for all), of both families (in one dump where the kernel
 * takes TCPDIAG_GETSOCK, else AF_INET then AF_INET6), in the caller's network
 * namespace. Returns 0 on success, a negative errno on failure (netlink
 * socket, send or a NLMSG_ERROR), or the callback's nonzero value. */
/* TCP_ESTABLISHED..TCP_NEW_SYN_RECV. Not bit 13 (TCP_BOUND_INACTIVE, 6.8+):
 * that walks the bind table too and reports bound-only sockets, which `ss`
 * does not show. */
#define SD_ALL_STATES 0x1fffu
int sockdiag_dump_tcp(uint32_t state_mask, sd_sock_cb cb, void *ctx);
/* The same in the network namespace of pid (0: the caller's). */
int sockdiag_dump_tcp_of(pid_t pid, uint32_t state_mask, sd_sock_cb cb, void *ctx);
/* Every UDP socket, v4 then v6 (the same struct; state is TCP_CLOSE or
 * TCP_ESTABLISHED, for unconnected and connected sockets). */
int sockdiag_dump_udp(sd_sock_cb cb, void *ctx);

/* One datagram of a dump's reply (buf: n bytes, 4-byte aligned): cb for
 * each socket of request seq, *done at NLMSG_DONE. 0, -errno (an error
 * the kernel reported, a malformed or truncated message) or cb's nonzero
 * value. What arrives is outside data: every length is checked before it
 * is used (tests/fuzz/fuzz_sockdiag.c). */
int sockdiag_parse_reply(const void *buf, size_t n, uint32_t seq, sd_sock_cb cb, void *ctx,
			 bool *done);

/* The exact look at sockets by 4-tuple (SOCK_DIAG_BY_FAMILY without
 * NLM_F_DUMP): the kernel's inet_diag_find_one_icsk, one lookup in the
 * established hash that finds TIME_WAIT sockets too (and, that failing,
 * a listener of the local address: the caller compares what comes back),
 * where a dump walks the host's whole table. q: family, ports, addresses
 * and bound_if (a socket bound to a device is found only when it is
 * named); cookie, when not 0, that very socket only. found: 1, got holds the socket; 0, the kernel has none there;
 * -errno: no answer (the caller cannot tell). */
struct sd_find {
	struct sd_sock q;
	int found;
	struct sd_sock got;
};
/* Each of f[0..n) looked up in pid's network namespace (0: the caller's),
 * in batches of one datagram each way, provided that namespace is netns
 * (the inode the census read through pid; 0: not checked): a pid since
 * moved or reused would answer "none" for every one. 0, or -errno when
 * none could be asked (-ESTALE: another namespace; each f[i].found says
 * its own). */
int sockdiag_find_tcp_of(pid_t pid, uint32_t netns, struct sd_find *f, size_t n);
/* One datagram of the replies to requests seq0..seq0 + n - 1 into f
 * (found, got): each f[i] still -EINPROGRESS (asked, not answered) takes
 * its answer, counted in *answered. 0, or
 * -EBADMSG for a malformed message (outside data: every length checked). */
int sockdiag_parse_found(const void *buf, size_t len, uint32_t seq0, struct sd_find *f,
			 size_t n, size_t *answered);

#endif
