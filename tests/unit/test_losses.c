// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The books' own losses (losses_collect_books) in the outputs: the
 * census cut's connections not noted (out of memory) were counted and
 * shown nowhere; now in agent.losses, the text report's losses lines and
 * its first line, like every other kind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "json.h"
#include "losses.h"
#include "report_losses.h"
#include "tcp_books.h"
#include "quic_books.h"
#include "tcpstate.h"

/* What one formatter writes for l, as a string (freed by the caller). */
static char *render(const struct agent_losses *l, int which)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j;

	if (!f)
		return NULL;
	if (which == 0) {
		format_losses_text(f, l);
	} else if (which == 1) {
		format_losses_headline(f, "", l);
	} else {
		json_init(&j, f, false);
		json_object_begin(&j);
		json_losses(&j, l);
		json_object_end(&j);
	}
	fclose(f);
	return buf;
}

static bool has(const struct agent_losses *l, int which, const char *want)
{
	char *got = render(l, which);
	bool yes = got && strstr(got, want);

	if (!yes)
		fprintf(stderr, "# wanted \"%s\" in: %s\n", want, got ? got : "(null)");
	free(got);
	return yes;
}

TEST(census_cut_not_noted_shown)
{
	struct agent_losses l = { 0 };
	struct agg a;

	agg_init(&a, 0);
	losses_collect_books(&l, &a);
	ASSERT_TRUE(has(&l, 0, "losses: none"), "none_in_text");
	ASSERT_TRUE(has(&l, 2, "\"census_cut_not_noted\":0"), "zero_in_json");
	/* Three the cut could not note (its arrays' realloc failed). */
	a.cut.dropped = 3;
	losses_collect_books(&l, &a);
	ASSERT_EQ(losses_total(&l), 3, "in_the_total");
	ASSERT_TRUE(has(&l, 0, "census_cut_not_noted 3  connections begun or ended during a "
			       "census not noted"), "text_line");
	ASSERT_TRUE(has(&l, 1, "LOST: 3 connections begun or ended"), "first_line");
	ASSERT_TRUE(has(&l, 2, "\"total\":3"), "json_total");
	ASSERT_TRUE(has(&l, 2, "\"census_cut_not_noted\":3"), "json_key");
	agg_free(&a);
}

/* The reuse sweep's queue of open/close changes could not grow (out of
 * memory): open-at-once figures may be off, and the report says so. */
TEST(open_at_once_not_noted_shown)
{
	struct agent_losses l = { 0 };
	struct agg a;

	agg_init(&a, 0);
	a.live_dropped = 2;
	losses_collect_books(&l, &a);
	ASSERT_EQ(losses_total(&l), 2, "in_the_total");
	ASSERT_TRUE(has(&l, 0, "open_at_once_not_noted 2  "), "text_line");
	ASSERT_TRUE(has(&l, 2, "\"open_at_once_not_noted\":2"), "json_key");
	agg_free(&a);
}

/* The QUIC wire source off (no cgroup2 under `ip netns exec`, or no
 * CAP_NET_ADMIN): one source not attached, as before, and known to be
 * QUIC's, so the first line says the TCP and fd counts are whole (it said
 * "counts below are low" of every count). An fd program that failed as
 * well makes every count suspect again. */
TEST(quic_wire_off_is_quic_only)
{
	uint64_t tcp[CS_STAT_MAX] = { 0 };
	struct quic_run q = { .wire_on = false, .wire_error = "no cgroup v2 hierarchy" };
	struct agent_losses l;

	losses_collect(&l, tcp, 0, NULL, 0, 0, &q);
	ASSERT_EQ(l.n[LOSS_ATTACH_FAILED], 1, "attach_failed_counted");
	ASSERT_EQ(l.quic_attach_failed, 1, "known_quic");
	ASSERT_TRUE(losses_quic_only(&l), "quic_only");
	ASSERT_TRUE(has(&l, 1, "; QUIC counts below are low, TCP and fd"),
		    "headline_scoped");
	ASSERT_TRUE(has(&l, 2, "\"attach_failed\":1"), "json_unchanged");
	losses_collect(&l, tcp, 0, NULL, 0, 1, &q);
	ASSERT_EQ(l.n[LOSS_ATTACH_FAILED], 2, "fd_and_quic");
	ASSERT_TRUE(!losses_quic_only(&l), "not_quic_only");
	ASSERT_TRUE(has(&l, 1, "; counts below are low"), "headline_all");
	tcp[CS_STAT_RB_LOST] = 5;
	losses_collect(&l, tcp, 0, NULL, 0, 0, &q);
	ASSERT_TRUE(!losses_quic_only(&l), "tcp_loss_not_quic_only");
}

/* The headline's words are true where it is read: "counts below" only
 * where a report follows it (the text report, the doctor's, the HTML
 * page). attach's warning on stderr comes after its report (the text one
 * or the -j JSON: nothing below it), and the exporter's when it stops has
 * no report at all: both said "counts below are low (see agent: losses)". */
TEST(headline_says_where_the_counts_are)
{
	struct agent_losses l = { 0 };
	char buf[512];

	l.n[LOSS_TCP_EVENTS] = 12;
	ASSERT_STREQ(losses_headline(buf, sizeof(buf), &l, LOSSES_BELOW, "agent: losses"),
		     "LOST: 12 TCP events (ring buffer full); counts below are low (see "
		     "agent: losses)", "below_a_report");
	ASSERT_STREQ(losses_headline(buf, sizeof(buf), &l, LOSSES_IN_REPORT, "agent.losses"),
		     "LOST: 12 TCP events (ring buffer full); the counts in the report are low "
		     "(see agent.losses)", "after_the_report");
	ASSERT_STREQ(losses_headline(buf, sizeof(buf), &l, LOSSES_EXPORTED,
				     "connscope_agent_losses_total"),
		     "LOST: 12 TCP events (ring buffer full); the exported counts are low (see "
		     "connscope_agent_losses_total)", "exported");
	/* A QUIC source alone: which counts, in each place's words. */
	memset(&l, 0, sizeof(l));
	l.n[LOSS_ATTACH_FAILED] = 1;
	l.quic_attach_failed = 1;
	ASSERT_STREQ(losses_headline(buf, sizeof(buf), &l, LOSSES_BELOW, "Run: losses"),
		     "LOST: 1 program or source not attached; QUIC counts below are low, TCP "
		     "and fd counts are not (see Run: losses)", "quic_below");
	ASSERT_STREQ(losses_headline(buf, sizeof(buf), &l, LOSSES_IN_REPORT, "agent: losses"),
		     "LOST: 1 program or source not attached; the QUIC counts in the report "
		     "are low, its TCP and fd counts are not (see agent: losses)",
		     "quic_after_the_report");
	ASSERT_STREQ(losses_headline(buf, sizeof(buf), &l, LOSSES_EXPORTED,
				     "connscope_agent_losses_total"),
		     "LOST: 1 program or source not attached; the exported QUIC counts are "
		     "low, the TCP and fd counts are not (see connscope_agent_losses_total)",
		     "quic_exported");
	/* Nothing lost: nothing said, wherever. */
	memset(&l, 0, sizeof(l));
	ASSERT_STREQ(losses_headline(buf, sizeof(buf), &l, LOSSES_IN_REPORT, "agent.losses"),
		     "", "nothing_lost");
}

UNIT_MAIN()
