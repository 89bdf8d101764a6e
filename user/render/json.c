/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Streaming JSON writer; see json.h.
 *
 * State is one "first element" flag per nesting level plus the after_key
 * flag, so every value can decide by itself whether it needs a comma and,
 * in pretty mode, a line break and indentation.
 *
 * Nesting deeper than the first[] array can track is a caller bug, but it
 * must not turn into malformed output that a consumer (jq, a dashboard)
 * chokes on: the container that would overflow is written as null and
 * everything inside it is dropped, while depth keeps counting so that the
 * matching end calls still line up. */
#include <math.h>
#include <inttypes.h>
#include <string.h>

#include "json.h"
#include "utf8.h"

/* The deepest level whose first[] flag exists. */
#define JSON_TOP (JSON_MAX_DEPTH - 1)

void json_init(struct json *j, FILE *out, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->pretty = pretty;
	j->first[0] = true;
}

static bool suppressed(const struct json *j)
{
	return j->depth > JSON_TOP;
}

static void indent(struct json *j, int depth)
{
	fputc('\n', j->out);
	for (int i = 0; i < depth; i++)
		fputs("  ", j->out);
}

/* Everything that starts an element (a value, or a key inside an object)
 * goes through here first. */
static void element_begin(struct json *j)
{
	if (j->after_key) {
		/* The key already wrote the separator. */
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth]) {
		/* Several top-level values form a JSON-lines stream rather
		 * than a comma-joined (invalid) document. */
		fputc(j->depth ? ',' : '\n', j->out);
	}
	j->first[j->depth] = false;
	if (j->pretty && j->depth)
		indent(j, j->depth);
}

static void container_begin(struct json *j, char open)
{
	if (suppressed(j)) {
		j->depth++;
		return;
	}
	element_begin(j);
	if (j->depth == JSON_TOP) {
		fputs("null", j->out);
		j->depth++;
		return;
	}
	fputc(open, j->out);
	j->depth++;
	j->first[j->depth] = true;
}

static void container_end(struct json *j, char close)
{
	if (j->depth == 0)
		return;		/* unbalanced end: ignore rather than underflow */
	j->depth--;
	if (j->depth >= JSON_TOP)
		return;		/* closing a level that was written as null */
	/* A dangling key gets a value so the object stays well-formed. */
	if (j->after_key) {
		fputs("null", j->out);
		j->after_key = false;
	}
	/* Empty containers stay on one line: {} and []. */
	if (j->pretty && !j->first[j->depth + 1])
		indent(j, j->depth);
	fputc(close, j->out);
}

void json_object_begin(struct json *j)
{
	container_begin(j, '{');
}

void json_object_end(struct json *j)
{
	container_end(j, '}');
}

void json_array_begin(struct json *j)
{
	container_begin(j, '[');
}

void json_array_end(struct json *j)
{
	container_end(j, ']');
}

/* Strings come from the kernel and from other processes (comm names,
 * paths), so they may hold any byte. Valid UTF-8 passes through untouched;
 * a byte that is not part of a valid sequence becomes U+FFFD, because a
 * single stray byte would make the whole document unparseable. */
static void write_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		unsigned char c = *s;
		size_t n;

		switch (c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\b':
			fputs("\\b", out);
			break;
		case '\f':
			fputs("\\f", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (c < 0x20) {
				fprintf(out, "\\u%04x", c);
				break;
			}
			/* At most 4 bytes matter; a NUL ends the string. */
			n = utf8_seq_len(s, strnlen((const char *)s, 4));
			if (!n) {
				fputs("\\ufffd", out);
				break;
			}
			fwrite(s, 1, n, out);
			s += n;
			continue;
		}
		s++;
	}
	fputc('"', out);
}

void json_key(struct json *j, const char *key)
{
	if (suppressed(j))
		return;
	element_begin(j);
	write_string(j->out, key ? key : "");
	fputs(j->pretty ? ": " : ":", j->out);
	j->after_key = true;
}

void json_string(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	if (suppressed(j))
		return;
	element_begin(j);
	write_string(j->out, s);
}

void json_int(struct json *j, int64_t v)
{
	if (suppressed(j))
		return;
	element_begin(j);
	fprintf(j->out, "%" PRId64, v);
}

void json_uint(struct json *j, uint64_t v)
{
	if (suppressed(j))
		return;
	element_begin(j);
	fprintf(j->out, "%" PRIu64, v);
}

void json_double(struct json *j, double v, int prec)
{
	/* Widest output: sign, 309 integer digits of DBL_MAX, point, 100. */
	char buf[512];

	if (suppressed(j))
		return;
	if (!isfinite(v)) {
		/* JSON has no NaN or Infinity literals. */
		json_null(j);
		return;
	}
	if (prec < 0)
		prec = 0;
	if (prec > 100)
		prec = 100;
	snprintf(buf, sizeof(buf), "%.*f", prec, v);
	/* A program that called setlocale() may get a decimal comma from
	 * printf; JSON only knows the point. */
	for (char *p = buf; *p; p++)
		if (*p == ',')
			*p = '.';
	element_begin(j);
	/* -0 and what rounds to it from below read 0, not "-0.000". */
	fputs(buf[0] == '-' && !buf[strspn(buf + 1, "0.") + 1] ? buf + 1 : buf, j->out);
}

void json_bool(struct json *j, bool v)
{
	if (suppressed(j))
		return;
	element_begin(j);
	fputs(v ? "true" : "false", j->out);
}

void json_null(struct json *j)
{
	if (suppressed(j))
		return;
	element_begin(j);
	fputs("null", j->out);
}

void json_kv_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void json_kv_int(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	json_int(j, v);
}

void json_kv_uint(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_uint(j, v);
}

void json_kv_double(struct json *j, const char *key, double v, int prec)
{
	json_key(j, key);
	json_double(j, v, prec);
}

void json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}

/* Resets the writer as well, so one struct json can emit a document per
 * line (JSON lines) for streaming output. */
void json_finish(struct json *j)
{
	fputc('\n', j->out);
	fflush(j->out);
	json_init(j, j->out, j->pretty);
}
