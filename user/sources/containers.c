// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A container is found the way its runtime lays it out: its cgroup (the
 * one truth for every runtime, and what the BPF side filters on), its name
 * from the runtime's own state. Docker keeps that in a JSON file a
 * container; podman in a database only its CLI reads, so `podman inspect`
 * is asked (once an id). CRI runtimes under Kubernetes name containers
 * through the API: there the label is the short id, and pod_uid comes from
 * the cgroup path. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "containers.h"
#include "procfs.h"
#include "targets.h"
#include "text_wrap.h"

extern char **environ;

#define DOCKER_DIR "/var/lib/docker/containers"
#define SCAN_DEPTH 10		/* kubepods.slice/.../pod/ctr/ under kind: 8 */
#define SCAN_MAX 4096		/* containers listed at most */
#define NAME_CACHE 256

struct found {
	struct cgroup_container c;
	char rel[PATH_MAX];	/* under the cgroup2 mount */
};

struct scan {
	struct found *v;
	size_t n;
};

/* Every container cgroup under dir (rel: its path under the mount). A
 * container's own children (runc's "container", a pod's workloads) are
 * not listed again: the outermost directory naming it is its cgroup. */
static void scan_tree(const char *mnt, const char *rel, int depth, struct scan *s)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s%s", mnt, rel);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) && s->n < SCAN_MAX) {
		char sub[PATH_MAX];
		struct cgroup_container c;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name) >= (int)sizeof(sub))
			continue;
		if (container_from_cgroup(sub, &c)) {
			s->v[s->n].c = c;
			snprintf(s->v[s->n].rel, sizeof(s->v[s->n].rel), "%s", sub);
			s->n++;
		} else if (depth < SCAN_DEPTH) {
			scan_tree(mnt, sub, depth + 1, s);
		}
	}
	closedir(d);
}

/* A top-level string of a JSON object ("Name" of config.v2.json): keys
 * are matched at depth 1 only, as Docker nests others of that name. */
static bool json_top_string(const char *j, const char *key, char *out, size_t len)
{
	int depth = 0;
	size_t kl = strlen(key);

	for (const char *p = j; *p; p++) {
		if (*p == '"') {
			const char *q = p + 1;

			while (*q && *q != '"')
				q += (*q == '\\' && q[1]) ? 2 : 1;
			if (!*q)
				return false;
			if (depth == 1 && (size_t)(q - p - 1) == kl && !strncmp(p + 1, key, kl)) {
				const char *v = q + 1, *e;

				while (*v == ' ' || *v == ':')
					v++;
				if (*v != '"')
					return false;
				e = ++v;
				while (*e && *e != '"')
					e++;
				snprintf(out, len, "%.*s", (int)(e - v), v);
				return true;
			}
			p = q;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			depth--;
		}
	}
	return false;
}

static bool read_small(const char *path, char **buf)
{
	FILE *f = fopen(path, "re");
	size_t cap = 0;
	ssize_t n;

	*buf = NULL;
	if (!f)
		return false;
	n = getdelim(buf, &cap, '\0', f);
	fclose(f);
	if (n <= 0) {
		free(*buf);
		*buf = NULL;
		return false;
	}
	return true;
}

/* Docker: the container's name ("/web" in its config.v2.json). */
static bool docker_name(const char *id, char *name, size_t len)
{
	char path[PATH_MAX], n[CONTAINER_NAME_MAX + 1], *j;
	bool ok;

	snprintf(path, sizeof(path), DOCKER_DIR "/%s/config.v2.json", id);
	if (!read_small(path, &j))
		return false;
	ok = json_top_string(j, "Name", n, sizeof(n));
	free(j);
	if (ok && snprintf(name, len, "%s", n[0] == '/' ? n + 1 : n) >= (int)len)
		name[0] = '\0';	/* longer than a name can be */
	return ok && name[0];
}

/* Docker: the id of the container named name, from every config.v2.json. */
static bool docker_id_of(const char *name, char id[CONTAINER_ID_LEN + 1])
{
	DIR *d = opendir(DOCKER_DIR);
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char n[CONTAINER_NAME_MAX];

		if (container_id_valid(de->d_name, strlen(de->d_name)) &&
		    docker_name(de->d_name, n, sizeof(n)) && !strcmp(n, name)) {
			snprintf(id, CONTAINER_ID_LEN + 1, "%s", de->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

/* `podman inspect --type container --format FMT -- what`: its first line
 * of output; false when podman is not there or knows no such container. */
static bool podman_inspect(const char *what, const char *fmt, char *out, size_t len)
{
	char *argv[] = { "podman", "inspect", "--type", "container", "--format", (char *)fmt,
			 "--", (char *)what, NULL };
	posix_spawn_file_actions_t fa;
	int pipefd[2], status = 0;
	ssize_t n, got = 0;
	pid_t pid;
	bool ok;

	if (pipe2(pipefd, O_CLOEXEC))
		return false;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	ok = !posix_spawnp(&pid, "podman", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	/* To the end: closed early, podman dies of SIGPIPE on its newline. */
	while (ok) {
		char rest[256];
		bool room = got < (ssize_t)len - 1;

		n = room ? read(pipefd[0], out + got, len - 1 - (size_t)got)
			 : read(pipefd[0], rest, sizeof(rest));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (room)
			got += n;
	}
	close(pipefd[0]);
	if (!ok)
		return false;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[got] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && out[0];
}

static bool have_podman(void)
{
	const char *path = getenv("PATH");
	char *dup, *dir, *save = NULL, p[PATH_MAX];
	bool found = false;

	if (!path || !(dup = strdup(path)))
		return false;
	for (dir = strtok_r(dup, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(p, sizeof(p), "%s/podman", dir);
		found = !access(p, X_OK);
	}
	free(dup);
	return found;
}

/* The name of a container the cgroup tree found, from its runtime. */
static void name_of(const struct cgroup_container *c, char *name, size_t len)
{
	static struct { char id[CONTAINER_ID_LEN + 1]; char name[CONTAINER_NAME_MAX]; } cache[NAME_CACHE];
	static size_t next;
	char out[CONTAINER_NAME_MAX];
	size_t i;

	name[0] = '\0';
	for (i = 0; i < NAME_CACHE; i++)
		if (!strcmp(cache[i].id, c->id)) {
			snprintf(name, len, "%s", cache[i].name);
			return;
		}
	if (!strcmp(c->runtime, "docker"))
		docker_name(c->id, name, len);
	else if (!strcmp(c->runtime, "podman") && have_podman() &&
		 podman_inspect(c->id, "{{.Name}}", out, sizeof(out)))
		snprintf(name, len, "%s", out);
	/* Remembered either way: a container without a name asks once. */
	i = next++ % NAME_CACHE;
	snprintf(cache[i].id, sizeof(cache[i].id), "%s", c->id);
	snprintf(cache[i].name, sizeof(cache[i].name), "%s", name);
}

const char *container_label(const struct container_ref *r, char *buf, size_t len)
{
	if (r->name[0])
		snprintf(buf, len, "%s", r->name);
	else
		snprintf(buf, len, "%.*s", CONTAINER_SHORT_LEN, r->c.id);
	return buf;
}

static bool valid_arg(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= CONTAINER_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= 'A' && s[i] <= 'Z') &&
		    !(s[i] >= '0' && s[i] <= '9') && !(i && strchr("_.-", s[i])))
			return false;
	return true;
}

static bool is_hex_prefix(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int container_resolve(const char *arg, struct container_ref *out)
{
	struct scan s = { 0 };
	char mnt[PATH_MAX], id[CONTAINER_ID_LEN + 1] = "", via[16] = "";
	size_t match = 0, second = 0, nmatch = 0;
	bool docker = !access(DOCKER_DIR, F_OK), podman = have_podman();
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (!valid_arg(arg)) {
		text_err("connscope: --container '%s': not a container name or id (letters, "
			 "digits and _.- as podman and docker name them, or the hex of an "
			 "id): give one `podman ps` or `docker ps` lists\n", arg);
		return -1;
	}
	targets_cgroup2_mount(mnt, sizeof(mnt));
	if (!mnt[0]) {
		text_err("connscope: --container %s: no cgroup v2 hierarchy is mounted, and "
			 "containers are found by their cgroup: mount -t cgroup2 none "
			 "/sys/fs/cgroup/unified\n", arg);
		return -1;
	}
	s.v = calloc(SCAN_MAX, sizeof(*s.v));
	if (!s.v) {
		text_err("connscope: --container: out of memory\n");
		return -1;
	}
	scan_tree(mnt, "", 0, &s);
	/* A name first, as the runtimes themselves look one up. */
	if (docker && docker_id_of(arg, id))
		snprintf(via, sizeof(via), "docker");
	else if (podman && podman_inspect(arg, "{{.Id}}", id, sizeof(id)) &&
		 container_id_valid(id, strlen(id)))
		snprintf(via, sizeof(via), "podman");
	else
		id[0] = '\0';
	for (size_t i = 0; i < s.n; i++) {
		bool hit = id[0] ? !strcmp(s.v[i].c.id, id)
				 : is_hex_prefix(arg) && !strncmp(s.v[i].c.id, arg, strlen(arg));

		/* One container, one match: its cgroup may show twice (a
		 * podman pod's infra and a workload do not share ids). */
		if (hit && (!nmatch || strcmp(s.v[match].c.id, s.v[i].c.id)) &&
		    (nmatch < 2 || strcmp(s.v[second].c.id, s.v[i].c.id))) {
			if (!nmatch)
				match = i;
			else if (nmatch == 1)
				second = i;	/* named in the error beside the first */
			nmatch++;
		}
	}
	if (nmatch > 1) {
		text_err("connscope: --container %s: that id prefix matches %zu running "
			 "containers (%.12s, %.12s%s): give more of the id, or the name\n",
			arg, nmatch, s.v[match].c.id, s.v[second].c.id,
			nmatch > 2 ? ", ..." : "");
		goto out;
	}
	if (!nmatch && id[0]) {
		text_err("connscope: --container %s: %s knows it (id %.12s) but it has no "
			 "cgroup: it is not running; start it (%s start %s) and try again\n",
			arg, via, id, via, arg);
		goto out;
	}
	if (!nmatch) {
		if (!docker && !podman && !is_hex_prefix(arg))
			text_err("connscope: --container %s: no container runtime's state to "
				 "find a name in (neither podman nor %s): give the container's "
				 "id (the hex in its cgroup, /proc/PID/cgroup of one of its "
				 "processes)\n", arg, DOCKER_DIR);
		else
			text_err("connscope: --container %s: no running container has that "
				 "name or id (%zu running found by their cgroups); `podman ps` "
				 "or `docker ps` lists them\n", arg, s.n);
		goto out;
	}
	out->c = s.v[match].c;
	if (snprintf(out->cgroup, sizeof(out->cgroup), "%s%s", mnt, s.v[match].rel) >=
	    (int)sizeof(out->cgroup)) {
		text_err("connscope: --container %s: its cgroup's path is longer than "
			 "PATH_MAX\n", arg);
		goto out;
	}
	name_of(&out->c, out->name, sizeof(out->name));
	ret = 0;
out:
	free(s.v);
	return ret;
}

bool container_of_pid(pid_t pid, struct container_ref *out)
{
	char buf[8192], *line, *save = NULL;
	int n = procfs_read_pid_file(pid, "cgroup", buf, sizeof(buf));

	memset(out, 0, sizeof(*out));
	if (n <= 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::", 3))
			continue;
		if (!container_from_cgroup(line + 3, &out->c))
			return false;
		name_of(&out->c, out->name, sizeof(out->name));
		return true;
	}
	return false;
}
