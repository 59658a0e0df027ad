// SPDX-License-Identifier: GPL-2.0-only
/*
 * LVM's rules, as lvm2 itself applies them: which dm devices are logical
 * volumes a user sees, which are LVM's own layers, when a pvmove holds a
 * VG, and LVM's configuration as lvmconfig reads it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"

#ifndef FL_LVMCONFIG
#define FL_LVMCONFIG	"/sbin/lvmconfig"
#endif
#define LVM_LOCK_DIR	"/run/lock/lvm"	/* lvm2's compiled-in default */

/* VG, LV and layer of an LVM device, from its dm name */
void lvm_split(struct dev *d)
{
	struct dm_pool *mem;
	char *vg, *lv, *layer;

	d->vg[0] = d->lv[0] = d->layer[0] = 0;
	if (strncmp(d->uuid, "LVM-", 4))
		return;
	mem = dm_pool_create("fastlinearctl", 256);
	if (mem && dm_split_lvm_name(mem, d->name, &vg, &lv, &layer)) {
		snprintf(d->vg, sizeof(d->vg), "%s", vg);
		snprintf(d->lv, sizeof(d->lv), "%s", lv);
		snprintf(d->layer, sizeof(d->layer), "%s", layer);
	}
	if (mem)
		dm_pool_destroy(mem);
}

/*
 * A logical volume as the user sees it: not a layer (-real, -cow: a dm
 * name suffix and a UUID suffix) nor a sub-LV, whose names lvm2 reserves
 * (lib/metadata/lv_manip.c: apply_lvname_restrictions()).
 */
bool is_top_lv(const struct dev *d)
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
bool is_lvm_layer(const struct dev *d)
{
	return !strncmp(d->uuid, "LVM-", 4) && !is_top_lv(d);
}

/*
 * Whether VG's pvmove LV (VG-pvmoveN) exists, which may hold the device
 * suspended: 1, 0, or -errno when the devices cannot be listed (then
 * nobody can say, and the caller refuses).  From the names alone: one
 * ioctl however many devices there are.
 */
int vg_has_pvmove(const char *vg)
{
	struct dm_pool *mem = dm_pool_create("fastlinearctl", 1024);
	char **names, *v, *lv, *layer;
	int i, n, found = 0;

	if (!mem)
		return -ENOMEM;
	n = dm_list_names(&names);
	if (n < 0) {
		dm_pool_destroy(mem);
		return n;
	}
	for (i = 0; i < n && !found; i++)
		if (dm_split_lvm_name(mem, names[i], &v, &lv, &layer) &&
		    !strcmp(v, vg) && !strncmp(lv, "pvmove", 6))
			found = 1;
	names_free(names, n);
	dm_pool_destroy(mem);
	return found;
}

/*
 * KEY ("section/name") as LVM itself reads its configuration (lvm.conf,
 * lvmlocal.conf, LVM_SYSTEM_DIR, the compiled-in default), from lvmconfig
 * at its fixed path (not through PATH: we run as root): a string's value
 * without its quotes in BUF.  Silent; -ENOENT when lvmconfig cannot be run
 * or does not know KEY (an lvm2 without that setting).
 */
int lvmconfig(const char *key, char *buf, size_t size)
{
	char out[PATH_MAX + 64], want[64], *p, *q;
	ssize_t n, len = 0;
	int pfd[2], st;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		dup2(pfd[1], 1);
		if (fd >= 0)
			dup2(fd, 2);
		setenv("LVM_SUPPRESS_FD_WARNINGS", "1", 1);
		execl(FL_LVMCONFIG, "lvmconfig", "--typeconfig", "full", key, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (pid > 0 && len < (ssize_t)sizeof(out) - 1 &&
	       (n = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	close(pfd[0]);
	out[len] = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -ENOENT;
	p = strrchr(key, '/');
	snprintf(want, sizeof(want), "%s=\"", p ? p + 1 : key);
	p = strstr(out, want);
	q = p ? strchr(p + strlen(want), '"') : NULL;
	if (!q)
		return -ENOENT;
	*q = 0;
	snprintf(buf, size, "%s", p + strlen(want));
	return 0;
}

/* LVM's locking_dir, or lvm2's default where there is no lvmconfig */
const char *lvm_lock_dir(void)
{
	static char dir[PATH_MAX - DM_NAME_LEN - 8];

	if (!dir[0] && (lvmconfig("global/locking_dir", dir, sizeof(dir)) || !dir[0]))
		snprintf(dir, sizeof(dir), "%s", LVM_LOCK_DIR);
	return dir;
}
