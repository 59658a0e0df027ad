// SPDX-License-Identifier: GPL-2.0-only
/*
 * Convert and revert: find the device, lock it, and swap its table in
 * one load, suspend and resume, with everything the resume needs made
 * before the suspend, and a way back (recover()) from every failed step.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

#ifndef FL_MODPROBE
#define FL_MODPROBE	"/sbin/modprobe"
#endif

/* dm-N: the kernel's name of a dm device */
bool is_kname(const char *s)
{
	return !strncmp(s, "dm-", 3) && s[3] && strspn(s + 3, "0123456789") == strlen(s + 3);
}

/* the dm device of kernel name KNAME, by its dev_t */
static int by_kname(const char *kname, struct dev *d)
{
	char path[PATH_MAX];
	unsigned int major, minor;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/block/%s/dev", kname);
	f = fopen(path, "re");
	if (!f)
		return -ENODEV;
	n = fscanf(f, "%u:%u", &major, &minor);
	fclose(f);
	return n == 2 ? dm_info_by_devt(major, minor, d) : -ENODEV;
}

/*
 * DEV as the user gave it: a block device node of a dm device
 * (/dev/dm-N, /dev/VG/LV, /dev/mapper/NAME), dm-N (the kernel's name, before
 * any dm name), a dm name, VG/LV, or a dm UUID.  Fills D, the pin every
 * later step checks against.  Returns 0, -ENODEV (no such device), or
 * another -errno (the devices could not be listed: said, and no reason
 * to think it gone).
 */
int resolve(const char *arg, struct dev *d)
{
	const char *slash = strchr(arg, '/'), *base = strrchr(arg, '/');
	struct dev *devs;
	struct stat st;
	int i, n, ret = -ENODEV;

	base = base ? base + 1 : arg;
	if (arg[0] == '/' && !stat(arg, &st) && S_ISBLK(st.st_mode))
		return dm_info_by_devt(major(st.st_rdev), minor(st.st_rdev), d);
	if (is_kname(base) && (base == arg || !strncmp(arg, "/dev/", 5)))
		return by_kname(base, d);
	/* the node may be missing (no udev): the name is in the path */
	if (!strncmp(arg, "/dev/mapper/", 12) && !strchr(arg + 12, '/'))
		return dm_info_by_name(arg + 12, d);
	if (!slash && !dm_info_by_name(arg, d))
		return 0;
	n = dm_list_devs(&devs);
	if (n < 0)
		return n;
	for (i = 0; i < n && ret; i++) {
		const struct dev *c = &devs[i];

		if (!strcmp(c->uuid, arg) ||
		    (slash && c->vg[0] && !c->layer[0] &&
		     (size_t)(slash - arg) == strlen(c->vg) &&
		     !strncmp(arg, c->vg, slash - arg) && !strcmp(slash + 1, c->lv))) {
			*d = *c;
			ret = 0;
		}
	}
	free(devs);
	return ret;
}

/* the target is there, or modprobe (at its fixed path) loads it */
static bool target_available(void)
{
	int st;
	pid_t pid;

	if (dm_target_known(FL_TARGET))
		return true;
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(FL_MODPROBE, "modprobe", "-q", "dm-fastlinear", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return false;
	return dm_target_known(FL_TARGET);
}

/* ---- the window from the udev cookie to resume ----------------------- */

static sigset_t saved_mask;

/*
 * No signal ends us between the resume's udev cookie (a semaphore left
 * behind if we die) and the resume: a SIGTERM (systemd stopping the unit,
 * timeout, Ctrl-C) is delivered once the device runs again with one of
 * its two tables.  Messages are held too (log.c).
 */
static void critical_begin(void)
{
	sigset_t all;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &saved_mask);
	hold_begin();
}

static void critical_end(void)
{
	hold_end();
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

/*
 * While the device is suspended, a page-in from it (root or swap on the
 * LV) would wait for the resume that only we can do: as lvm2 does
 * (lib/mm/memlock.c), touch a reserve of stack and heap first, keep the
 * heap from being trimmed or mmapped away, and lock it all in.
 */
static void memory_lock(void)
{
	volatile char stack[64 * 1024];
	const size_t reserve = 1 << 20;
	char *heap;
	size_t i;

	for (i = 0; i < sizeof(stack); i += 4096)
		stack[i] = 0;
	mallopt(M_TRIM_THRESHOLD, -1);
	mallopt(M_MMAP_MAX, 0);
	heap = malloc(reserve);
	/*
	 * Volatile stores: a memset() of memory freed unread is dead code
	 * to the compiler, and GCC then drops the malloc() and free() too
	 * (the reserve was never made: 132 kB of heap locked, the initial
	 * size, where 1 MiB was meant).
	 */
	for (i = 0; heap && i < reserve; i += 4096)
		((volatile char *)heap)[i] = 0;
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		err("warning: cannot lock memory (%s): a page-in from a suspended device would hang",
		    strerror(errno));
	free(heap);
}

/*
 * After the resume the device runs: a signal may end us again, but must
 * not leave the resume's udev cookie behind (a semaphore nobody would
 * ever remove).  The handler removes it, then dies of the signal.
 */
static uint32_t waited_cookie;

static void cookie_signal(int sig)
{
	int id = waited_cookie ? semget((key_t)waited_cookie, 1, 0) : -1;

	if (id >= 0)
		semctl(id, 0, IPC_RMID);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void wait_udev(struct resume *r)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = cookie_signal }, old[4];
	size_t i;

	waited_cookie = r->cookie;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 4; i++)
		sigaction(sigs[i], &sa, &old[i]);
	critical_end();
	resume_wait(r);
	for (i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	waited_cookie = 0;
}

/* the inactive table D has is WANT, ours: the only one we may clear */
static bool inactive_is(const struct dev *d, const struct table *want)
{
	struct table t;
	bool same;

	if (dm_read(d, DM_DEVICE_TABLE, true, &t))
		return false;
	same = table_equal(&t, want);
	table_free(&t);
	return same;
}

/*
 * After a failed step: no inactive table of ours left, the device not
 * suspended.  Each step is tried again with a pause, as a failed ioctl
 * may not fail again: the resume prepared before the suspend first, then
 * resumes with a cookie of their own, then, in the last half, without a
 * cookie (a semaphore may be what fails).  Another tool's inactive table
 * is left as it is, and a suspended device is never resumed over it.
 * Returns -EIO (failed, the device runs), -ENODEV (it went away) or
 * -ELEFT_SUSPENDED.
 */
static int recover(const struct dev *d, const struct table *want,
		   uint16_t flags, struct resume *r)
{
	const int tries = 8;
	struct resume again;
	struct dev now;
	int i, ret;

	for (i = 0; i < tries; i++) {
		if (i)
			usleep(25000 << (i - 1));
		ret = dm_refresh(d, &now);
		if (ret == -ENODEV || ret == -ESTALE) {
			resume_drop(r);
			err("%s: the device went away", d->name);
			return -ENODEV;
		}
		if (ret)
			continue;
		if (!now.info.inactive_table && !now.info.suspended) {
			resume_drop(r);
			return -EIO;
		}
		if (now.info.inactive_table) {
			if (inactive_is(d, want)) {
				dm_clear(d);
			} else if (!now.info.suspended) {
				err("%s: someone else loaded an inactive table over ours (left as it is)",
				    d->name);
				resume_drop(r);
				return -EIO;
			} else {
				break;	/* someone else's table would go live */
			}
		} else if (r->dmt) {
			resume_run(d, r);
			resume_wait(r);
		} else if (i < tries / 2 && !resume_prepare(d, flags, &again)) {
			resume_run(d, &again);
			resume_wait(&again);
		} else {
			dm_resume_plain(d);
		}
	}
	resume_drop(r);
	if (!dm_refresh(d, &now) && !now.info.suspended && !now.info.inactive_table)
		return -EIO;
	err("%s: CANNOT RESUME: it may be left suspended; run 'dmsetup resume %s' (and 'dmsetup clear %s' first if it has an inactive table of ours)",
	    d->name, d->name, d->name);
	return -ELEFT_SUSPENDED;
}

/*
 * Say which table is live after a failed step, as it is: the old one, the
 * new one (a resume that failed after the kernel had swapped the tables),
 * or something else.  Returns true when the new one is.
 */
static bool report_live(const struct dev *d, const struct table *old,
			const struct table *want, const char *from, const char *to)
{
	struct table t;
	bool now_new = false;

	if (dm_read(d, DM_DEVICE_TABLE, false, &t)) {
		err("%s: its live table is unknown", d->name);
		return false;
	}
	if (table_equal(&t, old)) {
		err("%s: the old table (%s) is live", d->name, from);
	} else if (table_equal(&t, want)) {
		err("%s: the new table (%s) is live", d->name, to);
		now_new = true;
	} else {
		err("%s: the live table is neither the old nor the new one (changed by someone else)",
		    d->name);
	}
	table_free(&t);
	return now_new;
}

/*
 * Nobody changed the live table, or loaded over ours, since we read it:
 * 0, or -errno with a message.
 */
static int tables_unchanged(const struct dev *d, const struct table *live,
			    const struct table *want)
{
	struct table t;
	bool same;
	int ret;

	ret = dm_read(d, DM_DEVICE_TABLE, false, &t);
	if (ret)
		return ret;
	same = table_equal(&t, live);
	table_free(&t);
	if (!same) {
		err("%s: refused: its table changed while it was being converted", d->name);
		return -EAGAIN;
	}
	ret = dm_read(d, DM_DEVICE_TABLE, true, &t);
	if (ret)
		return ret;
	same = table_equal(&t, want);
	table_free(&t);
	if (!same)
		err("%s: refused: someone else loaded an inactive table over ours (left as it is)",
		    d->name);
	return same ? 0 : -EAGAIN;
}

/* what a swap needs besides the tables: taken before anything changes */
struct swap_ctx {
	bool read_only;
	int read_ahead;		/* KiB, or -1: not known, not restored */
	uint16_t flags;
	struct resume r;
};

static int swap_prepare(const struct dev *d, struct swap_ctx *c)
{
	int ret = table_read_only(d, &c->read_only);

	if (ret) {
		err("%s: refused: cannot tell whether its table is read-only: %s",
		    d->name, strerror(-ret));
		return ret;
	}
	c->read_ahead = read_ahead_get(d);
	c->flags = dev_udev_flags(d);
	/* from the cookie's semaphore on, a signal would leave it behind */
	critical_begin();
	ret = resume_prepare(d, c->flags, &c->r);
	if (ret) {
		critical_end();
		err("%s: refused: cannot make the udev cookie for its resume (a semaphore: see kernel.sem); nothing was changed",
		    d->name);
	}
	return ret;
}

/*
 * Load WANT, check nobody changed anything meanwhile, suspend, resume:
 * signals blocked and messages held throughout (critical_begin(), from
 * swap_prepare()), memory locked while the device may be suspended.  On
 * success the signals stay blocked and messages held for swap_finish().
 * Returns 0, -EIO (failed, the device runs), -ENODEV or -ELEFT_SUSPENDED.
 */
static int swap_tables(const struct dev *d, const struct table *live,
		       const struct table *want, struct swap_ctx *c)
{
	struct dev now;
	int ret;

	/* another tool's inactive table, loaded since the first look */
	ret = dm_refresh(d, &now);
	if (!ret && diskseq_get(&now) != d->diskseq)
		ret = -ESTALE;
	if (!ret && now.info.inactive_table) {
		err("%s: refused: the device has an inactive table loaded by someone else (left as it is)",
		    d->name);
		ret = -EBUSY;
	}
	if (ret) {
		resume_drop(&c->r);
		critical_end();
		return ret == -ENODEV || ret == -ESTALE ? -ENODEV : ret;
	}
	ret = dm_load(d, want, c->read_only);
	if (ret) {
		err("%s: loading the %s table failed (see dmesg)", d->name,
		    want->segs[0].type);
		goto fail;
	}
	ret = tables_unchanged(d, live, want);
	if (ret)
		goto fail;
	memory_lock();
	ret = dm_suspend(d);
	if (ret) {
		err("%s: suspend failed", d->name);
		goto fail_unlock;
	}
	ret = resume_run(d, &c->r);
	if (!ret)
		return 0;
	resume_wait(&c->r);
	err("%s: resume failed", d->name);
fail_unlock:
	/* locked until the device runs */
	ret = recover(d, want, c->flags, &c->r);
	munlockall();
	critical_end();
	return ret;
fail:
	ret = recover(d, want, c->flags, &c->r);
	critical_end();
	return ret;
}

/*
 * The device runs with WANT: the read-ahead it had back (a table swap
 * resets it), the mark once the live table is checked to be ours, and
 * udev's handling of the resume waited for, with signals allowed again.
 */
static int swap_finish(const struct opts *o, const struct dev *d,
		       const struct table *want, struct swap_ctx *c, bool converted)
{
	struct table now;
	int ret;

	munlockall();
	if (c->read_ahead >= 0 && read_ahead_get(d) != c->read_ahead &&
	    read_ahead_set(d, c->read_ahead))
		err("%s: warning: cannot set its read-ahead back to %d KiB", d->name,
		    c->read_ahead);
	ret = dm_read(d, DM_DEVICE_TABLE, false, &now);
	if (ret) {
		err("%s: the new table (%s) is live (the resume succeeded), but reading it back failed",
		    d->name, converted ? "fastlinear" : "linear");
	} else if (!table_equal(&now, want)) {
		err("%s: after the resume the live table is not the one loaded (changed by someone else)",
		    d->name);
		ret = -EAGAIN;
	} else {
		mark(o, d, converted);
	}
	table_free(&now);
	wait_udev(&c->r);
	return ret ? -EIO : 0;
}

/*
 * What the device is once we hold its lock: the same one, unchanged.
 * 1 go on (D refreshed), 0 nothing to do, -errno refused.
 */
static int relook(const struct opts *o, const char *arg, struct dev *d)
{
	struct dev now;
	int ret = dm_refresh(d, &now);

	if (ret == -ENODEV || ret == -ESTALE) {
		if (o->configured_only) {
			/* a new device there has an event, and a job, of its own */
			msg("%s: gone: nothing to do\n", arg);
			return 0;
		}
		err("%s: refused: the device went away, or is another one now, while waiting for its lock",
		    arg);
		return -ENODEV;
	}
	if (ret) {
		err("%s: cannot read its state", d->name);
		return ret;
	}
	if (strcmp(now.name, d->name)) {
		err("%s: refused: renamed to %s while waiting for its lock", d->name, now.name);
		return -ESTALE;
	}
	now.diskseq = diskseq_get(&now);
	if (now.diskseq != d->diskseq) {
		err("%s: refused: the device went away, or is another one now, while waiting for its lock",
		    arg);
		return -ESTALE;
	}
	*d = now;
	return 1;
}

/*
 * Whether D is one for us: not a layer of LVM's, configured when only
 * the configured are asked for.  1 yes, 0 not ours (said when the user
 * named it), -errno refused.
 */
static int eligible(const struct opts *o, const struct dev *d)
{
	if (is_lvm_layer(d)) {
		if (o->configured_only)
			return 0;
		err("%s: refused: an LVM internal layer (a sub-LV of VG %s): LVM's alone; name its top-level LV",
		    d->name, d->vg[0] ? d->vg : "?");
		return -EPERM;
	}
	return !o->configured_only || config_matches(o->conf, d);
}

/* the checks of the device's state, under its lock: 1 go on, 0 done, -errno */
static int ready_to_swap(const struct opts *o, const struct dev *d)
{
	int pvmove = d->vg[0] ? vg_has_pvmove(d->vg) : 0;

	if (pvmove < 0) {
		err("%s: refused: cannot tell whether a pvmove is in progress in VG %s",
		    d->name, d->vg);
		return pvmove;
	}
	if (pvmove) {
		if (o->configured_only) {
			/* LVM reloads it when the move ends: udev queues us again */
			msg("%s: skipped: a pvmove is in progress in VG %s\n", d->name, d->vg);
			return 0;
		}
		err("%s: refused: a pvmove is in progress in VG %s (run it again when it is done)",
		    d->name, d->vg);
		return -EBUSY;
	}
	if (!d->info.live_table) {
		err("%s: refused: the device has no live table", d->name);
		return -EINVAL;
	}
	if (d->info.suspended) {
		err("%s: refused: the device is suspended (resume it, or let the command that suspended it finish)",
		    d->name);
		return -EBUSY;
	}
	if (d->info.inactive_table) {
		err("%s: refused: the device has an inactive table loaded by someone else (left as it is)",
		    d->name);
		return -EBUSY;
	}
	return 1;
}

static void print_table(const char *what, const struct table *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		msg("  %s %" PRIu64 " %" PRIu64 " %s %s\n", what, t->segs[i].start,
		    t->segs[i].len, t->segs[i].type, t->segs[i].params);
}

/* the swap itself, D locked and checked: 0 or -errno */
static int swap_locked(const struct opts *o, const struct dev *d, enum op op)
{
	const char *from = op == OP_CONVERT ? "linear" : FL_TARGET;
	const char *to = op == OP_CONVERT ? FL_TARGET : "linear";
	const char *verb = op == OP_CONVERT ? "convert" : "revert";
	struct table live = { 0 }, want = { 0 };
	struct swap_ctx c = { 0 };
	int changed, ret;

	ret = dm_read(d, DM_DEVICE_TABLE, false, &live);
	if (ret)
		return ret;
	changed = table_rewrite(&live, from, to, &want);
	ret = changed < 0 ? changed : 0;
	if (ret) {
		err("%s: out of memory", d->name);
		goto out;
	}
	if (!changed) {
		if (table_count(&live, to))
			msg("%s: already %s: nothing to do\n", d->name, to);
		else if (!o->configured_only) {
			/* configured: a snapshot origin, a mirror... not ours to touch */
			err("%s: refused: no %s segment in its table (%d segment(s), first: %s)",
			    d->name, from, live.n, live.n ? live.segs[0].type : "none");
			ret = -EINVAL;
		}
		goto out;
	}
	if (o->dry_run) {
		msg("%s: would %s %d of %d segment(s) (dev %u:%u%s)\n", d->name, verb,
		    changed, live.n, d->info.major, d->info.minor,
		    d->info.read_only ? ", read-only" : "");
		print_table("-", &live);
		print_table("+", &want);
		goto out;
	}
	if (op == OP_CONVERT && !target_available()) {
		err("%s: refused: the %s target is not loaded and 'modprobe dm-fastlinear' failed",
		    d->name, FL_TARGET);
		ret = -ENOENT;
		goto out;
	}
	ret = swap_prepare(d, &c);
	if (ret)
		goto out;
	ret = swap_tables(d, &live, &want, &c);
	if (ret == -EIO) {
		/* a resume may fail after the kernel swapped the tables */
		if (report_live(d, &live, &want, from, to))
			mark(o, d, op == OP_CONVERT);
		goto out;
	}
	if (ret)
		goto out;
	ret = swap_finish(o, d, &want, &c, op == OP_CONVERT);
	if (!ret)
		msg("%s: %sed %d of %d segment(s) to %s (dev %u:%u%s)\n", d->name, verb,
		    changed, live.n, to, d->info.major, d->info.minor,
		    c.read_only ? ", read-only" : "");
out:
	table_free(&live);
	table_free(&want);
	return ret;
}

/*
 * Convert (from "linear" to "fastlinear") or revert one device, ARG as
 * the user named it or LISTED as the one list of a run found it.  Returns
 * 0 (done, or nothing to do), -ELEFT_SUSPENDED, or another -errno
 * (refused or failed: the device runs, with its old or its new table, and
 * no inactive table of ours).
 */
int swap_one(const struct opts *o, const char *arg, const struct dev *listed,
	     enum op op)
{
	char lock[PATH_MAX];
	int lockfd = -1, ret;
	struct dev d;

	if (listed) {
		d = *listed;
	} else {
		ret = resolve(arg, &d);
		if (ret == -ENODEV && o->configured_only) {
			/* a udev job for a device removed meanwhile */
			msg("%s: gone: nothing to do\n", arg);
			return 0;
		}
		if (ret == -ENODEV)
			err("%s: no such device-mapper device", arg);
		if (ret)
			return ret;
	}
	d.diskseq = diskseq_get(&d);
	ret = eligible(o, &d);
	if (ret <= 0)
		return ret;
	if (!o->dry_run) {
		ret = state_dir_ok(o);
		if (ret)
			return ret;
		lockfd = lock_dev(o, &d, lock, sizeof(lock));
		if (lockfd == -EBUSY && d.vg[0])
			err("%s: refused: an LVM command holds VG %s", d.name, d.vg);
		else if (lockfd == -EBUSY)
			err("%s: refused: another fastlinearctl holds it", d.name);
		else if (lockfd < 0)
			err("%s: refused: cannot take its lock", d.name);
		if (lockfd < 0)
			return lockfd;
		/* what it is now that nobody else changes it */
		ret = relook(o, arg, &d);
		if (ret > 0)
			ret = eligible(o, &d);
		if (ret <= 0)
			goto out;
	}
	ret = ready_to_swap(o, &d);
	if (ret > 0)
		ret = swap_locked(o, &d, op);
out:
	if (lockfd >= 0)
		unlock_dev(lock, lockfd);
	return ret < 0 ? ret : 0;
}
