/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Header-only unit test framework.
 *
 *	#include "unit.h"
 *	TEST(parses_header) { ASSERT_EQ(parse("x"), 1, "parse"); }
 *	UNIT_MAIN()
 *
 * One line per test on stdout, the format tests/run.sh counts:
 *	ok - <file-stem>/<name>
 *	not ok - <file-stem>/<name>: <message>
 *	skip - <file-stem>/<name>: <reason>
 * Exit status 1 if any test failed. Arguments select tests by name (with or
 * without the "<file-stem>/" prefix); --list prints the names instead.
 *
 * A failed ASSERT or a SKIP leaves the test at once, also from a helper
 * function the test called (longjmp back to the runner), so helpers may
 * assert too and need not return a status. Anything the test allocated
 * before is leaked; that is fine in a short-lived test process.
 *
 * Include it from one translation unit per test binary: the registry is
 * static. Tests should write diagnostics to stderr; stdout is the report. */
#ifndef CONNSCOPE_UNIT_H
#define CONNSCOPE_UNIT_H

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UNIT_MAX_TESTS 256
#define UNIT_MSG_MAX 2048

struct unit_test {
	const char *name;
	const char *file;
	void (*fn)(void);
};

enum unit_result { UNIT_PASS, UNIT_FAIL, UNIT_SKIP };

static struct {
	struct unit_test tests[UNIT_MAX_TESTS];
	int count;
	int overflow;			/* registrations beyond UNIT_MAX_TESTS */
	int running;			/* jmp is valid */
	jmp_buf jmp;
	enum unit_result result;
	char msg[UNIT_MSG_MAX];
	char crash_line[320];		/* prefix written by the signal handler */
} unit_state __attribute__((unused));

static inline void unit_register(const char *name, const char *file,
				 void (*fn)(void))
{
	if (unit_state.count == UNIT_MAX_TESTS) {
		unit_state.overflow++;
		return;
	}
	unit_state.tests[unit_state.count++] =
		(struct unit_test){ .name = name, .file = file, .fn = fn };
}

#define TEST(name)							\
	static void unit_fn_##name(void);				\
	__attribute__((constructor)) static void unit_reg_##name(void)	\
	{								\
		unit_register(#name, __FILE__, unit_fn_##name);		\
	}								\
	static void unit_fn_##name(void)

/* Records the outcome and leaves the current test. */
__attribute__((format(printf, 2, 3), noreturn))
static inline void unit_leave(enum unit_result r, const char *fmt, ...)
{
	va_list ap;

	unit_state.result = r;
	va_start(ap, fmt);
	vsnprintf(unit_state.msg, sizeof(unit_state.msg), fmt, ap);
	va_end(ap);
	if (unit_state.running)
		longjmp(unit_state.jmp, 1);
	/* An assert outside any test (a constructor, say) is a broken binary. */
	fprintf(stderr, "unit: assertion outside a test: %s\n", unit_state.msg);
	exit(1);
}

/* Appends s to buf as a one-line C-style literal (the report is one line per
 * test, and strings under test often hold newlines); at most max bytes of s,
 * with "..." when cut. */
static inline void unit_quote(char *buf, size_t size, const char *s,
			      size_t max)
{
	size_t len = strlen(buf), i;

	if (!s) {
		snprintf(buf + len, size - len, "NULL");
		return;
	}
	snprintf(buf + len, size - len, "\"");
	for (i = 0; s[i] && i < max; i++) {
		unsigned char c = s[i];
		char esc[8];

		if (c == '\n')
			snprintf(esc, sizeof(esc), "\\n");
		else if (c == '\t')
			snprintf(esc, sizeof(esc), "\\t");
		else if (c == '\r')
			snprintf(esc, sizeof(esc), "\\r");
		else if (c == '"' || c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", c);
		else
			snprintf(esc, sizeof(esc), "%c", c);
		len = strlen(buf);
		snprintf(buf + len, size - len, "%s", esc);
	}
	len = strlen(buf);
	snprintf(buf + len, size - len, s[i] ? "\"..." : "\"");
}

/* Strings up to this long are printed whole; longer ones around the first
 * difference, which is what one needs to see. */
#define UNIT_STR_SHOW 64

__attribute__((noreturn))
static inline void unit_str_fail(const char *got, const char *want,
				 const char *label, const char *file, int line)
{
	char g[UNIT_MSG_MAX / 2] = "", w[UNIT_MSG_MAX / 2] = "";
	size_t off = 0, from;

	if (!got || !want || (strlen(got) <= UNIT_STR_SHOW &&
			      strlen(want) <= UNIT_STR_SHOW)) {
		unit_quote(g, sizeof(g), got, UNIT_STR_SHOW);
		unit_quote(w, sizeof(w), want, UNIT_STR_SHOW);
		unit_leave(UNIT_FAIL, "%s: got %s, want %s (%s:%d)",
			   label, g, w, file, line);
	}
	while (got[off] && got[off] == want[off])
		off++;
	from = off > 16 ? off - 16 : 0;
	if (from)
		snprintf(g, sizeof(g), "...");
	unit_quote(g, sizeof(g), got + from, UNIT_STR_SHOW);
	if (from)
		snprintf(w, sizeof(w), "...");
	unit_quote(w, sizeof(w), want + from, UNIT_STR_SHOW);
	unit_leave(UNIT_FAIL,
		   "%s: differ at offset %zu (lengths %zu, %zu): got %s, want %s (%s:%d)",
		   label, off, strlen(got), strlen(want), g, w, file, line);
}

#define ASSERT_EQ(got, want, label)					\
	do {								\
		long long unit_g_ = (long long)(got);			\
		long long unit_w_ = (long long)(want);			\
		if (unit_g_ != unit_w_)					\
			unit_leave(UNIT_FAIL,				\
				   "%s: got %lld, want %lld (%s:%d)",	\
				   (label), unit_g_, unit_w_,		\
				   __FILE__, __LINE__);			\
	} while (0)

#define ASSERT_TRUE(cond, label)					\
	do {								\
		if (!(cond))						\
			unit_leave(UNIT_FAIL,				\
				   "%s: expected true: %s (%s:%d)",	\
				   (label), #cond, __FILE__, __LINE__);	\
	} while (0)

#define ASSERT_STREQ(got, want, label)					\
	do {								\
		const char *unit_g_ = (got), *unit_w_ = (want);		\
		if (unit_g_ != unit_w_ &&				\
		    (!unit_g_ || !unit_w_ || strcmp(unit_g_, unit_w_)))	\
			unit_str_fail(unit_g_, unit_w_, (label),	\
				      __FILE__, __LINE__);		\
	} while (0)

#define ASSERT_MEMEQ(a, b, n, label)					\
	do {								\
		const unsigned char *unit_a_ = (const void *)(a);	\
		const unsigned char *unit_b_ = (const void *)(b);	\
		size_t unit_n_ = (n), unit_i_ = 0;			\
		while (unit_i_ < unit_n_ && unit_a_[unit_i_] == unit_b_[unit_i_]) \
			unit_i_++;					\
		if (unit_i_ < unit_n_)					\
			unit_leave(UNIT_FAIL,				\
				   "%s: differ at offset %zu of %zu: got 0x%02x, want 0x%02x (%s:%d)", \
				   (label), unit_i_, unit_n_,		\
				   unit_a_[unit_i_], unit_b_[unit_i_],	\
				   __FILE__, __LINE__);			\
	} while (0)

#define SKIP(reason) unit_leave(UNIT_SKIP, "%s", (reason))

/* tests/data, wherever the test runs from: $REPO_ROOT (run.sh exports it),
 * the working directory, or two levels up from the binary (.output/tests).
 * probe: a path under tests/data that must exist there. Fails the test
 * when not found. */
static inline const char *unit_data_dir(const char *probe)
{
	static char dir[4096 + 32];
	char exe[4096], path[sizeof(dir) + 256];
	const char *root = getenv("REPO_ROOT");
	ssize_t n;

	if (dir[0])
		return dir;
	snprintf(dir, sizeof(dir), "%s/tests/data", root ? root : ".");
	snprintf(path, sizeof(path), "%s/%s", dir, probe);
	if (access(path, R_OK) == 0)
		return dir;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(dir, sizeof(dir), "%s/../../tests/data", exe);
		snprintf(path, sizeof(path), "%s/%s", dir, probe);
		if (access(path, R_OK) == 0)
			return dir;
	}
	dir[0] = '\0';
	unit_leave(UNIT_FAIL, "tests/data/%s not found (set REPO_ROOT)", probe);
}

/* "tests/unit/test_json.c" -> "test_json" */
static inline void unit_stem(char *buf, size_t size, const char *file)
{
	const char *base = strrchr(file, '/'), *dot;
	size_t n;

	base = base ? base + 1 : file;
	dot = strrchr(base, '.');
	n = dot ? (size_t)(dot - base) : strlen(base);
	snprintf(buf, size, "%.*s", (int)n, base);
}

/* A crash would otherwise kill the binary without saying which test it was
 * in: say it, then die of the same signal so the exit status stays true.
 * Only write() here: nothing else is async-signal-safe. */
static inline void unit_crash(int sig)
{
	const char *name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" :
			   sig == SIGFPE ? "SIGFPE" : sig == SIGILL ? "SIGILL" :
			   sig == SIGABRT ? "SIGABRT" : "signal";
	ssize_t r;

	r = write(1, unit_state.crash_line, strlen(unit_state.crash_line));
	r = write(1, name, strlen(name));
	r = write(1, "\n", 1);
	(void)r;
	raise(sig);
}

/* Its own frame, so that no local of the runner lives across setjmp. */
static __attribute__((noinline, unused)) void unit_call(void (*fn)(void))
{
	if (!setjmp(unit_state.jmp)) {
		unit_state.running = 1;
		fn();
	}
	unit_state.running = 0;
}

static inline int unit_selected(const char *name, const char *full,
				int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name) || !strcmp(argv[i], full))
			return 1;
	return 0;
}

static inline int unit_run(int argc, char **argv)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa = { .sa_handler = unit_crash,
				.sa_flags = SA_RESETHAND | SA_NODEFER };
	int failed = 0;
	char stem[128], full[256];

	/* Each line must reach the pipe before a later test can crash. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (int i = 0; i < unit_state.count; i++) {
			unit_stem(stem, sizeof(stem), unit_state.tests[i].file);
			printf("%s/%s\n", stem, unit_state.tests[i].name);
		}
		return 0;
	}
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);

	for (int i = 0; i < unit_state.count; i++) {
		struct unit_test *t = &unit_state.tests[i];

		unit_stem(stem, sizeof(stem), t->file);
		snprintf(full, sizeof(full), "%s/%s", stem, t->name);
		if (!unit_selected(t->name, full, argc, argv))
			continue;
		snprintf(unit_state.crash_line, sizeof(unit_state.crash_line),
			 "not ok - %s: crashed: ", full);
		unit_state.result = UNIT_PASS;
		unit_state.msg[0] = '\0';
		unit_call(t->fn);
		/* Whatever the test printed must not glue onto our line. */
		fflush(stdout);
		fflush(stderr);
		switch (unit_state.result) {
		case UNIT_PASS:
			printf("ok - %s\n", full);
			break;
		case UNIT_FAIL:
			printf("not ok - %s: %s\n", full, unit_state.msg);
			failed++;
			break;
		case UNIT_SKIP:
			printf("skip - %s: %s\n", full, unit_state.msg);
			break;
		}
	}

	/* A name on the command line that matches nothing is a typo. */
	for (int a = 1; a < argc; a++) {
		int found = 0;

		for (int i = 0; i < unit_state.count && !found; i++) {
			unit_stem(stem, sizeof(stem), unit_state.tests[i].file);
			snprintf(full, sizeof(full), "%s/%s", stem,
				 unit_state.tests[i].name);
			found = !strcmp(argv[a], unit_state.tests[i].name) ||
				!strcmp(argv[a], full);
		}
		if (!found) {
			printf("not ok - %s: no such test\n", argv[a]);
			failed++;
		}
	}
	if (unit_state.overflow) {
		printf("not ok - %s: %d tests beyond UNIT_MAX_TESTS (%d) were not run\n",
		       argc ? argv[0] : "unit", unit_state.overflow,
		       UNIT_MAX_TESTS);
		failed++;
	}
	return failed ? 1 : 0;
}

#define UNIT_MAIN()					\
	int main(int argc, char **argv)			\
	{						\
		return unit_run(argc, argv);		\
	}

#endif
