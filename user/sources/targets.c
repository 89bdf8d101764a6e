// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Targets beyond a pid list: --comm NAME (every process of that name) and
 * --cgroup PATH (every process in that cgroup v2 directory or below).
 * Checked when parsed, so bad input fails before anything is done; the
 * processes that match now are listed from /proc and the cgroup's
 * cgroup.procs files; those that match later are the BPF side's
 * (sched_process_fork/exec, task_rename, under-cgroup checks). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "grow.h"
#include "procfs.h"
#include "targets.h"
#include "text_wrap.h"

int targets_parse_comm(struct target_sel *t, const char *arg)
{
	size_t len = strlen(arg);

	if (!len || len > TARGET_COMM_MAX) {
		text_err("connscope: --comm '%s': a process name is 1 to %d bytes (the "
			 "kernel keeps no more of it): give its first %d bytes, as "
			 "/proc/PID/comm shows them (e.g. --comm %.*s)\n", arg, TARGET_COMM_MAX,
			TARGET_COMM_MAX, TARGET_COMM_MAX, len ? arg : "nginx");
		return -1;
	}
	if (t->ncomms == TARGET_MAX_COMMS) {
		text_err("connscope: --comm: at most %d names\n", TARGET_MAX_COMMS);
		return -1;
	}
	for (size_t i = 0; i < t->ncomms; i++)
		if (!strcmp(t->comms[i], arg))
			return 0;
	snprintf(t->comms[t->ncomms++], sizeof(t->comms[0]), "%s", arg);
	return 0;
}

/* The cgroup v2 mount point, from /proc/self/mountinfo ("" if none). */
void targets_cgroup2_mount(char *buf, size_t len)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	buf[0] = '\0';
	if (!f)
		return;
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPER" */
	while (getline(&line, &cap, f) > 0) {
		char mnt[PATH_MAX], *dash = strstr(line, " - ");

		if (!dash || strncmp(dash + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
			snprintf(buf, len, "%s", mnt);
			break;
		}
	}
	free(line);
	fclose(f);
}

static bool is_cgroup2_dir(const char *path)
{
	struct statfs fs;
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode) && !statfs(path, &fs) &&
	       fs.f_type == CGROUP2_SUPER_MAGIC;
}

int targets_parse_cgroup(struct target_sel *t, const char *arg)
{
	char mnt[PATH_MAX], path[PATH_MAX];

	targets_cgroup2_mount(mnt, sizeof(mnt));
	/* A directory under the mount, or a path as /proc/PID/cgroup shows
	 * it (relative to the mount). */
	snprintf(path, sizeof(path), "%s", arg);
	if (!is_cgroup2_dir(path) && mnt[0] &&
	    snprintf(path, sizeof(path), "%s/%s", mnt, arg[0] == '/' ? arg + 1 : arg) >=
		    (int)sizeof(path))
		path[0] = '\0';	/* too long for a path: not a directory */
	if (!arg[0] || !is_cgroup2_dir(path)) {
		text_err("connscope: --cgroup '%s': not a cgroup v2 directory: give a "
			 "directory under the cgroup2 mount%s%s (e.g. %s/system.slice/"
			 "nginx.service), or the path /proc/PID/cgroup shows after \"0::\"\n",
			arg, mnt[0] ? " " : " (none is mounted: mount -t cgroup2 none DIR)",
			mnt[0] ? mnt : "", mnt[0] ? mnt : "/sys/fs/cgroup");
		return -1;
	}
	if (t->cgroup_path) {
		text_err("connscope: --cgroup: one cgroup at a time (it may have "
			 "children: they are included)\n");
		return -1;
	}
	/* One spelling from here on, as the mount and /proc/PID/cgroup give
	 * it: absolute, no trailing slash, no "." or "..", no symlink (the
	 * reports show it; "CG/" or a relative path once got the QUIC wire
	 * programs attached twice). */
	t->cgroup_path = realpath(path, NULL);
	if (!t->cgroup_path) {
		text_err("connscope: --cgroup %s: %s\n", path, strerror(errno));
		return -1;
	}
	t->cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->cgroup_fd < 0) {
		text_err("connscope: --cgroup %s: %s\n", path, strerror(errno));
		free(t->cgroup_path);
		t->cgroup_path = NULL;
		return -1;
	}
	return 0;
}

void targets_free(struct target_sel *t)
{
	if (t->cgroup_path && t->cgroup_fd >= 0)
		close(t->cgroup_fd);
	free(t->cgroup_path);
	t->cgroup_path = NULL;
}

bool targets_cgroup_removed(const struct target_sel *t)
{
	/* A removed cgroup's directory is empty: its files are gone with it. */
	return t->cgroup_path && t->cgroup_fd >= 0 &&
	       faccessat(t->cgroup_fd, "cgroup.procs", F_OK, 0) && errno == ENOENT;
}

int targets_cgroup_reopen(const struct target_sel *t)
{
	int fd, err = 0;

	if (!targets_cgroup_removed(t) || !is_cgroup2_dir(t->cgroup_path))
		return 0;
	fd = open(t->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;	/* removed again meanwhile */
	if (dup3(fd, t->cgroup_fd, O_CLOEXEC) < 0)
		err = -errno;
	close(fd);
	if (err)
		return err;
	/* Removed again before it was held: as if never seen. */
	return targets_cgroup_removed(t) ? 0 : 1;
}

static bool add_pid(pid_t *pids, size_t *n, size_t max, pid_t pid)
{
	for (size_t i = 0; i < *n; i++)
		if (pids[i] == pid)
			return true;
	if (*n == max)
		return false;
	pids[(*n)++] = pid;
	return true;
}

/* cgroup.procs of dir and of every cgroup below it. */
static void scan_cgroup(const char *dir, pid_t *pids, size_t *n, size_t max, int depth)
{
	char path[PATH_MAX], *line = NULL;
	struct dirent *de;
	size_t cap = 0;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (f) {
		while (getline(&line, &cap, f) > 0)
			add_pid(pids, n, max, atoi(line));
		fclose(f);
	}
	free(line);
	if (depth > 32 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		scan_cgroup(path, pids, n, max, depth + 1);
	}
	closedir(d);
}

bool targets_comm_matches(const struct target_sel *t, const char *comm)
{
	for (size_t i = 0; i < t->ncomms; i++)
		if (!strcmp(t->comms[i], comm))
			return true;
	return false;
}

size_t targets_scan(const struct target_sel *t, pid_t *pids, size_t n, size_t max)
{
	if (t->ncomms) {
		DIR *d = opendir(procfs_root);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			struct proc_ident id;
			pid_t pid = atoi(de->d_name);

			if (pid <= 0 || procfs_read_ident(pid, &id) || procfs_pid_gone(pid))
				continue;
			if (targets_comm_matches(t, id.comm))
				add_pid(pids, &n, max, pid);
		}
		if (d)
			closedir(d);
	}
	if (t->cgroup_path)
		scan_cgroup(t->cgroup_path, pids, &n, max, 0);
	return n;
}

struct pid_parent {
	pid_t pid, ppid;
};

static bool in_set(const pid_t *set, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == pid)
			return true;
	return false;
}

size_t targets_descendants(const pid_t *roots, size_t nroots, pid_t *out, size_t max)
{
	struct pid_parent *all = NULL;
	size_t nall = 0, cap = 0, n = 0;
	DIR *d = opendir(procfs_root);
	struct dirent *de;
	bool grew = true;

	while (d && (de = readdir(d))) {
		struct proc_ident id;
		pid_t pid = atoi(de->d_name);

		if (pid <= 0 || procfs_read_ident(pid, &id) || procfs_pid_gone(pid))
			continue;
		if (grow_room((void **)&all, &cap, nall, 1, sizeof(*all), 512))
			break;
		all[nall++] = (struct pid_parent){ .pid = pid, .ppid = id.ppid };
	}
	if (d)
		closedir(d);
	/* Generation by generation: a child of a root, then its children. */
	while (grew && n < max) {
		grew = false;
		for (size_t i = 0; i < nall && n < max; i++) {
			if (in_set(roots, nroots, all[i].pid) || in_set(out, n, all[i].pid))
				continue;
			if (in_set(roots, nroots, all[i].ppid) || in_set(out, n, all[i].ppid)) {
				out[n++] = all[i].pid;
				grew = true;
			}
		}
	}
	free(all);
	return n;
}
