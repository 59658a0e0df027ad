// SPDX-License-Identifier: GPL-2.0-only
/*
 * libdevmapper, with every task after the first lookup pinned to one
 * device (ctl.h): addressed by UUID or dev_t, its reply checked against
 * the pin.  Names are taken as the kernel has them, byte for byte (no
 * name mangling), but for a name the user typed, which is also tried as
 * libdevmapper would mangle it ("my disk" for the kernel's "my\x20disk").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>

#include "ctl.h"

static void dev_from_task(struct dm_task *dmt, struct dev *d)
{
	const char *s = dm_task_get_uuid(dmt);

	snprintf(d->name, sizeof(d->name), "%s", dm_task_get_name(dmt));
	snprintf(d->uuid, sizeof(d->uuid), "%s", s ? s : "");
	lvm_split(d);
}

/* the task TYPE for the pinned device */
static struct dm_task *task_for(const struct dev *pin, int type)
{
	struct dm_task *dmt = dm_task_create(type);

	if (!dmt)
		return NULL;
	if (pin->uuid[0] ? dm_task_set_uuid(dmt, pin->uuid) :
	    dm_task_set_major(dmt, pin->info.major) &&
	    dm_task_set_minor(dmt, pin->info.minor))
		return dmt;
	dm_task_destroy(dmt);
	return NULL;
}

/* the reply is the pinned device's: same dev_t, same UUID */
static int check_pin(struct dm_task *dmt, const struct dev *pin)
{
	const char *uuid = dm_task_get_uuid(dmt);
	struct dm_info info;

	if (!dm_task_get_info(dmt, &info) || !info.exists)
		return -ENODEV;
	if (info.major != pin->info.major || info.minor != pin->info.minor ||
	    strcmp(uuid ? uuid : "", pin->uuid))
		return -ESTALE;
	return 0;
}

/* run a pinned task: 0, -EIO (the ioctl failed), -ENODEV or -ESTALE */
static int run_pinned(struct dm_task *dmt, const struct dev *pin)
{
	if (!dm_task_run(dmt))
		return -EIO;
	return check_pin(dmt, pin);
}

static int info_once(struct dm_task *dmt, struct dev *d)
{
	memset(d, 0, sizeof(*d));
	if (!dm_task_run(dmt) || !dm_task_get_info(dmt, &d->info))
		return -EIO;
	if (!d->info.exists)
		return -ENODEV;
	dev_from_task(dmt, d);
	return 0;
}

static int info_by_name_mode(const char *name, dm_string_mangling_t mode,
			     struct dev *d)
{
	struct dm_task *dmt;
	int ret = -ENOMEM;

	dm_set_name_mangling_mode(mode);
	dmt = dm_task_create(DM_DEVICE_INFO);
	if (dmt && dm_task_set_name(dmt, name))
		ret = info_once(dmt, d);
	dm_set_name_mangling_mode(DM_STRING_MANGLING_NONE);
	if (dmt)
		dm_task_destroy(dmt);
	return ret;
}

/*
 * The device named NAME (tried twice: a lookup that fails once must not
 * make a device look absent), silent: 0, -ENODEV or another -errno.
 */
int dm_info_by_name(const char *name, struct dev *d)
{
	int ret = info_by_name_mode(name, DM_STRING_MANGLING_NONE, d);

	if (ret == -EIO)
		ret = info_by_name_mode(name, DM_STRING_MANGLING_NONE, d);
	if ((ret == -ENODEV || ret == -EIO) &&
	    !info_by_name_mode(name, DM_STRING_MANGLING_AUTO, d))
		ret = 0;
	return ret;
}

int dm_info_by_devt(unsigned int major, unsigned int minor, struct dev *d)
{
	struct dev pin = { .info = { .major = major, .minor = minor } };
	int i, ret = -EIO;

	for (i = 0; i < 2 && ret && ret != -ENODEV; i++) {
		struct dm_task *dmt = task_for(&pin, DM_DEVICE_INFO);

		if (!dmt)
			return -ENOMEM;
		ret = info_once(dmt, d);
		dm_task_destroy(dmt);
	}
	return ret;
}

/*
 * The pinned device as it is now, in NOW (tried twice), silent: 0,
 * -ENODEV (gone), -ESTALE (its dev_t or UUID is another device's now)
 * or -EIO.
 */
int dm_refresh(const struct dev *pin, struct dev *now)
{
	int i, ret = -EIO;

	for (i = 0; i < 2 && ret == -EIO; i++) {
		struct dm_task *dmt = task_for(pin, DM_DEVICE_INFO);

		if (!dmt)
			return -ENOMEM;
		ret = info_once(dmt, now);
		if (!ret)
			ret = check_pin(dmt, pin);
		dm_task_destroy(dmt);
	}
	return ret;
}

static int read_once(const struct dev *pin, int task, bool inactive, struct table *t)
{
	struct dm_task *dmt = task_for(pin, task);
	uint64_t start, len;
	char *type, *params;
	void *next = NULL;
	int ret = -ENOMEM;

	if (!dmt)
		return -ENOMEM;
	if (inactive && !dm_task_query_inactive_table(dmt))
		goto out;
	ret = run_pinned(dmt, pin);
	if (ret)
		goto out;
	do {
		next = dm_get_next_target(dmt, next, &start, &len, &type, &params);
		if (type) {
			ret = table_add(t, start, len, type, params);
			if (ret)
				goto out;
		}
	} while (next);
out:
	dm_task_destroy(dmt);
	if (ret)
		table_free(t);
	return ret;
}

/*
 * The live (or inactive) table, or the status lines (DM_DEVICE_STATUS),
 * into T, tried twice: a read that fails once must not leave us unable to
 * say which table is live.
 */
int dm_read(const struct dev *pin, int task, bool inactive, struct table *t)
{
	int ret;

	t->segs = NULL;
	t->n = 0;
	ret = read_once(pin, task, inactive, t);
	if (ret == -EIO || ret == -ENOMEM)
		ret = read_once(pin, task, inactive, t);
	if (ret)
		err("%s: cannot read its %s%s", pin->name,
		    task == DM_DEVICE_STATUS ? "status" :
		    inactive ? "inactive table" : "table",
		    ret == -ESTALE ? " (it is another device now)" :
		    ret == -ENODEV ? " (it is gone)" : "");
	return ret;
}

/* T as the inactive table, read-only or not (silent) */
int dm_load(const struct dev *pin, const struct table *t, bool read_only)
{
	struct dm_task *dmt = task_for(pin, DM_DEVICE_RELOAD);
	int i, ret = -ENOMEM;

	if (!dmt)
		return -ENOMEM;
	if (read_only && !dm_task_set_ro(dmt))
		goto out;
	for (i = 0; i < t->n; i++)
		if (!dm_task_add_target(dmt, t->segs[i].start, t->segs[i].len,
					t->segs[i].type, t->segs[i].params))
			goto out;
	ret = run_pinned(dmt, pin);
out:
	dm_task_destroy(dmt);
	return ret;
}

static int simple(const struct dev *pin, int type)
{
	struct dm_task *dmt = task_for(pin, type);
	int ret;

	if (!dmt)
		return -ENOMEM;
	ret = run_pinned(dmt, pin);
	dm_task_destroy(dmt);
	return ret;
}

/* no uevent for a suspend: no udev cookie either (silent) */
int dm_suspend(const struct dev *pin)
{
	return simple(pin, DM_DEVICE_SUSPEND);
}

int dm_clear(const struct dev *pin)
{
	return simple(pin, DM_DEVICE_CLEAR);
}

/* a resume with no udev cookie: the last resort (silent) */
int dm_resume_plain(const struct dev *pin)
{
	return simple(pin, DM_DEVICE_RESUME);
}

/* a semaphore libdevmapper made for COOKIE but could not raise */
static void cookie_remove(uint32_t cookie)
{
	int id = cookie ? semget((key_t)cookie, 1, 0) : -1;

	if (id >= 0)
		semctl(id, 0, IPC_RMID);
}

/*
 * The resume task with its udev cookie (FLAGS), made while nothing is
 * suspended: a cookie needs a semaphore, which can fail (SEMMNI reached,
 * ENOMEM); that must refuse the swap, not leave a device suspended.
 */
int resume_prepare(const struct dev *pin, uint16_t flags, struct resume *r)
{
	r->cookie = 0;
	r->dmt = task_for(pin, DM_DEVICE_RESUME);
	if (!r->dmt)
		return -ENOMEM;
	if (!dm_task_set_cookie(r->dmt, &r->cookie, flags)) {
		cookie_remove(r->cookie);
		r->cookie = 0;
		dm_task_destroy(r->dmt);
		r->dmt = NULL;
		return -EAGAIN;
	}
	return 0;
}

/* the resume itself; resume_wait() follows, whatever it returned */
int resume_run(const struct dev *pin, struct resume *r)
{
	return run_pinned(r->dmt, pin);
}

/* wait for udev to have handled the resume's event; frees the task */
void resume_wait(struct resume *r)
{
	if (r->cookie)
		dm_udev_wait(r->cookie);
	r->cookie = 0;
	dm_task_destroy(r->dmt);
	r->dmt = NULL;
}

/* a prepared resume never run: its cookie released, its task freed */
void resume_drop(struct resume *r)
{
	if (!r->dmt)
		return;
	if (r->cookie)
		dm_udev_complete(r->cookie);
	resume_wait(r);
}

void names_free(char **names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int list_once(char ***names)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_LIST);
	struct dm_names *nl;
	unsigned int next = 0;
	int n = 0, ret = -EIO;
	char **more;

	*names = calloc(1, sizeof(char *));
	if (!dmt || !*names) {
		ret = -ENOMEM;
		goto fail;
	}
	if (!dm_task_run(dmt))
		goto fail;
	nl = dm_task_get_names(dmt);
	if (!nl)
		goto fail;
	if (!nl->dev)
		goto out;
	ret = -ENOMEM;
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
	return ret;
}

/*
 * Every dm device name, in *NAMES (NULL-terminated): the count, or -errno
 * with a message.  Tried twice, as the reads: a list cut short would make
 * a VG's pvmove or a device the user named look absent.
 */
int dm_list_names(char ***names)
{
	int n = list_once(names);

	if (n < 0)
		n = list_once(names);
	if (n < 0)
		err("cannot list the dm devices");
	return n;
}

/*
 * Every dm device with its state, in *DEVS: the count, or -errno with a
 * message.  One list for a whole run: --all-lvm, --configured and a bare
 * status walk it once.  A device removed meanwhile is left out.
 */
int dm_list_devs(struct dev **devs)
{
	char **names;
	int i, n = dm_list_names(&names), k = 0;

	if (n < 0)
		return n;
	*devs = calloc(n ? n : 1, sizeof(**devs));
	if (!*devs) {
		names_free(names, n);
		err("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (!info_by_name_mode(names[i], DM_STRING_MANGLING_NONE, &(*devs)[k]) ||
		    !info_by_name_mode(names[i], DM_STRING_MANGLING_NONE, &(*devs)[k]))
			k++;
	names_free(names, n);
	return k;
}

bool dm_target_known(const char *target)
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
