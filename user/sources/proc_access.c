// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "proc_access.h"
#include "procfs.h"
#include "text_wrap.h"

#define CAP_SYS_PTRACE_BIT 19

/* A field of /proc/PID/status ("CapEff:", "Uid:") as read by fmt. */
static int status_field(pid_t pid, const char *fmt, void *out)
{
	char buf[4096], *line;
	int n = procfs_read_pid_file(pid, "status", buf, sizeof(buf));

	if (n < 0)
		return n;
	for (line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (sscanf(line, fmt, out) == 1)
			return 0;
	return -ENOENT;
}

void proc_say_refused(pid_t pid, const char *what)
{
	struct proc_ident id = { 0 };
	unsigned long long caps = 0;
	unsigned int uid = 0;
	bool uid_known;

	procfs_read_ident(pid, &id);
	status_field(getpid(), "CapEff: %llx", &caps);
	uid_known = !status_field(pid, "Uid: %u", &uid);
	if ((caps >> CAP_SYS_PTRACE_BIT) & 1) {
		/* With the capability (in the initial user namespace) the
		 * kernel's own checks pass: what refused is a security module's
		 * hook, or the capability is only a user namespace's. */
		text_err("connscope: cannot read %s of pid %d (%s): %s although connscope "
			 "has CAP_SYS_PTRACE: a security module (Landlock, AppArmor, SELinux, "
			 "a BPF LSM) or a user namespace of connscope's own keeps it from "
			 "this one; trace another process, or run connscope outside that "
			 "policy\n",
			what, (int)pid, id.comm[0] ? id.comm : "?", strerror(EACCES));
		return;
	}
	if (uid_known && uid != geteuid()) {
		text_err("connscope: cannot read %s of pid %d (%s): %s: it belongs to uid "
			 "%u and connscope (uid %u) lacks CAP_SYS_PTRACE; run it as root or "
			 "give it CAP_SYS_PTRACE\n",
			what, (int)pid, id.comm[0] ? id.comm : "?", strerror(EACCES), uid,
			(unsigned int)geteuid());
		return;
	}
	text_err("connscope: cannot read %s of pid %d (%s): %s: the process is not "
		 "dumpable or more privileged than connscope; give connscope "
		 "CAP_SYS_PTRACE\n",
		what, (int)pid, id.comm[0] ? id.comm : "?", strerror(EACCES));
}
