/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Endpoints and tuples in words (endpoint.c). */
#ifndef CONNSCOPE_ENDPOINT_H
#define CONNSCOPE_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include "tcpstate.h"
#include "kernel_view.h"
#include "tcp_books_types.h"

/* "127.0.0.1:8080", or a listening endpoint: "listen 127.0.0.1:8080",
 * "listen [::1]:8080", "listen *:8080" (IPv4 wildcard), "listen [::]:8080"
 * (IPv6 wildcard, dual-stack or not) */
int endpoint_format(char *buf, size_t len, const struct endpoint_key *k);
/* An endpoint's label in at most width columns for a text table: a
 * longer one loses the middle of its address to '~', never the port it
 * ends with ("[fd00:1234:5~]:39179"). In place. */
void endpoint_label_fit(char *label, int width);
/* The address alone of a listening endpoint: "127.0.0.1", "::1", "*", "::". */
int endpoint_listen_address(char *buf, size_t len, const struct endpoint_key *k);

/* tuple helpers shared with the loader's seeding */
void tuple_from_sd(struct cs_tuple *t, const struct sd_sock *s);
int tuple_format(char *buf, size_t len, const struct cs_tuple *t, bool remote);

#endif
