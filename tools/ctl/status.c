// SPDX-License-Identifier: GPL-2.0-only
/* status: each device's tables and state, as text or as JSON. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"

#ifndef FL_VERSION
#define FL_VERSION	"unknown"
#endif
#define JSON_FORMAT	1

/* a device that could not be shown, for JSON's "errors" */
struct failure {
	char *device, *error;
};

struct status {
	const struct opts *o;
	struct json j;
	struct failure *fails;
	int nfails;
};

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

/* the last line of status (a member of JSON's object): who loads LVs' tables */
static void status_lvm(struct status *s)
{
	char target[64];
	const char *path = lvm_path(target, sizeof(target));

	if (s->o->json) {
		json_open(&s->j, "lvm", '{');
		json_string_or_null(&s->j, "linear_target", target);
		json_string(&s->j, "path", path);
		json_close(&s->j, '}');
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

struct status *status_begin(const struct opts *o)
{
	struct status *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->o = o;
	if (!o->json)
		return s;
	json_init(&s->j, stdout);
	json_open(&s->j, NULL, '{');
	json_int(&s->j, "format", JSON_FORMAT);
	json_string(&s->j, "version", FL_VERSION);
	status_lvm(s);
	json_open(&s->j, "devices", '[');
	return s;
}

/* said, and kept for JSON's "errors"; returns -ERRNUM */
int status_fail(struct status *s, const char *arg, int errnum, const char *why)
{
	struct failure *f;

	if (arg[0])
		err("%s: %s", arg, why);
	else
		err("%s", why);
	if (!s->o->json)
		return -errnum;
	f = realloc(s->fails, (s->nfails + 1) * sizeof(*f));
	if (!f)
		return -errnum;
	s->fails = f;
	f[s->nfails].device = strdup(arg);
	f[s->nfails].error = strdup(why);
	if (f[s->nfails].device && f[s->nfails].error) {
		s->nfails++;
	} else {
		free(f[s->nfails].device);
		free(f[s->nfails].error);
	}
	return -errnum;
}

static void print_text(const struct dev *d, const struct table *t,
		       const char *state, const char *assoc, const char *core,
		       bool conf, bool was)
{
	int other = t->n - table_count(t, "linear") - table_count(t, FL_TARGET);

	printf("%s (%u:%u%s%s%s%s) %s: linear %d, fastlinear %d, other %d",
	       d->name, d->info.major, d->info.minor, d->vg[0] ? ", lv " : "",
	       d->vg, d->vg[0] ? "/" : "", d->lv, state,
	       table_count(t, "linear"), table_count(t, FL_TARGET), other);
	if (assoc[0])
		printf(", blkg_assoc=%s dm_core=%s", assoc, core);
	printf("%s%s%s%s\n", d->info.read_only ? ", read-only" : "",
	       conf ? ", configured" : "",
	       was ? ", converted by fastlinearctl" : "",
	       d->info.suspended ? ", SUSPENDED" : "");
}

static void print_json(struct json *j, const struct dev *d, const struct table *t,
		       const char *state, const char *assoc, const char *core,
		       bool conf, bool was)
{
	int lin = table_count(t, "linear"), fl = table_count(t, FL_TARGET);
	char devt[32];

	snprintf(devt, sizeof(devt), "%u:%u", d->info.major, d->info.minor);
	json_open(j, NULL, '{');
	json_string(j, "name", d->name);
	json_string(j, "uuid", d->uuid);
	json_string(j, "dev", devt);
	json_string(j, "vg", d->vg);
	json_string(j, "lv", d->lv);
	json_bool(j, "read_only", d->info.read_only);
	json_bool(j, "suspended", d->info.suspended);
	json_open(j, "segments", '{');
	json_int(j, "linear", lin);
	json_int(j, FL_TARGET, fl);
	json_int(j, "other", t->n - lin - fl);
	json_close(j, '}');
	json_string_or_null(j, "blkg_assoc", assoc);
	json_string_or_null(j, "dm_core", core);
	json_string(j, "state", state);
	json_bool(j, "converted_by_fastlinearctl", was);
	json_bool(j, "configured", conf);
	json_close(j, '}');
}

/* one device's status, ARG as named or LISTED as the run's list has it */
int status_one(struct status *s, const char *arg, const struct dev *listed)
{
	struct table t = { 0 }, st = { 0 };
	char assoc[32] = "", core[32] = "";
	const char *state;
	int i, nfl, nlin, ret;
	struct dev d;
	bool was, conf;

	if (listed) {
		d = *listed;
	} else {
		ret = resolve(arg, &d);
		if (ret)
			return status_fail(s, arg, -ret, ret == -ENODEV ?
					   "no such device-mapper device" :
					   "cannot list the dm devices");
	}
	if (dm_read(&d, DM_DEVICE_TABLE, false, &t) ||
	    dm_read(&d, DM_DEVICE_STATUS, false, &st)) {
		table_free(&t);
		return status_fail(s, arg, EIO, "cannot read its table or status");
	}
	for (i = 0; i < st.n; i++)
		if (!strcmp(st.segs[i].type, FL_TARGET) && !assoc[0])
			sscanf(st.segs[i].params, "blkg_assoc=%31s dm_core=%31s", assoc, core);
	nfl = table_count(&t, FL_TARGET);
	nlin = table_count(&t, "linear");
	was = marked(s->o, &d);
	conf = config_matches(s->o->conf, &d);
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
	if (s->o->json)
		print_json(&s->j, &d, &t, state, assoc, core, conf, was);
	else
		print_text(&d, &t, state, assoc, core, conf, was);
	table_free(&t);
	table_free(&st);
	return 0;
}

void status_end(struct status *s)
{
	int i;

	if (s->o->json) {
		json_close(&s->j, ']');
		json_open(&s->j, "errors", '[');
		for (i = 0; i < s->nfails; i++) {
			json_open(&s->j, NULL, '{');
			json_string(&s->j, "device", s->fails[i].device);
			json_string(&s->j, "error", s->fails[i].error);
			json_close(&s->j, '}');
		}
		json_close(&s->j, ']');
		json_close(&s->j, '}');
		putchar('\n');
	} else {
		status_lvm(s);
	}
	for (i = 0; i < s->nfails; i++) {
		free(s->fails[i].device);
		free(s->fails[i].error);
	}
	free(s->fails);
	free(s);
}
