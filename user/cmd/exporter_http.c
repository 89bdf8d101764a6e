// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <microhttpd.h>
#include "exporter_http.h"
#include "text_wrap.h"

struct snap {
	atomic_uint refs;
	size_t len;
	char text[];
};

struct http_server {
	struct MHD_Daemon *daemon;
	int listen_fd;
	pthread_mutex_t lock;	/* guards cur (the pointer swap only) */
	struct snap *cur;
	atomic_uint_fast64_t scrapes;
	int start_err;		/* from the starting thread */
};

static const char index_page[] =
	"<!DOCTYPE html><html><head><title>connscope exporter</title></head><body>"
	"<h1>connscope exporter</h1><p><a href=\"/metrics\">/metrics</a>: per-process "
	"TCP connection, TIME_WAIT, reuse and fd metrics (Prometheus text format "
	"0.0.4)</p></body></html>\n";
static const char not_found[] = "not found: try /metrics\n";
static const char get_only[] = "GET only\n";

static void snap_unref(void *cls)
{
	struct snap *s = cls;

	if (s && atomic_fetch_sub(&s->refs, 1) == 1)
		free(s);
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned int status, const char *type,
			     struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Constant bodies: sent from where they are. */
static enum MHD_Result reply_static(struct MHD_Connection *c, unsigned int status,
				    const char *type, const char *body, size_t len)
{
	return queue(c, status, type,
		     MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_PERSISTENT));
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req_cls)
{
	struct http_server *h = cls;
	struct MHD_Response *r;
	struct snap *s;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_static(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", get_only,
				    sizeof(get_only) - 1);
	/* The first call comes with the headers only: a response queued then
	 * makes libmicrohttpd answer "Connection: close" (the rest of the
	 * request unread), so every scrape was a new connection that the
	 * exporter closed first, leaving a TIME_WAIT on its port. Answer on
	 * the second call, and the connection stays open for the next. */
	if (!*req_cls) {
		*req_cls = h;
		return MHD_YES;
	}
	if (!strcmp(url, "/"))
		return reply_static(c, MHD_HTTP_OK, "text/html; charset=utf-8", index_page,
				    sizeof(index_page) - 1);
	if (strcmp(url, "/metrics"))
		return reply_static(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found,
				    sizeof(not_found) - 1);
	pthread_mutex_lock(&h->lock);
	s = h->cur;
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&h->lock);
	atomic_fetch_add(&h->scrapes, 1);
	if (!s)
		return reply_static(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", "",
				    0);
	/* The reference goes with the response: released by libmicrohttpd
	 * when it is done with it, however the connection ends. */
	r = MHD_create_response_from_buffer_with_free_callback_cls(s->len, s->text, snap_unref,
								   s);
	if (!r) {
		snap_unref(s);
		return MHD_NO;
	}
	return queue(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", r);
}

static int bind_listen(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl;
	int fd, one = 1;

	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sl = sizeof(*sin);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sl = sizeof(*sin6);
	} else {
		text_err("connscope: --listen: '%s' is not an IP address (give e.g. "
			 "127.0.0.1 or ::1)\n", addr);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		text_err("connscope: cannot make the exporter's socket: %s\n",
			strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 128)) {
		if (errno == EADDRINUSE)
			text_err("connscope: cannot listen on %s:%u (in use? try another "
				 "--listen port)\n", addr, port);
		else
			text_err("connscope: cannot listen on %s:%u: %s (give another "
				 "--listen address or port)\n", addr, port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* This thread, and the libmicrohttpd thread it starts (threads inherit
 * their creator's credentials), become nobody without capabilities. Raw
 * syscalls: glibc's setresuid() would change every thread of the process,
 * the tracing one included. Leaving uid 0 clears the capability sets
 * (no SECBIT_KEEP_CAPS). */
static int drop_thread_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
	gid_t g = HTTP_UNPRIVILEGED_UID;

	/* Not root (a service user given capabilities): empty this thread's
	 * sets, which takes the ambient ones too (they need permitted). */
	if (geteuid() != 0)
		return syscall(SYS_capset, &hdr, none) ? -errno : 0;
	if (syscall(SYS_setgroups, 1, &g) || syscall(SYS_setresgid, g, g, g) ||
	    syscall(SYS_setresuid, HTTP_UNPRIVILEGED_UID, HTTP_UNPRIVILEGED_UID,
		    HTTP_UNPRIVILEGED_UID))
		return -errno;
	return 0;
}

static void *starter(void *arg)
{
	struct http_server *h = arg;
	/* No MHD_USE_ERROR_LOG: one message of ours per failure. */
	unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD;

	h->start_err = drop_thread_privileges();
	if (h->start_err)
		return NULL;
	h->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, handle, h, MHD_OPTION_LISTEN_SOCKET, h->listen_fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_MAX_CONNS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)HTTP_PER_IP,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY,
		MHD_OPTION_STRICT_FOR_CLIENT, (int)1, MHD_OPTION_END);
	if (!h->daemon)
		h->start_err = -EIO;
	return NULL;
}

struct http_server *http_start(const char *addr, uint16_t port)
{
	struct http_server *h = calloc(1, sizeof(*h));
	pthread_t t;

	if (!h)
		return NULL;
	pthread_mutex_init(&h->lock, NULL);
	h->listen_fd = bind_listen(addr, port);
	if (h->listen_fd < 0)
		goto fail;
	if (pthread_create(&t, NULL, starter, h) || pthread_join(t, NULL) || h->start_err) {
		text_err("connscope: cannot start the exporter's HTTP server on %s:%u: "
			 "%s\n", addr, port, strerror(h->start_err ? -h->start_err : EAGAIN));
		if (h->daemon)
			MHD_stop_daemon(h->daemon);
		close(h->listen_fd);
		goto fail;
	}
	return h;
fail:
	pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

void http_publish(struct http_server *h, const char *text, size_t len)
{
	struct snap *s = malloc(sizeof(*s) + len + 1), *old;

	if (!s)
		return;		/* the last snapshot stays */
	atomic_init(&s->refs, 1);
	s->len = len;
	memcpy(s->text, text, len);
	s->text[len] = '\0';
	pthread_mutex_lock(&h->lock);
	old = h->cur;
	h->cur = s;
	pthread_mutex_unlock(&h->lock);
	snap_unref(old);
}

uint64_t http_scrapes(struct http_server *h)
{
	return atomic_load(&h->scrapes);
}

void http_stop(struct http_server *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->daemon);
	/* MHD_OPTION_LISTEN_SOCKET: the socket stays ours to close. */
	close(h->listen_fd);
	snap_unref(h->cur);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
