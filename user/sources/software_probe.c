// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Reads what tells a process's software from /proc (software_probe.h). A
 * known comm is enough (the postmaster's thousand backends cost one
 * /proc read each); only an unknown one costs the executable's name, its
 * maps and, for a binary without the usual runtimes, its section headers. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "elf_section.h"
#include "procfs.h"
#include "software_probe.h"

/* A Go binary names its build in .go.buildinfo (Go 1.13 and later). */
static bool has_go_buildinfo(pid_t pid)
{
	char path[PATH_MAX];
	bool found = false;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *elf;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/exe", procfs_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx))
		found = elf_section_named(elf, shstrndx, ".go.buildinfo", &sh) != NULL;
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

static void read_maps(pid_t pid, struct sw_hints *h)
{
	char path[PATH_MAX], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", procfs_root, pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strrchr(line, '/');

		if (!p)
			continue;
		p++;
		if (!strncmp(p, "libjvm.so", 9))
			h->lib_jvm = true;
		else if (!strncmp(p, "libpython", 9))
			h->lib_python = true;
		else if (!strncmp(p, "libnode.so", 10))
			h->lib_node = true;
		else if (!strncmp(p, "libpq.so", 8))
			h->lib_pq = true;
		else if (!strncmp(p, "libmysqlclient.so", 17) || !strncmp(p, "libmariadb.so", 13))
			h->lib_mysql = true;
		else if (!strncmp(p, "libhiredis.so", 13))
			h->lib_hiredis = true;
		else if (!strncmp(p, "libcurl", 7))
			h->lib_curl = true;
	}
	fclose(f);
}

int software_exe(pid_t pid, char *base, size_t len, uint32_t *id)
{
	char path[64], exe[PATH_MAX];
	const char *b;
	uint32_t h = 2166136261u;	/* FNV-1a */
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/exe", procfs_root, pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = 0;
	/* A replaced executable reads "PATH (deleted)": the same program. */
	if (n > 10 && !strcmp(exe + n - 10, " (deleted)"))
		exe[n - 10] = 0;
	for (const char *c = exe; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	*id = h ? h : 1;
	b = strrchr(exe, '/');
	snprintf(base, len, "%s", b ? b + 1 : exe);
	return 0;
}

int software_probe(pid_t pid, struct sw_hints *h)
{
	char path[PATH_MAX], exe[PATH_MAX];
	const char *base;
	ssize_t n;
	int r;

	memset(h, 0, sizeof(*h));
	r = procfs_read_pid_file(pid, "comm", h->comm, sizeof(h->comm));
	if (r < 0)
		return r;
	h->comm[strcspn(h->comm, "\n")] = 0;
	if (sw_classify(h) != SW_UNKNOWN)
		return 0;
	snprintf(path, sizeof(path), "%s/%d/exe", procfs_root, pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = 0;
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	n = strlen(base);
	if (n >= (ssize_t)sizeof(h->exe))
		n = sizeof(h->exe) - 1;
	memcpy(h->exe, base, n);
	h->exe[n] = 0;
	/* A replaced executable reads "name (deleted)". */
	h->exe[strcspn(h->exe, " ")] = 0;
	if (sw_classify(h) != SW_UNKNOWN)
		return 0;
	read_maps(pid, h);
	if (sw_classify(h) == SW_UNKNOWN)
		h->go_buildinfo = has_go_buildinfo(pid);
	return 0;
}

enum sw_kind software_of(pid_t pid)
{
	struct sw_hints h;

	if (software_probe(pid, &h) < 0 && !h.comm[0])
		return SW_UNKNOWN;
	return sw_classify(&h);
}
