/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What an fd is: from its readlink text alone where that tells, else from
 * one probe through the /proc/PID/fd magic link (statx for paths, getxattr
 * for sockets; see fdinv.h for the costs). */
#define _GNU_SOURCE		/* statx */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "fdinv.h"
#include "fdinv_internal.h"


/* ---- classification of the link text --------------------------------- */

/* Does s (len bytes) start with the literal lit? */
#define HAS_PREFIX(s, len, lit) \
	((len) >= sizeof(lit) - 1 && !memcmp((s), (lit), sizeof(lit) - 1))

/* "[12345]" exactly -> 12345; 0 when malformed (0 is no inode). */
static uint64_t bracket_ino(const char *s, size_t len)
{
	uint64_t v = 0;
	size_t i;

	if (len < 3 || s[0] != '[' || s[len - 1] != ']')
		return 0;
	for (i = 1; i < len - 1; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* The names anon_inode_getfd() callers give (the text after
 * "anon_inode:"); matched whole. */
static const struct {
	const char *name;
	int type;
} anon_names[] = {
	{ "[eventfd]", FDT_EVENTFD },
	{ "[eventpoll]", FDT_EPOLL },
	{ "[timerfd]", FDT_TIMERFD },
	{ "[signalfd]", FDT_SIGNALFD },
	{ "inotify", FDT_INOTIFY },
	{ "[fanotify]", FDT_FANOTIFY },
	/* Also on pidfs (6.9+): it kept the old name for user space. */
	{ "[pidfd]", FDT_PIDFD },
	{ "btf", FDT_BPF },
};

int fdinv_classify_link(const char *l, size_t len, uint64_t *ino, int *needs)
{
	static const char deleted[] = " (deleted)";

	*ino = 0;
	*needs = 0;
	if (HAS_PREFIX(l, len, "socket:")) {
		*ino = bracket_ino(l + 7, len - 7);
		*needs = FDINV_NEED_SOCK;
		return FDT_OTHER_SOCKET;
	}
	if (HAS_PREFIX(l, len, "pipe:")) {
		*ino = bracket_ino(l + 5, len - 5);
		return FDT_PIPE;
	}
	if (HAS_PREFIX(l, len, "anon_inode:")) {
		const char *n = l + 11;
		size_t nlen = len - 11;

		for (size_t i = 0; i < ARRAY_SIZE(anon_names); i++)
			if (strlen(anon_names[i].name) == nlen &&
			    !memcmp(anon_names[i].name, n, nlen))
				return anon_names[i].type;
		/* bpf-map, bpf-prog, bpf_link, bpf_iter, bpf-token */
		if (HAS_PREFIX(n, nlen, "bpf"))
			return FDT_BPF;
		return FDT_ANON_OTHER;
	}
	if (len && l[0] == '/') {
		/* A memfd's dentry is never hashed, so its name always carries
		 * " (deleted)"; asking for both keeps a real file named
		 * /memfd:x a file. Its stat would only say S_IFREG. */
		if (HAS_PREFIX(l, len, "/memfd:") && len >= 7 + sizeof(deleted) - 1 &&
		    !memcmp(l + len - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1))
			return FDT_MEMFD;
		*needs = FDINV_NEED_STAT;
		return FDT_FILE;
	}
	/* nsfs ("net:[4026531833]"), and whatever a future kernel invents. */
	return FDT_OTHER;
}

int fdinv_type_from_mode(unsigned int mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return FDT_FILE;
	case S_IFDIR:
		return FDT_DIR;
	case S_IFCHR:
		return FDT_CHR;
	case S_IFBLK:
		return FDT_BLK;
	case S_IFIFO:
		return FDT_PIPE;
	default:	/* O_PATH on a symlink or a socket file */
		return FDT_OTHER;
	}
}

int fdinv_type_from_protoname(const char *n)
{
	/* TCP, TCPv6; MPTCP is stream sockets to TCP ports too. */
	if (!strncmp(n, "TCP", 3) || !strncmp(n, "MPTCP", 5))
		return FDT_TCP;
	if (!strncmp(n, "UDP", 3))	/* UDP, UDPv6, UDP-Lite, UDPLITEv6 */
		return FDT_UDP;
	if (!strncmp(n, "UNIX", 4))	/* UNIX, UNIX-STREAM */
		return FDT_UNIX;
	if (!strcmp(n, "NETLINK"))
		return FDT_NETLINK;
	return FDT_OTHER_SOCKET;
}

/* Without a stat: most of /dev is character devices, the rest of a path
 * is most likely a file. Directories, FIFOs and block devices are missed. */
int fdinv_guess_path_type(const char *l, size_t len)
{
	if (HAS_PREFIX(l, len, "/dev/") && !HAS_PREFIX(l, len, "/dev/shm/") &&
	    !HAS_PREFIX(l, len, "/dev/mqueue/"))
		return FDT_CHR;
	return FDT_FILE;
}

/* ---- probes through the magic link ----------------------------------- */

/* File type of the fd's target: statx asks for the type only, and
 * AT_STATX_DONT_SYNC keeps network filesystems from a round trip (and a
 * hung server from hanging us). Falls back to fstatat where statx is
 * missing or filtered. */
int fdinv_stat_type(int fd_dir, const char *name, uint64_t *ino)
{
	static bool no_statx;
	struct statx stx;
	struct stat st;

	if (!no_statx) {
		if (!statx(fd_dir, name, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &stx)) {
			*ino = stx.stx_ino;
			return fdinv_type_from_mode(stx.stx_mode);
		}
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
		no_statx = true;
	}
	if (fstatat(fd_dir, name, &st, 0))
		return -errno;
	*ino = st.st_ino;
	return fdinv_type_from_mode(st.st_mode);
}

/* The protocol name sockfs gives every socket ("TCP", "UDPv6", ...): one
 * getxattr, cheaper than the tables, whose cost is every socket of the
 * namespace and, for udp, quadratic (each read() walks the hash from the
 * start again). TCP still needs its state from net/tcp(6). Asked right
 * after the readlinkat, so the fd is most likely still that socket.
 * 0, or -errno of getxattr. */
int fdinv_xattr_kind(struct scan *s, const char *name, struct sock_val *v)
{
	char path[PATH_MAX], proto[64];
	ssize_t n;
	int type;

	snprintf(path, sizeof(path), "%s/fd/%s", s->base_path, name);
	n = getxattr(path, "system.sockprotoname", proto, sizeof(proto) - 1);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENODATA;
	proto[n] = '\0';
	type = fdinv_type_from_protoname(proto);
	v->kind = FDINV_SOCK(type, 0);
	v->src = SRC_XATTR;
	/* MPTCP sockets are in neither table: their state stays unknown. */
	v->mptcp = type == FDT_TCP && !strncmp(proto, "MPTCP", 5);
	if (type == FDT_TCP && !v->mptcp) {
		v->want_state = strstr(proto, "v6") ? 6 : 4;
		if (v->want_state == 4)
			s->want4++;
		else
			s->want6++;
	}
	return 0;
}

/* A probe through the magic link failed with ENOENT: the fd was closed
 * after its readlinkat, unless the link is still there (a recorded tree's
 * link to nowhere). */
bool fdinv_fd_gone(int fd_dir, const char *name)
{
	char buf[8];

	return readlinkat(fd_dir, name, buf, sizeof(buf)) < 0 && errno == ENOENT;
}
