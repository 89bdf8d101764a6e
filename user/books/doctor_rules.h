/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the doctor's rule files (doctor_rules.c, doctor_rules_tw.c) share:
 * making a finding and saying its sentences (doctor_finding.c). */
#ifndef CONNSCOPE_DOCTOR_RULES_H
#define CONNSCOPE_DOCTOR_RULES_H

#include <stddef.h>
#include "doctor.h"

/* A new finding in out[*n] (NULL when out is full), about p (NULL: host
 * wide) and endpoint (NULL: none). */
struct finding *dr_add(struct finding *out, size_t *n, size_t max, const char *rule,
		       int severity, const struct dr_proc *p, const char *endpoint);

void dr_say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "4 min", "35 s", "2.5 h": a time left, for sentences. */
void dr_human_s(char *buf, size_t len, double s);

/* The TcpExt counters of pid's network namespace, NULL unknown. */
const struct netstat_ns *dr_ns_of(const struct dr_facts *f, pid_t pid);

/* TIME_WAIT and ephemeral ports (doctor_rules_tw.c): a client by its own
 * TIME_WAIT, a server by its listener's. */
void dr_rule_time_wait(const struct dr_facts *f, struct finding *out, size_t *n, size_t max);

#endif
