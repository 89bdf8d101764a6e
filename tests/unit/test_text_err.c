/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* text_err: a message on stderr wrapped at 80 columns, continuation lines
 * indented two spaces, a newline inside starting one, a trailing newline
 * no word, nothing lost however long (two PATH_MAX paths), one word longer
 * than a line kept whole. stderr is caught in a temporary file. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "text_wrap.h"

static char caught[4 * PATH_MAX + 1024];

/* What text_err(fmt, arg) writes to stderr, into caught. */
static const char *catch(const char *fmt, const char *arg)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	size_t n;

	ASSERT_TRUE(tmp && saved >= 0, "tmpfile");
	fflush(stderr);
	dup2(fileno(tmp), 2);
	text_err(fmt, arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(caught, 1, sizeof(caught) - 1, tmp);
	caught[n] = '\0';
	fclose(tmp);
	return caught;
}

/* The widest line of s. */
static size_t widest(const char *s)
{
	size_t w = 0;

	for (const char *l = s; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0')) {
		size_t n = strcspn(l, "\n");

		w = n > w ? n : w;
	}
	return w;
}

TEST(short_message_unchanged)
{
	ASSERT_STREQ(catch("connscope: -d '%s': expected seconds\n", "x"),
		     "connscope: -d 'x': expected seconds\n", "one line as printf's");
}

TEST(long_message_wrapped)
{
	const char *got = catch("connscope attach: option '%s' is unknown or lacks its value "
				"(connscope attach --help)\n", "--bogus");

	ASSERT_STREQ(got, "connscope attach: option '--bogus' is unknown or lacks its value "
			  "(connscope\n  attach --help)\n", "words wrapped, two spaces");
	ASSERT_TRUE(widest(got) <= 80, "within 80 columns");
}

TEST(newline_inside_starts_a_continuation)
{
	ASSERT_STREQ(catch("connscope run: no COMMAND, e.g.\n%s -- ab -n 10 URL\n",
			   "connscope run"),
		     "connscope run: no COMMAND, e.g.\n  connscope run -- ab -n 10 URL\n",
		     "the example on a line of its own");
}

TEST(two_long_paths_whole)
{
	static char path[PATH_MAX];
	const char *got;
	size_t words = 0;

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	got = catch("connscope: %1$s is a directory; give a file name (e.g. %1$s/r.html)\n",
		    path);
	/* Both paths whole, each on a line of its own (longer than a line),
	 * and the words between them and after them. */
	for (const char *p = got; (p = strstr(p, path)); p += strlen(path))
		words++;
	ASSERT_EQ(words, 2, "both paths there");
	ASSERT_TRUE(strstr(got, "/r.html)\n") != NULL, "the tail kept (no 8 KiB cut)");
	ASSERT_TRUE(!strncmp(got, "connscope:\n  /aaa", 17), "a word over a line stays whole");
}

UNIT_MAIN()
