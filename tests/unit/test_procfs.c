/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* procfs.c against recorded files in tests/data/procfs (a fake /proc), and
 * procfs.c + sockdiag.c against the real /proc and kernel with sockets the
 * test makes itself. Nothing here needs root. */
#define _GNU_SOURCE		/* setresuid */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "procfs.h"
#include "netlimits.h"
#include "sockdiag.h"

#define TCP_ESTABLISHED_ 1
#define TCP_TIME_WAIT_ 6
#define TCP_LISTEN_ 10

static const char *data_dir(void)
{
	return unit_data_dir("procfs/net/sockstat");
}

/* Point procfs_root at tests/data/<sub>. */
static void use_tree(const char *sub)
{
	static char root[PATH_MAX + 64];

	snprintf(root, sizeof(root), "%s/%s", data_dir(), sub);
	procfs_root = root;
}

/* ---- recorded files -------------------------------------------------- */

TEST(sockstat_recorded)
{
	struct sockstat st;

	use_tree("procfs");
	ASSERT_EQ(procfs_read_sockstat(&st), 0, "read");
	ASSERT_EQ(st.sockets_used, 44, "sockets used");
	ASSERT_EQ(st.tcp_inuse, 28, "TCP inuse");
	ASSERT_EQ(st.tcp_orphan, 0, "TCP orphan");
	ASSERT_EQ(st.tcp_tw, 1236, "TCP tw");
	ASSERT_EQ(st.tcp_alloc, 36, "TCP alloc");
	ASSERT_EQ(st.tcp_mem, 333, "TCP mem");
	ASSERT_EQ(st.udp_inuse, 1, "UDP inuse");
	ASSERT_EQ(st.udplite_inuse, 0, "UDPLITE inuse");
	ASSERT_EQ(st.raw_inuse, 1, "RAW inuse");
	ASSERT_EQ(st.frag_inuse, 0, "FRAG inuse");
	ASSERT_EQ(st.tcp6_inuse, 7, "TCP6 inuse");
	ASSERT_EQ(st.udp6_inuse, 2, "UDP6 inuse");
	ASSERT_EQ(st.udplite6_inuse, 0, "UDPLITE6 inuse");
	ASSERT_EQ(st.raw6_inuse, 1, "RAW6 inuse");
	ASSERT_EQ(st.frag6_inuse, 0, "FRAG6 inuse");
	ASSERT_EQ(st.curr_estab, 32, "Tcp CurrEstab");
}

TEST(sockstat_without_sockstat6)
{
	struct sockstat st;

	/* A kernel booted with ipv6.disable=1 has no net/sockstat6. */
	use_tree("procfs/nov6");
	memset(&st, 0xff, sizeof(st));
	ASSERT_EQ(procfs_read_sockstat(&st), 0, "read");
	ASSERT_EQ(st.sockets_used, 11, "sockets used");
	ASSERT_EQ(st.tcp_inuse, 1, "TCP inuse");
	ASSERT_EQ(st.tcp_alloc, 1, "TCP alloc");
	ASSERT_EQ(st.tcp_mem, 333, "TCP mem");
	ASSERT_EQ(st.tcp6_inuse, 0, "TCP6 inuse");
	ASSERT_EQ(st.udp6_inuse, 0, "UDP6 inuse");
	ASSERT_EQ(st.udplite6_inuse, 0, "UDPLITE6 inuse");
	ASSERT_EQ(st.raw6_inuse, 0, "RAW6 inuse");
	ASSERT_EQ(st.frag6_inuse, 0, "FRAG6 inuse");
	ASSERT_EQ(st.curr_estab, 0, "Tcp CurrEstab");
}

TEST(sockstat_missing)
{
	struct sockstat st;

	procfs_root = "/nonexistent/connscope-test";
	ASSERT_EQ(procfs_read_sockstat(&st), -ENOENT, "no sockstat");
}

/* Synthetic files in a temporary tree; removed again by tmp_tree_rm. */
static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	ASSERT_TRUE(f != NULL, path);
	fputs(text, f);
	ASSERT_EQ(fclose(f), 0, path);
}

static void tmp_tree_rm(const char *dir)
{
	const char *files[] = { "net/sockstat", "net/sockstat6", "net/snmp" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/net", dir);
	rmdir(path);
	rmdir(dir);
}

TEST(sockstat_by_key_name)
{
	char dir[] = "/tmp/connscope-procfs.XXXXXX", net[64];
	struct sockstat st;
	int err;

	ASSERT_TRUE(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(net, sizeof(net), "%s/net", dir);
	ASSERT_EQ(mkdir(net, 0755), 0, "mkdir net");
	/* Every value distinct, keys reordered, unknown keys and sections
	 * mixed in, a negative (per-cpu sum) value, a key without value. */
	write_file(dir, "net/sockstat",
		   "sockets: used 10\n"
		   "TCP: mem 15 inuse 11 newkey 99 orphan -1 alloc 14 tw 13\n"
		   "UDP: inuse 16 mem 17\n"
		   "MPTCP: inuse 98\n"
		   "UDPLITE: inuse 18\n"
		   "RAW: inuse 19\n"
		   "FRAG: memory 21 inuse 20\n"
		   "BROKEN: inuse\n");
	write_file(dir, "net/sockstat6",
		   "TCP6: inuse 22\nUDP6: inuse 23\nUDPLITE6: inuse 24\n"
		   "RAW6: inuse 25\nFRAG6: inuse 26 memory 27\n");
	write_file(dir, "net/snmp",
		   "Ip: Forwarding CurrEstab\nIp: 1 97\n"
		   "Tcp: RtoAlgorithm MaxConn NewColumn CurrEstab InSegs\n"
		   "Tcp: 1 -1 96 28 680\n"
		   "Udp: InDatagrams CurrEstab\nUdp: 5 95\n");
	procfs_root = dir;
	err = procfs_read_sockstat(&st);
	tmp_tree_rm(dir);
	ASSERT_EQ(err, 0, "read");
	ASSERT_EQ(st.sockets_used, 10, "sockets used");
	ASSERT_EQ(st.tcp_inuse, 11, "TCP inuse");
	ASSERT_EQ(st.tcp_orphan, 0, "TCP orphan (negative reads as 0)");
	ASSERT_EQ(st.tcp_tw, 13, "TCP tw");
	ASSERT_EQ(st.tcp_alloc, 14, "TCP alloc");
	ASSERT_EQ(st.tcp_mem, 15, "TCP mem");
	ASSERT_EQ(st.udp_inuse, 16, "UDP inuse");
	ASSERT_EQ(st.udplite_inuse, 18, "UDPLITE inuse");
	ASSERT_EQ(st.raw_inuse, 19, "RAW inuse");
	ASSERT_EQ(st.frag_inuse, 20, "FRAG inuse");
	ASSERT_EQ(st.tcp6_inuse, 22, "TCP6 inuse");
	ASSERT_EQ(st.udp6_inuse, 23, "UDP6 inuse");
	ASSERT_EQ(st.udplite6_inuse, 24, "UDPLITE6 inuse");
	ASSERT_EQ(st.raw6_inuse, 25, "RAW6 inuse");
	ASSERT_EQ(st.frag6_inuse, 26, "FRAG6 inuse");
	ASSERT_EQ(st.curr_estab, 28, "Tcp CurrEstab by column name");
}

TEST(ident_tricky_comm)
{
	struct proc_ident id;

	use_tree("procfs");
	memset(&id, 0xff, sizeof(id));
	ASSERT_EQ(procfs_read_ident(4242, &id), 0, "read 4242");
	ASSERT_EQ(id.pid, 4242, "pid");
	/* comm "x) S (1 2) z": a ')' and a fake state inside the name. */
	ASSERT_STREQ(id.comm, "x) S (1 2) z", "comm up to the last ')'");
	ASSERT_EQ(id.start_ticks, 123456789, "field 22 starttime");
}

TEST(ident_long_comm_truncated)
{
	struct proc_ident id;

	/* Kernel workers show more than TASK_COMM_LEN - 1 characters. */
	use_tree("procfs");
	ASSERT_EQ(procfs_read_ident(4243, &id), 0, "read 4243");
	ASSERT_STREQ(id.comm, "kworker/0:1H-ev", "comm cut to 15");
	ASSERT_EQ(id.start_ticks, 4321, "starttime");
}

TEST(ident_missing)
{
	struct proc_ident id;

	use_tree("procfs");
	ASSERT_EQ(procfs_read_ident(999, &id), -ENOENT, "fake pid 999");
	procfs_root = "/proc";
	/* Above PID_MAX_LIMIT (4M), so never a live process. */
	ASSERT_EQ(procfs_read_ident(INT_MAX, &id), -ENOENT, "real INT_MAX");
}

TEST(scan_fake_pid)
{
	struct inode_map m;
	const struct inode_owner *o;

	use_tree("procfs");
	inode_map_init(&m);
	ASSERT_EQ(procfs_scan_pid_sockets(4242, &m), 0, "scan 4242");
	/* 3 and 9 both link socket:[12345] (a dup()), 5 links 67890; pipes,
	 * files, anon inodes and malformed or oversized links do not count. */
	ASSERT_EQ(inode_map_count(&m), 2, "socket inodes of 4242");
	o = inode_map_get(&m, 12345);
	ASSERT_TRUE(o != NULL, "12345 found");
	ASSERT_EQ(o->pid, 4242, "12345 pid");
	ASSERT_EQ(o->shared, 0, "dup in one process is not shared");
	o = inode_map_get(&m, 67890);
	ASSERT_TRUE(o != NULL, "67890 found");
	ASSERT_EQ(o->pid, 4242, "67890 pid");
	ASSERT_TRUE(inode_map_get(&m, 5555) == NULL, "pipe inode ignored");
	ASSERT_EQ(procfs_scan_pid_sockets(999, &m), -ENOENT, "no such pid");
	ASSERT_EQ(procfs_scan_pid_sockets(4244, &m), -ENOENT, "pid without fd/");
	ASSERT_EQ(inode_map_count(&m), 2, "failed scans add nothing");
	inode_map_free(&m);
}

TEST(scan_fake_all)
{
	struct inode_map m;
	const struct inode_owner *o;

	/* 17, 4242, 4243 hold sockets, 4244 has no fd/ (skipped), "nov6",
	 * "net" and "self" are not pids. */
	use_tree("procfs");
	inode_map_init(&m);
	ASSERT_EQ(procfs_scan_all_sockets(&m), 0, "scan all");
	ASSERT_EQ(inode_map_count(&m), 3, "distinct socket inodes");
	o = inode_map_get(&m, 12345);
	ASSERT_TRUE(o != NULL, "12345 found");
	ASSERT_EQ(o->pid, 4242, "12345 keeps the lowest pid");
	ASSERT_EQ(o->shared, 1, "12345 is shared by 4242 and 4243");
	o = inode_map_get(&m, 67890);
	ASSERT_TRUE(o != NULL, "67890 found");
	ASSERT_EQ(o->shared, 0, "67890 not shared");
	o = inode_map_get(&m, 424300);
	ASSERT_TRUE(o != NULL, "424300 found");
	ASSERT_EQ(o->pid, 17, "424300 keeps the lowest pid whatever the order");
	ASSERT_EQ(o->shared, 1, "424300 shared");
	inode_map_free(&m);

	procfs_root = "/nonexistent/connscope-test";
	inode_map_init(&m);
	ASSERT_EQ(procfs_scan_all_sockets(&m), -ENOENT, "no proc root");
	inode_map_free(&m);
}

/* ---- inode_map ------------------------------------------------------- */

TEST(inode_map_growth)
{
	struct inode_map m;
	const struct inode_owner *o;
	uint32_t i;

	inode_map_init(&m);
	ASSERT_TRUE(inode_map_get(&m, 1) == NULL, "empty map");
	ASSERT_EQ(inode_map_put(&m, 0, 1), -EINVAL, "inode 0 is no key");
	/* Sequential inodes, as the kernel hands them out, plus some far
	 * apart ones near UINT32_MAX. */
	for (i = 1; i <= 10000; i++)
		ASSERT_EQ(inode_map_put(&m, i, 100 + i % 7), 0, "put");
	for (i = 0; i < 16; i++)
		ASSERT_EQ(inode_map_put(&m, UINT32_MAX - i * 65536, 9), 0, "put high");
	ASSERT_EQ(inode_map_count(&m), 10016, "count");
	ASSERT_EQ(m.m.cap & (m.m.cap - 1), 0, "cap is a power of two");
	ASSERT_TRUE(m.m.cap * 7 >= 10 * inode_map_count(&m), "load at most 70%");
	ASSERT_TRUE(m.m.cap < 4 * inode_map_count(&m) + 64, "cap not oversized");
	for (i = 1; i <= 10000; i++) {
		o = inode_map_get(&m, i);
		ASSERT_TRUE(o != NULL, "get");
		ASSERT_EQ(o->inode, i, "inode");
		ASSERT_EQ(o->pid, 100 + i % 7, "pid");
		ASSERT_EQ(o->shared, 0, "not shared");
	}
	o = inode_map_get(&m, UINT32_MAX);
	ASSERT_TRUE(o != NULL && o->pid == 9, "get high");
	ASSERT_TRUE(inode_map_get(&m, 10001) == NULL, "absent");
	ASSERT_TRUE(inode_map_get(&m, 0) == NULL, "0 never found");

	/* Same pid again: nothing changes, nothing is added. */
	ASSERT_EQ(inode_map_put(&m, 42, 100 + 42 % 7), 0, "re-put");
	ASSERT_EQ(inode_map_get(&m, 42)->shared, 0, "same pid is not sharing");
	ASSERT_EQ(inode_map_count(&m), 10016, "count after re-put");
	/* A higher pid: flagged, pid kept; a lower one: flagged, pid taken. */
	ASSERT_EQ(inode_map_put(&m, 43, 5000), 0, "put higher pid");
	o = inode_map_get(&m, 43);
	ASSERT_EQ(o->pid, 100 + 43 % 7, "higher pid does not win");
	ASSERT_EQ(o->shared, 1, "shared after higher pid");
	ASSERT_EQ(inode_map_put(&m, 44, 2), 0, "put lower pid");
	o = inode_map_get(&m, 44);
	ASSERT_EQ(o->pid, 2, "lowest pid wins");
	ASSERT_EQ(o->shared, 1, "shared after lower pid");
	ASSERT_EQ(inode_map_count(&m), 10016, "count after sharing");

	inode_map_free(&m);
	ASSERT_TRUE(m.m.entries == NULL && m.m.index == NULL && m.m.cap == 0 && inode_map_count(&m) == 0, "freed");
	ASSERT_TRUE(inode_map_get(&m, 1) == NULL, "get after free");
	inode_map_free(&m);	/* twice is harmless */
}

/* ---- the real /proc and kernel --------------------------------------- */

static uint32_t fd_inode(int fd)
{
	struct stat st;

	ASSERT_EQ(fstat(fd, &st), 0, "fstat");
	return st.st_ino;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ASSERT_TRUE(d != NULL, "opendir /proc/self/fd");
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

TEST(scan_self_real)
{
	struct inode_map m;
	const struct inode_owner *o;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	uint32_t ino;

	ASSERT_TRUE(fd >= 0, "socket");
	ino = fd_inode(fd);
	procfs_root = "/proc";
	inode_map_init(&m);
	ASSERT_EQ(procfs_scan_pid_sockets(getpid(), &m), 0, "scan self");
	o = inode_map_get(&m, ino);
	ASSERT_TRUE(o != NULL, "own socket inode found");
	ASSERT_EQ(o->pid, getpid(), "owner is us");
	inode_map_free(&m);

	/* The full scan finds it too (other processes may be off limits). */
	inode_map_init(&m);
	ASSERT_EQ(procfs_scan_all_sockets(&m), 0, "scan all");
	o = inode_map_get(&m, ino);
	ASSERT_TRUE(o != NULL, "own socket inode found by full scan");
	ASSERT_TRUE(o->pid <= getpid(), "lowest pid");
	inode_map_free(&m);
	close(fd);
}

TEST(scan_denied)
{
	struct inode_map m;
	struct stat st;
	pid_t child;
	int status;

	procfs_root = "/proc";
	if (geteuid() != 0) {
		/* Unprivileged: another user's process (pid 1, usually). */
		if (stat("/proc/1", &st) || st.st_uid == geteuid())
			SKIP("pid 1 is ours, no foreign process to probe");
		inode_map_init(&m);
		ASSERT_EQ(procfs_scan_pid_sockets(1, &m), -EACCES, "pid 1");
		inode_map_free(&m);
		return;
	}
	/* Root: a child that dropped to nobody may not read our fds. */
	child = fork();
	ASSERT_TRUE(child >= 0, "fork");
	if (child == 0) {
		int r;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		inode_map_init(&m);
		r = procfs_scan_pid_sockets(getppid(), &m);
		inode_map_free(&m);
		_exit(r == -EACCES ? 0 : 1);
	}
	ASSERT_EQ(waitpid(child, &status, 0), child, "waitpid");
	ASSERT_TRUE(WIFEXITED(status), "child exited");
	ASSERT_EQ(WEXITSTATUS(status), 0, "child saw -EACCES (2: setuid failed)");
}

/* procfs_pid_gone from stat lines: the state after the comm's last ')',
 * and for a zombie its num_threads (field 20). */
TEST(gone_by_state_and_threads)
{
	static const struct {
		const char *stat;
		bool gone;
		const char *what;
	} cases[] = {
		{ "7 (java) S 1 7 7 0 -1 4227072 1 0 0 0 1 1 0 0 20 0 21 0 99\n", false, "sleeping" },
		{ "7 (java) R 1 7 7 0 -1 4227072 1 0 0 0 1 1 0 0 20 0 1 0 99\n", false, "running" },
		/* A JVM's exit: the leader a zombie, a thread still closing. */
		{ "7 (java) Z 1 7 7 0 -1 4227084 1 0 0 0 1 1 0 0 20 0 2 0 99\n", false,
		  "zombie leader, 2 threads" },
		{ "7 (java) Z 1 7 7 0 -1 4227084 1 0 0 0 1 1 0 0 20 0 1 0 99\n", true,
		  "zombie, alone" },
		{ "7 (a) Z (b) Z 1 7 7 0 -1 4227084 1 0 0 0 1 1 0 0 20 0 3 0 99\n", false,
		  "comm with ') Z ' in it: the last ')' counts" },
		{ "7 (java) X 1 7 7 0 -1 4227084 1 0 0 0 1 1 0 0 20 0 0 0 99\n", true, "dead" },
		{ "7 (java) Z 1 7\n", true, "zombie, line cut short" },
	};
	char dir[] = "/tmp/connscope-procfs.XXXXXX", pdir[64];

	ASSERT_TRUE(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(pdir, sizeof(pdir), "%s/7", dir);
	ASSERT_EQ(mkdir(pdir, 0755), 0, "mkdir 7");
	procfs_root = dir;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(dir, "7/stat", cases[i].stat);
		ASSERT_EQ(procfs_pid_gone(7), cases[i].gone, cases[i].what);
	}
	ASSERT_TRUE(procfs_pid_gone(8), "no such pid");
	snprintf(pdir, sizeof(pdir), "%s/7/stat", dir);
	unlink(pdir);
	snprintf(pdir, sizeof(pdir), "%s/7", dir);
	rmdir(pdir);
	rmdir(dir);
	procfs_root = "/proc";
}

static int zl_fd;

static void *zl_thread(void *arg)
{
	char c;

	(void)arg;
	while (read(zl_fd, &c, 1) > 0)
		;
	_exit(0);
}

static char stat_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : 0;
}

/* A real process whose leader thread ended while another thread runs
 * (pthread_exit in main): a zombie leader, not gone; gone once the last
 * thread ends, reaped or not. */
TEST(gone_real_zombie_leader)
{
	pthread_t th;
	pid_t child;
	int ctl[2], status, i;

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
	for (i = 0; i < 500 && stat_state(child) != 'Z'; i++)
		usleep(10000);
	ASSERT_EQ(stat_state(child), 'Z', "leader a zombie");
	ASSERT_TRUE(!procfs_pid_gone(child), "zombie leader with a live thread: not gone");
	close(ctl[1]);
	/* The thread's exit ends the process: a zombie until reaped. */
	for (i = 0; i < 500 && !procfs_pid_gone(child); i++)
		usleep(10000);
	ASSERT_TRUE(procfs_pid_gone(child), "gone once its last thread ended");
	ASSERT_EQ(waitpid(child, &status, 0), child, "reap");
	ASSERT_TRUE(procfs_pid_gone(child), "gone once reaped");
}

TEST(ident_self_real)
{
	struct proc_ident a, b;
	char comm[32] = "";
	FILE *f;

	procfs_root = "/proc";
	f = fopen("/proc/self/comm", "r");
	ASSERT_TRUE(f != NULL, "open comm");
	ASSERT_TRUE(fgets(comm, sizeof(comm), f) != NULL, "read comm");
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	ASSERT_EQ(procfs_read_ident(getpid(), &a), 0, "read self");
	ASSERT_STREQ(a.comm, comm, "comm");
	ASSERT_TRUE(a.start_ticks > 0, "start time");
	ASSERT_EQ(procfs_read_ident(getpid(), &b), 0, "read self again");
	ASSERT_EQ(b.start_ticks, a.start_ticks, "start time is stable");
	ASSERT_TRUE(procfs_clk_tck() > 0, "clock ticks");
}

/* A socket the dump should contain, and what it saw of it. */
struct want {
	uint8_t family;
	uint16_t sport, dport;	/* dport 0: any */
	int seen;
	struct sd_sock got;
	int stop_with;		/* nonzero: stop the dump at the first socket */
	unsigned total;
};

static int find_cb(const struct sd_sock *s, void *ctx)
{
	struct want *w = ctx;

	w->total++;
	if (w->stop_with)
		return w->stop_with;
	if (s->family == w->family && s->sport == w->sport &&
	    (!w->dport || s->dport == w->dport)) {
		w->seen++;
		w->got = *s;
	}
	return 0;
}

static int tcp_listener(int family, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof(*a);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 8)) {
		int err = -errno;

		close(fd);
		return err;
	}
	len = sizeof(ss);
	ASSERT_EQ(getsockname(fd, (struct sockaddr *)&ss, &len), 0, "getsockname");
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
			 ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/* Connect to 127.0.0.1:port; returns the fd, its local port in *cport. */
static int tcp_connect4(uint16_t port, uint16_t *cport)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT_TRUE(fd >= 0, "socket");
	ASSERT_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "connect");
	ASSERT_EQ(getsockname(fd, (struct sockaddr *)&a, &len), 0, "getsockname");
	*cport = ntohs(a.sin_port);
	return fd;
}

TEST(sockdiag_listener)
{
	static const uint8_t lo[4] = { 127, 0, 0, 1 };
	struct want w = { .family = AF_INET };
	int fd = tcp_listener(AF_INET, &w.sport);

	ASSERT_TRUE(fd >= 0, "listener on 127.0.0.1:0");
	ASSERT_EQ(sockdiag_dump_tcp(SD_ALL_STATES, find_cb, &w), 0, "dump");
	ASSERT_EQ(w.seen, 1, "listener seen once");
	ASSERT_EQ(w.got.state, TCP_LISTEN_, "state LISTEN");
	ASSERT_EQ(w.got.inode, fd_inode(fd), "inode is the fd's st_ino");
	ASSERT_MEMEQ(w.got.saddr, lo, 4, "saddr 127.0.0.1");
	ASSERT_EQ(w.got.dport, 0, "dport");
	ASSERT_EQ(w.got.uid, geteuid(), "uid");
	ASSERT_TRUE(w.got.cookie != 0, "cookie");
	close(fd);
}

TEST(sockdiag_established_and_mask)
{
	struct want cli = { .family = AF_INET }, srv = { .family = AF_INET };
	struct want any = { .family = AF_INET };
	uint16_t lport, cport;
	int l = tcp_listener(AF_INET, &lport), c, a;

	ASSERT_TRUE(l >= 0, "listener");
	c = tcp_connect4(lport, &cport);
	a = accept(l, NULL, NULL);
	ASSERT_TRUE(a >= 0, "accept");

	cli.sport = cport, cli.dport = lport;
	srv.sport = lport, srv.dport = cport;
	ASSERT_EQ(sockdiag_dump_tcp(1u << TCP_ESTABLISHED_, find_cb, &cli), 0, "dump client");
	ASSERT_EQ(cli.seen, 1, "client seen");
	ASSERT_EQ(cli.got.state, TCP_ESTABLISHED_, "client ESTABLISHED");
	ASSERT_EQ(cli.got.inode, fd_inode(c), "client inode");
	ASSERT_EQ(sockdiag_dump_tcp(1u << TCP_ESTABLISHED_, find_cb, &srv), 0, "dump server");
	ASSERT_EQ(srv.seen, 1, "accepted socket seen");
	ASSERT_EQ(srv.got.inode, fd_inode(a), "server inode");
	ASSERT_TRUE(srv.got.cookie != cli.got.cookie, "cookies differ");
	/* Everything on the listener's port: accepted socket + listener, but
	 * only the former when asking for ESTABLISHED. */
	any.sport = lport;
	ASSERT_EQ(sockdiag_dump_tcp(1u << TCP_ESTABLISHED_, find_cb, &any), 0, "dump port");
	ASSERT_EQ(any.seen, 1, "state mask leaves the listener out");
	any.seen = 0;
	ASSERT_EQ(sockdiag_dump_tcp(SD_ALL_STATES, find_cb, &any), 0, "dump port, all");
	ASSERT_EQ(any.seen, 2, "all states: listener and accepted socket");

	/* Active close by the client: it ends in TIME_WAIT, without inode. */
	close(c);
	close(a);
	cli.seen = 0;
	for (int i = 0; i < 100 && !cli.seen; i++) {
		ASSERT_EQ(sockdiag_dump_tcp(1u << TCP_TIME_WAIT_, find_cb, &cli), 0,
			  "dump TIME_WAIT");
		if (!cli.seen)
			usleep(10000);
	}
	ASSERT_EQ(cli.seen, 1, "client in TIME_WAIT");
	ASSERT_EQ(cli.got.state, TCP_TIME_WAIT_, "state TIME_WAIT");
	ASSERT_EQ(cli.got.inode, 0, "tw socket has no inode");
	ASSERT_EQ(cli.got.timer, 3, "TIME_WAIT timer");
	close(l);
}

TEST(sockdiag_ipv6)
{
	struct want w = { .family = AF_INET6 };
	int fd = tcp_listener(AF_INET6, &w.sport);

	if (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL)
		SKIP("no IPv6 loopback");
	ASSERT_TRUE(fd >= 0, "listener on [::1]:0");
	ASSERT_EQ(sockdiag_dump_tcp(1u << TCP_LISTEN_, find_cb, &w), 0, "dump");
	ASSERT_EQ(w.seen, 1, "v6 listener seen");
	ASSERT_EQ(w.got.state, TCP_LISTEN_, "state");
	ASSERT_EQ(w.got.inode, fd_inode(fd), "inode");
	ASSERT_MEMEQ(w.got.saddr, &in6addr_loopback, 16, "saddr ::1");
	close(fd);
}

static int find_both_cb(const struct sd_sock *s, void *ctx)
{
	struct want *w = ctx;

	find_cb(s, &w[0]);
	return find_cb(s, &w[1]);
}

/* TCP is one dump of both families (#23 item 6): each family's socket
 * comes once, with its family, whichever request the kernel took. */
TEST(sockdiag_both_families_once)
{
	struct want w[2] = { { .family = AF_INET }, { .family = AF_INET6 } };
	int fd4 = tcp_listener(AF_INET, &w[0].sport), fd6;

	ASSERT_TRUE(fd4 >= 0, "listener on 127.0.0.1:0");
	fd6 = tcp_listener(AF_INET6, &w[1].sport);
	if (fd6 == -EAFNOSUPPORT || fd6 == -EADDRNOTAVAIL) {
		close(fd4);
		SKIP("no IPv6 loopback");
	}
	ASSERT_TRUE(fd6 >= 0, "listener on [::1]:0");
	ASSERT_EQ(sockdiag_dump_tcp(SD_ALL_STATES, find_both_cb, w), 0, "dump");
	ASSERT_EQ(w[0].seen, 1, "v4 listener seen once");
	ASSERT_EQ(w[0].got.inode, fd_inode(fd4), "v4 inode");
	ASSERT_EQ(w[1].seen, 1, "v6 listener seen once");
	ASSERT_EQ(w[1].got.inode, fd_inode(fd6), "v6 inode");
	ASSERT_EQ(w[0].total, w[1].total, "one pass over the sockets");
	close(fd4);
	close(fd6);
}

TEST(sockdiag_stop_and_no_fd_leak)
{
	struct want w = { .family = AF_INET, .stop_with = 42 };
	int fd = tcp_listener(AF_INET, &w.sport), before;

	ASSERT_TRUE(fd >= 0, "listener");
	before = open_fds();
	ASSERT_EQ(sockdiag_dump_tcp(SD_ALL_STATES, find_cb, &w), 42, "callback value");
	ASSERT_EQ(w.total, 1, "no call after the stop");
	w.stop_with = 0;
	for (int i = 0; i < 50; i++)
		ASSERT_EQ(sockdiag_dump_tcp(SD_ALL_STATES, find_cb, &w), 0, "dump");
	ASSERT_EQ(open_fds(), before, "netlink socket closed every time");
	close(fd);
}

/* net.ipv4.tcp_max_orphans is host-wide: the network namespace of a
 * container (or `ip netns exec`) has no file for it. Missing, it is
 * unread, not a limit of 0; an admin's 0 is read as 0. */
TEST(max_orphans_unread_or_read)
{
	char dir[] = "/tmp/connscope-procfs.XXXXXX", path[PATH_MAX];
	const char *dirs[] = { "sys", "sys/net", "sys/net/ipv4" };
	struct netlimits l;

	ASSERT_TRUE(mkdtemp(dir) != NULL, "mkdtemp");
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, dirs[i]);
		ASSERT_EQ(mkdir(path, 0755), 0, "mkdir");
	}
	write_file(dir, "sys/net/ipv4/ip_local_port_range", "32768\t60999\n");
	procfs_root = dir;
	ASSERT_EQ(netlimits_read(&l), 0, "ports_read");
	ASSERT_EQ(l.port_hi, 60999, "port_hi");
	ASSERT_TRUE(l.max_orphans_unread, "no_file_unread");
	write_file(dir, "sys/net/ipv4/tcp_max_orphans", "0\n");
	ASSERT_EQ(netlimits_read_orphans(&l), 0, "orphans_read");
	ASSERT_TRUE(!l.max_orphans_unread, "read");
	ASSERT_EQ(l.max_orphans, 0, "zero_is_zero");
	procfs_root = "/proc";
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/sys/net/ipv4/%s", dir,
			 i ? "tcp_max_orphans" : "ip_local_port_range");
		unlink(path);
	}
	for (int i = 2; i >= 0; i--) {
		snprintf(path, sizeof(path), "%s/%s", dir, dirs[i]);
		rmdir(path);
	}
	rmdir(dir);
}

UNIT_MAIN()
