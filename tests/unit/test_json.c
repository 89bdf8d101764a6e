/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* json.c: exact output, byte for byte, since dashboards and jq consume it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "unit.h"
#include "json.h"

/* Each test writes into a memory stream and compares the whole text. */
struct sink {
	FILE *f;
	char *data;
	size_t len;
	struct json j;
};

static struct json *sink_open(struct sink *s, bool pretty)
{
	s->data = NULL;
	s->len = 0;
	s->f = open_memstream(&s->data, &s->len);
	ASSERT_TRUE(s->f != NULL, "open_memstream");
	json_init(&s->j, s->f, pretty);
	return &s->j;
}

/* The text written so far; the caller frees it. */
static char *sink_text(struct sink *s)
{
	fclose(s->f);
	return s->data;
}

#define ASSERT_OUTPUT(s, want, label)					\
	do {								\
		char *got_ = sink_text(s);				\
		ASSERT_STREQ(got_, (want), (label));			\
		free(got_);						\
	} while (0)

TEST(empty_object)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_object_begin(j);
	json_object_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "{}\n", "compact {}");

	j = sink_open(&s, true);
	json_object_begin(j);
	json_object_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "{}\n", "pretty {}");
}

TEST(empty_array)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_array_begin(j);
	json_array_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "[]\n", "compact []");

	j = sink_open(&s, true);
	json_array_begin(j);
	json_array_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "[]\n", "pretty []");
}

/* The same document in both modes. */
static void write_nested(struct json *j)
{
	json_object_begin(j);
	json_kv_string(j, "name", "x");
	json_key(j, "list");
	json_array_begin(j);
	json_int(j, 1);
	json_int(j, 2);
	json_array_end(j);
	json_key(j, "empty");
	json_object_begin(j);
	json_object_end(j);
	json_key(j, "none");
	json_array_begin(j);
	json_array_end(j);
	json_key(j, "objs");
	json_array_begin(j);
	json_object_begin(j);
	json_kv_int(j, "a", 1);
	json_kv_bool(j, "t", true);
	json_kv_bool(j, "f", false);
	json_key(j, "n");
	json_null(j);
	json_object_end(j);
	json_array_begin(j);
	json_array_end(j);
	json_array_end(j);
	json_object_end(j);
	json_finish(j);
}

TEST(nested_compact)
{
	struct sink s;

	write_nested(sink_open(&s, false));
	ASSERT_OUTPUT(&s,
		      "{\"name\":\"x\",\"list\":[1,2],\"empty\":{},\"none\":[],"
		      "\"objs\":[{\"a\":1,\"t\":true,\"f\":false,\"n\":null},[]]}\n",
		      "compact");
}

TEST(nested_pretty)
{
	struct sink s;

	write_nested(sink_open(&s, true));
	ASSERT_OUTPUT(&s,
		      "{\n"
		      "  \"name\": \"x\",\n"
		      "  \"list\": [\n"
		      "    1,\n"
		      "    2\n"
		      "  ],\n"
		      "  \"empty\": {},\n"
		      "  \"none\": [],\n"
		      "  \"objs\": [\n"
		      "    {\n"
		      "      \"a\": 1,\n"
		      "      \"t\": true,\n"
		      "      \"f\": false,\n"
		      "      \"n\": null\n"
		      "    },\n"
		      "    []\n"
		      "  ]\n"
		      "}\n",
		      "pretty");
}

TEST(top_level_scalar)
{
	struct sink s;
	struct json *j = sink_open(&s, true);

	json_string(j, "alone");
	json_finish(j);
	ASSERT_OUTPUT(&s, "\"alone\"\n", "scalar document");
}

TEST(escaping)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_array_begin(j);
	json_string(j, "quote\" backslash\\ slash/");
	json_string(j, "\b\f\n\r\t");
	json_string(j, "\x01\x1f\x7f");
	json_string(j, "");
	json_array_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s,
		      "[\"quote\\\" backslash\\\\ slash/\","
		      "\"\\b\\f\\n\\r\\t\","
		      "\"\\u0001\\u001f\x7f\","
		      "\"\"]\n",
		      "escapes");
}

TEST(escaping_keys)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_object_begin(j);
	json_kv_string(j, "a\"b\n", "v");
	json_object_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "{\"a\\\"b\\n\":\"v\"}\n", "key escapes");
}

TEST(utf8_passes_through)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	/* e-acute (2 bytes), euro (3), U+10FFFF and an emoji (4). */
	json_string(j, "\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xf0\x9f\x98\x80");
	json_finish(j);
	ASSERT_OUTPUT(&s, "\"\xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf \xf0\x9f\x98\x80\"\n",
		      "utf-8");
}

TEST(invalid_utf8_replaced)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_array_begin(j);
	json_string(j, "a\xff" "b");		/* never valid */
	json_string(j, "\xc0\xaf");		/* overlong '/' */
	json_string(j, "\xed\xa0\x80");		/* surrogate U+D800 */
	json_string(j, "\xf4\x90\x80\x80");	/* above U+10FFFF */
	json_string(j, "x\xe2\x82");		/* cut short by the end */
	json_array_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s,
		      "[\"a\\ufffdb\","
		      "\"\\ufffd\\ufffd\","
		      "\"\\ufffd\\ufffd\\ufffd\","
		      "\"\\ufffd\\ufffd\\ufffd\\ufffd\","
		      "\"x\\ufffd\\ufffd\"]\n",
		      "replacement");
}

TEST(null_string)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_object_begin(j);
	json_kv_string(j, "s", NULL);
	json_object_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "{\"s\":null}\n", "NULL string");
}

TEST(integers)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_array_begin(j);
	json_int(j, INT64_MIN);
	json_int(j, INT64_MAX);
	json_int(j, 0);
	json_int(j, -1);
	json_uint(j, UINT64_MAX);
	json_uint(j, 0);
	json_array_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s,
		      "[-9223372036854775808,9223372036854775807,0,-1,"
		      "18446744073709551615,0]\n",
		      "integers");
}

TEST(kv_integers)
{
	struct sink s;
	struct json *j = sink_open(&s, true);

	json_object_begin(j);
	json_kv_int(j, "min", INT64_MIN);
	json_kv_uint(j, "max", UINT64_MAX);
	json_object_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s,
		      "{\n"
		      "  \"min\": -9223372036854775808,\n"
		      "  \"max\": 18446744073709551615\n"
		      "}\n",
		      "kv integers");
}

TEST(doubles)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_array_begin(j);
	json_double(j, 3.14159, 2);
	json_double(j, 3.14159, 0);
	json_double(j, -0.5, 1);
	json_double(j, 2.0, 3);
	json_double(j, 1e20, 0);
	json_double(j, 0.125, -4);	/* negative precision means 0 */
	json_array_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "[3.14,3,-0.5,2.000,100000000000000000000,0]\n",
		      "doubles");
}

/* -0, or a value that rounds to zero from below, is 0: a flat fd count's
 * growth (-0.000000 in connscope diff -j and attach -j). */
TEST(negative_zero_is_zero)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_array_begin(j);
	json_double(j, -0.0, 6);
	json_double(j, -0.0000001, 3);
	json_double(j, -0.0004, 3);
	json_double(j, -0.0006, 3);
	json_double(j, -0.4, 0);
	json_array_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "[0.000000,0.000,0.000,-0.001,0]\n", "zeros");
}

TEST(non_finite_is_null)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_object_begin(j);
	json_kv_double(j, "nan", NAN, 2);
	json_kv_double(j, "inf", INFINITY, 2);
	json_kv_double(j, "ninf", -INFINITY, 2);
	json_kv_double(j, "ok", 1.5, 1);
	json_object_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "{\"nan\":null,\"inf\":null,\"ninf\":null,\"ok\":1.5}\n",
		      "NaN/Inf");
}

TEST(finish_resets_for_json_lines)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_object_begin(j);
	json_kv_int(j, "a", 1);
	json_object_end(j);
	json_finish(j);
	json_array_begin(j);
	json_int(j, 2);
	json_array_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "{\"a\":1}\n[2]\n", "two documents");
}

TEST(dangling_key_gets_null)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_object_begin(j);
	json_key(j, "k");
	json_object_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "{\"k\":null}\n", "dangling key");
}

TEST(unbalanced_end_ignored)
{
	struct sink s;
	struct json *j = sink_open(&s, false);

	json_array_begin(j);
	json_array_end(j);
	json_array_end(j);
	json_object_end(j);
	json_finish(j);
	ASSERT_OUTPUT(&s, "[]\n", "extra ends");
}

/* Too deep: the overflowing container becomes null, the output stays
 * valid, and the writer is usable again once back at a tracked depth. */
TEST(depth_overflow_stays_valid)
{
	struct sink s;
	struct json *j = sink_open(&s, false);
	char want[256] = "";
	int levels = JSON_MAX_DEPTH + 8, real = JSON_MAX_DEPTH - 1;

	for (int i = 0; i < levels; i++) {
		json_array_begin(j);
		json_int(j, i);
	}
	for (int i = 0; i < levels; i++)
		json_array_end(j);
	json_finish(j);

	for (int i = 0; i < real; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want),
			 "%s[%d", i ? "," : "", i);
	strcat(want, ",null");
	for (int i = 0; i < real; i++)
		strcat(want, "]");
	strcat(want, "\n");
	ASSERT_OUTPUT(&s, want, "deep nesting");
}

UNIT_MAIN()
