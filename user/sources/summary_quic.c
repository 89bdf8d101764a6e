// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* UDP sockets per process and the QUIC libraries they map. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exe_quic.h"
#include "grow.h"
#include "procfs.h"
#include "quic_tracer.h"
#include "sockdiag.h"
#include "summary_quic.h"

/* QUIC stacks loaded as shared libraries; the first match names it. */
static const char *const quic_libs[] = {
	"/libngtcp2.so", "/libquiche.so", "/libmsquic.so", "/liblsquic.so", "/libquicly.so",
	"/libxquic.so", "/libs2n_quic",
};

/* No QUIC library mapped: one compiled into the executable (quic-go in a
 * Go binary, a C stack linked statically). */
static int exe_quic_library(pid_t pid, char *name, size_t len)
{
	char path[PATH_MAX], exe[PATH_MAX];
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%d/exe", procfs_root, pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	err = exe_quic_stack(fd, exe[0] == '/' ? exe : NULL, name, len);
	close(fd);
	return err;
}

int procfs_quic_library(pid_t pid, char *name, size_t len)
{
	char mapped[PATH_MAX], *at, *end;
	int i = procfs_maps_find(pid, quic_libs, sizeof(quic_libs) / sizeof(quic_libs[0]), mapped,
				 sizeof(mapped));

	if (i < 0)
		return exe_quic_library(pid, name, len);
	/* The file name from the library's name on, without " (deleted)". */
	at = strstr(mapped, quic_libs[i]) + 1;
	end = strpbrk(at, " \n");
	if (end)
		*end = 0;
	snprintf(name, len, "%s", at);
	return 0;
}

int quic_kernel_snmp_read(const char *path, struct quic_kernel_snmp *s)
{
	char line[256];
	FILE *f = fopen(path, "re");
	int err = 0;

	memset(s, 0, sizeof(*s));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && s->n < QUIC_SNMP_MAX) {
		unsigned long long v;
		char name[40];

		if (line[0] == '\n')
			continue;
		if (sscanf(line, "%39s %llu", name, &v) != 2) {
			err = -EINVAL;
			break;
		}
		snprintf(s->f[s->n].name, sizeof(s->f[s->n].name), "%s", name);
		s->f[s->n++].value = v;
	}
	fclose(f);
	return err;
}


struct count_ctx {
	const struct inode_map *owners;
	struct udp_view *v;
	size_t cap;
	const pid_t *pids;
	size_t npids;
	int err;
};

static bool wanted(const struct count_ctx *c, pid_t pid)
{
	if (!c->npids)
		return true;
	for (size_t i = 0; i < c->npids; i++)
		if (c->pids[i] == pid)
			return true;
	return false;
}

static int count_one(const struct sd_sock *s, void *arg)
{
	struct count_ctx *c = arg;
	const struct inode_owner *o = s->inode ? inode_map_get(c->owners, s->inode) : NULL;
	struct udp_view *v = c->v;
	size_t i;

	if (!o) {
		v->unattributed += !c->npids;
		return 0;
	}
	if (!wanted(c, o->pid))
		return 0;
	for (i = 0; i < v->n && v->procs[i].pid != o->pid; i++)
		;
	if (i == v->n) {
		if (grow_room((void **)&v->procs, &c->cap, v->n, 1, sizeof(*v->procs), 16)) {
			c->err = -ENOMEM;
			return 1;
		}
		memset(&v->procs[i], 0, sizeof(v->procs[i]));
		v->procs[i].pid = o->pid;
		v->n++;
	}
	v->procs[i].udp++;
	return 0;
}

static int by_count(const void *a, const void *b)
{
	const struct udp_proc *x = a, *y = b;

	if (x->udp != y->udp)
		return x->udp < y->udp ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int udp_view_build(struct udp_view *v, const struct inode_map *owners, const pid_t *pids,
		   size_t npids)
{
	struct count_ctx c = { .owners = owners, .v = v, .pids = pids, .npids = npids };
	int err;

	memset(v, 0, sizeof(*v));
	v->kernel_quic = quic_kernel_present();
	v->has_snmp = !quic_kernel_snmp_read("/proc/net/quic/snmp", &v->snmp);
	err = sockdiag_dump_udp(count_one, &c);
	if (c.err)
		err = c.err;
	if (err < 0)
		return err;
	for (size_t i = 0; i < v->n; i++) {
		struct proc_ident id;

		if (!procfs_read_ident(v->procs[i].pid, &id))
			memcpy(v->procs[i].comm, id.comm, sizeof(v->procs[i].comm) - 1);
		procfs_quic_library(v->procs[i].pid, v->procs[i].quic_lib,
				    sizeof(v->procs[i].quic_lib));
	}
	qsort(v->procs, v->n, sizeof(*v->procs), by_count);
	return 0;
}



