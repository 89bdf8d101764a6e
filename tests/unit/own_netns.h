/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A unit test's real sockets in a network namespace of its own, its lo
 * up: their TIME_WAIT go with the process, none left in the host's for
 * 60 s. Needs _GNU_SOURCE (unshare) before any include. */
#ifndef CONNSCOPE_TEST_OWN_NETNS_H
#define CONNSCOPE_TEST_OWN_NETNS_H

#include <sched.h>
#include <stdbool.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "unit.h"

/* false where unshare is refused (no CAP_SYS_ADMIN): still in the
 * caller's namespace. */
static inline bool unit_own_netns(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd;

	if (unshare(CLONE_NEWNET))
		return false;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_TRUE(fd >= 0, "socket");
	ASSERT_EQ(ioctl(fd, SIOCGIFFLAGS, &ifr), 0, "lo_flags");
	ifr.ifr_flags |= IFF_UP;
	ASSERT_EQ(ioctl(fd, SIOCSIFFLAGS, &ifr), 0, "lo_up");
	close(fd);
	return true;
}

#endif
