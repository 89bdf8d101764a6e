/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the parts of the fd inventory share, not for use outside them:
 *   fdinv.c		the scan: /proc/PID/fd, records, zombie leaders
 *   fdinv_classify.c	link texts, st_mode, protocol names, the statx and
 *			getxattr probes through the magic links
 *   fdinv_sockets.c	/proc/PID/net tables for socket types and TCP states
 *   fdinv_limits.c	fd_limits from /proc/PID/limits and /proc/sys/fs */
#ifndef CONNSCOPE_FDINV_INTERNAL_H
#define CONNSCOPE_FDINV_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"

/* Only pointers here: each part includes fdinv.h itself, so this header
 * and fdinv.c (which includes it) do not need each other. */
struct fd_inventory;
struct fdinv_opts;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define NO_REC UINT32_MAX

enum { SRC_NONE, SRC_CALLBACK, SRC_TABLE, SRC_XATTR };

/* Per distinct socket inode. */
struct sock_val {
	int32_t kind;		/* FDINV_SOCK(...), -1 not known yet */
	uint8_t src;		/* what told the type */
	uint8_t want_state;	/* TCP by getxattr, state still to find:
				 * 4 in net/tcp, 6 in net/tcp6 */
	uint8_t in_table;	/* a table row was found for it */
	uint8_t mptcp;		/* getxattr said MPTCP */
};

/* One socket fd, classified once all its inodes are known. */
struct pend {
	uint32_t ino;
	uint32_t rec;		/* index in inv->fds, or NO_REC */
};

struct scan {
	struct fd_inventory *inv;
	const struct fdinv_opts *o;
	unsigned int flags;
	int base;		/* dirfd of /proc/PID or /proc/PID/task/TID */
	const char *base_path;
	struct pend *pend;
	size_t nr_pend, pend_cap;
	size_t rec_cap;
	struct hmap socks;	/* uint32_t inode -> struct sock_val */
	size_t unresolved;	/* socks entries with kind < 0 */
	size_t want4, want6;	/* entries with want_state 4, 6 */
	bool read4, read6;	/* net/tcp, net/tcp6 were read whole */
	char link[PATH_MAX];
};

/* errno of a procfs read -> what fdinv_scan and fdinv_limits return. */
static inline int fdinv_scan_errno(int e)
{
	switch (e) {
	case ESRCH:	/* the task went away under an open procfs file */
		return -ENOENT;
	case EPERM:	/* ptrace access check */
		return -EACCES;
	default:
		return -e;
	}
}

/* Whitespace-separated field n (0-based) of line; NULL past the end. */
static inline const char *fdinv_field(const char *p, int n)
{
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			return NULL;
		if (!n--)
			return p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
	}
}

/* fdinv_classify.c */
int fdinv_guess_path_type(const char *l, size_t len);
int fdinv_stat_type(int fd_dir, const char *name, uint64_t *ino);
int fdinv_xattr_kind(struct scan *s, const char *name, struct sock_val *v);
bool fdinv_fd_gone(int fd_dir, const char *name);

/* fdinv_sockets.c */
void fdinv_resolve_sockets(struct scan *s);

#endif
