/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A made-up /proc for the fuzz targets of the /proc parsers: procfs_root
 * points at a private directory (under $TMPDIR, which the test script
 * removes), and each input is cut into the files a parser reads. */
#ifndef CONNSCOPE_FAKEPROC_H
#define CONNSCOPE_FAKEPROC_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

extern const char *procfs_root;

static char fp_root[4096];

static void fp_init(void)
{
	const char *tmp = getenv("TMPDIR");

	if (fp_root[0])
		return;
	snprintf(fp_root, sizeof(fp_root), "%s/fakeproc.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(fp_root))
		abort();
	procfs_root = fp_root;
}

/* root/rel with its parent directories; data may hold anything. */
static void fp_write(const char *rel, const void *data, size_t len)
{
	char path[8192], *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fp_root, rel);
	for (p = path + strlen(fp_root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	if (len && write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
}

static void fp_mkdir(const char *rel)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", fp_root, rel);
	mkdir(path, 0700);
}

/* The next piece of the input, up to a 0xff byte (or the end). */
static size_t fp_piece(const uint8_t **data, size_t *size, const uint8_t **piece)
{
	const uint8_t *end = memchr(*data, 0xff, *size);
	size_t n = end ? (size_t)(end - *data) : *size;

	*piece = *data;
	*data += n + (end != NULL);
	*size -= n + (end != NULL);
	return n;
}

#endif
