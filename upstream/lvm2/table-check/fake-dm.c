// SPDX-License-Identifier: GPL-2.0-only
/*
 * fake-dm.so: LD_PRELOAD stand-in for the kernel's device-mapper, enough
 * for libdevmapper to create devices and load tables on a machine
 * without dm.  It opens /dev/null for /dev/mapper/control, reports dm
 * in /proc/devices, and answers the dm ioctls: VERSION (4.48.0),
 * DEV_CREATE, DEV_STATUS (ENXIO for a name it has not created),
 * TABLE_LOAD (each target printed to stderr as "TABLE name: start
 * length type params"), and the rest with success.
 * No device exists afterwards; nothing reaches a kernel.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <linux/dm-ioctl.h>

#ifndef DM_EXISTS_FLAG
#define DM_EXISTS_FLAG 0x00000004	/* libdm's name for it; not in the uapi header */
#endif

static int control_fd = -1;
static char created[16][DM_NAME_LEN];
static unsigned int ncreated;

static int is_control(const char *path)
{
	size_t n = strlen(path), c = strlen("/mapper/control");

	return n >= c && !strcmp(path + n - c, "/mapper/control");
}

static int fake_open(const char *sym, const char *path, int flags, mode_t mode)
{
	int (*real_open)(const char *, int, ...) = dlsym(RTLD_NEXT, sym);

	if (is_control(path))
		return control_fd = real_open("/dev/null", O_RDWR);
	return real_open(path, flags, mode);
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

static FILE *fake_fopen(const char *sym, const char *path, const char *mode)
{
	static char devices[] = "Character devices:\n 10 misc\n\nBlock devices:\n253 device-mapper\n";
	FILE *(*real_fopen)(const char *, const char *) = dlsym(RTLD_NEXT, sym);

	if (!strcmp(path, "/proc/devices"))
		return fmemopen(devices, strlen(devices), "r");
	return real_fopen(path, mode);
}

FILE *fopen(const char *path, const char *mode)
{
	return fake_fopen("fopen", path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	return fake_fopen("fopen64", path, mode);
}

static int known(const char *name)
{
	unsigned int i;

	for (i = 0; i < ncreated; i++)
		if (!strcmp(created[i], name))
			return 1;
	return 0;
}

/* DEV_CREATE gave the Nth device minor N; TABLE_LOAD comes by number */
static const char *name_of(__u64 dev)
{
	unsigned int m = minor(dev);

	return m >= 1 && m <= ncreated ? created[m - 1] : "?";
}

static void print_table(struct dm_ioctl *dmi)
{
	char *p = (char *)dmi + dmi->data_start;
	struct dm_target_spec *t;
	unsigned int i;

	for (i = 0; i < dmi->target_count; i++) {
		t = (struct dm_target_spec *)p;
		fprintf(stderr, "TABLE %s: %llu %llu %s %s\n", name_of(dmi->dev),
			(unsigned long long)t->sector_start,
			(unsigned long long)t->length, t->target_type,
			(char *)(t + 1));
		p += t->next;	/* on TABLE_LOAD: from this spec to the next */
	}
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real_ioctl)(int, unsigned long, ...);
	struct dm_ioctl *dmi;
	va_list ap;

	va_start(ap, req);
	dmi = va_arg(ap, struct dm_ioctl *);
	va_end(ap);
	if (!real_ioctl)
		real_ioctl = dlsym(RTLD_NEXT, "ioctl");
	if (fd != control_fd || control_fd < 0)
		return real_ioctl(fd, req, dmi);

	switch (_IOC_NR(req)) {
	case DM_VERSION_CMD:
		dmi->version[0] = 4;
		dmi->version[1] = 48;
		dmi->version[2] = 0;
		return 0;
	case DM_DEV_CREATE_CMD:
		if (ncreated < 16)
			snprintf(created[ncreated++], DM_NAME_LEN, "%s", dmi->name);
		dmi->dev = makedev(253, ncreated);
		dmi->flags |= DM_EXISTS_FLAG;
		return 0;
	case DM_DEV_STATUS_CMD:
		if (!known(dmi->name)) {
			errno = ENXIO;
			return -1;
		}
		dmi->flags |= DM_EXISTS_FLAG;
		return 0;
	case DM_TABLE_LOAD_CMD:
		print_table(dmi);
		dmi->flags |= DM_EXISTS_FLAG | DM_INACTIVE_PRESENT_FLAG;
		return 0;
	default:
		dmi->flags |= DM_EXISTS_FLAG;
		return 0;
	}
}
