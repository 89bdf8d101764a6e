/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* User-space code sites for a traced process: symbolizing addresses and
 * DWARF-CFI unwinding of the stack snapshot the BPF side copies at a
 * syscall, the way `perf record --call-graph dwarf` does, so that binaries
 * built without frame pointers (distribution -O2 builds) still name the
 * function and line that created an fd. Built on elfutils' libdwfl.
 *
 * A session is per process and not thread-safe: one thread at a time. */
#ifndef CONNSCOPE_SYMBOLIZE_H
#define CONNSCOPE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "code_site.h"

/* The kernel's x86_64 struct pt_regs, field for field (what
 * bpf_task_pt_regs() points at and PTRACE_GETREGS' user_regs_struct starts
 * with), so the BPF side can copy it byte for byte: fd_site_snap.regs of
 * include/abi/fdtrack.h goes in with one memcpy. */
struct user_regs_x86 {
	uint64_t r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	uint64_t ax, cx, dx, si, di, orig_ax;
	uint64_t ip, cs, flags, sp, ss;
};

_Static_assert(sizeof(struct user_regs_x86) == 21 * 8,
	       "struct user_regs_x86 must match the kernel's pt_regs");


struct symbolizer;

/* Reads /proc/PID/maps (PIE executable, shared libraries, vDSO); ELF and
 * debug info load lazily at the first address in each module. NULL with
 * errno set when the process cannot be reported (gone, no permission). */
struct symbolizer *symbolizer_new(pid_t pid);

/* Re-reads the maps after the process dlopen()ed or munmap()ed something.
 * Modules still mapped at the same place keep their loaded ELF/DWARF; the
 * address cache is dropped. 0 or -errno. */
int symbolizer_refresh(struct symbolizer *s);

void symbolizer_free(struct symbolizer *s);

/* Fills *out for ip. A return address (any frame but the innermost, unless
 * unwinding said it is an activation) is looked up at ip - 1, inside the
 * call instruction, so a call that ends a function does not name the next
 * one. Returns 0 when ip lies in a module (out->func may still be "?"),
 * -ENOENT when it lies in none (out says "?" with module "": the process
 * may have dlopen()ed since; symbolizer_refresh and retry), -EINVAL on bad
 * arguments. Results are cached by ip. */
int symbolize_ip(struct symbolizer *s, uint64_t ip, bool is_return_address,
		 struct sym_frame *out);

/* Unwinds the stack snapshot taken at regs: stack holds stack_len bytes
 * copied from regs->sp upwards. Memory outside the copy reads as
 * unavailable, so the unwind ends where the copy does rather than follow
 * live, changed memory. Stores at most max_frames pcs, ips[0] = regs->ip;
 * the rest are return addresses (see activation below). Returns the count
 * (>= 1), or -EINVAL. An unwind that stops early (end of the copy, a module
 * without CFI) is not an error: the frames found so far are returned, and
 * at worst that is regs->ip alone. */
int unwind_snapshot(struct symbolizer *s, const struct user_regs_x86 *regs,
		    const uint8_t *stack, size_t stack_len,
		    uint64_t *ips, int max_frames);

/* The same, also telling per frame whether its pc is an activation (the
 * innermost frame, and a frame interrupted by a signal) rather than a
 * return address: pass !activation[i] as is_return_address. activation
 * may be NULL. */
int unwind_snapshot_ex(struct symbolizer *s, const struct user_regs_x86 *regs,
		       const uint8_t *stack, size_t stack_len,
		       uint64_t *ips, bool *activation, int max_frames);


/* What the cache saved: lookups answered from it and those that had to
 * walk the symbol table and DWARF. */
struct symbolizer_stats {
	uint64_t cache_hits;
	uint64_t cache_misses;
};

void symbolizer_get_stats(const struct symbolizer *s,
			  struct symbolizer_stats *st);

#endif
