/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Who holds each socket inode: filled from /proc/PID/fd by the sources,
 * read by the books when they join sock_diag's sockets to processes. */
#ifndef CONNSCOPE_INODE_OWNERS_H
#define CONNSCOPE_INODE_OWNERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "hashmap.h"

/* Socket inode -> owning pid (tgid), built from /proc/PID/fd links
 * "socket:[INODE]". An inode held by several processes (fork, SCM_RIGHTS)
 * keeps the lowest pid and is flagged shared. */
struct inode_owner {
	uint32_t inode;
	pid_t pid;
	bool shared;
};

struct inode_map {
	struct hmap m;		/* uint32_t inode -> struct inode_owner */
};

void inode_map_init(struct inode_map *m);
void inode_map_free(struct inode_map *m);
/* Insert or update; returns 0 or -ENOMEM. */
int inode_map_put(struct inode_map *m, uint32_t inode, pid_t pid);
/* The owner of inode, or NULL. */
const struct inode_owner *inode_map_get(const struct inode_map *m, uint32_t inode);
/* How many distinct inodes it holds. */
size_t inode_map_count(const struct inode_map *m);
/* Iteration: for (size_t i = 0; inode_map_next(m, &i, &o); ) ... */
bool inode_map_next(const struct inode_map *m, size_t *iter, const struct inode_owner **o);

#endif
