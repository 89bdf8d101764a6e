/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* UTF-8 checking for strings that come from other processes (comm names
 * any local user sets with prctl(PR_SET_NAME), paths, endpoint labels):
 * one stray byte makes Prometheus reject a whole scrape and a browser
 * show mojibake, so renderers replace every invalid byte with U+FFFD. */
#ifndef CONNSCOPE_UTF8_H
#define CONNSCOPE_UTF8_H

#include <stddef.h>

/* The replacement character U+FFFD, encoded. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF) within avail bytes, or 0
 * if there is none there. A NUL byte ends any sequence. */
size_t utf8_seq_len(const unsigned char *s, size_t avail);

#endif
