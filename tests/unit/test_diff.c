// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* connscope diff's judgement of a change: by the figure's direction, not
 * by whether it went down (fewer requests is less work, not better). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "diff_report.h"

static struct diff_metric m(int better, double before, double after)
{
	return (struct diff_metric){ .name = "x", .unit = "", .better = better, .before = before,
				     .after = after, .has_before = true, .has_after = true };
}

TEST(judged_by_direction)
{
	struct diff_metric x;

	x = m(DIFF_NEUTRAL, 1469, 483);
	ASSERT_STREQ(diff_judge(&x), "", "fewer_requests_is_no_better");
	x = m(DIFF_LOWER_BETTER, 1, 4.0 / 483);
	ASSERT_STREQ(diff_judge(&x), "better", "fewer_connections_per_request");
	x = m(DIFF_LOWER_BETTER, 0.01, 0.75);
	ASSERT_STREQ(diff_judge(&x), "worse", "more_connections_per_request");
	x = m(DIFF_HIGHER_BETTER, 100, 50);
	ASSERT_STREQ(diff_judge(&x), "worse", "fewer_requests_per_s");
	x = m(DIFF_HIGHER_BETTER, 100, 150);
	ASSERT_STREQ(diff_judge(&x), "better", "more_requests_per_s");
	x = m(DIFF_LOWER_BETTER, 0, 5);
	ASSERT_STREQ(diff_judge(&x), "worse", "resets_from_none");
	x = m(DIFF_LOWER_BETTER, 7, 7);
	ASSERT_STREQ(diff_judge(&x), "", "same");
	x = m(DIFF_HIGHER_BETTER, 2996, 2994);
	ASSERT_STREQ(diff_judge(&x), "", "within_5_percent_is_noise");
	x = m(DIFF_HIGHER_BETTER, 2996, 2800);
	ASSERT_STREQ(diff_judge(&x), "worse", "beyond_5_percent");
	x = m(DIFF_LOWER_BETTER, 7, 7);
	x.has_after = false;
	ASSERT_STREQ(diff_judge(&x), "", "nothing_to_compare");
}

/* A figure a hair below zero, as fd_growth_per_s of a flat fd count is,
 * reads 0 in every output: `connscope diff` after the README's nginx fix
 * printed "fd_growth_per_s 0 -> -0". */
TEST(negative_zero_reads_zero)
{
	static struct diff_model dm;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	dm.before = (struct diff_run){ .path = "before.json", .command = "doctor", .elapsed_s = 10 };
	dm.after = dm.before;
	dm.nprocs = 1;
	strcpy(dm.procs[0].comm, "nginx");
	dm.procs[0].pid_before = dm.procs[0].pid_after = 4812;
	dm.procs[0].nbefore = dm.procs[0].nafter = 1;
	dm.procs[0].m.n = 1;
	dm.procs[0].m.m[0] = m(DIFF_LOWER_BETTER, 0, -0.0);
	dm.procs[0].m.m[0].name = "fd_growth_per_s";
	for (int out = 0; out < 3; out++) {
		f = open_memstream(&buf, &len);
		if (out == 0)
			format_diff_text(f, &dm);
		else if (out == 1)
			format_diff_json(f, &dm);
		else
			format_diff_html(f, &dm);
		fclose(f);
		if (strstr(buf, "-0"))
			fprintf(stderr, "# output %d:\n%s\n", out, buf);
		ASSERT_TRUE(strstr(buf, "-0") == NULL, "no_minus_zero");
		free(buf);
		buf = NULL;
	}
}

UNIT_MAIN()
