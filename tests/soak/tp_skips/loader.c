// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Loads probe.bpf.o (or tasks.bpf.o), prints "ready", and at SIGINT prints
 * each program's recursion-miss count and every non-zero count ("seen":
 * KEY COUNT; "tasks": "task PID OUT IN"). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: loader probe.bpf.o\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "loader: cannot load %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(prog, obj)
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "loader: cannot attach %s\n", bpf_program__name(prog));
			return 1;
		}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len);
		printf("%s recursion_misses %llu\n", bpf_program__name(prog),
		       (unsigned long long)info.recursion_misses);
	}
	fd = bpf_object__find_map_fd_by_name(obj, "seen");
	for (__u32 k = 0; fd >= 0 && k < 256; k++) {
		unsigned long long v = 0;

		if (!bpf_map_lookup_elem(fd, &k, &v) && v)
			printf("%u %llu\n", k, v);
	}
	fd = bpf_object__find_map_fd_by_name(obj, "tasks");
	if (fd >= 0) {
		__u32 k, next, *prev = NULL;
		unsigned long long v[2];

		while (!bpf_map_get_next_key(fd, prev, &next)) {
			k = next;
			if (!bpf_map_lookup_elem(fd, &k, v))
				printf("task %u %llu %llu\n", k, v[0], v[1]);
			prev = &k;
		}
	}
	bpf_object__close(obj);
	return 0;
}
