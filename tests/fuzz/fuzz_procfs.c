// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target for the /proc and /proc/sys file parsers: the input,
 * cut at 0xff bytes, becomes /proc/PID/stat, /proc/PID/limits,
 * /proc/net/sockstat, sockstat6, snmp, and the /proc/sys/net/ipv4 files
 * netlimits.c reads; then every parser reads its file. A kernel never
 * writes most of these inputs, but a parser must not read past its
 * buffer, loop or crash on any of them (a ptrace'd process can name
 * itself anything, and /proc layouts change between kernels). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fakeproc.h"
#include "fdinv.h"
#include "netlimits.h"
#include "procfs.h"

#define PID 4242

static const char *const files[] = {
	"4242/stat", "4242/limits", "net/sockstat", "net/sockstat6", "net/snmp",
	"sys/net/ipv4/ip_local_port_range", "sys/net/ipv4/tcp_max_tw_buckets",
	"sys/net/ipv4/tcp_fin_timeout", "sys/net/ipv4/tcp_tw_reuse",
	"sys/net/ipv4/tcp_max_orphans", "sys/fs/file-nr", "sys/fs/file-max",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_ident id;
	struct sockstat st;
	struct netlimits nl;
	struct fd_limits lim;
	const uint8_t *piece;

	fp_init();
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t n = fp_piece(&data, &size, &piece);

		fp_write(files[i], piece, n);
	}
	if (!procfs_read_ident(PID, &id) && strnlen(id.comm, sizeof(id.comm)) >= sizeof(id.comm))
		abort();	/* comm must come back terminated */
	procfs_read_sockstat(&st);
	netlimits_read(&nl);
	fdinv_limits(PID, &lim);
	procfs_pid_gone(PID);
	return 0;
}
