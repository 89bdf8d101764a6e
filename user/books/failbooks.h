/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* How connections failed, per process and endpoint: connects refused,
 * timed out or failed otherwise, resets received and sent. Books only:
 * called by the aggregator at a connection's CLOSE event. */
#ifndef CONNSCOPE_FAILBOOKS_H
#define CONNSCOPE_FAILBOOKS_H

#include "tcp_books_types.h"

/* The connection c of p reached CLOSE from state old (event e). */
void failbooks_close(struct proc_books *p, const struct conn *c, uint8_t old,
		     const struct cs_event *e);

#endif
