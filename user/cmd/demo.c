// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#define _GNU_SOURCE
/* `connscope demo`: a built-in loopback workload with the classic mistake
 * (a client that opens a new connection for every request), attached and
 * summarised, so the output can be read without a service of one's own. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "attach.h"
#include "demo.h"
#include "text_wrap.h"

#define DEMO_MAX_CONNS 4096

/* Accepts, answers each request line with "OK\n", closes on EOF. */
static void demo_server(int lfd)
{
	struct pollfd fds[DEMO_MAX_CONNS];
	nfds_t n = 1;
	char buf[256];

	fds[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	for (;;) {
		if (poll(fds, n, -1) < 0 && errno != EINTR)
			_exit(1);
		if ((fds[0].revents & POLLIN) && n < DEMO_MAX_CONNS) {
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0)
				fds[n++] = (struct pollfd){ .fd = c, .events = POLLIN };
		}
		for (nfds_t i = 1; i < n; i++) {
			ssize_t r;

			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(fds[i].fd, buf, sizeof(buf));
			if (r > 0) {
				if (write(fds[i].fd, "OK\n", 3) < 0)
					r = 0;
			}
			if (r <= 0) {
				close(fds[i].fd);
				fds[i--] = fds[--n];
			}
		}
	}
}

static int demo_request(const struct sockaddr_in *sa, int fd)
{
	char buf[16];

	if (fd < 0) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
	}
	if (write(fd, "GET /\n", 6) != 6 || read(fd, buf, sizeof(buf)) <= 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* 4 pooled connections kept alive, plus a new connection for every other
 * request at ~rate/s: the pool is too small, so the rest churn. */
static void demo_client(const struct sockaddr_in *sa, int rate)
{
	struct timespec gap = { 0, 1000000000L / rate };
	int pool[4];

	for (int i = 0; i < 4; i++)
		pool[i] = demo_request(sa, -1);
	for (unsigned long k = 0;; k++) {
		if (k % 2) {
			int fd = demo_request(sa, pool[k / 2 % 4]);

			pool[k / 2 % 4] = fd >= 0 ? fd : demo_request(sa, -1);
		} else {
			int fd = demo_request(sa, -1);

			if (fd >= 0)
				close(fd);	/* active close: the client keeps TIME_WAIT */
		}
		nanosleep(&gap, NULL);
	}
}

/* The child names itself before the parent goes on: attach reads the
 * targets' names at its start, so a rename after that would not show.
 * gate (a pipe, or NULL): the child then waits for a byte on it before it
 * runs fn. */
static pid_t spawn(const char *name, void (*fn)(void *), void *arg, const int *gate)
{
	int ready[2];
	pid_t pid;
	char b;

	if (pipe(ready))
		return -1;
	pid = fork();
	if (pid == 0) {
		/* Never outlive the demo, even if it is killed. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, name);
		close(ready[0]);
		if (write(ready[1], "", 1) < 0)
			_exit(1);
		close(ready[1]);
		if (gate) {
			close(gate[1]);
			if (read(gate[0], &b, 1) != 1)
				_exit(0);	/* the demo ended before tracing began */
			close(gate[0]);
		}
		fn(arg);
		_exit(0);
	}
	close(ready[1]);
	if (pid > 0 && read(ready[0], &b, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

struct demo_ctx {
	int lfd;
	struct sockaddr_in sa;
	int rate;
};

static void run_server(void *arg)
{
	demo_server(((struct demo_ctx *)arg)->lfd);
}

/* attach's on_tracing: the client may start. */
static void open_gate(void *arg)
{
	int *w = arg;

	if (*w >= 0 && write(*w, "", 1) < 0)
		text_err("connscope demo: cannot start the client: %s\n", strerror(errno));
	if (*w >= 0)
		close(*w);
	*w = -1;
}

static void run_client(void *arg)
{
	struct demo_ctx *d = arg;

	demo_client(&d->sa, d->rate);
}

int cmd_demo(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct attach_opts o = { .duration_s = 5, .interval_s = 1, .header = true };
	struct demo_ctx d = { .rate = 200 };
	socklen_t len = sizeof(d.sa);
	pid_t server = -1, client = -1;
	int gate[2] = { -1, -1 };
	int c, ret = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "d:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (cli_parse_seconds("-d", optarg, 1, 3600, &o.duration_s))
				return EXIT_USAGE;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			printf("usage: connscope demo [-d SECONDS] [-j]\n"
			       "  runs a loopback client/server workload and attaches to both\n"
			       "  -d, --duration S       how long (default 5, 1 to 3600)\n"
			       "  -j, --json             the report as one JSON document\n"
			       "examples:\n"
			       "  connscope demo\n"
			       "      5 s of a client whose pool is too small, and the churn finding\n"
			       "  connscope demo -d 20 -j | jq .findings\n"
			       "      longer, its findings as JSON\n");
			return 0;
		default:
			return cli_bad_option("demo", argv);
		}
	}
	if (cli_json_file("demo", o.json, argc, argv) || cli_no_more_args("demo", argc, argv))
		return EXIT_USAGE;
	ret = tracer_preflight(&o.tracer);
	if (ret)
		return ret;
	ret = 1;
	d.sa.sin_family = AF_INET;
	d.sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (d.lfd < 0 || bind(d.lfd, (struct sockaddr *)&d.sa, sizeof(d.sa)) ||
	    listen(d.lfd, 1024) || getsockname(d.lfd, (struct sockaddr *)&d.sa, &len)) {
		text_err("connscope demo: cannot listen on 127.0.0.1: %s\n", strerror(errno));
		goto out;
	}
	server = spawn("demo-server", run_server, &d, NULL);
	/* The server holds the listener now. Kept here too, it made attach
	 * warn that an untraced process (connscope itself) held it, and the
	 * books disagreed with the kernel by that socket at the end. */
	close(d.lfd);
	d.lfd = -1;
	/* The client starts once tracing has begun (attach's on_tracing), so
	 * every connection it makes is seen from its start: one started
	 * before could be accepted by the server in the window while its
	 * client side was never seen (98_demo: one more accepted than
	 * opened, 1 run in 6). */
	fprintf(stderr, "connscope demo: server pid %d on 127.0.0.1:%u; its client keeps 4\n"
			"  pooled connections but opens a new one for every other request\n"
			"  (~%d requests/s): watch the client's TIME_WAIT pile up\n",
		server, ntohs(d.sa.sin_port), d.rate);
	if (pipe2(gate, O_CLOEXEC)) {
		text_err("connscope demo: pipe failed: %s\n", strerror(errno));
		goto out;
	}
	client = spawn("demo-client", run_client, &d, gate);
	close(gate[0]);
	o.on_tracing = open_gate;
	o.on_tracing_ctx = &gate[1];
	if (server < 0 || client < 0) {
		text_err("connscope demo: fork failed: %s\n", strerror(errno));
		goto out;
	}
	o.pids[o.npids++] = server;
	o.pids[o.npids++] = client;
	ret = attach_run(&o);
out:
	if (gate[1] >= 0)
		close(gate[1]);
	if (client > 0)
		kill(client, SIGKILL), waitpid(client, NULL, 0);
	if (server > 0)
		kill(server, SIGKILL), waitpid(server, NULL, 0);
	if (d.lfd >= 0)
		close(d.lfd);
	return ret;
}
