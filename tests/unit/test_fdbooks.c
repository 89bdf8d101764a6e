// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* fd books driven by recorded fdtrack event sequences. */
#include <string.h>
#include "unit.h"
#include "fd_books.h"

#define PID 77
#define S 1000000000ULL

static struct fd_event fe(uint8_t type, int fd, int fd2, uint64_t site, uint64_t ts)
{
	struct fd_event e = { .type = type, .fd = fd, .fd2 = fd2, .site = site, .ts_ns = ts,
			      .tgid = PID, .tid = PID, .stack_id = -1, .how = FD_HOW_SOCKET };
	return e;
}

static void ev(struct fd_books *b, uint8_t type, int fd, int fd2, uint64_t site, uint64_t ts)
{
	struct fd_event e = fe(type, fd, fd2, site, ts);

	fd_books_event(b, &e);
}

static uint32_t open_count(struct fd_books *b)
{
	return fd_books_proc(b, PID)->fds.count;
}

TEST(open_close_pairs_dup2_and_range)
{
	struct fd_books b;
	struct fd_proc *p;

	fd_books_init(&b, 0, S);
	ev(&b, FD_EV_OPEN, 3, -1, 0xa, 1);
	ev(&b, FD_EV_OPEN, 4, 5, 0xb, 2);	/* pipe */
	ASSERT_EQ(open_count(&b), 3, "three_open");
	ev(&b, FD_EV_DUP2, 3, 4, 0xc, 3);	/* dup2(3, 4): 4 closed, then 4 again */
	p = fd_books_proc(&b, PID);
	ASSERT_EQ(open_count(&b), 3, "dup2_keeps_count");
	ASSERT_EQ(p->closed, 1, "dup2_closed_target");
	ev(&b, FD_EV_CLOSE_RANGE, 3, 0x7fffffff, 0, 4);
	ASSERT_EQ(open_count(&b), 0, "close_range_all");
	ASSERT_EQ(p->closed, 4, "closed_total");
	ASSERT_EQ(p->created, 4, "created_total");
	ASSERT_EQ(p->phantom, 0, "no_phantom");
	fd_books_free(&b);
}

TEST(reconcile_seeds_then_finds_phantoms_and_unseen)
{
	struct fd_books b;
	struct fd_proc *p;
	int32_t start[] = { 0, 1, 2, 7 };
	int32_t after_exec[] = { 0, 1, 2 };
	int32_t with_received[] = { 0, 1, 2, 9 };

	fd_books_init(&b, 0, S);
	fd_books_reconcile(&b, PID, start, 4, NULL, 1 * S, false);
	p = fd_books_proc(&b, PID);
	ASSERT_EQ(p->held_at_start, 4, "held_at_start");
	ev(&b, FD_EV_OPEN, 8, -1, 0xa, 2 * S);
	ev(&b, FD_EV_EXEC, -1, -1, 0, 3 * S);
	/* exec closed 7 and 8 (O_CLOEXEC): missing once is not enough ... */
	fd_books_reconcile(&b, PID, after_exec, 3, NULL, 4 * S, false);
	ASSERT_EQ(p->phantom, 0, "missing_once_waits");
	ASSERT_EQ(open_count(&b), 5, "still_in_books");
	/* ... twice is. And fd 9 arrived with SCM_RIGHTS: no event. */
	fd_books_reconcile(&b, PID, with_received, 4, NULL, 5 * S, false);
	ASSERT_EQ(p->phantom, 2, "phantoms_removed");
	ASSERT_EQ(p->unseen, 0, "unseen_once_waits");
	fd_books_reconcile(&b, PID, with_received, 4, NULL, 6 * S, true);
	ASSERT_EQ(p->unseen, 1, "unseen_counted");
	ASSERT_EQ(open_count(&b), 4, "books_equal_proc");
	fd_books_free(&b);
}

/* /proc read at t, events after t already in the books: no false counts. */
TEST(reconcile_race_with_events)
{
	struct fd_books b;
	struct fd_proc *p;
	int32_t listed[] = { 3 };

	fd_books_init(&b, 0, S);
	fd_books_reconcile(&b, PID, NULL, 0, NULL, 1 * S, false);
	ev(&b, FD_EV_OPEN, 3, -1, 0xa, 2 * S);
	/* listing at 3 s shows 3; then 3 closed and 4 opened at 3.5 s */
	ev(&b, FD_EV_CLOSE, 3, -1, 0, 3 * S + S / 2);
	ev(&b, FD_EV_OPEN, 4, -1, 0xa, 3 * S + S / 2);
	fd_books_reconcile(&b, PID, listed, 1, NULL, 3 * S, true);
	p = fd_books_proc(&b, PID);
	ASSERT_EQ(p->unseen, 0, "closed_after_listing_not_unseen");
	ASSERT_EQ(p->phantom, 0, "opened_after_listing_not_phantom");
	ASSERT_EQ(open_count(&b), 1, "only_fd4");
	fd_books_free(&b);
}

TEST(suspects_ranked_by_old_fds)
{
	struct fd_books b;
	struct fd_suspect sus[4];
	size_t n;

	fd_books_init(&b, 0, S);
	for (int i = 0; i < 5; i++)
		ev(&b, FD_EV_OPEN, 10 + i, -1, 0x1eaf, 1 * S);		/* leaked */
	for (int i = 0; i < 50; i++) {
		ev(&b, FD_EV_OPEN, 100, -1, 0xc105e, 2 * S + i);	/* opened and closed */
		ev(&b, FD_EV_CLOSE, 100, -1, 0, 2 * S + i + 1);
	}
	ev(&b, FD_EV_OPEN, 200, -1, 0xfe5, 19 * S);		/* young */
	n = fd_books_suspects(&b, PID, 20 * S, 10 * S, sus, 4);
	ASSERT_EQ(n, 1, "one_suspect_site");
	ASSERT_EQ(sus[0].site->site, 0x1eaf, "the_leaking_site");
	ASSERT_EQ(sus[0].old, 5, "old_count");
	ASSERT_EQ(sus[0].site->opened, 5, "opened");
	fd_books_free(&b);
}

TEST(slope_and_heatmaps)
{
	struct fd_books b;
	struct fd_proc *p;
	int32_t fds[64];
	const char *types[64];

	fd_books_init(&b, 0, S);
	for (int t = 0; t < 5; t++) {
		for (int i = 0; i < 10 + 3 * t; i++) {
			fds[i] = i;
			types[i] = i % 2 ? "tcp" : "pipe";
		}
		fd_books_reconcile(&b, PID, fds, 10 + 3 * t, types, (t + 1) * S, false);
	}
	p = fd_books_proc(&b, PID);
	ASSERT_EQ((long long)(fd_proc_slope(p) * 1000 + 0.5), 3000, "three_fds_per_s");
	ASSERT_EQ(heatmap_ncols(&p->hm_type), 5, "type_columns");
	ASSERT_STREQ(heatmap_label(&p->hm_type, 0), "pipe", "type_row");
	ASSERT_EQ(heatmap_cell(&p->hm_type, 0, 4), 11, "pipes_at_t4");
	ASSERT_STREQ(heatmap_label(&p->hm_age, 0), "<1 s", "age_row0");
	fd_books_free(&b);
}

UNIT_MAIN()

/* Listing-only books: what changed between two listings, nothing more. */
TEST(listing_only_mirrors_the_listings)
{
	struct fd_books b;
	struct fd_proc *p;
	int32_t start[] = { 0, 1, 2 };
	uint64_t start_ino[] = { 10, 11, 12 };
	/* 3 and 4 new; 2 closed and its number taken by another inode */
	int32_t later[] = { 0, 1, 2, 3, 4 };
	uint64_t later_ino[] = { 10, 11, 99, 13, 14 };
	int32_t last[] = { 0, 4 };
	uint64_t last_ino[] = { 10, 14 };
	const char *types[] = { "chr", "chr", "tcp", "pipe", "pipe" };

	fd_books_init(&b, 0, S);
	b.listing_only = true;
	fd_books_listing(&b, PID, start, start_ino, 3, NULL, 1 * S);
	p = fd_books_proc(&b, PID);
	ASSERT_EQ(p->held_at_start, 3, "held_at_start");
	ASSERT_EQ(p->appeared, 0, "none_appeared_at_start");
	fd_books_listing(&b, PID, later, later_ino, 5, types, 2 * S);
	ASSERT_EQ(p->appeared, 3, "two_new_one_reused");
	ASSERT_EQ(p->disappeared, 1, "reused_number_counts_gone");
	ASSERT_EQ(open_count(&b), 5, "open_eq_listing");
	ASSERT_EQ(((struct fd_open *)hmap_get(&p->fds, &later[3]))->created_ns, 2 * S,
		  "age_from_first_listing");
	fd_books_listing(&b, PID, last, last_ino, 2, NULL, 3 * S);
	ASSERT_EQ(p->disappeared, 4, "three_gone");
	ASSERT_EQ(p->appeared, 3, "none_new");
	ASSERT_EQ(open_count(&b), 2, "open_eq_last_listing");
	ASSERT_EQ(p->listings, 3, "listings");
	ASSERT_EQ(p->nsamples, 3, "one_sample_per_listing");
	ASSERT_EQ(p->created + p->closed + p->phantom + p->unseen, 0, "no_event_counts");
	fd_books_free(&b);
}

/* A listing taken before the process exec'd (connscope run lists COMMAND
 * while it waits at the gate, 6 fds, then Node idles at 19) is another
 * program's: the growth restarts at the new image's first listing, or
 * the doctor reads start-up as a leak. */
/* Where the count stood half way through the listings: a start-up's step
 * stands as high half way as at the end, a leak's does not; kept over a
 * run longer than FD_HIST listings by keeping every other one. */
TEST(mid_count_of_the_listings)
{
	struct fd_books b;
	struct fd_proc *p;
	int32_t fds[200];
	uint64_t inos[200];

	for (int i = 0; i < 200; i++) {
		fds[i] = i;
		inos[i] = 1000 + i;
	}
	fd_books_init(&b, 0, S);
	b.listing_only = true;
	/* 7 fds, then 33, then 30 for the rest of the run. */
	fd_books_listing(&b, PID, fds, inos, 7, NULL, 1 * S);
	p = fd_books_proc(&b, PID);
	ASSERT_EQ(fd_proc_mid_count(p), 7, "one_listing_its_own");
	fd_books_listing(&b, PID, fds, inos, 33, NULL, 2 * S);
	for (int t = 3; t <= 5; t++)
		fd_books_listing(&b, PID, fds, inos, 30, NULL, t * S);
	/* Half way is t = 3 s: 30, as high as at the end. */
	ASSERT_EQ(fd_proc_mid_count(p), 30, "ramp_stands_high_half_way");
	fd_books_free(&b);

	/* One more fd every other listing, 101 listings: half way at t = 51 s. */
	fd_books_init(&b, 0, S);
	b.listing_only = true;
	for (int t = 1; t <= 101; t++)
		fd_books_listing(&b, PID, fds, inos, 10 + t / 2, NULL, t * S);
	p = fd_books_proc(&b, PID);
	ASSERT_TRUE(p->nhist <= FD_HIST, "history_bounded");
	ASSERT_EQ(p->nsamples, 101, "every_listing_fitted");
	/* Kept every 4th by then (1, 5, ... 49): the latest at or before 51. */
	ASSERT_EQ(fd_proc_mid_count(p), 10 + 49 / 2, "leak_half_way");
	fd_books_free(&b);
}

TEST(exec_restarts_the_growth)
{
	struct fd_books b;
	struct fd_proc *p;
	int32_t few[6], many[19];
	uint64_t few_ino[6], many_ino[19];

	for (int i = 0; i < 19; i++) {
		many[i] = i;
		many_ino[i] = 100 + i;
		if (i < 6) {
			few[i] = i;
			few_ino[i] = 100 + i;
		}
	}
	fd_books_init(&b, 0, S);
	b.listing_only = true;
	fd_books_image(&b, PID, 0xA);
	fd_books_listing(&b, PID, few, few_ino, 6, NULL, 1 * S);
	p = fd_books_proc(&b, PID);
	fd_books_image(&b, PID, 0xB);
	for (int t = 2; t <= 5; t++) {
		fd_books_image(&b, PID, 0xB);
		fd_books_listing(&b, PID, many, many_ino, 19, NULL, t * S);
	}
	ASSERT_EQ(p->execs, 1, "one_exec_seen");
	ASSERT_EQ(p->first_count, 19, "growth_starts_at_the_new_image");
	ASSERT_EQ(p->nsamples, 4, "samples_of_the_new_image");
	ASSERT_TRUE(fd_proc_slope(p) == 0, "flat_after_exec");
	ASSERT_EQ(p->peak_count, 19, "peak_of_the_new_image");
	/* An image not read (0: /proc/PID/exe unreadable) changes nothing. */
	fd_books_image(&b, PID, 0);
	fd_books_listing(&b, PID, many, many_ino, 19, NULL, 6 * S);
	ASSERT_EQ(p->execs, 1, "unread_image_is_no_exec");
	ASSERT_EQ(p->nsamples, 5, "kept_sampling");
	fd_books_free(&b);
}
