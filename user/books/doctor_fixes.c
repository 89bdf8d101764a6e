// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The doctor's fixes in the diagnosed software's words (doctor_fixes.h):
 * each side's setting from software.c, the generic fix last. The rules
 * that say them are in doctor_rules.c. */
#include <stdio.h>
#include <string.h>
#include "doctor_fixes.h"

/* The kind of the traced process listening on port, SW_UNKNOWN if none. */
static enum sw_kind server_on(const struct dr_facts *f, uint16_t port)
{
	for (size_t i = 0; port && i < f->nprocs; i++)
		for (size_t k = 0; k < f->procs[i].neps; k++)
			if (f->procs[i].eps[k].listen &&
			    sw_label_port(f->procs[i].eps[k].label) == port)
				return f->procs[i].software;
	return SW_UNKNOWN;
}

/* A traced client of the listener on port that opens a connection for
 * (nearly) every request, and its endpoint; NULL if none. */
static const struct dr_proc *client_of(const struct dr_facts *f, uint16_t port,
				       const struct dr_endpoint **ep)
{
	for (size_t i = 0; port && i < f->nprocs; i++)
		for (size_t k = 0; k < f->procs[i].neps; k++) {
			const struct dr_endpoint *e = &f->procs[i].eps[k];

			if (!e->listen && e->opened && sw_label_port(e->label) == port &&
			    e->requests < DR_CHURN_MAX_RPC * e->opened) {
				*ep = e;
				return &f->procs[i];
			}
		}
	return NULL;
}

/* The separator after one software's part: "; ", or a space where the
 * part ends in its configuration's own ';' (nginx: `Connection "";`),
 * so the text never reads `"";;`. */
static const char *part_end(const char *part)
{
	size_t n = strlen(part);

	return n && part[n - 1] == ';' ? " " : "; ";
}

/* "client (pgbench): ...; server (PostgreSQL): ...; in general: GENERIC":
 * each side's fix in its software's words where known, the generic one
 * last, so a user of any software finds the setting to change. */
void dr_fix_for_pool(const struct dr_facts *f, const struct dr_proc *client,
		     const char *label, unsigned pool, const char *generic, char *buf,
			 size_t len)
{
	uint16_t port = sw_label_port(label);
	enum sw_kind server = server_on(f, port);
	enum sw_proto proto = server != SW_UNKNOWN ? sw_proto_of_server(server) :
			      sw_proto_of_port(port);
	char cli[1024], srv[400];
	size_t o = 0;

	sw_client_fix(client->software, proto, pool, cli, sizeof(cli));
	sw_server_fix(server, proto, srv, sizeof(srv));
	buf[0] = 0;
	if (cli[0])
		o += snprintf(buf + o, len - o, "client (%s): %s%s", sw_name(client->software),
			      cli, part_end(cli));
	if (srv[0] && o < len)
		o += snprintf(buf + o, len - o, "server (%s): %s%s",
			      server != SW_UNKNOWN ? sw_name(server) : "the server", srv,
			      part_end(srv));
	if (o < len)
		snprintf(buf + o, len - o, "%s%s", o ? "in general: " : "", generic);
}

/* ep: the endpoint the finding names (a remote one for a client). */
void dr_tw_fix(const struct dr_facts *f, const struct dr_proc *p,
	       const struct dr_endpoint *ep, bool client, char *buf, size_t len)
{
	char range[64] = "", generic[640], own[400];
	const struct dr_endpoint *cep = NULL;
	const struct dr_proc *cp;
	size_t o = 0;

	if (f->lim_known && f->lim.port_hi)
		snprintf(range, sizeof(range), " (now %u-%u)", f->lim.port_lo, f->lim.port_hi);
	if (client) {
		snprintf(generic, sizeof(generic),
		    "reuse connections instead of closing one per request (keep-alive and a pool "
		    "as large as the concurrency); or let the server close first so TIME_WAIT "
		    "stays on its side; widen net.ipv4.ip_local_port_range%s; "
		    "net.ipv4.tcp_tw_reuse = 1 helps only outgoing connections, needs TCP "
		    "timestamps on both ends (net.ipv4.tcp_timestamps = 1) and lets a port be "
		    "reused 1 s after its TIME_WAIT began, so set it only on the client and only "
		    "with timestamps on", range);
		dr_fix_for_pool(f, p, ep->label, ep->live_peak ? ep->live_peak : 1, generic, buf,
			     len);
		return;
	}
	snprintf(generic, sizeof(generic),
	    "keep connections open (keep-alive) or let the clients close first, so "
	    "TIME_WAIT (60 s per connection) is spread over the clients instead of piling "
	    "up here; TIME_WAIT on a server costs memory, not ports%s",
	    f->lim_known && f->lim.max_tw_buckets ?
	    " (bounded by net.ipv4.tcp_max_tw_buckets)" : "");
	sw_server_fix(p->software, sw_proto_of_port(sw_label_port(ep->label)), own,
		      sizeof(own));
	/* A server closes first when its clients ask it to (HTTP/1.0,
	 * Connection: close): then the fix is the client's, named first. The
	 * kernel sees the same close when the server refuses keep-alive
	 * (Apache's KeepAlive Off), so both sides are named, the server's
	 * after. */
	cp = client_of(f, sw_label_port(ep->label), &cep);
	if (cp) {
		char cli[1024];

		sw_client_fix(cp->software, sw_proto_of_server(p->software),
			      cep->live_peak ? cep->live_peak : 1, cli, sizeof(cli));
		if (cli[0])
			o = snprintf(buf, len, "its clients carry %.1f requests a connection; "
				     "where they ask the server to close (HTTP/1.0 without "
				     "keep-alive, Connection: close) the fix is theirs: "
				     "client (%s): %s%s",
				     (double)cep->requests / cep->opened,
				     sw_name(cp->software), cli, part_end(cli));
	}
	if (own[0] && o < len)
		snprintf(buf + o, len - o, "server (%s): %s%sin general: %s",
			 p->software ? sw_name(p->software) : "this server", own, part_end(own),
			 generic);
	else if (o < len)
		snprintf(buf + o, len - o, "%s%s", o ? "in general: " : "", generic);
}
