/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The doctor's fixes, said in the words of the software on each side of a
 * connection (software.h), for doctor_rules.c. */
#ifndef CONNSCOPE_DOCTOR_FIXES_H
#define CONNSCOPE_DOCTOR_FIXES_H

#include <stddef.h>
#include "doctor.h"
#include "software.h"

/* "client (pgbench): ...; server (PostgreSQL): ...; in general: GENERIC"
 * for a client of label that should keep pool connections open. */
void dr_fix_for_pool(const struct dr_facts *f, const struct dr_proc *client,
		     const char *label, unsigned pool, const char *generic, char *buf,
		     size_t len);

/* The fix of a TIME_WAIT finding on ep (a remote endpoint for a client, a
 * listener for a server). */
void dr_tw_fix(const struct dr_facts *f, const struct dr_proc *p,
	       const struct dr_endpoint *ep, bool client, char *buf, size_t len);

#endif
