/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* cgroup_v2path: a process's cgroup v2 path from /proc/PID/cgroup as
 * hybrid and unified hosts write it, the paths a reader cannot resolve
 * (outside its cgroup namespace, a removed cgroup), and the
 * ancestor-or-self test the QUIC wire unit keeps its attach points by. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "unit.h"
#include "cgroup_v2path.h"

static const struct {
	const char *text, *want;
	int err;
} rel_cases[] = {
	{ "0::/\n", "/", 0 },
	{ "0::/system.slice/nginx.service\n", "/system.slice/nginx.service", 0 },
	/* Hybrid: v1 controllers first, the v2 line last. */
	{ "12:cpu,cpuacct:/\n11:memory:/x\n1:name=systemd:/\n0::/connscope-test-1\n",
	  "/connscope-test-1", 0 },
	{ "0::/a/b/", "/a/b", 0 },	/* no newline at the end, a trailing slash */
	/* The agent in a container, the target outside its namespace. */
	{ "0::/../../user.slice\n", NULL, -EXDEV },
	{ "0::/a/../b\n", NULL, -EXDEV },
	{ "0::/..\n", NULL, -EXDEV },
	/* Names that only begin or end with "..": cgroups like any other. */
	{ "0::/..x\n", "/..x", 0 },
	{ "0::/a/..x/b..\n", "/a/..x/b..", 0 },
	{ "0::/a/.. /b\n", "/a/.. /b", 0 },
	{ "0::/a (deleted)\n", NULL, -EXDEV },
	{ "0::\n", NULL, -EXDEV },
	/* A v1-only host: no v2 line. */
	{ "12:cpu,cpuacct:/\n1:name=systemd:/user.slice\n", NULL, -ENOENT },
	{ "", NULL, -ENOENT },
};

static const struct {
	const char *anc, *path;
	bool want;
} within_cases[] = {
	{ "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified", true },
	{ "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified/a", true },
	{ "/sys/fs/cgroup/unified/a", "/sys/fs/cgroup/unified/a/b/c", true },
	{ "/sys/fs/cgroup/unified/a", "/sys/fs/cgroup/unified/ab", false },
	{ "/sys/fs/cgroup/unified/a/b", "/sys/fs/cgroup/unified/a", false },
	{ "/sys/fs/cgroup/unified/a", "/sys/fs/cgroup/unified/b", false },
	{ "/", "/sys/fs/cgroup", true },	/* cgroup2 mounted at / */
};

TEST(proc_cgroup_text)
{
	char out[64];

	for (size_t i = 0; i < sizeof(rel_cases) / sizeof(rel_cases[0]); i++) {
		int err = cgroup_v2_rel(rel_cases[i].text, out, sizeof(out));

		ASSERT_EQ(err, rel_cases[i].err, rel_cases[i].text);
		if (!err)
			ASSERT_STREQ(out, rel_cases[i].want, rel_cases[i].text);
	}
	/* A path longer than the buffer: said, not cut. */
	ASSERT_EQ(cgroup_v2_rel("0::/aaaaaaaaaa/bbbbbbbbbb\n", out, 8), -ENAMETOOLONG, "too_long");
}

TEST(ancestor_or_self)
{
	for (size_t i = 0; i < sizeof(within_cases) / sizeof(within_cases[0]); i++)
		ASSERT_EQ(cgroup_path_within(within_cases[i].anc, within_cases[i].path),
			  within_cases[i].want, within_cases[i].path);
}

UNIT_MAIN()
