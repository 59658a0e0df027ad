// SPDX-License-Identifier: GPL-2.0-only
/*
 * udev: the flags a resume's cookie carries, and the gate that keeps a
 * configured device from systemd until it is converted (95-fastlinear.rules).
 */
#include <errno.h>
#include <limits.h>
#include <libudev.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "ctl.h"

/* whether udev's database gives UD the property PROP with the value VAL */
static bool prop_is(struct udev_device *ud, const char *prop, const char *val)
{
	const char *v = udev_device_get_property_value(ud, prop);

	return v && !strcmp(v, val);
}

static struct udev_device *udev_dev(struct udev *udev, const struct dev *d)
{
	return udev_device_new_from_devnum(udev, 'b', makedev(d->info.major, d->info.minor));
}

/*
 * The udev flags for the resume's cookie, as lvm2 would give them: the
 * ones the device's last event carried (udev's database, where 10-dm.rules
 * and the LVM rules keep them), but those the rules derive rather than
 * take from the cookie.  DM_UDEV_DISABLE_OTHER_RULES_FLAG is derived: the
 * rules set it for any event seen while the device was suspended.  lvm2
 * 2.03.24 and later keep the cookie's own value apart, as
 * DM_COOKIE_DISABLE_OTHER_RULES_FLAG: that one is used.  With older rules
 * (2.03.16) a top-level LV, which lvm2 resumes with none of the disable
 * flags, gets none; another device keeps what it had.
 */
uint16_t dev_udev_flags(const struct dev *d)
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
	const uint16_t derived = DM_UDEV_DISABLE_SUBSYSTEM_RULES_FLAG |
				 DM_UDEV_DISABLE_DISK_RULES_FLAG |
				 DM_UDEV_DISABLE_OTHER_RULES_FLAG;
	struct udev *udev = udev_new();
	struct udev_device *ud;
	const char *own;
	uint16_t flags = 0;
	size_t i;

	if (!udev)
		return 0;
	ud = udev_dev(udev, d);
	if (ud) {
		for (i = 0; i < sizeof(props) / sizeof(props[0]); i++)
			if (prop_is(ud, props[i].prop, "1"))
				flags |= props[i].flag;
		own = udev_device_get_property_value(ud, "DM_COOKIE_DISABLE_OTHER_RULES_FLAG");
		if (own) {
			flags &= ~DM_UDEV_DISABLE_OTHER_RULES_FLAG;
			if (!strcmp(own, "1"))
				flags |= DM_UDEV_DISABLE_OTHER_RULES_FLAG;
		} else if (is_top_lv(d)) {
			flags &= ~derived;
		}
		/*
		 * LVM's NOSCAN (subsystem flag 0) is for one event, before
		 * lvcreate zeroes the LV: the rules then set the "other
		 * rules" flag too, keeping the one they replaced, and clear
		 * both on the next event.  Resume as that event would.
		 */
		if (prop_is(ud, "DM_NOSCAN", "1")) {
			flags &= ~(DM_SUBSYSTEM_UDEV_FLAG0 | DM_UDEV_DISABLE_OTHER_RULES_FLAG);
			if (prop_is(ud, "DM_DISABLE_OTHER_RULES_FLAG_OLD", "1"))
				flags |= DM_UDEV_DISABLE_OTHER_RULES_FLAG;
		}
		udev_device_unref(ud);
	}
	udev_unref(udev);
	return flags;
}

/*
 * The release file the udev job writes when it gives up on converting D
 * (kernel name KNAME) before systemd may use it: STATE_DIR/ready/KNAME,
 * whose first line is D's UUID (its name if it has none), so that a file
 * left by an earlier device of that kernel name does not count.
 */
static bool released(const struct opts *o, const struct dev *d, const char *kname)
{
	char path[PATH_MAX], line[DM_UUID_LEN + 2];
	const char *id = d->uuid[0] ? d->uuid : d->name;
	bool same = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ready/%s", o->state_dir, kname);
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
 * udev-gate [--job] [--no-hold] dm-N, for 95-fastlinear.rules
 * (IMPORT{program}).  Prints FASTLINEAR_CONFIGURED=1 when the config names
 * the device: the rule queues a job only then, so a host that configures
 * nothing starts none.  With --no-hold (no systemd) that is all.
 * Else it says whether udev should keep dm-N from systemd
 * (SYSTEMD_READY=0: its device unit stays inactive, an fstab mount of it
 * waits) until the job has converted it.  The previous event's udev
 * database (this event's is written after the rules ran) says whether
 * systemd has had the device: tagged "systemd" by 99-systemd.rules and
 * SYSTEMD_READY not 0.  A device activated in the initramfs (whose udev
 * has lvm2's rules but not systemd's) is not tagged until the coldplug
 * event after the switch to the root: systemd has not had it.  If it was
 * ready, it prints FASTLINEAR_READY=1 and the rule never asks again
 * (holding back a device systemd has would stop the mounts bound to it).
 * Else it prints FASTLINEAR_GATE=1 if the device is configured, not open,
 * the job has not given up on it (STATE_DIR/ready/dm-N), and either
 * this event queues a job (--job) with a linear segment live, or the
 * previous event was held: its job is still to end, and a suspend in
 * between (LVM's, or the job's own) keeps the hold.  Reads only; no lock,
 * no modprobe.  Returns 0 but for a usage error (-EINVAL).
 */
int udev_gate(const struct opts *o, const char *kname)
{
	bool held = false, ready = false;
	struct table t = { 0 };
	struct udev_device *ud;
	struct udev *udev;
	struct dev d;

	if (!is_kname(kname)) {
		err("udev-gate: %s is not a kernel name dm-N", kname);
		return -EINVAL;
	}
	if (resolve(kname, &d) || !config_matches(o->conf, &d))
		return 0;
	printf("FASTLINEAR_CONFIGURED=1\n");
	if (o->gate_no_hold)
		return 0;
	udev = udev_new();
	if (!udev)
		return 0;
	ud = udev_dev(udev, &d);
	if (ud) {
		ready = udev_device_has_tag(ud, "systemd") &&
			!prop_is(ud, "SYSTEMD_READY", "0");
		held = prop_is(ud, "FASTLINEAR_GATE", "1");
		udev_device_unref(ud);
	}
	udev_unref(udev);
	if (ready) {
		printf("FASTLINEAR_READY=1\n");
		return 0;
	}
	if ((!o->gate_job && !held) || !d.info.live_table ||
	    d.info.open_count > 0 || released(o, &d, kname))
		return 0;
	/* a suspended device's table is not read: the hold stays as it was */
	if (d.info.suspended) {
		if (held)
			printf("FASTLINEAR_GATE=1\n");
		return 0;
	}
	if (dm_read(&d, DM_DEVICE_TABLE, false, &t))
		return 0;
	if (table_count(&t, "linear"))
		printf("FASTLINEAR_GATE=1\n");
	table_free(&t);
	return 0;
}
