/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The QUIC sources on the kernel side: the wire unit (cgroup_skb and
 * cgroup/sock_{create,release} on the targets' cgroup v2 directories),
 * libngtcp2 uprobes in each traced process that maps the library, and the
 * detection of in-kernel QUIC. Events go to a quic_books. */
#ifndef CONNSCOPE_QUICTRACER_H
#define CONNSCOPE_QUICTRACER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "quic_books.h"
#include "quic_cgroups.h"

#define QT_MAX_LIB_PROCS 64
#define QT_LIB_PROBES 10

struct quicwire_bpf;
struct ngtcp2_bpf;

/* One libngtcp2 file with the probes on it (for every process). */
struct qt_lib {
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
	struct bpf_link *links[QT_LIB_PROBES];
	int nlinks;
	int failed;			/* probes that would not attach */
	uint64_t since_ns;		/* when they went on (now_ns) */
};

struct quic_tracer {
	struct quicwire_bpf *wire;
	struct quic_cgroups cg;		/* where its cgroup programs are attached */
	/* cgroup_skb ingress/egress: attached at the first UDP socket a traced
	 * process holds (at start) or makes (QW_EV_UDP_SOCK), never before. */
	bool skb_on;
	uint64_t skb_since_ns;		/* when (now_ns), 0: not attached */
	const char *skb_why;		/* what made them go on */
	char cgroup[PATH_MAX];		/* those cgroups, "A, B" (quic_cgroups_format) */
	/* Why they are not (only) the targets' own: the root and why, and a
	 * target outside our cgroup namespace, the first of each, "A; B";
	 * "": neither. */
	char cgroup_note[2 * PATH_MAX + 768];
	bool root_said;			/* the root's reason is in cgroup_note */
	bool unseen_said;		/* a target not seen is in cgroup_note */
	pid_t unseen_pid;		/* the last target said outside our cgroup namespace */
	struct ngtcp2_bpf *ng;		/* loaded at the first process that maps libngtcp2 */
	struct ring_buffer *rb;		/* the caller's, where the rings are added */
	struct qt_lib lib[8];
	int nlib;
	pid_t lib_pids[QT_MAX_LIB_PROCS];	/* targets seen mapping one of them */
	int nlib_pids;
	int targets_fd;			/* the tcpstate unit's targets map, or -1 */
	bool all;			/* every process is traced (--all) */
	bool kernel_quic;		/* IPPROTO_QUIC sockets can be made here */
	uint32_t seeded;		/* UDP sockets of the targets found at start */
	uint64_t seed_failed;		/* UDP sockets not seeded (map full, dump failed) */
	char wire_error[PATH_MAX + 256];	/* why the wire source is off; "" when on */
	struct quic_books *books;
};

/* Loads and attaches the wire unit and checks for in-kernel QUIC; its
 * ring is read from quic_tracer_start() on. A wire unit that cannot load
 * or attach leaves the tracer usable, with wire_error saying why. 0 or
 * -errno. targets_fd: the tcpstate unit's target map, shared so that
 * children it adds are traced here too (-1: own maps). With system_lib,
 * the probes go on the system's libngtcp2 too, for children that load
 * it later. */
int quic_tracer_open(struct quic_tracer *t, struct quic_books *books, bool all, int targets_fd,
		     bool system_lib);
/* Then (after the caller's other BPF objects are loaded: tcp_tracer.h,
 * tracer_map_ring) its rings into *rb (created when NULL), where the
 * ngtcp2 rings of libraries found later go too; called whether the open
 * succeeded or not. 0 or -errno (wire_error says why). */
int quic_tracer_start(struct quic_tracer *t, struct ring_buffer **rb);
/* Traces pid: the wire filter, its UDP sockets seeded by cookie, and the
 * ngtcp2 probes if it maps libngtcp2. Safe to call again (an exec, a
 * library loaded later): what is already attached stays. */
int quic_tracer_add_target(struct quic_tracer *t, pid_t pid);
/* Where the wire unit's programs run: pid's cgroup v2 directory (at
 * quic_tracer_add_target too: call it early for targets known at start),
 * a directory (--cgroup, --container), or the root with the reason
 * (--comm: a process of that name may start in any cgroup). A cgroup that
 * cannot be used falls back to the root, said once on stderr and in
 * cgroup_note. 0 or -errno (nothing attached for it: said on stderr). */
int quic_tracer_cover_pid(struct quic_tracer *t, pid_t pid);
int quic_tracer_cover_cgroup(struct quic_tracer *t, const char *path);
int quic_tracer_cover_root(struct quic_tracer *t, const char *why);
/* The packet programs on now, for the whole run (targets that join in
 * the kernel, faster than the agent hears of their first UDP socket);
 * why is said in every output. 0 or -errno. */
int quic_tracer_skb_now(struct quic_tracer *t, const char *why);
/* Whether the wire source runs / pid has the ngtcp2 probes. */
bool quic_tracer_wire_on(const struct quic_tracer *t);
/* Whether its per-packet programs (cgroup_skb) are attached yet. */
bool quic_tracer_skb_on(const struct quic_tracer *t);
bool quic_tracer_lib_on(const struct quic_tracer *t, pid_t pid);
/* Per-CPU counter sums: QW_STAT_* and QN_STAT_*. */
void quic_tracer_stats(const struct quic_tracer *t, uint64_t wire[QW_STAT_MAX],
		       uint64_t lib[QN_STAT_MAX]);
void quic_tracer_close(struct quic_tracer *t);

/* Path of the libngtcp2 pid maps (first match of "libngtcp2.so"), from
 * /proc/PID/maps; 0, or -ENOENT when it maps none. */
int quic_find_libngtcp2(pid_t pid, char *path, size_t len);
/* A libngtcp2 in the usual library directories; 0 or -ENOENT. */
int quic_find_system_libngtcp2(char *path, size_t len);
/* Whether this kernel makes IPPROTO_QUIC (261) sockets, or has /proc/net/quic. */
bool quic_kernel_present(void);

#endif
