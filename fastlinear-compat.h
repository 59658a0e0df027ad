/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Differences between the kernels dm-fastlinear builds for (6.1 and newer).
 * Keyed on what the headers define, never on a version: whether dm core
 * re-associates clones is read from its code at load (dm-fastlinear.c).
 */
#ifndef FASTLINEAR_COMPAT_H
#define FASTLINEAR_COMPAT_H

#include <linux/bio.h>
#include <linux/device-mapper.h>

/*
 * bio_set_dev() without its bio_associate_blkg(): the flag handling must
 * stay the same, so that the throttle does not skip a bio it never saw on
 * this device and a partition remap is redone where needed.
 */
static inline void fastlinear_bio_set_dev_noassoc(struct bio *bio,
						  struct block_device *bdev)
{
	bio_clear_flag(bio, BIO_REMAPPED);
	if (bio->bi_bdev != bdev)
		bio_clear_flag(bio, BIO_BPS_THROTTLED);
	bio->bi_bdev = bdev;
}

/* 6.16 gave ->prepare_ioctl the ioctl itself (with DM_MPATH_PROBE_PATHS). */
#ifdef DM_MPATH_PROBE_PATHS
#define FASTLINEAR_PREPARE_IOCTL_EXTRA_ARGS				\
	, unsigned int cmd, unsigned long arg, bool *forward
#else
#define FASTLINEAR_PREPARE_IOCTL_EXTRA_ARGS
#endif

/*
 * 6.17 removed pfn_t: ->direct_access takes an unsigned long pfn.  Kbuild
 * tells which by looking for the header (FASTLINEAR_HAVE_PFN_T).
 */
#ifdef FASTLINEAR_HAVE_PFN_T
#include <linux/pfn_t.h>
#define fastlinear_pfn_t pfn_t
#else
#define fastlinear_pfn_t unsigned long
#endif

/*
 * dm_target gained flush_bypasses_map in 2024 (in 6.12, not in 6.1): where
 * every target of a table sets it, dm core sends an empty flush once to
 * each lower device instead of once through each target, as dm-linear
 * asks.  A bitfield leaves no macro behind: Kbuild greps the header for
 * it (FASTLINEAR_HAVE_FLUSH_BYPASS).
 */
static inline void fastlinear_set_flush_bypass(struct dm_target *ti)
{
#ifdef FASTLINEAR_HAVE_FLUSH_BYPASS
	ti->flush_bypasses_map = true;
#endif
}

/* 6.14 added atomic writes; dm-linear passes them through. */
#ifdef DM_TARGET_ATOMIC_WRITES
#define FASTLINEAR_EXTRA_FEATURES DM_TARGET_ATOMIC_WRITES
#else
#define FASTLINEAR_EXTRA_FEATURES 0
#endif

#endif /* FASTLINEAR_COMPAT_H */
