// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The agent's pid namespace, from /proc. pid 1 of the /proc mount is that
 * namespace's init, so /proc/1/ns/pid is the namespace /proc numbers
 * processes in, even where the agent's own (/proc/self/ns/pid) differs
 * (a /proc left from the parent namespace after `unshare --pid` without
 * --mount-proc: there the pids the agent reads are the parent's). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "pidns.h"
#include "text_wrap.h"

/* init_pid_ns's inode number (PROC_PID_INIT_INO, fixed since Linux 3.8). */
#define PIDNS_INIT_INO 0xEFFFFFFCU

static struct pidns_info agent_ns;
static bool probed;

const struct pidns_info *pidns_agent(void)
{
	struct stat st;

	if (probed)
		return &agent_ns;
	probed = true;
	if (stat("/proc/1/ns/pid", &st) && stat("/proc/self/ns/pid", &st))
		return &agent_ns;	/* no namespaces to read: the host's */
	agent_ns.ino = (uint32_t)st.st_ino;
	agent_ns.child = agent_ns.ino != PIDNS_INIT_INO;
	return &agent_ns;
}

uint32_t pidns_bpf_ino(void)
{
	const struct pidns_info *ns = pidns_agent();

	return ns->child ? ns->ino : 0;
}

void pidns_note(FILE *out)
{
	const struct pidns_info *ns = pidns_agent();
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (!ns->child)
		return;
	/* Wrapped at 80 columns as the tracing line it follows, and written
	 * at once (text_err's reason: stderr is unbuffered). */
	m = open_memstream(&buf, &len);
	text_wrapf(m ? m : out, "  ", "  ", "in a child pid namespace (pid:[%u]): pids are its "
		   "own; processes outside it cannot be seen from here (not traced; under "
		   "--all their sockets are unattributed)", ns->ino);
	if (m && !fclose(m))
		fwrite(buf, 1, len, out);
	free(buf);
}
