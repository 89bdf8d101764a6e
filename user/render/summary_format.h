/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `summary` for people and programs: the `ss -s` block, sockets per process,
 * UDP and QUIC per process; text and JSON. */
#ifndef CONNSCOPE_SUMMARY_FORMAT_H
#define CONNSCOPE_SUMMARY_FORMAT_H

#include <stdbool.h>
#include <stdio.h>
#include "json.h"
#include "summary_view.h"

/* The six lines of `ss -s`, byte for byte. */
void format_ss_summary(FILE *out, const struct sockstat *st);
void format_summary_text(FILE *out, const struct summary *sum, bool header);
void format_summary_json(FILE *out, const struct summary *sum);
/* max: rows shown (the rest summed in one line); 0 for all. */
void format_udp_view_text(FILE *out, const struct udp_view *v, size_t max, bool header);
void json_udp_view(struct json *j, const struct udp_view *v);

#endif
