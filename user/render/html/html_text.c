// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The HTML report's primitives that every part uses: escaping, numbers,
 * the usage meter. Nothing here knows the report's structure, so the page
 * and its parts all depend on this file and never on each other. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "html_text.h"
#include "utf8.h"

/* ---- escaping ------------------------------------------------------------ */

/* Text and attribute values alike: the five characters that end or change
 * markup. Control characters are not allowed in HTML and a comm may hold
 * any; they become '?', as in the terminal renderer. A byte that is not
 * part of well-formed UTF-8 becomes U+FFFD (the page says utf-8). At most
 * n bytes, so a comm[16] need not be terminated. */
void html_esc_n(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = s[i];
		size_t len;

		if (c >= 0x80) {
			len = utf8_seq_len((const unsigned char *)s + i, n - i);
			if (!len) {
				fputs(UTF8_REPLACEMENT, out);
			} else {
				fwrite(s + i, 1, len, out);
				i += len - 1;
			}
			continue;
		}

		switch (c) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
		}
	}
}

void html_esc(FILE *out, const char *s)
{
	html_esc_n(out, s ? s : "", (size_t)-1);
}

const char *html_fmt_s(char *buf, size_t len, uint64_t ns)
{
	char *p;

	snprintf(buf, len, "%.3f", ns / 1e9);
	p = buf + strlen(buf) - 1;
	while (p > buf && *p == '0')
		*p-- = '\0';
	if (*p == '.')
		*p = '\0';
	return buf;
}

double html_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

void html_meter(FILE *out, double pct_used, double warn_pct)
{
	if (pct_used > 100)
		pct_used = 100;
	fprintf(out, "<span class=\"meter%s\"><span style=\"width:%.1f%%\"></span></span>",
		pct_used >= warn_pct ? " hot" : "", pct_used);
}

void html_warnings(FILE *out, char *text)
{
	char *line, *save = NULL;

	/* A warning wrapped at 80 columns goes on in indented lines: one
	 * paragraph again, its words as they were. */
	if (text) {
		char *r = text, *w = text;

		while (*r) {
			if (r[0] == '\n' && r[1] == ' ') {
				*w++ = ' ';
				for (r++; *r == ' '; r++)
					;
			} else {
				*w++ = *r++;
			}
		}
		*w = '\0';
	}
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "WARNING: ", 9))
			line += 9;
		fputs("<p class=\"warn\"><b>warning:</b> ", out);
		html_esc(out, line);
		fputs("</p>\n", out);
	}
}
