/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Readers of /proc: sockstat/snmp counters, process identity, and the
 * socket inode -> pid map built from /proc/PID/fd without forking. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "procfs.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *procfs_root = "/proc";

/* Open procfs_root/rel as a stdio stream; NULL with errno set. */
static FILE *proc_fopen(const char *rel)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", procfs_root, rel);

	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return fopen(path, "re");
}

/* "KEY: name value name value ...": the (section, name) pairs we keep. */
static const struct {
	const char *sect;
	const char *name;
	size_t off;
} sockstat_keys[] = {
#define K(s, n, f) { s, n, offsetof(struct sockstat, f) }
	K("sockets", "used", sockets_used),
	K("TCP", "inuse", tcp_inuse),
	K("TCP", "orphan", tcp_orphan),
	K("TCP", "tw", tcp_tw),
	K("TCP", "alloc", tcp_alloc),
	K("TCP", "mem", tcp_mem),
	K("UDP", "inuse", udp_inuse),
	K("UDPLITE", "inuse", udplite_inuse),
	K("RAW", "inuse", raw_inuse),
	K("FRAG", "inuse", frag_inuse),
	K("TCP6", "inuse", tcp6_inuse),
	K("UDP6", "inuse", udp6_inuse),
	K("UDPLITE6", "inuse", udplite6_inuse),
	K("RAW6", "inuse", raw6_inuse),
	K("FRAG6", "inuse", frag6_inuse),
#undef K
};

/* Counters are summed from per-cpu parts and may read transiently
 * negative; report those as 0 rather than as a huge unsigned value. */
static uint64_t parse_counter(const char *s)
{
	long long v;
	char *end;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || errno || v < 0)
		return 0;
	return v;
}

static void sockstat_line(struct sockstat *st, char *line)
{
	char *colon = strchr(line, ':');
	char *save, *name, *val;

	if (!colon)
		return;
	*colon = '\0';
	/* Walk "name value" pairs so that unknown or reordered names are
	 * simply skipped. */
	for (name = strtok_r(colon + 1, " \t\n", &save); name;
	     name = strtok_r(NULL, " \t\n", &save)) {
		val = strtok_r(NULL, " \t\n", &save);
		if (!val)
			break;
		for (size_t i = 0; i < ARRAY_SIZE(sockstat_keys); i++) {
			if (strcmp(sockstat_keys[i].sect, line) ||
			    strcmp(sockstat_keys[i].name, name))
				continue;
			*(uint64_t *)((char *)st + sockstat_keys[i].off) =
				parse_counter(val);
			break;
		}
	}
}

/* Parse one sockstat-style file. Returns 0 or -errno. */
static int read_sockstat_file(const char *rel, struct sockstat *st)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = proc_fopen(rel);

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0)
		sockstat_line(st, line);
	free(line);
	fclose(f);
	return 0;
}

/* Split a line into whitespace-separated tokens in place. */
static int split(char *line, char **tok, int max)
{
	char *save, *t;
	int n = 0;

	for (t = strtok_r(line, " \t\n", &save); t && n < max;
	     t = strtok_r(NULL, " \t\n", &save))
		tok[n++] = t;
	return n;
}

/* snmp comes in pairs of lines per protocol: "Tcp: Name Name ..." then
 * "Tcp: value value ...". The column is looked up by name because the
 * kernel has appended columns over time. */
static int read_curr_estab(const char *rel, uint64_t *out)
{
	char *line = NULL, *head = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f = proc_fopen(rel);

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *htok[64], *vtok[64];	/* Tcp: has 15 columns */
		int nh, nv;

		if (strncmp(line, "Tcp:", 4))
			continue;
		if (!head) {
			head = strdup(line);
			if (!head) {
				err = -ENOMEM;
				break;
			}
			continue;
		}
		nh = split(head, htok, ARRAY_SIZE(htok));
		nv = split(line, vtok, ARRAY_SIZE(vtok));
		for (int i = 1; i < nh && i < nv; i++) {
			if (!strcmp(htok[i], "CurrEstab")) {
				*out = parse_counter(vtok[i]);
				break;
			}
		}
		break;
	}
	free(head);
	free(line);
	fclose(f);
	return err;
}

int procfs_read_sockstat(struct sockstat *st)
{
	return procfs_read_sockstat_of(0, st);
}

int procfs_read_sockstat_of(pid_t pid, struct sockstat *st)
{
	char dir[32] = "net", rel[64];
	int err;

	/* /proc/PID/net is the network namespace of PID. */
	if (pid)
		snprintf(dir, sizeof(dir), "%d/net", pid);
	memset(st, 0, sizeof(*st));
	snprintf(rel, sizeof(rel), "%s/sockstat", dir);
	err = read_sockstat_file(rel, st);
	if (err)
		return err;
	/* Without IPv6 there is no sockstat6: its counters stay 0. */
	snprintf(rel, sizeof(rel), "%s/sockstat6", dir);
	err = read_sockstat_file(rel, st);
	if (err && err != -ENOENT)
		return err;
	snprintf(rel, sizeof(rel), "%s/snmp", dir);
	err = read_curr_estab(rel, &st->curr_estab);
	if (err && err != -ENOENT)
		return err;
	return 0;
}

/* Field n of a /proc/PID/stat line, from from, where field at begins (the
 * text after its comm's last ')' is where field 3, the state, begins):
 * where field n begins, or NULL when the line ends before it. The comm,
 * the only free text, is before: the fields after it are separated by
 * spaces. A reader of several fields walks on from the one before, so the
 * line is walked once. */
static const char *stat_field(const char *from, int at, int n)
{
	const char *p = from;

	for (int field = at;; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return NULL;
		if (field == n)
			return p;
		while (*p && *p != ' ')
			p++;
	}
}

int procfs_read_ident(pid_t pid, struct proc_ident *id)
{
	char path[PATH_MAX], buf[4096];
	const char *ppid, *flags, *start;
	char *lp, *rp;
	size_t len = 0, clen;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", procfs_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ESRCH ? -ENOENT : -errno;
	while (len < sizeof(buf) - 1) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* A process reaped between open and read. */
			int err = errno == ESRCH ? -ENOENT : -errno;

			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';

	/* comm is free text: it may hold spaces and parentheses, so it runs
	 * from the first '(' to the last ')'. */
	lp = strchr(buf, '(');
	rp = strrchr(buf, ')');
	if (!lp || !rp || rp < lp)
		return -EPROTO;
	clen = rp - lp - 1;
	/* Kernel threads (kworker/...) may show more than TASK_COMM_LEN. */
	if (clen > sizeof(id->comm) - 1)
		clen = sizeof(id->comm) - 1;
	memset(id->comm, 0, sizeof(id->comm));
	memcpy(id->comm, lp + 1, clen);
	id->pid = pid;
	id->flags = 0;
	id->ppid = 0;

	/* After ") " comes field 3 (state): ppid is 4, flags 9, starttime 22. */
	ppid = stat_field(rp + 1, 3, 4);
	flags = ppid ? stat_field(ppid, 4, 9) : NULL;
	start = flags ? stat_field(flags, 9, 22) : NULL;
	if (!start || !isdigit((unsigned char)*start))
		return -EPROTO;
	id->ppid = strtol(ppid, NULL, 10);
	id->flags = strtoul(flags, NULL, 10);
	id->start_ticks = strtoull(start, NULL, 10);
	return 0;
}

long procfs_clk_tck(void)
{
	return sysconf(_SC_CLK_TCK);
}

/* ---- inode -> pid map ------------------------------------------------ */

/* ---- /proc/PID/fd scan ----------------------------------------------- */

/* "socket:[12345]" -> 12345; 0 for anything else. */
static uint32_t socket_link_inode(const char *l, size_t len)
{
	static const char pfx[] = "socket:[";
	uint64_t v = 0;
	size_t i = sizeof(pfx) - 1;

	if (len <= i + 1 || memcmp(l, pfx, i))
		return 0;
	for (; i < len && l[i] >= '0' && l[i] <= '9'; i++) {
		v = v * 10 + (l[i] - '0');
		if (v > UINT32_MAX)
			return 0;
	}
	if (i != len - 1 || l[i] != ']')
		return 0;
	return v;
}

static int errno_to_scan_err(int e)
{
	switch (e) {
	case ESRCH:
		return -ENOENT;
	case EPERM:
		return -EACCES;
	default:
		return -e;
	}
}

/* Scan an open "PID/fd" directory fd (consumed). readlinkat on the dirfd
 * costs one syscall per fd: no path building, no stat. */
static int scan_fd_dir(int dfd, pid_t pid, struct inode_map *m)
{
	struct dirent *de;
	char link[64];
	int err = 0;
	DIR *d;

	d = fdopendir(dfd);
	if (!d) {
		err = -errno;
		close(dfd);
		return err;
	}
	for (;;) {
		uint32_t ino;
		ssize_t n;

		errno = 0;
		de = readdir(d);
		if (!de) {
			/* getdents on a process that exited mid-scan */
			if (errno)
				err = errno_to_scan_err(errno);
			break;
		}
		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link));
		/* fds closed while we read, or a link we may not follow (an
		 * exec changed credentials): skip, keep the rest. */
		if (n <= 0)
			continue;
		ino = socket_link_inode(link, n);
		if (!ino)
			continue;
		err = inode_map_put(m, ino, pid);
		if (err)
			break;
	}
	closedir(d);
	return err;
}

int procfs_scan_pid_sockets(pid_t pid, struct inode_map *m)
{
	char path[PATH_MAX];
	int dfd;

	snprintf(path, sizeof(path), "%s/%d/fd", procfs_root, (int)pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno_to_scan_err(errno);
	return scan_fd_dir(dfd, pid, m);
}

int procfs_socket_fd(pid_t pid, uint32_t inode)
{
	char path[PATH_MAX], link[64];
	struct dirent *de;
	int fd = -ENOENT;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/fd", procfs_root, (int)pid);
	d = opendir(path);
	if (!d)
		return errno_to_scan_err(errno);
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link));
		if (n > 0 && socket_link_inode(link, n) == inode) {
			fd = atoi(de->d_name);
			break;
		}
	}
	closedir(d);
	return fd;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int procfs_scan_all_sockets(struct inode_map *m)
{
	struct dirent *de;
	char rel[32];
	int err = 0;
	DIR *d;

	d = opendir(procfs_root);
	if (!d)
		return -errno;
	/* Listing /proc yields thread-group leaders only (threads live under
	 * PID/task and share the leader's fd table), so each process's fds
	 * are read once. */
	for (;;) {
		long pid;
		int dfd;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				err = -errno;
			break;
		}
		if (!all_digits(de->d_name))
			continue;
		pid = strtol(de->d_name, NULL, 10);
		if (pid <= 0 || pid > INT_MAX)
			continue;
		snprintf(rel, sizeof(rel), "%ld/fd", pid);
		dfd = openat(dirfd(d), rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			err = errno_to_scan_err(errno);
		else
			err = scan_fd_dir(dfd, pid, m);
		/* Gone or not ours to look at: not an error for a full scan. */
		if (err == -ENOENT || err == -EACCES)
			err = 0;
		if (err)
			break;
	}
	closedir(d);
	return err;
}

uint64_t procfs_start_ns(const struct proc_ident *id)
{
	return id->start_ticks * (1000000000ULL / procfs_clk_tck());
}

int procfs_read_file(const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	size_t len;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", procfs_root, rel);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	len = fread(buf, 1, size - 1, f);
	/* A read that fails (ESRCH: the process was reaped after the open)
	 * is no empty file. */
	if (ferror(f))
		err = errno ? -errno : -EIO;
	fclose(f);
	buf[len] = 0;
	return err ? err : (int)len;
}

int procfs_read_pid_file(pid_t pid, const char *name, char *buf, size_t size)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%d/%s", pid, name);
	return procfs_read_file(rel, buf, size);
}

int procfs_maps_find(pid_t pid, const char *const *needles, size_t n, char *path, size_t len)
{
	char file[PATH_MAX], line[PATH_MAX + 128];
	FILE *f;
	int found = -ENOENT;

	snprintf(file, sizeof(file), "%s/%d/maps", procfs_root, pid);
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *nl;

		for (size_t i = 0; p && i < n; i++) {
			if (!strstr(p, needles[i]))
				continue;
			nl = strchr(p, '\n');
			if (nl)
				*nl = 0;
			snprintf(path, len, "%s", p);
			found = i;
			break;
		}
	}
	fclose(f);
	return found;
}

/* A zombie whose threads all ended: its leader alone is left (its
 * num_threads, field 20, counts the leader until it is reaped). A zombie
 * leader whose other threads still run is a live process: a JVM's exit
 * makes its leader a zombie first, and the thread that drops the fd table
 * last closes its sockets after that (97_java: a run ended there, before
 * the closes of the 8 connections the exit made, and booked none). */
static bool zombie_alone(const char *after_comm)
{
	const char *p = stat_field(after_comm, 3, 20);
	long threads;

	if (!p)
		return true;
	errno = 0;
	threads = strtol(p, NULL, 10);
	return errno || threads <= 1;
}

bool procfs_pid_gone(pid_t pid)
{
	char path[PATH_MAX], buf[1024], *p;
	FILE *f;
	bool gone = true;

	snprintf(path, sizeof(path), "%s/%d/stat", procfs_root, pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	/* The state follows the comm's last ')'. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		gone = p[2] == 'X' || (p[2] == 'Z' && zombie_alone(p + 1));
	fclose(f);
	return gone;
}

int procfs_pid_watch(pid_t pid)
{
	char self[32];
	ssize_t n;
	int fd;

	if (strcmp(procfs_root, "/proc"))
		return -1;
	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	if (atoi(self) != getpid())
		return -1;
#ifdef SYS_pidfd_open
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -1 : fd;
#else
	(void)fd;
	return -1;
#endif
}

bool procfs_pid_gone_watched(pid_t pid, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r = fd < 0 ? -1 : poll(&p, 1, 0);

	return r < 0 ? procfs_pid_gone(pid) : r > 0;
}
