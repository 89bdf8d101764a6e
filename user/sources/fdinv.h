/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* File descriptor inventory of one process from /proc, without forking and
 * without a stat per fd where the link text is enough, plus its fd limits.
 *
 * Cost per fd: one readlinkat on /proc/PID/fd. On top of that, only where
 * the text cannot tell:
 *   - a path ("/..."): one statx(STATX_TYPE) through the magic link to tell
 *     file/dir/chr/blk/fifo apart (memfd is told by its "/memfd:" text);
 *   - a socket: the caller's sock_kind callback if any (no syscall), else
 *     one getxattr("system.sockprotoname") per distinct socket for its
 *     protocol; TCP sockets then get their state from /proc/PID/net/tcp and
 *     tcp6, read once per scan and only until every wanted inode is found.
 *     Only when getxattr fails are all of /proc/PID/net/{tcp,tcp6,udp,udp6,
 *     unix,netlink} read. The tables cost every socket of the namespace (a
 *     page of rows per read(), and udp re-walks its hash on each read), the
 *     getxattr only the process's own: hence this order;
 *   - FDINV_FDINFO: one open+read+close of /proc/PID/fdinfo/N per fd.
 * FDINV_NO_PROBE drops the statx and getxattr calls: readlinkat only. */
#ifndef CONNSCOPE_FDINV_H
#define CONNSCOPE_FDINV_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "fd_view.h"


/* Called once per distinct socket inode of the process. Return
 * FDINV_SOCK(...) for a socket it knows, or a negative value for one it
 * does not: the scan's own fallback then decides. A caller with a sock_diag
 * dump (TCP only, in its own netns) returns FDINV_SOCK(FDT_TCP, s->state)
 * for the inodes it holds and -1 for the rest. */
typedef int (*fdinv_sock_kind_fn)(uint32_t inode, void *ctx);

enum {
	FDINV_RECORDS	= 1u << 0,	/* fill inv->fds, one record per fd */
	FDINV_FDINFO	= 1u << 1,	/* records get pos/flags; implies RECORDS */
	FDINV_LINKS	= 1u << 2,	/* records keep the link text; implies RECORDS */
	FDINV_NO_NET_TABLES = 1u << 3,	/* no /proc/PID/net reads: only the callback
					 * and getxattr classify sockets; TCP named
					 * by getxattr has state 0 (unknown) */
	FDINV_NO_PROBE	= 1u << 4,	/* readlinkat only: paths are guessed from the
					 * text ("/dev/..." chr, else file), sockets
					 * nobody knows are other_socket */
};

struct fdinv_opts {
	unsigned int flags;		/* FDINV_* */
	fdinv_sock_kind_fn sock_kind;	/* optional */
	void *sock_ctx;
	/* Optional: called every FDINV_PROGRESS_EVERY fds, so a caller can
	 * drain its ring buffers while 100k fds are read (~0.5 s). */
	void (*progress)(void *ctx);
	void *progress_ctx;
};

#define FDINV_PROGRESS_EVERY 1024


/* Inventory of pid's fds under procfs_root (see procfs.h); o may be NULL.
 * inv is overwritten (free an earlier result first). Returns 0, -ENOENT when
 * the process does not exist or exits during the scan, -EACCES when its fds
 * are not ours to read, -EINVAL for pid <= 0, other -errno. On error inv
 * holds nothing to free. Threads share the fd table: pass the tgid. An fd
 * closed while the scan runs is not counted. A scan of oneself counts the
 * two or three directory fds the scan holds open. */
int fdinv_scan(pid_t pid, struct fd_inventory *inv, const struct fdinv_opts *o);
void fdinv_free(struct fd_inventory *inv);

/* Classification of a readlink text alone (len bytes, no NUL needed).
 * Sockets come back as FDT_OTHER_SOCKET and paths as FDT_FILE: *needs
 * is set to what would refine them (FDINV_NEED_SOCK, FDINV_NEED_STAT), else
 * 0. *ino gets the inode of "socket:[N]" and "pipe:[N]", else 0. */
enum { FDINV_NEED_SOCK = 1, FDINV_NEED_STAT = 2 };
int fdinv_classify_link(const char *link, size_t len, uint64_t *ino, int *needs);
/* st_mode -> FDT_FILE, FDT_DIR, FDT_CHR, FDT_BLK, FDT_PIPE (FIFO), FDT_OTHER. */
int fdinv_type_from_mode(unsigned int mode);
/* "system.sockprotoname" value ("TCP", "UDPv6", "UNIX-STREAM", "NETLINK",
 * ...) -> socket type. */
int fdinv_type_from_protoname(const char *name);


/* 0, -ENOENT (no such process), -EPROTO (no "Max open files" line), other
 * -errno. pid <= 0 fills only the system-wide fields. The system fields are
 * best effort: 0 when /proc/sys/fs is not there (some containers). */
int fdinv_limits(pid_t pid, struct fd_limits *l);

#endif
