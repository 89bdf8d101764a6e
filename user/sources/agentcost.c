// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The BPF programs counted are connscope's own: the bpf-prog fds of this
 * process, their run_time_ns / run_cnt from bpf_obj_get_info_by_fd (set
 * while run-time stats are on), summed over the intervals they were on. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "agentcost.h"
#include "procfs.h"
#include "timeutil.h"

/* The kernel keeps 15 characters of a program's name (BPF_OBJ_NAME_LEN
 * 16), so two programs may read alike; the whole name is its function's,
 * in the program's BTF (its first func_info record), where bpftool finds
 * it too. Left as the kernel's when the program has no BTF. */
static void full_name(int fd, const struct bpf_prog_info *info, char *buf, size_t len)
{
	struct bpf_func_info finfo;
	struct bpf_prog_info fi;
	__u32 fl = sizeof(fi);
	const struct btf_type *t;
	const char *name;
	struct btf *btf;

	snprintf(buf, len, "%s", info->name);
	if (strlen(info->name) < BPF_OBJ_NAME_LEN - 1 || !info->btf_id || !info->nr_func_info)
		return;
	memset(&fi, 0, sizeof(fi));
	memset(&finfo, 0, sizeof(finfo));
	fi.nr_func_info = 1;
	fi.func_info_rec_size = sizeof(finfo);
	fi.func_info = (__u64)(unsigned long)&finfo;
	if (bpf_obj_get_info_by_fd(fd, &fi, &fl))
		return;
	btf = btf__load_from_kernel_by_id(info->btf_id);
	if (libbpf_get_error(btf))
		return;
	t = btf__type_by_id(btf, finfo.type_id);
	name = t ? btf__name_by_offset(btf, t->name_off) : NULL;
	if (name && *name)
		snprintf(buf, len, "%s", name);
	btf__free(btf);
}

/* A name found before, by program id: the BTF is read once a program. */
static const char *known_name(const struct agentcost *c, uint32_t id)
{
	for (size_t i = 0; c && i < c->nacc; i++)
		if (c->acc[i].id == id)
			return c->acc[i].name;
	for (size_t i = 0; c && i < c->nprog0; i++)
		if (c->prog0[i].id == id)
			return c->prog0[i].name;
	return NULL;
}

/* Each of this process's BPF programs, once (by id), with its name and its
 * run-time stats as the kernel has them now. */
static size_t bpf_programs(const struct agentcost *c, struct prog_cost *out, size_t max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		char link[64], path[300];
		ssize_t l;
		size_t k;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		l = readlink(path, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = 0;
		if (strcmp(link, "anon_inode:bpf-prog"))
			continue;
		fd = atoi(de->d_name);
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		for (k = 0; k < n && out[k].id != info.id; k++)
			;
		if (k < n)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		if (known_name(c, info.id))
			snprintf(out[n].name, sizeof(out[n].name), "%s", known_name(c, info.id));
		else
			full_name(fd, &info, out[n].name, sizeof(out[n].name));
		out[n].id = info.id;
		out[n].run_ns = info.run_time_ns;
		out[n].runs = info.run_cnt;
		n++;
	}
	closedir(d);
	return n;
}

static int by_run_ns(const void *a, const void *b)
{
	const struct prog_cost *x = a, *y = b;

	return x->run_ns < y->run_ns ? 1 : x->run_ns > y->run_ns ? -1 : strcmp(x->name, y->name);
}

static double self_cpu(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* utime + stime of pid in clock ticks (fields 14 and 15 of its stat). */
static int proc_ticks(pid_t pid, uint64_t *ticks)
{
	char buf[1024], *p;
	unsigned long long ut, st;
	int err = procfs_read_pid_file(pid, "stat", buf, sizeof(buf));

	if (err < 0)
		return err;
	/* comm may hold spaces and parentheses: fields count from the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return -EPROTO;
	*ticks = ut + st;
	return 0;
}

static int stats_on(struct agentcost *c, uint64_t conns)
{
	struct prog_cost now[AGENT_COST_MAX_PROGS];

	c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (c->stats_fd < 0) {
		int err = -errno;

		c->stats_fd = -1;
		return err;
	}
	/* Into a copy: the names known come from c->prog0 itself. */
	c->nprog0 = bpf_programs(c, now, AGENT_COST_MAX_PROGS);
	memcpy(c->prog0, now, c->nprog0 * sizeof(now[0]));
	c->on_ns = now_ns();
	c->conns0 = conns;
	return 0;
}

/* The programs' runs since prog0 added to acc, and prog0 moved up to now. */
static void stats_sum(struct agentcost *c, uint64_t conns)
{
	struct prog_cost now[AGENT_COST_MAX_PROGS];
	size_t n = bpf_programs(c, now, AGENT_COST_MAX_PROGS);
	uint64_t t = now_ns();

	for (size_t i = 0; i < n; i++) {
		struct prog_cost d = now[i];
		size_t k;

		for (k = 0; k < c->nprog0; k++) {
			if (c->prog0[k].id != d.id)
				continue;
			d.run_ns = d.run_ns > c->prog0[k].run_ns ? d.run_ns - c->prog0[k].run_ns : 0;
			d.runs = d.runs > c->prog0[k].runs ? d.runs - c->prog0[k].runs : 0;
			break;
		}
		for (k = 0; k < c->nacc && c->acc[k].id != d.id; k++)
			;
		if (k == c->nacc) {
			if (c->nacc == AGENT_COST_MAX_PROGS)
				continue;
			c->acc[c->nacc] = d;
			c->acc[c->nacc].run_ns = c->acc[c->nacc].runs = 0;
			c->nacc++;
		}
		c->acc[k].run_ns += d.run_ns;
		c->acc[k].runs += d.runs;
	}
	memcpy(c->prog0, now, n * sizeof(now[0]));
	c->nprog0 = n;
	c->stats_s += (t - c->on_ns) / 1e9;
	c->on_ns = t;
	c->stats_conns += conns - c->conns0;
	c->conns0 = conns;
}

int agentcost_start(struct agentcost *c, const pid_t *pids, size_t n, uint32_t every,
		    uint64_t tick_ns, uint64_t conns)
{
	int err = 0;

	memset(c, 0, sizeof(*c));
	c->stats_fd = -1;
	c->every = every;
	c->tick_ns = tick_ns;
	c->t0_ns = now_ns();
	c->self_cpu0 = self_cpu();
	for (size_t i = 0; i < n && c->npids < DR_MAX_PROCS; i++) {
		c->pids[c->npids] = pids[i];
		proc_ticks(pids[i], &c->ticks0[c->npids]);
		c->ticks_last[c->npids] = c->ticks0[c->npids];
		c->npids++;
	}
	if (every)
		err = stats_on(c, conns);
	c->window_ns = c->on_ns;
	c->valid = !err;
	return err;
}

void agentcost_tick(struct agentcost *c, uint64_t conns)
{
	if (!c->valid || !c->every)
		return;
	if (c->stats_fd >= 0) {
		stats_sum(c, conns);
		/* A window is at least (nearly) an interval long; every 1: on
		 * for good. */
		if (c->every == 1 || now_ns() - c->window_ns < c->tick_ns / 10 * 9)
			return;
		close(c->stats_fd);
		c->stats_fd = -1;
		c->off_left = c->every - 1;
		return;
	}
	if (c->off_left && --c->off_left)
		return;
	if (!stats_on(c, conns))
		c->window_ns = c->on_ns;
}

void agentcost_sample(struct agentcost *c, struct agent_cost *out, uint64_t conns)
{
	uint64_t ns, ticks = 0;

	memset(out, 0, sizeof(*out));
	if (!c->valid)
		return;
	if (c->stats_fd >= 0)
		stats_sum(c, conns);
	for (size_t i = 0; i < c->npids; i++) {
		uint64_t t;

		/* A target that exited keeps what it used until then. */
		if (!proc_ticks(c->pids[i], &t))
			c->ticks_last[i] = t;
		ticks += c->ticks_last[i] - c->ticks0[i];
	}
	out->valid = true;
	out->every = c->every;
	out->agent_cpu_s = self_cpu() - c->self_cpu0;
	out->targets_cpu_s = (double)ticks / procfs_clk_tck();
	out->window_s = (now_ns() - c->t0_ns) / 1e9;
	out->stats_s = c->stats_s;
	out->stats_conns = c->stats_conns;
	out->nprogs = c->nacc;
	memcpy(out->progs, c->acc, c->nacc * sizeof(c->acc[0]));
	qsort(out->progs, out->nprogs, sizeof(out->progs[0]), by_run_ns);
	/* The totals are the programs' sums: one reading, so every output's
	 * total equals the sum of its per-program rows. */
	out->bpf_runs = 0;
	ns = 0;
	for (size_t i = 0; i < out->nprogs; i++) {
		ns += out->progs[i].run_ns;
		out->bpf_runs += out->progs[i].runs;
	}
	out->bpf_s = ns / 1e9;
}

void agentcost_stop(struct agentcost *c)
{
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	c->stats_fd = -1;
}
