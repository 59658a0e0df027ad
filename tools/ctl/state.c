// SPDX-License-Identifier: GPL-2.0-only
/*
 * Our state directory: the locks for devices LVM does not own, and the
 * marks that say which devices this tool converted.  LVM's VG lock for
 * an LV.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

/*
 * The state directory holds our locks and marks: it must be ours alone (a
 * user who can create files there could hold our locks or plant a
 * symlink).  Created 0700 when missing.
 */
int state_dir_ok(const struct opts *o)
{
	struct stat st;

	if (mkdir(o->state_dir, 0700) && errno != EEXIST) {
		err("cannot create %s: %s", o->state_dir, strerror(errno));
		return -errno;
	}
	if (lstat(o->state_dir, &st)) {
		err("cannot use %s: %s", o->state_dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		err("refused: %s is not a directory of ours alone (a symlink, someone else's, or writable by others)",
		    o->state_dir);
		return -EPERM;
	}
	return 0;
}

/*
 * lvm2's file locking: flock() on LOCKDIR/V_<vgname>, where LVM also
 * creates and unlinks the file (lib/misc/lvm-flock.c): after flock the
 * file we hold must still be the one at that path, else retry.  Waits up
 * to WAIT seconds.  Returns the fd, or -errno with a message: -EBUSY when
 * someone else held it all that time.
 */
static int flock_path(const char *path, const char *what, int wait)
{
	struct timespec t0, now;
	struct stat a, b;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			err("cannot open %s (%s): %s", path, what, strerror(errno));
			return -errno;
		}
		if (!flock(fd, LOCK_EX | LOCK_NB)) {
			if (!stat(path, &a) && !fstat(fd, &b) &&
			    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
				return fd;
			close(fd);
			continue;
		}
		close(fd);
		if (errno != EWOULDBLOCK) {
			err("cannot lock %s (%s): %s", path, what, strerror(errno));
			return -errno;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= wait) {
			err("%s is held by another command (%s); gave up after %d s",
			    what, path, wait);
			return -EBUSY;
		}
		usleep(100000);
	}
}

/*
 * The lock for changing D's table: LVM's own lock of its VG for an LV (no
 * LVM command runs on the VG meanwhile, and we wait for any that does),
 * else one of ours for this device alone.  PATH gets the lock's path.
 */
int lock_dev(const struct opts *o, const struct dev *d, char *path, size_t size)
{
	char what[DM_NAME_LEN + 32];
	const char *dir;

	if (!d->vg[0]) {
		snprintf(path, size, "%s/lock-%u_%u", o->state_dir, d->info.major,
			 d->info.minor);
		return flock_path(path, "another fastlinearctl on this device",
				  o->lock_wait);
	}
	dir = lvm_lock_dir();
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err("cannot create LVM's lock directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	snprintf(path, size, "%s/V_%s", dir, d->vg);
	snprintf(what, sizeof(what), "LVM's lock of VG %s", d->vg);
	return flock_path(path, what, o->lock_wait);
}

/* release like lvm2's _undo_flock(): unlink if nobody else waits */
void unlock_dev(const char *path, int fd)
{
	struct stat a, b;

	if (fd < 0)
		return;
	if (!flock(fd, LOCK_NB | LOCK_EX) && !stat(path, &a) && !fstat(fd, &b) &&
	    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
		unlink(path);
	close(fd);
}

/*
 * PREFIX and the name or UUID S as one file name: bytes other than
 * [A-Za-z0-9._+-] as %XX.  A UUID of 128 bytes can need 384: past
 * NAME_MAX the escaped form is cut and "~" and a 64-bit FNV-1a hash of
 * the whole of S end it, so two ids still make two names.  Silent;
 * -ENAMETOOLONG only if SIZE cannot hold NAME_MAX + 1.
 */
int escape_name(const char *prefix, const char *s, char *out, size_t size)
{
	static const char ok[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-";
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t n, full = strlen(prefix), max;
	const char *p;

	if (size < NAME_MAX + 1)
		return -ENAMETOOLONG;
	for (p = s; *p; p++) {
		full += strchr(ok, *p) ? 1 : 3;
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	}
	/* the cut form ends in "~" and 16 hex digits */
	max = full <= NAME_MAX ? NAME_MAX : NAME_MAX - 17;
	n = snprintf(out, size, "%.*s", (int)max, prefix);
	for (p = s; *p && n + (strchr(ok, *p) ? 1 : 3) <= max; p++) {
		if (strchr(ok, *p))
			out[n++] = *p;
		else
			n += snprintf(out + n, size - n, "%%%02X", (unsigned char)*p);
	}
	out[n] = 0;
	if (full > NAME_MAX)
		snprintf(out + n, size - n, "~%016llx", (unsigned long long)h);
	return 0;
}

static int mark_path(const struct opts *o, const struct dev *d, char *path, size_t size)
{
	char file[NAME_MAX + 1];
	int n;

	escape_name(d->uuid[0] ? "uuid-" : "name-", d->uuid[0] ? d->uuid : d->name,
		    file, sizeof(file));
	n = snprintf(path, size, "%s/%s", o->state_dir, file);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

void mark(const struct opts *o, const struct dev *d, bool converted)
{
	char path[PATH_MAX];
	FILE *f;

	if (mark_path(o, d, path, sizeof(path)))
		return;
	if (!converted) {
		unlink(path);
		return;
	}
	f = fopen(path, "we");
	if (!f) {
		err("%s: cannot record the conversion in %s: %s", d->name, path,
		    strerror(errno));
		return;
	}
	fprintf(f, "%s %u:%u %ld\n", d->name, d->info.major, d->info.minor,
		(long)time(NULL));
	if (fclose(f))
		err("%s: cannot record the conversion in %s: %s", d->name, path,
		    strerror(errno));
}

bool marked(const struct opts *o, const struct dev *d)
{
	char path[PATH_MAX];

	return !mark_path(o, d, path, sizeof(path)) && !access(path, F_OK);
}
