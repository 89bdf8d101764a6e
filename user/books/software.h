/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What software a process is, and the doctor's fixes in its own words.
 *
 * A fix that names Go's MaxIdleConnsPerHost to someone running pgbench
 * is no fix: the doctor says each fix in the vocabulary of the software
 * it diagnosed, for the side that must change (the client's pool, the
 * server's keep-alive), each setting with its default, the generic
 * advice last. What a process is comes from what the kernel shows of it
 * (comm, the executable's name, the libraries it maps, a Go binary's
 * build info: sources/software_probe.c) and, for a client of a runtime
 * that speaks many protocols, the well-known port it connects to. Pure
 * functions: the unit tests drive them with hints. */
#ifndef CONNSCOPE_SOFTWARE_H
#define CONNSCOPE_SOFTWARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sw_kind {
	SW_UNKNOWN = 0,
	/* runtimes and their usual libraries */
	SW_GO,
	SW_JAVA,
	SW_PYTHON,
	SW_NODE,
	SW_CURL,
	/* servers and proxies */
	SW_NGINX,
	SW_APACHE,
	SW_HAPROXY,
	SW_ENVOY,
	SW_POSTGRES,
	SW_MYSQL,
	SW_REDIS,
	/* clients and load generators */
	SW_PGBENCH,
	SW_LIBPQ,		/* psql and anything linking libpq */
	SW_MYSQL_CLIENT,
	SW_REDIS_BENCHMARK,
	SW_REDIS_CLIENT,	/* redis-cli, hiredis users */
	SW_AB,
	SW_WRK,
	SW_NKINDS
};

/* What is known of a process (sources/software_probe.c fills it). */
struct sw_hints {
	char comm[16];
	char exe[64];		/* the executable's base name, "" unknown */
	bool go_buildinfo;	/* the executable has a .go.buildinfo section */
	bool lib_jvm, lib_python, lib_node, lib_pq, lib_mysql, lib_hiredis, lib_curl;
};

enum sw_kind sw_classify(const struct sw_hints *h);

/* "PostgreSQL", "Go net/http", ...; "" for SW_UNKNOWN. */
const char *sw_name(enum sw_kind k);

/* The protocol a well-known port speaks, for a runtime's client: the
 * service it connects to decides which of its libraries holds the pool. */
enum sw_proto { SW_PROTO_HTTP = 0, SW_PROTO_POSTGRES, SW_PROTO_MYSQL, SW_PROTO_REDIS };

enum sw_proto sw_proto_of_port(uint16_t port);

/* The service a server kind speaks (SW_PROTO_HTTP for the HTTP ones). */
enum sw_proto sw_proto_of_server(enum sw_kind server);

/* The port of an endpoint label ("127.0.0.1:5432", "[::1]:80",
 * "listen :6379"); 0 if none. */
uint16_t sw_label_port(const char *label);

/* The client-side fix for a pool that churns: keep >= pool connections
 * open and reuse them, in the words of the client (its kind; for a
 * runtime, the library that speaks proto). Empty when nothing specific is
 * known: the caller then gives the generic fix alone. */
void sw_client_fix(enum sw_kind client, enum sw_proto proto, unsigned pool, char *buf,
		   size_t len);

/* The server-side fix: keep connections open (or pool them in front of a
 * server that forks per connection), in the server's words; by proto
 * when the server is not known. */
void sw_server_fix(enum sw_kind server, enum sw_proto proto, char *buf, size_t len);

#endif
