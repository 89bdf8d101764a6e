// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The QUIC wire unit's attach points (quic_cgroups.h): one BPF link a
 * program and cgroup (bpf_program__attach_cgroup: multi-attach, beside
 * anyone else's programs there, gone when we exit however we exit). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cgroup_v2path.h"
#include "procfs.h"
#include "quic_cgroups.h"

int quic_find_cgroup2(char *path, size_t len)
{
	char line[4096], root[PATH_MAX], mnt[PATH_MAX];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	/* "36 25 0:30 / /sys/fs/cgroup/unified rw,... shared:9 - cgroup2 cgroup2 rw" */
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");
		char fstype[64];

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2)
			continue;
		/* Only a mount of the hierarchy's root sees every process. */
		if (strcmp(root, "/"))
			continue;
		snprintf(path, len, "%s", mnt);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

int quic_cgroups_init(struct quic_cgroups *c)
{
	memset(c, 0, sizeof(*c));
	return quic_find_cgroup2(c->mount, sizeof(c->mount));
}

static void point_free(struct qc_point *p)
{
	for (int i = 0; i < QC_PROGS; i++)
		bpf_link__destroy(p->links[i]);
	free(p->path);
	memset(p, 0, sizeof(*p));
}

static void point_drop(struct quic_cgroups *c, int i)
{
	point_free(&c->pts[i]);
	c->pts[i] = c->pts[--c->n];
	memset(&c->pts[c->n], 0, sizeof(c->pts[c->n]));
	c->replaced++;
}

/* Still the directory it was attached to: not removed (and made again). */
static bool point_live(const struct qc_point *p)
{
	struct stat st;

	return !stat(p->path, &st) && (uint64_t)st.st_ino == p->ino && st.st_dev == p->dev;
}

/* The inodes (cgroup ids) of the directory at path and of each directory
 * above it, up to the root of its hierarchy (where ".." leaves the file
 * system, or is the directory itself), into inos[], the directory first;
 * its device into *dev. Ancestors by identity, not by spelling: a trailing
 * slash, a relative path, "..", a symlink name the same cgroup (a string
 * compare once took "CG/" for another cgroup than "CG/sub"'s parent: the
 * programs on both, every datagram counted twice). Count, or -errno. */
static int lineage(const char *path, uint64_t inos[QC_MAX_DEPTH], dev_t *dev)
{
	struct stat st, up;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0, e = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		e = -errno;
		close(fd);
		return e;
	}
	*dev = st.st_dev;
	for (;;) {
		int pfd;

		if (n == QC_MAX_DEPTH) {
			e = -ELOOP;
			break;
		}
		inos[n++] = st.st_ino;
		pfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0) {
			e = -errno;
			break;
		}
		close(fd);
		fd = pfd;
		if (fstat(fd, &up)) {
			e = -errno;
			break;
		}
		if (up.st_dev != *dev || up.st_ino == st.st_ino)
			break;
		st = up;
	}
	close(fd);
	return e ? e : n;
}

static bool holds(const uint64_t *inos, int n, uint64_t ino)
{
	for (int i = 0; i < n; i++)
		if (inos[i] == ino)
			return true;
	return false;
}

static int attach_at(int cg, const char *path, struct bpf_program *prog, struct bpf_link **l,
		     char *err, size_t errlen)
{
	int e;

	*l = bpf_program__attach_cgroup(prog, cg);
	if (*l)
		return 0;
	e = errno;
	snprintf(err, errlen, "cannot attach %s to %s: %s", bpf_program__name(prog), path,
		 strerror(e));
	return -e;
}

int quic_cgroups_cover(struct quic_cgroups *c, const char *path, struct bpf_program **progs,
		       char *err, size_t errlen)
{
	uint64_t inos[QC_MAX_DEPTH];
	struct qc_point p = {};
	struct stat st;
	bool swapped = false;
	int cg, e = 0, depth;
	dev_t dev;

	depth = lineage(path, inos, &dev);
	if (depth < 0) {
		snprintf(err, errlen, "cannot open %s or a directory above it: %s", path,
			 strerror(-depth));
		return depth;
	}
	for (int i = 0; i < c->n; i++)
		if (c->pts[i].dev == dev && holds(inos, depth, c->pts[i].ino) &&
		    point_live(&c->pts[i]))
			return 0;
	if (c->n >= QC_MAX_POINTS) {
		snprintf(err, errlen, "more than %d cgroups to attach to", QC_MAX_POINTS);
		return -E2BIG;
	}
	cg = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0 || fstat(cg, &st)) {
		e = errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		if (cg >= 0)
			close(cg);
		return -e;
	}
	p.ino = st.st_ino;
	p.dev = st.st_dev;
	for (int i = 0; i < QC_PROGS && !e; i++)
		if (progs[i])
			e = attach_at(cg, path, progs[i], &p.links[i], err, errlen);
	close(cg);
	/* Kept as one spelling, the canonical one: for the reports, and
	 * for point_live whatever the current directory. */
	p.path = e ? NULL : realpath(path, NULL);
	if (!e && !p.path) {
		e = -errno;
		snprintf(err, errlen, "cannot resolve %s: %s", path, strerror(-e));
	}
	if (e) {
		point_free(&p);
		return e;
	}
	/* On here first, then off below: a socket below may run a program
	 * twice for that moment, never none (counted: swaps). Removed
	 * directories go too. */
	for (int i = 0; i < c->n;) {
		uint64_t up[QC_MAX_DEPTH];
		dev_t d;
		int m = point_live(&c->pts[i]) ? lineage(c->pts[i].path, up, &d) : -ENOENT;

		if (m >= 0 && !(d == p.dev && holds(up, m, p.ino))) {
			i++;
			continue;
		}
		if (m >= 0)
			swapped = true;
		point_drop(c, i);
	}
	c->swaps += swapped;
	c->pts[c->n++] = p;
	return 1;
}

int quic_cgroups_add_prog(struct quic_cgroups *c, int slot, struct bpf_program *prog,
			  char *err, size_t errlen)
{
	int e = 0, i;

	for (i = 0; i < c->n && !e; i++) {
		int cg;

		if (c->pts[i].links[slot])
			continue;
		cg = open(c->pts[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg < 0) {
			e = -errno;
			snprintf(err, errlen, "cannot open %s: %s", c->pts[i].path, strerror(-e));
			break;
		}
		e = attach_at(cg, c->pts[i].path, prog, &c->pts[i].links[slot], err, errlen);
		close(cg);
	}
	if (e)
		quic_cgroups_drop_prog(c, slot);
	return e;
}

void quic_cgroups_drop_prog(struct quic_cgroups *c, int slot)
{
	for (int i = 0; i < c->n; i++) {
		bpf_link__destroy(c->pts[i].links[slot]);
		c->pts[i].links[slot] = NULL;
	}
}

int quic_cgroups_of_pid(const struct quic_cgroups *c, pid_t pid, char *path, size_t len)
{
	char text[8192], rel[4096];
	int err = procfs_read_pid_file(pid, "cgroup", text, sizeof(text));

	if (err < 0)
		return err;
	err = cgroup_v2_rel(text, rel, sizeof(rel));
	if (err == -ENOENT)
		return -EXDEV;	/* no v2 line: nothing to resolve */
	if (err)
		return err;
	if (snprintf(path, len, "%s%s", c->mount, strcmp(rel, "/") ? rel : "") >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

void quic_cgroups_format(const struct quic_cgroups *c, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < c->n; i++) {
		int w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", c->pts[i].path);

		if (w < 0 || (size_t)w >= len - off) {
			if (len > 4)
				strcpy(buf + len - 4, "...");
			return;
		}
		off += w;
	}
}

void quic_cgroups_free(struct quic_cgroups *c)
{
	for (int i = 0; i < c->n; i++)
		point_free(&c->pts[i]);
	c->n = 0;
}
