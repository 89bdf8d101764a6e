/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `connscope fdleak`: fd inventory, growth and the code sites that leak. */
#ifndef CONNSCOPE_FDLEAK_H
#define CONNSCOPE_FDLEAK_H

#include <stdbool.h>
#include <stdio.h>
#include "fd_report.h"
#include "fdleak_report.h"

int cmd_fdleak(int argc, char **argv);

#endif
