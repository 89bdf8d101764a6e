/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* fdinv.c against a recorded proc tree (tests/data/fdinv: symlinks in every
 * readlink form, recorded /proc/net tables, limits). The real /proc is in
 * test_fdinv_real.c, an fdfix process beside ls and lsof in
 * test_fdinv_fixture.c. Nothing here needs root. */
#define _GNU_SOURCE		/* memfd_create, setresuid, pipe2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "unit.h"
#include "fdinv.h"
#include "hashmap.h"
#include "procfs.h"
#include "sockdiag.h"
#include "fdinv_check.h"

static const char *data_dir(void)
{
	return unit_data_dir("fdinv/4242/stat");
}

static void use_tree(const char *sub)
{
	static char root[PATH_MAX + 64];

	snprintf(root, sizeof(root), "%s/%s", data_dir(), sub);
	procfs_root = root;
}


/* ---- classification ---------------------------------------------------- */

TEST(type_names)
{
	for (int i = 0; i < FDT_MAX; i++) {
		const char *n = fdinv_type_name(i);

		for (const char *p = n; *p; p++)
			ASSERT_TRUE((*p >= 'a' && *p <= 'z') || *p == '_', "lowercase label");
		for (int j = 0; j < i; j++)
			ASSERT_TRUE(strcmp(n, fdinv_type_name(j)), "names distinct");
	}
	ASSERT_STREQ(fdinv_type_name(FDT_TCP), "tcp", "tcp");
	ASSERT_STREQ(fdinv_type_name(FDT_OTHER_SOCKET), "other_socket", "other_socket");
	ASSERT_STREQ(fdinv_type_name(FDT_ANON_OTHER), "anon_other", "anon_other");
	ASSERT_STREQ(fdinv_type_name(FDT_OTHER), "other", "other");
	ASSERT_STREQ(fdinv_type_name(FDT_MAX), "unknown", "out of range");
	ASSERT_STREQ(fdinv_type_name(-1), "unknown", "negative");
}

/* fdt_is_socket over every value, by the types' stable names: the census's
 * owners (fd_session_owners) and the sock_kind check take a socket's
 * inode by it, so a type wrongly out is a socket left unattributed. */
TEST(socket_types_by_name)
{
	static const char *const socks[] = { "tcp", "udp", "unix", "netlink", "other_socket" };

	for (int i = -1; i <= FDT_MAX; i++) {
		const char *n = fdinv_type_name(i);
		bool want = false;

		for (size_t k = 0; k < sizeof(socks) / sizeof(socks[0]); k++)
			want |= i >= 0 && i < FDT_MAX && !strcmp(n, socks[k]);
		ASSERT_EQ(fdt_is_socket(i), want, n);
	}
}

TEST(classify_link_forms)
{
	static const struct {
		const char *link;
		int type, needs;
		uint64_t ino;
	} cases[] = {
		{ "socket:[1234661]", FDT_OTHER_SOCKET, FDINV_NEED_SOCK, 1234661 },
		{ "socket:[]", FDT_OTHER_SOCKET, FDINV_NEED_SOCK, 0 },
		{ "socket:[12x]", FDT_OTHER_SOCKET, FDINV_NEED_SOCK, 0 },
		{ "pipe:[5555]", FDT_PIPE, 0, 5555 },
		{ "anon_inode:[eventfd]", FDT_EVENTFD, 0, 0 },
		{ "anon_inode:[eventpoll]", FDT_EPOLL, 0, 0 },
		{ "anon_inode:[timerfd]", FDT_TIMERFD, 0, 0 },
		{ "anon_inode:[signalfd]", FDT_SIGNALFD, 0, 0 },
		{ "anon_inode:inotify", FDT_INOTIFY, 0, 0 },
		{ "anon_inode:[fanotify]", FDT_FANOTIFY, 0, 0 },
		{ "anon_inode:[pidfd]", FDT_PIDFD, 0, 0 },
		{ "anon_inode:bpf-map", FDT_BPF, 0, 0 },
		{ "anon_inode:bpf-prog", FDT_BPF, 0, 0 },
		{ "anon_inode:bpf_link", FDT_BPF, 0, 0 },
		{ "anon_inode:bpf_iter", FDT_BPF, 0, 0 },
		{ "anon_inode:btf", FDT_BPF, 0, 0 },
		{ "anon_inode:[io_uring]", FDT_ANON_OTHER, 0, 0 },
		{ "anon_inode:[eventfd", FDT_ANON_OTHER, 0, 0 },
		{ "anon_inode:[eventfdX]", FDT_ANON_OTHER, 0, 0 },
		{ "/memfd:shm-ring (deleted)", FDT_MEMFD, 0, 0 },
		{ "/memfd: (deleted)", FDT_MEMFD, 0, 0 },
		{ "/memfd:not-deleted", FDT_FILE, FDINV_NEED_STAT, 0 },
		{ "/var/log/app.log (deleted)", FDT_FILE, FDINV_NEED_STAT, 0 },
		{ "/dev/null", FDT_FILE, FDINV_NEED_STAT, 0 },
		{ "/", FDT_FILE, FDINV_NEED_STAT, 0 },
		{ "net:[4026531840]", FDT_OTHER, 0, 0 },
		{ "", FDT_OTHER, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ino = 99;
		int needs = 99;
		char label[96];
		int t = fdinv_classify_link(cases[i].link, strlen(cases[i].link),
					    &ino, &needs);

		snprintf(label, sizeof(label), "type of '%s'", cases[i].link);
		ASSERT_STREQ(fdinv_type_name(t), fdinv_type_name(cases[i].type), label);
		snprintf(label, sizeof(label), "needs of '%s'", cases[i].link);
		ASSERT_EQ(needs, cases[i].needs, label);
		snprintf(label, sizeof(label), "inode of '%s'", cases[i].link);
		ASSERT_EQ(ino, cases[i].ino, label);
	}
	/* Length, not NUL, ends the text. */
	{
		uint64_t ino;
		int needs;

		ASSERT_EQ(fdinv_classify_link("pipe:[77]trailing", 9, &ino, &needs),
			  FDT_PIPE, "pipe by length");
		ASSERT_EQ(ino, 77, "pipe inode by length");
	}
}

TEST(type_from_mode_and_protoname)
{
	ASSERT_EQ(fdinv_type_from_mode(S_IFREG | 0644), FDT_FILE, "reg");
	ASSERT_EQ(fdinv_type_from_mode(S_IFDIR | 0755), FDT_DIR, "dir");
	ASSERT_EQ(fdinv_type_from_mode(S_IFCHR | 0666), FDT_CHR, "chr");
	ASSERT_EQ(fdinv_type_from_mode(S_IFBLK | 0660), FDT_BLK, "blk");
	ASSERT_EQ(fdinv_type_from_mode(S_IFIFO | 0600), FDT_PIPE, "fifo");
	ASSERT_EQ(fdinv_type_from_mode(S_IFLNK | 0777), FDT_OTHER, "lnk");
	ASSERT_EQ(fdinv_type_from_mode(S_IFSOCK | 0777), FDT_OTHER, "sock file");

	ASSERT_EQ(fdinv_type_from_protoname("TCP"), FDT_TCP, "TCP");
	ASSERT_EQ(fdinv_type_from_protoname("TCPv6"), FDT_TCP, "TCPv6");
	ASSERT_EQ(fdinv_type_from_protoname("MPTCPv6"), FDT_TCP, "MPTCPv6");
	ASSERT_EQ(fdinv_type_from_protoname("UDP"), FDT_UDP, "UDP");
	ASSERT_EQ(fdinv_type_from_protoname("UDPv6"), FDT_UDP, "UDPv6");
	ASSERT_EQ(fdinv_type_from_protoname("UDP-Lite"), FDT_UDP, "UDP-Lite");
	ASSERT_EQ(fdinv_type_from_protoname("UNIX-STREAM"), FDT_UNIX, "UNIX-STREAM");
	ASSERT_EQ(fdinv_type_from_protoname("UNIX"), FDT_UNIX, "UNIX");
	ASSERT_EQ(fdinv_type_from_protoname("NETLINK"), FDT_NETLINK, "NETLINK");
	ASSERT_EQ(fdinv_type_from_protoname("PACKET"), FDT_OTHER_SOCKET, "PACKET");
	ASSERT_EQ(fdinv_type_from_protoname("RAW"), FDT_OTHER_SOCKET, "RAW");
}

/* ---- recorded tree ------------------------------------------------------- */

/* tests/data/fdinv/4242: fds 0-35 and 4095, one in every form; see the
 * symlinks. With stat and the tables: */
static void want_4242(uint64_t *w)
{
	memset(w, 0, sizeof(uint64_t) * FDT_MAX);
	w[FDT_TCP] = 6;		/* 3 6 listen, 4 5 33 established, 7 close_wait */
	w[FDT_UDP] = 2;		/* 8 (udp) 9 (udp6) */
	w[FDT_UNIX] = 1;	/* 10 */
	w[FDT_NETLINK] = 1;	/* 11 */
	w[FDT_OTHER_SOCKET] = 2;/* 12 in no table, 13 "socket:[]" */
	w[FDT_FILE] = 3;	/* 29 /etc/passwd, 30 and 35 stat fails: guessed */
	w[FDT_DIR] = 1;		/* 28 "/" */
	w[FDT_PIPE] = 3;	/* 1 2 34 */
	w[FDT_EVENTFD] = 2;	/* 14 4095 */
	w[FDT_EPOLL] = 1;
	w[FDT_TIMERFD] = 1;
	w[FDT_SIGNALFD] = 1;
	w[FDT_INOTIFY] = 1;
	w[FDT_FANOTIFY] = 1;
	w[FDT_PIDFD] = 1;
	w[FDT_MEMFD] = 1;	/* 21 */
	w[FDT_BPF] = 4;		/* 22-25 */
	w[FDT_ANON_OTHER] = 2;	/* 26 io_uring, 27 perf_event */
	w[FDT_CHR] = 2;		/* 0 /dev/null, 31 stat fails: guessed */
	w[FDT_OTHER] = 1;	/* 32 net:[...] */
}

TEST(fake_tree_counts)
{
	struct fd_inventory inv;
	uint64_t w[FDT_MAX];

	use_tree("fdinv");
	want_4242(w);
	ASSERT_EQ(fdinv_scan(4242, &inv, NULL), 0, "scan with NULL opts");
	expect_counts(&inv, w, "4242");
	ASSERT_EQ(inv.pid, 4242, "pid");
	ASSERT_EQ(inv.tid, 4242, "tid");
	ASSERT_EQ(inv.total, 37, "total");
	ASSERT_EQ(inv.max_fd, 4095, "max fd");
	ASSERT_EQ(inv.tcp_state[CS_TCP_LISTEN], 2, "listen");
	ASSERT_EQ(inv.tcp_state[CS_TCP_ESTABLISHED], 3, "established (one dup'ed)");
	ASSERT_EQ(inv.tcp_state[CS_TCP_CLOSE_WAIT], 1, "close_wait");
	ASSERT_EQ(inv.tcp_state[0], 0, "unknown state");
	ASSERT_EQ(inv.sock_by_table, 10, "sockets found in tables");
	ASSERT_EQ(inv.sock_by_callback, 0, "no callback");
	ASSERT_EQ(inv.sock_by_xattr, 0, "xattr of a fake link fails");
	/* 1234699 is in none: every table was read. */
	ASSERT_EQ(inv.net_tables_read, 6, "tables read");
	ASSERT_EQ(inv.nr_fds, 0, "no records unless asked");
	ASSERT_TRUE(inv.fds == NULL, "no record array");
	fdinv_free(&inv);
}

TEST(fake_tree_records)
{
	struct fd_inventory inv;
	const struct fdinv_fd *r;
	struct stat st;

	use_tree("fdinv");
	scan_ok(4242, &inv, FDINV_FDINFO | FDINV_LINKS);
	ASSERT_EQ(inv.nr_fds, 37, "one record per fd");
	expect_sorted(&inv);
	ASSERT_EQ(inv.cloexec, 2, "O_CLOEXEC: fds 3 and 14");

	r = rec(&inv, 3);
	ASSERT_EQ(r->type, FDT_TCP, "3 type");
	ASSERT_EQ(r->tcp_state, CS_TCP_LISTEN, "3 state");
	ASSERT_EQ(r->ino, 1234661, "3 inode");
	ASSERT_TRUE(r->has_fdinfo, "3 fdinfo");
	ASSERT_EQ(r->flags, 02000002, "3 flags");
	ASSERT_TRUE(r->flags & O_CLOEXEC, "3 cloexec");
	ASSERT_STREQ(r->link, "socket:[1234661]", "3 link");

	r = rec(&inv, 7);
	ASSERT_EQ(r->tcp_state, CS_TCP_CLOSE_WAIT, "7 state (tcp6)");
	r = rec(&inv, 9);
	ASSERT_EQ(r->type, FDT_UDP, "9 udp6");
	ASSERT_EQ(r->tcp_state, 0, "9 no tcp state");
	r = rec(&inv, 13);
	ASSERT_EQ(r->type, FDT_OTHER_SOCKET, "13 socket:[]");
	ASSERT_EQ(r->ino, 0, "13 inode");

	r = rec(&inv, 14);
	ASSERT_EQ(r->type, FDT_EVENTFD, "14 type");
	ASSERT_EQ(r->flags, 02004002, "14 flags (eventfd has more lines)");
	r = rec(&inv, 15);
	ASSERT_EQ(r->has_fdinfo, 0, "15 garbled fdinfo");
	r = rec(&inv, 16);
	ASSERT_EQ(r->has_fdinfo, 0, "16 no fdinfo file");

	r = rec(&inv, 29);
	ASSERT_EQ(r->type, FDT_FILE, "29 type");
	ASSERT_EQ(r->pos, 1234, "29 pos");
	ASSERT_EQ(r->flags, 0100000, "29 flags");
	ASSERT_TRUE(!(r->flags & O_CLOEXEC), "29 not cloexec");
	ASSERT_EQ(stat("/etc/passwd", &st), 0, "stat /etc/passwd");
	ASSERT_EQ(r->ino, st.st_ino, "29 inode from the stat");

	r = rec(&inv, 1);
	ASSERT_EQ(r->type, FDT_PIPE, "1 type");
	ASSERT_EQ(r->ino, 5555, "1 pipe inode");
	ASSERT_EQ(rec(&inv, 28)->type, FDT_DIR, "28 dir");
	ASSERT_EQ(rec(&inv, 0)->type, FDT_CHR, "0 chr");
	ASSERT_EQ(rec(&inv, 21)->type, FDT_MEMFD, "21 memfd");
	ASSERT_STREQ(rec(&inv, 21)->link, "/memfd:shm-ring (deleted)", "21 link");
	ASSERT_EQ(rec(&inv, 4095)->type, FDT_EVENTFD, "4095");
	fdinv_free(&inv);
	ASSERT_EQ(inv.nr_fds, 0, "freed");
	fdinv_free(&inv);	/* twice is harmless */
}

TEST(fake_tree_no_probe)
{
	struct fd_inventory inv;
	uint64_t w[FDT_MAX];

	use_tree("fdinv");
	want_4242(w);
	/* Paths by their text: "/" and the /dev/shm file are files, the rest of /dev
	 * character devices. */
	w[FDT_DIR] = 0;
	w[FDT_FILE] = 4;
	scan_ok(4242, &inv, FDINV_NO_PROBE | FDINV_RECORDS);
	expect_counts(&inv, w, "no probe");
	ASSERT_EQ(rec(&inv, 35)->type, FDT_FILE, "/dev/shm is not a device");
	ASSERT_EQ(rec(&inv, 31)->type, FDT_CHR, "/dev/x guessed chr");
	ASSERT_EQ(rec(&inv, 29)->ino, 0, "no stat, no inode");
	fdinv_free(&inv);
}

TEST(fake_tree_no_tables)
{
	struct fd_inventory inv;
	uint64_t w[FDT_MAX];

	use_tree("fdinv");
	want_4242(w);
	w[FDT_OTHER_SOCKET] = 12;
	w[FDT_TCP] = w[FDT_UDP] = w[FDT_UNIX] = w[FDT_NETLINK] = 0;
	scan_ok(4242, &inv, FDINV_NO_NET_TABLES);
	expect_counts(&inv, w, "no tables");
	ASSERT_EQ(inv.net_tables_read, 0, "tables read");
	fdinv_free(&inv);
}

struct cb_ctx {
	int calls;
	int dup_calls;
	uint32_t seen[64];
};

/* Knows two sockets, one of them better than the tables; a bogus answer
 * for a third; nothing for the rest. */
static int fake_kind(uint32_t ino, void *ctx)
{
	struct cb_ctx *c = ctx;

	for (int i = 0; i < c->calls && i < 64; i++)
		if (c->seen[i] == ino)
			c->dup_calls++;
	if (c->calls < 64)
		c->seen[c->calls] = ino;
	c->calls++;
	switch (ino) {
	case 1234662:
		return FDINV_SOCK(FDT_TCP, CS_TCP_FIN_WAIT1);
	case 1234699:
		return FDINV_SOCK(FDT_TCP, CS_TCP_SYN_SENT);
	case 1234667:
		return FDINV_SOCK(FDT_FILE, 0);	/* not a socket type: ignored */
	default:
		return -1;
	}
}

TEST(fake_tree_callback)
{
	struct cb_ctx c = { 0 };
	struct fdinv_opts o = { .flags = FDINV_RECORDS, .sock_kind = fake_kind,
				.sock_ctx = &c };
	struct fd_inventory inv;
	uint64_t w[FDT_MAX];

	use_tree("fdinv");
	want_4242(w);
	w[FDT_TCP] = 7;
	w[FDT_OTHER_SOCKET] = 1;
	ASSERT_EQ(fdinv_scan(4242, &inv, &o), 0, "scan");
	expect_counts(&inv, w, "callback");
	ASSERT_EQ(c.calls, 10, "once per distinct inode (not for socket:[])");
	ASSERT_EQ(c.dup_calls, 0, "no inode asked twice");
	ASSERT_EQ(inv.sock_by_callback, 2, "by callback");
	ASSERT_EQ(inv.sock_by_table, 9, "by table");
	ASSERT_EQ(inv.tcp_state[CS_TCP_FIN_WAIT1], 1, "callback beats the table");
	ASSERT_EQ(inv.tcp_state[CS_TCP_SYN_SENT], 1, "callback-only socket");
	ASSERT_EQ(inv.tcp_state[CS_TCP_ESTABLISHED], 2, "established");
	ASSERT_EQ(inv.tcp_state[CS_TCP_LISTEN], 2, "listen");
	ASSERT_EQ(rec(&inv, 4)->tcp_state, CS_TCP_FIN_WAIT1, "record of fd 4");
	ASSERT_EQ(rec(&inv, 8)->type, FDT_UDP, "bogus callback answer ignored");
	fdinv_free(&inv);
}

static int know_4245(uint32_t ino, void *ctx)
{
	return ino == 1234661 ? FDINV_SOCK(FDT_TCP, CS_TCP_LISTEN) : -1;
}

TEST(fake_tables_read_only_as_needed)
{
	struct fdinv_opts o = { .sock_kind = know_4245 };
	struct fd_inventory inv;

	use_tree("fdinv");
	/* 4245 holds one socket, the first row of net/tcp. */
	scan_ok(4245, &inv, 0);
	ASSERT_EQ(inv.by_type[FDT_TCP], 1, "tcp");
	ASSERT_EQ(inv.net_tables_read, 1, "stopped after net/tcp");
	fdinv_free(&inv);
	ASSERT_EQ(fdinv_scan(4245, &inv, &o), 0, "scan with callback");
	ASSERT_EQ(inv.tcp_state[CS_TCP_LISTEN], 1, "listen");
	ASSERT_EQ(inv.net_tables_read, 0, "callback knew all: no table read");
	fdinv_free(&inv);
}

TEST(fake_zombie_leader)
{
	struct fd_inventory inv;

	use_tree("fdinv");
	/* Leader 4300 is a zombie with an empty fd dir; thread 4301 lives. */
	scan_ok(4300, &inv, FDINV_RECORDS);
	ASSERT_EQ(inv.pid, 4300, "pid");
	ASSERT_EQ(inv.tid, 4301, "read through the live thread");
	ASSERT_EQ(inv.total, 2, "total");
	ASSERT_EQ(inv.by_type[FDT_PIPE], 1, "pipe");
	ASSERT_EQ(inv.tcp_state[CS_TCP_ESTABLISHED], 1, "tcp from the thread's net/tcp");
	ASSERT_EQ(inv.nr_fds, 2, "records of the thread's scan only");
	fdinv_free(&inv);
}

TEST(fake_gone)
{
	struct fd_inventory inv;

	use_tree("fdinv");
	/* A zombie with no live thread; fds but no stat (exited meanwhile);
	 * no such pid. */
	ASSERT_EQ(fdinv_scan(4400, &inv, NULL), -ENOENT, "zombie");
	ASSERT_EQ(inv.total, 0, "nothing kept");
	ASSERT_EQ(fdinv_scan(4401, &inv, NULL), -ENOENT, "exited mid-scan");
	ASSERT_EQ(inv.total, 0, "partial result dropped");
	ASSERT_TRUE(inv.fds == NULL, "no records left");
	ASSERT_EQ(fdinv_scan(999999, &inv, NULL), -ENOENT, "no such pid");
	ASSERT_EQ(fdinv_scan(0, &inv, NULL), -EINVAL, "pid 0");
	ASSERT_EQ(fdinv_scan(-5, &inv, NULL), -EINVAL, "negative pid");
}

TEST(fake_limits)
{
	struct fd_limits l;

	use_tree("fdinv");
	ASSERT_EQ(fdinv_limits(4242, &l), 0, "4242");
	ASSERT_EQ(l.soft, 1024, "soft");
	ASSERT_EQ(l.hard, 20000, "hard");
	ASSERT_EQ(l.sys_open, 1184, "file-nr allocated");
	ASSERT_TRUE(l.sys_max == 9223372036854775807ull, "file-max");
	ASSERT_EQ(fdinv_limits(4243, &l), 0, "4243");
	ASSERT_TRUE(l.soft == UINT64_MAX, "soft unlimited");
	ASSERT_TRUE(l.hard == UINT64_MAX, "hard unlimited");
	ASSERT_EQ(fdinv_limits(4244, &l), -EPROTO, "no Max open files line");
	ASSERT_EQ(fdinv_limits(4246, &l), -ENOENT, "empty limits: reaped");
	ASSERT_EQ(fdinv_limits(999999, &l), -ENOENT, "no such pid");
	ASSERT_EQ(fdinv_limits(0, &l), 0, "system only");
	ASSERT_EQ(l.soft, 0, "no process fields");
	ASSERT_EQ(l.sys_open, 1184, "system fields");

	use_tree("fdinv/nosys");
	ASSERT_EQ(fdinv_limits(77, &l), 0, "without sys/fs");
	ASSERT_EQ(l.soft, 1024, "soft");
	ASSERT_EQ(l.sys_open, 0, "sys_open unknown");
	ASSERT_EQ(l.sys_max, 0, "sys_max unknown");
}

UNIT_MAIN()
