// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "fd_view.h"

static const char *const type_names[FDT_MAX] = {
	[FDT_TCP] = "tcp",		[FDT_UDP] = "udp",
	[FDT_UNIX] = "unix",		[FDT_NETLINK] = "netlink",
	[FDT_OTHER_SOCKET] = "other_socket",
	[FDT_FILE] = "file",		[FDT_DIR] = "dir",
	[FDT_PIPE] = "pipe",		[FDT_EVENTFD] = "eventfd",
	[FDT_EPOLL] = "epoll",		[FDT_TIMERFD] = "timerfd",
	[FDT_SIGNALFD] = "signalfd",	[FDT_INOTIFY] = "inotify",
	[FDT_FANOTIFY] = "fanotify",	[FDT_PIDFD] = "pidfd",
	[FDT_MEMFD] = "memfd",		[FDT_BPF] = "bpf",
	[FDT_ANON_OTHER] = "anon_other",
	[FDT_CHR] = "chr",		[FDT_BLK] = "blk",
	[FDT_OTHER] = "other",
};

const char *fdinv_type_name(int type)
{
	if (type < 0 || type >= FDT_MAX)
		return "unknown";
	return type_names[type];
}
