/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The HTML primitives every HTML part uses, the report's and those of
 * other renderers (findings, diff): escaping, numbers, the usage meter
 * (html_text.c). Nothing here knows a report's structure, so the report's
 * parts and the renderers it includes all stand on it. */
#ifndef CONNSCOPE_HTML_TEXT_H
#define CONNSCOPE_HTML_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* s as HTML text or attribute value: markup characters as entities,
 * control characters as '?'. At most n bytes, so a comm[16] need not be
 * terminated; html_esc takes NULL as "". */
void html_esc_n(FILE *out, const char *s, size_t n);
void html_esc(FILE *out, const char *s);

/* Seconds from nanoseconds with at most 3 decimals and no trailing zeros:
 * "0", "0.5", "12.25". The hover script's num() rounds the same way. */
const char *html_fmt_s(char *buf, size_t len, uint64_t ns);

/* part of whole in percent; 0 for an empty whole. */
double html_pct(uint64_t part, uint64_t whole);

/* A usage bar, pct_used full, "hot" from warn_pct on (> 100: never). */
void html_meter(FILE *out, double pct_used, double warn_pct);

/* The text report's warnings ("WARNING: " first, wrapped lines indented),
 * each as a warning paragraph, worded exactly as the terminal shows them.
 * text may be NULL; it is cut up in place. */
void html_warnings(FILE *out, char *text);

#endif
