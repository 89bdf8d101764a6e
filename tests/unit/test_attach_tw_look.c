// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* attach_tw_look, the run's last census's exact look, against real
 * TIME_WAIT sockets on 127.0.0.1 in a network namespace of the test's own
 * (gone with it): a server's TIME_WAIT the kernel took over for a new
 * connection at its very 4-tuple (the same client port's next SYN, for a
 * second listener on the port), whose own TIME_WAIT then sits there. The
 * look names the cookie the census showed (review-hagent H3): the first
 * one's is "none", the second one's and no cookie "there". */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "unit.h"
#include "own_netns.h"
#include "netns.h"
#include "sockdiag.h"
#include "snapshot.h"
#include "attach_sources.h"


static struct sockaddr_in lo4(uint16_t port)
{
	return (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
				     .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
}

static int listener(uint16_t port)
{
	struct sockaddr_in a = lo4(port);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT_TRUE(fd >= 0, "socket");
	ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0, "reuseaddr");
	ASSERT_EQ(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "bind");
	ASSERT_EQ(listen(fd, 8), 0, "listen");
	return fd;
}

/* One connection from cport to the listener l at port, the server's end
 * closing first: its TIME_WAIT at (port, cport), once it is one (asked
 * until then, bounded); its cookie. */
static uint64_t server_time_wait(int l, uint16_t port, uint16_t cport)
{
	struct sockaddr_in a = lo4(cport), to = lo4(port);
	int one = 1, c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s;
	struct sd_find f = { 0 };
	char b;

	ASSERT_TRUE(c >= 0, "socket");
	ASSERT_EQ(setsockopt(c, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0, "reuseaddr");
	ASSERT_EQ(bind(c, (struct sockaddr *)&a, sizeof(a)), 0, "bind_client_port");
	ASSERT_EQ(connect(c, (struct sockaddr *)&to, sizeof(to)), 0, "connect");
	s = accept(l, NULL, NULL);
	ASSERT_TRUE(s >= 0, "accept");
	close(s);
	ASSERT_EQ(read(c, &b, 1), 0, "client reads the server's FIN");
	close(c);
	f.q = (struct sd_sock){ .family = AF_INET, .sport = port, .dport = cport };
	f.q.saddr[0] = f.q.daddr[0] = 127;
	f.q.saddr[3] = f.q.daddr[3] = 1;
	for (int i = 0; i < 2000; i++) {
		ASSERT_EQ(sockdiag_find_tcp_of(0, 0, &f, 1), 0, "look");
		if (f.found == 1 && f.got.timer == 3)
			break;
		poll(NULL, 0, 1);
	}
	ASSERT_EQ(f.got.timer, 3, "a_time_wait");
	return f.got.cookie;
}

TEST(look_tells_a_time_wait_replaced_at_its_tuple_by_cookie)
{
	const uint16_t port = 8080, cport = 45000;
	struct snap_ns ns = { .pid = getpid() };
	struct tcp_snapshot snap = { .ns = &ns, .nns = 1 };
	struct agg_tw_look q[3];
	uint64_t first, second;
	int l;

	if (!unit_own_netns())
		SKIP("unshare(CLONE_NEWNET) refused (no CAP_SYS_ADMIN): the sockets would stay in the caller's namespace");
	ns.netns = netns_self();
	l = listener(port);
	first = server_time_wait(l, port, cport);
	close(l);
	/* Another listener on the port takes the next SYN from cport: it
	 * takes the first TIME_WAIT over, and its own end closes first. */
	l = listener(port);
	second = server_time_wait(l, port, cport);
	close(l);
	ASSERT_TRUE(first && second && first != second, "another_socket_there");
	memset(q, 0, sizeof(q));
	for (int i = 0; i < 3; i++) {
		q[i].t = (struct cs_tuple){ .family = AF_INET, .netns = ns.netns, .sport = port,
					    .dport = cport };
		q[i].t.saddr[0] = q[i].t.daddr[0] = 127;
		q[i].t.saddr[3] = q[i].t.daddr[3] = 1;
	}
	q[0].cookie = first;
	q[1].cookie = second;
	attach_tw_look(&snap, q, 3);
	ASSERT_EQ(q[0].found, 0, "taken_over_one_is_gone");
	ASSERT_EQ(q[1].found, 1, "its_successor_is_there");
	ASSERT_EQ(q[2].found, 1, "no_cookie_any_there");
	ASSERT_TRUE(q[1].expires_ms > 50000 && q[1].expires_ms <= 60000, "its_timer");
	ASSERT_TRUE(q[1].at_ns != 0, "look_time_said");
}

UNIT_MAIN()
