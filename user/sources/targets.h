/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Targets by name (--comm) and by cgroup v2 directory (--cgroup): parsing
 * with one clear message per bad value, and the processes matching now. */
#ifndef CONNSCOPE_TARGETS_H
#define CONNSCOPE_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TARGET_COMM_MAX 15	/* TASK_COMM_LEN - 1: the kernel keeps no more */
#define TARGET_MAX_COMMS 16

struct target_sel {
	char comms[TARGET_MAX_COMMS][16];
	size_t ncomms;
	char *cgroup_path;	/* the cgroup v2 directory, NULL: none */
	int cgroup_fd;		/* open on it while cgroup_path is set */
	/* --container: the cgroup above is its; its label (name, else short
	 * id) and full id, "" without --container. */
	char container[128];
	char container_id[65];
};

/* --comm NAME (repeatable): 0, or -1 after saying why. */
int targets_parse_comm(struct target_sel *t, const char *arg);
/* --cgroup PATH: a directory on a cgroup2 mount, or a path relative to the
 * mount as /proc/PID/cgroup shows it. 0, or -1 after saying why. */
int targets_parse_cgroup(struct target_sel *t, const char *arg);
void targets_free(struct target_sel *t);
/* The cgroup v2 mount point, from /proc/self/mountinfo ("" if none). */
void targets_cgroup2_mount(char *buf, size_t len);
/* The --cgroup directory was removed (rmdir: the container or unit is
 * gone). Asked of the directory held open, so a rename is no removal. */
bool targets_cgroup_removed(const struct target_sel *t);
/* The --cgroup directory held open was removed and a cgroup v2 directory
 * is at its path again (a unit or container restarted: a new cgroup, a new
 * id): the new one is held instead, under the same fd number (so whoever
 * holds that number, targets_free() too, stays right). 1 when so; 0 when
 * not (the one held is still there, or nothing is at the path); -errno
 * when the new one cannot be opened. */
int targets_cgroup_reopen(const struct target_sel *t);

static inline bool targets_any(const struct target_sel *t)
{
	return t->ncomms || t->cgroup_path;
}

bool targets_comm_matches(const struct target_sel *t, const char *comm);

/* Appends the processes that match now to pids[0..n) (each once, up to
 * max); returns the new count. */
/* --children: the descendants of roots (nroots pids) living now, however
 * deep, from /proc's parent links; written to out (at most max), their
 * number returned. Those forked later are the BPF side's
 * (sched_process_fork). */
size_t targets_descendants(const pid_t *roots, size_t nroots, pid_t *out, size_t max);

size_t targets_scan(const struct target_sel *t, pid_t *pids, size_t n, size_t max);

#endif
