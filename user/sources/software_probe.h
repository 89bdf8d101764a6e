/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What /proc shows of a process that tells its software (books/software.h):
 * its comm, its executable's name, the libraries it maps, and whether the
 * executable is a Go binary (a .go.buildinfo section). */
#ifndef CONNSCOPE_SOFTWARE_PROBE_H
#define CONNSCOPE_SOFTWARE_PROBE_H

#include <sys/types.h>
#include "software.h"

/* Fills h; 0, or -errno when the process is gone (h then holds what was
 * read before, the comm at least if that was). */
int software_probe(pid_t pid, struct sw_hints *h);

/* The executable of pid: its base name into base (len bytes, cut) and its
 * whole path hashed into *id (never 0). 0 or -errno (gone). */
int software_exe(pid_t pid, char *base, size_t len, uint32_t *id);
/* software_probe + sw_classify; SW_UNKNOWN when gone or unknown. */
enum sw_kind software_of(pid_t pid);

#endif
