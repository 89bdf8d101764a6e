// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Making a finding and saying its sentences: what every rule file of the
 * doctor (doctor_rules.c, doctor_rules_tw.c) uses (doctor_rules.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "doctor.h"
#include "doctor_rules.h"

void dr_ev(struct finding *f, const char *name, double value, const char *unit,
	   const char *source)
{
	struct dr_evidence *e;

	if (f->nev >= DR_MAX_EVIDENCE)
		return;
	e = &f->ev[f->nev++];
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->unit, sizeof(e->unit), "%s", unit);
	e->value = value;
	e->source = source;
}

struct finding *dr_add(struct finding *out, size_t *n, size_t max, const char *rule,
		       int severity, const struct dr_proc *p, const char *endpoint)
{
	struct finding *f;

	if (*n >= max)
		return NULL;
	f = &out[(*n)++];
	memset(f, 0, sizeof(*f));
	snprintf(f->rule, sizeof(f->rule), "%s", rule);
	f->severity = severity;
	if (p) {
		f->pid = p->pid;
		memcpy(f->comm, p->comm, sizeof(f->comm));
	}
	if (endpoint)
		snprintf(f->endpoint, sizeof(f->endpoint), "%s", endpoint);
	return f;
}

void dr_say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

void dr_human_s(char *buf, size_t len, double s)
{
	if (s < 120)
		snprintf(buf, len, "%.0f s", s);
	else if (s < 7200)
		snprintf(buf, len, "%.0f min", s / 60);
	else
		snprintf(buf, len, "%.1f h", s / 3600);
}

const struct netstat_ns *dr_ns_of(const struct dr_facts *f, pid_t pid)
{
	/* A listener's namespace: the one read through a target's /proc;
	 * with one namespace (the common case) that is it. */
	for (size_t i = 0; i < f->nns; i++)
		if (f->ns[i].pid == pid && f->ns[i].valid)
			return &f->ns[i];
	return f->nns == 1 && f->ns[0].valid ? &f->ns[0] : NULL;
}

double dr_cost_share(const struct agent_cost *c)
{
	if (!c->valid || c->targets_cpu_s < DR_COST_MIN_CPU_S || c->stats_s <= 0 ||
	    c->window_s <= 0)
		return -1;
	return (c->bpf_s / c->stats_s) / (c->targets_cpu_s / c->window_s);
}
