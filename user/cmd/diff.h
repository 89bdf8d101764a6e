/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `connscope diff BEFORE.json AFTER.json`: reads two reports (jansson) into
 * the model of render/diff_report.h. */
#ifndef CONNSCOPE_DIFF_H
#define CONNSCOPE_DIFF_H

struct diff_model;

/* Reads and compares the two reports. 0, or 2 after printing one message
 * naming the problem (missing file, not connscope JSON, different
 * programs). */
int diff_load(struct diff_model *m, const char *before, const char *after);

int cmd_diff(int argc, char **argv);

#endif
