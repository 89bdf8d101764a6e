// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Loads probe.bpf.o, prints "ready", and at SIGINT prints each program's
 * kernel-side run and recursion-miss counts and every non-zero count. */
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
	for (__u32 k = 0; k < 256; k++) {
		unsigned long long v = 0;

		if (!bpf_map_lookup_elem(fd, &k, &v) && v)
			printf("%u %llu\n", k, v);
	}
	bpf_object__close(obj);
	return 0;
}
