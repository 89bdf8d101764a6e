/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* NETLINK_SOCK_DIAG dump of TCP sockets (what `ss -tan` asks the kernel).
 *
 * One netlink socket, no attributes requested: each socket costs the
 * kernel one fixed-size inet_diag_msg, so tens of thousands of TIME_WAIT
 * sockets dump in a few milliseconds. TCP in one dump of both families
 * (the older TCPDIAG_GETSOCK request, which the kernel answers for
 * AF_UNSPEC), where inet_diag_req_v2 takes one a family: each dump walks
 * the whole established hash of the host (262,144 buckets here) and looks
 * at every socket in it, so the AF_INET6 dump of a namespace full of IPv4
 * TIME_WAIT cost as much as the AF_INET one (#23 item 6). UDP, which has
 * no such request, one dump a family. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>

#include "netns.h"
#include "sockdiag.h"

/* The kernel fills dump skbs up to ~32 KiB (it sizes them after our
 * largest recv, capped there); 64 KiB leaves room, and a bigger datagram
 * is still handled because its length is peeked before it is read. */
#define SD_RECV_BUF (64 * 1024)

struct sd_conn {
	int fd;
	char *buf;
	size_t cap;
	uint32_t seq;
};

/* One dump request to the kernel, whole. 0 or -errno. */
static int sd_send(struct sd_conn *c, const void *msg, size_t len)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t n;

	do {
		n = sendto(c->fd, msg, len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Both families at once (TCP only). The reply's messages carry this
 * type, with the same inet_diag_msg. */
static int sd_send_req_both(struct sd_conn *c, uint32_t states)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req req;
	} msg;

	memset(&msg, 0, sizeof(msg));
	msg.nlh.nlmsg_len = sizeof(msg);
	msg.nlh.nlmsg_type = TCPDIAG_GETSOCK;
	msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	msg.nlh.nlmsg_seq = ++c->seq;
	msg.req.idiag_states = states;
	return sd_send(c, &msg, sizeof(msg));
}

static int sd_send_req(struct sd_conn *c, uint8_t family, uint8_t protocol, uint32_t states)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg;

	memset(&msg, 0, sizeof(msg));
	msg.nlh.nlmsg_len = sizeof(msg);
	msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	msg.nlh.nlmsg_seq = ++c->seq;
	msg.req.sdiag_family = family;
	msg.req.sdiag_protocol = protocol;
	msg.req.idiag_states = states;
	/* idiag_ext = 0: no INET_DIAG_INFO & co, the fixed header is enough. */
	return sd_send(c, &msg, sizeof(msg));
}

/* Read the next datagram into c->buf, growing it if the kernel ever sends
 * more than we have room for. Returns its length or -errno. */
static ssize_t sd_recv(struct sd_conn *c, struct sockaddr_nl *from)
{
	struct iovec iov;
	struct msghdr mh;
	ssize_t n;

	/* A zero-length MSG_PEEK|MSG_TRUNC read returns the full length of the
	 * pending datagram without copying it, so nothing is ever cut off. */
	do {
		n = recv(c->fd, NULL, 0, MSG_PEEK | MSG_TRUNC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n > c->cap) {
		char *nb = realloc(c->buf, n);

		if (!nb)
			return -ENOMEM;
		c->buf = nb;
		c->cap = n;
	}

	memset(from, 0, sizeof(*from));
	iov.iov_base = c->buf;
	iov.iov_len = c->cap;
	memset(&mh, 0, sizeof(mh));
	mh.msg_name = from;
	mh.msg_namelen = sizeof(*from);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	do {
		n = recvmsg(c->fd, &mh, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (mh.msg_flags & MSG_TRUNC)
		return -EMSGSIZE;
	return n;
}

static void sd_fill(struct sd_sock *s, const struct inet_diag_msg *m)
{
	s->family = m->idiag_family;
	s->netns = 0;
	/* For TIME_WAIT sockets the kernel puts tw_substate here (TIME_WAIT,
	 * or FIN_WAIT2 for a tw socket still waiting for the peer's FIN);
	 * both are what the kernel says, so they are passed through. */
	s->state = m->idiag_state;
	s->timer = m->idiag_timer;
	s->retrans = m->idiag_retrans;
	s->sport = ntohs(m->id.idiag_sport);
	s->dport = ntohs(m->id.idiag_dport);
	memcpy(s->saddr, m->id.idiag_src, sizeof(s->saddr));
	memcpy(s->daddr, m->id.idiag_dst, sizeof(s->daddr));
	s->expires_ms = m->idiag_expires;
	s->rqueue = m->idiag_rqueue;
	s->wqueue = m->idiag_wqueue;
	s->uid = m->idiag_uid;
	s->inode = m->idiag_inode;
	s->cookie = (uint64_t)m->id.idiag_cookie[0] |
		    (uint64_t)m->id.idiag_cookie[1] << 32;
	s->bound_if = m->id.idiag_if;
}

/* NLMSG_NEXT steps by the aligned length, which is past the end when the
 * last message is not padded (len, unsigned, then wraps and NLMSG_OK lets
 * the next read run off the buffer: found by fuzz_sockdiag). The kernel
 * pads; outside data need not. */
static const struct nlmsghdr *next_msg(const struct nlmsghdr *h, size_t *len)
{
	size_t step = NLMSG_ALIGN(h->nlmsg_len);

	if (step > *len)
		step = *len;
	*len -= step;
	return (const struct nlmsghdr *)((const char *)h + step);
}

int sockdiag_parse_reply(const void *buf, size_t n, uint32_t seq, sd_sock_cb cb, void *ctx,
			 bool *done)
{
	const struct nlmsghdr *h;
	struct sd_sock s;
	size_t len = n;
	int err;

	*done = false;
	for (h = buf; NLMSG_OK(h, len); h = next_msg(h, &len)) {
		if (h->nlmsg_seq != seq)
			continue;	/* stale, e.g. an earlier dump */

		if (h->nlmsg_type == NLMSG_DONE) {
			*done = true;
			/* The DONE payload carries the dump's status when the
			 * kernel stopped on an error. */
			if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int))) {
				int st;

				memcpy(&st, NLMSG_DATA(h), sizeof(st));
				/* An errno, or a malformed reply (found by
				 * fuzz_sockdiag: callers print strerror(-err)). */
				if (st < 0)
					return st >= -4095 ? st : -EBADMSG;
			}
			return 0;
		}
		if (h->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr e;

			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(e)))
				return -EBADMSG;
			memcpy(&e, NLMSG_DATA(h), sizeof(e));
			/* A positive "error" is no errno: still an error. */
			if (e.error)
				return e.error < 0 && e.error >= -4095 ? e.error : -EBADMSG;
			continue;	/* an ACK: not an error */
		}
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY && h->nlmsg_type != TCPDIAG_GETSOCK)
			continue;
		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
			return -EBADMSG;

		sd_fill(&s, NLMSG_DATA(h));
		err = cb(&s, ctx);
		if (err)
			return err;
	}
	/* A datagram must hold whole messages; leftovers mean a truncated
	 * or corrupt reply. */
	if (len >= sizeof(struct nlmsghdr))
		return -EBADMSG;
	return 0;
}

/* Run one dump to its NLMSG_DONE: one family's (family AF_INET or
 * AF_INET6), or TCP's of both (AF_UNSPEC). 0, -errno, or the callback's
 * nonzero value. */
static int sd_dump_family(struct sd_conn *c, uint8_t family, uint8_t protocol, uint32_t states,
			  sd_sock_cb cb, void *ctx)
{
	struct sockaddr_nl from;
	bool done = false;
	int err;

	err = family == AF_UNSPEC ? sd_send_req_both(c, states) :
				    sd_send_req(c, family, protocol, states);
	if (err)
		return err;

	while (!done) {
		ssize_t n = sd_recv(c, &from);

		if (n < 0)
			return n;
		/* Only the kernel (port 0) answers dumps; anything else sent
		 * to our port is not ours to trust. */
		if (from.nl_pid != 0)
			continue;
		err = sockdiag_parse_reply(c->buf, n, c->seq, cb, ctx, &done);
		if (err)
			return err;
	}
	return 0;
}

static int sd_socket(void *ctx)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	return fd < 0 ? -errno : fd;
}

/* Set once a kernel refused TCPDIAG_GETSOCK: then a dump a family. */
static bool both_refused;

struct sd_counted {
	sd_sock_cb cb;
	void *ctx;
	size_t n;
};

static int counted(const struct sd_sock *s, void *ctx)
{
	struct sd_counted *c = ctx;

	c->n++;
	return c->cb(s, c->ctx);
}

static int sd_dump(pid_t pid, uint8_t protocol, uint32_t state_mask, sd_sock_cb cb, void *ctx)
{
	struct sd_conn c = { .fd = -1, .cap = SD_RECV_BUF };
	int err;

	c.buf = malloc(c.cap);
	if (!c.buf)
		return -ENOMEM;
	/* Made in pid's namespace, the socket answers for that namespace
	 * from wherever it is read. */
	c.fd = netns_run(pid, sd_socket, NULL);
	if (c.fd < 0) {
		err = c.fd;
		goto out;
	}

	if (protocol == IPPROTO_TCP && !both_refused) {
		struct sd_counted cc = { .cb = cb, .ctx = ctx };

		err = sd_dump_family(&c, AF_UNSPEC, protocol, state_mask, counted, &cc);
		/* A kernel without the request refuses it before any socket
		 * (none known; the fallback is the same dump, one family at
		 * a time). */
		if (!cc.n && (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOENT)) {
			both_refused = true;
		} else {
			goto out;
		}
	}
	err = sd_dump_family(&c, AF_INET, protocol, state_mask, cb, ctx);
	if (!err)
		err = sd_dump_family(&c, AF_INET6, protocol, state_mask, cb, ctx);
out:
	/* Closing mid-dump (callback stop, error) is fine: the kernel drops
	 * the rest of the dump with the socket. */
	if (c.fd >= 0)
		close(c.fd);
	free(c.buf);
	return err;
}

int sockdiag_parse_found(const void *buf, size_t n, uint32_t seq0, struct sd_find *f,
			 size_t nf, size_t *answered)
{
	const struct nlmsghdr *h;
	size_t len = n;

	for (h = buf; NLMSG_OK(h, len); h = next_msg(h, &len)) {
		uint32_t i = h->nlmsg_seq - seq0;

		if (i >= nf || f[i].found != -EINPROGRESS)
			continue;	/* not a request of ours, or answered */
		if (h->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr e;

			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(e)))
				return -EBADMSG;
			memcpy(&e, NLMSG_DATA(h), sizeof(e));
			/* None at the tuple; any other error, or a positive
			 * one, is no answer. */
			f[i].found = e.error == -ENOENT ? 0 :
				     e.error < 0 && e.error >= -4095 ? e.error : -EBADMSG;
		} else if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
				return -EBADMSG;
			sd_fill(&f[i].got, NLMSG_DATA(h));
			f[i].found = 1;
		} else {
			continue;
		}
		(*answered)++;
	}
	if (len >= sizeof(struct nlmsghdr))
		return -EBADMSG;
	return 0;
}

/* Requests a datagram: their answers (a socket's ~100 bytes, or an
 * error's ~90) fit the netlink socket's receive buffer many times over. */
#define SD_FIND_BATCH 64

static void find_req(struct nlmsghdr *nlh, uint32_t seq, const struct sd_sock *q)
{
	struct inet_diag_req_v2 *r = NLMSG_DATA(nlh);
	size_t alen = q->family == AF_INET ? 4 : 16;

	memset(nlh, 0, NLMSG_SPACE(sizeof(*r)));
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*r));
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST;	/* no NLM_F_DUMP: the exact look */
	nlh->nlmsg_seq = seq;
	r->sdiag_family = q->family;
	r->sdiag_protocol = IPPROTO_TCP;
	r->idiag_states = SD_ALL_STATES;
	r->id.idiag_sport = htons(q->sport);
	r->id.idiag_dport = htons(q->dport);
	memcpy(r->id.idiag_src, q->saddr, alen);
	memcpy(r->id.idiag_dst, q->daddr, alen);
	r->id.idiag_if = q->bound_if;
	/* The socket the census showed, by its cookie (another at the
	 * tuple answers -ENOENT: sock_diag_check_cookie); 0, any there. */
	r->id.idiag_cookie[0] = q->cookie ? (uint32_t)q->cookie : INET_DIAG_NOCOOKIE;
	r->id.idiag_cookie[1] = q->cookie ? (uint32_t)(q->cookie >> 32) : INET_DIAG_NOCOOKIE;
}

/* One batch: sent in one datagram, which the kernel answers before the
 * send returns (netlink's kernel side runs in the sender's call), so the
 * answers are read without waiting; one the kernel could not queue stays
 * unanswered (-EIO). */
static int find_batch(struct sd_conn *c, struct sd_find *f, size_t n)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	uint32_t req[SD_FIND_BATCH * NLMSG_SPACE(sizeof(struct inet_diag_req_v2)) / 4];
	size_t answered = 0, step = NLMSG_SPACE(sizeof(struct inet_diag_req_v2));
	uint32_t seq0 = c->seq + 1;
	ssize_t got;

	for (size_t i = 0; i < n; i++) {
		f[i].found = -EINPROGRESS;
		find_req((struct nlmsghdr *)((char *)req + i * step), seq0 + (uint32_t)i, &f[i].q);
	}
	c->seq += (uint32_t)n;
	do {
		got = sendto(c->fd, req, n * step, 0, (struct sockaddr *)&kernel, sizeof(kernel));
	} while (got < 0 && errno == EINTR);
	if (got < 0) {
		int err = -errno;

		for (size_t i = 0; i < n; i++)
			f[i].found = err;
		return err;
	}
	/* Every answer is its own datagram: read up to a batch's worth a
	 * call (recvmmsg), each into a slot of c->buf. */
	while (answered < n) {
		struct mmsghdr mm[SD_FIND_BATCH];
		struct iovec iov[SD_FIND_BATCH];
		struct sockaddr_nl from[SD_FIND_BATCH];
		size_t slot = c->cap / SD_FIND_BATCH;
		int k;

		memset(mm, 0, sizeof(mm));
		for (size_t i = 0; i < SD_FIND_BATCH; i++) {
			iov[i].iov_base = c->buf + i * slot;
			iov[i].iov_len = slot;
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
			mm[i].msg_hdr.msg_name = &from[i];
			mm[i].msg_hdr.msg_namelen = sizeof(from[i]);
		}
		k = recvmmsg(c->fd, mm, n - answered < SD_FIND_BATCH ? n - answered : SD_FIND_BATCH,
			     MSG_DONTWAIT, NULL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;	/* none left (EAGAIN), or dropped (ENOBUFS) */
		for (int i = 0; i < k; i++) {
			/* Only the kernel (port 0) answers; a cut datagram
			 * leaves its request unanswered. */
			if (from[i].nl_pid != 0 || (mm[i].msg_hdr.msg_flags & MSG_TRUNC))
				continue;
			if (sockdiag_parse_found(iov[i].iov_base, mm[i].msg_len, seq0, f, n,
						 &answered))
				break;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (f[i].found == -EINPROGRESS)
			f[i].found = -EIO;
	return 0;
}

int sockdiag_find_tcp_of(pid_t pid, uint32_t netns, struct sd_find *f, size_t n)
{
	/* A 512-byte slot an answer: a socket's is ~100 bytes with the
	 * attributes a full one carries unasked, an error's 36. */
	struct sd_conn c = { .fd = -1, .cap = SD_FIND_BATCH * 512 };
	int err = 0;

	for (size_t i = 0; i < n; i++)
		f[i].found = -EIO;
	if (!n)
		return 0;
	c.buf = malloc(c.cap);
	if (!c.buf)
		return -ENOMEM;
	c.fd = netns_run_ino(pid, netns, sd_socket, NULL);
	if (c.fd < 0) {
		err = c.fd;
		goto out;
	}
	/* An error's answer without our request echoed in it: the look
	 * that finds none is most of them. */
	setsockopt(c.fd, SOL_NETLINK, NETLINK_CAP_ACK, &(int){ 1 }, sizeof(int));
	for (size_t i = 0; i < n && !err; i += SD_FIND_BATCH)
		err = find_batch(&c, f + i, n - i < SD_FIND_BATCH ? n - i : SD_FIND_BATCH);
	close(c.fd);
out:
	free(c.buf);
	return err;
}

int sockdiag_dump_tcp(uint32_t state_mask, sd_sock_cb cb, void *ctx)
{
	return sd_dump(0, IPPROTO_TCP, state_mask, cb, ctx);
}

int sockdiag_dump_tcp_of(pid_t pid, uint32_t state_mask, sd_sock_cb cb, void *ctx)
{
	return sd_dump(pid, IPPROTO_TCP, state_mask, cb, ctx);
}

int sockdiag_dump_udp(sd_sock_cb cb, void *ctx)
{
	/* UDP sockets report TCP_CLOSE (unconnected) or TCP_ESTABLISHED
	 * (connected): both bits ask for all of them. */
	return sd_dump(0, IPPROTO_UDP, (1u << 1) | (1u << 7), cb, ctx);
}
