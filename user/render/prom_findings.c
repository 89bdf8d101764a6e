// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A finding about one endpoint is still one series per (pid, rule,
 * severity): the endpoint is not a label, so a process with many failing
 * endpoints stays bounded (at most rules x severities series per pid). */
#include <stdlib.h>
#include <string.h>
#include "doctor.h"
#include "prom_findings.h"
#include "report.h"

/* Whether f[i] repeats an earlier finding's (pid, rule, severity). */
static bool repeated(const struct finding *f, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (f[k].pid == f[i].pid && f[k].severity == f[i].severity &&
		    !strcmp(f[k].rule, f[i].rule))
			return true;
	return false;
}

size_t prom_findings(FILE *out, const struct agg *a, const struct run_info *run)
{
	struct finding *f = calloc(DR_MAX_FINDINGS, sizeof(*f));
	size_t n, series = 0;

	if (!f)
		return 0;
	n = doctor_findings(a, run, f, DR_MAX_FINDINGS, NULL, 0);
	for (size_t i = 0; i < n; i++) {
		if (repeated(f, i))
			continue;
		if (out && !series)
			fprintf(out, "# HELP connscope_finding A doctor finding that holds now "
				     "(rule ids: docs/doctor.md); pid 0: host-wide or a service "
				     "of several processes\n"
				     "# TYPE connscope_finding gauge\n");
		if (out)
			fprintf(out, "connscope_finding{pid=\"%d\",rule=\"%s\",severity=\"%s\"} 1\n",
				f[i].pid, f[i].rule, dr_severity_name(f[i].severity));
		series++;
	}
	free(f);
	return series;
}
