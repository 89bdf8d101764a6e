// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Loading and attaching the QUIC sources. The wire unit goes on the
 * cgroup v2 directories of the targets (quic_cgroups.h), the root only for
 * --all, --comm, or a target whose cgroup cannot be used; bpf_links (not
 * BPF_PROG_ATTACH) keep it beside other programs there and detach it when
 * we exit, however we exit. The ngtcp2 probes are attached per process,
 * to the library file that process maps. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glob.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include "bpfutil.h"
#include "kfeatures_probe.h"
#include "procfs.h"
#include "quic_tracer.h"
#include "sockdiag.h"
#include "timeutil.h"
#include "quicwire.skel.h"
#include "ngtcp2.skel.h"
#include "pidns.h"
#include "text_wrap.h"

#define IPPROTO_QUIC_NUM 261

static int attach_skb(struct quic_tracer *t, const char *why);

static int on_wire(void *ctx, void *data, size_t size)
{
	struct quic_tracer *t = ctx;
	const struct quic_wire_event *e = data;

	if (size < sizeof(struct quic_wire_event))
		t->books->malformed_events++;
	else if (e->type == QW_EV_UDP_SOCK)
		attach_skb(t, "a traced process made a UDP socket");
	else
		quic_books_wire(t->books, data);
	return 0;
}

static int on_lib(void *ctx, void *data, size_t size)
{
	struct quic_tracer *t = ctx;

	if (size >= sizeof(struct quic_lib_event))
		quic_books_lib(t->books, data);
	else
		t->books->malformed_events++;
	return 0;
}

bool quic_kernel_present(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_QUIC_NUM);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	return access("/proc/net/quic", F_OK) == 0;
}

int quic_find_libngtcp2(pid_t pid, char *path, size_t len)
{
	static const char *const lib[] = { "/libngtcp2.so" };
	char mapped[PATH_MAX];
	int r = procfs_maps_find(pid, lib, 1, mapped, sizeof(mapped));

	if (r < 0)
		return r;
	/* Through the process's root: right in another mount namespace. */
	if (snprintf(path, len, "/proc/%d/root%s", pid, mapped) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

static int attach_lib(struct quic_tracer *t, const char *path, uint64_t *since);

/* The programs to put on a new attach point: cgroup/sock_{create,release}
 * always (they run only when a socket is made or closed), cgroup_skb
 * ingress/egress (every packet) once a traced UDP socket asked for them
 * (attach_skb). */
static void progs_on(const struct quic_tracer *t, struct bpf_program *progs[QC_PROGS])
{
	progs[0] = t->wire->progs.qw_sock_create;
	progs[1] = t->wire->progs.qw_sock_release;
	progs[2] = t->skb_on ? t->wire->progs.qw_egress : NULL;
	progs[3] = t->skb_on ? t->wire->progs.qw_ingress : NULL;
}

/* 1: attached at path; 0: covered already; -errno, err says why. */
static int cover(struct quic_tracer *t, const char *path, char *err, size_t len)
{
	struct bpf_program *progs[QC_PROGS];
	int r;

	progs_on(t, progs);
	r = quic_cgroups_cover(&t->cg, path, progs, err, len);
	if (r > 0)
		quic_cgroups_format(&t->cg, t->cgroup, sizeof(t->cgroup));
	return r;
}

/* One more reason in cgroup_note ("A; B"): the root and why, a target
 * not seen, each the first of its kind, however they come. */
static void note_add(struct quic_tracer *t, const char *what, const char *why)
{
	size_t off = strlen(t->cgroup_note);

	snprintf(t->cgroup_note + off, sizeof(t->cgroup_note) - off, "%s%s%s", off ? "; " : "",
		 what, why);
}

/* The root of the hierarchy: for every process (--all), for processes
 * that may start anywhere (--comm), or where a target's own cgroup cannot
 * be used (said once on stderr: fallback). why is kept for the reports. */
static int cover_root(struct quic_tracer *t, const char *why, bool fallback)
{
	char err[PATH_MAX + 128];
	int r = cover(t, t->cg.mount, err, sizeof(err));

	if (r < 0) {
		text_err("connscope: QUIC on the wire: %s; and at the root: %s\n", why, err);
		return r;
	}
	/* Said once, whatever was noted before it (a target not seen). */
	if (r > 0 && !t->root_said) {
		t->root_said = true;
		if (fallback)
			text_err("connscope: QUIC on the wire: %s: its programs are on the "
				 "cgroup root %s, for every process\n", why, t->cg.mount);
		note_add(t, "on the cgroup root: ", why);
	}
	return 0;
}

int quic_tracer_cover_root(struct quic_tracer *t, const char *why)
{
	return t->wire ? cover_root(t, why, false) : 0;
}

int quic_tracer_cover_cgroup(struct quic_tracer *t, const char *path)
{
	char err[PATH_MAX + 128], why[sizeof(err) + 64];
	int r;

	if (!t->wire)
		return 0;
	r = cover(t, path, err, sizeof(err));
	if (r >= 0)
		return 0;
	snprintf(why, sizeof(why), "%s", err);
	return cover_root(t, why, true);
}

int quic_tracer_cover_pid(struct quic_tracer *t, pid_t pid)
{
	char path[PATH_MAX], err[PATH_MAX + 128], why[sizeof(err) + 96];
	int r = 0;

	if (!t->wire)
		return 0;
	/* Twice: a process that moved, its old cgroup removed in between. */
	for (int tries = 0; tries < 2; tries++) {
		r = quic_cgroups_of_pid(&t->cg, pid, path, sizeof(path));
		if (r == -ENOENT || r == -ESRCH)
			return 0;	/* gone: none of its sockets is left */
		if (r == -EXDEV) {
			/* Not below our mount (the agent in a container with
			 * a cgroup namespace of its own): no cgroup we can
			 * attach to holds it, the root no more than another. */
			snprintf(why, sizeof(why), "the QUIC datagrams of process %d are not seen "
				 "on the wire: its cgroup (/proc/%d/cgroup) is outside this agent's "
				 "cgroup namespace", pid, pid);
			if (t->unseen_pid != pid)	/* once, not at each add */
				text_err("connscope: %s\n", why);
			t->unseen_pid = pid;
			if (!t->unseen_said) {
				t->unseen_said = true;
				note_add(t, "", why);
			}
			return -EXDEV;
		}
		if (r) {
			snprintf(err, sizeof(err), "/proc/%d/cgroup: %s", pid, strerror(-r));
			break;
		}
		r = cover(t, path, err, sizeof(err));
		if (r >= 0)
			return 0;
		if (r != -ENOENT)
			break;
	}
	snprintf(why, sizeof(why), "process %d: %s", pid, err);
	r = cover_root(t, why, true);
	if (r)
		fprintf(stderr, "connscope: the QUIC datagrams of process %d are not seen on the "
				"wire\n", pid);
	return r;
}

static int attach_skb(struct quic_tracer *t, const char *why)
{
	char err[PATH_MAX + 128];
	int e;

	if (!t->wire || t->skb_on)
		return 0;
	e = quic_cgroups_add_prog(&t->cg, 2, t->wire->progs.qw_egress, err, sizeof(err));
	if (!e) {
		e = quic_cgroups_add_prog(&t->cg, 3, t->wire->progs.qw_ingress, err, sizeof(err));
		if (e)
			quic_cgroups_drop_prog(&t->cg, 2);
	}
	if (e) {
		text_err("connscope: QUIC on the wire: %s\n", err);
		return e;
	}
	t->skb_on = true;
	t->skb_since_ns = now_ns();
	t->skb_why = why;
	/* No more requests from sock_create: they are on. */
	t->wire->bss->skb_attached = 1;
	return 0;
}

static int attach_wire(struct quic_tracer *t)
{
	if (quic_cgroups_init(&t->cg)) {
		snprintf(t->wire_error, sizeof(t->wire_error),
			 "no cgroup v2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup/unified)");
		return -ENOENT;
	}
	/* Otherwise at each target's cgroup, as targets are added. */
	if (t->all && cover_root(t, "every process is traced (--all)", false)) {
		snprintf(t->wire_error, sizeof(t->wire_error), "cannot attach at the cgroup root %s",
			 t->cg.mount);
		return -EPERM;
	}
	return 0;
}

/* The wire unit taken down (a load, attach or ring that failed). */
static void quic_tracer_wire_off(struct quic_tracer *t)
{
	quic_cgroups_free(&t->cg);
	quicwire_bpf__destroy(t->wire);
	t->wire = NULL;
}

int quic_tracer_open(struct quic_tracer *t, struct quic_books *books, bool all, int targets_fd,
		     bool system_lib)
{
	char path[PATH_MAX];
	int err;

	memset(t, 0, sizeof(*t));
	t->targets_fd = targets_fd;
	t->books = books;
	t->all = all;
	t->kernel_quic = quic_kernel_present();
	if (!kf_has(kf_plan(NULL), KF_HOOK_CGROUP_SOCK)) {
		snprintf(t->wire_error, sizeof(t->wire_error), "this kernel lacks %s",
			 kf_figure(KF_FIG_QUIC_WIRE)->needs);
		err = -ENOTSUP;
		goto fail;
	}
	t->wire = quicwire_bpf__open();
	if (!t->wire)
		return -errno;
	t->wire->rodata->filter_tgid = !all;
	t->wire->rodata->agent_pidns_ino = pidns_bpf_ino();
	t->wire->rodata->skb_current = kf_has(kf_plan(NULL), KF_HOOK_SKB_CURRENT);
	if (targets_fd >= 0 && (err = bpf_map__reuse_fd(t->wire->maps.qw_targets, targets_fd)))
		goto fail;
	err = quicwire_bpf__load(t->wire);
	if (err) {
		snprintf(t->wire_error, sizeof(t->wire_error),
			 "the wire programs did not load: %s (run with -v for the verifier's log)",
			 strerror(-err));
		goto fail;
	}
	err = attach_wire(t);
	if (err)
		goto fail;
	/* Loaded here, before the caller maps its rings, for the same peak
	 * as the wire unit's (tcp_tracer.h, tracer_map_ring); its ring is
	 * added at the start. */
	if (system_lib && !quic_find_system_libngtcp2(path, sizeof(path)) && attach_lib(t, path, NULL))
		text_err("connscope: cannot attach the libngtcp2 probes to %s\n", path);
	return 0;
fail:
	quic_tracer_wire_off(t);
	return err;
}

int quic_tracer_start(struct quic_tracer *t, struct ring_buffer **rb)
{
	int err;

	t->rb = *rb;
	if (!t->wire)
		return -ENOTSUP;
	if (*rb) {
		err = ring_buffer__add(*rb, bpf_map__fd(t->wire->maps.quic_events), on_wire, t);
	} else {
		*rb = ring_buffer__new(bpf_map__fd(t->wire->maps.quic_events), on_wire, t, NULL);
		err = *rb ? 0 : -errno;
	}
	t->rb = *rb;
	/* The system libngtcp2's probes, loaded at the open. */
	if (!err && t->ng)
		err = ring_buffer__add(*rb, bpf_map__fd(t->ng->maps.lib_events), on_lib, t);
	if (err) {
		snprintf(t->wire_error, sizeof(t->wire_error), "cannot read the QUIC ring buffer: %s",
			 strerror(-err));
		quic_tracer_close(t);
		return err;
	}
	/* Every process is traced: some process on the machine holds a UDP
	 * socket, so the packet programs are needed from the start. */
	if (t->all)
		attach_skb(t, "every process is traced (--all)");
	return 0;
}

bool quic_tracer_wire_on(const struct quic_tracer *t)
{
	return t->wire != NULL;
}

int quic_tracer_skb_now(struct quic_tracer *t, const char *why)
{
	return attach_skb(t, why);
}

bool quic_tracer_skb_on(const struct quic_tracer *t)
{
	return t->skb_on;
}

/* UDP sockets pid holds now: cookie -> owner, so the first datagram a
 * server socket made before us receives is charged to it. */
struct seed_ctx {
	const struct inode_map *inodes;
	int seeds_fd;
	pid_t pid;
	uint32_t n;
	uint32_t failed;	/* not stored: the seed map is full */
	char comm[16];
	uint64_t start_ns;
};

static int seed_one(const struct sd_sock *s, void *arg)
{
	struct seed_ctx *c = arg;
	const struct inode_owner *o = s->inode ? inode_map_get(c->inodes, s->inode) : NULL;
	struct quic_sk_owner owner = { .tgid = c->pid, .flags = QW_OWNER_SEED };

	if (!o || o->pid != c->pid)
		return 0;
	memcpy(owner.comm, c->comm, sizeof(owner.comm));
	owner.start_ns = c->start_ns;
	if (!bpf_map_update_elem(c->seeds_fd, &s->cookie, &owner, BPF_ANY))
		c->n++;
	else
		c->failed++;
	return 0;
}

static int seed_udp(struct quic_tracer *t, pid_t pid)
{
	struct inode_map inodes;
	struct seed_ctx c = { .pid = pid, .seeds_fd = bpf_map__fd(t->wire->maps.qw_seeds) };
	struct proc_ident id;
	int err;

	if (!procfs_read_ident(pid, &id)) {
		memcpy(c.comm, id.comm, sizeof(c.comm) - 1);
		c.start_ns = procfs_start_ns(&id);
	}
	inode_map_init(&inodes);
	err = procfs_scan_pid_sockets(pid, &inodes);
	if (!err) {
		c.inodes = &inodes;
		err = sockdiag_dump_udp(seed_one, &c);
	}
	inode_map_free(&inodes);
	t->seeded += c.n;
	/* A dump or /proc scan that failed seeds nothing: one failure; a
	 * process gone meanwhile is none. */
	t->seed_failed += c.failed + (err && err != -ENOENT && err != -ESRCH);
	/* The UDP sockets pid holds (seeded or not), for the caller. */
	return err ? err : (int)(c.n + c.failed);
}

int quic_find_system_libngtcp2(char *path, size_t len)
{
	static const char *const pats[] = {
		"/usr/lib/*-linux-gnu/libngtcp2.so.*", "/lib/*-linux-gnu/libngtcp2.so.*",
		"/usr/lib64/libngtcp2.so.*", "/usr/lib/libngtcp2.so.*",
		"/usr/local/lib/libngtcp2.so.*",
	};
	int err = -ENOENT;

	for (size_t i = 0; err && i < sizeof(pats) / sizeof(pats[0]); i++) {
		glob_t g;

		if (glob(pats[i], 0, NULL, &g))
			continue;
		/* The soname link and the file are one inode: either will do. */
		if (g.gl_pathc) {
			snprintf(path, len, "%s", g.gl_pathv[0]);
			err = 0;
		}
		globfree(&g);
	}
	return err;
}

static int lib_load(struct quic_tracer *t)
{
	int err;

	if (t->ng)
		return 0;
	t->ng = ngtcp2_bpf__open();
	if (!t->ng)
		return -errno;
	t->ng->rodata->filter_tgid = t->wire ? t->wire->rodata->filter_tgid : true;
	t->ng->rodata->agent_pidns_ino = pidns_bpf_ino();
	if (t->targets_fd >= 0 && (err = bpf_map__reuse_fd(t->ng->maps.ng_targets, t->targets_fd)))
		goto fail;
	err = ngtcp2_bpf__load(t->ng);
	/* Before quic_tracer_start() (the system library at the open), the
	 * start adds the ring. */
	if (!err && t->rb)
		err = ring_buffer__add(t->rb, bpf_map__fd(t->ng->maps.lib_events), on_lib, t);
	if (!err)
		return 0;
fail:
	ngtcp2_bpf__destroy(t->ng);
	t->ng = NULL;
	return err;
}

/* The probes on one library file, once per file whoever maps it; *since
 * (may be NULL) is when they went on. */
static int attach_lib(struct quic_tracer *t, const char *path, uint64_t *since)
{
	struct bpf_program *progs[QT_LIB_PROBES];
	static const char *const funcs[QT_LIB_PROBES] = {
		"ngtcp2_conn_client_new_versioned", "ngtcp2_conn_client_new_versioned",
		"ngtcp2_conn_server_new_versioned", "ngtcp2_conn_server_new_versioned",
		"ngtcp2_conn_handshake_completed", "ngtcp2_conn_del",
		"ngtcp2_conn_initiate_migration", "ngtcp2_conn_initiate_migration",
		"ngtcp2_conn_initiate_immediate_migration",
		"ngtcp2_conn_initiate_immediate_migration",
	};
	static const bool ret[QT_LIB_PROBES] = { 0, 1, 0, 1, 0, 0, 0, 1, 0, 1 };
	struct qt_lib *lib;
	struct stat st;
	int err;

	if (stat(path, &st))
		return -errno;
	for (int i = 0; i < t->nlib; i++)
		if (t->lib[i].dev == st.st_dev && t->lib[i].ino == st.st_ino) {
			if (since)
				*since = t->lib[i].since_ns;
			return 0;
		}
	if (t->nlib >= (int)(sizeof(t->lib) / sizeof(t->lib[0])))
		return -E2BIG;
	err = lib_load(t);
	if (err)
		return err;
	progs[0] = t->ng->progs.ng_client_new;
	progs[1] = t->ng->progs.ng_client_new_ret;
	progs[2] = t->ng->progs.ng_server_new;
	progs[3] = t->ng->progs.ng_server_new_ret;
	progs[4] = t->ng->progs.ng_handshake_completed;
	progs[5] = t->ng->progs.ng_conn_del;
	progs[6] = t->ng->progs.ng_migrate;
	progs[7] = t->ng->progs.ng_migrate_ret;
	progs[8] = t->ng->progs.ng_migrate_now;
	progs[9] = t->ng->progs.ng_migrate_now_ret;

	lib = &t->lib[t->nlib];
	memset(lib, 0, sizeof(*lib));
	lib->dev = st.st_dev;
	lib->ino = st.st_ino;
	snprintf(lib->path, sizeof(lib->path), "%s", path);
	for (int i = 0; i < QT_LIB_PROBES; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = funcs[i], .retprobe = ret[i]);
		struct bpf_link *l = bpf_program__attach_uprobe_opts(progs[i], -1, path, 0, &o);

		if (!l) {
			lib->failed++;
			continue;
		}
		lib->links[lib->nlinks++] = l;
	}
	if (!lib->nlinks)
		return -ENOENT;
	lib->since_ns = now_ns();
	if (since)
		*since = lib->since_ns;
	t->nlib++;
	return 0;
}

bool quic_tracer_lib_on(const struct quic_tracer *t, pid_t pid)
{
	for (int i = 0; i < t->nlib_pids; i++)
		if (t->lib_pids[i] == pid)
			return true;
	return false;
}

int quic_tracer_add_target(struct quic_tracer *t, pid_t pid)
{
	char path[PATH_MAX];
	__u32 key = pid;
	__u8 one = 1;
	int err = 0;

	if (t->wire) {
		/* Its cgroup first: a UDP socket made from now on meets
		 * sock_create, one made before is in the seed's dump. */
		quic_tracer_cover_pid(t, pid);
		err = bpf_map_update_elem(bpf_map__fd(t->wire->maps.qw_targets), &key, &one, BPF_ANY);
		int held = err ? 0 : seed_udp(t, pid);

		/* Held, or not known (a failed dump): on. A process gone
		 * meanwhile holds none. */
		if (held > 0 || (held < 0 && held != -ENOENT && held != -ESRCH))
			attach_skb(t, "a traced process held a UDP socket");
	}
	if (!quic_tracer_lib_on(t, pid) && !quic_find_libngtcp2(pid, path, sizeof(path))) {
		uint64_t since = 0;

		if (attach_lib(t, path, &since)) {
			text_err("connscope: cannot attach the libngtcp2 probes in %d (%s); "
				 "QUIC counts come from the wire only\n", pid, path);
		} else {
			/* The books judge whether they came after its first
			 * connection (a copy of the library probed late). */
			if (t->books)
				quic_books_lib_probes(t->books, pid, since);
			if (t->nlib_pids < QT_MAX_LIB_PROCS)
				t->lib_pids[t->nlib_pids++] = pid;
		}
	}
	return err;
}

void quic_tracer_stats(const struct quic_tracer *t, uint64_t wire[QW_STAT_MAX],
		       uint64_t lib[QN_STAT_MAX])
{
	memset(wire, 0, sizeof(uint64_t) * QW_STAT_MAX);
	memset(lib, 0, sizeof(uint64_t) * QN_STAT_MAX);
	if (t->wire)
		bpf_percpu_sum(bpf_map__fd(t->wire->maps.qw_stats), QW_STAT_MAX, wire);
	if (t->ng)
		bpf_percpu_sum(bpf_map__fd(t->ng->maps.ng_stats), QN_STAT_MAX, lib);
}

void quic_tracer_close(struct quic_tracer *t)
{
	struct bpf_link *links[sizeof(t->lib) / sizeof(t->lib[0]) * QT_LIB_PROBES];
	int n = 0;

	/* Every library's probes at once: each uprobe's detach waits. */
	for (int i = 0; i < t->nlib; i++)
		for (int j = 0; j < t->lib[i].nlinks; j++)
			links[n++] = t->lib[i].links[j];
	bpf_links_destroy(links, n);
	t->nlib = 0;
	t->nlib_pids = 0;
	quic_cgroups_free(&t->cg);
	t->skb_on = false;
	ngtcp2_bpf__destroy(t->ng);
	t->ng = NULL;
	quicwire_bpf__destroy(t->wire);
	t->wire = NULL;
}
