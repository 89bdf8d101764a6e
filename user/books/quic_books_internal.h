/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the QUIC books' files share and nothing else reads: the
 * connections each source keeps per process, and the helpers every state
 * machine uses (quic_books.c: the process table and the wire's machine;
 * quic_books_life.c: ngtcp2's and in-kernel QUIC's). */
#ifndef CONNSCOPE_QUIC_BOOKS_INTERNAL_H
#define CONNSCOPE_QUIC_BOOKS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "quic.h"

/* Only pointers to the books' public types here: each file includes
 * quic_books.h itself, so this header and quic_books.c (which includes
 * it) do not need each other. */
struct quic_books;
struct quic_proc;
struct quic_counts;

/* A connection ID: length and bytes, zero-padded (a hash key). */
struct qcid {
	uint8_t len;
	uint8_t id[QUIC_MAX_CID_LEN];
	uint8_t pad[3];
};

/* A 4-tuple as the wire events give it (the owner's side first): a hash
 * key, so built zeroed. */
struct qpath {
	uint16_t family, lport, rport, pad;
	uint8_t laddr[16], raddr[16];
};

/* The connection a 4-tuple carries: the one begun on it last. shared: an
 * earlier live connection was seen on it again after that one began (one
 * socket running both), so a new CID there cannot be told apart. */
struct qpathv {
	struct qcid ccid;
	bool shared;
};

#define QW_CIDS 6

struct qwconn {
	uint8_t role;			/* QN_ROLE_*: this process's side */
	bool completed, failed, closed, retried, vn, has_path;
	uint8_t ncids;
	uint64_t first_ns, last_ns;
	uint64_t cookie;		/* the socket it last went through */
	struct qcid ccid;		/* the key */
	/* indexed in cid_ix: ccid, odcid, server CIDs, CIDs moved to */
	struct qcid cids[QW_CIDS];
	struct qpath path;		/* the 4-tuple it was last seen on */
};

struct qattempt {
	uint64_t first_ns;
	bool vn;
};

struct qcookie {
	struct qcid last;		/* the last connection seen on it */
	uint32_t nconns;
};

struct qlconn {
	uint8_t role;
	bool completed;
	uint64_t first_ns;
};

struct qkconn {
	uint8_t role;
	bool completed;
	uint64_t first_ns;
};

/* Pointers into b->procs stay valid until the next new process. */
struct quic_proc *quic_proc_get(struct quic_books *b, pid_t pid);
/* The books of the process an event of source src names; NULL for an
 * event without an owner (counted) or when memory runs out. */
struct quic_proc *quic_source_proc(struct quic_books *b, uint32_t tgid, uint32_t src,
				   const char *comm, uint64_t start_ns);
/* A connection opened (as client) or accepted (as server). */
void quic_count_open(struct quic_counts *q, uint8_t role);
/* A completed handshake's time into the histogram and the exact sum. */
void quic_hist_add(struct quic_counts *q, uint64_t ns);

#endif
