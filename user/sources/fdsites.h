/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Naming the code site that made an fd: DWARF unwinding of the site's
 * stack copy first, the frame-pointer stack second, the return address at
 * the user sp last; the result says which one it came from. */
#ifndef CONNSCOPE_FDSITES_H
#define CONNSCOPE_FDSITES_H

#include "fd_books.h"
#include "fd_tracer.h"
#include "symbolize.h"



/* t may be NULL (no frame-pointer stacks). Always fills out (n may be 0
 * when nothing could be symbolized); returns 0 or -errno. */
int fdsite_resolve(struct symbolizer *sym, struct fd_tracer *t, const struct fd_site *s,
		   struct site_frames *out);


#endif
