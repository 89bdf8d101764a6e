// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* One line of JSON per interval (interval_ndjson.h). The figures are the
 * interval's own (the books' last row: BPF events) and the sockets held at
 * its end (the reconcile: sock_diag), the same as the live table's. */
#include <stdlib.h>
#include "interval_ndjson.h"
#include "json.h"
#include "tcp_state_names.h"

static int by_pid(const void *x, const void *y)
{
	const struct proc_books *a = *(const struct proc_books *const *)x;
	const struct proc_books *b = *(const struct proc_books *const *)y;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* Did p do anything in row r, or hold anything at its end? */
static bool row_busy(const struct interval_row *r)
{
	const struct proc_counters *d = &r->delta;

	if (d->opened || d->accepted || d->closed || d->tw_entered || d->connect_failed ||
	    d->resets)
		return true;
	for (int s = 0; s < CS_TCP_MAX_STATES; s++)
		if (r->truth.state[s])
			return true;
	return false;
}

void format_interval_ndjson(FILE *out, const struct agg *a, uint64_t events_lost)
{
	const struct proc_books **procs;
	struct proc_books *p;
	uint64_t t_ns = 0;
	size_t n = 0, cap = a->procs.count;
	struct json j;

	procs = calloc(cap ? cap : 1, sizeof(*procs));
	if (!procs)
		return;
	/* The interval just closed ends at the newest row of any process. */
	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);)
		if (p->nrows && p->rows[p->nrows - 1].t_ns > t_ns)
			t_ns = p->rows[p->nrows - 1].t_ns;
	for (size_t i = 0; n < cap && hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		const struct interval_row *r = p->nrows ? &p->rows[p->nrows - 1] : NULL;

		if (r && r->t_ns == t_ns && (p->target || row_busy(r)))
			procs[n++] = p;
	}
	qsort(procs, n, sizeof(*procs), by_pid);

	json_init(&j, out, false);
	json_object_begin(&j);
	json_kv_double(&j, "t_s", t_ns / 1e9, 3);
	json_kv_uint(&j, "events_lost", events_lost);
	json_key(&j, "processes");
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		const struct interval_row *r = &procs[i]->rows[procs[i]->nrows - 1];

		json_object_begin(&j);
		json_kv_int(&j, "pid", procs[i]->pid);
		json_kv_string(&j, "comm", procs[i]->comm);
		json_kv_bool(&j, "exited", procs[i]->exited);
		json_kv_uint(&j, "opened", r->delta.opened);
		json_kv_uint(&j, "accepted", r->delta.accepted);
		json_kv_uint(&j, "closed", r->delta.closed);
		json_kv_uint(&j, "connect_failed", r->delta.connect_failed);
		json_kv_uint(&j, "resets", r->delta.resets);
		json_kv_uint(&j, "time_wait_entered", r->delta.tw_entered);
		json_kv_uint(&j, "established_now", r->truth.state[CS_TCP_ESTABLISHED]);
		json_kv_uint(&j, "time_wait_now", r->truth.state[CS_TCP_TIME_WAIT]);
		json_kv_uint(&j, "orphans_now", r->truth.orphan);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	/* A newline and a flush: one whole line an interval. */
	json_finish(&j);
	free(procs);
}
