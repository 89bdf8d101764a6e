/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The TCP states of the fd listings (fdstates.c through fdsession.c, in
 * listing mode: no BPF) on this process's own sockets: from a snapshot
 * handed in or a dump of the session's own, never from /proc/PID/net/tcp;
 * a socket listed before a dump that does not hold it, and held after
 * it, is TCP_CLOSE; one listed after the dump began, or closed since its
 * listing, and absent from it is unknown. Nothing here needs root. */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "unit.h"
#include "fdsession.h"
#include "fdstates.h"
#include "procfs.h"
#include "snapshot.h"
#include "timeutil.h"

static int tcp_listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	*a = (struct sockaddr_in){ .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	ASSERT_TRUE(fd >= 0, "tcp socket");
	ASSERT_EQ(bind(fd, (struct sockaddr *)a, sizeof(*a)), 0, "tcp bind");
	ASSERT_EQ(listen(fd, 8), 0, "listen");
	ASSERT_EQ(getsockname(fd, (struct sockaddr *)a, &len), 0, "getsockname");
	return fd;
}

/* "listen est close close_wait unknown" of a listing. */
static void expect_states(const struct fd_inventory *inv, int listen, int est, int closed,
			  int close_wait, int unknown, const char *what)
{
	char got[96], want[96];

	snprintf(got, sizeof(got), "%s: %llu %llu %llu %llu %llu tcp %llu", what,
		 (unsigned long long)inv->tcp_state[CS_TCP_LISTEN],
		 (unsigned long long)inv->tcp_state[CS_TCP_ESTABLISHED],
		 (unsigned long long)inv->tcp_state[CS_TCP_CLOSE],
		 (unsigned long long)inv->tcp_state[CS_TCP_CLOSE_WAIT],
		 (unsigned long long)inv->tcp_state[0],
		 (unsigned long long)inv->by_type[FDT_TCP]);
	snprintf(want, sizeof(want), "%s: %d %d %d %d %d tcp %d", what, listen, est, closed,
		 close_wait, unknown, listen + est + closed + close_wait + unknown);
	ASSERT_STREQ(got, want, what);
	ASSERT_EQ(inv->net_tables_read, 0, "no /proc/PID/net table read");
}

TEST(session_states)
{
	struct tcp_snapshot snap = { 0 };
	struct fd_session fs;
	struct sockaddr_in sa, sa2;
	pid_t me = getpid();
	int l, l2, c, s, t, t2;
	char b;

	procfs_root = "/proc";
	l = tcp_listener(&sa);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0, "connect");
	s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	ASSERT_TRUE(s >= 0, "accept");
	t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_TRUE(t >= 0, "unconnected socket");

	/* Listing mode: no BPF. The listings, then a dump of its own. */
	ASSERT_EQ(fd_session_open(&fs, &me, NULL, 1, now_ns(), 1000000000ull, 10, 3, -1, false),
		  0, "session");
	expect_states(&fs.procs[0].inv, 1, 2, 1, 0, 0, "open");
	ASSERT_EQ(fs.tcp.dumps, 1, "one dump of its own at open");

	/* The server end closes; once the client read the FIN it is in
	 * CLOSE_WAIT. A tick dumps after its listings. */
	close(s);
	ASSERT_EQ(read(c, &b, 1), 0, "EOF at the client");
	fd_session_tick(&fs, false);
	expect_states(&fs.procs[0].inv, 1, 0, 1, 1, 0, "own dump");
	ASSERT_EQ(fs.tcp.dumps, 2, "one dump per tick");
	ASSERT_EQ(fs.tcp.dumps_failed, 0, "no dump failed");

	/* attach's way: the listing, then its snapshot handed in. */
	fs.tcp_from_snapshot = true;
	fd_session_tick(&fs, false);
	ASSERT_EQ(fs.tcp.dumps, 2, "no dump of its own");
	ASSERT_EQ(snapshot_take(&snap, &me, 1), 0, "snapshot");
	fd_session_tcp_states(&fs, &snap);
	expect_states(&fs.procs[0].inv, 1, 0, 1, 1, 0, "snapshot after the listing");
	ASSERT_EQ(fs.tcp.dumps, 2, "the snapshot's dump used, none of its own");

	/* A socket made after the snapshot began and listed after it: no
	 * state made up for it (it could be younger than the dump). */
	ASSERT_EQ(snapshot_take(&snap, &me, 1), 0, "snapshot");
	t2 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_TRUE(t2 >= 0, "a younger socket");
	fd_session_tick(&fs, false);
	fd_session_tcp_states(&fs, &snap);
	expect_states(&fs.procs[0].inv, 1, 0, 0, 1, 2, "listed after the snapshot");

	/* The next round tells both: listed before its snapshot, held
	 * after it. */
	fd_session_tick(&fs, false);
	ASSERT_EQ(snapshot_take(&snap, &me, 1), 0, "snapshot");
	fd_session_tcp_states(&fs, &snap);
	expect_states(&fs.procs[0].inv, 1, 0, 2, 1, 0, "listed before the snapshot");

	/* Closed between its listing and the dump (a load test's churn):
	 * in no dump, yet not a socket held in TCP_CLOSE: unknown. */
	fd_session_tick(&fs, true);
	close(t2);
	ASSERT_EQ(snapshot_take(&snap, &me, 1), 0, "snapshot");
	fd_session_tcp_states(&fs, &snap);
	expect_states(&fs.procs[0].inv, 1, 0, 1, 1, 1, "closed since its listing");

	/* A listener seen by a dump, listed, closed before the next dump (a
	 * process that exits): the state the dump before its listing saw. */
	l2 = tcp_listener(&sa2);
	fd_session_tick(&fs, false);
	ASSERT_EQ(snapshot_take(&snap, &me, 1), 0, "snapshot");
	fd_session_tcp_states(&fs, &snap);
	expect_states(&fs.procs[0].inv, 2, 0, 1, 1, 0, "a second listener");
	fd_session_tick(&fs, false);
	close(l2);
	ASSERT_EQ(snapshot_take(&snap, &me, 1), 0, "snapshot");
	fd_session_tcp_states(&fs, &snap);
	expect_states(&fs.procs[0].inv, 2, 0, 1, 1, 0, "closed since: the dump before");

	fd_session_close(&fs);
	snapshot_free(&snap);
	close(t);
	close(c);
	close(l);
}

/* fdstates alone: what a snapshot covers, and its inodes. */
TEST(from_snapshot)
{
	struct tcp_snapshot snap = { 0 };
	struct fd_tcp_states st;
	struct sockaddr_in sa;
	pid_t me = getpid();
	int l, found = 0;

	procfs_root = "/proc";
	l = tcp_listener(&sa);
	ASSERT_EQ(snapshot_take(&snap, &me, 1), 0, "snapshot");
	fdstates_init(&st);
	ASSERT_EQ(fdstates_from_snapshot(&st, &snap), 0, "from snapshot");
	for (size_t i = 0; i < snap.n; i++) {
		if (!snap.socks[i].inode) {
			ASSERT_EQ(fdstates_get(&st, 0), -1, "no inode, no state");
			continue;
		}
		ASSERT_EQ(fdstates_get(&st, snap.socks[i].inode), snap.socks[i].state, "state");
		found += snap.socks[i].state == CS_TCP_LISTEN &&
			 snap.socks[i].sport == ntohs(sa.sin_port);
	}
	ASSERT_EQ(found, 1, "our listener in the snapshot");
	/* Our namespace is covered since the snapshot began: no dump. */
	ASSERT_EQ(fdstates_cover(&st, me), snap.taken_ns, "covered since the snapshot");
	ASSERT_EQ(st.dumps, 0, "no dump taken");
	fdstates_reset(&st);
	ASSERT_TRUE(fdstates_cover(&st, me) > snap.taken_ns, "after a reset: a dump now");
	ASSERT_EQ(st.dumps, 1, "one dump");
	ASSERT_EQ(fdstates_cover(&st, me) > 0, 1, "the same namespace again");
	ASSERT_EQ(st.dumps, 1, "not dumped twice");
	ASSERT_EQ(fdstates_cover(&st, 999999999), 0, "no such process: not covered");
	fdstates_free(&st);
	snapshot_free(&snap);
	close(l);
}

UNIT_MAIN()
