/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* kfeatures.c: which figures a kernel's BTF and probe results turn off,
 * and how the reports name them. Root-free: the BTF is built here in
 * memory, as the kernels in question have it (Debian 12's 6.1 has no
 * btf_trace_sock_send_length / _recv_length; 6.3 and later have them). */
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>

#include "unit.h"
#include "json.h"
#include "kfeatures.h"
#include "report_kf.h"

/* Tracepoints of the kernel lines docs/kernels.md's table names. */
static const char *const tp_6_1[] = {
	"inet_sock_set_state", "timer_start", "timer_cancel", "timer_expire_entry",
	"sched_process_fork", "sched_process_exec", "task_rename", "sched_process_exit", NULL,
};
static const char *const tp_6_3[] = {
	"inet_sock_set_state", "timer_start", "timer_cancel", "timer_expire_entry",
	"sched_process_fork", "sched_process_exec", "task_rename", "sched_process_exit",
	"sock_send_length", "sock_recv_length", NULL,
};

/* A BTF holding typedef btf_trace_NAME -> pointer -> func proto for each
 * name, the way the kernel declares its tracepoints. */
static struct btf *btf_with(const char *const *tps)
{
	struct btf *btf = btf__new_empty();
	int proto, ptr;
	char name[128];

	ASSERT_TRUE(btf != NULL, "btf__new_empty");
	proto = btf__add_func_proto(btf, 0);
	ASSERT_TRUE(proto > 0, "func proto");
	ptr = btf__add_ptr(btf, proto);
	ASSERT_TRUE(ptr > 0, "ptr");
	for (int i = 0; tps[i]; i++) {
		snprintf(name, sizeof(name), "btf_trace_%s", tps[i]);
		ASSERT_TRUE(btf__add_typedef(btf, name, ptr) > 0, "typedef");
	}
	return btf;
}

/* Probe results as the kernel probe fills them: BTF part from btf, the
 * rest (ring buffer, helpers, cgroup programs) there. */
static void plan_for(const char *const *tps, struct kf_plan *plan)
{
	struct btf *btf = btf_with(tps);
	struct kf_probe p = { .have = { [KF_HOOK_RINGBUF] = true, [KF_HOOK_CURRENT_TASK] = true,
					[KF_HOOK_TASK_HELPERS] = true, [KF_HOOK_SKB_CURRENT] = true,
					[KF_HOOK_CGROUP_SOCK] = true } };

	kf_probe_btf(btf, &p);
	btf__free(btf);
	kf_decide(&p, plan);
}

static size_t off_names(const struct kf_plan *plan, char *buf, size_t len)
{
	const struct kf_figure_info *off[KF_FIG_MAX];
	size_t n = kf_unavailable(plan, off, KF_FIG_MAX);

	buf[0] = 0;
	for (size_t i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? "," : "", off[i]->figure);
	return n;
}

TEST(debian_6_1_loses_connection_io_only)
{
	struct kf_plan plan;
	char names[256];

	plan_for(tp_6_1, &plan);
	ASSERT_TRUE(!kf_has(&plan, KF_HOOK_SOCK_LENGTH), "sock_length missing");
	ASSERT_TRUE(kf_has(&plan, KF_HOOK_SET_STATE_BTF), "set_state there");
	ASSERT_TRUE(kf_has(&plan, KF_HOOK_TW_TIMERS), "tw timers there");
	ASSERT_EQ(off_names(&plan, names, sizeof(names)), 1, "one figure off");
	ASSERT_STREQ(names, "connection_io", "the figure");
	ASSERT_TRUE(strstr(kf_figure(KF_FIG_CONNECTION_IO)->needs, "sock:sock_send_length") &&
			    strstr(kf_figure(KF_FIG_CONNECTION_IO)->needs, "Linux 6.3"),
		    "needs names the tracepoint and version");
}

TEST(linux_6_3_and_later_lose_nothing)
{
	struct kf_plan plan;
	char names[256];

	plan_for(tp_6_3, &plan);
	ASSERT_EQ(off_names(&plan, names, sizeof(names)), 0, "nothing off");
	for (int f = 0; f < KF_FIG_MAX; f++)
		ASSERT_TRUE(plan.on[f], kf_figure(f)->figure);
}

/* Debian's 6.12: every tracepoint, but cgroup_skb programs may not ask
 * for the current task. */
TEST(debian_6_12_loses_quic_send_owner_only)
{
	struct kf_plan plan;
	char names[256];

	plan_for(tp_6_3, &plan);
	plan.probe.have[KF_HOOK_SKB_CURRENT] = false;
	kf_decide(&plan.probe, &plan);
	ASSERT_EQ(off_names(&plan, names, sizeof(names)), 1, "one figure off");
	ASSERT_STREQ(names, "quic_send_owner", "the figure");
	ASSERT_TRUE(plan.on[KF_FIG_QUIC_WIRE], "the wire itself stays on");
}

TEST(half_a_hook_is_no_hook)
{
	static const char *const only_send[] = { "inet_sock_set_state", "sock_send_length", NULL };
	struct kf_plan plan;

	plan_for(only_send, &plan);
	ASSERT_TRUE(!kf_has(&plan, KF_HOOK_SOCK_LENGTH), "send without recv");
	ASSERT_TRUE(!plan.on[KF_FIG_CONNECTION_IO], "connection_io off");
}

TEST(no_tracepoint_btf_turns_off_every_tp_btf_figure)
{
	static const char *const none[] = { NULL };
	struct kf_plan plan;
	char names[256];

	plan_for(none, &plan);
	ASSERT_EQ(off_names(&plan, names, sizeof(names)), 6, "six figures off");
	ASSERT_STREQ(names, "connection_io,time_wait_timers,children,fd_exec,targets_join,targets_exit",
		     "in table order");
}

/* The tw timer figure needs the tp_btf set_state hook too: the timer
 * programs load only beside it. */
TEST(tw_timers_need_the_btf_set_state_hook)
{
	static const char *const timers_only[] = { "timer_start", "timer_cancel",
						   "timer_expire_entry", NULL };
	struct kf_plan plan;

	plan_for(timers_only, &plan);
	ASSERT_TRUE(kf_has(&plan, KF_HOOK_TW_TIMERS), "timers there");
	ASSERT_TRUE(!plan.on[KF_FIG_TW_TIMERS], "figure off without set_state");
}

TEST(a_struct_of_that_name_is_not_a_tracepoint)
{
	struct btf *btf = btf__new_empty();
	struct kf_probe p = {};

	ASSERT_TRUE(btf__add_struct(btf, "btf_trace_sock_send_length", 0) > 0, "struct");
	kf_probe_btf(btf, &p);
	btf__free(btf);
	ASSERT_TRUE(!p.have[KF_HOOK_SOCK_LENGTH], "only typedefs count");
}

TEST(probe_results_beyond_btf_decide_too)
{
	struct kf_plan plan;
	struct btf *btf = btf_with(tp_6_3);
	struct kf_probe p = { .have = { [KF_HOOK_RINGBUF] = true } };
	char names[256];

	kf_probe_btf(btf, &p);
	btf__free(btf);
	kf_decide(&p, &plan);
	ASSERT_EQ(off_names(&plan, names, sizeof(names)), 3, "three off");
	ASSERT_STREQ(names, "fd_tracking,quic_wire,quic_send_owner", "helpers and cgroup programs");
}

TEST(table_is_complete)
{
	for (int f = 0; f < KF_FIG_MAX; f++) {
		const struct kf_figure_info *i = kf_figure(f);

		ASSERT_TRUE(i->figure && *i->figure && i->what && *i->what && i->needs &&
				    *i->needs, "every figure says what it is and needs");
		ASSERT_TRUE(!strpbrk(i->figure, " \"\\,") && !strpbrk(i->needs, "\"\\"),
			    "names fit Prometheus labels and JSON as they are");
		/* Prometheus' needs="" is a token, not prose. */
		ASSERT_TRUE(i->needs_token && !strncmp(i->needs_token, "linux-", 6) &&
				    strlen(i->needs_token) <= 24 && !strpbrk(i->needs_token, " \"\\,"),
			    "needs token");
		for (int g = 0; g < f; g++)
			ASSERT_TRUE(strcmp(kf_figure(g)->figure, i->figure), "unique names");
	}
}

static char *render(void (*fn)(FILE *, const struct kf_plan *), const struct kf_plan *plan)
{
	char *data = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&data, &len);

	fn(f, plan);
	fclose(f);
	return data;
}

static void json_fn(FILE *f, const struct kf_plan *plan)
{
	struct json j;

	json_init(&j, f, false);
	json_object_begin(&j);
	json_unavailable(&j, plan);
	json_object_end(&j);
	json_finish(&j);
}

TEST(reports_name_figure_and_need)
{
	struct kf_plan plan;
	char *text, *js, want[1024];
	const struct kf_figure_info *io = kf_figure(KF_FIG_CONNECTION_IO);

	plan_for(tp_6_1, &plan);
	text = render(format_unavailable_text, &plan);
	ASSERT_STREQ(text,
		     "unavailable on this kernel: connection_io\n"
		     "  lost: bytes, requests and turns per connection and endpoint; connections held\n"
		     "    at start adopted at their first send\n"
		     "  needs: tracepoints sock:sock_send_length and sock:sock_recv_length (Linux\n"
		     "    6.3)\n", "text lines, 80 columns");
	js = render(json_fn, &plan);
	snprintf(want, sizeof(want),
		 "{\"unavailable\":[{\"figure\":\"connection_io\",\"what\":\"%s\",\"needs\":\"%s\"}]}",
		 io->what, io->needs);
	ASSERT_TRUE(!strncmp(js, want, strlen(want)), "json array");
	free(text);
	free(js);
	plan_for(tp_6_3, &plan);
	text = render(format_unavailable_text, &plan);
	ASSERT_STREQ(text, "", "nothing said when nothing is off");
	js = render(json_fn, &plan);
	ASSERT_TRUE(!strncmp(js, "{\"unavailable\":[]}", 18), "empty array");
	free(text);
	free(js);
}

UNIT_MAIN()
