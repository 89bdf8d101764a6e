/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* fdinv.c against the test's own fds in the real /proc: sockets known from
 * sock_diag, the rarer fd kinds, fdinfo, gone and zombie processes, limits.
 * Nothing here needs root. */
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

UNIT_MAIN()
