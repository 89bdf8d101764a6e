// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdlib.h>
#include <string.h>
#include "summary_view.h"

int64_t quic_kernel_snmp_get(const struct quic_kernel_snmp *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].name, name))
			return (int64_t)s->f[i].value;
	return -1;
}

void udp_view_free(struct udp_view *v)
{
	free(v->procs);
	memset(v, 0, sizeof(*v));
}

void summary_free(struct summary *sum)
{
	udp_view_free(&sum->udp);
	free(sum->procs);
	sum->procs = NULL;
	free(sum->ns);
	sum->ns = NULL;
}
