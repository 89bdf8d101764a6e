/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The kernel limits that connection churn runs into, from /proc/sys (of
 * the caller's network namespace, where they are per namespace). */
#ifndef CONNSCOPE_NETLIMITS_H
#define CONNSCOPE_NETLIMITS_H

#include <stdint.h>
#include "kernel_view.h"


/* Reads what it can; a missing file leaves its field 0. Returns 0, or
 * -errno when ip_local_port_range cannot be read. */
int netlimits_read(struct netlimits *l);


#endif
