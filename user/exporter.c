// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>
#include "exporter.h"

struct exporter {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;	/* guards text, len, scrapes */
	char *text;
	size_t len;
	uint64_t scrapes;
};

static const char index_page[] =
	"<!DOCTYPE html><html><head><title>connscope exporter</title></head><body>"
	"<h1>connscope exporter</h1><p><a href=\"/metrics\">/metrics</a>: per-process "
	"TCP connection, TIME_WAIT, reuse and fd metrics (Prometheus text format "
	"0.0.4)</p></body></html>\n";

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req_cls)
{
	struct exporter *e = cls;
	enum MHD_Result ret;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET only\n", 9);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", index_page,
			     sizeof(index_page) - 1);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found: try /metrics\n", 24);
	/* Copied under the lock: the loop may publish a new snapshot now. */
	pthread_mutex_lock(&e->lock);
	e->scrapes++;
	ret = reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
		    e->text ? e->text : "", e->text ? e->len : 0);
	pthread_mutex_unlock(&e->lock);
	return ret;
}

int exporter_parse_listen(const char *arg, char *addr, size_t addr_len, uint16_t *port)
{
	const char *colon = strrchr(arg, ':');
	char *end;
	long p;

	if (!colon)
		goto bad;
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 1 || p > 65535)
		goto bad;
	if (colon == arg) {
		snprintf(addr, addr_len, "%s", EXPORTER_DEFAULT_ADDR);
	} else if (arg[0] == '[' && colon[-1] == ']') {
		snprintf(addr, addr_len, "%.*s", (int)(colon - arg - 2), arg + 1);
	} else {
		snprintf(addr, addr_len, "%.*s", (int)(colon - arg), arg);
	}
	*port = p;
	return 0;
bad:
	fprintf(stderr, "connscope: --listen '%s': expected ADDR:PORT (e.g. 127.0.0.1:%d, "
			"[::1]:%d or :%d), port 1..65535\n", arg, EXPORTER_DEFAULT_PORT,
		EXPORTER_DEFAULT_PORT, EXPORTER_DEFAULT_PORT);
	return -1;
}

struct exporter *exporter_start(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	/* No MHD_USE_ERROR_LOG: one message of ours per failure. */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
	struct exporter *e;

	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		flags |= MHD_USE_IPv6;
	} else {
		fprintf(stderr, "connscope: --listen: '%s' is not an IP address (give e.g. "
				"127.0.0.1 or ::1)\n", addr);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	pthread_mutex_init(&e->lock, NULL);
	e->daemon = MHD_start_daemon(flags, port, NULL, NULL, handle, e, MHD_OPTION_SOCK_ADDR,
				     (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_TIMEOUT,
				     (unsigned int)10, MHD_OPTION_END);
	if (!e->daemon) {
		fprintf(stderr, "connscope: cannot listen on %s:%u (in use? try another "
				"--listen port)\n", addr, port);
		pthread_mutex_destroy(&e->lock);
		free(e);
		return NULL;
	}
	return e;
}

void exporter_publish(struct exporter *e, const char *text, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return;
	memcpy(copy, text, len);
	copy[len] = '\0';
	pthread_mutex_lock(&e->lock);
	free(e->text);
	e->text = copy;
	e->len = len;
	pthread_mutex_unlock(&e->lock);
}

uint64_t exporter_scrapes(struct exporter *e)
{
	uint64_t n;

	pthread_mutex_lock(&e->lock);
	n = e->scrapes;
	pthread_mutex_unlock(&e->lock);
	return n;
}

void exporter_stop(struct exporter *e)
{
	if (!e)
		return;
	MHD_stop_daemon(e->daemon);
	pthread_mutex_destroy(&e->lock);
	free(e->text);
	free(e);
}
