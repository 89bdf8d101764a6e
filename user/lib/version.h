/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#ifndef CONNSCOPE_VERSION_H
#define CONNSCOPE_VERSION_H

/* `connscope --version` and connscope_build_info{version}. */
#define CONNSCOPE_VERSION "0.1.0"

#endif
