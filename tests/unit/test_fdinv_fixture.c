/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* fdinv.c against an fdfix process (FIXTURES set) as `ls -l /proc/PID/fd`
 * and lsof see it. Nothing here needs root. */
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
