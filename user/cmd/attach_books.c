// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* What attach adds to the books beside the TCP events (attach_books.h):
 * QUIC-only processes and their ends, each process's software, and the
 * worst finding for `connscope run`'s exit status. */
#include <stdlib.h>
#include <string.h>
#include "attach_books.h"
#include "summary_quic.h"
#include "doctor.h"
#include "procfs.h"
#include "software_probe.h"
#include "containers.h"
#include "timeutil.h"

/* Processes seen only through QUIC (a client --children followed that
 * never spoke TCP) get books too, so every report lists them. */
static void quic_join_books(struct agg *a, const struct quic_books *qb)
{
	const struct quic_proc *q;

	for (size_t i = 0; hmap_next(&qb->procs, &i, NULL, (void **)&q);) {
		struct proc_books *p;

		if (agg_find_proc(a, q->pid))
			continue;
		p = agg_proc(a, q->pid);
		if (!p)
			return;
		memcpy(p->comm, q->comm, sizeof(p->comm));
		p->start_ns = q->start_ns;
		p->exited = procfs_pid_gone(q->pid);
	}
}

/* The QUIC stack of each process the QUIC books saw a connection of, as
 * summary names it (the library it maps, else the one compiled into its
 * executable), looked for once while it lives: only QUIC processes pay
 * for reading their executable's ELF sections. */
static void quic_name_stacks(struct quic_books *qb)
{
	const struct quic_proc *q;
	char name[80];

	for (size_t i = 0; qb && hmap_next(&qb->procs, &i, NULL, (void **)&q);) {
		if (q->stack_looked || q->gone || (!q->src[0].connections &&
		    !q->src[1].connections && !q->src[2].connections))
			continue;
		if (procfs_quic_library(q->pid, name, sizeof(name)))
			name[0] = 0;
		quic_books_stack(qb, q->pid, name);
	}
}

/* The run's QUIC facts for the renderers, and books for QUIC-only
 * processes: each interval (the exporter renders then) and at the end. */
void attach_quic_refresh(struct quic_run *q, const struct quic_tracer *t, struct agg *a)
{
	q->wire_on = quic_tracer_wire_on(t);
	q->skb_on = quic_tracer_skb_on(t);
	q->skb_after_s = q->skb_on && t->skb_since_ns > a->t0_ns ?
			 (t->skb_since_ns - a->t0_ns) / 1e9 : 0;
	q->skb_why = t->skb_why;
	q->wire_error = t->wire_error;
	q->cgroup = t->cgroup;
	q->cgroup_note = t->cgroup_note;
	q->cgroup_swaps = t->cg.swaps;
	q->kernel_quic = t->kernel_quic;
	q->seeded = t->seeded;
	q->seed_failed = t->seed_failed;
	q->lib_procs = t->nlib_pids;
	q->lib_files = t->nlib;
	quic_tracer_stats(t, q->wire_stats, q->lib_stats);
	quic_join_books(a, q->books);
	quic_name_stacks(t->books);
}

/* Ends the QUIC connections of processes that are gone. */
void attach_quic_reap(struct quic_books *qb, uint64_t now)
{
	const struct quic_proc *q;
	pid_t gone[256];
	size_t n = 0;

	for (size_t i = 0; n < 256 && hmap_next(&qb->procs, &i, NULL, (void **)&q);)
		if (!q->gone && procfs_pid_gone(q->pid))
			gone[n++] = q->pid;
	for (size_t i = 0; i < n; i++)
		quic_books_proc_gone(qb, gone[i], now);
}

/* The worst finding's severity (enum dr_severity; 0: none), for the exit
 * status of `connscope run --fail-on`. */
int attach_worst_finding(const struct agg *a, const struct run_info *run)
{
	struct finding *f = calloc(DR_MAX_FINDINGS, sizeof(*f));
	int worst = 0;
	size_t n;

	if (!f)
		return 0;
	n = doctor_findings(a, run, f, DR_MAX_FINDINGS, NULL, 0);
	/* agent_cost speaks of the measurement, not of the workload: a load
	 * test's gate is about the workload. */
	for (size_t i = 0; i < n; i++)
		if (f[i].severity > worst && strcmp(f[i].rule, "agent_cost"))
			worst = f[i].severity;
	free(f);
	return worst;
}

/* What software each process is, read while it is alive: the doctor's
 * fixes speak its words. Once, or again after an unknown target's events
 * named the program it exec'd into (fill_ident in tcp_books.c: a wrapper
 * COMMAND of run). A process gone before its first interval is known by
 * its comm alone (doctor_facts.c). */
void attach_identify_software(struct agg *a)
{
	struct proc_books *p;

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		if (p->exited || p->software_probed)
			continue;
		p->software = software_of(p->pid);
		p->software_probed = true;
		software_exe(p->pid, p->exe, sizeof(p->exe), &p->exe_id);
		/* Its parent, if neither its fork nor its joining said it. */
		if (!p->ptgid) {
			struct proc_ident id;

			if (!procfs_read_ident(p->pid, &id) && procfs_start_ns(&id) == p->start_ns)
				p->ptgid = id.ppid;
		}
	}
	agg_inherit_exe(a);
}

static bool pid_gone(pid_t pid)
{
	return procfs_pid_gone(pid);
}

void attach_prune_parents(struct agg *a)
{
	agg_parents_prune(a, pid_gone, now_ns());
}

/* Which container each process is in (its cgroup, the runtime's name for
 * it), once while it is alive: the container and pod_uid labels. */
void attach_identify_containers(struct agg *a)
{
	struct container_ref ref;
	struct proc_books *p;

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		if (p->container_probed || p->exited)
			continue;
		p->container_probed = true;
		if (!container_of_pid(p->pid, &ref))
			continue;
		container_label(&ref, p->container, sizeof(p->container));
		snprintf(p->pod_uid, sizeof(p->pod_uid), "%s", ref.c.pod_uid);
	}
}
