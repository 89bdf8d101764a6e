/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A code site as plain records: one symbolized frame, and the frames of an
 * fd creation site. sources/symbolize.c and fdsites.c fill them; the books
 * keep them and renderers print them with the two namers below. */
#ifndef CONNSCOPE_CODE_SITE_H
#define CONNSCOPE_CODE_SITE_H

#include <stddef.h>
#include <stdint.h>

struct sym_frame {
	uint64_t ip;		/* as given, not adjusted */
	char func[128];		/* "?" when no symbol covers ip */
	/* ip - start of func; with func "?", the address in the ELF's own
	 * address space (ip - load bias), what `addr2line -e module` takes */
	uint64_t offset;
	char module[256];	/* basename of the ELF; "" when ip is unmapped */
	char file[256];		/* source file as the line table names it, or "" */
	int line;		/* 0 unknown */
};

#define SITE_MAX_FRAMES 16

struct site_frames {
	struct sym_frame frames[SITE_MAX_FRAMES];
	int n;
	int site_idx;		/* first frame outside libc, the loader and the vDSO */
	const char *method;	/* how the stack was obtained */
};

/* "func+0x1c (module) file.c:42", "? (module+0x1234)", "? (0x1234)":
 * one line for reports and logs. Returns buf. */
char *sym_frame_format(const struct sym_frame *f, char *buf, size_t size);

/* The site frame as "func (file:line)" or "func+0x1c (module)". */
char *fdsite_name(const struct site_frames *f, char *buf, size_t len);

#endif
