/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Where the QUIC wire unit's cgroup programs are attached: the cgroup v2
 * directories of the targets, not the root, so they run for the targets'
 * sockets and packets only (#23: nothing that runs for the rest of the
 * machine). A program attached at a cgroup runs for everything below it
 * too, so the set never holds a directory and one of its ancestors: a
 * socket there would run the program twice and be counted twice. */
#ifndef CONNSCOPE_QUIC_CGROUPS_H
#define CONNSCOPE_QUIC_CGROUPS_H

#include <stdint.h>
#include <sys/types.h>
#include <bpf/libbpf.h>

#define QC_MAX_POINTS 32
/* The programs, in the order of quic_cgroups_cover's progs[]:
 * sock_create, sock_release, egress, ingress. */
#define QC_PROGS 4
/* Directories from a point up to the root, at most (deeper: -ELOOP). */
#define QC_MAX_DEPTH 128

struct qc_point {
	char *path;			/* canonical (realpath), under a mount of the hierarchy */
	uint64_t ino;			/* the directory's inode: its cgroup id */
	dev_t dev;			/* ... on this mount of the hierarchy */
	struct bpf_link *links[QC_PROGS];	/* NULL: that program not on here */
};

struct quic_cgroups {
	char mount[4096];		/* the cgroup v2 mount: the root */
	struct qc_point pts[QC_MAX_POINTS];
	int n;
	uint64_t replaced;		/* points dropped for an ancestor or a new directory */
	/* Points added that replaced points below them: each time, for the
	 * moment between the attach above and the detach below, a packet
	 * there ran the programs twice (counted twice). */
	uint64_t swaps;
};

/* Mount point of the cgroup v2 hierarchy (a mount of its root), from
 * /proc/self/mountinfo; 0 or -ENOENT. */
int quic_find_cgroup2(char *path, size_t len);
/* The mount from /proc/self/mountinfo; 0 or -ENOENT (none mounted). */
int quic_cgroups_init(struct quic_cgroups *c);
/* The programs progs[i] that are not NULL on at path (any spelling: the
 * cgroups are compared by identity, inode and device, walking ".." up),
 * unless path or an ancestor of it is in the set already; points below
 * path are dropped once it is on (for a moment both run: the links are
 * made first, so no packet goes unseen, but one there may be counted
 * twice: counted in swaps). A point whose directory was removed and made again
 * (a new inode) is made again. 1: attached; 0: covered already; -errno
 * with err saying what failed (nothing is changed then). */
int quic_cgroups_cover(struct quic_cgroups *c, const char *path, struct bpf_program **progs,
		       char *err, size_t errlen);
/* One more program (slot) on at every point. 0, or -errno with err saying
 * where it failed: then it is on nowhere. */
int quic_cgroups_add_prog(struct quic_cgroups *c, int slot, struct bpf_program *prog,
			  char *err, size_t errlen);
/* That program off everywhere. */
void quic_cgroups_drop_prog(struct quic_cgroups *c, int slot);
/* pid's cgroup v2 directory (absolute), from /proc/PID/cgroup. 0; -ENOENT /
 * -ESRCH: the process is gone; -EXDEV: a path this agent cannot resolve
 * (outside its cgroup namespace), or no v2 line; -ENAMETOOLONG. */
int quic_cgroups_of_pid(const struct quic_cgroups *c, pid_t pid, char *path, size_t len);
/* The points as "A, B" into buf (cut with "..." when too long). */
void quic_cgroups_format(const struct quic_cgroups *c, char *buf, size_t len);
/* Every link destroyed, the set emptied. */
void quic_cgroups_free(struct quic_cgroups *c);

#endif
