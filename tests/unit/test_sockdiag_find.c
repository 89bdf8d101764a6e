// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sockdiag_find_tcp_of: sock_diag's exact look at a 4-tuple (no
 * NLM_F_DUMP, the kernel's inet_diag_find_one_icsk) against real
 * TIME_WAIT sockets made on 127.0.0.1 in a network namespace of the
 * test's own (gone with it: nothing left in the host's for 60 s): it
 * finds them, finds nothing where none is, falls back to a listener of
 * the local address (which the census's second look must not take for
 * its TIME_WAIT), answers every one of a batch larger than a datagram
 * holds, and misses a TIME_WAIT bound to a device unless the look names
 * it. Its reply parser on crafted datagrams. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
#include "unit.h"
#include "own_netns.h"
#include "netns.h"
#include "sockdiag.h"

#define TCP_TIME_WAIT_ 6
#define TCP_LISTEN_ 10

/* The real sockets in a network namespace of the test's own, its lo up:
 * their TIME_WAIT go with it when the test exits, none left in the host's
 * for 60 s. Without CAP_SYS_ADMIN (unshare refused), in the caller's, as
 * before. Once a process. */
static void own_netns(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	unit_own_netns();
}

static int listener4(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd;

	own_netns();
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_TRUE(fd >= 0, "socket");
	ASSERT_EQ(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "bind");
	ASSERT_EQ(listen(fd, 8), 0, "listen");
	ASSERT_EQ(getsockname(fd, (struct sockaddr *)&a, &len), 0, "getsockname");
	*port = ntohs(a.sin_port);
	return fd;
}

static struct sd_sock tuple4(uint16_t sport, uint16_t dport)
{
	struct sd_sock s = { .family = AF_INET, .sport = sport, .dport = dport };

	s.saddr[0] = s.daddr[0] = 127;
	s.saddr[3] = s.daddr[3] = 1;
	return s;
}

/* A client's TIME_WAIT towards the listener at lport (the client closes
 * first), optionally bound to a device; its local port. 0: SO_BINDTODEVICE
 * refused (no CAP_NET_RAW). */
static uint16_t client_time_wait(int l, uint16_t lport, const char *dev)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(lport),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s;
	struct sd_find f;
	char b;

	ASSERT_TRUE(c >= 0, "socket");
	if (dev && setsockopt(c, SOL_SOCKET, SO_BINDTODEVICE, dev, strlen(dev) + 1)) {
		close(c);
		return 0;
	}
	ASSERT_EQ(connect(c, (struct sockaddr *)&a, sizeof(a)), 0, "connect");
	ASSERT_EQ(getsockname(c, (struct sockaddr *)&a, &len), 0, "getsockname");
	s = accept(l, NULL, NULL);
	ASSERT_TRUE(s >= 0, "accept");
	close(c);
	/* The client's FIN read: then the server's own close. */
	ASSERT_EQ(read(s, &b, 1), 0, "server reads the client's FIN");
	close(s);
	/* The server's FIN reaches the client in the kernel's softirq: asked
	 * until the client's socket is a TIME_WAIT (bounded). */
	f.q = tuple4(ntohs(a.sin_port), lport);
	f.q.bound_if = dev ? if_nametoindex(dev) : 0;
	for (int i = 0; i < 2000; i++) {
		ASSERT_EQ(sockdiag_find_tcp_of(0, 0, &f, 1), 0, "look");
		if (f.found == 1 && f.got.timer == 3)
			break;
		poll(NULL, 0, 1);
	}
	return ntohs(a.sin_port);
}

TEST(exact_look_finds_time_wait_and_nothing_else)
{
	uint16_t lport, cport;
	int l = listener4(&lport);
	struct sd_find f[3];

	cport = client_time_wait(l, lport, NULL);
	f[0].q = tuple4(cport, lport);		/* the client's TIME_WAIT */
	f[1].q = tuple4(cport, (uint16_t)(lport + 1));	/* no socket there */
	f[2].q = tuple4(lport, cport);		/* the server's side: it closed second */
	ASSERT_EQ(sockdiag_find_tcp_of(0, 0, f, 3), 0, "look");
	ASSERT_EQ(f[0].found, 1, "time_wait_found");
	ASSERT_EQ(f[0].got.timer, 3, "its_timer_is_time_wait");
	ASSERT_EQ(f[0].got.state, TCP_TIME_WAIT_, "tw_substate");
	ASSERT_EQ(f[0].got.inode, 0, "no_inode");
	ASSERT_EQ(f[0].got.sport, cport, "sport");
	ASSERT_EQ(f[0].got.dport, lport, "dport");
	ASSERT_TRUE(f[0].got.expires_ms > 50000 && f[0].got.expires_ms <= 60000, "expires");
	ASSERT_EQ(f[1].found, 0, "none_at_another_tuple");
	/* No established socket at the server's tuple: the kernel's look
	 * falls back to the listener of its local address. */
	ASSERT_EQ(f[2].found, 1, "listener_fallback");
	ASSERT_EQ(f[2].got.state, TCP_LISTEN_, "fallback_is_the_listener");
	ASSERT_EQ(f[2].got.dport, 0, "fallback_has_no_peer");
	close(l);
}

TEST(exact_look_answers_a_batch_over_several_datagrams)
{
	enum { N = 150, AT = 130 };
	static struct sd_find f[N];
	uint16_t lport, cport;
	int l = listener4(&lport);

	cport = client_time_wait(l, lport, NULL);
	for (int i = 0; i < N; i++)
		f[i].q = tuple4(cport, (uint16_t)(lport + 1 + i));
	f[AT].q = tuple4(cport, lport);
	ASSERT_EQ(sockdiag_find_tcp_of(0, 0, f, N), 0, "look");
	for (int i = 0; i < N; i++)
		if (f[i].found != (i == AT)) {
			ASSERT_EQ(f[i].found, i == AT, "each_answered_right");
		}
	ASSERT_EQ(f[AT].got.timer, 3, "the_time_wait_among_them");
	close(l);
}

TEST(exact_look_must_name_a_bound_device)
{
	uint16_t lport, cport;
	int l = listener4(&lport);
	struct sd_find f[2];

	cport = client_time_wait(l, lport, "lo");
	if (!cport) {
		close(l);
		SKIP("SO_BINDTODEVICE refused (no CAP_NET_RAW)");
	}
	f[0].q = f[1].q = tuple4(cport, lport);
	f[1].q.bound_if = if_nametoindex("lo");
	ASSERT_EQ(sockdiag_find_tcp_of(0, 0, f, 2), 0, "look");
	ASSERT_EQ(f[0].found, 0, "unnamed_device_misses_it");
	ASSERT_EQ(f[1].found, 1, "named_device_finds_it");
	ASSERT_EQ(f[1].got.timer, 3, "time_wait");
	ASSERT_EQ(f[1].got.bound_if, if_nametoindex("lo"), "bound_if_reported");
	close(l);
}

/* A look naming a cookie finds that socket only (review-hagent H3): the
 * TIME_WAIT's own cookie finds it, another is "none". */
TEST(exact_look_by_cookie)
{
	uint16_t lport, cport;
	int l = listener4(&lport);
	struct sd_find f[3];

	cport = client_time_wait(l, lport, NULL);
	f[0].q = tuple4(cport, lport);
	ASSERT_EQ(sockdiag_find_tcp_of(0, 0, f, 1), 0, "look");
	ASSERT_EQ(f[0].found, 1, "found_without_cookie");
	ASSERT_TRUE(f[0].got.cookie != 0, "has_cookie");
	f[1].q = f[2].q = f[0].q;
	f[1].q.cookie = f[0].got.cookie;
	f[2].q.cookie = f[0].got.cookie + 1;
	ASSERT_EQ(sockdiag_find_tcp_of(0, 0, f + 1, 2), 0, "look");
	ASSERT_EQ(f[1].found, 1, "its_cookie_finds_it");
	ASSERT_EQ(f[1].got.cookie, f[0].got.cookie, "same_socket");
	ASSERT_EQ(f[2].found, 0, "another_cookie_is_none");
	close(l);
}

/* The look enters the namespace through a pid: one now in another
 * namespace than the census read (moved, or a reused pid) must give no
 * answer, never "none" for each (which would end every TIME_WAIT). */
TEST(exact_look_refuses_a_pid_now_in_another_namespace)
{
	uint32_t self = netns_self();
	struct sd_find f = { .q = tuple4(1, 1) };	/* no socket there */

	ASSERT_TRUE(self != 0, "own_namespace_read");
	ASSERT_EQ(sockdiag_find_tcp_of(getpid(), self + 1, &f, 1), -ESTALE, "another_namespace");
	ASSERT_EQ(f.found, -EIO, "no_answer_not_none");
	ASSERT_EQ(sockdiag_find_tcp_of(getpid(), self, &f, 1), 0, "its_namespace");
	ASSERT_EQ(f.found, 0, "none_there");
}

/* Crafted replies: an ENOENT error is "none", another error no answer,
 * a socket found; another request's seq and answered ones left alone; a
 * cut message refused. */
TEST(parse_found_replies)
{
	struct {
		struct nlmsghdr h;
		union {
			struct nlmsgerr e;
			struct inet_diag_msg m;
		};
	} __attribute__((aligned(4))) msg[4];
	struct sd_find f[3];
	size_t answered = 0;

	memset(msg, 0, sizeof(msg));
	for (int i = 0; i < 3; i++)
		f[i].found = -EINPROGRESS;
	/* Each message the length of its slot: the next starts there. */
	msg[0].h.nlmsg_len = sizeof(msg[0]);
	msg[0].h.nlmsg_type = NLMSG_ERROR;
	msg[0].h.nlmsg_seq = 10;
	msg[0].e.error = -ENOENT;
	msg[1].h.nlmsg_len = sizeof(msg[1]);
	msg[1].h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg[1].h.nlmsg_seq = 11;
	msg[1].m.idiag_family = AF_INET;
	msg[1].m.idiag_timer = 3;
	msg[1].m.id.idiag_sport = htons(40001);
	msg[2].h = msg[0].h;
	msg[2].h.nlmsg_seq = 12;
	msg[2].e.error = -ENOMEM;
	msg[3].h = msg[0].h;
	msg[3].h.nlmsg_seq = 99;	/* not one of ours */
	msg[3].e.error = -ENOENT;
	ASSERT_EQ(sockdiag_parse_found(msg, sizeof(msg), 10, f, 3, &answered), 0, "parsed");
	ASSERT_EQ(answered, 3, "three_answered");
	ASSERT_EQ(f[0].found, 0, "enoent_is_none");
	ASSERT_EQ(f[1].found, 1, "socket_found");
	ASSERT_EQ(f[1].got.sport, 40001, "its_tuple");
	ASSERT_EQ(f[2].found, -ENOMEM, "other_error_no_answer");
	/* Answered already: a second answer is not taken. */
	msg[0].e.error = -EPERM;
	ASSERT_EQ(sockdiag_parse_found(msg, sizeof(msg[0]), 10, f, 3, &answered), 0, "again");
	ASSERT_EQ(f[0].found, 0, "first_answer_kept");
	ASSERT_EQ(answered, 3, "not_counted_twice");
	/* A socket message cut short. */
	f[1].found = -EINPROGRESS;
	msg[1].h.nlmsg_len = NLMSG_LENGTH(8);
	ASSERT_EQ(sockdiag_parse_found(&msg[1], NLMSG_LENGTH(8), 10, f, 3, &answered), -EBADMSG,
		  "cut_message_refused");
}

UNIT_MAIN()
