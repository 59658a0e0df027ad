/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Differences between the kernels dm-fastlinear builds for (6.1 and newer).
 * Keyed on what the headers define wherever the kernel allows; the one
 * version table is for a dm core change that leaves no trace in headers.
 */
#ifndef FASTLINEAR_COMPAT_H
#define FASTLINEAR_COMPAT_H

#include <linux/bio.h>
#include <linux/version.h>
#include <linux/device-mapper.h>

/*
 * Upstream 2df8b310bcfe ("dm: use bio_clone_blkg_association", v7.0)
 * makes dm_submit_bio_remap() associate every clone from the original bio.
 * Stable releases that took it: 6.1.165, 6.6.128, 6.12.75, 6.18.14 and
 * 6.19.4.  Branches that ended before it (6.2-6.5, 6.7-6.11, 6.13-6.17)
 * never got it.  The sublevel macro is used because KERNEL_VERSION()
 * saturates at 255.
 */
#define FASTLINEAR_KV_AT_LEAST(maj, min, sub)				\
	(LINUX_VERSION_MAJOR == (maj) &&				\
	 LINUX_VERSION_PATCHLEVEL == (min) &&				\
	 LINUX_VERSION_SUBLEVEL >= (sub))

#define FASTLINEAR_CORE_ASSOCIATES_CLONE				\
	(LINUX_VERSION_MAJOR >= 7 ||					\
	 FASTLINEAR_KV_AT_LEAST(6, 1, 165) ||				\
	 FASTLINEAR_KV_AT_LEAST(6, 6, 128) ||				\
	 FASTLINEAR_KV_AT_LEAST(6, 12, 75) ||				\
	 FASTLINEAR_KV_AT_LEAST(6, 18, 14) ||				\
	 FASTLINEAR_KV_AT_LEAST(6, 19, 4))

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

/* 6.14 added atomic writes; dm-linear passes them through. */
#ifdef DM_TARGET_ATOMIC_WRITES
#define FASTLINEAR_EXTRA_FEATURES DM_TARGET_ATOMIC_WRITES
#else
#define FASTLINEAR_EXTRA_FEATURES 0
#endif

#endif /* FASTLINEAR_COMPAT_H */
