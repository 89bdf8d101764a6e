// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#define _GNU_SOURCE	/* vasprintf */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text_wrap.h"

void text_wrap(FILE *out, const char *first, const char *indent, const char *text)
{
	int col = fprintf(out, "%s", first) - (first[0] == '\n');
	const char *w = text;
	bool start = true;

	while (*w) {
		int len = strcspn(w, " ");

		if (!start && col + 1 + len > TEXT_WRAP_COLUMNS) {
			col = fprintf(out, "\n%s", indent) - 1;
			start = true;
		}
		col += fprintf(out, "%s%.*s", start ? "" : " ", len, w);
		start = false;
		w += len;
		while (*w == ' ')
			w++;
	}
	fprintf(out, "\n");
}

void text_wrapf(FILE *out, const char *first, const char *indent, const char *fmt, ...)
{
	char text[TEXT_WRAP_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	text_wrap(out, first, indent, text);
}

void text_err(const char *fmt, ...)
{
	char buf[TEXT_WRAP_MAX], *heap = NULL, *text = buf, *wrapped = NULL;
	size_t n, len = 0;
	va_list ap;
	FILE *out;

	/* Two paths of PATH_MAX outgrow any fixed buffer: the whole message
	 * on the heap; cut to buf only when that fails. */
	va_start(ap, fmt);
	if (vasprintf(&heap, fmt, ap) >= 0)
		text = heap;
	else
		heap = NULL;
	va_end(ap);
	if (!heap) {
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
	}
	n = strlen(text);
	while (n && text[n - 1] == '\n')
		text[--n] = '\0';
	/* Wrapped into memory and written at once: stderr is unbuffered, and
	 * a write a word would let another process's output into a line. */
	out = open_memstream(&wrapped, &len);
	/* A newline inside starts a continuation line where the words would
	 * not: an example command kept whole on a line of its own. */
	for (char *line = text, *nl; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		text_wrap(out ? out : stderr, line == text ? "" : "  ", "  ", line);
	}
	if (out && !fclose(out))
		fwrite(wrapped, 1, len, stderr);
	free(wrapped);
	free(heap);
}
