// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libngtcp2's connection lifecycle, from uprobes on its exported API: the
 * library knows what the wire cannot show, a handshake that failed inside
 * encrypted packets, the end of a server's connection, and a deliberate
 * migration (which switches connection IDs, so no packet links the two
 * paths). User space attaches these to each libngtcp2 file a traced
 * process maps (and, following children, to the system's), for every
 * process; the tgid filter is here.
 *
 *   int ngtcp2_conn_client_new_versioned(ngtcp2_conn **pconn,
 *           const ngtcp2_cid *dcid, const ngtcp2_cid *scid, ...);
 *   int ngtcp2_conn_server_new_versioned(...same first three...);
 *   void ngtcp2_conn_handshake_completed(ngtcp2_conn *conn);
 *   void ngtcp2_conn_del(ngtcp2_conn *conn);
 *   int ngtcp2_conn_initiate_migration(ngtcp2_conn *conn, ...);
 *   int ngtcp2_conn_initiate_immediate_migration(ngtcp2_conn *conn, ...);
 *
 * The new connection exists only once the constructor returns, through
 * its out-parameter: the entry probe keeps pconn per thread and the return
 * probe reads *pconn. Debian 12's libbpf has no BPF_UPROBE: BPF_KPROBE
 * reads the same registers. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "quic.h"
#include "agent.bpf.h"

/* ngtcp2_cid (ngtcp2.h): the library's own layout, stable across sonames. */
struct ng_cid {
	__u64 datalen;		/* size_t */
	__u8 data[QUIC_MAX_CID_LEN];
};

const volatile bool filter_tgid = true;		/* false: every process */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} lib_events SEC(".maps");

/* Traced processes: user space makes this the tcpstate unit's own map
 * (bpf_map__reuse_fd), so children it follows are traced here too. The
 * probes are on the library file, for every process that maps it. */
AGENT_TARGETS_MAP(ng_targets);

/* Calls in flight: thread -> what the return probe needs. LRU: an entry
 * whose return probe never ran (a missed uretprobe, a thread killed in
 * the call) is evicted by new calls instead of holding its slot for good,
 * which at 4,096 leaks would have lost every new connection. */
struct ng_call {
	__u64 arg0;		/* pconn for the constructors, conn for migration */
	struct ng_cid dcid;
	struct ng_cid scid;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct ng_call);
} ng_calls SEC(".maps");

AGENT_STATS_MAP(ng_stats, QN_STAT_MAX);

static __always_inline void stat_inc(__u32 idx)
{
	agent_stat_inc(&ng_stats, idx);
}

static __always_inline bool traced(void)
{
	return agent_traced(&ng_targets, filter_tgid, agent_current_tgid());
}

static __always_inline struct quic_lib_event *reserve(__u8 type, __u64 conn)
{
	struct quic_lib_event *e;

	if (!traced())
		return NULL;
	e = bpf_ringbuf_reserve(&lib_events, sizeof(*e), 0);

	if (!e) {
		stat_inc(QN_STAT_RB_LOST);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->tgid = agent_current_tgid();
	e->type = type;
	e->conn = conn;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

static __always_inline void submit(struct quic_lib_event *e)
{
	bpf_ringbuf_submit(e, 0);
	stat_inc(QN_STAT_EVENTS);
}

static __always_inline int new_enter(void *pconn, const void *dcid, const void *scid)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ng_call c = { .arg0 = (__u64)pconn };

	if (!traced())
		return 0;
	if (dcid)
		bpf_probe_read_user(&c.dcid, sizeof(c.dcid), dcid);
	if (scid)
		bpf_probe_read_user(&c.scid, sizeof(c.scid), scid);
	if (bpf_map_update_elem(&ng_calls, &id, &c, BPF_ANY))
		stat_inc(QN_STAT_CALLS_FULL);
	return 0;
}

static __always_inline void copy_cid(__u8 *len, __u8 *dst, const struct ng_cid *c)
{
	__u64 n = c->datalen;

	*len = n > QUIC_MAX_CID_LEN ? QUIC_MAX_CID_LEN : (__u8)n;
	__builtin_memcpy(dst, c->data, QUIC_MAX_CID_LEN);
}

static __always_inline int new_exit(long rc, __u8 role)
{
	__u64 id = bpf_get_current_pid_tgid(), conn = 0;
	struct quic_lib_event *e;
	struct ng_call *c;

	c = bpf_map_lookup_elem(&ng_calls, &id);
	if (!c)
		return 0;
	if (rc == 0 && c->arg0)
		bpf_probe_read_user(&conn, sizeof(conn), (void *)c->arg0);
	e = reserve(rc == 0 ? QN_EV_NEW : QN_EV_NEW_FAIL, conn);
	if (e) {
		e->role = role;
		e->rc = (__s32)rc;
		copy_cid(&e->scid_len, e->scid, &c->scid);
		copy_cid(&e->dcid_len, e->dcid, &c->dcid);
		submit(e);
	}
	bpf_map_delete_elem(&ng_calls, &id);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(ng_client_new, void *pconn, const void *dcid, const void *scid)
{
	return new_enter(pconn, dcid, scid);
}

SEC("uretprobe")
int BPF_KRETPROBE(ng_client_new_ret, long rc)
{
	return new_exit(rc, QN_ROLE_CLIENT);
}

SEC("uprobe")
int BPF_KPROBE(ng_server_new, void *pconn, const void *dcid, const void *scid)
{
	return new_enter(pconn, dcid, scid);
}

SEC("uretprobe")
int BPF_KRETPROBE(ng_server_new_ret, long rc)
{
	return new_exit(rc, QN_ROLE_SERVER);
}

SEC("uprobe")
int BPF_KPROBE(ng_handshake_completed, void *conn)
{
	struct quic_lib_event *e = reserve(QN_EV_HANDSHAKE, (__u64)conn);

	if (e)
		submit(e);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(ng_conn_del, void *conn)
{
	struct quic_lib_event *e;

	if (!conn)
		return 0;
	e = reserve(QN_EV_DEL, (__u64)conn);
	if (e)
		submit(e);
	return 0;
}

static __always_inline int migrate_enter(void *conn)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ng_call c = { .arg0 = (__u64)conn };

	if (!traced())
		return 0;
	if (bpf_map_update_elem(&ng_calls, &id, &c, BPF_ANY))
		stat_inc(QN_STAT_CALLS_FULL);
	return 0;
}

static __always_inline int migrate_exit(long rc)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct quic_lib_event *e;
	struct ng_call *c;

	c = bpf_map_lookup_elem(&ng_calls, &id);
	if (!c)
		return 0;
	if (rc == 0) {
		e = reserve(QN_EV_MIGRATE, c->arg0);
		if (e)
			submit(e);
	}
	bpf_map_delete_elem(&ng_calls, &id);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(ng_migrate, void *conn)
{
	return migrate_enter(conn);
}

SEC("uretprobe")
int BPF_KRETPROBE(ng_migrate_ret, long rc)
{
	return migrate_exit(rc);
}

SEC("uprobe")
int BPF_KPROBE(ng_migrate_now, void *conn)
{
	return migrate_enter(conn);
}

SEC("uretprobe")
int BPF_KRETPROBE(ng_migrate_now_ret, long rc)
{
	return migrate_exit(rc);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
