// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-fastlinear: dm-linear with one blk-cgroup association per remapped bio.
 *
 * dm core clones every bio with a NULL bdev, so the clone reaches ->map()
 * without a blkg.  dm-linear's bio_set_dev() then associates the clone with
 * the current task's css, and a dm core carrying upstream commit
 * 2df8b310bcfe ("dm: use bio_clone_blkg_association") associates it once
 * more, from the original bio, in dm_submit_bio_remap(), throwing the first
 * association away.  On such a core this target only sets the lower bdev
 * and leaves the one association to dm core.  On an older core it must
 * associate in ->map() itself: a clone submitted there without a blkg is a
 * NULL dereference in the throttle check of submit_bio_noacct().  Which
 * core is loaded is read from its code at module load, not from the
 * kernel's version: a version only claims what the source held.
 */

#include <linux/module.h>
#include <linux/init.h>
#include <linux/blkdev.h>
#include <linux/bio.h>
#include <linux/dax.h>
#include <linux/slab.h>
#include <linux/kernel.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/string.h>
#include <linux/device-mapper.h>

#include "fastlinear-compat.h"

#define DM_MSG_PREFIX "fastlinear"

static char *blkg_assoc = "auto";
module_param(blkg_assoc, charp, 0444);
MODULE_PARM_DESC(blkg_assoc,
		 "Who associates remapped bios with a blkg: auto (default: core where dm core is seen to re-associate, else map), core (dm core; refused where it does not) or map (this target, as dm-linear)");

/* What the loaded dm core does with a remapped clone, read at load. */
enum fastlinear_dm_core {
	FL_DM_CORE_UNKNOWN,
	FL_DM_CORE_NO_REASSOC,
	FL_DM_CORE_REASSOC,
};

static const char * const fastlinear_dm_core_names[] = {
	[FL_DM_CORE_UNKNOWN] = "unknown",
	[FL_DM_CORE_NO_REASSOC] = "no-reassoc",
	[FL_DM_CORE_REASSOC] = "reassoc",
};

static enum fastlinear_dm_core dm_core;

/*
 * Whether ->map() associates, resolved from blkg_assoc and dm_core once at
 * module load: a static key, so that the per-bio test costs no load and no
 * compare on either side (the mode is the module's, never a device's).
 */
static DEFINE_STATIC_KEY_FALSE(assoc_in_map);

struct fastlinear_c {
	struct dm_dev *dev;
	sector_t start;
};

/*
 * Construct a linear mapping: <dev_path> <offset>
 */
static int fastlinear_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct fastlinear_c *fc;
	unsigned long long start;
	char dummy;
	int ret;

	if (argc != 2) {
		ti->error = "Invalid argument count";
		return -EINVAL;
	}

	/*
	 * dm-linear's own rule (leading blanks, no sign, nothing after), then
	 * kstrtoull() on the same digits to refuse what sscanf() silently
	 * wraps.
	 */
	if (sscanf(argv[1], "%llu%c", &start, &dummy) != 1 ||
	    kstrtoull(skip_spaces(argv[1]), 10, &start)) {
		ti->error = "Invalid device sector";
		return -EINVAL;
	}

	fc = kmalloc(sizeof(*fc), GFP_KERNEL);
	if (!fc) {
		ti->error = "Cannot allocate fastlinear context";
		return -ENOMEM;
	}
	fc->start = start;

	ret = dm_get_device(ti, argv[0], dm_table_get_mode(ti->table), &fc->dev);
	if (ret) {
		ti->error = "Device lookup failed";
		goto bad;
	}

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_secure_erase_bios = 1;
	ti->num_write_zeroes_bios = 1;
	fastlinear_set_flush_bypass(ti);
	ti->private = fc;
	return 0;

bad:
	kfree(fc);
	return ret;
}

static void fastlinear_dtr(struct dm_target *ti)
{
	struct fastlinear_c *fc = ti->private;

	dm_put_device(ti, fc->dev);
	kfree(fc);
}

static sector_t fastlinear_map_sector(struct dm_target *ti, sector_t bi_sector)
{
	struct fastlinear_c *fc = ti->private;

	return fc->start + dm_target_offset(ti, bi_sector);
}

static int fastlinear_map(struct dm_target *ti, struct bio *bio)
{
	struct fastlinear_c *fc = ti->private;

	if (static_branch_unlikely(&assoc_in_map))
		bio_set_dev(bio, fc->dev->bdev);
	else
		fastlinear_bio_set_dev_noassoc(bio, fc->dev->bdev);

	if (bio_sectors(bio) || op_is_zone_mgmt(bio_op(bio)))
		bio->bi_iter.bi_sector = fastlinear_map_sector(ti, bio->bi_iter.bi_sector);

	return DM_MAPIO_REMAPPED;
}

static void fastlinear_status(struct dm_target *ti, status_type_t type,
			      unsigned int status_flags, char *result,
			      unsigned int maxlen)
{
	struct fastlinear_c *fc = ti->private;
	size_t sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("blkg_assoc=%s dm_core=%s",
		       static_key_enabled(&assoc_in_map) ? "map" : "core",
		       fastlinear_dm_core_names[dm_core]);
		break;

	case STATUSTYPE_TABLE:
		DMEMIT("%s %llu", fc->dev->name, (unsigned long long)fc->start);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,start=%llu;", fc->dev->name,
		       (unsigned long long)fc->start);
		break;
	}
}

static int fastlinear_prepare_ioctl(struct dm_target *ti,
				    struct block_device **bdev
				    FASTLINEAR_PREPARE_IOCTL_EXTRA_ARGS)
{
	struct fastlinear_c *fc = ti->private;
	struct dm_dev *dev = fc->dev;

	*bdev = dev->bdev;

	/* Only pass ioctls through if the device sizes match exactly. */
	if (fc->start || ti->len != bdev_nr_sectors(dev->bdev))
		return 1;
	return 0;
}

#ifdef CONFIG_BLK_DEV_ZONED
static int fastlinear_report_zones(struct dm_target *ti,
				   struct dm_report_zones_args *args,
				   unsigned int nr_zones)
{
	struct fastlinear_c *fc = ti->private;

	return dm_report_zones(fc->dev->bdev, fc->start,
			       fastlinear_map_sector(ti, args->next_sector),
			       args, nr_zones);
}
#else
#define fastlinear_report_zones NULL
#endif

static int fastlinear_iterate_devices(struct dm_target *ti,
				      iterate_devices_callout_fn fn, void *data)
{
	struct fastlinear_c *fc = ti->private;

	return fn(ti, fc->dev, fc->start, ti->len, data);
}

#if IS_ENABLED(CONFIG_FS_DAX)
static struct dax_device *fastlinear_dax_pgoff(struct dm_target *ti,
					       pgoff_t *pgoff)
{
	struct fastlinear_c *fc = ti->private;
	sector_t sector = fastlinear_map_sector(ti, *pgoff << PAGE_SECTORS_SHIFT);

	*pgoff = (get_start_sect(fc->dev->bdev) + sector) >> PAGE_SECTORS_SHIFT;
	return fc->dev->dax_dev;
}

static long fastlinear_dax_direct_access(struct dm_target *ti, pgoff_t pgoff,
					 long nr_pages,
					 enum dax_access_mode mode,
					 void **kaddr, fastlinear_pfn_t *pfn)
{
	struct dax_device *dax_dev = fastlinear_dax_pgoff(ti, &pgoff);

	return dax_direct_access(dax_dev, pgoff, nr_pages, mode, kaddr, pfn);
}

static int fastlinear_dax_zero_page_range(struct dm_target *ti, pgoff_t pgoff,
					  size_t nr_pages)
{
	struct dax_device *dax_dev = fastlinear_dax_pgoff(ti, &pgoff);

	return dax_zero_page_range(dax_dev, pgoff, nr_pages);
}

static size_t fastlinear_dax_recovery_write(struct dm_target *ti,
					    pgoff_t pgoff, void *addr,
					    size_t bytes, struct iov_iter *i)
{
	struct dax_device *dax_dev = fastlinear_dax_pgoff(ti, &pgoff);

	return dax_recovery_write(dax_dev, pgoff, addr, bytes, i);
}
#else
#define fastlinear_dax_direct_access NULL
#define fastlinear_dax_zero_page_range NULL
#define fastlinear_dax_recovery_write NULL
#endif

static struct target_type fastlinear_target = {
	.name = "fastlinear",
	.version = {1, 1, 0},
	.features = DM_TARGET_PASSES_INTEGRITY | DM_TARGET_NOWAIT |
		    DM_TARGET_ZONED_HM | DM_TARGET_PASSES_CRYPTO |
		    FASTLINEAR_EXTRA_FEATURES,
	.report_zones = fastlinear_report_zones,
	.module = THIS_MODULE,
	.ctr = fastlinear_ctr,
	.dtr = fastlinear_dtr,
	.map = fastlinear_map,
	.status = fastlinear_status,
	.prepare_ioctl = fastlinear_prepare_ioctl,
	.iterate_devices = fastlinear_iterate_devices,
	.direct_access = fastlinear_dax_direct_access,
	.dax_zero_page_range = fastlinear_dax_zero_page_range,
	.dax_recovery_write = fastlinear_dax_recovery_write,
};

#ifndef CONFIG_BLK_CGROUP
/* Without blk-cgroup there is no blkg to associate: nothing can oops. */
static enum fastlinear_dm_core fastlinear_probe_dm_core(void)
{
	return FL_DM_CORE_REASSOC;
}
#elif defined(CONFIG_X86_64) && defined(CONFIG_KALLSYMS)
/*
 * Does the loaded dm core re-associate a remapped clone, i.e. does its
 * dm_submit_bio_remap() call bio_clone_blkg_association()?  Both are
 * exported, so their addresses are known; kallsyms gives the length of the
 * first.  Every E8 rel32 (a direct call) in that range is decoded.  Call
 * depth tracking and FineIBT may point a call a little before its callee,
 * into padding that belongs to it; a byte that merely looks like a call
 * would have to hit that window by chance.  Whatever cannot be read this
 * way (no symbol size, the call moved elsewhere) answers "no" or
 * "unknown", and both mean associating in ->map(): never a NULL blkg.
 */
static enum fastlinear_dm_core fastlinear_probe_dm_core(void)
{
	static const char fn_name[] = "dm_submit_bio_remap+0x0/";
	unsigned long fn = (unsigned long)dm_submit_bio_remap;
	unsigned long callee = (unsigned long)bio_clone_blkg_association;
	char sym[KSYM_SYMBOL_LEN];
	unsigned long size, i;
	s32 rel;

	sprint_symbol(sym, fn);
	if (strncmp(sym, fn_name, sizeof(fn_name) - 1) ||
	    sscanf(sym + sizeof(fn_name) - 1, "%lx", &size) != 1)
		return FL_DM_CORE_UNKNOWN;

	for (i = 0; i + 5 <= size; i++) {
		unsigned long target;

		if (((const u8 *)fn)[i] != 0xe8)
			continue;
		memcpy(&rel, (const u8 *)fn + i + 1, sizeof(rel));
		target = fn + i + 5 + rel;
		if (target >= callee - 64 && target <= callee + 16)
			return FL_DM_CORE_REASSOC;
	}
	return FL_DM_CORE_NO_REASSOC;
}
#else
static enum fastlinear_dm_core fastlinear_probe_dm_core(void)
{
	return FL_DM_CORE_UNKNOWN;
}
#endif

static int __init dm_fastlinear_init(void)
{
	bool in_map;

	dm_core = fastlinear_probe_dm_core();

	if (!strcmp(blkg_assoc, "auto")) {
		in_map = dm_core != FL_DM_CORE_REASSOC;
	} else if (!strcmp(blkg_assoc, "map")) {
		in_map = true;
	} else if (!strcmp(blkg_assoc, "core")) {
		/* Without the fix in dm core, the first I/O oopses. */
		if (dm_core == FL_DM_CORE_NO_REASSOC) {
			DMERR("blkg_assoc=core refused: dm core does not re-associate clones");
			return -EINVAL;
		}
		in_map = false;
	} else {
		DMERR("invalid blkg_assoc=%s (auto, core or map)", blkg_assoc);
		return -EINVAL;
	}

	if (dm_core == FL_DM_CORE_UNKNOWN)
		DMWARN("cannot tell whether dm core re-associates clones%s",
		       in_map ? ": associating in map" :
		       ": blkg_assoc=core trusted");
	DMINFO("dm core: %s, blkg_assoc=%s (%s)",
	       fastlinear_dm_core_names[dm_core],
	       in_map ? "map" : "core", blkg_assoc);

	/* before the target exists: no bio sees the key change */
	if (in_map)
		static_branch_enable(&assoc_in_map);
	return dm_register_target(&fastlinear_target);
}

static void __exit dm_fastlinear_exit(void)
{
	dm_unregister_target(&fastlinear_target);
}

module_init(dm_fastlinear_init);
module_exit(dm_fastlinear_exit);

MODULE_DESCRIPTION(DM_NAME " linear target with a single blkg association per bio");
MODULE_AUTHOR("dm-fastlinear developers");
MODULE_LICENSE("GPL");
/* keep in step with fastlinear_target.version and dkms.conf */
MODULE_VERSION("1.1.0");
