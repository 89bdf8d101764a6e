/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Where a run's "sockets now" came from, in words for the reports'
 * source lines: each interval reads every namespace it follows by the
 * census walk (the birth pass's iter/tcp records) or, where that cannot
 * run (its first seconds, before the clock's rate is known; the
 * per-transition mode; a walk that failed), by a sock_diag dump. */
#include <stdio.h>
#include "run_info.h"

const char *run_census_source(const struct run_info *run, char *buf, size_t n)
{
	uint64_t walked = run->census_walked, dumped = run->census_dumped;

	if (!walked)
		return "sock_diag";
	if (!dumped)
		return "the iter/tcp walk of the kernel's socket tables";
	snprintf(buf, n, "the iter/tcp walk of the kernel's socket tables (sock_diag for %llu "
		 "of %llu reads)", (unsigned long long)dumped,
		 (unsigned long long)(walked + dumped));
	return buf;
}

const char *run_census_short(const struct run_info *run)
{
	if (!run->census_walked)
		return "sock_diag";
	return run->census_dumped ? "iter/tcp + sock_diag" : "iter/tcp";
}
