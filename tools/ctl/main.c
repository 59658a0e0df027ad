// SPDX-License-Identifier: GPL-2.0-only
/*
 * fastlinearctl: convert live linear device-mapper tables (LVM logical
 * volumes or any other dm device) to the fastlinear target and back, with
 * libdevmapper: one table load, suspend, resume; same device, same dev_t.
 *
 *   fastlinearctl [OPTIONS] convert DEV...|--all-lvm|--configured [DEV...]
 *   fastlinearctl [OPTIONS] revert  DEV...|--all-lvm
 *   fastlinearctl [OPTIONS] status  [DEV...|--all-lvm] [--json]
 *   fastlinearctl [OPTIONS] udev-gate [--job] [--no-hold] dm-N
 *
 * Exit status: 0 done (or nothing to do), 1 refused or failed (every
 * device left running, with its old or its new table), 2 usage, 3 a
 * device could not be resumed.  fastlinearctl(8) has the rest.  This file:
 * the command line and the walk over the devices; ctl.h lists the parts.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

#ifndef FL_SYSCONFDIR
#define FL_SYSCONFDIR	"/etc/fastlinear"
#endif
#ifndef FL_VERSION
#define FL_VERSION	"unknown"
#endif
#define FL_CONF		FL_SYSCONFDIR "/fastlinear.conf"
#define FL_STATE_DIR	"/run/fastlinear"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [OPTIONS] convert [--] DEV...|--all-lvm|--configured [DEV...]\n"
		"       %s [OPTIONS] revert [--] DEV...|--all-lvm\n"
		"       %s [OPTIONS] status [--] [DEV...|--all-lvm]\n"
		"       %s [OPTIONS] udev-gate [--job] [--no-hold] dm-N   (for 95-fastlinear.rules)\n"
		"       %s --version\n"
		"DEV: dm name, /dev/mapper/NAME, /dev/dm-N, dm-N, /dev/VG/LV, VG/LV or dm UUID\n"
		"  -n, --dry-run        say what would change; change nothing, take no lock\n"
		"  -j, --json           status as JSON\n"
		"  -w, --wait SECS      wait up to SECS for a lock (0-%d, default 10; 0: refuse)\n"
		"  -c, --config FILE    the config file (default " FL_CONF ")\n"
		"      --configured     only the devices the config file names\n"
		"      --all-lvm        every logical volume with a linear (revert: fastlinear)\n"
		"                       segment, not LVM's internal layers\n"
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

static int ctl_exit(int ret)
{
	if (!ret)
		return EXIT_DONE;
	return ret == -ELEFT_SUSPENDED ? EXIT_SUSPENDED : EXIT_FAILED;
}

/* every device for --all-lvm, --configured or a bare status: one list */
static int every_device(const struct opts *o, enum op op, struct status *s)
{
	struct dev *devs;
	int i, n, ex = EXIT_DONE;

	n = dm_list_devs(&devs);
	if (n < 0)
		return s ? ctl_exit(status_fail(s, "", -n, "cannot list the dm devices")) :
			   EXIT_FAILED;
	for (i = 0; i < n; i++) {
		const struct dev *d = &devs[i];
		struct table t;
		bool lin;
		int r;

		if ((o->all_lvm && !is_top_lv(d)) || is_lvm_layer(d))
			continue;
		if (dm_read(d, DM_DEVICE_TABLE, false, &t))
			continue;
		lin = table_count(&t, "linear") || table_count(&t, FL_TARGET);
		table_free(&t);
		if (!lin)
			continue;
		r = ctl_exit(s ? status_one(s, d->name, d) : swap_one(o, d->name, d, op));
		ex = r > ex ? r : ex;
	}
	free(devs);
	return ex;
}

/*
 * The words (the command, then the devices) in order: their count, or
 * -errno (a usage error said), with *DONE for --version and --help.  getopt's
 * RETURN_IN_ORDER ("-" first) hands each back as option 1, whatever
 * POSIXLY_CORRECT says: "convert --configured" stays an option.
 */
static int parse(int argc, char **argv, struct opts *o, char ***words, bool *done)
{
	enum { OPT_CONFIGURED = 256, OPT_ALL_LVM, OPT_STATE_DIR, OPT_JOB, OPT_NO_HOLD };
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "wait", required_argument, NULL, 'w' },
		{ "config", required_argument, NULL, 'c' },
		{ "configured", no_argument, NULL, OPT_CONFIGURED },
		{ "all-lvm", no_argument, NULL, OPT_ALL_LVM },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "job", no_argument, NULL, OPT_JOB },
		{ "no-hold", no_argument, NULL, OPT_NO_HOLD },
		{ "quiet", no_argument, NULL, 'q' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, n = 0;

	*words = calloc(argc + 1, sizeof(char *));
	if (!*words)
		return -ENOMEM;
	while ((c = getopt_long(argc, argv, "-njw:c:qVh", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			(*words)[n++] = optarg;
			break;
		case 'n':
			o->dry_run = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'w':
			o->lock_wait = parse_wait(optarg);
			if (o->lock_wait < 0) {
				err("--wait %s: not a number of seconds from 0 to %d",
				    optarg, MAX_WAIT);
				return -EINVAL;
			}
			break;
		case 'c':
			o->conf_path = optarg;
			break;
		case OPT_CONFIGURED:
			o->configured_only = true;
			break;
		case OPT_ALL_LVM:
			o->all_lvm = true;
			break;
		case OPT_STATE_DIR:
			o->state_dir = optarg;
			break;
		case OPT_JOB:
			o->gate_job = true;
			break;
		case OPT_NO_HOLD:
			o->gate_no_hold = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'V':
			printf("%s %s\n", prog, FL_VERSION);
			*done = true;
			return 0;
		case 'h':
			usage(stdout);
			*done = true;
			return 0;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	while (optind < argc)
		(*words)[n++] = argv[optind++];
	return n;
}

/* the command in WORDS[0], and the combinations of options it takes */
static int check_usage(const struct opts *o, char **words, int n, enum op *op)
{
	static const char * const names[] = { "convert", "revert", "status", "udev-gate" };
	unsigned int i;

	if (!n) {
		usage(stderr);
		return -EINVAL;
	}
	for (i = 0; i < 4 && strcmp(words[0], names[i]); i++)
		;
	if (i == 4) {
		err("unknown command '%s'", words[0]);
		usage(stderr);
		return -EINVAL;
	}
	*op = (enum op)i;
	if (((o->gate_job || o->gate_no_hold) && *op != OP_GATE) ||
	    (*op == OP_GATE && (n != 2 || o->configured_only || o->all_lvm))) {
		err("udev-gate takes one dm-N, and --job and --no-hold only");
		return -EINVAL;
	}
	if (o->configured_only && *op != OP_CONVERT) {
		err("--configured is for convert");
		return -EINVAL;
	}
	if (n == 1 && *op != OP_STATUS && !o->all_lvm && !o->configured_only) {
		err("%s: name a device, or --all-lvm%s", words[0],
		    *op == OP_CONVERT ? ", or --configured" : "");
		return -EINVAL;
	}
	if (n > 1 && o->all_lvm) {
		err("--all-lvm takes no device");
		return -EINVAL;
	}
	return 0;
}

static int run(struct opts *o, enum op op, char **devs, int n)
{
	struct status *s = NULL;
	char drv[64];
	int i, r, ex = EXIT_DONE;

	if (op == OP_STATUS) {
		s = status_begin(o);
		if (!s)
			return EXIT_FAILED;
	}
	if (!dm_driver_version(drv, sizeof(drv))) {
		if (s) {
			status_fail(s, "", ENODEV, "device-mapper is not available in this kernel");
			status_end(s);
		} else {
			err("device-mapper is not available in this kernel");
		}
		return EXIT_FAILED;
	}
	if (s && config_load(o->conf_path, &o->conf))
		ex = ctl_exit(status_fail(s, o->conf_path, EIO, "cannot read the config"));
	if (!n) {
		r = every_device(o, op, s);
		ex = r > ex ? r : ex;
	}
	for (i = 0; i < n; i++) {
		r = ctl_exit(s ? status_one(s, devs[i], NULL) : swap_one(o, devs[i], NULL, op));
		ex = r > ex ? r : ex;
	}
	if (s)
		status_end(s);
	return ex;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.lock_wait = 10,
		.conf_path = FL_CONF,
		.state_dir = FL_STATE_DIR,
	};
	char **words = NULL;
	bool done = false;
	enum op op;
	int n, ex;

	n = parse(argc, argv, &o, &words, &done);
	if (done || n < 0 || check_usage(&o, words, n, &op)) {
		free(words);
		return done ? EXIT_DONE : n == -ENOMEM ? EXIT_FAILED : EXIT_USAGE;
	}
	log_init(o.quiet);
	/* the names as the kernel has them, byte for byte (dm.c) */
	dm_set_name_mangling_mode(DM_STRING_MANGLING_NONE);
	if ((op == OP_GATE || o.configured_only) && op != OP_STATUS &&
	    config_load(o.conf_path, &o.conf)) {
		ex = op == OP_GATE ? EXIT_DONE : EXIT_FAILED;
		goto out;
	}
	if (op == OP_GATE)
		ex = udev_gate(&o, words[1]) ? EXIT_USAGE : EXIT_DONE;
	else
		ex = run(&o, op, words + 1, n - 1);
out:
	config_free(o.conf);
	free(words);
	return ex;
}
