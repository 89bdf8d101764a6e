/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Sorting an array of u64 in place, ascending (u64sort.c says how). */
#ifndef CONNSCOPE_U64SORT_H
#define CONNSCOPE_U64SORT_H

#include <stddef.h>
#include <stdint.h>

void u64_sort(uint64_t *v, size_t n);

#endif
