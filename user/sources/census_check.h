/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* CONNSCOPE_CENSUS=check: the census walk's view of a namespace against a
 * sock_diag dump of it, said on stderr (census_check.c). */
#ifndef CONNSCOPE_CENSUS_CHECK_H
#define CONNSCOPE_CENSUS_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kernel_view.h"

/* walked[0..nw): what the walk of pid's namespace (netns) gave, begun at
 * walk_began_ns (now_ns()). */
void census_check(pid_t pid, uint32_t netns, const struct sd_sock *walked, size_t nw,
		  uint64_t walk_began_ns);

#endif
