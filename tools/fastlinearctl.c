// SPDX-License-Identifier: GPL-2.0-only
/*
 * fastlinearctl: convert live linear device-mapper tables (LVM logical
 * volumes or any other dm device) to the fastlinear target and back, with
 * libdevmapper: one table load, suspend, resume; same device, same dev_t.
 *
 *   fastlinearctl [OPTIONS] convert DEV...|--all-lvm|--configured [DEV...]
 *   fastlinearctl [OPTIONS] revert  DEV...|--all-lvm
 *   fastlinearctl [OPTIONS] status  [DEV...] [--json]
 *   fastlinearctl [OPTIONS] udev-gate [--job] dm-N   (95-fastlinear.rules)
 *
 * DEV: a dm name, /dev/mapper/NAME, /dev/dm-N, dm-N, /dev/VG/LV, VG/LV or
 * a dm UUID.  Exit status: 0 done (or nothing to do), 1 refused or failed
 * (every device left running, with its old or its new table), 2 usage,
 * 3 a device could not be resumed.  fastlinearctl(8) has the rest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <libudev.h>
#include <linux/dm-ioctl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef FL_SYSCONFDIR
#define FL_SYSCONFDIR	"/etc/fastlinear"
#endif
#ifndef FL_VERSION
#define FL_VERSION	"unknown"
#endif

#define FL_TARGET	"fastlinear"
#define FL_CONF		FL_SYSCONFDIR "/fastlinear.conf"
#define FL_STATE_DIR	"/run/fastlinear"
#define LVM_LOCK_DIR	"/run/lock/lvm"	/* lvm2's compiled-in default */
#define LVM_UUID_LEN	(4 + 32 + 32)	/* "LVM-" VG uuid LV uuid */
#define JSON_FORMAT	1
#define MAX_WAIT	86400

enum op { OP_CONVERT, OP_REVERT, OP_STATUS, OP_GATE };
enum { EXIT_DONE, EXIT_FAILED, EXIT_USAGE, EXIT_SUSPENDED };

static bool dry_run, json, quiet, configured_only, all_lvm, gate_job;
static int lock_wait = 10;		/* seconds to wait for a lock */
static const char *conf_path = FL_CONF;
static const char *state_dir = FL_STATE_DIR;
static const char *prog = "fastlinearctl";

struct seg {
	uint64_t start, len;
	char *type, *params;
};

struct table {
	struct seg *segs;
	int n;
};

struct dev {
	char name[DM_NAME_LEN];
	char uuid[DM_UUID_LEN];
	struct dm_info info;
	char vg[DM_NAME_LEN], lv[DM_NAME_LEN], layer[DM_NAME_LEN];
};

/* ---- messages ----------------------------------------------------------- */

/*
 * While a device of ours may be suspended, nothing is written: stderr may
 * be a file on the suspended device, and the write would never return.
 * Messages wait in HELD and go out once the device runs again.
 */
static bool holding;
static char held[16384];
static size_t held_len;

static void vsay(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
	int n;

	if (!holding) {
		fputs(prefix, f);
		vfprintf(f, fmt, ap);
		fflush(f);
		return;
	}
	n = snprintf(held + held_len, sizeof(held) - held_len, "%s", prefix);
	if (n > 0 && (size_t)n < sizeof(held) - held_len)
		held_len += n;
	n = vsnprintf(held + held_len, sizeof(held) - held_len, fmt, ap);
	if (n > 0)
		held_len = (size_t)n < sizeof(held) - held_len ? held_len + n :
			   sizeof(held) - 1;
}

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vsay(stdout, "", fmt, ap);
	va_end(ap);
}

static void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err(const char *fmt, ...)
{
	char prefix[64];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s: ", prog);
	va_start(ap, fmt);
	vsay(stderr, prefix, fmt, ap);
	va_end(ap);
	if (holding) {
		if (held_len < sizeof(held) - 1)
			held[held_len++] = '\n';
		held[held_len] = 0;
	} else {
		fputc('\n', stderr);
	}
}

/* libdevmapper's errors and warnings, held like ours */
static void dm_logger(int level, const char *file, int line, int dm_errno,
		      const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void dm_logger(int level, const char *file, int line, int dm_errno,
		      const char *fmt, ...)
{
	va_list ap;

	(void)file;
	(void)line;
	(void)dm_errno;
	if ((level & 7) > 4)	/* below _LOG_WARN */
		return;
	va_start(ap, fmt);
	vsay(stderr, "", fmt, ap);
	va_end(ap);
	if (holding) {
		if (held_len < sizeof(held) - 1)
			held[held_len++] = '\n';
		held[held_len] = 0;
	} else {
		fputc('\n', stderr);
	}
}

/* ---- the window from table load to resume -------------------------------- */

static sigset_t saved_mask;

/*
 * No signal ends us between the table load and the resume: a SIGTERM
 * (systemd stopping the unit, timeout, Ctrl-C) is delivered once the
 * device runs again with one of its two tables.
 */
static void critical_begin(void)
{
	sigset_t all;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &saved_mask);
	holding = true;
}

static void critical_end(void)
{
	holding = false;
	fputs(held, stderr);
	fflush(stderr);
	held_len = 0;
	held[0] = 0;
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

/*
 * While the device is suspended, a page-in from it (root or swap on the
 * LV) would wait for the resume that only we can do: lock our memory in,
 * as lvm2 does around its suspends.
 */
static void memory_lock(void)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		err("warning: cannot lock memory (%s): a page-in from a suspended device would hang",
		    strerror(errno));
}

/* ---- tables ---------------------------------------------------------- */

static void table_free(struct table *t)
{
	int i;

	for (i = 0; i < t->n; i++) {
		free(t->segs[i].type);
		free(t->segs[i].params);
	}
	free(t->segs);
	t->segs = NULL;
	t->n = 0;
}

static int table_add(struct table *t, uint64_t start, uint64_t len,
		     const char *type, const char *params)
{
	struct seg *s = realloc(t->segs, (t->n + 1) * sizeof(*s));

	if (!s)
		return -1;
	t->segs = s;
	s = &t->segs[t->n++];
	s->start = start;
	s->len = len;
	s->type = strdup(type ? type : "");
	s->params = strdup(params ? params : "");
	return s->type && s->params ? 0 : -1;
}

static bool table_equal(const struct table *a, const struct table *b)
{
	int i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->segs[i].start != b->segs[i].start ||
		    a->segs[i].len != b->segs[i].len ||
		    strcmp(a->segs[i].type, b->segs[i].type) ||
		    strcmp(a->segs[i].params, b->segs[i].params))
			return false;
	return true;
}

static int table_count(const struct table *t, const char *type)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		n += !strcmp(t->segs[i].type, type);
	return n;
}

static int dm_read_once(const char *name, int task, bool inactive, struct table *t)
{
	struct dm_task *dmt;
	void *next = NULL;
	uint64_t start, len;
	char *type, *params;
	int ret = -1;

	dmt = dm_task_create(task);
	if (!dmt || !dm_task_set_name(dmt, name))
		goto out;
	if (inactive && !dm_task_query_inactive_table(dmt))
		goto out;
	if (!dm_task_run(dmt))
		goto out;
	do {
		next = dm_get_next_target(dmt, next, &start, &len, &type, &params);
		if (type && table_add(t, start, len, type, params))
			goto out;
	} while (next);
	ret = 0;
out:
	if (dmt)
		dm_task_destroy(dmt);
	if (ret)
		table_free(t);
	return ret;
}

/*
 * Read the live (or inactive) table, or the status lines (DM_DEVICE_STATUS)
 * of device NAME into T, trying twice: a read that fails once must not
 * leave us unable to say which table is live.  Returns 0, or -1 with a
 * message.
 */
static int dm_read(const char *name, int task, bool inactive, struct table *t)
{
	t->segs = NULL;
	t->n = 0;
	if (!dm_read_once(name, task, inactive, t) ||
	    !dm_read_once(name, task, inactive, t))
		return 0;
	err("%s: cannot read its %s", name, task == DM_DEVICE_STATUS ? "status" :
	    inactive ? "inactive table" : "table");
	return -1;
}

/* ---- devices --------------------------------------------------------- */

static int dev_info_once(const char *name, struct dev *d)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_INFO);
	const char *s;
	int ret = -1;

	memset(d, 0, sizeof(*d));
	if (!dmt || !dm_task_set_name(dmt, name) || !dm_task_run(dmt) ||
	    !dm_task_get_info(dmt, &d->info) || !d->info.exists)
		goto out;
	snprintf(d->name, sizeof(d->name), "%s", dm_task_get_name(dmt));
	s = dm_task_get_uuid(dmt);
	snprintf(d->uuid, sizeof(d->uuid), "%s", s ? s : "");
	if (!strncmp(d->uuid, "LVM-", 4)) {
		struct dm_pool *mem = dm_pool_create("fastlinearctl", 256);
		char *vg, *lv, *layer;

		if (mem && dm_split_lvm_name(mem, d->name, &vg, &lv, &layer)) {
			snprintf(d->vg, sizeof(d->vg), "%s", vg);
			snprintf(d->lv, sizeof(d->lv), "%s", lv);
			snprintf(d->layer, sizeof(d->layer), "%s", layer);
		}
		if (mem)
			dm_pool_destroy(mem);
	}
	ret = 0;
out:
	if (dmt)
		dm_task_destroy(dmt);
	return ret;
}

/* the device's state, tried twice (see dm_read) */
static int dev_info(const char *name, struct dev *d)
{
	return dev_info_once(name, d) && dev_info_once(name, d) ? -1 : 0;
}

/*
 * A logical volume as the user sees it: not a layer (-real, -cow: a dm
 * name suffix and a UUID suffix) nor a sub-LV, whose names lvm2 reserves
 * (lib/metadata/lv_manip.c: apply_lvname_restrictions()).
 */
static bool is_top_lv(const struct dev *d)
{
	static const char * const reserved[] = {
		"_cdata", "_cmeta", "_corig", "_cpool", "_cvol", "_imeta",
		"_iorig", "_mimage", "_mlog", "_pmspare", "_rimage", "_rmeta",
		"_tdata", "_tmeta", "_tpool", "_vdata", "_vorigin", "_vpool",
		"_wcorig",
	};
	size_t i;

	if (!d->vg[0] || d->layer[0] || strlen(d->uuid) != LVM_UUID_LEN ||
	    !strncmp(d->lv, "pvmove", 6) || !strncmp(d->lv, "snapshot", 8))
		return false;
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strstr(d->lv, reserved[i]))
			return false;
	return true;
}

/* a device of LVM's that is not a top-level LV: LVM's alone, always */
static bool is_lvm_layer(const struct dev *d)
{
	return !strncmp(d->uuid, "LVM-", 4) && !is_top_lv(d);
}

static void names_free(char **names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int dm_list_once(char ***names)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_LIST);
	struct dm_names *nl;
	unsigned int next = 0;
	char **more;
	int n = 0;

	*names = calloc(1, sizeof(char *));
	if (!dmt || !*names || !dm_task_run(dmt))
		goto fail;
	nl = dm_task_get_names(dmt);
	if (!nl)
		goto fail;
	if (!nl->dev)
		goto out;
	do {
		nl = (struct dm_names *)((char *)nl + next);
		more = realloc(*names, (n + 2) * sizeof(char *));
		if (!more)
			goto fail;
		*names = more;
		(*names)[n] = strdup(nl->name);
		if (!(*names)[n])
			goto fail;
		(*names)[++n] = NULL;
		next = nl->next;
	} while (next);
out:
	dm_task_destroy(dmt);
	return n;
fail:
	if (dmt)
		dm_task_destroy(dmt);
	names_free(*names, n);
	*names = NULL;
	return -1;
}

/*
 * Every dm device name, in *names (NULL-terminated); returns the count,
 * or -1 with a message.  Tried twice, as the reads (dm_read): a list cut
 * short would make a VG's pvmove or a device the user named look absent.
 */
static int dm_list(char ***names)
{
	int n = dm_list_once(names);

	if (n < 0)
		n = dm_list_once(names);
	if (n < 0)
		err("cannot list the dm devices");
	return n;
}

/* the dm device whose sysfs folder holds PATH (.../dm/name) */
static int dev_info_sysfs(const char *path, struct dev *d)
{
	char buf[DM_NAME_LEN + 2];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return dev_info(buf, d);
}

/* dm-N: the kernel's name of a dm device */
static bool is_kname(const char *s)
{
	return !strncmp(s, "dm-", 3) && s[3] && strspn(s + 3, "0123456789") == strlen(s + 3);
}

/*
 * DEV as the user gave it: a dm name, /dev/mapper/NAME, /dev/dm-N, dm-N or
 * any block device node of a dm device (/dev/VG/LV), VG/LV, or a dm UUID.
 * Fills D; returns 0, -1 (no such device) or -2 (the devices could not
 * be listed: said, and no reason to think it gone).
 */
static int resolve(const char *arg, struct dev *d)
{
	const char *slash = strchr(arg, '/'), *base = strrchr(arg, '/');
	char **names, path[PATH_MAX];
	struct stat st;
	int i, n, ret = -1;

	base = base ? base + 1 : arg;
	if (arg[0] == '/' && !stat(arg, &st) && S_ISBLK(st.st_mode)) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/dm/name",
			 major(st.st_rdev), minor(st.st_rdev));
		return dev_info_sysfs(path, d);
	}
	if (!slash && !dev_info(arg, d))
		return 0;
	/* the node may be missing (no udev): the name is in the path */
	if (!strncmp(arg, "/dev/mapper/", 12) && !strchr(arg + 12, '/'))
		return dev_info(arg + 12, d);
	if (is_kname(base) && (base == arg || !strncmp(arg, "/dev/", 5))) {
		snprintf(path, sizeof(path), "/sys/block/%s/dm/name", base);
		return dev_info_sysfs(path, d);
	}
	n = dm_list(&names);
	if (n < 0)
		return -2;
	for (i = 0; i < n && ret; i++) {
		struct dev c;

		if (dev_info(names[i], &c))
			continue;
		if (!strcmp(c.uuid, arg) ||
		    (slash && c.vg[0] && !c.layer[0] &&
		     (size_t)(slash - arg) == strlen(c.vg) &&
		     !strncmp(arg, c.vg, slash - arg) && !strcmp(slash + 1, c.lv))) {
			*d = c;
			ret = 0;
		}
	}
	names_free(names, n);
	return ret;
}

/* whether udev's database gives UD the property PROP with the value VAL */
static bool udev_prop_is(struct udev_device *ud, const char *prop, const char *val)
{
	const char *v = udev_device_get_property_value(ud, prop);

	return v && !strcmp(v, val);
}

/*
 * The udev flags the device's last event carried (udev's database, where
 * 55-dm.rules and 56-lvm.rules keep them), for the resume's cookie: a
 * device LVM hides from blkid and the other rules stays hidden.
 */
static uint16_t dev_udev_flags(const struct dev *d)
{
	static const struct {
		const char *prop;
		uint16_t flag;
	} props[] = {
		{ "DM_UDEV_DISABLE_DM_RULES_FLAG", DM_UDEV_DISABLE_DM_RULES_FLAG },
		{ "DM_UDEV_DISABLE_SUBSYSTEM_RULES_FLAG", DM_UDEV_DISABLE_SUBSYSTEM_RULES_FLAG },
		{ "DM_UDEV_DISABLE_DISK_RULES_FLAG", DM_UDEV_DISABLE_DISK_RULES_FLAG },
		{ "DM_UDEV_DISABLE_OTHER_RULES_FLAG", DM_UDEV_DISABLE_OTHER_RULES_FLAG },
		{ "DM_UDEV_LOW_PRIORITY_FLAG", DM_UDEV_LOW_PRIORITY_FLAG },
		{ "DM_UDEV_DISABLE_LIBRARY_FALLBACK_FLAG", DM_UDEV_DISABLE_LIBRARY_FALLBACK },
		{ "DM_SUBSYSTEM_UDEV_FLAG0", DM_SUBSYSTEM_UDEV_FLAG0 },
		{ "DM_SUBSYSTEM_UDEV_FLAG1", DM_SUBSYSTEM_UDEV_FLAG1 },
		{ "DM_SUBSYSTEM_UDEV_FLAG2", DM_SUBSYSTEM_UDEV_FLAG2 },
		{ "DM_SUBSYSTEM_UDEV_FLAG3", DM_SUBSYSTEM_UDEV_FLAG3 },
		{ "DM_SUBSYSTEM_UDEV_FLAG4", DM_SUBSYSTEM_UDEV_FLAG4 },
		{ "DM_SUBSYSTEM_UDEV_FLAG5", DM_SUBSYSTEM_UDEV_FLAG5 },
		{ "DM_SUBSYSTEM_UDEV_FLAG6", DM_SUBSYSTEM_UDEV_FLAG6 },
		{ "DM_SUBSYSTEM_UDEV_FLAG7", DM_SUBSYSTEM_UDEV_FLAG7 },
	};
	struct udev *udev = udev_new();
	struct udev_device *ud;
	uint16_t flags = 0;
	size_t i;

	if (!udev)
		return 0;
	ud = udev_device_new_from_devnum(udev, 'b', makedev(d->info.major, d->info.minor));
	if (ud) {
		for (i = 0; i < sizeof(props) / sizeof(props[0]); i++)
			if (udev_prop_is(ud, props[i].prop, "1"))
				flags |= props[i].flag;
		/*
		 * LVM's NOSCAN (subsystem flag 0) is for one event, before
		 * lvcreate zeroes the LV: the rules then set the "other
		 * rules" flag too, keeping the one they replaced, and clear
		 * both on the next event.  Resume as that event would.
		 */
		if (udev_prop_is(ud, "DM_NOSCAN", "1")) {
			flags &= ~(DM_SUBSYSTEM_UDEV_FLAG0 | DM_UDEV_DISABLE_OTHER_RULES_FLAG);
			if (udev_prop_is(ud, "DM_DISABLE_OTHER_RULES_FLAG_OLD", "1"))
				flags |= DM_UDEV_DISABLE_OTHER_RULES_FLAG;
		}
		udev_device_unref(ud);
	}
	udev_unref(udev);
	return flags;
}

/* ---- the target ------------------------------------------------------ */

static bool target_known(const char *target)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_LIST_VERSIONS);
	struct dm_versions *v, *last;
	bool found = false;

	if (!dmt || !dm_task_run(dmt))
		goto out;
	v = dm_task_get_versions(dmt);
	do {
		last = v;
		if (!strcmp(v->name, target))
			found = true;
		v = (struct dm_versions *)((char *)v + v->next);
	} while (last != v);
out:
	if (dmt)
		dm_task_destroy(dmt);
	return found;
}

/* the target is there, or modprobe loads it */
static bool target_available(void)
{
	int st;
	pid_t pid;

	if (target_known(FL_TARGET))
		return true;
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("modprobe", "modprobe", "-q", "dm-fastlinear", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return false;
	return target_known(FL_TARGET);
}

/* ---- locks ----------------------------------------------------------- */

/*
 * The state directory holds our locks and marks: it must be ours alone (a
 * user who can create files there could hold our locks or plant a
 * symlink).  Created 0700 when missing.
 */
static int state_dir_ok(void)
{
	struct stat st;

	if (mkdir(state_dir, 0700) && errno != EEXIST) {
		err("cannot create %s: %s", state_dir, strerror(errno));
		return -1;
	}
	if (lstat(state_dir, &st)) {
		err("cannot use %s: %s", state_dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		err("refused: %s is not a directory of ours alone (a symlink, someone else's, or writable by others)",
		    state_dir);
		return -1;
	}
	return 0;
}

/*
 * lvm2's file locking: flock() on LOCKDIR/V_<vgname>, where LVM also
 * creates and unlinks the file (lib/misc/lvm-flock.c): after flock the
 * file we hold must still be the one at that path, else retry.  Waits up
 * to lock_wait seconds.  Returns the fd, -1 (an error, said), or -2 (held
 * by someone else all that time, said).
 */
static int flock_path(const char *path, const char *what)
{
	struct timespec t0, now;
	struct stat a, b;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			err("cannot open %s (%s): %s", path, what, strerror(errno));
			return -1;
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
			return -1;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= lock_wait) {
			err("%s is held by another command (%s); gave up after %d s",
			    what, path, lock_wait);
			return -2;
		}
		usleep(100000);
	}
}

/* release like lvm2's _undo_flock(): unlink if nobody else waits */
static void unflock_path(const char *path, int fd)
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
 * KEY ("section/name") as LVM itself reads its configuration (lvm.conf,
 * lvmlocal.conf, LVM_SYSTEM_DIR, the compiled-in default), from lvmconfig:
 * a string's value without its quotes in BUF.  -1 when lvmconfig cannot
 * be run or does not know KEY (an lvm2 without that setting).
 */
static int lvmconfig(const char *key, char *buf, size_t size)
{
	char out[PATH_MAX + 64], want[64], *p, *q;
	int pfd[2], st;
	ssize_t n, len = 0;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(pfd[1], 1);
		if (fd >= 0)
			dup2(fd, 2);
		setenv("LVM_SUPPRESS_FD_WARNINGS", "1", 1);
		execlp("lvmconfig", "lvmconfig", "--typeconfig", "full", key, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (pid > 0 && len < (ssize_t)sizeof(out) - 1 &&
	       (n = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	close(pfd[0]);
	out[len] = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	p = strrchr(key, '/');
	snprintf(want, sizeof(want), "%s=\"", p ? p + 1 : key);
	p = strstr(out, want);
	q = p ? strchr(p + strlen(want), '"') : NULL;
	if (!q)
		return -1;
	*q = 0;
	snprintf(buf, size, "%s", p + strlen(want));
	return 0;
}

/* LVM's locking_dir, or lvm2's default where there is no lvmconfig */
static const char *lvm_lock_dir(void)
{
	static char dir[PATH_MAX - DM_NAME_LEN - 8];

	if (!dir[0] && (lvmconfig("global/locking_dir", dir, sizeof(dir)) || !dir[0]))
		snprintf(dir, sizeof(dir), "%s", LVM_LOCK_DIR);
	return dir;
}

/*
 * The lock for changing D's table: LVM's own lock of its VG for an LV (no
 * LVM command runs on the VG meanwhile, and we wait for any that does),
 * else one of ours for this device alone.  PATH gets the lock's path.
 */
static int lock_dev(const struct dev *d, char *path, size_t size)
{
	char what[DM_NAME_LEN + 32];
	const char *dir;

	if (!d->vg[0]) {
		snprintf(path, size, "%s/lock-%u_%u", state_dir, d->info.major,
			 d->info.minor);
		return flock_path(path, "another fastlinearctl on this device");
	}
	dir = lvm_lock_dir();
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err("cannot create LVM's lock directory %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, size, "%s/V_%s", dir, d->vg);
	snprintf(what, sizeof(what), "LVM's lock of VG %s", d->vg);
	return flock_path(path, what);
}

/* ---- state: what this tool converted ---------------------------------- */

/* a name or UUID as a file name: bytes other than [A-Za-z0-9._+-] as %XX */
static void escape(const char *s, char *out, size_t size)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-";
	size_t n = 0;

	for (; *s && n + 4 < size; s++) {
		if (strchr(ok, *s))
			out[n++] = *s;
		else
			n += snprintf(out + n, size - n, "%%%02X", (unsigned char)*s);
	}
	out[n] = 0;
}

static void mark_path(const struct dev *d, char *path, size_t size)
{
	char esc[3 * DM_UUID_LEN + 1];

	escape(d->uuid[0] ? d->uuid : d->name, esc, sizeof(esc));
	snprintf(path, size, "%s/%s-%s", state_dir, d->uuid[0] ? "uuid" : "name", esc);
}

static void mark(const struct dev *d, bool converted)
{
	char path[PATH_MAX];
	FILE *f;

	mark_path(d, path, sizeof(path));
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
	fclose(f);
}

static bool marked(const struct dev *d)
{
	char path[PATH_MAX];

	mark_path(d, path, sizeof(path));
	return !access(path, F_OK);
}

/* ---- the config file -------------------------------------------------- */

/* one entry KEY [VAL] of the config: 1 D matches, 0 not, -1 not an entry */
static int entry_matches(const struct dev *d, const char *key, const char *val)
{
	char vglv[2 * DM_NAME_LEN + 2];

	snprintf(vglv, sizeof(vglv), "%s/%s", d->vg, d->lv);
	if (!val && !strcmp(key, "all-lvm"))
		return is_top_lv(d);
	if (!val)
		return -1;
	if (!strcmp(key, "lv"))
		return is_top_lv(d) && !fnmatch(val, vglv, 0);
	if (!strcmp(key, "name"))
		return !fnmatch(val, d->name, 0);
	if (!strcmp(key, "uuid"))
		return !fnmatch(val, d->uuid, 0);
	return -1;
}

/*
 * One entry a line, '#' starts a comment, lines of any length:
 *   all-lvm            every logical volume (not LVM's internal layers)
 *   lv VG/LV           a logical volume; VG and LV may be glob patterns
 *   VG/LV              the same
 *   name NAME          a dm device by name (glob)
 *   uuid UUID          a dm device by UUID (glob)
 * No form selects one of LVM's internal layers.  Returns 1, 0, or -1 (the
 * file cannot be read; errno set).
 */
static int configured(const struct dev *d)
{
	char *line = NULL, *key, *val, *extra, *save;
	FILE *f = fopen(conf_path, "re");
	size_t cap = 0;
	int hit = 0;

	if (!f)
		return errno == ENOENT ? 0 : -1;
	while (hit <= 0 && getline(&line, &cap, f) >= 0) {
		line[strcspn(line, "#\n")] = 0;
		key = strtok_r(line, " \t\r", &save);
		if (!key)
			continue;
		val = strtok_r(NULL, " \t\r", &save);
		extra = val ? strtok_r(NULL, " \t\r", &save) : NULL;
		if (!val && strchr(key, '/')) {
			val = key;
			key = "lv";
		}
		hit = extra ? -1 : entry_matches(d, key, val);
		if (hit < 0)
			err("%s: ignoring '%s%s%s%s%s'", conf_path, key, val ? " " : "",
			    val ? val : "", extra ? " " : "", extra ? extra : "");
	}
	free(line);
	fclose(f);
	return hit > 0 && !is_lvm_layer(d);
}

/* ---- convert and revert ----------------------------------------------- */

static int dm_simple(int task, const char *name)
{
	struct dm_task *dmt = dm_task_create(task);
	int ok = 0;

	if (dmt && dm_task_set_name(dmt, name))
		ok = dm_task_run(dmt);
	if (dmt)
		dm_task_destroy(dmt);
	return ok ? 0 : -1;
}

/* resume, with a udev cookie carrying FLAGS, and wait for udev */
static int dm_resume(const char *name, uint16_t flags)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_RESUME);
	uint32_t cookie = 0;
	int ok = 0;

	if (!dmt || !dm_task_set_name(dmt, name) ||
	    !dm_task_set_cookie(dmt, &cookie, flags))
		goto out;
	ok = dm_task_run(dmt);
	dm_udev_wait(cookie);
out:
	if (dmt)
		dm_task_destroy(dmt);
	return ok ? 0 : -1;
}

/* load T as D's inactive table, read-only if D is */
static int dm_load(const struct dev *d, const struct table *t)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_RELOAD);
	int i, ok = 0;

	if (!dmt || !dm_task_set_name(dmt, d->name))
		goto out;
	if (d->info.read_only && !dm_task_set_ro(dmt))
		goto out;
	for (i = 0; i < t->n; i++)
		if (!dm_task_add_target(dmt, t->segs[i].start, t->segs[i].len,
					t->segs[i].type, t->segs[i].params))
			goto out;
	ok = dm_task_run(dmt);
out:
	if (dmt)
		dm_task_destroy(dmt);
	return ok ? 0 : -1;
}

/*
 * The device may be held suspended by LVM's pvmove (VG-pvmoveN exists):
 * 1 if so, 0 if not, -1 if the devices cannot be listed (then nobody can
 * say, and the caller refuses).
 */
static int vg_has_pvmove(const struct dev *d)
{
	char **names;
	int i, n = dm_list(&names), found = 0;

	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		struct dev c;

		if (!dev_info(names[i], &c) && !strcmp(c.vg, d->vg) &&
		    !strncmp(c.lv, "pvmove", 6))
			found = 1;
	}
	names_free(names, n);
	return found;
}

static void print_table(const char *what, const struct table *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		msg("  %s %" PRIu64 " %" PRIu64 " %s %s\n", what, t->segs[i].start,
		    t->segs[i].len, t->segs[i].type, t->segs[i].params);
}

/*
 * After a failed step: no inactive table left (ours: LIVE's device had
 * none when we started), the device not suspended.  Each step is tried
 * a few times, as a failed ioctl may not fail again.  Returns EXIT_FAILED,
 * or EXIT_SUSPENDED when the device could not be resumed.
 */
static int recover(const struct dev *d, uint16_t flags)
{
	struct dev now;
	int i;

	for (i = 0; i < 5; i++) {
		if (dev_info(d->name, &now))
			continue;
		if (!now.info.inactive_table && !now.info.suspended)
			return EXIT_FAILED;
		if (now.info.inactive_table)
			dm_simple(DM_DEVICE_CLEAR, d->name);
		else
			dm_resume(d->name, flags);
	}
	err("%s: CANNOT RESUME: it may be left suspended; run 'dmsetup resume %s' (and 'dmsetup clear %s' first if it has an inactive table)",
	    d->name, d->name, d->name);
	return EXIT_SUSPENDED;
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

	if (dm_read(d->name, DM_DEVICE_TABLE, false, &t)) {
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
 * 0, or -1 with a message (a read that failed twice is not a change, and
 * dm_read says so).
 */
static int tables_unchanged(const struct dev *d, const struct table *live,
			    const struct table *want)
{
	struct table t;
	bool same;

	if (dm_read(d->name, DM_DEVICE_TABLE, false, &t))
		return -1;
	same = table_equal(&t, live);
	table_free(&t);
	if (same) {
		if (dm_read(d->name, DM_DEVICE_TABLE, true, &t))
			return -1;
		same = table_equal(&t, want);
		table_free(&t);
	}
	if (!same)
		err("%s: refused: its table changed while it was being converted", d->name);
	return same ? 0 : -1;
}

/*
 * Load WANT, check nobody changed anything meanwhile, suspend, resume:
 * signals blocked throughout, memory locked while the device may be
 * suspended, messages held until it runs again (critical_begin).
 * Returns EXIT_DONE, EXIT_FAILED or EXIT_SUSPENDED.
 */
static int swap_tables(const struct dev *d, const struct table *live,
		       const struct table *want, uint16_t flags)
{
	int ret;

	critical_begin();
	if (dm_load(d, want)) {
		err("%s: loading the %s table failed (see dmesg)", d->name,
		    want->segs[0].type);
		ret = recover(d, flags);
		goto out;
	}
	if (tables_unchanged(d, live, want)) {
		ret = recover(d, flags);
		goto out;
	}
	memory_lock();
	/* no uevent for a suspend: no udev cookie either */
	if (dm_simple(DM_DEVICE_SUSPEND, d->name)) {
		err("%s: suspend failed", d->name);
		ret = recover(d, flags);
	} else if (dm_resume(d->name, flags)) {
		err("%s: resume failed", d->name);
		ret = recover(d, flags);
	} else {
		ret = EXIT_DONE;
	}
	munlockall();
out:
	critical_end();
	return ret;
}

/*
 * Convert (from "linear" to "fastlinear") or revert one device.  Returns
 * EXIT_DONE (done, or nothing to do), EXIT_FAILED (refused or failed: the
 * device runs, with its old or its new table, and no inactive table of
 * ours) or EXIT_SUSPENDED.
 */
static int swap_one(const char *arg, enum op op)
{
	const char *from = op == OP_CONVERT ? "linear" : FL_TARGET;
	const char *to = op == OP_CONVERT ? FL_TARGET : "linear";
	const char *verb = op == OP_CONVERT ? "convert" : "revert";
	struct table live = { 0 }, want = { 0 }, now = { 0 };
	char name[DM_NAME_LEN], lock[PATH_MAX];
	int i, lockfd = -1, ret = EXIT_FAILED, changed = 0, pvmove, r;
	struct dev d;

	r = resolve(arg, &d);
	if (r == -2)
		return EXIT_FAILED;
	if (r) {
		/* a udev job for a device removed meanwhile */
		if (configured_only) {
			msg("%s: gone: nothing to do\n", arg);
			return EXIT_DONE;
		}
		err("%s: no such device-mapper device", arg);
		return EXIT_FAILED;
	}
	if (is_lvm_layer(&d)) {
		if (configured_only)
			return EXIT_DONE;
		err("%s: refused: an LVM internal layer (a sub-LV of VG %s): LVM's alone; name its top-level LV",
		    d.name, d.vg[0] ? d.vg : "?");
		return EXIT_FAILED;
	}
	if (configured_only) {
		int c = configured(&d);

		if (c < 0) {
			err("cannot read %s: %s", conf_path, strerror(errno));
			return EXIT_FAILED;
		}
		if (!c)
			return EXIT_DONE;
	}
	if (!dry_run) {
		if (state_dir_ok())
			return EXIT_FAILED;
		lockfd = lock_dev(&d, lock, sizeof(lock));
		if (lockfd == -2 && d.vg[0])
			err("%s: refused: an LVM command holds VG %s", d.name, d.vg);
		else if (lockfd == -2)
			err("%s: refused: another fastlinearctl holds it", d.name);
		else if (lockfd < 0)
			err("%s: refused: cannot take its lock", d.name);
		if (lockfd < 0)
			return EXIT_FAILED;
		/* what it is now that nobody else changes it */
		snprintf(name, sizeof(name), "%s", d.name);
		if (dev_info(name, &d)) {
			if (configured_only) {
				msg("%s: gone: nothing to do\n", arg);
				ret = EXIT_DONE;
			} else {
				err("%s: the device went away", arg);
			}
			goto out;
		}
	}
	pvmove = d.vg[0] ? vg_has_pvmove(&d) : 0;
	if (pvmove < 0) {
		err("%s: refused: cannot tell whether a pvmove is in progress in VG %s",
		    d.name, d.vg);
		goto out;
	}
	if (pvmove) {
		if (configured_only) {
			/* LVM reloads it when the move ends: udev queues us again */
			msg("%s: skipped: a pvmove is in progress in VG %s\n", d.name, d.vg);
			ret = EXIT_DONE;
		} else {
			err("%s: refused: a pvmove is in progress in VG %s (run it again when it is done)",
			    d.name, d.vg);
		}
		goto out;
	}
	if (!d.info.live_table) {
		err("%s: refused: the device has no live table", d.name);
		goto out;
	}
	if (d.info.suspended) {
		err("%s: refused: the device is suspended (resume it, or let the command that suspended it finish)",
		    d.name);
		goto out;
	}
	if (d.info.inactive_table) {
		err("%s: refused: the device has an inactive table loaded by someone else (left as it is)",
		    d.name);
		goto out;
	}
	if (dm_read(d.name, DM_DEVICE_TABLE, false, &live))
		goto out;
	for (i = 0; i < live.n; i++) {
		const struct seg *s = &live.segs[i];
		bool swap = !strcmp(s->type, from);

		changed += swap;
		if (table_add(&want, s->start, s->len, swap ? to : s->type, s->params))
			goto out;
	}
	if (!changed) {
		if (table_count(&live, to)) {
			msg("%s: already %s: nothing to do\n", d.name, to);
			ret = EXIT_DONE;
		} else if (configured_only) {
			ret = EXIT_DONE;	/* not ours to touch: a snapshot origin, a mirror... */
		} else {
			err("%s: refused: no %s segment in its table (%d segment(s), first: %s)",
			    d.name, from, live.n, live.n ? live.segs[0].type : "none");
		}
		goto out;
	}
	if (dry_run) {
		msg("%s: would %s %d of %d segment(s) (dev %u:%u%s)\n", d.name, verb,
		    changed, live.n, d.info.major, d.info.minor,
		    d.info.read_only ? ", read-only" : "");
		print_table("-", &live);
		print_table("+", &want);
		ret = EXIT_DONE;
		goto out;
	}
	if (op == OP_CONVERT && !target_available()) {
		err("%s: refused: the %s target is not loaded and 'modprobe dm-fastlinear' failed",
		    d.name, FL_TARGET);
		goto out;
	}
	ret = swap_tables(&d, &live, &want, dev_udev_flags(&d));
	if (ret == EXIT_FAILED) {
		/* a resume may fail after the kernel swapped the tables */
		if (report_live(&d, &live, &want, from, to))
			mark(&d, op == OP_CONVERT);
		goto out;
	}
	if (ret != EXIT_DONE)
		goto out;
	/* the resume swapped the tables: ours went live */
	mark(&d, op == OP_CONVERT);
	if (dm_read(d.name, DM_DEVICE_TABLE, false, &now)) {
		err("%s: the new table (%s) is live (the resume succeeded), but reading it back failed",
		    d.name, to);
		ret = EXIT_FAILED;
		goto out;
	}
	if (!table_equal(&now, &want)) {
		err("%s: after the resume the live table is not the one loaded (changed by someone else)",
		    d.name);
		ret = EXIT_FAILED;
		goto out;
	}
	msg("%s: %sed %d of %d segment(s) to %s (dev %u:%u%s)\n", d.name, verb,
	    changed, live.n, to, d.info.major, d.info.minor,
	    d.info.read_only ? ", read-only" : "");
out:
	if (lockfd >= 0)
		unflock_path(lock, lockfd);
	table_free(&live);
	table_free(&want);
	table_free(&now);
	return ret;
}

/* ---- udev: a configured device held back from systemd until converted -- */

/*
 * The release file the udev job writes when it gives up on converting D
 * (kernel name KNAME) before systemd may use it: STATE_DIR/ready/KNAME,
 * whose first line is D's UUID (its name if it has none), so that a file
 * left by an earlier device of that kernel name does not count.
 */
static bool released(const struct dev *d, const char *kname)
{
	char path[PATH_MAX], line[DM_UUID_LEN + 2];
	const char *id = d->uuid[0] ? d->uuid : d->name;
	bool same = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ready/%s", state_dir, kname);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		same = !strcmp(line, id);
	}
	fclose(f);
	return same;
}

/*
 * udev-gate [--job] dm-N, for 95-fastlinear.rules (IMPORT{program}, only
 * while systemd runs): whether udev should keep dm-N from systemd
 * (SYSTEMD_READY=0: its device unit stays inactive, an fstab mount of it
 * waits) until the job the rule queues has converted it.  The previous
 * event's udev database (this event's is written after the rules ran)
 * says whether systemd has had the device: tagged "systemd" by
 * 99-systemd.rules and SYSTEMD_READY not 0.  A device activated in the
 * initramfs (whose udev has lvm2's rules but not systemd's) is not
 * tagged until the coldplug event after the switch to the root: systemd
 * has not had it.  If it was ready, it prints FASTLINEAR_READY=1 and the
 * rule never asks again (holding back a device systemd has would stop
 * the mounts bound to it).  Else it prints
 * FASTLINEAR_GATE=1 if the device is configured, has a linear segment in
 * its live table, is not open, not suspended, the job has not given up on
 * it (STATE_DIR/ready/dm-N) and either this event queues a job (--job) or
 * the previous event was held (its job is still to end).  Reads only; no
 * lock, no modprobe.  Exit status 0 but for a usage error.
 */
static int udev_gate(const char *kname, bool job)
{
	char path[PATH_MAX];
	struct udev_device *ud;
	struct table t = { 0 };
	bool held = false, ready = false;
	struct udev *udev;
	struct dev d;

	if (!is_kname(kname)) {
		err("udev-gate: %s is not a kernel name dm-N", kname);
		return EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/sys/block/%s/dm/name", kname);
	if (dev_info_sysfs(path, &d))
		return EXIT_DONE;
	udev = udev_new();
	if (!udev)
		return EXIT_DONE;
	ud = udev_device_new_from_devnum(udev, 'b', makedev(d.info.major, d.info.minor));
	if (ud) {
		ready = udev_device_has_tag(ud, "systemd") &&
			!udev_prop_is(ud, "SYSTEMD_READY", "0");
		held = udev_prop_is(ud, "FASTLINEAR_GATE", "1");
		udev_device_unref(ud);
	}
	udev_unref(udev);
	if (ready) {
		printf("FASTLINEAR_READY=1\n");
		return EXIT_DONE;
	}
	if ((!job && !held) || !d.info.live_table || d.info.suspended ||
	    d.info.open_count > 0 || released(&d, kname))
		return EXIT_DONE;
	if (configured(&d) <= 0 || dm_read(d.name, DM_DEVICE_TABLE, false, &t))
		return EXIT_DONE;
	if (table_count(&t, "linear"))
		printf("FASTLINEAR_GATE=1\n");
	table_free(&t);
	return EXIT_DONE;
}

/* ---- status ------------------------------------------------------------ */

/* the length of the valid UTF-8 sequence at S, or 0 */
static int utf8_len(const unsigned char *s)
{
	int i, n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates, past U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

/* S as a JSON string: a byte that is not valid UTF-8 becomes \u00XX */
static void json_str(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	putchar('"');
	while (*s) {
		n = utf8_len(s);
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if (*s < 0x20 || !n)
			printf("\\u%04x", *s);
		else
			fwrite(s, 1, n, stdout);
		s += n ? n : 1;
	}
	putchar('"');
}

static void json_str_or_null(const char *s)
{
	if (s[0])
		json_str(s);
	else
		printf("null");
}

/* in JSON: the devices that could not be shown, for "errors" */
struct json_err {
	char *device;
	const char *error;
};

static struct json_err *json_errs;
static int json_nerrs;

static int status_fail(const char *arg, const char *why)
{
	struct json_err *e = realloc(json_errs, (json_nerrs + 1) * sizeof(*e));

	if (arg[0])
		err("%s: %s", arg, why);
	else
		err("%s", why);
	if (json && e) {
		json_errs = e;
		e[json_nerrs].device = strdup(arg);
		e[json_nerrs].error = why;
		if (e[json_nerrs].device)
			json_nerrs++;
	}
	return EXIT_FAILED;
}

static void status_print(const struct dev *d, const struct table *t,
			 const char *state, const char *assoc, const char *core,
			 int conf, bool was, bool first)
{
	const char *types[] = { "linear", FL_TARGET };
	int i, other = t->n - table_count(t, "linear") - table_count(t, FL_TARGET);

	if (!json) {
		printf("%s (%u:%u%s%s%s%s) %s: linear %d, fastlinear %d, other %d",
		       d->name, d->info.major, d->info.minor, d->vg[0] ? ", lv " : "",
		       d->vg, d->vg[0] ? "/" : "", d->lv, state,
		       table_count(t, "linear"), table_count(t, FL_TARGET), other);
		if (assoc[0])
			printf(", blkg_assoc=%s dm_core=%s", assoc, core);
		printf("%s%s%s%s\n", d->info.read_only ? ", read-only" : "",
		       conf > 0 ? ", configured" : "",
		       was ? ", converted by fastlinearctl" : "",
		       d->info.suspended ? ", SUSPENDED" : "");
		return;
	}
	printf("%s\n    {\"name\": ", first ? "" : ",");
	json_str(d->name);
	printf(", \"uuid\": ");
	json_str(d->uuid);
	printf(", \"dev\": \"%u:%u\", \"vg\": ", d->info.major, d->info.minor);
	json_str(d->vg);
	printf(", \"lv\": ");
	json_str(d->lv);
	printf(", \"read_only\": %s, \"suspended\": %s, \"segments\": {",
	       d->info.read_only ? "true" : "false", d->info.suspended ? "true" : "false");
	for (i = 0; i < 2; i++)
		printf("\"%s\": %d, ", types[i], table_count(t, types[i]));
	printf("\"other\": %d}, \"blkg_assoc\": ", other);
	json_str_or_null(assoc);
	printf(", \"dm_core\": ");
	json_str_or_null(core);
	printf(", \"state\": \"%s\", \"converted_by_fastlinearctl\": %s, \"configured\": %s}",
	       state, was ? "true" : "false", conf > 0 ? "true" : "false");
}

/* one device's status; *SHOWN counts the devices printed */
static int status_one(const char *arg, int *shown)
{
	struct table t = { 0 }, st = { 0 };
	char assoc[32] = "", core[32] = "";
	const char *state;
	int i, nfl, nlin, r;
	struct dev d;
	bool was;

	r = resolve(arg, &d);
	if (r)
		return status_fail(arg, r == -2 ? "cannot list the dm devices" :
				   "no such device-mapper device");
	if (dm_read(d.name, DM_DEVICE_TABLE, false, &t) ||
	    dm_read(d.name, DM_DEVICE_STATUS, false, &st)) {
		table_free(&t);
		return status_fail(arg, "cannot read its table or status");
	}
	for (i = 0; i < st.n; i++)
		if (!strcmp(st.segs[i].type, FL_TARGET) && !assoc[0])
			sscanf(st.segs[i].params, "blkg_assoc=%31s dm_core=%31s", assoc, core);
	nfl = table_count(&t, FL_TARGET);
	nlin = table_count(&t, "linear");
	was = marked(&d);
	if (nfl && !nlin)
		state = "converted";
	else if (nfl)
		state = "partly-converted";
	else if (nlin && was)
		state = "reverted-by-lvm";
	else if (nlin)
		state = "linear";
	else
		state = "other";
	status_print(&d, &t, state, assoc, core, configured(&d), was, !(*shown)++);
	table_free(&t);
	table_free(&st);
	return EXIT_DONE;
}

/*
 * How linear LVs become fastlinear here: "native" when LVM loads its
 * linear segments as fastlinear itself (activation/linear_target, from
 * an lvm2 patch; a stock lvm2 has no such setting), else "udev" when our
 * udev rule is installed and not masked (it converts the configured LVs
 * after each reload), else "none" (only fastlinearctl convert).  TARGET
 * gets the setting's value, "" when this lvm2 has none.
 */
static const char *lvm_path(char *target, size_t size)
{
	/* udev's rule directories, the first that has the file decides */
	static const char * const dirs[] = {
		"/etc/udev/rules.d", "/run/udev/rules.d",
		"/usr/lib/udev/rules.d", "/lib/udev/rules.d",
	};
	char path[64], link[16];
	unsigned int i;
	struct stat st;
	ssize_t n;

	if (lvmconfig("activation/linear_target", target, size))
		target[0] = 0;
	if (!strcmp(target, FL_TARGET))
		return "native";
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/95-fastlinear.rules", dirs[i]);
		if (lstat(path, &st))
			continue;
		/* a link to /dev/null masks a rule of that name */
		n = readlink(path, link, sizeof(link) - 1);
		if (n >= 0)
			link[n] = 0;
		return n >= 0 && !strcmp(link, "/dev/null") ? "none" : "udev";
	}
	return "none";
}

/* the last line of status: what loads the fastlinear tables of LVs */
static void status_lvm(void)
{
	char target[64];
	const char *path = lvm_path(target, sizeof(target));

	if (json) {
		printf(", \"lvm\": {\"linear_target\": ");
		json_str_or_null(target);
		printf(", \"path\": \"%s\"}", path);
		return;
	}
	if (target[0])
		printf("lvm: activation/linear_target = \"%s\"", target);
	else
		printf("lvm: no activation/linear_target (a stock lvm2, or none)");
	if (!strcmp(path, "native"))
		printf(": LVM loads its linear segments as fastlinear itself\n");
	else if (!strcmp(path, "udev"))
		printf(": LVM loads linear, the udev rule converts the configured LVs\n");
	else
		printf(": LVM loads linear, no udev rule: only fastlinearctl convert\n");
}

static void json_begin(void)
{
	printf("{\"format\": %d, \"version\": ", JSON_FORMAT);
	json_str(FL_VERSION);
	status_lvm();
	printf(", \"devices\": [");
}

static void json_end(int shown)
{
	int i;

	printf("%s], \"errors\": [", shown ? "\n  " : "");
	for (i = 0; i < json_nerrs; i++) {
		printf("%s\n    {\"device\": ", i ? "," : "");
		json_str(json_errs[i].device);
		printf(", \"error\": ");
		json_str(json_errs[i].error);
		printf("}");
		free(json_errs[i].device);
	}
	printf("%s]}\n", json_nerrs ? "\n  " : "");
	free(json_errs);
}

/* ---- main ---------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [OPTIONS] convert [--] DEV...|--all-lvm|--configured [DEV...]\n"
		"       %s [OPTIONS] revert [--] DEV...|--all-lvm\n"
		"       %s [OPTIONS] status [--] [DEV...|--all-lvm]\n"
		"       %s [OPTIONS] udev-gate [--job] dm-N   (for 95-fastlinear.rules)\n"
		"       %s --version\n"
		"DEV: dm name, /dev/mapper/NAME, /dev/dm-N, dm-N, /dev/VG/LV, VG/LV or dm UUID\n"
		"  -n, --dry-run        say what would change; change nothing, take no lock\n"
		"  -j, --json           status as JSON\n"
		"  -w, --wait SECS      wait up to SECS for a lock (0-%d, default 10; 0: refuse)\n"
		"  -c, --config FILE    the config file (default " FL_CONF ")\n"
		"      --configured     only the devices the config file names\n"
		"      --all-lvm        every logical volume (not LVM's internal layers)\n"
		"      --state-dir DIR  locks and marks (default " FL_STATE_DIR ")\n"
		"  -q, --quiet          no messages but errors\n"
		"  -V, --version        print the version\n"
		"See fastlinearctl(8).\n",
		prog, prog, prog, prog, prog, MAX_WAIT);
}

/* SECS for --wait: a whole number of seconds, else -1 */
static int parse_wait(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > MAX_WAIT || *s == '+' || *s == ' ')
		return -1;
	return (int)v;
}

/* every device for --all-lvm, --configured or a bare status */
static int every_device(enum op op, int *shown)
{
	char **names;
	int i, n, r, ret = EXIT_DONE;

	n = dm_list(&names);
	if (n < 0)
		return EXIT_FAILED;
	for (i = 0; i < n; i++) {
		struct dev d;
		struct table t;
		bool lin;

		if (dev_info(names[i], &d))
			continue;
		if ((all_lvm && !is_top_lv(&d)) || is_lvm_layer(&d))
			continue;
		if (dm_read(names[i], DM_DEVICE_TABLE, false, &t))
			continue;
		lin = table_count(&t, "linear") || table_count(&t, FL_TARGET);
		table_free(&t);
		if (!lin)
			continue;
		r = op == OP_STATUS ? status_one(names[i], shown) : swap_one(names[i], op);
		ret = r > ret ? r : ret;
	}
	names_free(names, n);
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_CONFIGURED = 256, OPT_ALL_LVM, OPT_STATE_DIR, OPT_JOB };
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "wait", required_argument, NULL, 'w' },
		{ "config", required_argument, NULL, 'c' },
		{ "configured", no_argument, NULL, OPT_CONFIGURED },
		{ "all-lvm", no_argument, NULL, OPT_ALL_LVM },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "job", no_argument, NULL, OPT_JOB },
		{ "quiet", no_argument, NULL, 'q' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, i, r, ret = EXIT_DONE, shown = 0;
	char drv[64];
	const char *s;
	enum op op;

	while ((c = getopt_long(argc, argv, "njw:c:qVh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			dry_run = true;
			break;
		case 'j':
			json = true;
			break;
		case 'w':
			lock_wait = parse_wait(optarg);
			if (lock_wait < 0) {
				err("--wait %s: not a number of seconds from 0 to %d",
				    optarg, MAX_WAIT);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			conf_path = optarg;
			break;
		case OPT_CONFIGURED:
			configured_only = true;
			break;
		case OPT_ALL_LVM:
			all_lvm = true;
			break;
		case OPT_STATE_DIR:
			state_dir = optarg;
			break;
		case OPT_JOB:
			gate_job = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'V':
			printf("%s %s\n", prog, FL_VERSION);
			return EXIT_DONE;
		case 'h':
			usage(stdout);
			return EXIT_DONE;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* GNU getopt moved the command and the devices to the end */
	s = argv[optind++];
	if (!strcmp(s, "convert")) {
		op = OP_CONVERT;
	} else if (!strcmp(s, "revert")) {
		op = OP_REVERT;
	} else if (!strcmp(s, "status")) {
		op = OP_STATUS;
	} else if (!strcmp(s, "udev-gate")) {
		op = OP_GATE;
	} else {
		err("unknown command '%s'", s);
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((gate_job && op != OP_GATE) ||
	    (op == OP_GATE && (optind + 1 != argc || configured_only || all_lvm))) {
		err("udev-gate takes one dm-N, and --job only");
		return EXIT_USAGE;
	}
	if (configured_only && op != OP_CONVERT) {
		err("--configured is for convert");
		return EXIT_USAGE;
	}
	if (optind == argc && op != OP_STATUS && !all_lvm && !configured_only) {
		err("%s: name a device, or --all-lvm%s", s,
		    op == OP_CONVERT ? ", or --configured" : "");
		return EXIT_USAGE;
	}
	if (optind < argc && all_lvm) {
		err("--all-lvm takes no device");
		return EXIT_USAGE;
	}
	dm_log_with_errno_init(dm_logger);
	if (op == OP_GATE)
		return udev_gate(argv[optind], gate_job);
	if (op == OP_STATUS && json)
		json_begin();
	if (!dm_driver_version(drv, sizeof(drv))) {
		ret = status_fail("", "device-mapper is not available in this kernel");
		if (op == OP_STATUS && json)
			json_end(0);
		return ret;
	}
	if (optind == argc)
		ret = every_device(op, &shown);
	for (i = optind; i < argc; i++) {
		r = op == OP_STATUS ? status_one(argv[i], &shown) : swap_one(argv[i], op);
		ret = r > ret ? r : ret;
	}
	if (op == OP_STATUS && json)
		json_end(shown);
	else if (op == OP_STATUS)
		status_lvm();
	return ret;
}
