// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* connscope diff's judgement of a change: by the figure's direction, not
 * by whether it went down (fewer requests is less work, not better). */
#include <math.h>
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

UNIT_MAIN()
