// SPDX-License-Identifier: GPL-2.0-only
/*
 * fake-lvm.so: LD_PRELOAD stand-in for the kernel's device-mapper and
 * one PV, enough for lvm commands on a machine without dm.
 *
 * dm: /dev/mapper/control opens /dev/null; /proc/devices gains
 * "253 device-mapper"; the dm ioctls work on devices kept in the file
 * $FAKE_STATE (so they last from one lvm command to the next): create,
 * remove, rename, load (each table line appended to $FAKE_LOG as
 * "LOAD name: start length type params"), suspend/resume (resume makes
 * the loaded table live), info, deps, table and status (status of every
 * target: empty, as linear's).  LIST_VERSIONS lists the targets in
 * $FAKE_TARGETS (default "linear striped error zero").
 * PV: $FAKE_PV, a block device node, opens $FAKE_IMG (a file) in its
 * place, with the node's stat and the block ioctls lvm asks for.  An
 * LV's node (".../mapper/...") opens /dev/null, for BLKRAGET only.
 * modprobe is never run (logged as "MODPROBE args" and failed).
 * Nothing reaches a kernel.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef DM_EXISTS_FLAG
#define DM_EXISTS_FLAG 0x00000004	/* libdm's name for it */
#endif
#define MAXDEV 32
#define MAXTGT 8

struct tgt { unsigned long long start, len; char type[16], params[256]; };
struct table { unsigned int n; struct tgt t[MAXTGT]; };
struct dev {
	int used, suspended, has_live, has_inactive;
	unsigned int minor;
	char name[DM_NAME_LEN], uuid[DM_UUID_LEN];
	struct table live, inactive;
};
static struct dev devs[MAXDEV];
static int control_fd = -1, pv_fd = -1, lv_fd = -1;

static void *real(const char *sym)
{
	return dlsym(RTLD_NEXT, sym);
}

static void note(const char *fmt, ...)
{
	const char *path = getenv("FAKE_LOG");
	va_list ap;
	FILE *f;

	if (!path || !(f = ((FILE *(*)(const char *, const char *))real("fopen"))(path, "a")))
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static void state(int save)
{
	const char *path = getenv("FAKE_STATE");
	FILE *f;

	if (!path || !(f = ((FILE *(*)(const char *, const char *))real("fopen"))(path, save ? "w" : "r")))
		return;
	if (save)
		fwrite(devs, sizeof(devs), 1, f);
	else if (fread(devs, sizeof(devs), 1, f) != 1)
		memset(devs, 0, sizeof(devs));
	fclose(f);
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

static int fake_open(const char *sym, const char *path, int flags, mode_t mode)
{
	int (*open_fn)(const char *, int, ...) = real(sym);
	const char *pv = getenv("FAKE_PV"), *img = getenv("FAKE_IMG");

	if (ends_with(path, "/mapper/control"))
		return control_fd = open_fn("/dev/null", O_RDWR);
	if (pv && img && !strcmp(path, pv))
		return pv_fd = open_fn(img, flags & ~(O_DIRECT | O_EXCL));
	if (strstr(path, "/mapper/"))	/* an LV's node: for its read-ahead */
		return lv_fd = open_fn("/dev/null", O_RDONLY);
	return open_fn(path, flags, mode);
}

#define OPEN(sym)						\
int sym(const char *path, int flags, ...)			\
{								\
	mode_t mode = 0;					\
	va_list ap;						\
								\
	if (flags & O_CREAT) {					\
		va_start(ap, flags);				\
		mode = va_arg(ap, mode_t);			\
		va_end(ap);					\
	}							\
	return fake_open(#sym, path, flags, mode);		\
}
OPEN(open)
OPEN(open64)

int __open64_2(const char *path, int flags)
{
	return fake_open("open64", path, flags, 0);
}

int __open_2(const char *path, int flags)
{
	return fake_open("open", path, flags, 0);
}

static int pv_stat(struct stat *st)
{
	const char *pv = getenv("FAKE_PV");
	struct stat node;
	off_t size = st->st_size;

	if (!pv || ((int (*)(const char *, struct stat *))real("stat"))(pv, &node))
		return -1;
	*st = node;
	st->st_size = size;
	return 0;
}

int fstat(int fd, struct stat *st)
{
	int r = ((int (*)(int, struct stat *))real("fstat"))(fd, st);

	if (!r && fd == pv_fd && pv_fd >= 0)
		pv_stat(st);
	return r;
}

int fstat64(int fd, struct stat64 *st)
{
	return fstat(fd, (struct stat *)st);
}

static FILE *fake_fopen(const char *sym, const char *path, const char *mode)
{
	FILE *(*fopen_fn)(const char *, const char *) = real(sym);
	static char buf[8192];
	size_t n = 0;
	FILE *f;

	if (strcmp(path, "/proc/devices"))
		return fopen_fn(path, mode);
	if ((f = fopen_fn(path, mode))) {
		n = fread(buf, 1, sizeof(buf) - 64, f);
		fclose(f);
	}
	n += snprintf(buf + n, sizeof(buf) - n, "253 device-mapper\n");
	return fmemopen(buf, n, "r");
}

FILE *fopen(const char *path, const char *mode)
{
	return fake_fopen("fopen", path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	return fake_fopen("fopen64", path, mode);
}

int execvp(const char *file, char *const argv[])
{
	int i;

	if (ends_with(file, "modprobe")) {
		note("MODPROBE");
		for (i = 1; argv[i]; i++)
			note(" %s", argv[i]);
		note("\n");
		_exit(1);
	}
	return ((int (*)(const char *, char *const[]))real("execvp"))(file, argv);
}

static struct dev *find(struct dm_ioctl *dmi)
{
	int i;

	for (i = 0; i < MAXDEV; i++) {
		if (!devs[i].used)
			continue;
		if (dmi->name[0] ? !strcmp(devs[i].name, dmi->name) :
		    dmi->uuid[0] ? !strcmp(devs[i].uuid, dmi->uuid) :
		    minor(dmi->dev) == devs[i].minor)
			return &devs[i];
	}
	return NULL;
}

static void info(struct dm_ioctl *dmi, struct dev *d)
{
	dmi->flags &= ~(DM_SUSPEND_FLAG | DM_ACTIVE_PRESENT_FLAG | DM_INACTIVE_PRESENT_FLAG);
	dmi->flags |= DM_EXISTS_FLAG | (d->suspended ? DM_SUSPEND_FLAG : 0) |
		(d->has_live ? DM_ACTIVE_PRESENT_FLAG : 0) |
		(d->has_inactive ? DM_INACTIVE_PRESENT_FLAG : 0);
	dmi->dev = makedev(253, d->minor);
	dmi->target_count = d->has_live ? d->live.n : 0;
	dmi->open_count = 0;
	dmi->event_nr = 0;
	snprintf(dmi->name, sizeof(dmi->name), "%s", d->name);
	snprintf(dmi->uuid, sizeof(dmi->uuid), "%s", d->uuid);
}

/* output area after the header; 0 and DM_BUFFER_FULL_FLAG if it does not fit */
static char *out(struct dm_ioctl *dmi, size_t need)
{
	dmi->data_start = sizeof(*dmi);
	if (dmi->data_start + need > dmi->data_size) {
		dmi->flags |= DM_BUFFER_FULL_FLAG;
		return NULL;
	}
	memset((char *)dmi + dmi->data_start, 0, need);
	return (char *)dmi + dmi->data_start;
}

static void load(struct dm_ioctl *dmi, struct dev *d)
{
	char *p = (char *)dmi + dmi->data_start;
	struct dm_target_spec *s;
	unsigned int i;

	d->inactive.n = 0;
	for (i = 0; i < dmi->target_count && i < MAXTGT; i++) {
		s = (struct dm_target_spec *)p;
		d->inactive.t[i].start = s->sector_start;
		d->inactive.t[i].len = s->length;
		snprintf(d->inactive.t[i].type, 16, "%s", s->target_type);
		snprintf(d->inactive.t[i].params, 256, "%s", (char *)(s + 1));
		note("LOAD %s: %llu %llu %s %s\n", d->name, d->inactive.t[i].start,
		     d->inactive.t[i].len, d->inactive.t[i].type, d->inactive.t[i].params);
		d->inactive.n++;
		p += s->next;
	}
	d->has_inactive = 1;
}

static void status(struct dm_ioctl *dmi, struct dev *d)
{
	int inactive = dmi->flags & DM_QUERY_INACTIVE_TABLE_FLAG;
	int table = dmi->flags & DM_STATUS_TABLE_FLAG;
	struct table *t = inactive ? &d->inactive : &d->live;
	unsigned int i, n = (inactive ? d->has_inactive : d->has_live) ? t->n : 0;
	size_t pos = 0, len;
	struct dm_target_spec *s;
	char *o;

	info(dmi, d);
	if (!(o = out(dmi, n * (sizeof(*s) + 264))))
		return;
	for (i = 0; i < n; i++) {
		s = (struct dm_target_spec *)(o + pos);
		s->sector_start = t->t[i].start;
		s->length = t->t[i].len;
		snprintf(s->target_type, sizeof(s->target_type), "%s", t->t[i].type);
		len = snprintf((char *)(s + 1), 256, "%s", table ? t->t[i].params : "") + 1;
		pos += (sizeof(*s) + len + 7) & ~(size_t)7;
		s->next = pos;
	}
	dmi->target_count = n;
	dmi->data_size = dmi->data_start + pos;
}

static void deps(struct dm_ioctl *dmi, struct dev *d)
{
	struct dm_target_deps *o;
	unsigned int i, ma, mi;
	const char *p;

	info(dmi, d);
	if (!(o = (struct dm_target_deps *)out(dmi, sizeof(*o) + MAXTGT * 4 * sizeof(__u64))))
		return;
	for (i = 0; d->has_live && i < d->live.n; i++)
		for (p = d->live.t[i].params; *p; p++)
			if ((p == d->live.t[i].params || p[-1] == ' ') &&
			    sscanf(p, "%u:%u", &ma, &mi) == 2 && o->count < MAXTGT * 4)
				o->dev[o->count++] = makedev(ma, mi);
}

static void list(struct dm_ioctl *dmi)
{
	struct dm_name_list *nl = NULL;
	size_t pos = 0, sz;
	char *o;
	int i;

	if (!(o = out(dmi, MAXDEV * (sizeof(*nl) + DM_NAME_LEN + 8))))
		return;
	for (i = 0; i < MAXDEV; i++) {
		if (!devs[i].used)
			continue;
		if (nl)
			nl->next = pos - ((char *)nl - o);
		nl = (struct dm_name_list *)(o + pos);
		nl->dev = makedev(253, devs[i].minor);
		strcpy(nl->name, devs[i].name);
		sz = (sizeof(*nl) + strlen(nl->name) + 1 + 7) & ~(size_t)7;
		pos += sz;
	}
	dmi->data_size = dmi->data_start + (pos ? pos : sizeof(*nl));
}

static void versions(struct dm_ioctl *dmi)
{
	const char *env = getenv("FAKE_TARGETS");
	char names[256], *n, *save = NULL;
	struct dm_target_versions *v = NULL;
	size_t pos = 0;
	char *o;

	snprintf(names, sizeof(names), "%s", env ? env : "linear striped error zero");
	if (!(o = out(dmi, 4096)))
		return;
	for (n = strtok_r(names, " ", &save); n; n = strtok_r(NULL, " ", &save)) {
		if (v)
			v->next = pos - ((char *)v - o);
		v = (struct dm_target_versions *)(o + pos);
		v->version[0] = 1;
		strcpy(v->name, n);
		pos += (sizeof(*v) + strlen(n) + 1 + 7) & ~(size_t)7;
	}
	dmi->data_size = dmi->data_start + pos;
}

static int dm_ioctl(unsigned int nr, struct dm_ioctl *dmi)
{
	struct dev *d = NULL;
	int i;

	state(0);
	if (nr == DM_VERSION_CMD) {
		dmi->version[0] = 4;
		dmi->version[1] = 37;
		dmi->version[2] = 0;
		return 0;
	}
	if (nr == DM_LIST_DEVICES_CMD) {
		list(dmi);
		return 0;
	}
	if (nr == DM_LIST_VERSIONS_CMD) {
		versions(dmi);
		return 0;
	}
	if (nr == DM_REMOVE_ALL_CMD || nr == DM_DEV_SET_GEOMETRY_CMD || nr == DM_DEV_ARM_POLL_CMD)
		return 0;
	if (nr == DM_DEV_CREATE_CMD) {
		for (i = 0; i < MAXDEV && devs[i].used; i++)
			;
		if (i == MAXDEV || find(dmi)) {
			errno = i == MAXDEV ? ENOMEM : EBUSY;
			return -1;
		}
		d = &devs[i];
		memset(d, 0, sizeof(*d));
		d->used = 1;
		d->minor = i + 1;
		snprintf(d->name, sizeof(d->name), "%s", dmi->name);
		snprintf(d->uuid, sizeof(d->uuid), "%s", dmi->uuid);
		info(dmi, d);
		state(1);
		return 0;
	}
	if (!(d = find(dmi))) {
		errno = ENXIO;
		return -1;
	}
	switch (nr) {
	case DM_DEV_REMOVE_CMD:
		d->used = 0;
		break;
	case DM_DEV_RENAME_CMD:
		snprintf(d->name, sizeof(d->name), "%s", (char *)dmi + dmi->data_start);
		info(dmi, d);
		break;
	case DM_DEV_SUSPEND_CMD:
		if (dmi->flags & DM_SUSPEND_FLAG) {
			d->suspended = 1;
		} else {
			if (d->has_inactive) {
				d->live = d->inactive;
				d->has_live = 1;
				d->has_inactive = 0;
				note("LIVE %s\n", d->name);
			}
			d->suspended = 0;
		}
		info(dmi, d);
		break;
	case DM_TABLE_LOAD_CMD:
		load(dmi, d);
		info(dmi, d);
		break;
	case DM_TABLE_CLEAR_CMD:
		d->has_inactive = 0;
		info(dmi, d);
		break;
	case DM_TABLE_DEPS_CMD:
		deps(dmi, d);
		break;
	case DM_TABLE_STATUS_CMD:
	case DM_DEV_WAIT_CMD:
		status(dmi, d);
		break;
	default:
		info(dmi, d);
	}
	state(1);
	return 0;
}

int ioctl(int fd, unsigned long req, ...)
{
	int (*ioctl_fn)(int, unsigned long, ...) = real("ioctl");
	struct stat st;
	void *arg;
	va_list ap;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == control_fd)
		return dm_ioctl(_IOC_NR(req), arg);
	if (fd >= 0 && fd == lv_fd && req == BLKRAGET) {
		*(long *)arg = 256;
		return 0;
	}
	if (fd < 0 || fd != pv_fd)
		return ioctl_fn(fd, req, arg);
	switch (req) {
	case BLKGETSIZE64:
		if (((int (*)(int, struct stat *))real("fstat"))(fd, &st))
			return -1;
		*(unsigned long long *)arg = st.st_size;
		return 0;
	case BLKGETSIZE:
		if (((int (*)(int, struct stat *))real("fstat"))(fd, &st))
			return -1;
		*(unsigned long *)arg = st.st_size >> 9;
		return 0;
	case BLKSSZGET:
	case BLKPBSZGET:
		*(int *)arg = 512;
		return 0;
	case BLKRAGET:
		*(long *)arg = 256;
		return 0;
	case BLKFLSBUF:
		return 0;
	default:
		errno = ENOTTY;
		return -1;
	}
}
