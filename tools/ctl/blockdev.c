// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a table swap resets or hides on the block device itself: its
 * read-ahead (dm sets the new table's default on 6.1) and whether it is
 * read-only by its table or only by a soft BLKROSET.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/fs.h>

#include "ctl.h"

static void ra_path(const struct dev *d, char *path, size_t size)
{
	snprintf(path, size, "/sys/dev/block/%u:%u/queue/read_ahead_kb",
		 d->info.major, d->info.minor);
}

/* the read-ahead in KiB, or -errno (silent) */
int read_ahead_get(const struct dev *d)
{
	char path[96], buf[32];
	FILE *f;
	int kb;

	ra_path(d, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	kb = fgets(buf, sizeof(buf), f) ? atoi(buf) : -EIO;
	fclose(f);
	return kb;
}

int read_ahead_set(const struct dev *d, int kb)
{
	char path[96];
	FILE *f;
	int ret;

	ra_path(d, path, sizeof(path));
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", kb);
	ret = fclose(f) ? -errno : 0;
	return ret;
}

/* the disk's sequence number, new for each disk made; 0 where there is none */
uint64_t diskseq_get(const struct dev *d)
{
	unsigned long long seq = 0;
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/diskseq", d->info.major,
		 d->info.minor);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &seq) != 1)
		seq = 0;
	fclose(f);
	return seq;
}

/* the device node of D, checked to be D (devtmpfs has /dev/dm-N) */
static int dev_open(const struct dev *d)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", d->info.major,
		 d->info.minor);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = 0;
	base = strrchr(link, '/');
	snprintf(path, sizeof(path), "/dev/%.*s", NAME_MAX, base ? base + 1 : link);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISBLK(st.st_mode) ||
	    st.st_rdev != makedev(d->info.major, d->info.minor)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * Whether D's table is read-only.  The kernel's read-only flag
 * (info.read_only, get_disk_ro()) is also set by a soft BLKROSET
 * (blockdev --setro) on a read-write table: loading the new table
 * read-only then would make the soft flag hard (blockdev --setrw no
 * longer helps).  Only the table's mode survives clearing the soft flag:
 * clear it, look, and set it back if the table is read-write (on a
 * read-only table a soft flag under it is not told apart: it is left
 * clear, the table keeps the device read-only).  Silent.
 */
int table_read_only(const struct dev *d, bool *ro)
{
	int fd, off = 0, on = 1, now = 1, ret = 0;

	*ro = d->info.read_only;
	if (!*ro)
		return 0;
	fd = dev_open(d);
	if (fd < 0)
		return fd;
	if (ioctl(fd, BLKROSET, &off)) {
		ret = -errno;
		goto out;
	}
	/* unknown: the flag as it was, and the caller refuses */
	if (ioctl(fd, BLKROGET, &now))
		ret = -errno;
	*ro = ret || now;
	if ((ret || !now) && ioctl(fd, BLKROSET, &on) && !ret)
		ret = -errno;
out:
	close(fd);
	return ret;
}
