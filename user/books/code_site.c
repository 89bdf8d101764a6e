// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "code_site.h"

char *sym_frame_format(const struct sym_frame *f, char *buf, size_t size)
{
	const char *file = strrchr(f->file, '/');
	int n;

	if (!size)
		return buf;
	file = file ? file + 1 : f->file;
	if (strcmp(f->func, "?"))
		n = snprintf(buf, size, "%s+0x%" PRIx64 " (%s)", f->func,
			     f->offset, f->module);
	else if (f->module[0])
		n = snprintf(buf, size, "? (%s+0x%" PRIx64 ")", f->module,
			     f->offset);
	else
		n = snprintf(buf, size, "? (0x%" PRIx64 ")", f->ip);
	if (n >= 0 && (size_t)n < size && file[0]) {
		if (f->line)
			snprintf(buf + n, size - n, " %s:%d", file, f->line);
		else
			snprintf(buf + n, size - n, " %s", file);
	}
	return buf;
}

char *fdsite_name(const struct site_frames *f, char *buf, size_t len)
{
	const struct sym_frame *s;

	if (!f->n) {
		snprintf(buf, len, "unknown site");
		return buf;
	}
	s = &f->frames[f->site_idx];
	if (s->line && s->file[0]) {
		const char *base = strrchr(s->file, '/');

		snprintf(buf, len, "%s (%s:%d)", s->func, base ? base + 1 : s->file, s->line);
	} else {
		snprintf(buf, len, "%s+0x%llx (%s)", s->func, (unsigned long long)s->offset,
			 s->module[0] ? s->module : "?");
	}
	return buf;
}
