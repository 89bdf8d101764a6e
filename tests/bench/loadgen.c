/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* loadgen: the bench's loopback workloads, in separate client and server
 * processes so that a tracer sees real cross-process connections.
 *
 *	loadgen run  [-P PAIRS] [-n CONNS] [-c CONCURRENCY] [-r REQS] [-s BYTES] [-S BYTES]
 *	loadgen hold [-P PAIRS] [-n CONNS]
 *	loadgen fds  -n FDS
 *	loadgen getpid -n MS
 *	loadgen unix -n MS
 *
 * run: PAIRS client/server process pairs (default 1); the clients open
 * CONNS connections in all (fixed count, split over the pairs), CONCURRENCY
 * at a time per client, each carrying REQS request/response exchanges of
 * BYTES/BYTES (default 1: a new connection per request, the churn case);
 * the client closes first (its side holds the TIME_WAIT). Prints
 * "pids C1,S1,...", waits for a line on stdin (the tracer attaches
 * meanwhile), runs, prints one "result ..." line and exits.
 * hold: the clients open CONNS connections and keep them; prints "pids
 * ...", waits for a line on stdin, then prints "held N" once every
 * connection is established and accepted, and exits at EOF on stdin.
 * fds: one process holding FDS fds (a quarter loopback TCP sockets, a
 * quarter pipe ends, the rest files); prints "pids PID" then "held N",
 * exits at EOF on stdin.
 * getpid: a process with nothing to do with any traced one calls getpid()
 * in a loop for MS milliseconds and prints "result calls=N seconds=S
 * calls_per_s=R": the syscall rate the rest of the machine keeps while a
 * tracer is attached (a syscall tracepoint anywhere puts every task on
 * the slow syscall path).
 * unix: a process with nothing to do with any traced one sends a byte
 * over one end of a unix socketpair and reads it at the other, in a loop
 * for MS milliseconds, and prints "result calls=N seconds=S calls_per_s=R"
 * (a call: one send and one receive): what a tracer on the sockets'
 * send/receive tracepoints, which fire for every family, costs the
 * machine's local IPC. One process, no wakeups: the syscalls alone.
 *
 * Loopback only (127.0.0.1), bounded by count: a bench workload, not a
 * general load tester. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define MAX_PAIRS 64
#define MAX_BYTES 65536

struct opts {
	int pairs;
	long conns, conc, reqs;
	long req_bytes, resp_bytes;
};

struct result {
	long conns, reqs, errors;
	uint64_t t_start, t_end;	/* CLOCK_MONOTONIC ns */
};

static void die(const char *what)
{
	fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static long num(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "loadgen: '%s': expected an integer between %ld and %ld\n", s, min,
			max);
		exit(2);
	}
	return v;
}

/* As many fds as the hard limit allows: root without CAP_SYS_RESOURCE
 * cannot go past it. */
static long raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		die("getrlimit");
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	return (long)rl.rlim_cur;
}

static int listener(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4096) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen))
		die("listener");
	*port = ntohs(a.sin_port);
	return fd;
}

static void wait_byte(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

/* ---- server: accept, answer each complete request, close at the peer's FIN ---- */

struct sconn {
	long got;		/* request bytes received towards the current request */
};

static void server(int lfd, const struct opts *o, int start_fd)
{
	long maxfd = raise_nofile();
	struct sconn *conns = calloc(maxfd, sizeof(*conns));
	static char buf[MAX_BYTES], resp[MAX_BYTES];
	struct epoll_event ev = { .events = EPOLLIN }, evs[256];
	int ep = epoll_create1(0);

	if (!conns || ep < 0)
		die("server setup");
	memset(resp, 's', sizeof(resp));
	ev.data.fd = lfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev))
		die("epoll_ctl listener");
	/* Runs until the coordinator kills it. */
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("epoll_wait");
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				int cfd;

				while ((cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					struct epoll_event cev = { .events = EPOLLIN, .data.fd = cfd };

					if (cfd >= maxfd || epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &cev))
						die("accepted fd");
					conns[cfd].got = 0;
				}
				continue;
			}
			for (;;) {
				ssize_t r = read(fd, buf, sizeof(buf));

				if (r < 0 && errno == EAGAIN)
					break;
				if (r <= 0) {
					close(fd);	/* peer's FIN (or reset): passive close */
					break;
				}
				conns[fd].got += r;
				while (conns[fd].got >= o->req_bytes) {
					conns[fd].got -= o->req_bytes;
					if (write(fd, resp, o->resp_bytes) != o->resp_bytes) {
						close(fd);
						conns[fd].got = 0;
						break;
					}
				}
			}
		}
	}
	(void)start_fd;
}

/* ---- client: CONC connections at a time, REQS exchanges each, active close ---- */

struct cconn {
	int fd;
	long reqs_left;
	long got;		/* response bytes of the current exchange */
	bool connected;
};

static int open_conn(int ep, struct cconn *c, const struct sockaddr_in *dst, long slot)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.u64 = slot };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)dst, sizeof(*dst)) && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	c->fd = fd;
	c->got = 0;
	c->connected = false;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll_ctl client");
	return 0;
}

static void client(uint16_t port, long conns, const struct opts *o, int start_fd, int res_fd)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };
	long conc = o->conc < conns ? o->conc : conns, started = 0, done = 0;
	struct cconn *cs = calloc(conc ? conc : 1, sizeof(*cs));
	static char req[MAX_BYTES], buf[MAX_BYTES];
	struct epoll_event evs[256];
	struct result res = {};
	int ep = epoll_create1(0);

	raise_nofile();
	if (!cs || ep < 0)
		die("client setup");
	memset(req, 'q', sizeof(req));
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	wait_byte(start_fd);
	res.t_start = now_ns();
	for (long i = 0; i < conc; i++) {
		cs[i].reqs_left = o->reqs;
		if (open_conn(ep, &cs[i], &dst, i))
			res.errors++, cs[i].fd = -1;
		else
			started++;
	}
	while (done + res.errors < conns) {
		int n = epoll_wait(ep, evs, 256, 5000);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("client stalled");
		for (int i = 0; i < n; i++) {
			long slot = (long)evs[i].data.u64;
			struct cconn *c = &cs[slot];
			bool finished = false;

			if (!c->connected) {
				int err = 0;
				socklen_t len = sizeof(err);
				struct epoll_event ev = { .events = EPOLLIN, .data.u64 = slot };

				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
				if (err || write(c->fd, req, o->req_bytes) != o->req_bytes) {
					res.errors++;
					finished = true;
				} else {
					c->connected = true;
					epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
				}
			} else {
				ssize_t r;

				while ((r = read(c->fd, buf, sizeof(buf))) > 0)
					c->got += r;
				if (r == 0 || (r < 0 && errno != EAGAIN)) {
					res.errors++;
					finished = true;
				} else if (c->got >= o->resp_bytes) {
					c->got -= o->resp_bytes;
					res.reqs++;
					if (--c->reqs_left == 0) {
						done++;
						finished = true;
					} else if (write(c->fd, req, o->req_bytes) != o->req_bytes) {
						res.errors++;
						finished = true;
					}
				}
			}
			if (!finished)
				continue;
			close(c->fd);	/* active close: FIN_WAIT1 -> ... -> TIME_WAIT */
			c->fd = -1;
			if (started < conns) {
				c->reqs_left = o->reqs;
				if (open_conn(ep, c, &dst, slot))
					res.errors++;
				else
					started++;
			}
		}
	}
	res.t_end = now_ns();
	res.conns = done;
	if (write(res_fd, &res, sizeof(res)) != sizeof(res))
		die("result pipe");
	_exit(0);
}

/* ---- hold: connections opened and kept ---- */

static void hold_client(uint16_t port, long conns, int start_fd, int res_fd)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct result res = {};

	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	raise_nofile();
	wait_byte(start_fd);
	for (long i = 0; i < conns; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&dst, sizeof(dst)))
			die("hold connect");
	}
	res.conns = conns;
	if (write(res_fd, &res, sizeof(res)) != sizeof(res))
		die("result pipe");
	pause();	/* until the coordinator kills it */
}

static void hold_server(int lfd, long conns, int start_fd, int res_fd)
{
	struct result res = {};
	int fl = fcntl(lfd, F_GETFL);

	raise_nofile();
	wait_byte(start_fd);
	fcntl(lfd, F_SETFL, fl & ~O_NONBLOCK);
	for (long i = 0; i < conns; i++)
		if (accept(lfd, NULL, NULL) < 0)
			die("hold accept");
	res.conns = conns;
	if (write(res_fd, &res, sizeof(res)) != sizeof(res))
		die("result pipe");
	pause();
}

/* ---- fds: one process with many fds of several kinds ---- */

static int run_fds(long n)
{
	long lim = raise_nofile(), made = 0;
	char buf[64];
	uint16_t port;
	int lfd;

	if (n + 16 > lim) {
		fprintf(stderr, "loadgen: %ld fds asked, RLIMIT_NOFILE allows %ld\n", n, lim);
		return 1;
	}
	lfd = listener(&port);
	fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) & ~O_NONBLOCK);
	made = 1;
	/* A quarter TCP: connected pairs, both ends here. */
	while (made + 2 <= n / 4) {
		struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd < 0 || connect(fd, (struct sockaddr *)&dst, sizeof(dst)) ||
		    accept(lfd, NULL, NULL) < 0)
			die("fds tcp");
		made += 2;
	}
	while (made + 2 <= n / 2) {
		int p[2];

		if (pipe(p))
			die("fds pipe");
		made += 2;
	}
	for (; made < n; made++)
		if (open("/etc/hostname", O_RDONLY) < 0 && open("/dev/null", O_RDONLY) < 0)
			die("fds open");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	printf("pids %d\nheld %ld\n", (int)getpid(), made);
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	return 0;
}

static int run_getpid(long ms)
{
	struct timespec t0, t;
	double secs = 0;
	long long calls = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		/* The clock is read every 4096 calls: its vDSO read costs less
		 * than a syscall, but not nothing. */
		for (int i = 0; i < 4096; i++)
			syscall(SYS_getpid);
		calls += 4096;
		clock_gettime(CLOCK_MONOTONIC, &t);
		secs = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
	} while (secs * 1000 < ms);
	printf("result calls=%lld seconds=%.6f calls_per_s=%.0f\n", calls, secs, calls / secs);
	return 0;
}

static int run_unix(long ms)
{
	struct timespec t0, t;
	double secs = 0;
	long long calls = 0;
	int sv[2];
	char b = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		perror("loadgen: socketpair");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1024; i++)
			if (write(sv[0], &b, 1) != 1 || read(sv[1], &b, 1) != 1) {
				perror("loadgen: unix socket");
				return 1;
			}
		calls += 1024;
		clock_gettime(CLOCK_MONOTONIC, &t);
		secs = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
	} while (secs * 1000 < ms);
	printf("result calls=%lld seconds=%.6f calls_per_s=%.0f\n", calls, secs, calls / secs);
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* ---- coordinator ---- */

static void usage(void)
{
	fprintf(stderr,
		"usage: loadgen run  [-P PAIRS] [-n CONNS] [-c CONC] [-r REQS] [-s BYTES] [-S BYTES]\n"
		"       loadgen hold [-P PAIRS] [-n CONNS]\n"
		"       loadgen fds  -n FDS\n"
		"       loadgen getpid -n MS\n"
		"       loadgen unix -n MS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .pairs = 1, .conns = 10000, .conc = 32, .reqs = 1, .req_bytes = 64,
			  .resp_bytes = 256 };
	pid_t kids[2 * MAX_PAIRS];
	int start[2], res[2], nkids = 0, opt;
	struct result total = {};
	const char *mode;
	bool hold;
	char line[64];

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "P:n:c:r:s:S:")) != -1) {
		switch (opt) {
		case 'P': o.pairs = num(optarg, 1, MAX_PAIRS); break;
		case 'n': o.conns = num(optarg, 1, 10000000); break;
		case 'c': o.conc = num(optarg, 1, 4096); break;
		case 'r': o.reqs = num(optarg, 1, 1000000); break;
		case 's': o.req_bytes = num(optarg, 1, MAX_BYTES); break;
		case 'S': o.resp_bytes = num(optarg, 1, MAX_BYTES); break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (!strcmp(mode, "fds"))
		return run_fds(o.conns);
	if (!strcmp(mode, "getpid"))
		return run_getpid(o.conns);
	if (!strcmp(mode, "unix"))
		return run_unix(o.conns);
	hold = !strcmp(mode, "hold");
	if (!hold && strcmp(mode, "run"))
		usage();

	signal(SIGPIPE, SIG_IGN);
	/* Whoever started us (perf, ip netns exec, the bench) going away
	 * takes us and so the children along. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (pipe(start) || pipe(res))
		die("pipe");
	fflush(stdout);
	for (int p = 0; p < o.pairs; p++) {
		long share = o.conns / o.pairs + (p < o.conns % o.pairs);
		uint16_t port;
		int lfd = listener(&port);
		pid_t s, c;

		s = fork();
		if (s < 0)
			die("fork");
		if (!s) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);	/* never outlive the coordinator */
			close(start[1]);
			close(res[0]);
			if (hold)
				hold_server(lfd, share, start[0], res[1]);
			server(lfd, &o, start[0]);
			_exit(1);
		}
		close(lfd);	/* the listener is the server's alone */
		c = fork();
		if (c < 0)
			die("fork");
		if (!c) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(start[1]);
			close(res[0]);
			if (hold)
				hold_client(port, share, start[0], res[1]);
			client(port, share, &o, start[0], res[1]);
			_exit(1);
		}
		kids[nkids++] = c;
		kids[nkids++] = s;
	}
	printf("pids ");
	for (int i = 0; i < nkids; i++)
		printf("%s%d", i ? "," : "", kids[i]);
	printf("\n");
	fflush(stdout);
	close(start[0]);
	close(res[1]);

	if (!fgets(line, sizeof(line), stdin)) {
		/* EOF before the start: the bench gave up on this run. */
		for (int i = 0; i < nkids; i++)
			kill(kids[i], SIGKILL);
		for (int i = 0; i < nkids; i++)
			waitpid(kids[i], NULL, 0);
		return 1;
	}
	/* Start bytes release the children together: clients (and in hold
	 * mode the servers too) wait for one each. */
	for (int i = 0; i < (hold ? nkids : o.pairs); i++)
		if (write(start[1], "g", 1) != 1)
			die("start pipe");
	if (hold) {
		/* Clients and servers each report when all are made. */
		for (int i = 0; i < nkids; i++) {
			struct result r;

			if (read(res[0], &r, sizeof(r)) != sizeof(r))
				die("hold result");
			total.conns += r.conns;
		}
		printf("held %ld\n", total.conns / 2);
		fflush(stdout);
		while (read(STDIN_FILENO, line, sizeof(line)) > 0)
			;
	} else {
		total.t_start = UINT64_MAX;
		for (int p = 0; p < o.pairs; p++) {
			struct result r;

			if (read(res[0], &r, sizeof(r)) != sizeof(r))
				die("client result (a client died)");
			total.conns += r.conns;
			total.reqs += r.reqs;
			total.errors += r.errors;
			if (r.t_start < total.t_start)
				total.t_start = r.t_start;
			if (r.t_end > total.t_end)
				total.t_end = r.t_end;
		}
	}
	for (int i = 0; i < nkids; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < nkids; i++)
		waitpid(kids[i], NULL, 0);
	if (!hold) {
		double s = (total.t_end - total.t_start) / 1e9;

		printf("result conns=%ld reqs=%ld errors=%ld seconds=%.6f conns_per_s=%.1f "
		       "reqs_per_s=%.1f\n", total.conns, total.reqs, total.errors, s,
		       total.conns / s, total.reqs / s);
	}
	return total.errors ? 1 : 0;
}
