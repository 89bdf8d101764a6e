// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Network namespaces of target processes. A namespace is named by the
 * inode of /proc/PID/ns/net (what `ls -l` prints as net:[INODE], and what
 * BPF reads as sk->__sk_common.skc_net.net->ns.inum). The kernel's view of
 * sockets is per namespace: sock_diag answers in the namespace the netlink
 * socket was made in (it stays bound there), and /proc/sys/net is that of
 * the reader's thread. So those are made or read with this thread moved
 * into the target's namespace for a moment, then moved back. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "netns.h"
#include "procfs.h"
#include "text_wrap.h"

static int ns_path(char *buf, size_t len, pid_t pid)
{
	if (pid)
		return snprintf(buf, len, "%s/%d/ns/net", procfs_root, pid);
	return snprintf(buf, len, "%s/thread-self/ns/net", procfs_root);
}

int netns_of_pid(pid_t pid, uint32_t *ino)
{
	char path[256];
	struct stat st;

	ns_path(path, sizeof(path), pid);
	if (stat(path, &st))
		return -errno;
	*ino = st.st_ino;
	return 0;
}

uint32_t netns_self(void)
{
	uint32_t ino = 0;

	netns_of_pid(0, &ino);
	return ino;
}

/* fn(ctx) with this thread in the namespace target (an open nsfs file). */
static int run_in(int target, int (*fn)(void *ctx), void *ctx)
{
	char path[256];
	int home, ret;

	ns_path(path, sizeof(path), 0);
	home = open(path, O_RDONLY | O_CLOEXEC);
	if (home < 0)
		return -errno;
	/* setns() moves this thread only; the agent's other threads (the
	 * exporter's HTTP server) stay where they are. */
	if (setns(target, CLONE_NEWNET)) {
		ret = -errno;
		goto out;
	}
	ret = fn(ctx);
	if (setns(home, CLONE_NEWNET)) {
		/* Every later read would be of the wrong namespace. */
		text_err("connscope: cannot return to the agent's network namespace: %s\n",
			 strerror(errno));
		abort();
	}
out:
	close(home);
	return ret;
}

int netns_run(pid_t pid, int (*fn)(void *ctx), void *ctx)
{
	char path[256];
	int target, ret;
	uint32_t ino;

	if (!pid || (!netns_of_pid(pid, &ino) && ino == netns_self()))
		return fn(ctx);
	ns_path(path, sizeof(path), pid);
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0)
		return -errno;
	ret = run_in(target, fn, ctx);
	close(target);
	return ret;
}

int netns_run_ino(pid_t pid, uint32_t ino, int (*fn)(void *ctx), void *ctx)
{
	char path[256];
	struct stat st;
	int target, ret;

	if (!ino)
		return netns_run(pid, fn, ctx);
	/* The namespace compared is the one held open: what is entered is
	 * what was checked, whatever pid does meanwhile. */
	ns_path(path, sizeof(path), pid);
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0)
		return -errno;
	if (fstat(target, &st))
		ret = -errno;
	else if (st.st_ino != ino)
		ret = -ESTALE;
	else if (ino == netns_self())
		ret = fn(ctx);
	else
		ret = run_in(target, fn, ctx);
	close(target);
	return ret;
}

int netns_open(pid_t pid)
{
	char path[256];
	int fd;

	ns_path(path, sizeof(path), pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int netns_run_fd(int nsfd, int (*fn)(void *ctx), void *ctx)
{
	return run_in(nsfd, fn, ctx);
}

static int nothing(void *ctx)
{
	return 0;
}

int netns_check_enter(pid_t pid)
{
	return netns_run(pid, nothing, NULL);
}
