/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* fd inventory from /proc/PID/fd: one readlinkat per fd, a stat only for
 * paths, a getxattr per socket the caller did not know, the TCP tables of
 * /proc/PID/net once for the states (see fdinv.h). This file walks the fd
 * table and keeps the records; what an fd is comes from fdinv_classify.c,
 * socket types and states from fdinv_sockets.c (fdinv_internal.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdinv.h"
#include "fdinv_internal.h"
#include "grow.h"
#include "hashmap.h"
#include "procfs.h"

/* "123" -> 123; -1 for anything not a plain fd number. */
static int parse_fd(const char *s)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > INT_MAX / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v > INT_MAX ? -1 : (int)v;
}

/* pos and flags are the first two lines of every fdinfo file; a short read
 * is enough (epoll and inotify append a line per watch after them). */
static void read_fdinfo(int info_dir, const char *name, struct fdinv_fd *r)
{
	char buf[256], *p, *q;
	ssize_t n;
	int fd;

	fd = openat(info_dir, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (strncmp(buf, "pos:", 4))
		return;
	p = strchr(buf, '\n');
	if (!p || strncmp(p + 1, "flags:", 6))
		return;
	r->pos = strtoll(buf + 4, NULL, 10);
	r->flags = strtoul(p + 7, &q, 8);
	if (q == p + 7)
		return;
	r->has_fdinfo = 1;
}

static bool valid_sock_kind(int kind)
{
	return kind >= 0 && fdt_is_socket(FDINV_SOCK_TYPE(kind)) &&
	       FDINV_SOCK_STATE(kind) < FDINV_TCP_STATES;
}

/* A socket fd: on the first fd of an inode ask the callback, then
 * getxattr. Sets *gone when the fd closed meanwhile (not counted then). */
static int add_socket(struct scan *s, int fd_dir, const char *name, uint32_t ino,
		      uint32_t rec, bool *gone)
{
	struct sock_val val = { .kind = -1 }, *v;
	int err;

	*gone = false;
	if (ino && !hmap_get(&s->socks, &ino)) {
		int kind = s->o->sock_kind ? s->o->sock_kind(ino, s->o->sock_ctx) : -1;

		if (valid_sock_kind(kind)) {
			val.kind = kind;
			val.src = SRC_CALLBACK;
		} else if (!(s->flags & FDINV_NO_PROBE) &&
			   fdinv_xattr_kind(s, name, &val) == -ENOENT &&
			   fdinv_fd_gone(fd_dir, name)) {
			*gone = true;
			return 0;
		}
		v = hmap_upsert(&s->socks, &ino, NULL);
		if (!v)
			return -ENOMEM;
		*v = val;
		if (v->kind < 0)
			s->unresolved++;
	}
	err = grow_room((void **)&s->pend, &s->pend_cap, s->nr_pend, 1, sizeof(*s->pend), 64);
	if (err)
		return err;
	/* ino 0 ("socket:[]") is pending too, with nothing to look up */
	s->pend[s->nr_pend++] = (struct pend){ .ino = ino, .rec = rec };
	return 0;
}

/* One /proc/PID/fd entry. */
static int scan_one(struct scan *s, int fd_dir, int info_dir, const char *name)
{
	struct fd_inventory *inv = s->inv;
	struct fdinv_fd *r = NULL;
	uint32_t rec = NO_REC;
	uint64_t ino;
	int fd, type, needs;
	ssize_t n;

	fd = parse_fd(name);
	if (fd < 0)
		return 0;
	n = readlinkat(fd_dir, name, s->link, sizeof(s->link) - 1);
	if (n < 0) {
		if (errno == ENOENT)	/* closed since readdir */
			return 0;
		/* EACCES here: the process exec'd into other credentials
		 * mid-scan; what we have so far would be half a table. */
		return fdinv_scan_errno(errno);
	}
	s->link[n] = '\0';
	type = fdinv_classify_link(s->link, n, &ino, &needs);
	if (needs & FDINV_NEED_STAT) {
		int t = -ENOENT;

		if (!(s->flags & FDINV_NO_PROBE)) {
			t = fdinv_stat_type(fd_dir, name, &ino);
			if (t == -ENOENT && fdinv_fd_gone(fd_dir, name))
				return 0;
		}
		/* No stat, or it failed (a recorded tree's link to nowhere):
		 * the text still counts. */
		if (t < 0)
			type = fdinv_guess_path_type(s->link, n);
		else
			type = t;
	}
	if (s->flags & FDINV_RECORDS) {
		int err = grow_room((void **)&inv->fds, &s->rec_cap, inv->nr_fds, 1,
				    sizeof(*inv->fds), 64);

		if (err)
			return err;
		rec = inv->nr_fds;
	}
	if (needs & FDINV_NEED_SOCK) {
		bool gone;
		int err = add_socket(s, fd_dir, name, (uint32_t)ino, rec, &gone);

		if (err || gone)
			return err;
	} else {
		inv->by_type[type]++;
	}

	inv->total++;
	if (fd > inv->max_fd)
		inv->max_fd = fd;
	if (s->flags & FDINV_RECORDS) {
		r = &inv->fds[inv->nr_fds++];
		*r = (struct fdinv_fd){ .fd = fd, .type = type, .ino = ino };
		if (s->flags & FDINV_LINKS) {
			r->link = strdup(s->link);
			if (!r->link)
				return -ENOMEM;
		}
		if (info_dir >= 0) {
			read_fdinfo(info_dir, name, r);
			if (r->has_fdinfo && (r->flags & O_CLOEXEC))
				inv->cloexec++;
		}
	}
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct fdinv_fd *x = a, *y = b;

	return (x->fd > y->fd) - (x->fd < y->fd);
}

/* Procfs lists fds in ascending order; a recorded tree on another
 * filesystem comes in hash order. */
static void sort_records(struct fd_inventory *inv)
{
	for (size_t i = 1; i < inv->nr_fds; i++) {
		if (inv->fds[i - 1].fd > inv->fds[i].fd) {
			qsort(inv->fds, inv->nr_fds, sizeof(*inv->fds), rec_cmp);
			return;
		}
	}
}

/* Read the fd table of the task at s->base. */
static int scan_task(struct scan *s)
{
	int fd_dir, info_dir = -1, err = 0;
	struct dirent *de;
	size_t seen = 0;
	DIR *d;

	fd_dir = openat(s->base, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd_dir < 0)
		return fdinv_scan_errno(errno);
	if (s->flags & FDINV_FDINFO) {
		info_dir = openat(s->base, "fdinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (info_dir < 0) {
			err = fdinv_scan_errno(errno);
			close(fd_dir);
			return err;
		}
	}
	d = fdopendir(fd_dir);
	if (!d) {
		err = -errno;
		close(fd_dir);
		goto out;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			/* getdents on a task that exited: ENOENT */
			if (errno)
				err = fdinv_scan_errno(errno);
			break;
		}
		if (de->d_name[0] == '.')
			continue;
		err = scan_one(s, dirfd(d), info_dir, de->d_name);
		if (err)
			break;
		if (s->o && s->o->progress && ++seen % FDINV_PROGRESS_EVERY == 0)
			s->o->progress(s->o->progress_ctx);
	}
	closedir(d);
	if (!err) {
		/* Records are indexed by the pending sockets: sort after. */
		fdinv_resolve_sockets(s);
		sort_records(s->inv);
	}
out:
	if (info_dir >= 0)
		close(info_dir);
	return err;
}

/* State letter of the task at dirfd base (field 3 of its stat), or
 * -ENOENT when it is gone. */
static int task_state(int base)
{
	char buf[512], *p;
	ssize_t n;
	int fd;

	fd = openat(base, "stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fdinv_scan_errno(errno);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		n = fdinv_scan_errno(errno);
		close(fd);
		return n;
	}
	close(fd);
	if (n == 0)
		return -ENOENT;
	buf[n] = '\0';
	/* comm may hold ") ": the state follows the last one. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EPROTO;
	return (unsigned char)p[2];
}

static bool dead_state(int st)
{
	return st == 'Z' || st == 'X' || st == 'x';
}

/* A live thread of the process whose leader is a zombie; its dirfd in
 * *tfd, its tid returned, or 0 when there is none. */
static pid_t live_thread(int pid_dir, pid_t pid, int *tfd)
{
	struct dirent *de;
	pid_t found = 0;
	int tdir;
	DIR *d;

	tdir = openat(pid_dir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tdir < 0)
		return 0;
	d = fdopendir(tdir);
	if (!d) {
		close(tdir);
		return 0;
	}
	while (!found && (de = readdir(d))) {
		int tid = parse_fd(de->d_name), fd, st;

		if (tid <= 0 || tid == pid)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		st = task_state(fd);
		if (st > 0 && !dead_state(st)) {
			*tfd = fd;
			found = tid;
		} else {
			close(fd);
		}
	}
	closedir(d);
	return found;
}

static void inv_reset(struct fd_inventory *inv, pid_t pid, pid_t tid)
{
	memset(inv, 0, sizeof(*inv));
	inv->pid = pid;
	inv->tid = tid;
	inv->max_fd = -1;
}

/* Scan the task at dirfd base, then make sure it still lives: a process
 * that exits mid-scan shows a truncated (or empty) table without any
 * error, and only its state tells. */
static int scan_and_check(struct scan *s, int base, const char *base_path,
			  pid_t pid, pid_t tid)
{
	struct scan fresh = { .o = s->o, .flags = s->flags, .inv = s->inv };
	int err, st;

	hmap_free(&s->socks);
	free(s->pend);
	fdinv_free(s->inv);
	*s = fresh;
	hmap_init(&s->socks, sizeof(uint32_t), sizeof(struct sock_val));
	inv_reset(s->inv, pid, tid);
	s->base = base;
	s->base_path = base_path;
	err = scan_task(s);
	if (err == -EACCES) {
		/* A task without an mm (a zombie) has its fd dir owned by
		 * root: dead, not forbidden. */
		st = task_state(base);
		return st > 0 && dead_state(st) ? 1 : err;
	}
	if (err)
		return err;
	st = task_state(base);
	if (st < 0)
		return st;
	return dead_state(st) ? 1 : 0;
}

int fdinv_scan(pid_t pid, struct fd_inventory *inv, const struct fdinv_opts *o)
{
	static const struct fdinv_opts defaults;
	char path[PATH_MAX], tpath[PATH_MAX + 32];
	struct scan *s;
	int pid_dir, tfd = -1, err;
	pid_t tid;

	inv_reset(inv, pid, pid);
	if (pid <= 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));	/* holds a PATH_MAX buffer */
	if (!s)
		return -ENOMEM;
	s->o = o ? o : &defaults;
	s->flags = s->o->flags;
	if (s->flags & (FDINV_FDINFO | FDINV_LINKS))
		s->flags |= FDINV_RECORDS;
	s->inv = inv;
	hmap_init(&s->socks, sizeof(uint32_t), sizeof(struct sock_val));

	snprintf(path, sizeof(path), "%s/%d", procfs_root, (int)pid);
	pid_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pid_dir < 0) {
		err = fdinv_scan_errno(errno);
		goto out;
	}
	err = scan_and_check(s, pid_dir, path, pid, pid);
	if (err == 1) {
		/* A zombie leader has no fd table; the process lives on in
		 * its other threads (the leader called pthread_exit), which
		 * share one. No such thread: the process is gone. */
		tid = live_thread(pid_dir, pid, &tfd);
		err = -ENOENT;
		if (tid > 0) {
			snprintf(tpath, sizeof(tpath), "%s/task/%d", path, (int)tid);
			err = scan_and_check(s, tfd, tpath, pid, tid);
			if (err == 1)
				err = -ENOENT;
			close(tfd);
		}
	}
	close(pid_dir);
out:
	hmap_free(&s->socks);
	free(s->pend);
	free(s);
	if (err) {
		fdinv_free(inv);
		inv_reset(inv, pid, pid);
	}
	return err;
}

void fdinv_free(struct fd_inventory *inv)
{
	for (size_t i = 0; i < inv->nr_fds; i++)
		free(inv->fds[i].link);
	free(inv->fds);
	inv->fds = NULL;
	inv->nr_fds = 0;
}
