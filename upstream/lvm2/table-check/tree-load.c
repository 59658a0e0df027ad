// SPDX-License-Identifier: GPL-2.0-only
/*
 * tree-load: three devices over /dev/loop0 (7:0), loaded through a
 * dm_tree with the series' dm_tree_node_add_linear_target_with_name():
 * target name "fastlinear", NULL, and plain dm_tree_node_add_linear_target()
 * for comparison.  Meant to run under fake-dm.so (LD_PRELOAD), which
 * prints each loaded table line.  Built against lvm2's public
 * libdevmapper.h (main) or its internal device_mapper/all.h (2.03.16,
 * -DINTERNAL).
 */
#include <stdio.h>
#include <stdint.h>
#ifdef INTERNAL
#include "device_mapper/all.h"
#else
#include "libdevmapper.h"
#endif

static int add(struct dm_tree *tree, const char *name, const char *target, int plain)
{
	char uuid[64];
	struct dm_tree_node *node;

	snprintf(uuid, sizeof(uuid), "TREELOAD-%s", name);
	if (!(node = dm_tree_add_new_dev(tree, name, uuid, 0, 0, 0, 0, NULL)))
		return 0;
	if (plain ? !dm_tree_node_add_linear_target(node, 2048) :
	    !dm_tree_node_add_linear_target_with_name(node, 2048, target))
		return 0;
	return dm_tree_node_add_target_area(node, "/dev/loop0", NULL, 8);
}

int main(void)
{
	struct dm_tree *tree;

	dm_udev_set_sync_support(0);
	if (!(tree = dm_tree_create()) ||
	    !add(tree, "tl-fastlinear", "fastlinear", 0) ||
	    !add(tree, "tl-null", NULL, 0) ||
	    !add(tree, "tl-linear", NULL, 1) ||
	    !dm_tree_preload_children(dm_tree_find_node(tree, 0, 0), "TREELOAD-", 9)) {
		fprintf(stderr, "tree-load: failed\n");
		return 1;
	}
	dm_tree_free(tree);
	return 0;
}
