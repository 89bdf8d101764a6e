// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include "inode_owners.h"

void inode_map_init(struct inode_map *m)
{
	hmap_init(&m->m, sizeof(uint32_t), sizeof(struct inode_owner));
}

void inode_map_free(struct inode_map *m)
{
	hmap_free(&m->m);
	inode_map_init(m);
}

int inode_map_put(struct inode_map *m, uint32_t inode, pid_t pid)
{
	struct inode_owner *o;
	bool created;

	if (!inode)	/* 0 is "no inode" everywhere: never a key */
		return -EINVAL;
	o = hmap_upsert(&m->m, &inode, &created);
	if (!o)
		return -ENOMEM;
	if (created) {
		*o = (struct inode_owner){ .inode = inode, .pid = pid };
	} else if (o->pid != pid) {
		o->shared = true;
		if (pid < o->pid)
			o->pid = pid;
	}
	return 0;
}

const struct inode_owner *inode_map_get(const struct inode_map *m, uint32_t inode)
{
	return inode ? hmap_get(&m->m, &inode) : NULL;
}

bool inode_map_next(const struct inode_map *m, size_t *iter, const struct inode_owner **o)
{
	const void *key;
	void *val;

	if (!hmap_next(&m->m, iter, &key, &val))
		return false;
	*o = val;
	return true;
}

size_t inode_map_count(const struct inode_map *m)
{
	return m->m.count;
}
