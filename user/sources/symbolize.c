/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Symbolizer sessions over elfutils' libdwfl.
 *
 * One Dwfl per traced process, reported from /proc/PID/maps: libdwfl then
 * knows every mapped ELF with its load bias (PIE, shared libraries, the
 * vDSO) and loads symbol tables, line tables and CFI on first use.
 *
 * Unwinding runs libdwfl's own CFI interpreter over a snapshot rather than
 * the live process: the process state is attached once per session with
 * callbacks that hand out "the snapshot being unwound now" (set by
 * unwind_snapshot), because a Dwfl takes only one attach in its lifetime. */
#define _GNU_SOURCE
#include "symbolize.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Direct-mapped: a fd-creating site is hit over and over with the same few
 * return addresses, so a small table catches nearly all of it, and a
 * collision costs only one more DWARF walk. Power of two. */
#define SYM_CACHE_SLOTS 256

/* x86_64 DWARF register numbers 0..16 (rax .. rip, the return address
 * column): what the unwinder's initial frame needs. */
#define X86_64_DWARF_NREGS 17
#define X86_64_DWARF_SP 7

struct sym_cache_slot {
	bool used;
	bool is_return;
	int rc;
	struct sym_frame f;
};

struct symbolizer {
	pid_t pid;
	Dwfl *dwfl;
	/* The process lives in another mount namespace (a container): its
	 * maps' paths must be opened through /proc/PID/root, or we would read
	 * the host's file of the same name. */
	bool foreign_root;
	/* Tells the unwinder the architecture without tying it to one of the
	 * process's modules, which a refresh may drop. Backed by arch_image. */
	Elf *arch_elf;
	Elf64_Ehdr arch_image;
	bool attached;
	/* The snapshot being unwound, for the thread callbacks. */
	const struct user_regs_x86 *regs;
	const uint8_t *stack;
	size_t stack_len;
	struct sym_cache_slot *cache;	/* calloc'ed on first lookup */
	struct symbolizer_stats stats;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* find_elf: libdwfl's /proc one, except that in another mount namespace
 * the file is opened where the process sees it. A deleted file is left to
 * libdwfl, which reads it from the process's memory. */
static int find_elf_proc_root(Dwfl_Module *mod, void **userdata,
			      const char *name, Dwarf_Addr base,
			      char **file_name, Elf **elfp)
{
	struct symbolizer *s = userdata ? *userdata : NULL;

	if (s && s->foreign_root && name[0] == '/' &&
	    !ends_with(name, " (deleted)")) {
		char path[PATH_MAX];
		struct stat st;
		int n, fd;

		n = snprintf(path, sizeof(path), "/proc/%d/root%s", s->pid, name);
		/* Only regular files: a mapped device could block on open. */
		if (n > 0 && (size_t)n < sizeof(path) && !stat(path, &st) &&
		    S_ISREG(st.st_mode)) {
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				*file_name = strdup(path);
				if (*file_name)
					return fd;
				close(fd);
			}
		}
	}
	return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name,
					elfp);
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = find_elf_proc_root,
	/* build-id under /usr/lib/debug, .gnu_debuglink, and debuginfod when
	 * the environment enables it (DEBUGINFOD_URLS) */
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

/* Thread callbacks: the process has one thread, the snapshot. */
static pid_t snap_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct symbolizer *s = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = s;
	return s->pid;
}

static bool snap_get_thread(Dwfl *dwfl, pid_t tid, void *arg,
			    void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

/* Only the copied bytes: the live stack has moved on since the syscall, and
 * mixing it in would invent frames; text and data never need reading here
 * (CFI comes from the ELF files). Failing ends the unwind cleanly. */
static bool snap_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			     void *arg)
{
	struct symbolizer *s = arg;
	uint64_t off;

	if (!s->regs || addr < s->regs->sp)
		return false;
	off = addr - s->regs->sp;
	if (off > s->stack_len || s->stack_len - off < sizeof(*result))
		return false;
	memcpy(result, s->stack + off, sizeof(*result));
	return true;
}

static bool snap_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct symbolizer *s = arg;
	const struct user_regs_x86 *r = s->regs;
	Dwarf_Word dw[X86_64_DWARF_NREGS];

	if (!r)
		return false;
	dw[0] = r->ax;
	dw[1] = r->dx;
	dw[2] = r->cx;
	dw[3] = r->bx;
	dw[4] = r->si;
	dw[5] = r->di;
	dw[6] = r->bp;
	dw[7] = r->sp;
	dw[8] = r->r8;
	dw[9] = r->r9;
	dw[10] = r->r10;
	dw[11] = r->r11;
	dw[12] = r->r12;
	dw[13] = r->r13;
	dw[14] = r->r14;
	dw[15] = r->r15;
	dw[16] = r->ip;
	if (!dwfl_thread_state_registers(thread, 0, X86_64_DWARF_NREGS, dw))
		return false;
	dwfl_thread_state_register_pc(thread, r->ip);
	return true;
}

static const Dwfl_Thread_Callbacks snap_callbacks = {
	.next_thread = snap_next_thread,
	.get_thread = snap_get_thread,
	.memory_read = snap_memory_read,
	.set_initial_registers = snap_set_initial_registers,
};

/* find_elf gets the module's userdata, not the Dwfl: hang the session on
 * every module so it can learn the pid. */
static int set_module_userdata(Dwfl_Module *mod, void **userdata,
			       const char *name, Dwarf_Addr start, void *arg)
{
	*userdata = arg;
	return DWARF_CB_OK;
}

static int report_maps(struct symbolizer *s)
{
	int rc;

	dwfl_report_begin(s->dwfl);
	rc = dwfl_linux_proc_report(s->dwfl, s->pid);
	/* Ends the report even on failure, so the Dwfl stays consistent
	 * (with what could be read). */
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0 && !rc)
		rc = -1;
	if (rc)
		return rc > 0 ? -rc : -EIO;
	dwfl_getmodules(s->dwfl, set_module_userdata, s, 0);
	return 0;
}

static bool same_root(pid_t pid)
{
	char path[64];
	struct stat ours, theirs;

	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	if (stat("/", &ours) || stat(path, &theirs))
		return true;	/* cannot tell: the paths as they are */
	return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

static void attach_unwinder(struct symbolizer *s)
{
	Elf64_Ehdr *h = &s->arch_image;

	memset(h, 0, sizeof(*h));
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_CORE;
	h->e_machine = EM_X86_64;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(*h);
	s->arch_elf = elf_memory((char *)h, sizeof(*h));
	if (!s->arch_elf)
		return;
	s->attached = dwfl_attach_state(s->dwfl, s->arch_elf, s->pid,
					&snap_callbacks, s);
}

struct symbolizer *symbolizer_new(pid_t pid)
{
	struct symbolizer *s;
	int rc;

	if (pid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pid = pid;
	s->foreign_root = !same_root(pid);
	s->dwfl = dwfl_begin(&proc_callbacks);
	if (!s->dwfl) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	rc = report_maps(s);
	if (rc) {
		symbolizer_free(s);
		errno = -rc;
		return NULL;
	}
	/* Without it symbolizing still works; unwinding gives one frame. */
	attach_unwinder(s);
	return s;
}

int symbolizer_refresh(struct symbolizer *s)
{
	if (!s)
		return -EINVAL;
	/* An address that was unmapped may now be in a dlopen()ed library. */
	if (s->cache)
		memset(s->cache, 0, SYM_CACHE_SLOTS * sizeof(*s->cache));
	return report_maps(s);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	/* After dwfl_end: the unwinder's backend points into it. */
	if (s->arch_elf)
		elf_end(s->arch_elf);
	free(s->cache);
	free(s);
}

void symbolizer_get_stats(const struct symbolizer *s,
			  struct symbolizer_stats *st)
{
	if (s)
		*st = s->stats;
	else
		memset(st, 0, sizeof(*st));
}

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* A path too long for the field keeps its end, which names the file. */
static void copy_path_tail(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n < size) {
		memcpy(dst, src, n + 1);
		return;
	}
	snprintf(dst, size, "...%s", src + n - (size - 4));
}

static void module_basename(char *dst, size_t size, const char *name)
{
	const char *slash;

	if (!name) {
		dst[0] = '\0';
		return;
	}
	/* "[vdso: 1234]" is libdwfl's name for it; the pid says nothing. */
	if (!strncmp(name, "[vdso", 5)) {
		copy_str(dst, size, "[vdso]");
		return;
	}
	slash = strrchr(name, '/');
	copy_str(dst, size, slash ? slash + 1 : name);
}

/* dwfl_module_getsrc finds the CU through .debug_aranges, which clang
 * does not emit; libdw 0.188 then finds nothing. Ask each CU whether it
 * covers addr instead: linear in the CUs, but only on a cache miss, and
 * only for a module that has DWARF (no CUs otherwise). */
static void line_from_cu_scan(Dwfl_Module *mod, Dwarf_Addr addr,
			      struct sym_frame *out)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	while ((cu = dwfl_module_nextcu(mod, cu, &bias))) {
		Dwarf_Line *line;
		const char *src;
		int lineno = 0;

		if (dwarf_haspc(cu, addr - bias) != 1)
			continue;
		line = dwarf_getsrc_die(cu, addr - bias);
		src = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
		if (!src)
			return;
		copy_path_tail(out->file, sizeof(out->file), src);
		if (!dwarf_lineno(line, &lineno))
			out->line = lineno;
		return;
	}
}

static int lookup(struct symbolizer *s, uint64_t ip, bool is_return,
		  struct sym_frame *out)
{
	/* The call instruction, not what follows it: after a call to a
	 * noreturn function the next byte may be another function. */
	Dwarf_Addr addr = is_return && ip ? ip - 1 : ip;
	Dwarf_Addr start = 0, bias = 0;
	Dwfl_Module *mod;
	Dwfl_Line *line;
	const char *name;
	GElf_Off off = 0;
	GElf_Sym sym;

	memset(out, 0, sizeof(*out));
	out->ip = ip;
	copy_str(out->func, sizeof(out->func), "?");
	out->offset = ip;

	mod = dwfl_addrmodule(s->dwfl, addr);
	if (!mod)
		return -ENOENT;
	name = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	module_basename(out->module, sizeof(out->module), name);

	name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	if (name && name[0]) {
		/* A .symtab (glibc's in its -dbg package) spells versioned
		 * symbols "name@@GLIBC_2.34", .dynsym plain "name": one name
		 * for one function, whichever table answered. */
		snprintf(out->func, sizeof(out->func), "%.*s",
			 (int)strcspn(name, "@"), name);
		out->offset = ip - (addr - off);
	} else if (dwfl_module_getelf(mod, &bias)) {
		out->offset = ip - bias;
	} else {
		/* No ELF at all: at least relative to where it is mapped. */
		out->offset = ip - start;
	}

	line = dwfl_module_getsrc(mod, addr);
	if (line) {
		int lineno = 0;
		const char *src = dwfl_lineinfo(line, NULL, &lineno, NULL,
						NULL, NULL);

		if (src) {
			copy_path_tail(out->file, sizeof(out->file), src);
			out->line = lineno;
		}
	} else {
		line_from_cu_scan(mod, addr, out);
	}
	return 0;
}

static unsigned int cache_index(uint64_t ip, bool is_return)
{
	/* Fibonacci hashing: return addresses differ in their low bits. The
	 * flag is mixed in so that both lookups of one ip can stay cached. */
	uint64_t key = ip * 2 + is_return;

	return (unsigned int)((key * 0x9e3779b97f4a7c15ull) >> 56) &
	       (SYM_CACHE_SLOTS - 1);
}

int symbolize_ip(struct symbolizer *s, uint64_t ip, bool is_return_address,
		 struct sym_frame *out)
{
	struct sym_cache_slot *slot = NULL;
	int rc;

	if (!s || !out)
		return -EINVAL;
	if (!s->cache)
		s->cache = calloc(SYM_CACHE_SLOTS, sizeof(*s->cache));
	if (s->cache) {
		slot = &s->cache[cache_index(ip, is_return_address)];
		if (slot->used && slot->f.ip == ip &&
		    slot->is_return == is_return_address) {
			s->stats.cache_hits++;
			*out = slot->f;
			return slot->rc;
		}
	}
	s->stats.cache_misses++;
	rc = lookup(s, ip, is_return_address, out);
	if (slot) {
		slot->used = true;
		slot->is_return = is_return_address;
		slot->rc = rc;
		slot->f = *out;
	}
	return rc;
}

struct unwind_walk {
	uint64_t *ips;
	bool *activation;
	int n, max;
	uint64_t last_sp;
};

static int collect_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwind_walk *w = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool isact = false;

	if (!dwfl_frame_pc(frame, &pc, &isact) || !pc)
		return DWARF_CB_ABORT;
	/* The stack grows down, so every caller's sp lies above its
	 * callee's. One that does not came from garbage (the frame-pointer
	 * fallback reading a non-pointer rbp, say): stop before it leads the
	 * unwind in circles. A signal frame may sit on another stack. */
	if (dwfl_frame_reg(frame, X86_64_DWARF_SP, &sp) == 0) {
		if (w->n && !isact && sp <= w->last_sp)
			return DWARF_CB_ABORT;
		w->last_sp = sp;
	}
	w->ips[w->n] = pc;
	if (w->activation)
		w->activation[w->n] = isact;
	if (++w->n >= w->max)
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

int unwind_snapshot_ex(struct symbolizer *s, const struct user_regs_x86 *regs,
		       const uint8_t *stack, size_t stack_len,
		       uint64_t *ips, bool *activation, int max_frames)
{
	struct unwind_walk w = {
		.ips = ips, .activation = activation, .max = max_frames,
	};

	if (!s || !regs || !ips || max_frames < 1 || (!stack && stack_len))
		return -EINVAL;
	if (s->attached) {
		s->regs = regs;
		s->stack = stack;
		s->stack_len = stack_len;
		/* Ends in an error at the first unreadable or CFI-less frame;
		 * the frames found up to there are the answer either way. */
		dwfl_getthread_frames(s->dwfl, s->pid, collect_frame, &w);
		s->regs = NULL;
		s->stack = NULL;
		s->stack_len = 0;
	}
	if (w.n == 0) {
		/* Where the syscall was made is known even without CFI. */
		ips[0] = regs->ip;
		if (activation)
			activation[0] = true;
		w.n = 1;
	}
	return w.n;
}

int unwind_snapshot(struct symbolizer *s, const struct user_regs_x86 *regs,
		    const uint8_t *stack, size_t stack_len,
		    uint64_t *ips, int max_frames)
{
	return unwind_snapshot_ex(s, regs, stack, stack_len, ips, NULL,
				  max_frames);
}

