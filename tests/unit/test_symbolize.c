/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Symbolizer and DWARF-CFI unwinder against real processes: builds of
 * tests/fixtures/unwindfix.c (see there) found in $FIXTURES:
 *	unwindfix		the generic fixture rule (-g -O2)
 *	unwindfix_nofp		-g -O2 -fomit-frame-pointer: distribution-style
 *	unwindfix_fp		-g -O2 -fno-omit-frame-pointer
 *	unwindfix_stripped	unwindfix_nofp after strip --strip-all
 * The symbolize_* tests need only the first; a missing build skips the
 * tests that need it (and under CI=true run.sh counts that a failure).
 * Each run leaves the fixture blocked in read() while the test looks at
 * its maps; closing its stdin ends it. Frames go to stderr for the eye. */
#define _GNU_SOURCE
#include "unit.h"

#include "symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#define MAX_FRAMES 64
#define STACK_COPY 8192

struct snapshot {
	pid_t pid;
	struct user_regs_x86 regs;
	uint64_t getpid_addr;
	int line_capture_call, line_inner_wait, line_outer, line_main;
	uint8_t *stack;
	size_t stack_len;
};

struct fixture {
	pid_t pid;		/* 0: none running */
	int in_fd;		/* its stdin: closing it ends the fixture */
	char snap_path[64];
	struct snapshot snap;
};

/* The fixture of the current test. A failed assert leaves the test at
 * once; the next start (or the binary's exit, closing in_fd) ends it. */
static struct fixture cur = { .in_fd = -1 };

static void fixture_stop(void)
{
	int status;

	if (cur.in_fd >= 0)
		close(cur.in_fd);
	cur.in_fd = -1;
	if (cur.pid > 0) {
		/* EOF on stdin is its way out; a kill only if it hangs. */
		for (int i = 0; i < 200; i++) {
			if (waitpid(cur.pid, &status, WNOHANG) == cur.pid)
				break;
			if (i == 199) {
				kill(cur.pid, SIGKILL);
				waitpid(cur.pid, &status, 0);
			}
			usleep(10000);
		}
	}
	cur.pid = 0;
	if (cur.snap_path[0])
		unlink(cur.snap_path);
	cur.snap_path[0] = '\0';
	free(cur.snap.stack);
	memset(&cur.snap, 0, sizeof(cur.snap));
}

static void fixture_binary(const char *name, char *path, size_t size)
{
	const char *dir = getenv("FIXTURES");
	char why[512];

	if (!dir || !dir[0])
		SKIP("FIXTURES is not set (tests/run.sh sets it to .output/fixtures)");
	snprintf(path, size, "%s/%s", dir, name);
	if (access(path, X_OK)) {
		snprintf(why, sizeof(why),
			 "%.400s not built (make builds it with the fixtures)",
			 path);
		SKIP(why);
	}
}

/* One line from fd within 10 s. */
static void read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		ASSERT_TRUE(poll(&p, 1, 10000) == 1, "fixture answers within 10 s");
		r = read(fd, buf + n, 1);
		ASSERT_TRUE(r == 1, "fixture's stdout open");
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
}

static void parse_snapshot(const char *path, struct snapshot *sn)
{
	FILE *f = fopen(path, "r");
	char line[1024], key[32];
	uint64_t w[21];
	int version = 0, got = 0, n;
	size_t len = 0;

	ASSERT_TRUE(f != NULL, "snapshot file opens");
	ASSERT_TRUE(fscanf(f, "unwindfix %d\n", &version) == 1 && version == 1,
		    "snapshot header");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "stack %zu", &len) == 1)
			break;
		if (sscanf(line, "pid %d", &n) == 1) {
			sn->pid = n;
		} else if (!strncmp(line, "regs ", 5)) {
			char *p = line + 5, *end;
			int k;

			for (k = 0; k < 21; k++, p = end) {
				w[k] = strtoull(p, &end, 16);
				if (end == p)
					break;
			}
			ASSERT_EQ(k, 21, "21 registers");
			/* pt_regs order on both sides: a plain copy. */
			memcpy(&sn->regs, w, sizeof(sn->regs));
			got++;
		} else if (sscanf(line, "getpid %" SCNx64, &sn->getpid_addr) == 1) {
			got++;
		} else if (sscanf(line, "line %31s %d", key, &n) == 2) {
			if (!strcmp(key, "capture_call"))
				sn->line_capture_call = n;
			else if (!strcmp(key, "inner_wait"))
				sn->line_inner_wait = n;
			else if (!strcmp(key, "outer"))
				sn->line_outer = n;
			else if (!strcmp(key, "main"))
				sn->line_main = n;
			got++;
		}
	}
	ASSERT_EQ(got, 6, "snapshot fields");
	ASSERT_TRUE(len > 0 && len <= STACK_COPY, "stack length");
	sn->stack = malloc(len);
	ASSERT_TRUE(sn->stack != NULL, "malloc");
	ASSERT_EQ(fread(sn->stack, 1, len, f), len, "stack bytes");
	sn->stack_len = len;
	fclose(f);
}

/* Runs FIXTURES/name until it is ready and reads its snapshot. */
static void fixture_start(const char *name)
{
	char path[4096], line[128];
	int in[2], out[2], fd, ready = 0;
	pid_t pid;

	fixture_stop();
	fixture_binary(name, path, sizeof(path));
	snprintf(cur.snap_path, sizeof(cur.snap_path), "/tmp/unwindfix.XXXXXX");
	fd = mkstemp(cur.snap_path);
	ASSERT_TRUE(fd >= 0, "mkstemp");
	close(fd);
	/* Close-on-exec, so that no later child keeps the fixture's stdin
	 * open and its EOF from coming. */
	ASSERT_TRUE(!pipe2(in, O_CLOEXEC) && !pipe2(out, O_CLOEXEC), "pipes");
	pid = fork();
	ASSERT_TRUE(pid >= 0, "fork");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(path, path, cur.snap_path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	cur.pid = pid;
	cur.in_fd = in[1];
	read_line(out[0], line, sizeof(line));
	close(out[0]);
	ASSERT_TRUE(sscanf(line, "ready %d", &ready) == 1, "fixture says ready");
	ASSERT_EQ(ready, pid, "ready names the fixture's pid");
	parse_snapshot(cur.snap_path, &cur.snap);
	ASSERT_EQ(cur.snap.pid, pid, "snapshot pid");
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Unwinds and symbolizes; frames printed to stderr under label. */
static int unwind_frames(struct symbolizer *s, const struct user_regs_x86 *regs,
			 const uint8_t *stack, size_t len,
			 struct sym_frame *frames, const char *label)
{
	uint64_t ips[MAX_FRAMES];
	bool act[MAX_FRAMES];
	char buf[512];
	int n;

	n = unwind_snapshot_ex(s, regs, stack, len, ips, act, MAX_FRAMES);
	ASSERT_TRUE(n >= 1, "unwind_snapshot returns frames");
	ASSERT_EQ(ips[0], regs->ip, "frame 0 is regs->ip");
	ASSERT_TRUE(act[0], "frame 0 is an activation");
	fprintf(stderr, "%s: %d frames\n", label, n);
	for (int i = 0; i < n; i++) {
		symbolize_ip(s, ips[i], !act[i], &frames[i]);
		fprintf(stderr, "  #%-2d %#" PRIx64 " %s\n", i, ips[i],
			sym_frame_format(&frames[i], buf, sizeof(buf)));
	}
	return n;
}

static int find_func(const struct sym_frame *f, int n, int from,
		     const char *func)
{
	for (int i = from; i < n; i++)
		if (!strcmp(f[i].func, func))
			return i;
	return -1;
}

static void assert_site(const struct sym_frame *f, const char *func,
			const char *module, int line)
{
	char label[160];

	snprintf(label, sizeof(label), "%s's module", func);
	ASSERT_STREQ(f->module, module, label);
	snprintf(label, sizeof(label), "%s's file", func);
	ASSERT_STREQ(base_name(f->file), "unwindfix.c", label);
	snprintf(label, sizeof(label), "%s's line", func);
	ASSERT_EQ(f->line, line, label);
}

/* inner, outer, main as consecutive frames from index from on: a skipped
 * or invented frame in between is a broken unwind. */
static void assert_chain(const struct sym_frame *f, int n, int from,
			 const char *module, int inner_line)
{
	int i = find_func(f, n, from, "leak_site_inner");

	ASSERT_TRUE(i >= 0, "leak_site_inner among the frames");
	ASSERT_TRUE(i + 2 < n, "frames above leak_site_inner");
	assert_site(&f[i], "leak_site_inner", module, inner_line);
	ASSERT_STREQ(f[i + 1].func, "leak_site_outer", "caller of leak_site_inner");
	assert_site(&f[i + 1], "leak_site_outer", module, cur.snap.line_outer);
	ASSERT_STREQ(f[i + 2].func, "main", "caller of leak_site_outer");
	assert_site(&f[i + 2], "main", module, cur.snap.line_main);
}

/* The snapshot the fixture took of itself, as the BPF side would. */
static void check_self_snapshot(const char *name)
{
	struct sym_frame f[MAX_FRAMES];
	struct symbolizer *s;
	int n;

	fixture_start(name);
	s = symbolizer_new(cur.pid);
	ASSERT_TRUE(s != NULL, "symbolizer_new");
	n = unwind_frames(s, &cur.snap.regs, cur.snap.stack,
			  cur.snap.stack_len, f, name);
	ASSERT_STREQ(f[0].func, "capture", "frame 0");
	ASSERT_STREQ(f[0].module, name, "frame 0's module");
	assert_chain(f, n, 1, name, cur.snap.line_capture_call);
	ASSERT_EQ(find_func(f, n, 0, "leak_site_inner"), 1,
		  "leak_site_inner right above capture");
	symbolizer_free(s);
	fixture_stop();
}

TEST(unwind_no_frame_pointer)
{
	check_self_snapshot("unwindfix_nofp");
}

TEST(unwind_frame_pointer)
{
	check_self_snapshot("unwindfix_fp");
}

TEST(unwind_default_build)
{
	check_self_snapshot("unwindfix");
}

/* "ready" comes before the fixture is inside read(): it may still be on its
 * way out of the write() that said it. Wait until /proc says it sits in
 * read(0, ...): syscall 0 with fd 0. */
static void wait_blocked_in_read(pid_t pid)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		int got = f && fgets(buf, sizeof(buf), f) != NULL;

		if (f)
			fclose(f);
		if (got && !strncmp(buf, "0 0x0 ", 6))
			return;
		usleep(5000);
	}
	ASSERT_TRUE(0, "fixture blocked in read(0) within 5 s");
}

/* Blocked in read() inside libc, registers and stack taken with ptrace the
 * way bpf_task_pt_regs + a stack copy see them at the syscall: the first
 * frame is libc's, unwound with libc's own CFI. */
TEST(unwind_from_libc_syscall)
{
	struct sym_frame f[MAX_FRAMES];
	struct user_regs_struct ur;
	struct user_regs_x86 regs;
	static uint8_t stack[STACK_COPY];
	struct iovec local, remote;
	struct symbolizer *s;
	ssize_t got;
	int status, n;

	_Static_assert(sizeof(ur) >= sizeof(regs), "user_regs_struct starts as pt_regs");
	fixture_start("unwindfix_nofp");
	wait_blocked_in_read(cur.pid);
	ASSERT_TRUE(!ptrace(PTRACE_SEIZE, cur.pid, 0, 0), "PTRACE_SEIZE");
	ASSERT_TRUE(!ptrace(PTRACE_INTERRUPT, cur.pid, 0, 0), "PTRACE_INTERRUPT");
	ASSERT_EQ(waitpid(cur.pid, &status, __WALL), cur.pid, "waitpid");
	ASSERT_TRUE(WIFSTOPPED(status), "fixture stopped");
	ASSERT_TRUE(!ptrace(PTRACE_GETREGS, cur.pid, 0, &ur), "PTRACE_GETREGS");
	memcpy(&regs, &ur, sizeof(regs));
	local = (struct iovec){ .iov_base = stack, .iov_len = sizeof(stack) };
	remote = (struct iovec){ .iov_base = (void *)(uintptr_t)regs.sp,
				 .iov_len = sizeof(stack) };
	/* Short near the top of the stack mapping, as the BPF copy is. */
	got = process_vm_readv(cur.pid, &local, 1, &remote, 1, 0);
	ptrace(PTRACE_DETACH, cur.pid, 0, 0);
	ASSERT_TRUE(got > 0, "process_vm_readv");

	s = symbolizer_new(cur.pid);
	ASSERT_TRUE(s != NULL, "symbolizer_new");
	n = unwind_frames(s, &regs, stack, (size_t)got, f, "in read()");
	ASSERT_STREQ(f[0].module, "libc.so.6", "frame 0 in libc");
	ASSERT_TRUE(strstr(f[0].func, "read") != NULL, "frame 0 is read()");
	assert_chain(f, n, 1, "unwindfix_nofp", cur.snap.line_inner_wait);
	symbolizer_free(s);
	fixture_stop();
}

/* No .symtab, no DWARF; .eh_frame and .dynsym stay, as in a distribution
 * binary without its -dbg package: the unwind still walks every frame, and
 * the fixture's own frames come out as module+offset. */
TEST(unwind_stripped_binary)
{
	struct sym_frame f[MAX_FRAMES];
	struct symbolizer *s;
	int n;

	fixture_start("unwindfix_stripped");
	s = symbolizer_new(cur.pid);
	ASSERT_TRUE(s != NULL, "symbolizer_new");
	n = unwind_frames(s, &cur.snap.regs, cur.snap.stack,
			  cur.snap.stack_len, f, "unwindfix_stripped");
	ASSERT_TRUE(n >= 5, "capture, inner, outer, main and libc's start");
	for (int i = 0; i < 4; i++) {
		ASSERT_STREQ(f[i].func, "?", "no symbol");
		ASSERT_STREQ(f[i].module, "unwindfix_stripped", "module named");
		ASSERT_STREQ(f[i].file, "", "no file");
		ASSERT_EQ(f[i].line, 0, "no line");
		/* A module-relative address, within the small binary. */
		ASSERT_TRUE(f[i].offset > 0 && f[i].offset < 0x10000,
			    "offset inside the module");
	}
	ASSERT_TRUE(find_func(f, n, 4, "__libc_start_main") >= 4,
		    "unwound on into libc's exported __libc_start_main");
	symbolizer_free(s);
	fixture_stop();
}

TEST(symbolize_libc_function)
{
	struct sym_frame f;
	struct symbolizer *s;

	fixture_start("unwindfix");
	s = symbolizer_new(cur.pid);
	ASSERT_TRUE(s != NULL, "symbolizer_new");
	ASSERT_EQ(symbolize_ip(s, cur.snap.getpid_addr, false, &f), 0,
		  "symbolize_ip");
	fprintf(stderr, "getpid at %#" PRIx64 ": %s/%s+%#" PRIx64 "\n",
		cur.snap.getpid_addr, f.module, f.func, f.offset);
	ASSERT_TRUE(!strcmp(f.func, "getpid") || !strcmp(f.func, "__getpid"),
		    "getpid or its alias");
	ASSERT_STREQ(f.module, "libc.so.6", "module");
	ASSERT_EQ(f.offset, 0, "at the function's start");
	ASSERT_EQ(f.ip, cur.snap.getpid_addr, "ip kept");
	symbolizer_free(s);
	fixture_stop();
}

TEST(symbolize_unmapped_address)
{
	struct sym_frame f;
	struct symbolizer *s;
	char buf[128];

	fixture_start("unwindfix");
	s = symbolizer_new(cur.pid);
	ASSERT_TRUE(s != NULL, "symbolizer_new");
	/* Below mmap_min_addr: never mapped. */
	ASSERT_EQ(symbolize_ip(s, 0x1000, true, &f), -ENOENT, "unmapped");
	ASSERT_STREQ(f.func, "?", "func");
	ASSERT_STREQ(f.module, "", "module");
	ASSERT_STREQ(f.file, "", "file");
	ASSERT_EQ(f.line, 0, "line");
	ASSERT_STREQ(sym_frame_format(&f, buf, sizeof(buf)), "? (0x1000)",
		     "formatted");
	symbolizer_free(s);
	fixture_stop();
}

TEST(symbolize_cached)
{
	struct sym_frame a, b;
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t ip;

	fixture_start("unwindfix");
	s = symbolizer_new(cur.pid);
	ASSERT_TRUE(s != NULL, "symbolizer_new");
	ip = cur.snap.regs.ip;
	ASSERT_EQ(symbolize_ip(s, ip, false, &a), 0, "first lookup");
	symbolizer_get_stats(s, &st);
	ASSERT_EQ(st.cache_misses, 1, "first lookup walks DWARF");
	ASSERT_EQ(st.cache_hits, 0, "nothing cached yet");
	ASSERT_EQ(symbolize_ip(s, ip, false, &b), 0, "second lookup");
	symbolizer_get_stats(s, &st);
	ASSERT_EQ(st.cache_misses, 1, "second lookup does not");
	ASSERT_EQ(st.cache_hits, 1, "it is a hit");
	ASSERT_MEMEQ(&a, &b, sizeof(a), "same answer");
	ASSERT_STREQ(a.func, "capture", "capture");

	/* As a return address it is another lookup (at ip - 1). */
	ASSERT_EQ(symbolize_ip(s, ip, true, &b), 0, "return-address lookup");
	symbolizer_get_stats(s, &st);
	ASSERT_EQ(st.cache_misses, 2, "is_return_address is part of the key");

	/* A refresh drops the cache, and everything still resolves. */
	ASSERT_EQ(symbolizer_refresh(s), 0, "refresh");
	ASSERT_EQ(symbolize_ip(s, ip, false, &b), 0, "after refresh");
	symbolizer_get_stats(s, &st);
	ASSERT_EQ(st.cache_misses, 3, "looked up again after refresh");
	ASSERT_MEMEQ(&a, &b, sizeof(a), "same answer after refresh");
	symbolizer_free(s);
	fixture_stop();
}

/* A short copy ends the unwind where the copy does, without reading past
 * it: fewer frames, never wrong ones, and never fewer than regs->ip. */
TEST(unwind_truncated_copy)
{
	uint64_t ips[MAX_FRAMES], full[MAX_FRAMES];
	struct symbolizer *s;
	int n_full, n;

	fixture_start("unwindfix");
	s = symbolizer_new(cur.pid);
	ASSERT_TRUE(s != NULL, "symbolizer_new");
	n_full = unwind_snapshot(s, &cur.snap.regs, cur.snap.stack,
				 cur.snap.stack_len, full, MAX_FRAMES);
	ASSERT_TRUE(n_full >= 4, "full copy unwinds");
	ASSERT_EQ(unwind_snapshot(s, &cur.snap.regs, NULL, 0, ips, MAX_FRAMES),
		  1, "no copy: regs->ip alone");
	ASSERT_EQ(ips[0], cur.snap.regs.ip, "that is regs->ip");
	for (size_t len = 8; len < cur.snap.stack_len; len += 8) {
		n = unwind_snapshot(s, &cur.snap.regs, cur.snap.stack, len, ips,
				    MAX_FRAMES);
		ASSERT_TRUE(n >= 1 && n <= n_full, "never more frames");
		ASSERT_MEMEQ(ips, full, n * sizeof(ips[0]),
			     "a prefix of the full unwind");
	}
	/* max_frames is a hard bound. */
	ASSERT_EQ(unwind_snapshot(s, &cur.snap.regs, cur.snap.stack,
				  cur.snap.stack_len, ips, 2), 2, "max_frames");
	/* The unwinder stays attached across a refresh of the maps. */
	ASSERT_EQ(symbolizer_refresh(s), 0, "refresh");
	ASSERT_EQ(unwind_snapshot(s, &cur.snap.regs, cur.snap.stack,
				  cur.snap.stack_len, ips, MAX_FRAMES), n_full,
		  "same unwind after refresh");
	ASSERT_MEMEQ(ips, full, n_full * sizeof(ips[0]), "same frames");
	symbolizer_free(s);
	fixture_stop();
}

TEST(bad_arguments)
{
	struct user_regs_x86 regs = { 0 };
	uint64_t ips[4];
	struct sym_frame f;

	errno = 0;
	ASSERT_TRUE(symbolizer_new(0) == NULL && errno == EINVAL, "pid 0");
	/* pid_max is at most 2^22: this one never exists. */
	ASSERT_TRUE(symbolizer_new(1 << 30) == NULL, "no such process");
	ASSERT_EQ(symbolize_ip(NULL, 1, false, &f), -EINVAL, "NULL session");
	ASSERT_EQ(unwind_snapshot(NULL, &regs, NULL, 0, ips, 4), -EINVAL,
		  "NULL session");
	ASSERT_EQ(symbolizer_refresh(NULL), -EINVAL, "refresh NULL");
	symbolizer_free(NULL);
}

TEST(regs_layout_is_pt_regs)
{
	/* The kernel's struct pt_regs offsets on x86_64. */
	ASSERT_EQ(offsetof(struct user_regs_x86, bp), 4 * 8, "bp");
	ASSERT_EQ(offsetof(struct user_regs_x86, ax), 10 * 8, "ax");
	ASSERT_EQ(offsetof(struct user_regs_x86, orig_ax), 15 * 8, "orig_ax");
	ASSERT_EQ(offsetof(struct user_regs_x86, ip), 16 * 8, "ip");
	ASSERT_EQ(offsetof(struct user_regs_x86, sp), 19 * 8, "sp");
	ASSERT_EQ(offsetof(struct user_regs_x86, ss), 20 * 8, "ss");
	ASSERT_EQ(offsetof(struct user_regs_struct, rip),
		  offsetof(struct user_regs_x86, ip), "ptrace's rip");
	ASSERT_EQ(offsetof(struct user_regs_struct, rsp),
		  offsetof(struct user_regs_x86, sp), "ptrace's rsp");
}

UNIT_MAIN()
