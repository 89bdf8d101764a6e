/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The HTTP side of `connscope exporter`: libmicrohttpd serves GET /metrics
 * from the last published snapshot of the metrics text and GET / with a
 * short page linking to it. The tracing loop publishes a new snapshot
 * every interval; the HTTP thread never touches the books. */
#ifndef CONNSCOPE_EXPORTER_H
#define CONNSCOPE_EXPORTER_H

#include <stddef.h>
#include <stdint.h>

#define EXPORTER_DEFAULT_ADDR "127.0.0.1"
#define EXPORTER_DEFAULT_PORT 9477

struct exporter;

/* Parses "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT". 0, or -1 after printing
 * why. */
int exporter_parse_listen(const char *arg, char *addr, size_t addr_len, uint16_t *port);
/* Starts listening; NULL after printing why (address in use, bad address). */
struct exporter *exporter_start(const char *addr, uint16_t port);
/* Replaces the served text (copied). */
void exporter_publish(struct exporter *e, const char *text, size_t len);
/* GET /metrics answered so far. */
uint64_t exporter_scrapes(struct exporter *e);
void exporter_stop(struct exporter *e);

#endif
