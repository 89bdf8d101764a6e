/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The Findings section of the reports: text, JSON and HTML renderings of
 * the doctor's findings (or its healthy verdict). */
#ifndef CONNSCOPE_REPORT_FINDINGS_H
#define CONNSCOPE_REPORT_FINDINGS_H

#include <stddef.h>
#include <stdio.h>
#include "tcp_books.h"
#include "json.h"

struct run_info;

/* The doctor's text report: header, findings, sources (report_doctor.c). */
void format_doctor_text(FILE *out, const struct agg *a, const struct run_info *run);
void format_findings_section(FILE *out, const struct agg *a, const struct run_info *run);
/* "findings": [...] and "doctor": {...} members of a report object. */
void json_findings_section(struct json *j, const struct agg *a, const struct run_info *run);
/* <section id="findings">; returns the number of findings. */
extern const char html_findings_css[];
size_t html_findings_section(FILE *out, const struct agg *a, const struct run_info *run);

#endif
