/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#ifndef CONNSCOPE_DEMO_H
#define CONNSCOPE_DEMO_H

/* `connscope demo [-d SECONDS] [-j]` */
int cmd_demo(int argc, char **argv);

#endif
