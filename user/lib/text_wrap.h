/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Words wrapped at 80 columns: every text report and every message is
 * read in terminals, and the texts they carry (a source's reason, a
 * loss's words, a finding's verdict, a bad option and its fix) are as
 * long as they are. In lib so that every layer's messages can use it. */
#ifndef CONNSCOPE_TEXT_WRAP_H
#define CONNSCOPE_TEXT_WRAP_H

#include <stdio.h>

#define TEXT_WRAP_COLUMNS 80

/* first, then text's words, wrapped at TEXT_WRAP_COLUMNS, continuation
 * lines after indent; ends the line. A leading newline of first is no
 * column. A word longer than a line stays whole, on a line of its own. */
void text_wrap(FILE *out, const char *first, const char *indent, const char *text);
/* The same for a printf format (up to TEXT_WRAP_MAX bytes of text). */
#define TEXT_WRAP_MAX 8192
__attribute__((format(printf, 4, 5)))
void text_wrapf(FILE *out, const char *first, const char *indent, const char *fmt, ...);

/* A message on stderr, as the agent's notices are: fmt's text wrapped at
 * TEXT_WRAP_COLUMNS, continuation lines indented two spaces (a trailing
 * newline in fmt is no word; one inside starts a continuation line). One
 * message, however long its paths (no TEXT_WRAP_MAX: on the heap). */
__attribute__((format(printf, 1, 2)))
void text_err(const char *fmt, ...);

#endif
