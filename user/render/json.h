/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A small streaming JSON writer: objects, arrays, strings escaped per
 * RFC 8259, integers and fixed-precision doubles. Commas and nesting are
 * tracked so callers only say what comes next. */
#ifndef CONNSCOPE_JSON_H
#define CONNSCOPE_JSON_H

#include <stdio.h>
#include <stdint.h>
#include <stdbool.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *out;
	int depth;
	bool first[JSON_MAX_DEPTH];	/* no element written yet at this depth */
	bool after_key;			/* a key was written, its value is next */
	bool pretty;			/* newline + two-space indent per level */
};

void json_init(struct json *j, FILE *out, bool pretty);
void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
/* A key inside an object; the next call writes its value. */
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
/* prec digits after the point; NaN and infinities are written as null. */
void json_double(struct json *j, double v, int prec);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* Shorthands: key + value. */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_double(struct json *j, const char *key, double v, int prec);
void json_kv_bool(struct json *j, const char *key, bool v);
/* Ends the document: a final newline, fflush. */
void json_finish(struct json *j);

#endif
