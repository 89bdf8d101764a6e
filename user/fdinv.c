/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* fd inventory from /proc/PID/fd: one readlinkat per fd, a stat only for
 * paths, a getxattr per socket the caller did not know, the TCP tables of
 * /proc/PID/net once for the states (see fdinv.h). */
#define _GNU_SOURCE		/* statx */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "fdinv.h"
#include "hashmap.h"
#include "procfs.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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
static int guess_path_type(const char *l, size_t len)
{
	if (HAS_PREFIX(l, len, "/dev/") && !HAS_PREFIX(l, len, "/dev/shm/") &&
	    !HAS_PREFIX(l, len, "/dev/mqueue/"))
		return FDT_CHR;
	return FDT_FILE;
}

/* ---- the scan ---------------------------------------------------------- */

#define NO_REC UINT32_MAX

enum { SRC_NONE, SRC_CALLBACK, SRC_TABLE, SRC_XATTR };

/* Per distinct socket inode. */
struct sock_val {
	int32_t kind;		/* FDINV_SOCK(...), -1 not known yet */
	uint8_t src;		/* what told the type */
	uint8_t want_state;	/* TCP by getxattr, state still to find:
				 * 4 in net/tcp, 6 in net/tcp6 */
	uint8_t in_table;	/* a table row was found for it */
};

/* One socket fd, classified once all its inodes are known. */
struct pend {
	uint32_t ino;
	uint32_t rec;		/* index in inv->fds, or NO_REC */
};

struct scan {
	struct fd_inventory *inv;
	const struct fdinv_opts *o;
	unsigned int flags;
	int base;		/* dirfd of /proc/PID or /proc/PID/task/TID */
	const char *base_path;
	struct pend *pend;
	size_t nr_pend, pend_cap;
	size_t rec_cap;
	struct hmap socks;	/* uint32_t inode -> struct sock_val */
	size_t unresolved;	/* socks entries with kind < 0 */
	size_t want4, want6;	/* entries with want_state 4, 6 */
	bool read4, read6;	/* net/tcp, net/tcp6 were read whole */
	char link[PATH_MAX];
};

static int scan_errno(int e)
{
	switch (e) {
	case ESRCH:	/* the task went away under an open procfs file */
		return -ENOENT;
	case EPERM:	/* ptrace access check */
		return -EACCES;
	default:
		return -e;
	}
}

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : 64;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, ncap * size);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* "123" -> 123; -1 for anything not a plain fd number. */
static int parse_fd(const char *s)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > INT_MAX / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v > INT_MAX ? -1 : (int)v;
}

/* pos and flags are the first two lines of every fdinfo file; a short read
 * is enough (epoll and inotify append a line per watch after them). */
static void read_fdinfo(int info_dir, const char *name, struct fdinv_fd *r)
{
	char buf[256], *p, *q;
	ssize_t n;
	int fd;

	fd = openat(info_dir, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (strncmp(buf, "pos:", 4))
		return;
	p = strchr(buf, '\n');
	if (!p || strncmp(p + 1, "flags:", 6))
		return;
	r->pos = strtoll(buf + 4, NULL, 10);
	r->flags = strtoul(p + 7, &q, 8);
	if (q == p + 7)
		return;
	r->has_fdinfo = 1;
}

/* File type of the fd's target: statx asks for the type only, and
 * AT_STATX_DONT_SYNC keeps network filesystems from a round trip (and a
 * hung server from hanging us). Falls back to fstatat where statx is
 * missing or filtered. */
static int stat_type(int fd_dir, const char *name, uint64_t *ino)
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

static bool valid_sock_kind(int kind)
{
	return kind >= 0 && FDINV_SOCK_TYPE(kind) <= FDT_OTHER_SOCKET &&
	       FDINV_SOCK_STATE(kind) < FDINV_TCP_STATES;
}

/* The protocol name sockfs gives every socket ("TCP", "UDPv6", ...): one
 * getxattr, cheaper than the tables, whose cost is every socket of the
 * namespace and, for udp, quadratic (each read() walks the hash from the
 * start again). TCP still needs its state from net/tcp(6). Asked right
 * after the readlinkat, so the fd is most likely still that socket.
 * 0, or -errno of getxattr. */
static int xattr_kind(struct scan *s, const char *name, struct sock_val *v)
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
	if (type == FDT_TCP && strncmp(proto, "MPTCP", 5)) {
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
static bool fd_gone(int fd_dir, const char *name)
{
	char buf[8];

	return readlinkat(fd_dir, name, buf, sizeof(buf)) < 0 && errno == ENOENT;
}

/* A socket fd: on the first fd of an inode ask the callback, then
 * getxattr. Sets *gone when the fd closed meanwhile (not counted then). */
static int add_socket(struct scan *s, int fd_dir, const char *name, uint32_t ino,
		      uint32_t rec, bool *gone)
{
	struct sock_val val = { .kind = -1 }, *v;
	int err;

	*gone = false;
	if (ino && !hmap_get(&s->socks, &ino)) {
		int kind = s->o->sock_kind ? s->o->sock_kind(ino, s->o->sock_ctx) : -1;

		if (valid_sock_kind(kind)) {
			val.kind = kind;
			val.src = SRC_CALLBACK;
		} else if (!(s->flags & FDINV_NO_PROBE) &&
			   xattr_kind(s, name, &val) == -ENOENT && fd_gone(fd_dir, name)) {
			*gone = true;
			return 0;
		}
		v = hmap_upsert(&s->socks, &ino, NULL);
		if (!v)
			return -ENOMEM;
		*v = val;
		if (v->kind < 0)
			s->unresolved++;
	}
	err = grow((void **)&s->pend, &s->pend_cap, s->nr_pend + 1, sizeof(*s->pend));
	if (err)
		return err;
	/* ino 0 ("socket:[]") is pending too, with nothing to look up */
	s->pend[s->nr_pend++] = (struct pend){ .ino = ino, .rec = rec };
	return 0;
}

/* One /proc/PID/fd entry. */
static int scan_one(struct scan *s, int fd_dir, int info_dir, const char *name)
{
	struct fd_inventory *inv = s->inv;
	struct fdinv_fd *r = NULL;
	uint32_t rec = NO_REC;
	uint64_t ino;
	int fd, type, needs;
	ssize_t n;

	fd = parse_fd(name);
	if (fd < 0)
		return 0;
	n = readlinkat(fd_dir, name, s->link, sizeof(s->link) - 1);
	if (n < 0) {
		if (errno == ENOENT)	/* closed since readdir */
			return 0;
		/* EACCES here: the process exec'd into other credentials
		 * mid-scan; what we have so far would be half a table. */
		return scan_errno(errno);
	}
	s->link[n] = '\0';
	type = fdinv_classify_link(s->link, n, &ino, &needs);
	if (needs & FDINV_NEED_STAT) {
		int t = -ENOENT;

		if (!(s->flags & FDINV_NO_PROBE)) {
			t = stat_type(fd_dir, name, &ino);
			if (t == -ENOENT && fd_gone(fd_dir, name))
				return 0;
		}
		/* No stat, or it failed (a recorded tree's link to nowhere):
		 * the text still counts. */
		if (t < 0)
			type = guess_path_type(s->link, n);
		else
			type = t;
	}
	if (s->flags & FDINV_RECORDS) {
		int err = grow((void **)&inv->fds, &s->rec_cap, inv->nr_fds + 1,
			       sizeof(*inv->fds));

		if (err)
			return err;
		rec = inv->nr_fds;
	}
	if (needs & FDINV_NEED_SOCK) {
		bool gone;
		int err = add_socket(s, fd_dir, name, (uint32_t)ino, rec, &gone);

		if (err || gone)
			return err;
	} else {
		inv->by_type[type]++;
	}

	inv->total++;
	if (fd > inv->max_fd)
		inv->max_fd = fd;
	if (s->flags & FDINV_RECORDS) {
		r = &inv->fds[inv->nr_fds++];
		*r = (struct fdinv_fd){ .fd = fd, .type = type, .ino = ino };
		if (s->flags & FDINV_LINKS) {
			r->link = strdup(s->link);
			if (!r->link)
				return -ENOMEM;
		}
		if (info_dir >= 0) {
			read_fdinfo(info_dir, name, r);
			if (r->has_fdinfo && (r->flags & O_CLOEXEC))
				inv->cloexec++;
		}
	}
	return 0;
}

/* Whitespace-separated field n (0-based) of line; NULL past the end. */
static const char *field(const char *p, int n)
{
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			return NULL;
		if (!n--)
			return p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
	}
}

static int header_column(const char *line, const char *name)
{
	size_t nlen = strlen(name);
	const char *p;

	for (int i = 0; (p = field(line, i)); i++)
		if (!strncmp(p, name, nlen) &&
		    (p[nlen] == ' ' || p[nlen] == '\t' || p[nlen] == '\n' || !p[nlen]))
			return i;
	return -1;
}

/* The socket tables of the process's network namespace. tcp and udp rows
 * have "tx_queue rx_queue" as one field, so their header does not line up
 * with the data and the columns are fixed (unchanged since 2.6); unix and
 * netlink are read by their header. */
static const struct net_table {
	const char *name;
	int type;
	int family;		/* TCP: 4 or 6, to match want_state */
	int inode_col;		/* -1: the header's "Inode" column */
	int state_col;		/* hex TCP state, -1 none */
} net_tables[] = {
	{ "net/tcp", FDT_TCP, 4, 9, 3 },
	{ "net/tcp6", FDT_TCP, 6, 9, 3 },
	{ "net/udp", FDT_UDP, 0, 9, -1 },
	{ "net/udp6", FDT_UDP, 0, 9, -1 },
	{ "net/unix", FDT_UNIX, 0, -1, -1 },
	{ "net/netlink", FDT_NETLINK, 0, -1, -1 },
};

/* Sockets this table can still tell anything about. */
static size_t table_wanted(const struct scan *s, const struct net_table *t)
{
	return s->unresolved + (t->family == 4 ? s->want4 : t->family == 6 ? s->want6 : 0);
}

/* One row: the socket it names, if one of ours still needs it. */
static void table_row(struct scan *s, const struct net_table *t, const char *line,
		      int icol)
{
	const char *p = field(line, icol);
	struct sock_val *v;
	unsigned long long ino;
	int state = 0;
	char *end;
	uint32_t key;

	if (!p)
		return;
	ino = strtoull(p, &end, 10);
	if (end == p || !ino || ino > UINT32_MAX)
		return;		/* TIME_WAIT and request socks: no inode */
	key = ino;
	v = hmap_get(&s->socks, &key);
	if (!v || (v->kind >= 0 && (!v->want_state || v->want_state != t->family)))
		return;
	if (t->state_col >= 0 && (p = field(line, t->state_col)))
		state = strtol(p, NULL, 16);
	if (state < 0 || state >= FDINV_TCP_STATES)
		state = 0;
	if (v->kind < 0) {
		v->src = SRC_TABLE;
		s->unresolved--;
	} else if (t->family == 4) {
		s->want4--;
	} else {
		s->want6--;
	}
	v->kind = FDINV_SOCK(t->type, t->type == FDT_TCP ? state : 0);
	v->want_state = 0;
	v->in_table = 1;
}

/* Best effort: a table that is missing (no IPv6) or unreadable leaves its
 * sockets to the next step. Stops once nothing more is wanted from it. */
static void read_net_table(struct scan *s, const struct net_table *t)
{
	int fd, icol = t->inode_col;
	char *line = NULL;
	size_t cap = 0;
	bool head = true, whole = true;
	FILE *f;

	fd = openat(s->base, t->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	/* seq_file hands out one page per read(); a bigger buffer saves
	 * nothing there, but stdio's default may be smaller. */
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	s->inv->net_tables_read++;
	for (;;) {
		if (!table_wanted(s, t)) {
			whole = false;
			break;
		}
		if (getline(&line, &cap, f) <= 0)
			break;
		if (head) {
			head = false;
			if (icol < 0 && (icol = header_column(line, "Inode")) < 0) {
				whole = false;
				break;
			}
			continue;
		}
		table_row(s, t, line, icol);
	}
	if (whole && ferror(f))
		whole = false;
	if (whole && t->family == 4)
		s->read4 = true;
	if (whole && t->family == 6)
		s->read6 = true;
	free(line);
	fclose(f);
}

/* The callback and getxattr have had their say (add_socket): the tables
 * for what is left, the TCP states getxattr cannot give and everything
 * when it failed. Then count. */
static void resolve_sockets(struct scan *s)
{
	struct fd_inventory *inv = s->inv;
	void *vp;
	size_t it;

	if (!(s->flags & FDINV_NO_NET_TABLES))
		for (size_t i = 0; i < ARRAY_SIZE(net_tables); i++)
			if (table_wanted(s, &net_tables[i]))
				read_net_table(s, &net_tables[i]);

	for (it = 0; (s->want4 || s->want6) && hmap_next(&s->socks, &it, NULL, &vp); ) {
		struct sock_val *v = vp;

		/* A TCP socket in no table is in no hash: never connected,
		 * connect failed, or bound only. That is TCP_CLOSE. */
		if ((v->want_state == 4 && s->read4) || (v->want_state == 6 && s->read6))
			v->kind = FDINV_SOCK(FDT_TCP, CS_TCP_CLOSE);
	}

	for (size_t i = 0; i < s->nr_pend; i++) {
		struct sock_val *v = s->pend[i].ino ?
				     hmap_get(&s->socks, &s->pend[i].ino) : NULL;
		int kind = v && v->kind >= 0 ? v->kind : FDINV_SOCK(FDT_OTHER_SOCKET, 0);
		int type = FDINV_SOCK_TYPE(kind), state = FDINV_SOCK_STATE(kind);

		inv->by_type[type]++;
		if (type == FDT_TCP)
			inv->tcp_state[state]++;
		if (v && v->src == SRC_CALLBACK)
			inv->sock_by_callback++;
		if (v && v->src == SRC_XATTR)
			inv->sock_by_xattr++;
		if (v && v->in_table)
			inv->sock_by_table++;
		if (s->pend[i].rec != NO_REC) {
			struct fdinv_fd *r = &inv->fds[s->pend[i].rec];

			r->type = type;
			r->tcp_state = type == FDT_TCP ? state : 0;
		}
	}
}

static int rec_cmp(const void *a, const void *b)
{
	const struct fdinv_fd *x = a, *y = b;

	return (x->fd > y->fd) - (x->fd < y->fd);
}

/* Procfs lists fds in ascending order; a recorded tree on another
 * filesystem comes in hash order. */
static void sort_records(struct fd_inventory *inv)
{
	for (size_t i = 1; i < inv->nr_fds; i++) {
		if (inv->fds[i - 1].fd > inv->fds[i].fd) {
			qsort(inv->fds, inv->nr_fds, sizeof(*inv->fds), rec_cmp);
			return;
		}
	}
}

/* Read the fd table of the task at s->base. */
static int scan_task(struct scan *s)
{
	int fd_dir, info_dir = -1, err = 0;
	struct dirent *de;
	DIR *d;

	fd_dir = openat(s->base, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd_dir < 0)
		return scan_errno(errno);
	if (s->flags & FDINV_FDINFO) {
		info_dir = openat(s->base, "fdinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (info_dir < 0) {
			err = scan_errno(errno);
			close(fd_dir);
			return err;
		}
	}
	d = fdopendir(fd_dir);
	if (!d) {
		err = -errno;
		close(fd_dir);
		goto out;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			/* getdents on a task that exited: ENOENT */
			if (errno)
				err = scan_errno(errno);
			break;
		}
		if (de->d_name[0] == '.')
			continue;
		err = scan_one(s, dirfd(d), info_dir, de->d_name);
		if (err)
			break;
	}
	closedir(d);
	if (!err) {
		/* Records are indexed by the pending sockets: sort after. */
		resolve_sockets(s);
		sort_records(s->inv);
	}
out:
	if (info_dir >= 0)
		close(info_dir);
	return err;
}

/* State letter of the task at dirfd base (field 3 of its stat), or
 * -ENOENT when it is gone. */
static int task_state(int base)
{
	char buf[512], *p;
	ssize_t n;
	int fd;

	fd = openat(base, "stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return scan_errno(errno);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		n = scan_errno(errno);
		close(fd);
		return n;
	}
	close(fd);
	if (n == 0)
		return -ENOENT;
	buf[n] = '\0';
	/* comm may hold ") ": the state follows the last one. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EPROTO;
	return (unsigned char)p[2];
}

static bool dead_state(int st)
{
	return st == 'Z' || st == 'X' || st == 'x';
}

/* A live thread of the process whose leader is a zombie; its dirfd in
 * *tfd, its tid returned, or 0 when there is none. */
static pid_t live_thread(int pid_dir, pid_t pid, int *tfd)
{
	struct dirent *de;
	pid_t found = 0;
	int tdir;
	DIR *d;

	tdir = openat(pid_dir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tdir < 0)
		return 0;
	d = fdopendir(tdir);
	if (!d) {
		close(tdir);
		return 0;
	}
	while (!found && (de = readdir(d))) {
		int tid = parse_fd(de->d_name), fd, st;

		if (tid <= 0 || tid == pid)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		st = task_state(fd);
		if (st > 0 && !dead_state(st)) {
			*tfd = fd;
			found = tid;
		} else {
			close(fd);
		}
	}
	closedir(d);
	return found;
}

static void inv_reset(struct fd_inventory *inv, pid_t pid, pid_t tid)
{
	memset(inv, 0, sizeof(*inv));
	inv->pid = pid;
	inv->tid = tid;
	inv->max_fd = -1;
}

/* Scan the task at dirfd base, then make sure it still lives: a process
 * that exits mid-scan shows a truncated (or empty) table without any
 * error, and only its state tells. */
static int scan_and_check(struct scan *s, int base, const char *base_path,
			  pid_t pid, pid_t tid)
{
	struct scan fresh = { .o = s->o, .flags = s->flags, .inv = s->inv };
	int err, st;

	hmap_free(&s->socks);
	free(s->pend);
	fdinv_free(s->inv);
	*s = fresh;
	hmap_init(&s->socks, sizeof(uint32_t), sizeof(struct sock_val));
	inv_reset(s->inv, pid, tid);
	s->base = base;
	s->base_path = base_path;
	err = scan_task(s);
	if (err == -EACCES) {
		/* A task without an mm (a zombie) has its fd dir owned by
		 * root: dead, not forbidden. */
		st = task_state(base);
		return st > 0 && dead_state(st) ? 1 : err;
	}
	if (err)
		return err;
	st = task_state(base);
	if (st < 0)
		return st;
	return dead_state(st) ? 1 : 0;
}

int fdinv_scan(pid_t pid, struct fd_inventory *inv, const struct fdinv_opts *o)
{
	static const struct fdinv_opts defaults;
	char path[PATH_MAX], tpath[PATH_MAX + 32];
	struct scan *s;
	int pid_dir, tfd = -1, err;
	pid_t tid;

	inv_reset(inv, pid, pid);
	if (pid <= 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));	/* holds a PATH_MAX buffer */
	if (!s)
		return -ENOMEM;
	s->o = o ? o : &defaults;
	s->flags = s->o->flags;
	if (s->flags & (FDINV_FDINFO | FDINV_LINKS))
		s->flags |= FDINV_RECORDS;
	s->inv = inv;
	hmap_init(&s->socks, sizeof(uint32_t), sizeof(struct sock_val));

	snprintf(path, sizeof(path), "%s/%d", procfs_root, (int)pid);
	pid_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pid_dir < 0) {
		err = scan_errno(errno);
		goto out;
	}
	err = scan_and_check(s, pid_dir, path, pid, pid);
	if (err == 1) {
		/* A zombie leader has no fd table; the process lives on in
		 * its other threads (the leader called pthread_exit), which
		 * share one. No such thread: the process is gone. */
		tid = live_thread(pid_dir, pid, &tfd);
		err = -ENOENT;
		if (tid > 0) {
			snprintf(tpath, sizeof(tpath), "%s/task/%d", path, (int)tid);
			err = scan_and_check(s, tfd, tpath, pid, tid);
			if (err == 1)
				err = -ENOENT;
			close(tfd);
		}
	}
	close(pid_dir);
out:
	hmap_free(&s->socks);
	free(s->pend);
	free(s);
	if (err) {
		fdinv_free(inv);
		inv_reset(inv, pid, pid);
	}
	return err;
}

void fdinv_free(struct fd_inventory *inv)
{
	for (size_t i = 0; i < inv->nr_fds; i++)
		free(inv->fds[i].link);
	free(inv->fds);
	inv->fds = NULL;
	inv->nr_fds = 0;
}

/* ---- limits ------------------------------------------------------------ */

/* "1024" or "unlimited"; -EPROTO for anything else. */
static int parse_limit(const char *p, uint64_t *out)
{
	char *end;

	if (!p)
		return -EPROTO;
	if (!strncmp(p, "unlimited", 9)) {
		*out = UINT64_MAX;
		return 0;
	}
	errno = 0;
	*out = strtoull(p, &end, 10);
	if (end == p || errno)
		return -EPROTO;
	return 0;
}

/* The first n numbers of procfs_root/rel; how many were read, or -errno. */
static int read_numbers(const char *rel, uint64_t *v, int n)
{
	char path[PATH_MAX], buf[256], *p, *end;
	ssize_t len;
	int fd, i;

	snprintf(path, sizeof(path), "%s/%s", procfs_root, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = '\0';
	for (i = 0, p = buf; i < n; i++, p = end) {
		v[i] = strtoull(p, &end, 10);
		if (end == p)
			break;
	}
	return i;
}

int fdinv_limits(pid_t pid, struct fd_limits *l)
{
	char path[PATH_MAX], *line = NULL;
	uint64_t nr[3];
	size_t cap = 0;
	bool any = false;
	int err = -EPROTO;
	FILE *f;

	memset(l, 0, sizeof(*l));
	if (read_numbers("sys/fs/file-nr", nr, 3) >= 1)
		l->sys_open = nr[0];
	if (read_numbers("sys/fs/file-max", &l->sys_max, 1) < 1 &&
	    read_numbers("sys/fs/file-nr", nr, 3) == 3)
		l->sys_max = nr[2];	/* the same number, in file-nr's third field */
	if (pid <= 0)
		return 0;

	snprintf(path, sizeof(path), "%s/%d/limits", procfs_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return scan_errno(errno);
	/* "Limit  Soft Limit  Hard Limit  Units": the name has spaces, the
	 * values do not. */
	errno = 0;
	while (getline(&line, &cap, f) > 0) {
		any = true;
		if (strncmp(line, "Max open files ", 15))
			continue;
		err = parse_limit(field(line + 15, 0), &l->soft);
		if (!err)
			err = parse_limit(field(line + 15, 1), &l->hard);
		break;
	}
	/* The file of a task reaped between open and read is empty. */
	if (!any)
		err = errno ? scan_errno(errno) : -ENOENT;
	free(line);
	fclose(f);
	return err;
}
