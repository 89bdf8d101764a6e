/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The HTTP side of `connscope exporter`: libmicrohttpd serves GET /metrics
 * from the last published snapshot of the metrics text and GET / with a
 * short page linking to it. The tracing loop publishes a new snapshot
 * every interval; the HTTP thread never touches the books. The command
 * line of `connscope exporter` beyond the tracing options is parsed here
 * too (-p or --all, --top-processes, --max-series). */
#ifndef CONNSCOPE_EXPORTER_H
#define CONNSCOPE_EXPORTER_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "exporter_limits.h"

#define EXPORTER_DEFAULT_ADDR "127.0.0.1"
#define EXPORTER_DEFAULT_PORT 9477
#define EXPORTER_DEFAULT_TOP_PROCESSES 20
#define EXPORTER_MAX_TOP_PROCESSES 10000
#define EXPORTER_DEFAULT_MAX_SERIES 10000
/* The host, agent and exporter series alone are about 50 (60 at most). */
#define EXPORTER_MIN_MAX_SERIES 100
#define EXPORTER_MAX_MAX_SERIES 10000000
/* Written by the tracing loop after exporter_format(): render time, scrapes,
 * and the process_* series. */
#define EXPORTER_TRAILER_SERIES (2 + EXPORTER_PROCESS_SERIES)
/* process_* of the exporter itself (exporter_self.c). */
#define EXPORTER_PROCESS_SERIES 6

/* The exporter's own options, for the command's getopt_long table; parsed
 * by exporter_opt(). */
#define EXPORTER_LONGOPTS						\
	{ "all", no_argument, NULL, 'A' },				\
	{ "top-processes", required_argument, NULL, 'P' },		\
	{ "max-series", required_argument, NULL, 'S' },		\
	{ "ringbuf-size", required_argument, NULL, 'R' }

struct exporter;
struct agg;
struct attach_opts;
struct inode_map;
struct run_info;
struct sockstat;

/* getopt_long's c when it is one of EXPORTER_LONGOPTS: 1 (taken), -1
 * after printing why the value is bad; 0 when c is not one of them. */
int exporter_opt(int c, const char *arg, struct attach_opts *o);
/* After getopt: -p or --all (one of them), what goes with --all, the
 * defaults. EXIT_USAGE after printing the one problem, or 0. */
int exporter_check_opts(struct attach_opts *o);
/* --all: books for every process holding a TCP socket at start, so their
 * sockets are seeded and followed like a target's. */
void exporter_adopt_owners(struct agg *a, const struct inode_map *owners);

/* After each snapshot: with --all, forget the processes that are gone
 * (exporter_forget_gone), so memory stays flat however many come and go. */
struct quic_books;
void exporter_tick(struct exporter *e, struct agg *a, struct quic_books *qb);
struct prom_state;
struct proc_books;
/* The books of gone processes (gone(p) true, or p->exited when NULL)
 * whose series are over and that hold no TIME_WAIT socket are deleted,
 * their QUIC books too (qb may be NULL); returns how many. */
size_t exporter_forget_gone(struct prom_state *s, struct agg *a, struct quic_books *qb,
			    bool (*gone)(const struct proc_books *p, void *ctx), void *ctx);

/* Parses "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT". 0, or -1 after printing
 * why. */
int exporter_parse_listen(const char *arg, char *addr, size_t addr_len, uint16_t *port);
/* Starts listening; NULL after printing why (address in use, bad address). */
struct exporter *exporter_start(const char *addr, uint16_t port, const struct exporter_limits *lim);
/* The metrics of the books now, within the limits (prom_state.h): the
 * series the processes keep from one snapshot to the next live here. Called
 * by the tracing loop only. */
void exporter_format(struct exporter *e, FILE *out, const struct agg *a,
		     const struct run_info *run, const struct sockstat *st);
/* Replaces the served text (copied). */
void exporter_publish(struct exporter *e, const char *text, size_t len);
/* GET /metrics answered so far. */
uint64_t exporter_scrapes(struct exporter *e);

/* The agent's own process_* metrics, with the names and help of the
 * Prometheus client libraries' process collector (exporter_self.c). */
void exporter_format_self(FILE *f);
void exporter_stop(struct exporter *e);

#endif
