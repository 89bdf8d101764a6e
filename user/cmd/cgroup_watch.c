// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Asked of the directory held open, not of the path: a rename is no
 * removal, and a directory made again at the path is a new cgroup (what
 * systemd does when a unit restarts, and container runtimes on restart)
 * that only a new open reaches. The kernel side filters on the cgroup
 * itself (a BPF cgroup array), so it is never the path that counts. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cgroup_watch.h"
#include "timeutil.h"
#include "text_wrap.h"

enum cgroup_change cgroup_watch_check(struct cgroup_watch *w)
{
	const struct target_sel *sel = w->sel;
	struct cgroup_facts *f = w->facts;
	double s;
	int r;

	if (!sel->cgroup_path || !targets_cgroup_removed(sel))
		return CGROUP_THERE;
	r = targets_cgroup_reopen(sel);
	s = (now_ns() - w->t0_ns) / 1e9;
	if (r > 0) {
		f->removed = false;
		f->recreated++;
		f->recreated_s = s;
		w->open_err = 0;
		if (w->follow)
			w->follow(w->ctx);
		text_err("connscope: cgroup %s was re-created after %.1f s (a restart: "
			 "removed and made again at that path); following the new one\n",
			 sel->cgroup_path, s);
		return CGROUP_NEW;
	}
	if (!f->removed) {
		f->removed = true;
		f->removed_s = s;
		text_err("connscope: cgroup %s was removed after %.1f s; no process joins "
			 "through it until one is made again at that path%s\n",
			 sel->cgroup_path, s, w->gone_note ? w->gone_note : "");
	}
	if (r < 0 && r != w->open_err) {
		w->open_err = r;
		text_err("connscope: cgroup %s is there again but cannot be opened: %s; "
			 "it is not followed while this lasts\n", sel->cgroup_path,
			 strerror(-r));
	}
	return CGROUP_GONE;
}
