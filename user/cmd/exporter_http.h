/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The exporter's HTTP side: libmicrohttpd serving the last published
 * snapshot at /metrics (and an index at /), nothing else.
 *
 * Hardening, for a server that lives in the process holding the BPF
 * programs:
 * - the socket is bound by the caller's thread (errors said there, any
 *   port), then the HTTP thread gives up root: it runs as nobody (65534)
 *   with no capabilities (per-thread credentials, so the tracing thread
 *   keeps its own). It keeps what threads share: the process's memory
 *   (the books, the snapshot) and its open descriptors (the BPF maps);
 *   it cannot open files, load programs or bind anything new.
 * - epoll, one thread; at most HTTP_MAX_CONNS connections, HTTP_PER_IP of
 *   them from one address; each idle for HTTP_TIMEOUT_S is closed; a
 *   request's headers may use HTTP_MEMORY bytes (more: 431); strict
 *   parsing of the request line.
 * - snapshots are immutable and reference counted: a scrape takes a
 *   reference and libmicrohttpd sends straight from it, releasing it when
 *   the response is done (or the client went away). Publishing swaps the
 *   pointer; no scrape copies or waits for another. */
#ifndef CONNSCOPE_EXPORTER_HTTP_H
#define CONNSCOPE_EXPORTER_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_CONNS 256
#define HTTP_PER_IP 64
/* Longer than the scrape intervals Prometheus is run with (15 s in its
 * example configuration, 1 min by default): a scraper's keep-alive
 * connection lives from one scrape to the next. At 10 s, every 15 s
 * scrape found it closed by the exporter and left a TIME_WAIT on the
 * exporter's port, the pattern the doctor warns about. */
#define HTTP_TIMEOUT_S 90
#define HTTP_MEMORY (32 * 1024)
#define HTTP_UNPRIVILEGED_UID 65534

struct http_server;

/* Binds addr:port (an IP address) and starts serving an empty /metrics.
 * NULL after printing why. */
struct http_server *http_start(const char *addr, uint16_t port);
/* The new snapshot (copied once here); scrapes under way keep theirs. */
void http_publish(struct http_server *h, const char *text, size_t len);
uint64_t http_scrapes(struct http_server *h);
void http_stop(struct http_server *h);

#endif
