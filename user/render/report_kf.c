// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <string.h>
#include "json.h"
#include "report_kf.h"

/* text after label, word-wrapped to the 80 columns of the report. */
static void wrapped(FILE *out, const char *label, const char *text)
{
	int col = fprintf(out, "  %s", label);

	while (*text) {
		size_t n = strcspn(text, " ");

		if (col + 1 + (int)n > 79) {
			fputs("\n   ", out);
			col = 3;
		}
		col += fprintf(out, " %.*s", (int)n, text);
		text += n;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

void format_unavailable_text(FILE *out, const struct kf_plan *plan)
{
	const struct kf_figure_info *off[KF_FIG_MAX];
	size_t n = plan ? kf_unavailable(plan, off, KF_FIG_MAX) : 0;

	for (size_t i = 0; i < n; i++) {
		fprintf(out, "unavailable on this kernel: %s\n", off[i]->figure);
		wrapped(out, "lost:", off[i]->what);
		wrapped(out, "needs:", off[i]->needs);
	}
}

void json_unavailable(struct json *j, const struct kf_plan *plan)
{
	const struct kf_figure_info *off[KF_FIG_MAX];
	size_t n = plan ? kf_unavailable(plan, off, KF_FIG_MAX) : 0;

	json_key(j, "unavailable");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_kv_string(j, "figure", off[i]->figure);
		json_kv_string(j, "what", off[i]->what);
		json_kv_string(j, "needs", off[i]->needs);
		json_object_end(j);
	}
	json_array_end(j);
}
