// SPDX-License-Identifier: GPL-2.0-only
/*
 * fl_test_bio: the test suite's way to send a block device a bio that no
 * ioctl or system call sends, such as a zone management op of no length
 * at the very end of a device (BLKRESETZONE checks its range against the
 * capacity first).  Built with the module by make kmod
 * (build/KVER/test/fl-test-bio.ko); never installed.
 *
 *   echo "MAJ:MIN OP SECTOR SECTORS" >/sys/module/fl_test_bio/parameters/submit
 *   cat /sys/module/fl_test_bio/parameters/status
 *   cat /sys/module/fl_test_bio/parameters/after
 *
 * OP: reset, open, close, finish (zone management, SECTORS must be 0),
 * read or write (SECTORS of zeroes written, or read into a scratch page
 * and dropped; 0 for an empty bio).  The bio is sent with
 * submit_bio_wait(); status is its result as a negative errno (0 for
 * success), what the device completed it with; after is what the bio
 * holds once it has completed, as its submitter would read it:
 * "dev MAJ:MIN sector S size N opf 0x.. sent 0x.. qos T M" (its bi_bdev,
 * bi_iter's sector and size, bi_opf and the bi_opf it was sent with, and
 * whether BIO_QOS_THROTTLED and BIO_QOS_MERGED are set, 1 or 0).  The
 * write fails with EINVAL for a line it cannot parse, ENODEV if the
 * device cannot be opened, ENOMEM (status is then left as it was).
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

static int status;
module_param(status, int, 0444);
MODULE_PARM_DESC(status, "result of the last submit (negative errno)");

static char after[96];
module_param_string(after, after, sizeof(after), 0444);
MODULE_PARM_DESC(after, "the last bio as its submitter finds it after completion");

/* at most 64 KiB of data: one scratch page, added as often as needed */
#define FL_TEST_MAX_SECTORS	128

struct fl_test_op {
	const char *name;
	enum req_op op;
};

static const struct fl_test_op fl_test_ops[] = {
	{ "reset", REQ_OP_ZONE_RESET },
	{ "open", REQ_OP_ZONE_OPEN },
	{ "close", REQ_OP_ZONE_CLOSE },
	{ "finish", REQ_OP_ZONE_FINISH },
	{ "read", REQ_OP_READ },
	{ "write", REQ_OP_WRITE },
};

/* the bio's result in status; an error only if it could not be sent */
static int fl_test_submit(struct block_device *bdev, enum req_op op,
			  sector_t sector, unsigned int sectors)
{
	unsigned int nr_vecs = DIV_ROUND_UP(sectors, PAGE_SECTORS);
	struct page *page = NULL;
	struct bio *bio;
	blk_opf_t sent;

	if (sectors) {
		page = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!page)
			return -ENOMEM;
	}
	bio = bio_alloc(bdev, nr_vecs, op | REQ_SYNC, GFP_KERNEL);
	bio->bi_iter.bi_sector = sector;
	while (sectors) {
		unsigned int n = min_t(unsigned int, sectors, PAGE_SECTORS);

		__bio_add_page(bio, page, n << SECTOR_SHIFT, 0);
		sectors -= n;
	}
	sent = bio->bi_opf;
	status = submit_bio_wait(bio);
	snprintf(after, sizeof(after),
		 "dev %u:%u sector %llu size %u opf 0x%x sent 0x%x qos %d %d",
		 MAJOR(bio->bi_bdev->bd_dev), MINOR(bio->bi_bdev->bd_dev),
		 (unsigned long long)bio->bi_iter.bi_sector, bio->bi_iter.bi_size,
		 (__force unsigned int)bio->bi_opf, (__force unsigned int)sent,
		 bio_flagged(bio, BIO_QOS_THROTTLED), bio_flagged(bio, BIO_QOS_MERGED));
	bio_put(bio);
	if (page)
		__free_page(page);
	return 0;
}

/*
 * The device open for the submit, and closed after, as each kernel has it
 * (6.9 and later, and 6.1: FL_TEST_HAVE_BDEV_FILE from its Kbuild)
 */
#ifdef FL_TEST_HAVE_BDEV_FILE
static int fl_test_submit_dev(dev_t dev, enum req_op op, sector_t sector,
			      unsigned int sectors)
{
	struct file *f;
	int ret;

	f = bdev_file_open_by_dev(dev, BLK_OPEN_READ | BLK_OPEN_WRITE, NULL, NULL);
	if (IS_ERR(f))
		return -ENODEV;
	ret = fl_test_submit(file_bdev(f), op, sector, sectors);
	fput(f);
	return ret;
}
#else
static int fl_test_submit_dev(dev_t dev, enum req_op op, sector_t sector,
			      unsigned int sectors)
{
	fmode_t mode = FMODE_READ | FMODE_WRITE;
	struct block_device *bdev;
	int ret;

	bdev = blkdev_get_by_dev(dev, mode, NULL);
	if (IS_ERR(bdev))
		return -ENODEV;
	ret = fl_test_submit(bdev, op, sector, sectors);
	blkdev_put(bdev, mode);
	return ret;
}
#endif

static int fl_test_set_submit(const char *val, const struct kernel_param *kp)
{
	unsigned int maj, min, sectors, i;
	unsigned long long sector;
	char name[8];

	if (sscanf(val, "%u:%u %7s %llu %u", &maj, &min, name, &sector,
		   &sectors) != 5 || sectors > FL_TEST_MAX_SECTORS)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(fl_test_ops); i++)
		if (!strcmp(name, fl_test_ops[i].name))
			break;
	if (i == ARRAY_SIZE(fl_test_ops) ||
	    (op_is_zone_mgmt(fl_test_ops[i].op) && sectors))
		return -EINVAL;
	return fl_test_submit_dev(MKDEV(maj, min), fl_test_ops[i].op, sector,
				  sectors);
}

static const struct kernel_param_ops fl_test_submit_ops = {
	.set = fl_test_set_submit,
};
module_param_cb(submit, &fl_test_submit_ops, NULL, 0200);
MODULE_PARM_DESC(submit, "MAJ:MIN OP SECTOR SECTORS: send that bio, wait for it");

MODULE_DESCRIPTION("dm-fastlinear test suite: send a block device a given bio");
MODULE_LICENSE("GPL");
