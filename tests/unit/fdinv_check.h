/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Checks the fdinv unit tests share: scan a process, compare counts per
 * type, find one fd's record. Included by test_fdinv*.c, each its own
 * test binary. */
#ifndef CONNSCOPE_FDINV_CHECK_H
#define CONNSCOPE_FDINV_CHECK_H

#include <stdint.h>

#include "unit.h"
#include "fdinv.h"
#include "hashmap.h"
#include "sockdiag.h"

static inline void scan_ok(pid_t pid, struct fd_inventory *inv, unsigned int flags)
{
	struct fdinv_opts o = { .flags = flags };

	ASSERT_EQ(fdinv_scan(pid, inv, &o), 0, "fdinv_scan");
}

static inline void expect_counts(const struct fd_inventory *inv, const uint64_t *want,
			  const char *what)
{
	char label[128];

	for (int t = 0; t < FDT_MAX; t++) {
		snprintf(label, sizeof(label), "%s: %s", what, fdinv_type_name(t));
		ASSERT_EQ(inv->by_type[t], want[t], label);
	}
}

/* b - a per type must be want. */
static inline void expect_delta(const struct fd_inventory *a, const struct fd_inventory *b,
			 const uint64_t *want, const char *what)
{
	char label[128];

	for (int t = 0; t < FDT_MAX; t++) {
		snprintf(label, sizeof(label), "%s: %s delta", what, fdinv_type_name(t));
		ASSERT_EQ((long long)(b->by_type[t] - a->by_type[t]), want[t], label);
	}
}

static inline const struct fdinv_fd *rec(const struct fd_inventory *inv, int fd)
{
	for (size_t i = 0; i < inv->nr_fds; i++)
		if (inv->fds[i].fd == fd)
			return &inv->fds[i];
	unit_leave(UNIT_FAIL, "no record for fd %d", fd);
}

static inline void expect_sorted(const struct fd_inventory *inv)
{
	for (size_t i = 1; i < inv->nr_fds; i++)
		ASSERT_TRUE(inv->fds[i - 1].fd < inv->fds[i].fd, "records in fd order");
}

/* sock_diag dump -> inode -> TCP state, as a caller would hand it in. */
static inline int diag_collect(const struct sd_sock *s, void *ctx)
{
	uint8_t *v;

	if (!s->inode)
		return 0;
	v = hmap_upsert(ctx, &s->inode, NULL);
	if (!v)
		return -ENOMEM;
	*v = s->state;
	return 0;
}

static inline int diag_kind(uint32_t ino, void *ctx)
{
	uint8_t *v = hmap_get(ctx, &ino);

	return v ? FDINV_SOCK(FDT_TCP, *v) : -1;
}

#endif
