/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* fdinv.c against a recorded proc tree (tests/data/fdinv: symlinks in every
 * readlink form, recorded /proc/net tables, limits), against the test's own
 * fds in the real /proc, and, with FIXTURES set, against an fdfix process
 * as `ls -l /proc/PID/fd` and lsof see it. Nothing here needs root. */
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

static void scan_ok(pid_t pid, struct fd_inventory *inv, unsigned int flags)
{
	struct fdinv_opts o = { .flags = flags };

	ASSERT_EQ(fdinv_scan(pid, inv, &o), 0, "fdinv_scan");
}

static void expect_counts(const struct fd_inventory *inv, const uint64_t *want,
			  const char *what)
{
	char label[128];

	for (int t = 0; t < FDT_MAX; t++) {
		snprintf(label, sizeof(label), "%s: %s", what, fdinv_type_name(t));
		ASSERT_EQ(inv->by_type[t], want[t], label);
	}
}

/* b - a per type must be want. */
static void expect_delta(const struct fd_inventory *a, const struct fd_inventory *b,
			 const uint64_t *want, const char *what)
{
	char label[128];

	for (int t = 0; t < FDT_MAX; t++) {
		snprintf(label, sizeof(label), "%s: %s delta", what, fdinv_type_name(t));
		ASSERT_EQ((long long)(b->by_type[t] - a->by_type[t]), want[t], label);
	}
}

static const struct fdinv_fd *rec(const struct fd_inventory *inv, int fd)
{
	for (size_t i = 0; i < inv->nr_fds; i++)
		if (inv->fds[i].fd == fd)
			return &inv->fds[i];
	unit_leave(UNIT_FAIL, "no record for fd %d", fd);
}

static void expect_sorted(const struct fd_inventory *inv)
{
	for (size_t i = 1; i < inv->nr_fds; i++)
		ASSERT_TRUE(inv->fds[i - 1].fd < inv->fds[i].fd, "records in fd order");
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

/* ---- the real /proc ------------------------------------------------------ */

static int make_tmpfile(void)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/fdinv-test.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	ASSERT_TRUE(fd >= 0, "mkstemp");
	unlink(path);
	return fd;
}

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

TEST(real_self_delta)
{
	struct fd_inventory a, b;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint64_t w[FDT_MAX] = { 0 };
	int fds[16], n = 0, p[2], sv[2];
	sigset_t mask;

	procfs_root = "/proc";
	scan_ok(getpid(), &a, 0);

	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0, "pipe 1");
	fds[n++] = p[0], fds[n++] = p[1];
	ASSERT_EQ(pipe2(p, O_CLOEXEC), 0, "pipe 2");
	fds[n++] = p[0], fds[n++] = p[1];
	fds[n++] = eventfd(0, EFD_CLOEXEC);
	fds[n++] = epoll_create1(EPOLL_CLOEXEC);
	fds[n++] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	fds[n++] = signalfd(-1, &mask, SFD_CLOEXEC);
	fds[n++] = inotify_init1(IN_CLOEXEC);
	fds[n++] = memfd_create("fdinv-test", MFD_CLOEXEC);
	fds[n++] = make_tmpfile();
	fds[n++] = tcp_listener(&sa);
	fds[n] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sa.sin_port = 0;
	ASSERT_EQ(bind(fds[n++], (struct sockaddr *)&sa, sizeof(sa)), 0, "udp bind");
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0, "socketpair");
	fds[n++] = sv[0], fds[n++] = sv[1];
	for (int i = 0; i < n; i++)
		ASSERT_TRUE(fds[i] >= 0, "opened");

	scan_ok(getpid(), &b, 0);
	w[FDT_PIPE] = 4;
	w[FDT_EVENTFD] = w[FDT_EPOLL] = w[FDT_TIMERFD] = w[FDT_SIGNALFD] = 1;
	w[FDT_INOTIFY] = w[FDT_MEMFD] = w[FDT_FILE] = 1;
	w[FDT_TCP] = w[FDT_UDP] = 1;
	w[FDT_UNIX] = 2;
	expect_delta(&a, &b, w, "self");
	ASSERT_EQ(b.total - a.total, 15, "total delta");
	ASSERT_EQ(b.tcp_state[CS_TCP_LISTEN] - a.tcp_state[CS_TCP_LISTEN], 1, "listen delta");
	ASSERT_TRUE(b.max_fd >= fds[n - 1], "max fd");
	ASSERT_EQ(b.tid, getpid(), "tid");
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/* sock_diag dump -> inode -> TCP state, as a caller would hand it in. */
static int diag_collect(const struct sd_sock *s, void *ctx)
{
	uint8_t *v;

	if (!s->inode)
		return 0;
	v = hmap_upsert(ctx, &s->inode, NULL);
	if (!v)
		return -ENOMEM;
	*v = s->state;
	return 0;
}

static int diag_kind(uint32_t ino, void *ctx)
{
	uint8_t *v = hmap_get(ctx, &ino);

	return v ? FDINV_SOCK(FDT_TCP, *v) : -1;
}

TEST(real_sockdiag_callback)
{
	struct fdinv_opts o = { .sock_kind = diag_kind };
	struct fd_inventory a, b;
	struct sockaddr_in sa;
	struct hmap m;
	int l, c, s, err;

	procfs_root = "/proc";
	l = tcp_listener(&sa);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0, "connect");
	s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	ASSERT_TRUE(s >= 0, "accept");

	hmap_init(&m, sizeof(uint32_t), sizeof(uint8_t));
	err = sockdiag_dump_tcp(SD_ALL_STATES, diag_collect, &m);
	if (err) {
		hmap_free(&m);
		SKIP("no sock_diag here");
	}
	o.sock_ctx = &m;
	scan_ok(getpid(), &a, 0);
	ASSERT_EQ(fdinv_scan(getpid(), &b, &o), 0, "scan with callback");
	for (int t = 0; t < FDT_MAX; t++)
		ASSERT_EQ(b.by_type[t], a.by_type[t], fdinv_type_name(t));
	for (int st = 0; st < FDINV_TCP_STATES; st++)
		ASSERT_EQ(b.tcp_state[st], a.tcp_state[st], tcp_state_name(st));
	ASSERT_TRUE(a.tcp_state[CS_TCP_LISTEN] >= 1, "listener seen");
	ASSERT_TRUE(a.tcp_state[CS_TCP_ESTABLISHED] >= 2, "both ends seen");
	ASSERT_EQ(b.sock_by_callback, b.by_type[FDT_TCP], "all TCP by the callback");
	ASSERT_EQ(a.sock_by_callback, 0, "none without");
	hmap_free(&m);
	close(s);
	close(c);
	close(l);
}

TEST(real_sockets_in_no_table)
{
	struct fd_inventory a, b, a2, c;
	uint64_t w[FDT_MAX] = { 0 };
	int t, u, nl;

	procfs_root = "/proc";
	scan_ok(getpid(), &a, 0);
	/* Without a stat our own dir fds (/proc/PID, its fd/) pass for
	 * files: compare like with like. */
	scan_ok(getpid(), &a2, FDINV_NO_PROBE);
	/* Never bound or connected: in no /proc/net table; sockfs still
	 * names their protocol. */
	t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	ASSERT_TRUE(t >= 0 && u >= 0 && nl >= 0, "sockets");
	scan_ok(getpid(), &b, 0);
	w[FDT_TCP] = w[FDT_UDP] = w[FDT_NETLINK] = 1;
	expect_delta(&a, &b, w, "unhashed");
	ASSERT_EQ(b.tcp_state[CS_TCP_CLOSE] - a.tcp_state[CS_TCP_CLOSE], 1,
		  "unhashed TCP is TCP_CLOSE");
	ASSERT_EQ(b.sock_by_xattr - a.sock_by_xattr, 3, "found by getxattr");

	scan_ok(getpid(), &c, FDINV_NO_PROBE);
	memset(w, 0, sizeof(w));
	w[FDT_OTHER_SOCKET] = 3;
	expect_delta(&a2, &c, w, "unhashed, no probe");

	/* getxattr names the protocol; without the tables no state. */
	scan_ok(getpid(), &c, FDINV_NO_NET_TABLES);
	ASSERT_EQ(c.by_type[FDT_TCP] - a.by_type[FDT_TCP], 1, "tcp without tables");
	ASSERT_EQ(c.tcp_state[0] - a.tcp_state[0], 1, "state unknown without tables");
	ASSERT_EQ(c.net_tables_read, 0, "no table read");
	close(t);
	close(u);
	close(nl);
}

TEST(real_tcp6_state)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct fd_inventory a, b;
	int l;

	procfs_root = "/proc";
	l = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a6, sizeof(a6)) || listen(l, 1)) {
		if (l >= 0)
			close(l);
		SKIP("no IPv6 loopback");
	}
	close(l);
	scan_ok(getpid(), &a, 0);
	l = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(bind(l, (struct sockaddr *)&a6, sizeof(a6)), 0, "bind ::1");
	ASSERT_EQ(listen(l, 1), 0, "listen");
	scan_ok(getpid(), &b, FDINV_RECORDS);
	ASSERT_EQ(b.tcp_state[CS_TCP_LISTEN] - a.tcp_state[CS_TCP_LISTEN], 1,
		  "TCPv6 by getxattr, state from net/tcp6");
	ASSERT_EQ(rec(&b, l)->tcp_state, CS_TCP_LISTEN, "record");
	fdinv_free(&b);
	close(l);
}

/* Open fds of the rarer kinds where this kernel and our privileges allow;
 * what opened is what must be counted. */
TEST(real_extras)
{
	struct fd_inventory a, b;
	uint64_t w[FDT_MAX] = { 0 };
	char dir[PATH_MAX], fifo[PATH_MAX + 16], lnk[PATH_MAX + 16];
	const char *tmp = getenv("TMPDIR");
	int fds[16], n = 0, fd;
	struct dirent *de;
	DIR *dev;

	procfs_root = "/proc";
	snprintf(dir, sizeof(dir), "%s/fdinv-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ASSERT_TRUE(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(lnk, sizeof(lnk), "%s/lnk", dir);
	ASSERT_EQ(mkfifo(fifo, 0600), 0, "mkfifo");
	ASSERT_EQ(symlink("/nonexistent", lnk), 0, "symlink");

	scan_ok(getpid(), &a, 0);
	/* O_RDWR opens a FIFO without waiting for a peer. */
	fds[n++] = fd = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0, "open fifo");
	w[FDT_PIPE]++;
	fds[n++] = fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0, "open dir");
	w[FDT_DIR]++;
	fds[n++] = fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0, "open /dev/null");
	w[FDT_CHR]++;
	fds[n++] = fd = open(lnk, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0, "O_PATH symlink");
	w[FDT_OTHER]++;
	/* O_PATH opens no device, so any block device node will do. */
	dev = opendir("/dev");
	while (dev && (de = readdir(dev))) {
		struct stat st;

		if (fstatat(dirfd(dev), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISBLK(st.st_mode))
			continue;
		fd = openat(dirfd(dev), de->d_name, O_PATH | O_CLOEXEC);
		if (fd >= 0) {
			fds[n++] = fd;
			w[FDT_BLK]++;
			break;
		}
	}
	if (dev)
		closedir(dev);
	fd = syscall(SYS_pidfd_open, getpid(), 0);
	if (fd >= 0) {
		fds[n++] = fd;
		w[FDT_PIDFD]++;
	}
	/* Unprivileged since 5.13 with FAN_REPORT_FID (0x200). */
	fd = syscall(SYS_fanotify_init, 0x200, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		fds[n++] = fd;
		w[FDT_FANOTIFY]++;
	}
	{
		/* BPF_MAP_CREATE of a 1-entry array: root or CAP_BPF. */
		union {
			struct { uint32_t type, key, value, max, flags; } m;
			char pad[128];
		} attr = { .m = { 2, 4, 4, 1, 0 } };

		fd = syscall(SYS_bpf, 0, &attr, sizeof(attr));
		if (fd >= 0) {
			fcntl(fd, F_SETFD, FD_CLOEXEC);
			fds[n++] = fd;
			w[FDT_BPF]++;
		}
	}
	fprintf(stderr, "real_extras: blk %d pidfd %d fanotify %d bpf %d\n",
		(int)w[FDT_BLK], (int)w[FDT_PIDFD], (int)w[FDT_FANOTIFY], (int)w[FDT_BPF]);

	scan_ok(getpid(), &b, 0);
	expect_delta(&a, &b, w, "extras");
	for (int i = 0; i < n; i++)
		close(fds[i]);
	unlink(fifo);
	unlink(lnk);
	rmdir(dir);
}

TEST(real_fdinfo)
{
	struct fd_inventory inv;
	const struct fdinv_fd *r;
	int ce, nce, f;

	procfs_root = "/proc";
	ce = eventfd(0, EFD_CLOEXEC);
	nce = eventfd(0, EFD_NONBLOCK);
	f = make_tmpfile();
	ASSERT_EQ(write(f, "hello", 5), 5, "write");
	scan_ok(getpid(), &inv, FDINV_FDINFO | FDINV_LINKS);
	expect_sorted(&inv);
	ASSERT_EQ(inv.nr_fds, inv.total, "a record per fd");
	r = rec(&inv, ce);
	ASSERT_TRUE(r->has_fdinfo, "fdinfo read");
	ASSERT_TRUE(r->flags & O_CLOEXEC, "cloexec");
	ASSERT_STREQ(r->link, "anon_inode:[eventfd]", "link");
	r = rec(&inv, nce);
	ASSERT_TRUE(!(r->flags & O_CLOEXEC), "not cloexec");
	ASSERT_TRUE(r->flags & O_NONBLOCK, "nonblock");
	r = rec(&inv, f);
	ASSERT_EQ(r->pos, 5, "file position");
	ASSERT_EQ(r->type, FDT_FILE, "tmpfile");
	ASSERT_TRUE(strstr(r->link, "(deleted)") != NULL, "unlinked");
	ASSERT_TRUE(inv.cloexec >= 1 && inv.cloexec < inv.total, "cloexec count");
	fdinv_free(&inv);
	close(ce);
	close(nce);
	close(f);
}

/* Field 3 of /proc/PID/stat, or 0. */
static int state_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] && p[2] ? p[2] : 0;
}

static void wait_state(pid_t pid, int st)
{
	for (int i = 0; i < 500; i++) {
		if (state_of(pid) == st)
			return;
		usleep(10000);
	}
	unit_leave(UNIT_FAIL, "pid %d never reached state %c", (int)pid, st);
}

TEST(real_gone)
{
	struct fd_inventory inv;
	struct fd_limits l;
	pid_t child;
	int status;

	procfs_root = "/proc";
	child = fork();
	ASSERT_TRUE(child >= 0, "fork");
	if (child == 0)
		_exit(0);
	wait_state(child, 'Z');
	ASSERT_EQ(fdinv_scan(child, &inv, NULL), -ENOENT, "zombie");
	ASSERT_EQ(waitpid(child, &status, 0), child, "reap");
	ASSERT_EQ(fdinv_scan(child, &inv, NULL), -ENOENT, "reaped");
	ASSERT_EQ(fdinv_limits(child, &l), -ENOENT, "limits of the reaped");
}

static int zl_fd;

static void *zl_thread(void *arg)
{
	char c;

	/* Until the test closes its end. */
	while (read(zl_fd, &c, 1) > 0)
		;
	_exit(0);
}

TEST(real_zombie_leader)
{
	struct fd_inventory inv;
	pthread_t th;
	pid_t child;
	int ctl[2], status;

	procfs_root = "/proc";
	ASSERT_EQ(pipe2(ctl, O_CLOEXEC), 0, "pipe");
	child = fork();
	ASSERT_TRUE(child >= 0, "fork");
	if (child == 0) {
		close(ctl[1]);
		zl_fd = ctl[0];
		if (pthread_create(&th, NULL, zl_thread, NULL))
			_exit(3);
		pthread_exit(NULL);
	}
	close(ctl[0]);
	wait_state(child, 'Z');
	ASSERT_EQ(fdinv_scan(child, &inv, NULL), 0, "scan");
	ASSERT_EQ(inv.pid, child, "pid");
	ASSERT_TRUE(inv.tid != child && inv.tid > 0, "read through a thread");
	ASSERT_TRUE(inv.by_type[FDT_PIPE] >= 1, "the thread's pipe");
	close(ctl[1]);
	ASSERT_EQ(waitpid(child, &status, 0), child, "reap");
	/* Not its status: under valgrind --error-exitcode the thread stack
	 * it leaves behind by _exit() counts as a leak. */
	ASSERT_TRUE(WIFEXITED(status), "thread ended it");
}

TEST(real_denied)
{
	struct fd_inventory inv;
	struct stat st;
	pid_t child;
	int status;

	procfs_root = "/proc";
	if (geteuid() != 0) {
		if (stat("/proc/1", &st) || st.st_uid == geteuid())
			SKIP("pid 1 is ours, no foreign process to probe");
		ASSERT_EQ(fdinv_scan(1, &inv, NULL), -EACCES, "pid 1");
		return;
	}
	child = fork();
	ASSERT_TRUE(child >= 0, "fork");
	if (child == 0) {
		struct fd_limits l;
		int r;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		r = fdinv_scan(getppid(), &inv, NULL);
		if (r != -EACCES)
			_exit(1);
		/* limits is world-readable */
		_exit(fdinv_limits(getppid(), &l) == 0 && l.hard ? 0 : 4);
	}
	ASSERT_EQ(waitpid(child, &status, 0), child, "waitpid");
	ASSERT_TRUE(WIFEXITED(status), "child exited");
	ASSERT_EQ(WEXITSTATUS(status), 0, "child: -EACCES, limits readable (2: setuid failed)");
}

TEST(real_limits)
{
	struct fd_limits l;
	struct rlimit rl, set;
	unsigned long long fmax = 0;
	pid_t child;
	FILE *f;
	int status;

	procfs_root = "/proc";
	ASSERT_EQ(fdinv_limits(getpid(), &l), 0, "self");
	ASSERT_TRUE(l.soft > 0 && l.soft <= l.hard, "soft <= hard");
	f = fopen("/proc/sys/fs/file-max", "re");
	ASSERT_TRUE(f && fscanf(f, "%llu", &fmax) == 1, "file-max");
	fclose(f);
	ASSERT_TRUE(l.sys_max == fmax, "sys_max is fs.file-max");
	ASSERT_TRUE(l.sys_open > 0, "files allocated");

	/* Another process's limit, set from outside: also what valgrind
	 * (which hides part of our own) does not touch. */
	child = fork();
	ASSERT_TRUE(child >= 0, "fork");
	if (child == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(prlimit(child, RLIMIT_NOFILE, NULL, &rl), 0, "prlimit get");
	set = (struct rlimit){ .rlim_cur = rl.rlim_max > 777 ? 777 : rl.rlim_max,
			       .rlim_max = rl.rlim_max };
	ASSERT_EQ(prlimit(child, RLIMIT_NOFILE, &set, NULL), 0, "prlimit set");
	ASSERT_EQ(fdinv_limits(child, &l), 0, "child");
	ASSERT_EQ(l.soft, set.rlim_cur, "child soft");
	ASSERT_TRUE(l.hard == set.rlim_max, "child hard");
	kill(child, SIGKILL);
	ASSERT_EQ(waitpid(child, &status, 0), child, "reap");
}

/* ---- an fdfix process, seen by fdinv, ls and lsof -------------------------- */

struct fixture {
	pid_t pid;
	int in;			/* its stdin: closing it ends it */
};

/* NULL: FIXTURES not set, the test skips. */
static const char *fixture_bin(void)
{
	static char path[PATH_MAX];
	const char *dir = getenv("FIXTURES");

	if (!dir || !*dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/fdfix", dir);
	return path;
}

static void fixture_start(struct fixture *fx, char *const argv[])
{
	int in[2], out[2], got;
	char line[64] = "";
	FILE *f;

	ASSERT_TRUE(access(argv[0], X_OK) == 0, "fdfix built (make .output/fixtures/fdfix)");
	ASSERT_EQ(pipe2(in, O_CLOEXEC), 0, "pipe");
	ASSERT_EQ(pipe2(out, O_CLOEXEC), 0, "pipe");
	fx->pid = fork();
	ASSERT_TRUE(fx->pid >= 0, "fork");
	if (fx->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fx->in = in[1];
	f = fdopen(out[0], "r");
	ASSERT_TRUE(f != NULL, "fdopen");
	if (!fgets(line, sizeof(line), f)) {
		int status;

		fclose(f);
		close(fx->in);
		waitpid(fx->pid, &status, 0);
		unit_leave(UNIT_FAIL, "fdfix ended before ready (status %d)", status);
	}
	fclose(f);
	ASSERT_EQ(sscanf(line, "ready %d", &got), 1, "ready line");
	ASSERT_EQ(got, fx->pid, "ready PID is the child");
}

static void fixture_stop(struct fixture *fx)
{
	int status;

	close(fx->in);
	ASSERT_EQ(waitpid(fx->pid, &status, 0), fx->pid, "reap fdfix");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fdfix exit 0");
}

/* The mix: TCP 301 (1 listener, 150 pairs), UDP 20, unix 40 pairs, 600
 * pipes, 100 eventfds, 30 epolls, 200 file fds: 1931 fds past 0-2, so the
 * fd directory takes several getdents calls. */
#define FX_TCP 301
#define FX_UDP 20
#define FX_UNIXPAIRS 40
#define FX_PIPES 600
#define FX_EVENTFDS 100
#define FX_EPOLLS 30
#define FX_FILES 200
#define FX_STR_(x) #x
#define FX_STR(x) FX_STR_(x)

static void fixture_run(struct fixture *fx)
{
	char *argv[] = { (char *)fixture_bin(), "-s", FX_STR(FX_TCP),
			 "-u", FX_STR(FX_UDP), "-x", FX_STR(FX_UNIXPAIRS),
			 "-p", FX_STR(FX_PIPES), "-e", FX_STR(FX_EVENTFDS),
			 "-E", FX_STR(FX_EPOLLS), "-f", FX_STR(FX_FILES), NULL };

	if (!argv[0])
		SKIP("FIXTURES not set");
	fixture_start(fx, argv);
}

TEST(fixture_exact)
{
	struct fixture fx;
	struct fd_inventory inv;
	uint64_t w[FDT_MAX] = { 0 };

	procfs_root = "/proc";
	fixture_run(&fx);
	scan_ok(fx.pid, &inv, FDINV_RECORDS);
	/* fds 0 and 1 are our pipes; 2 is our stderr, whatever it is. */
	ASSERT_EQ(rec(&inv, 0)->type, FDT_PIPE, "stdin");
	ASSERT_EQ(rec(&inv, 1)->type, FDT_PIPE, "stdout");
	w[FDT_PIPE] = 2;
	w[rec(&inv, 2)->type]++;
	w[FDT_TCP] += FX_TCP;
	w[FDT_UDP] += FX_UDP;
	w[FDT_UNIX] += 2 * FX_UNIXPAIRS;
	w[FDT_PIPE] += 2 * FX_PIPES;
	w[FDT_EVENTFD] += FX_EVENTFDS;
	w[FDT_EPOLL] += FX_EPOLLS;
	w[FDT_FILE] += FX_FILES;
	expect_counts(&inv, w, "fdfix");
	ASSERT_EQ(inv.total, 3 + FX_TCP + FX_UDP + 2 * FX_UNIXPAIRS + 2 * FX_PIPES +
		  FX_EVENTFDS + FX_EPOLLS + FX_FILES, "total");
	/* fds are handed out lowest first: 0..total-1 */
	ASSERT_EQ(inv.max_fd, (long long)inv.total - 1, "max fd");
	ASSERT_EQ(inv.tcp_state[CS_TCP_LISTEN], 1, "listener");
	ASSERT_EQ(inv.tcp_state[CS_TCP_ESTABLISHED], FX_TCP - 1, "established");
	ASSERT_EQ(inv.sock_by_xattr, FX_TCP + FX_UDP + 2 * FX_UNIXPAIRS, "all by getxattr");
	ASSERT_EQ(inv.sock_by_table, FX_TCP, "TCP states from net/tcp");
	ASSERT_EQ(inv.net_tables_read, 1, "net/tcp only");
	{
		struct fdinv_opts o = { .sock_kind = diag_kind };
		struct fd_inventory d;
		struct hmap m;

		/* With a sock_diag dump, no table at all. */
		hmap_init(&m, sizeof(uint32_t), sizeof(uint8_t));
		ASSERT_EQ(sockdiag_dump_tcp(SD_ALL_STATES, diag_collect, &m), 0, "sock_diag");
		o.sock_ctx = &m;
		ASSERT_EQ(fdinv_scan(fx.pid, &d, &o), 0, "scan with callback");
		for (int t = 0; t < FDT_MAX; t++)
			ASSERT_EQ(d.by_type[t], inv.by_type[t], fdinv_type_name(t));
		ASSERT_EQ(d.tcp_state[CS_TCP_ESTABLISHED], FX_TCP - 1, "established");
		ASSERT_EQ(d.sock_by_callback, FX_TCP, "TCP by the callback");
		ASSERT_EQ(d.net_tables_read, 0, "no table read");
		hmap_free(&m);
	}
	fdinv_free(&inv);
	fixture_stop(&fx);
}

/* What `ls -l /proc/PID/fd` shows after " -> ", counted by its text. */
struct ls_counts {
	long total, socket, pipe, eventfd, epoll, path;
};

static void ls_count(pid_t pid, struct ls_counts *c)
{
	char cmd[64], line[PATH_MAX + 128];
	FILE *p;

	memset(c, 0, sizeof(*c));
	snprintf(cmd, sizeof(cmd), "LC_ALL=C ls -l /proc/%d/fd", (int)pid);
	p = popen(cmd, "r");
	ASSERT_TRUE(p != NULL, "popen ls");
	while (fgets(line, sizeof(line), p)) {
		char *t = strstr(line, " -> ");

		if (!t)
			continue;	/* "total 0" */
		t += 4;
		t[strcspn(t, "\n")] = '\0';
		c->total++;
		if (!strncmp(t, "socket:[", 8))
			c->socket++;
		else if (!strncmp(t, "pipe:[", 6))
			c->pipe++;
		else if (!strcmp(t, "anon_inode:[eventfd]"))
			c->eventfd++;
		else if (!strcmp(t, "anon_inode:[eventpoll]"))
			c->epoll++;
		else if (t[0] == '/')
			c->path++;
	}
	ASSERT_EQ(pclose(p), 0, "ls exit status");
}

TEST(fixture_vs_ls)
{
	struct fixture fx;
	struct fd_inventory inv;
	struct ls_counts c;
	uint64_t *t = inv.by_type;

	procfs_root = "/proc";
	fixture_run(&fx);
	scan_ok(fx.pid, &inv, 0);
	ls_count(fx.pid, &c);
	ASSERT_EQ(c.total, inv.total, "total");
	ASSERT_EQ(c.socket, t[FDT_TCP] + t[FDT_UDP] + t[FDT_UNIX] + t[FDT_NETLINK] +
		  t[FDT_OTHER_SOCKET], "sockets");
	ASSERT_EQ(c.pipe, t[FDT_PIPE], "pipes (fdfix has no FIFO by path)");
	ASSERT_EQ(c.eventfd, t[FDT_EVENTFD], "eventfd");
	ASSERT_EQ(c.epoll, t[FDT_EPOLL], "epoll");
	ASSERT_EQ(c.path, t[FDT_FILE] + t[FDT_DIR] + t[FDT_CHR] + t[FDT_BLK] +
		  t[FDT_MEMFD], "paths");
	fixture_stop(&fx);
}

static bool have_lsof(void)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path || !*path)
		path = "/usr/bin:/bin:/usr/sbin:/sbin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/lsof", (int)n, path);
		if (access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

struct lsof_counts {
	long total, tcp, udp, unix_, pipe, eventfd, epoll, reg, listen, established;
};

/* How lsof 4.95 names them (-F: f fd, t TYPE column, P protocol, n NAME
 * column, T TCP info such as TST=LISTEN):
 *   TCP      t IPv4|IPv6, P TCP, n 127.0.0.1:P or A:P->B:Q, T TST=<STATE>;
 *            a TCP socket in no table: t sock, n "protocol: TCP"
 *   UDP      t IPv4|IPv6, P UDP; in no table: t sock, n "protocol: UDP"
 *   unix     t unix, n "type=STREAM" (or the bound path)
 *   pipe     t FIFO, n "pipe" (a FIFO opened by path: t FIFO, n the path)
 *   eventfd  t a_inode, n "[eventfd:ID]" (ID from fdinfo eventfd-id)
 *   epoll    t a_inode, n "[eventpoll]" or "[eventpoll:FD,FD...]" (watched)
 *   file     t REG, n the path, " (deleted)" appended; memfd is REG too
 *   (others: netlink t sock n "protocol: NETLINK", dir DIR, chr CHR,
 *   timerfd/signalfd/inotify/fanotify/pidfd a_inode "[timerfd]" ...) */
static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void lsof_count(pid_t pid, struct lsof_counts *c)
{
	char cmd[128], line[PATH_MAX + 128], type[32] = "", proto[16] = "",
	     name[256] = "";
	bool in_fd = false;
	FILE *p;

	memset(c, 0, sizeof(*c));
	snprintf(cmd, sizeof(cmd),
		 "lsof -n -P -l -w -p %d -a -d 0-999999 -F ftnPT", (int)pid);
	p = popen(cmd, "r");
	ASSERT_TRUE(p != NULL, "popen lsof");
	for (bool more = true; more; ) {
		more = fgets(line, sizeof(line), p) != NULL;
		line[strcspn(line, "\n")] = '\0';
		if (in_fd && (!more || line[0] == 'f')) {
			bool inet = !strcmp(type, "IPv4") || !strcmp(type, "IPv6");

			c->total++;
			if ((inet && !strcmp(proto, "TCP")) ||
			    (!strcmp(type, "sock") && !strcmp(name, "protocol: TCP")))
				c->tcp++;
			else if ((inet && !strcmp(proto, "UDP")) ||
				 (!strcmp(type, "sock") && !strcmp(name, "protocol: UDP")))
				c->udp++;
			else if (!strcmp(type, "unix"))
				c->unix_++;
			else if (!strcmp(type, "FIFO") && !strcmp(name, "pipe"))
				c->pipe++;
			else if (!strcmp(type, "a_inode") && !strncmp(name, "[eventfd", 8))
				c->eventfd++;
			else if (!strcmp(type, "a_inode") && !strncmp(name, "[eventpoll", 10))
				c->epoll++;
			else if (!strcmp(type, "REG"))
				c->reg++;
			in_fd = false;
		}
		if (!more)
			break;
		switch (line[0]) {
		case 'f':
			in_fd = true;
			type[0] = proto[0] = name[0] = '\0';
			break;
		case 't':
			copy_cut(type, sizeof(type), line + 1);
			break;
		case 'P':
			copy_cut(proto, sizeof(proto), line + 1);
			break;
		case 'n':
			copy_cut(name, sizeof(name), line + 1);
			break;
		case 'T':
			if (!strcmp(line, "TST=LISTEN"))
				c->listen++;
			else if (!strcmp(line, "TST=ESTABLISHED"))
				c->established++;
			break;
		}
	}
	/* lsof exits 1 when it had anything to complain about, even with -w. */
	pclose(p);
}

TEST(fixture_vs_lsof)
{
	struct fixture fx;
	struct fd_inventory inv;
	struct lsof_counts c;
	uint64_t *t = inv.by_type;

	procfs_root = "/proc";
	if (!fixture_bin())
		SKIP("FIXTURES not set");
	if (!have_lsof())
		SKIP("lsof not installed (Debian package lsof)");
	fixture_run(&fx);
	scan_ok(fx.pid, &inv, 0);
	lsof_count(fx.pid, &c);
	ASSERT_EQ(c.total, inv.total, "total");
	ASSERT_EQ(c.tcp, t[FDT_TCP], "tcp");
	ASSERT_EQ(c.listen, inv.tcp_state[CS_TCP_LISTEN], "listen");
	ASSERT_EQ(c.established, inv.tcp_state[CS_TCP_ESTABLISHED], "established");
	ASSERT_EQ(c.udp, t[FDT_UDP], "udp");
	ASSERT_EQ(c.unix_, t[FDT_UNIX], "unix");
	ASSERT_EQ(c.pipe, t[FDT_PIPE], "pipes");
	ASSERT_EQ(c.eventfd, t[FDT_EVENTFD], "eventfd");
	ASSERT_EQ(c.epoll, t[FDT_EPOLL], "epoll");
	ASSERT_EQ(c.reg, t[FDT_FILE] + t[FDT_MEMFD], "regular files");
	fixture_stop(&fx);
}

UNIT_MAIN()
