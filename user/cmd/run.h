/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `connscope run [TARGETS] [--fail-on LEVEL] -- COMMAND [ARGS...]`: a load
 * test as one step, with a verdict and an exit status (run.c). */
#ifndef CONNSCOPE_RUN_H
#define CONNSCOPE_RUN_H

int cmd_run(int argc, char **argv);

#endif
