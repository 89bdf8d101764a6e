// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfutil.h"

int bpf_percpu_sum(int map_fd, uint32_t nkeys, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;

	memset(out, 0, sizeof(*out) * nkeys);
	if (ncpu <= 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t k = 0; k < nkeys; k++) {
		if (bpf_map_lookup_elem(map_fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

/* The threads; the links are shared out among them. */
#define LINKS_THREADS 8

struct links_slice {
	struct bpf_link **links;
	int n, first, step;
};

static void *destroy_slice(void *arg)
{
	struct links_slice *s = arg;

	for (int i = s->first; i < s->n; i += s->step)
		bpf_link__destroy(s->links[i]);
	return NULL;
}

void bpf_links_destroy(struct bpf_link **links, int n)
{
	struct links_slice slice[LINKS_THREADS];
	pthread_t tid[LINKS_THREADS];
	int nthr = n < LINKS_THREADS ? n : LINKS_THREADS, started = 0;
	pthread_attr_t attr;
	sigset_t all, old;

	if (nthr > 1 && pthread_attr_init(&attr) == 0) {
		/* A detach needs little stack (the default is 8 MiB; a
		 * PTHREAD_STACK_MIN above 64 KiB keeps it); signals stay the
		 * main thread's (its handler sets the exit flag). */
		if (PTHREAD_STACK_MIN <= 64 * 1024)
			pthread_attr_setstacksize(&attr, 64 * 1024);
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		for (; started < nthr; started++) {
			slice[started] = (struct links_slice){ links, n, started, nthr };
			if (pthread_create(&tid[started], &attr, destroy_slice, &slice[started]))
				break;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	/* The slices no thread took, here. */
	for (int k = started; k < (started ? nthr : 1); k++) {
		struct links_slice s = { links, n, k, started ? nthr : 1 };

		destroy_slice(&s);
	}
	for (int k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
}
