/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A process's fds as plain records: their types, one fd, the inventory of a
 * /proc listing and the fd limits. sources/fdinv.c fills them; the fd books
 * and every renderer read them. */
#ifndef CONNSCOPE_FD_VIEW_H
#define CONNSCOPE_FD_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include "tcp_state_names.h"

/* Lowercase names (fdinv_type_name) are the JSON keys and Prometheus
 * label values; append only, so that numbers stay stable. */
enum fd_type {
	FDT_TCP,		/* IPv4 and IPv6; see tcp_state[] */
	FDT_UDP,		/* also UDP-Lite */
	FDT_UNIX,
	FDT_NETLINK,
	FDT_OTHER_SOCKET,	/* packet, raw, vsock, ...: not in the tables above */
	FDT_FILE,		/* regular file, also deleted ones */
	FDT_DIR,
	FDT_PIPE,		/* "pipe:[INODE]" and FIFOs opened by path */
	FDT_EVENTFD,
	FDT_EPOLL,
	FDT_TIMERFD,
	FDT_SIGNALFD,
	FDT_INOTIFY,
	FDT_FANOTIFY,
	FDT_PIDFD,
	FDT_MEMFD,		/* "/memfd:NAME (deleted)" */
	FDT_BPF,		/* anon_inode:bpf-map, bpf-prog, bpf_link, btf, ... */
	FDT_ANON_OTHER,		/* other anon_inode: (io_uring, perf_event, ...) */
	FDT_CHR,
	FDT_BLK,
	FDT_OTHER,		/* namespaces ("net:[...]"), O_PATH to a symlink, ... */
	FDT_MAX,
};

/* Whether type is a socket's. By name, not by range: the enum is append
 * only, so a socket type added later lands after FDT_OTHER, and a test
 * `type <= FDT_OTHER_SOCKET` would silently call it a file. No default:
 * -Wswitch (-Wall -Werror) stops the build until a new type is placed. */
static inline bool fdt_is_socket(int type)
{
	if (type < 0 || type >= FDT_MAX)
		return false;
	switch ((enum fd_type)type) {
	case FDT_TCP:
	case FDT_UDP:
	case FDT_UNIX:
	case FDT_NETLINK:
	case FDT_OTHER_SOCKET:
		return true;
	case FDT_FILE:
	case FDT_DIR:
	case FDT_PIPE:
	case FDT_EVENTFD:
	case FDT_EPOLL:
	case FDT_TIMERFD:
	case FDT_SIGNALFD:
	case FDT_INOTIFY:
	case FDT_FANOTIFY:
	case FDT_PIDFD:
	case FDT_MEMFD:
	case FDT_BPF:
	case FDT_ANON_OTHER:
	case FDT_CHR:
	case FDT_BLK:
	case FDT_OTHER:
	case FDT_MAX:
		return false;
	}
	return false;
}

/* "tcp", "udp", ..., "other"; "unknown" out of range. */
const char *fdinv_type_name(int type);

/* tcp_state[] index: 1..11 are CS_TCP_ESTABLISHED..CS_TCP_CLOSING, 0 counts
 * TCP sockets whose state nobody told (a callback that gave none, MPTCP,
 * FDINV_NO_NET_TABLES). */
#define FDINV_TCP_STATES (CS_TCP_CLOSING + 1)

/* What a sock_kind callback returns for a socket it knows: the type, and
 * for FDT_TCP the state (CS_TCP_*). */
#define FDINV_SOCK(type, tcp_state) ((int)(type) | ((int)(tcp_state) << 8))
#define FDINV_SOCK_TYPE(kind) ((kind) & 0xff)
#define FDINV_SOCK_STATE(kind) (((kind) >> 8) & 0xff)

struct fdinv_fd {
	int fd;
	uint8_t type;		/* enum fd_type */
	uint8_t tcp_state;	/* FDT_TCP: CS_TCP_*, 0 unknown */
	uint8_t has_fdinfo;	/* pos and flags are valid */
	uint8_t mptcp;		/* FDT_TCP: an MPTCP socket, which no TCP
				 * table or sock_diag TCP dump holds */
	uint64_t ino;		/* socket/pipe inode from the link, st_ino of a
				 * stat'ed path, else 0 */
	int64_t pos;		/* fdinfo "pos" */
	uint32_t flags;		/* fdinfo "flags": O_ACCMODE, O_APPEND,
				 * O_NONBLOCK, O_CLOEXEC, ... */
	char *link;		/* FDINV_LINKS: the readlink text, else NULL */
};

struct fd_inventory {
	pid_t pid;
	pid_t tid;		/* the task whose fd table was read: pid, or a
				 * live thread when the leader is a zombie */
	uint64_t total;
	int max_fd;		/* highest fd number, -1 with no fd */
	uint64_t by_type[FDT_MAX];
	uint64_t tcp_state[FDINV_TCP_STATES];	/* sums to by_type[FDT_TCP] */
	uint64_t cloexec;	/* FDINV_FDINFO only: fds with O_CLOEXEC */
	/* How socket fds were classified, to tell what the scan cost: type
	 * from the callback, type from getxattr, found in a table row (a TCP
	 * socket named by getxattr and then given its state by net/tcp counts
	 * in both of the last two). */
	uint64_t sock_by_callback, sock_by_xattr, sock_by_table;
	unsigned int net_tables_read;	/* how many /proc/PID/net files */
	/* FDINV_RECORDS: in ascending fd order. */
	struct fdinv_fd *fds;
	size_t nr_fds;
};

/* RLIMIT_NOFILE of a process and the system-wide file table. */
struct fd_limits {
	uint64_t soft, hard;	/* /proc/PID/limits "Max open files";
				 * "unlimited" -> UINT64_MAX */
	uint64_t sys_open;	/* fs.file-nr, first field: allocated files */
	uint64_t sys_max;	/* fs.file-max */
};

#endif
