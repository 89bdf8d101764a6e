/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The QUIC stack compiled into an executable, for processes that map no
 * QUIC shared library: quic-go in a Go binary (the module list of its
 * build info, else its function names and the Debian package's
 * Built-Using), and the C stacks by the functions they define (ngtcp2,
 * quiche, msquic, lsquic) with the version their package records.
 * `summary` and `attach` say "quic-go v0.40.1 (statically linked)" where
 * summary said "-". */
#ifndef CONNSCOPE_EXE_QUIC_H
#define CONNSCOPE_EXE_QUIC_H

#include <stddef.h>

/* fd: the executable, open for reading (/proc/PID/exe); path: its name,
 * for the package database (NULL: not asked). The stack's name and, where
 * known, its version and where that came from, into name. 0 or -ENOENT
 * (none found, not ELF, unreadable). */
int exe_quic_stack(int fd, const char *path, char *name, size_t len);
/* The same with the dpkg database at dpkg (info/, status) for the
 * versions Debian records: quic-go's in a Go binary's Built-Using, a C
 * stack's (ngtcp2, rust-quiche, msquic, lsquic source packages) in its
 * Built-Using or Static-Built-Using: "ngtcp2 1.2.0-1 (statically linked;
 * Debian)". */
int exe_quic_stack_db(int fd, const char *path, const char *dpkg, char *name, size_t len);

/* The contents of a Go binary's .go.buildinfo section (Go 1.18 and later,
 * strings inline): 1 with the quic-go module's version in ver (a
 * replacement's version when it has one), 0 when the module list does not
 * name quic-go (or the binary was built without one: GOPATH mode, as
 * Debian builds), -EINVAL when it is not build info of that layout. */
int go_buildinfo_quic(const unsigned char *sec, size_t len, char *ver, size_t vlen);

/* Debian: the version of a source package named in pkg's Built-Using in
 * the dpkg status file at status (the quic-go Debian packages). 1 found,
 * 0 not, -errno when the file cannot be read. */
int dpkg_built_using_quic(const char *status, const char *pkg, char *ver, size_t vlen);
/* The package that installed path, from the *.list files of the dpkg info
 * directory; 0 or -ENOENT. */
int dpkg_owner(const char *infodir, const char *path, char *pkg, size_t len);

#endif
