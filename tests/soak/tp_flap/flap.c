// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* tp_flap's other tracer (run.sh): loads flap.bpf.o once, then attaches
 * and detaches its program in a loop until SIGTERM; prints the cycles.
 * Each attach and each detach is a tracepoint_probe_register/unregister:
 * a new probe array published with rcu_assign_pointer
 * (kernel/tracepoint.c, tracepoint_add_func / tracepoint_remove_func). */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t exiting;

static void on_term(int sig)
{
	(void)sig;
	exiting = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	unsigned long cycles = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: flap FLAP.BPF.O\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "flap: cannot load %s\n", argv[1]);
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "flap_state");
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	while (prog && !exiting) {
		struct bpf_link *link = bpf_program__attach(prog);

		if (!link) {
			fprintf(stderr, "flap: attach failed\n");
			break;
		}
		bpf_link__destroy(link);
		cycles++;
	}
	printf("%lu\n", cycles);
	bpf_object__close(obj);
	return 0;
}
