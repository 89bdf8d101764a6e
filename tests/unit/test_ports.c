// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* ports_usage: the busiest destinations by ephemeral ports. A listener's
 * accepted sockets hold its port, which no connect() can pick while it is
 * bound, so they are no destination's ports, even where the listener's
 * port lies in ip_local_port_range (`connscope demo`'s server, bound to
 * port 0: the HTML report listed each pooled connection's server side as
 * "127.0.0.1 -> 127.0.0.1:CLIENTPORT, 1 port"). */
#include <string.h>
#include <sys/socket.h>
#include "unit.h"
#include "ports.h"
#include "tcp_state_names.h"

static struct sd_sock sock(uint8_t state, uint16_t sport, uint16_t dport)
{
	struct sd_sock s;

	memset(&s, 0, sizeof(s));
	s.family = AF_INET;
	s.state = state;
	s.sport = sport;
	s.dport = dport;
	s.saddr[0] = 127, s.saddr[3] = 1;
	if (dport)
		s.daddr[0] = 127, s.daddr[3] = 1;
	return s;
}

TEST(accepted_sockets_are_no_destination)
{
	/* A listener on 40000 (in the range), two clients' connections to it
	 * from 50001 and 50002, both ends, and one client TIME_WAIT. */
	struct sd_sock s[] = {
		sock(CS_TCP_LISTEN, 40000, 0),
		sock(CS_TCP_ESTABLISHED, 50001, 40000),
		sock(CS_TCP_ESTABLISHED, 40000, 50001),
		sock(CS_TCP_ESTABLISHED, 50002, 40000),
		sock(CS_TCP_ESTABLISHED, 40000, 50002),
		sock(CS_TCP_TIME_WAIT, 50003, 40000),
	};
	struct port_use u[8];
	size_t n = ports_usage(s, sizeof(s) / sizeof(s[0]), 32768, 60999, u, 8);

	ASSERT_EQ(n, 1, "one_destination");
	ASSERT_EQ(u[0].dport, 40000, "the_listener");
	ASSERT_EQ(u[0].established, 2, "client_ends_only");
	ASSERT_EQ(u[0].time_wait, 1, "time_wait");
}

TEST(a_listener_hides_only_its_own_netns_and_address)
{
	/* The snapshot holds several namespaces' sockets. A client in netns 1
	 * from 50001 to 40000 shares its port with a listener of netns 2's,
	 * and one from 50002 with a listener of its own netns bound to
	 * 127.0.0.2: neither listener holds the client's port, so both are
	 * 40000's ephemeral ports. A wildcard listener (0.0.0.0:40000) of
	 * netns 1 still hides its accepted socket (127.0.0.1:40000). */
	struct sd_sock s[] = {
		sock(CS_TCP_LISTEN, 40000, 0),
		sock(CS_TCP_LISTEN, 50001, 0),
		sock(CS_TCP_LISTEN, 50002, 0),
		sock(CS_TCP_ESTABLISHED, 50001, 40000),
		sock(CS_TCP_ESTABLISHED, 50002, 40000),
		sock(CS_TCP_ESTABLISHED, 40000, 50001),
	};
	struct port_use u[8];
	size_t n;

	memset(s[0].saddr, 0, sizeof(s[0].saddr));
	s[0].netns = s[2].netns = s[3].netns = s[4].netns = s[5].netns = 1;
	s[1].netns = 2;
	s[2].saddr[3] = 2;
	n = ports_usage(s, sizeof(s) / sizeof(s[0]), 32768, 60999, u, 8);
	ASSERT_EQ(n, 1, "one_destination");
	ASSERT_EQ(u[0].dport, 40000, "the_listener");
	ASSERT_EQ(u[0].established, 2, "both_clients_counted");
	ASSERT_EQ(u[0].other + u[0].time_wait, 0, "nothing_else");
}
TEST(each_destination_counted_however_its_sockets_come)
{
	/* The census's sockets come in runs towards one destination (a
	 * churn's TIME_WAIT), interleaved with others; a local port that a
	 * listener of another address has is still a client's. Every
	 * socket counts once towards its own destination: 40000 gets
	 * 50001-50003 and 50006, 40001 gets 50004, 50005 and 40000 (a
	 * client port equal to a listener's port, the listener bound to
	 * 127.0.0.2). */
	struct sd_sock s[] = {
		sock(CS_TCP_LISTEN, 40000, 0),
		sock(CS_TCP_TIME_WAIT, 50001, 40000),
		sock(CS_TCP_TIME_WAIT, 50002, 40000),
		sock(CS_TCP_ESTABLISHED, 50003, 40000),
		sock(CS_TCP_TIME_WAIT, 50004, 40001),
		sock(CS_TCP_FIN_WAIT2, 50005, 40001),
		sock(CS_TCP_TIME_WAIT, 50006, 40000),
		sock(CS_TCP_ESTABLISHED, 40000, 40001),
	};
	struct port_use u[8];
	size_t n;

	s[0].saddr[3] = 2;
	n = ports_usage(s, sizeof(s) / sizeof(s[0]), 32768, 60999, u, 8);
	ASSERT_EQ(n, 2, "two_destinations");
	ASSERT_EQ(u[0].dport, 40000, "busiest_first");
	ASSERT_EQ(u[0].time_wait, 3, "40000_time_wait");
	ASSERT_EQ(u[0].established, 1, "40000_established");
	ASSERT_EQ(u[0].other, 0, "40000_other");
	ASSERT_EQ(u[1].dport, 40001, "then_40001");
	ASSERT_EQ(u[1].time_wait, 1, "40001_time_wait");
	ASSERT_EQ(u[1].established, 1, "40001_established");
	ASSERT_EQ(u[1].other, 1, "40001_other");
}
TEST(destinations_told_apart_by_their_whole_key)
{
	/* Four destinations with one port, interleaved: 127.0.0.1 and
	 * 127.0.0.3 from 127.0.0.1, 127.0.0.1 from 127.0.0.5, and ::1 from
	 * ::1. A cache of the last destination that compared the port alone
	 * (or not the family or the source) would merge them. */
	struct sd_sock s[10];
	const char order[] = "ABACBAVCBA";
	struct port_use u[8];
	size_t n, i;

	for (i = 0; i < 10; i++) {
		s[i] = sock(CS_TCP_TIME_WAIT, (uint16_t)(50001 + i), 40000);
		if (order[i] == 'B')
			s[i].daddr[3] = 3;
		if (order[i] == 'C')
			s[i].saddr[3] = 5;
		if (order[i] == 'V') {
			s[i].family = AF_INET6;
			memset(s[i].saddr, 0, sizeof(s[i].saddr));
			memset(s[i].daddr, 0, sizeof(s[i].daddr));
			s[i].saddr[15] = s[i].daddr[15] = 1;
		}
	}
	n = ports_usage(s, 10, 32768, 60999, u, 8);
	ASSERT_EQ(n, 4, "four_destinations");
	ASSERT_EQ(u[0].time_wait, 4, "a_127_0_0_1");
	ASSERT_EQ(u[0].daddr[3], 1, "a_daddr");
	ASSERT_EQ(u[0].saddr[3], 1, "a_saddr");
	ASSERT_EQ(u[1].time_wait, 3, "b_127_0_0_3");
	ASSERT_EQ(u[1].daddr[3], 3, "b_daddr");
	ASSERT_EQ(u[2].time_wait, 2, "c_from_127_0_0_5");
	ASSERT_EQ(u[2].saddr[3], 5, "c_saddr");
	ASSERT_EQ(u[3].time_wait, 1, "v6");
	ASSERT_EQ(u[3].family, AF_INET6, "v6_family");
}
UNIT_MAIN()
