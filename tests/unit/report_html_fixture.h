/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Shared by the HTML report's unit tests: render a report into a string
 * and count what it holds. Include after unit.h. */
#ifndef CONNSCOPE_REPORT_HTML_FIXTURE_H
#define CONNSCOPE_REPORT_HTML_FIXTURE_H

#include <stdio.h>
#include <string.h>
#include "report_html.h"

static char *render(const struct agg *a, const struct run_info *run)
{
	/* static: gcc's dangling-pointer analysis misreads open_memstream */
	static char *buf;
	static size_t len;
	FILE *f;
	int err;

	buf = NULL;
	f = open_memstream(&buf, &len);
	ASSERT_TRUE(f != NULL, "memstream");
	err = format_report_html(f, a, run);
	fclose(f);
	ASSERT_EQ(err, 0, "format_report_html");
	return buf;
}

/* Occurrences of needle in hay. */
static inline int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The text after data-k="key"> up to the next tag, in row. */
static inline const char *td(const char *row, const char *key, char *buf, size_t len)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "data-k=\"%s\">", key);
	p = strstr(row, pat);
	ASSERT_TRUE(p != NULL, key);
	p += strlen(pat);
	while (p[n] && p[n] != '<' && n + 1 < len)
		n++;
	snprintf(buf, len, "%.*s", (int)n, p);
	return buf;
}

/* The part of out from the first match of start up to the next end,
 * terminated there; the caller puts back *ret_end. */
static inline char *cut(char *out, const char *start, const char *end, char **ret_end)
{
	char *a = strstr(out, start), *b;

	ASSERT_TRUE(a != NULL, start);
	b = strstr(a, end);
	ASSERT_TRUE(b != NULL, end);
	*b = '\0';
	*ret_end = b;
	return a;
}

#endif
