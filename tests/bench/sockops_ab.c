/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* sockops_ab: loads tests/bench/sockops_ab.bpf.c and attaches one way of
 * following TCP state changes, for tests/bench/sockops_ab.sh (issue #23).
 *
 *	sockops_ab [-b] [-a] [-s] [-L] [-S N] [-n NETNS] MODE CGROUP
 *
 * MODE: tp (the tp_btf main program and its nested twin), sockops (the
 * sock_ops program on CGROUP, a cgroup v2 directory), both, or cover (both,
 * counting alone, then the scenarios below, run by this process from inside
 * CGROUP, and exit; two of them make a connection while sock_ops does
 * nothing, as if it were older than the attach, and one of those gives it
 * STATE_CB from an iter/tcp program before it closes). -b: the state programs' body (storage, a clock read,
 * a ring record at CLOSE); -a: count everything (the tracepoint every socket
 * of this network namespace, traced or not; sock_ops every callback, and its
 * runs begun while another ran on that CPU), where the cost runs count only
 * the transitions of traced sockets; -s: the kernel's run-time statistics
 * on (BPF_ENABLE_STATS, off again when this process exits); -L: sock_ops asks
 * for STATE_CB at connect and ESTABLISHED only, not at TCP_LISTEN_CB (what a
 * listener older than the attach gets); -S N: N empty bpf_loop iterations in
 * the transitions made in a task (connect, close()), in both hooks: a longer
 * window for a softirq's state change on the same CPU (the recursion check).
 *
 * The tracepoint's target is this process's network namespace, or NETNS (a
 * file such as /run/netns/NAME, entered after the cgroup is opened: `ip netns
 * exec` would hide /sys/fs/cgroup behind a sysfs of its own). Prints "ready"
 * once attached, drains the ring buffer until SIGINT, SIGTERM or EOF on
 * stdin, then prints one line a program ("prog NAME runs=N run_ns=N
 * recursion_misses=N"), the transitions each hook saw ("trans HOOK OLD NEW
 * N"), the sock_ops callbacks ("op NAME N") and "sockops_nested N records N
 * lost N". cover prints the same a scenario. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sockops_ab.skel.h"

#define NST 16
#define NOPS 32
enum { H_TP, H_TP_NESTED, H_SOCKOPS, H_N };

static const char *const hook_name[H_N] = { "tp", "tp_nested", "sockops" };
static const char *const st_name[NST] = {
	"?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
	"TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING",
	"NEW_SYN_RECV", "BOUND_INACTIVE", "?", "?",
};
static const char *const op_name[NOPS] = {
	"VOID", "TIMEOUT_INIT", "RWND_INIT", "TCP_CONNECT_CB", "ACTIVE_ESTABLISHED_CB",
	"PASSIVE_ESTABLISHED_CB", "NEEDS_ECN", "BASE_RTT", "RTO_CB", "RETRANS_CB",
	"STATE_CB", "TCP_LISTEN_CB", "RTT_CB", "PARSE_HDR_OPT_CB", "HDR_OPT_LEN_CB",
	"WRITE_HDR_OPT_CB",
};

static volatile sig_atomic_t exiting;

static void on_sig(int sig)
{
	exiting = 1;
}

/* What the programs counted, copied from the skeleton's .bss. */
struct counts {
	__u64 trans[H_N][NST][NST];
	__u64 ops[NOPS];
	__u64 nested, records, lost;
};

static void snap(const struct sockops_ab_bpf *s, struct counts *c)
{
	int fd = bpf_map__fd(s->maps.trans);
	__u32 k;

	for (k = 0; k < H_N * NST * NST; k++)
		if (bpf_map_lookup_elem(fd, &k, &c->trans[k / (NST * NST)][k / NST % NST][k % NST]))
			c->trans[k / (NST * NST)][k / NST % NST][k % NST] = 0;
	memcpy(c->ops, (const void *)s->bss->ops, sizeof(c->ops));
	c->nested = s->bss->sockops_nested;
	c->records = s->bss->records;
	c->lost = s->bss->records_lost;
}

/* The counts of `b` less those of `a`, printed with PREFIX. */
static void print_counts(const char *prefix, const struct counts *a, const struct counts *b)
{
	int h, o, n;

	for (h = 0; h < H_N; h++)
		for (o = 0; o < NST; o++)
			for (n = 0; n < NST; n++) {
				__u64 d = b->trans[h][o][n] - (a ? a->trans[h][o][n] : 0);

				if (d)
					printf("%strans %s %s %s %llu\n", prefix, hook_name[h],
					       st_name[o], st_name[n], (unsigned long long)d);
			}
	for (o = 0; o < NOPS; o++) {
		__u64 d = b->ops[o] - (a ? a->ops[o] : 0);

		if (d)
			printf("%sop %s %llu\n", prefix, op_name[o] ? op_name[o] : "?",
			       (unsigned long long)d);
	}
	printf("%ssockops_nested %llu records %llu lost %llu\n", prefix,
	       (unsigned long long)(b->nested - (a ? a->nested : 0)),
	       (unsigned long long)(b->records - (a ? a->records : 0)),
	       (unsigned long long)(b->lost - (a ? a->lost : 0)));
}

static void print_prog(struct bpf_program *p)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(p);

	if (fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	printf("prog %s runs=%llu run_ns=%llu recursion_misses=%llu\n", bpf_program__name(p),
	       (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
	       (unsigned long long)info.recursion_misses);
}

/* ---- cover: the scenarios, on 127.0.0.1 ---- */

static int tcp_socket(void)
{
	return socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

static int listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int l = tcp_socket();

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)a, sizeof(*a)) || listen(l, 16) ||
	    getsockname(l, (struct sockaddr *)a, &len)) {
		perror("sockops_ab: listener");
		exit(1);
	}
	return l;
}

/* A connected pair: client *c, accepted *s. */
static void pair(int l, const struct sockaddr_in *a, int *c, int *s)
{
	*c = tcp_socket();
	if (*c < 0 || connect(*c, (const struct sockaddr *)a, sizeof(*a))) {
		perror("sockops_ab: connect");
		exit(1);
	}
	*s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (*s < 0) {
		perror("sockops_ab: accept");
		exit(1);
	}
}

static void exchange(int c, int s)
{
	char b = 'x';

	if (write(c, &b, 1) != 1 || read(s, &b, 1) != 1 || write(s, &b, 1) != 1 ||
	    read(c, &b, 1) != 1) {
		perror("sockops_ab: exchange");
		exit(1);
	}
}

static void read_eof(int fd)
{
	char b;

	while (read(fd, &b, 1) > 0)
		;
}

static __u64 now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ull + t.tv_nsec / 1000000;
}

/* Waits (at most 2 s) until the counts have not moved for 100 ms: the
 * softirq's last transitions (FIN_WAIT2->CLOSE, LAST_ACK->CLOSE) done. */
static void settle(const struct sockops_ab_bpf *skel)
{
	struct counts a, b;
	__u64 start = now_ms(), still = now_ms();

	snap(skel, &a);
	while (now_ms() - start < 2000 && now_ms() - still < 100) {
		poll(NULL, 0, 10);
		snap(skel, &b);
		if (memcmp(&a, &b, sizeof(a))) {
			a = b;
			still = now_ms();
		}
	}
}

/* Runs the adopting iterator over this namespace's TCP sockets. */
static void adopt(struct bpf_link *iter)
{
	char buf[64];
	int fd = bpf_iter_create(bpf_link__fd(iter));

	if (fd < 0) {
		fprintf(stderr, "sockops_ab: iterator: %s\n", strerror(errno));
		return;
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

static void scenario(struct sockops_ab_bpf *skel, struct bpf_link *iter, const char *name,
		     int which)
{
	struct sockaddr_in a;
	struct counts before, after;
	__u64 adopted = 0;
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };
	int l, c, s;

	snap(skel, &before);
	switch (which) {
	case 0:		/* client closes first: client TIME_WAIT, server CLOSE_WAIT/LAST_ACK */
		l = listener(&a);
		pair(l, &a, &c, &s);
		exchange(c, s);
		close(c);
		read_eof(s);
		close(s);
		close(l);
		break;
	case 1:		/* server closes first */
		l = listener(&a);
		pair(l, &a, &c, &s);
		exchange(c, s);
		close(s);
		read_eof(c);
		close(c);
		close(l);
		break;
	case 2:		/* RST: the client closes with SO_LINGER 0 */
		l = listener(&a);
		pair(l, &a, &c, &s);
		exchange(c, s);
		setsockopt(c, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
		close(c);
		read_eof(s);
		close(s);
		close(l);
		break;
	case 3:		/* connect refused: a port whose listener is gone */
		l = listener(&a);
		close(l);
		c = tcp_socket();
		if (connect(c, (struct sockaddr *)&a, sizeof(a)) == 0 || errno != ECONNREFUSED)
			fprintf(stderr, "sockops_ab: refused: %s\n", strerror(errno));
		close(c);
		break;
	case 4:		/* a listener, nothing else */
		l = listener(&a);
		close(l);
		break;
	case 6:		/* a connection older than the attach, then closed */
	case 7:		/* the same, given STATE_CB by a tcp iterator first */
		skel->bss->so_off = 1;
		l = listener(&a);
		pair(l, &a, &c, &s);
		exchange(c, s);
		skel->bss->so_off = 0;
		if (which == 7) {
			adopted = skel->bss->adopted;
			adopt(iter);
			adopted = skel->bss->adopted - adopted;
		}
		close(c);
		read_eof(s);
		close(s);
		close(l);
		break;
	case 5:		/* a child left in the accept queue when its listener closes */
		l = listener(&a);
		c = tcp_socket();
		if (connect(c, (struct sockaddr *)&a, sizeof(a)))
			perror("sockops_ab: connect");
		close(l);
		read_eof(c);
		close(c);
		break;
	}
	settle(skel);
	snap(skel, &after);
	printf("scenario %s\n", name);
	if (which == 7)
		printf("  adopted %llu last_error %lld\n", (unsigned long long)adopted,
		       (long long)skel->bss->adopt_err);
	print_counts("  ", &before, &after);
}

static int join_cgroup(int cgfd)
{
	char pid[32];
	int fd, n, rc = -1;

	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	fd = openat(cgfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && write(fd, pid, n) == n)
		rc = 0;
	if (fd >= 0)
		close(fd);
	return rc;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int consume(void *ctx, void *data, size_t len)
{
	return 0;
}

int main(int argc, char **argv)
{
	struct sockops_ab_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct bpf_link *links[4] = {};
	bool want_body = false, all = false, stats = false, no_listen = false, tp, so, cover;
	int opt, cgfd = -1, stats_fd = -1, err = 1, i;
	struct stat ns;
	const char *mode, *cg, *netns = NULL;
	unsigned long spin = 0;
	char *end_arg;
	struct counts end;

	while ((opt = getopt(argc, argv, "basLS:n:")) != -1) {
		switch (opt) {
		case 'n': netns = optarg; break;
		case 'b': want_body = true; break;
		case 'a': all = true; break;
		case 's': stats = true; break;
		case 'L': no_listen = true; break;
		case 'S':
			errno = 0;
			spin = strtoul(optarg, &end_arg, 10);
			if (errno || *end_arg || spin > 1000000) {
				fprintf(stderr, "sockops_ab: -S takes 0..1000000 iterations\n");
				return 2;
			}
			break;
		default: goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	mode = argv[optind];
	cg = argv[optind + 1];
	cover = !strcmp(mode, "cover");
	tp = cover || !strcmp(mode, "tp") || !strcmp(mode, "both");
	so = cover || !strcmp(mode, "sockops") || !strcmp(mode, "both");
	if (!tp && !so)
		goto usage;
	libbpf_set_print(print_libbpf);
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	signal(SIGPIPE, SIG_IGN);

	cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0) {
		fprintf(stderr, "sockops_ab: %s: %s\n", cg, strerror(errno));
		return 1;
	}
	/* cover's sockets are made in the cgroup, by this process. */
	if (cover && join_cgroup(cgfd)) {
		fprintf(stderr, "sockops_ab: join %s: %s\n", cg, strerror(errno));
		return 1;
	}
	if (netns) {
		int nfd = open(netns, O_RDONLY | O_CLOEXEC);

		if (nfd < 0 || setns(nfd, CLONE_NEWNET)) {
			fprintf(stderr, "sockops_ab: enter %s: %s\n", netns, strerror(errno));
			return 1;
		}
		close(nfd);
	}
	if (stat("/proc/self/ns/net", &ns)) {
		perror("sockops_ab: /proc/self/ns/net");
		return 1;
	}
	skel = sockops_ab_bpf__open();
	if (!skel) {
		fprintf(stderr, "sockops_ab: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->netns_ino = ns.st_ino;
	skel->rodata->body = want_body && !cover;
	skel->rodata->count_all = all || cover;
	skel->rodata->listen_flag = !no_listen;
	skel->rodata->spin = spin;
	bpf_program__set_autoload(skel->progs.handle_state_tp, tp);
	bpf_program__set_autoload(skel->progs.handle_state_tp_nested, tp);
	bpf_program__set_autoload(skel->progs.handle_sockops, so);
	bpf_program__set_autoload(skel->progs.adopt_tcp, cover);
	if ((err = sockops_ab_bpf__load(skel))) {
		fprintf(stderr, "sockops_ab: load: %s\n", strerror(-err));
		goto cleanup;
	}
	err = 1;
	if (stats) {
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0) {
			fprintf(stderr, "sockops_ab: BPF_ENABLE_STATS: %s\n", strerror(-stats_fd));
			goto cleanup;
		}
	}
	/* The tracepoint calls its programs in attach order: main, then twin. */
	if (tp) {
		links[0] = bpf_program__attach(skel->progs.handle_state_tp);
		links[1] = bpf_program__attach(skel->progs.handle_state_tp_nested);
		if (!links[0] || !links[1]) {
			fprintf(stderr, "sockops_ab: attach tp_btf: %s\n", strerror(errno));
			goto cleanup;
		}
	}
	if (so) {
		links[2] = bpf_program__attach_cgroup(skel->progs.handle_sockops, cgfd);
		if (!links[2]) {
			fprintf(stderr, "sockops_ab: attach sock_ops to %s: %s\n", cg, strerror(errno));
			goto cleanup;
		}
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), consume, NULL, NULL);
	if (!rb) {
		fprintf(stderr, "sockops_ab: ring buffer: %s\n", strerror(errno));
		goto cleanup;
	}

	if (cover) {
		static const char *const names[] = {
			"client_closes_first", "server_closes_first", "rst_linger0",
			"connect_refused", "listen_close", "accept_queue_child_listener_closed",
			"older_than_attach", "older_than_attach_adopted_by_iter_tcp",
		};

		links[3] = bpf_program__attach_iter(skel->progs.adopt_tcp, NULL);
		if (!links[3]) {
			fprintf(stderr, "sockops_ab: attach iter/tcp: %s\n", strerror(errno));
			goto cleanup;
		}

		for (i = 0; i < 8; i++)
			scenario(skel, links[3], names[i], i);
		err = 0;
		goto cleanup;
	}

	printf("ready\n");
	fflush(stdout);
	while (!exiting) {
		struct pollfd p = { .fd = 0, .events = POLLIN };
		char buf[256];

		/* Records drained on a timer (BPF_RB_NO_WAKEUP), as connscope does. */
		ring_buffer__consume(rb);
		if (poll(&p, 1, 20) > 0 && read(0, buf, sizeof(buf)) <= 0)
			break;
	}
	/* The load's last closes may still run in a softirq: a snapshot taken
	 * meanwhile would count one hook's call and not the other's. */
	settle(skel);
	ring_buffer__consume(rb);
	if (tp) {
		print_prog(skel->progs.handle_state_tp);
		print_prog(skel->progs.handle_state_tp_nested);
	}
	if (so)
		print_prog(skel->progs.handle_sockops);
	snap(skel, &end);
	print_counts("", NULL, &end);
	err = 0;
cleanup:
	fflush(stdout);
	ring_buffer__free(rb);
	for (i = 0; i < 4; i++)
		bpf_link__destroy(links[i]);
	if (cgfd >= 0)
		close(cgfd);
	if (stats_fd >= 0)
		close(stats_fd);
	sockops_ab_bpf__destroy(skel);
	return err;
usage:
	fprintf(stderr, "usage: sockops_ab [-b] [-a] [-s] [-L] [-S N] [-n NETNS] tp|sockops|both|cover CGROUP\n");
	return 2;
}
