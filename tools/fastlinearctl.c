// SPDX-License-Identifier: GPL-2.0-only
/*
 * fastlinearctl: convert live linear device-mapper tables (LVM logical
 * volumes or any other dm device) to the fastlinear target and back, with
 * libdevmapper: one table load, suspend, resume; same device, same dev_t.
 *
 *   fastlinearctl [OPTIONS] convert DEV...|--all-lvm|--configured [DEV...]
 *   fastlinearctl [OPTIONS] revert  DEV...|--all-lvm
 *   fastlinearctl [OPTIONS] status  [DEV...] [--json]
 *
 * DEV: a dm name, /dev/mapper/NAME, /dev/dm-N, /dev/VG/LV, VG/LV or a dm
 * UUID.  Exit status: 0 done (or nothing to do), 1 refused or failed,
 * 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <linux/dm-ioctl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FL_TARGET	"fastlinear"
#define FL_CONF		"/etc/fastlinear/fastlinear.conf"
#define FL_STATE_DIR	"/run/fastlinear"
#define FL_LOCK		"/run/lock/fastlinear.lock"
#define LVM_LOCK_DIR	"/run/lock/lvm"
#define LVM_UUID_LEN	(4 + 32 + 32)	/* "LVM-" VG uuid LV uuid */

enum op { OP_CONVERT, OP_REVERT, OP_STATUS };

static bool dry_run, json, quiet, configured_only, all_lvm;
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

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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

/*
 * Read the live (or inactive) table, or the status lines (DM_DEVICE_STATUS)
 * of device NAME into T.  Returns 0, or -1 with a message.
 */
static int dm_read(const char *name, int task, bool inactive, struct table *t)
{
	struct dm_task *dmt;
	void *next = NULL;
	uint64_t start, len;
	char *type, *params;
	int ret = -1;

	t->segs = NULL;
	t->n = 0;
	dmt = dm_task_create(task);
	if (!dmt || !dm_task_set_name(dmt, name))
		goto out;
	if (inactive && !dm_task_query_inactive_table(dmt))
		goto out;
	if (!dm_task_run(dmt)) {
		err("%s: cannot read its table", name);
		goto out;
	}
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

/* ---- devices --------------------------------------------------------- */

static int dev_info(const char *name, struct dev *d)
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

/* every dm device name, in *names (NULL-terminated); returns the count */
static int dm_list(char ***names)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_LIST);
	struct dm_names *nl;
	unsigned int next = 0;
	int n = 0;

	*names = calloc(1, sizeof(char *));
	if (!dmt || !*names || !dm_task_run(dmt))
		goto out;
	nl = dm_task_get_names(dmt);
	if (!nl || !nl->dev)
		goto out;
	do {
		nl = (struct dm_names *)((char *)nl + next);
		*names = realloc(*names, (n + 2) * sizeof(char *));
		(*names)[n++] = strdup(nl->name);
		(*names)[n] = NULL;
		next = nl->next;
	} while (next);
out:
	if (dmt)
		dm_task_destroy(dmt);
	return n;
}

/*
 * DEV as the user gave it: a dm name, /dev/mapper/NAME, /dev/dm-N or any
 * block device node of a dm device (/dev/VG/LV), VG/LV, or a dm UUID.
 * Fills D; returns 0, or -1 (no such device).
 */
static int resolve(const char *arg, struct dev *d)
{
	char **names, buf[PATH_MAX], *slash;
	struct stat st;
	int i, n, ret = -1;

	if (arg[0] == '/' && !stat(arg, &st) && S_ISBLK(st.st_mode)) {
		FILE *f;

		snprintf(buf, sizeof(buf), "/sys/dev/block/%u:%u/dm/name",
			 major(st.st_rdev), minor(st.st_rdev));
		f = fopen(buf, "r");

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
	if (!strchr(arg, '/') && !dev_info(arg, d))
		return 0;
	n = dm_list(&names);
	slash = strchr(arg, '/');
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
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
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
 * lvm2's file locking: flock() on LOCKDIR/V_<vgname>, where LVM also
 * creates and unlinks the file (lib/misc/lvm-flock.c): after flock the
 * file we hold must still be the one at that path, else retry.  Waits up
 * to lock_wait seconds.  Returns the fd or -1.
 */
static int flock_path(const char *path, const char *what)
{
	struct timespec t0, now;
	struct stat a, b;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
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
			return -1;
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

/* lvm.conf's global/locking_dir ($LVM_SYSTEM_DIR/lvm.conf), else the default */
static void lvm_lock_dir(char *dir, size_t size)
{
	const char *sys = getenv("LVM_SYSTEM_DIR");
	char path[PATH_MAX], line[1024], *p, *q;
	FILE *f;

	snprintf(dir, size, "%s", LVM_LOCK_DIR);
	snprintf(path, sizeof(path), "%s/lvm.conf", sys ? sys : "/etc/lvm");
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " \t");
		if (strncmp(p, "locking_dir", 11))
			continue;
		p = strchr(p, '"');
		q = p ? strchr(p + 1, '"') : NULL;
		if (q) {
			*q = 0;
			snprintf(dir, size, "%s", p + 1);
		}
	}
	fclose(f);
}

static char vg_lock_path[PATH_MAX];

static int lock_vg(const char *vg)
{
	char dir[PATH_MAX - 64], what[DM_NAME_LEN + 32];

	lvm_lock_dir(dir, sizeof(dir));
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err("cannot create LVM's lock directory %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(vg_lock_path, sizeof(vg_lock_path), "%s/V_%s", dir, vg);
	snprintf(what, sizeof(what), "LVM's lock of VG %s", vg);
	return flock_path(vg_lock_path, what);
}

/* ---- state: what this tool converted ---------------------------------- */

static void mark_path(const struct dev *d, char *path, size_t size)
{
	if (d->uuid[0])
		snprintf(path, size, "%s/uuid-%s", state_dir, d->uuid);
	else
		snprintf(path, size, "%s/name-%s", state_dir, d->name);
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
	mkdir(state_dir, 0755);
	f = fopen(path, "w");
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

/*
 * One entry a line, '#' starts a comment:
 *   all-lvm            every logical volume (not LVM's internal layers)
 *   lv VG/LV           a logical volume; VG and LV may be glob patterns
 *   VG/LV              the same
 *   name NAME          a dm device by name (glob)
 *   uuid UUID          a dm device by UUID (glob)
 */
static int configured(const struct dev *d)
{
	char line[1024], key[64], val[900], vglv[2 * DM_NAME_LEN + 2];
	FILE *f = fopen(conf_path, "r");
	int n, hit = 0;

	if (!f)
		return errno == ENOENT ? 0 : -1;
	snprintf(vglv, sizeof(vglv), "%s/%s", d->vg, d->lv);
	while (!hit && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "#\n")] = 0;
		n = sscanf(line, "%63s %899s", key, val);
		if (n == 1 && strchr(key, '/')) {
			snprintf(val, sizeof(val), "%s", key);
			snprintf(key, sizeof(key), "lv");
			n = 2;
		}
		if (n == 1 && !strcmp(key, "all-lvm"))
			hit = is_top_lv(d);
		else if (n == 2 && !strcmp(key, "lv"))
			hit = is_top_lv(d) && !fnmatch(val, vglv, 0);
		else if (n == 2 && !strcmp(key, "name"))
			hit = !fnmatch(val, d->name, 0);
		else if (n == 2 && !strcmp(key, "uuid"))
			hit = !fnmatch(val, d->uuid, 0);
		else if (n > 0)
			err("%s: ignoring '%s'", conf_path, line);
	}
	fclose(f);
	return hit;
}

/* ---- convert and revert ----------------------------------------------- */

static int dm_simple(int task, const char *name, bool udev_sync)
{
	struct dm_task *dmt = dm_task_create(task);
	uint32_t cookie = 0;
	int ok = 0;

	if (!dmt || !dm_task_set_name(dmt, name))
		goto out;
	if (udev_sync && !dm_task_set_cookie(dmt, &cookie, 0))
		goto out;
	ok = dm_task_run(dmt);
	if (udev_sync)
		dm_udev_wait(cookie);
out:
	if (dmt)
		dm_task_destroy(dmt);
	return ok ? 0 : -1;
}

static int dm_load(const char *name, const struct table *t)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_RELOAD);
	int i, ok = 0;

	if (!dmt || !dm_task_set_name(dmt, name))
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

/* the device is held suspended by LVM's pvmove (VG-pvmoveN exists) */
static bool vg_has_pvmove(const struct dev *d)
{
	char **names;
	int i, n = dm_list(&names);
	bool found = false;

	for (i = 0; i < n; i++) {
		struct dev c;

		if (!dev_info(names[i], &c) && !strcmp(c.vg, d->vg) &&
		    !strncmp(c.lv, "pvmove", 6))
			found = true;
		free(names[i]);
	}
	free(names);
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
 * Convert (from "linear" to "fastlinear") or revert one device.  Returns
 * 0 (done, or nothing to do) or 1 (refused or failed: the device is left
 * as it was, active, with no inactive table of ours).
 */
static int swap_one(const char *arg, enum op op)
{
	const char *from = op == OP_CONVERT ? "linear" : FL_TARGET;
	const char *to = op == OP_CONVERT ? FL_TARGET : "linear";
	const char *verb = op == OP_CONVERT ? "convert" : "revert";
	struct table live = { 0 }, want = { 0 }, again = { 0 };
	int i, vgfd = -1, ret = 1, changed = 0;
	char name[DM_NAME_LEN];
	struct dev d;

	if (resolve(arg, &d)) {
		err("%s: no such device-mapper device", arg);
		return 1;
	}
	if (configured_only) {
		int c = configured(&d);

		if (c < 0) {
			err("cannot read %s: %s", conf_path, strerror(errno));
			return 1;
		}
		if (!c)
			return 0;
	}
	/* LVM's own lock first: no LVM command runs on this VG meanwhile */
	if (d.vg[0]) {
		vgfd = lock_vg(d.vg);
		if (vgfd < 0) {
			err("%s: refused: an LVM command holds VG %s", d.name, d.vg);
			return 1;
		}
		snprintf(name, sizeof(name), "%s", d.name);
		if (dev_info(name, &d)) {
			err("%s: the device went away", arg);
			goto out;
		}
		if (vg_has_pvmove(&d)) {
			if (configured_only) {
				/* LVM reloads it when the move ends: udev queues us again */
				msg("%s: skipped: a pvmove is in progress in VG %s\n",
				    d.name, d.vg);
				ret = 0;
			} else {
				err("%s: refused: a pvmove is in progress in VG %s (run it again when it is done)",
				    d.name, d.vg);
			}
			goto out;
		}
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
		err("%s: refused: the device has an inactive table loaded by someone else",
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
			ret = 0;
		} else if (configured_only) {
			ret = 0;	/* not ours to touch: a snapshot origin, a mirror... */
		} else {
			err("%s: refused: no %s segment in its table (%d segment(s), first: %s)",
			    d.name, from, live.n, live.n ? live.segs[0].type : "none");
		}
		goto out;
	}
	if (dry_run) {
		msg("%s: would %s %d of %d segment(s) (dev %u:%u)\n", d.name, verb,
		    changed, live.n, d.info.major, d.info.minor);
		print_table("-", &live);
		print_table("+", &want);
		ret = 0;
		goto out;
	}
	if (op == OP_CONVERT && !target_available()) {
		err("%s: refused: the %s target is not loaded and 'modprobe dm-fastlinear' failed",
		    d.name, FL_TARGET);
		goto out;
	}
	if (dm_load(d.name, &want)) {
		err("%s: loading the %s table failed (see dmesg); the device is unchanged",
		    d.name, to);
		dm_simple(DM_DEVICE_CLEAR, d.name, false);
		goto out;
	}
	/* nobody changed the live table, or loaded over ours, meanwhile */
	if (dm_read(d.name, DM_DEVICE_TABLE, false, &again) || !table_equal(&again, &live) ||
	    (table_free(&again), dm_read(d.name, DM_DEVICE_TABLE, true, &again)) ||
	    !table_equal(&again, &want)) {
		err("%s: refused: its table changed while it was being converted; inactive table cleared",
		    d.name);
		dm_simple(DM_DEVICE_CLEAR, d.name, false);
		goto out;
	}
	/* no uevent for a suspend: no udev cookie either */
	if (dm_simple(DM_DEVICE_SUSPEND, d.name, false)) {
		/* not suspended by us (someone else's suspend is theirs to end) */
		err("%s: suspend failed; inactive table cleared, device unchanged", d.name);
		dm_simple(DM_DEVICE_CLEAR, d.name, false);
		goto out;
	}
	if (dm_simple(DM_DEVICE_RESUME, d.name, true)) {
		/* the swap failed: back to the old table, never left suspended */
		err("%s: resume with the new table failed; resuming the old one", d.name);
		dm_simple(DM_DEVICE_CLEAR, d.name, false);
		if (dm_simple(DM_DEVICE_RESUME, d.name, true))
			err("%s: CANNOT RESUME: run 'dmsetup resume %s'", d.name, d.name);
		goto out;
	}
	table_free(&again);
	if (dm_read(d.name, DM_DEVICE_TABLE, false, &again) || !table_equal(&again, &want)) {
		err("%s: after the resume the live table is not the one loaded", d.name);
		goto out;
	}
	mark(&d, op == OP_CONVERT);
	msg("%s: %sed %d of %d segment(s) to %s (dev %u:%u)\n", d.name, verb,
	    changed, live.n, to, d.info.major, d.info.minor);
	ret = 0;
out:
	if (vgfd >= 0)
		unflock_path(vg_lock_path, vgfd);
	table_free(&live);
	table_free(&want);
	table_free(&again);
	return ret;
}

/* ---- status ------------------------------------------------------------ */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int status_one(const char *arg, bool first)
{
	struct table t = { 0 }, st = { 0 };
	char assoc[32] = "", core[32] = "";
	const char *state, *types[] = { "linear", FL_TARGET };
	int i, other, conf, was;
	struct dev d;

	if (resolve(arg, &d)) {
		err("%s: no such device-mapper device", arg);
		return 1;
	}
	if (dm_read(d.name, DM_DEVICE_TABLE, false, &t) ||
	    dm_read(d.name, DM_DEVICE_STATUS, false, &st))
		return 1;
	for (i = 0; i < st.n; i++)
		if (!strcmp(st.segs[i].type, FL_TARGET) && !assoc[0])
			sscanf(st.segs[i].params, "blkg_assoc=%31s dm_core=%31s", assoc, core);
	other = t.n - table_count(&t, "linear") - table_count(&t, FL_TARGET);
	conf = configured(&d);
	was = marked(&d);
	if (table_count(&t, FL_TARGET) && !table_count(&t, "linear"))
		state = "converted";
	else if (table_count(&t, FL_TARGET))
		state = "partly-converted";
	else if (table_count(&t, "linear") && was)
		state = "reverted-by-lvm";
	else if (table_count(&t, "linear"))
		state = "linear";
	else
		state = "other";
	if (json) {
		printf("%s\n  {\"name\": ", first ? "[" : ",");
		json_str(d.name);
		printf(", \"uuid\": ");
		json_str(d.uuid);
		printf(", \"dev\": \"%u:%u\", \"vg\": ", d.info.major, d.info.minor);
		json_str(d.vg);
		printf(", \"lv\": ");
		json_str(d.lv);
		printf(", \"suspended\": %s, \"segments\": {", d.info.suspended ? "true" : "false");
		for (i = 0; i < 2; i++)
			printf("\"%s\": %d, ", types[i], table_count(&t, types[i]));
		printf("\"other\": %d}, \"blkg_assoc\": ", other);
		if (assoc[0])
			json_str(assoc);
		else
			printf("null");
		printf(", \"dm_core\": ");
		if (core[0])
			json_str(core);
		else
			printf("null");
		printf(", \"state\": \"%s\", \"converted_by_fastlinearctl\": %s, \"configured\": %s}",
		       state, was ? "true" : "false", conf > 0 ? "true" : "false");
	} else {
		printf("%s (%u:%u%s%s%s%s) %s: linear %d, fastlinear %d, other %d",
		       d.name, d.info.major, d.info.minor, d.vg[0] ? ", lv " : "",
		       d.vg, d.vg[0] ? "/" : "", d.lv, state,
		       table_count(&t, "linear"), table_count(&t, FL_TARGET), other);
		if (assoc[0])
			printf(", blkg_assoc=%s dm_core=%s", assoc, core);
		printf("%s%s%s\n", conf > 0 ? ", configured" : "",
		       was ? ", converted by fastlinearctl" : "",
		       d.info.suspended ? ", SUSPENDED" : "");
	}
	table_free(&t);
	table_free(&st);
	return 0;
}

/* ---- main ---------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [OPTIONS] convert DEV...|--all-lvm|--configured [DEV...]\n"
		"       %s [OPTIONS] revert DEV...|--all-lvm\n"
		"       %s [OPTIONS] status [DEV...|--all-lvm]\n"
		"DEV: dm name, /dev/mapper/NAME, /dev/dm-N, /dev/VG/LV, VG/LV or dm UUID\n"
		"  -n, --dry-run      say what would change, change nothing\n"
		"  -j, --json         status as JSON\n"
		"  -w, --wait SECS    wait up to SECS for LVM's VG lock (default 10; 0: refuse)\n"
		"  -c, --config FILE  the config file (default " FL_CONF ")\n"
		"      --configured   only the devices the config file names\n"
		"      --all-lvm      every logical volume (not LVM's internal layers)\n"
		"  -q, --quiet        no messages but errors\n",
		prog, prog, prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "wait", required_argument, NULL, 'w' },
		{ "config", required_argument, NULL, 'c' },
		{ "configured", no_argument, NULL, 'C' },
		{ "all-lvm", no_argument, NULL, 'A' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char **names = NULL, drv[64];
	int c, i, n, lockfd, ret = 0, shown = 0;
	const char *s;
	enum op op;

	if (getenv("FASTLINEAR_CONF"))
		conf_path = getenv("FASTLINEAR_CONF");
	if (getenv("FASTLINEAR_STATE_DIR"))
		state_dir = getenv("FASTLINEAR_STATE_DIR");
	while ((c = getopt_long(argc, argv, "njw:c:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			dry_run = true;
			break;
		case 'j':
			json = true;
			break;
		case 'w':
			lock_wait = atoi(optarg);
			break;
		case 'c':
			conf_path = optarg;
			break;
		case 'C':
			configured_only = true;
			break;
		case 'A':
			all_lvm = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	/* GNU getopt moved the command and the devices to the end */
	s = argv[optind++];
	if (!strcmp(s, "convert")) {
		op = OP_CONVERT;
	} else if (!strcmp(s, "revert")) {
		op = OP_REVERT;
	} else if (!strcmp(s, "status")) {
		op = OP_STATUS;
	} else {
		err("unknown command '%s'", s);
		usage(stderr);
		return 2;
	}
	if (configured_only && op != OP_CONVERT) {
		err("--configured is for convert");
		return 2;
	}
	if (optind == argc && op != OP_STATUS && !all_lvm && !configured_only) {
		err("%s: name a device, or --all-lvm%s", s,
		    op == OP_CONVERT ? ", or --configured" : "");
		return 2;
	}
	if (optind < argc && all_lvm) {
		err("--all-lvm takes no device");
		return 2;
	}
	dm_log_init_verbose(0);
	if (!dm_driver_version(drv, sizeof(drv))) {
		err("device-mapper is not available in this kernel");
		return 1;
	}
	/* our own tools serialize: one conversion at a time on this machine */
	lockfd = -1;
	if (op != OP_STATUS && !dry_run) {
		mkdir("/run/lock", 0755);
		lockfd = flock_path(getenv("FASTLINEAR_LOCK") ? getenv("FASTLINEAR_LOCK") : FL_LOCK,
				    "another fastlinearctl");
		if (lockfd < 0)
			return 1;
	}
	if (optind < argc) {
		for (i = optind; i < argc; i++)
			ret |= op == OP_STATUS ? status_one(argv[i], !shown++) : swap_one(argv[i], op);
	} else {
		/* every device: LVs for --all-lvm, configured ones, or (status) all */
		n = dm_list(&names);
		for (i = 0; i < n; i++) {
			struct dev d;
			struct table t;
			bool lin;

			if (dev_info(names[i], &d))
				continue;
			if (all_lvm && !is_top_lv(&d))
				continue;
			if (dm_read(d.name, DM_DEVICE_TABLE, false, &t))
				continue;
			lin = table_count(&t, "linear") || table_count(&t, FL_TARGET);
			table_free(&t);
			if (!lin)
				continue;
			if (op == OP_STATUS)
				ret |= status_one(names[i], !shown++);
			else
				ret |= swap_one(names[i], op);
		}
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
	}
	if (op == OP_STATUS && json)
		printf("%s]\n", shown ? "\n" : "[");
	if (lockfd >= 0)
		close(lockfd);
	return ret ? 1 : 0;
}
