// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* UDP sockets per process and the QUIC libraries they map. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "quic_tracer.h"
#include "sockdiag.h"
#include "summary_quic.h"

/* QUIC stacks loaded as shared libraries; the first match names it. */
static const char *const quic_libs[] = {
	"/libngtcp2.so", "/libquiche.so", "/libmsquic.so", "/liblsquic.so", "/libquicly.so",
	"/libxquic.so", "/libs2n_quic",
};

int procfs_quic_library(pid_t pid, char *name, size_t len)
{
	char file[64], line[4096 + 128];
	FILE *f;
	int err = -ENOENT;

	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		for (size_t i = 0; i < sizeof(quic_libs) / sizeof(quic_libs[0]); i++) {
			char *at = strstr(line, quic_libs[i]), *end;

			if (!at)
				continue;
			at++;
			end = strpbrk(at, " \n");
			if (end)
				*end = 0;
			snprintf(name, len, "%s", at);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
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

int64_t quic_kernel_snmp_get(const struct quic_kernel_snmp *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].name, name))
			return (int64_t)s->f[i].value;
	return -1;
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
		if (v->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 16;
			struct udp_proc *p = realloc(v->procs, cap * sizeof(*p));

			if (!p) {
				c->err = -ENOMEM;
				return 1;
			}
			v->procs = p;
			c->cap = cap;
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

void udp_view_free(struct udp_view *v)
{
	free(v->procs);
	memset(v, 0, sizeof(*v));
}

void format_udp_view_text(FILE *out, const struct udp_view *v, size_t max, bool header)
{
	size_t shown = max && max < v->n ? max : v->n;
	uint64_t rest = 0;

	fputc('\n', out);
	if (header) {
		fprintf(out, "UDP sockets by process, QUIC libraries mapped (sock_diag + /proc/PID/fd,\n"
			     "  /proc/PID/maps); QUIC connections are counted by `connscope attach`\n");
		fprintf(out, "%-7s %-12s %5s  %s\n", "PID", "COMM", "UDP", "QUIC LIBRARY");
	}
	for (size_t i = 0; i < shown; i++)
		fprintf(out, "%-7d %-12.12s %5u  %s\n", v->procs[i].pid, v->procs[i].comm,
			v->procs[i].udp, v->procs[i].quic_lib[0] ? v->procs[i].quic_lib : "-");
	for (size_t i = shown; i < v->n; i++)
		rest += v->procs[i].udp;
	if (shown < v->n)
		fprintf(out, "%-7s %-12s %5llu  (%zu more processes)\n", "-", "others",
			(unsigned long long)rest, v->n - shown);
	if (v->unattributed)
		fprintf(out, "%-7s %-12s %5u\n", "-", "unattributed", v->unattributed);
	fprintf(out, "in-kernel QUIC: %s\n", v->kernel_quic ? "present (IPPROTO_QUIC)" :
		"absent (no IPPROTO_QUIC sockets, no /proc/net/quic)");
	if (v->has_snmp)
		fprintf(out, "  established now %lld, passive %lld, active %lld "
			     "(/proc/net/quic/snmp)\n",
			(long long)quic_kernel_snmp_get(&v->snmp, "QuicConnCurrentEstabs"),
			(long long)quic_kernel_snmp_get(&v->snmp, "QuicConnPassiveEstabs"),
			(long long)quic_kernel_snmp_get(&v->snmp, "QuicConnActiveEstabs"));
}

void json_udp_view(struct json *j, const struct udp_view *v)
{
	json_key(j, "udp");
	json_object_begin(j);
	json_kv_bool(j, "kernel_quic", v->kernel_quic);
	if (v->has_snmp) {
		json_key(j, "kernel_quic_snmp");
		json_object_begin(j);
		for (size_t i = 0; i < v->snmp.n; i++)
			json_kv_uint(j, v->snmp.f[i].name, v->snmp.f[i].value);
		json_object_end(j);
	}
	json_kv_uint(j, "unattributed", v->unattributed);
	json_key(j, "processes");
	json_array_begin(j);
	for (size_t i = 0; i < v->n; i++) {
		json_object_begin(j);
		json_kv_int(j, "pid", v->procs[i].pid);
		json_kv_string(j, "comm", v->procs[i].comm);
		json_kv_uint(j, "udp_sockets", v->procs[i].udp);
		json_kv_string(j, "quic_library", v->procs[i].quic_lib);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}
