/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Readers of /proc: socket counters (sockstat, snmp), process identity and
 * the socket inode -> pid map (what `ss -p` does, without forking). */
#ifndef CONNSCOPE_PROCFS_H
#define CONNSCOPE_PROCFS_H

#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

/* Root of procfs; tests point it at a directory of recorded files. */
extern const char *procfs_root;

/* /proc/net/sockstat + sockstat6 + the Tcp: CurrEstab of /proc/net/snmp:
 * everything `ss -s` prints. Missing lines read as 0. */
struct sockstat {
	uint64_t sockets_used;
	uint64_t tcp_inuse, tcp_orphan, tcp_tw, tcp_alloc, tcp_mem;
	uint64_t udp_inuse, udplite_inuse, raw_inuse, frag_inuse;
	uint64_t tcp6_inuse, udp6_inuse, udplite6_inuse, raw6_inuse, frag6_inuse;
	uint64_t curr_estab;
};

/* Returns 0, or -errno when sockstat cannot be read. */
int procfs_read_sockstat(struct sockstat *st);

/* Identity of a process: comm and start time (field 22 of /proc/PID/stat,
 * clock ticks since boot), so a reused pid is told apart. */
struct proc_ident {
	pid_t pid;
	char comm[16];
	uint64_t start_ticks;
};

/* 0, -ENOENT when the process does not exist, other -errno. */
int procfs_read_ident(pid_t pid, struct proc_ident *id);

/* Gone or a zombie: either way it holds no fds or sockets any more. */
bool procfs_pid_gone(pid_t pid);

/* Clock ticks per second for start_ticks (sysconf(_SC_CLK_TCK)). */
long procfs_clk_tck(void);

/* Socket inode -> owning pid (tgid), built from /proc/PID/fd links
 * "socket:[INODE]". An inode held by several processes (fork, SCM_RIGHTS)
 * keeps the lowest pid and is flagged shared. */
struct inode_owner {
	uint32_t inode;		/* 0 marks an empty slot */
	pid_t pid;
	bool shared;
};

struct inode_map {
	struct inode_owner *slots;
	uint32_t cap;		/* power of two */
	uint32_t count;
};

void inode_map_init(struct inode_map *m);
void inode_map_free(struct inode_map *m);
/* Insert or update; returns 0 or -ENOMEM. */
int inode_map_put(struct inode_map *m, uint32_t inode, pid_t pid);
/* The owner of inode, or NULL. */
const struct inode_owner *inode_map_get(const struct inode_map *m, uint32_t inode);

/* Add the socket inodes held by pid (its /proc/PID/fd, threads share it).
 * 0, -ENOENT when the process is gone, -EACCES, other -errno. */
int procfs_scan_pid_sockets(pid_t pid, struct inode_map *m);

/* Same for every process in /proc; processes that vanish mid-scan are
 * skipped. Returns 0 or -errno when /proc cannot be listed. */
int procfs_scan_all_sockets(struct inode_map *m);

#endif
