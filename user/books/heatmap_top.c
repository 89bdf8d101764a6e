// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <string.h>
#include "heatmap_top.h"

int heatmap_top(const struct heatmap *src, struct heatmap *dst, int n)
{
	bool keep[HEATMAP_MAX_ROWS] = { false };
	int err, other = -1;

	err = heatmap_init(dst, src->kind, src->title, src->unit, src->t0_ns, src->bucket_ns);
	if (err)
		return err;
	dst->sampled = src->sampled;
	/* Pick the n largest totals (n is small: selection by repeated max). */
	for (int k = 0; k < n && k < src->nrows; k++) {
		int best = -1;

		for (int r = 0; r < src->nrows; r++) {
			if (keep[r] || !strcmp(heatmap_label(src, r), HEATMAP_OTHER_LABEL))
				continue;
			if (best < 0 || heatmap_row_total(src, r) > heatmap_row_total(src, best))
				best = r;
		}
		if (best < 0)
			break;
		keep[best] = true;
	}
	for (int r = 0; r < src->nrows; r++) {
		int row;

		if (keep[r]) {
			row = heatmap_row(dst, heatmap_label(src, r));
		} else {
			if (other < 0)
				other = -2;	/* created on first use, after the kept rows */
			continue;
		}
		for (size_t c = 0; c < heatmap_ncols(src); c++) {
			uint64_t v = heatmap_cell(src, r, c);

			if (v && (err = heatmap_add(dst, row, src->t0_ns + c * src->bucket_ns, v)))
				return err;
		}
	}
	if (other == -2) {
		other = heatmap_row(dst, HEATMAP_OTHER_LABEL);
		for (int r = 0; r < src->nrows; r++) {
			if (keep[r])
				continue;
			for (size_t c = 0; c < heatmap_ncols(src); c++) {
				uint64_t v = heatmap_cell(src, r, c);

				if (v && (err = heatmap_add(dst, other, src->t0_ns + c * src->bucket_ns, v)))
					return err;
			}
		}
	}
	if (heatmap_ncols(src))
		heatmap_extend(dst, src->t0_ns + heatmap_ncols(src) * src->bucket_ns);
	return 0;
}
