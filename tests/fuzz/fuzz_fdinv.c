// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target for the fd inventory's readers (user/fdinv*.c): the
 * input, cut at 0xff bytes, becomes a made-up /proc/PID: up to 8 fd links
 * (what readlink returns: "socket:[123]", "pipe:[9]", a path, anything),
 * the fdinfo of fd 0, the stat line, and the net tables (tcp, tcp6, udp,
 * udp6, unix, netlink) that sockets are looked up in. Then a full scan,
 * with fdinfo and links, and one that classifies links only. Beyond "no
 * bad read": the counts by type add up to the records. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakeproc.h"
#include "fdinv.h"

#define PID 4243
#define NLINKS 8

static const char *const tables[] = {
	"4243/net/tcp", "4243/net/tcp6", "4243/net/udp", "4243/net/udp6", "4243/net/unix",
	"4243/net/netlink",
};

static void make_links(const uint8_t **data, size_t *size)
{
	char path[8192], target[4096];
	const uint8_t *piece;

	snprintf(path, sizeof(path), "%s/4243/fd", fp_root);
	/* Fresh each run: links left by the last input would be scanned. */
	for (int i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "%s/4243/fd/%d", fp_root, i);
		unlink(path);
	}
	fp_mkdir("4243");
	fp_mkdir("4243/fd");
	for (int i = 0; i < NLINKS && *size; i++) {
		size_t n = fp_piece(data, size, &piece);

		if (n >= sizeof(target))
			n = sizeof(target) - 1;
		memcpy(target, piece, n);
		target[n] = '\0';
		/* A NUL cuts it (readlink never returns one); empty: none. */
		if (!target[0])
			continue;
		snprintf(path, sizeof(path), "%s/4243/fd/%d", fp_root, i);
		if (symlink(target, path))
			continue;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdinv_opts all = { .flags = FDINV_FDINFO | FDINV_LINKS };
	struct fdinv_opts quick = { .flags = FDINV_NO_PROBE | FDINV_NO_NET_TABLES };
	struct fd_inventory inv;
	const uint8_t *piece;
	size_t n;
	uint64_t sum;

	fp_init();
	make_links(&data, &size);
	n = fp_piece(&data, &size, &piece);
	fp_write("4243/fdinfo/0", piece, n);
	n = fp_piece(&data, &size, &piece);
	if (n)
		fp_write("4243/stat", piece, n);
	else
		fp_write("4243/stat", "4243 (fuzz) S 1", 15);
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		n = fp_piece(&data, &size, &piece);
		fp_write(tables[i], piece, n);
	}
	if (!fdinv_scan(PID, &inv, &all)) {
		sum = 0;
		for (int t = 0; t < FDT_MAX; t++)
			sum += inv.by_type[t];
		if (sum != inv.total || inv.nr_fds != inv.total)
			abort();
		for (size_t i = 0; i < inv.nr_fds; i++)
			if (inv.fds[i].type >= FDT_MAX)
				abort();
	}
	fdinv_free(&inv);
	if (!fdinv_scan(PID, &inv, &quick)) {
		sum = 0;
		for (int t = 0; t < FDT_MAX; t++)
			sum += inv.by_type[t];
		if (sum != inv.total)
			abort();
	}
	fdinv_free(&inv);
	return 0;
}
