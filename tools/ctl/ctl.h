/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fastlinearctl's parts.  One return convention throughout, cryptsetup's:
 * a function that can fail returns 0 (or a count) on success and a
 * negative errno on failure, having said why unless its comment says it
 * is silent; a question returns bool.  Only main.c turns them into exit
 * statuses (ctl_exit()).  Nothing reads an option from a global: what a
 * part needs comes in struct opts.
 */
#ifndef FL_CTL_H
#define FL_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <libdevmapper.h>
#include <linux/dm-ioctl.h>

#define FL_TARGET	"fastlinear"
#define LVM_UUID_LEN	(4 + 32 + 32)	/* "LVM-" VG uuid LV uuid */
#define MAX_WAIT	86400

/* exit statuses (fastlinearctl(8)) */
enum { EXIT_DONE, EXIT_FAILED, EXIT_USAGE, EXIT_SUSPENDED };

/* a device the tool could not resume: the one errno that means exit 3 */
#define ELEFT_SUSPENDED	ENOTRECOVERABLE

enum op { OP_CONVERT, OP_REVERT, OP_STATUS, OP_GATE };

struct config;

struct opts {
	bool dry_run, json, quiet, configured_only, all_lvm;
	bool gate_job, gate_no_hold;
	int lock_wait;			/* seconds */
	const char *conf_path, *state_dir;
	struct config *conf;		/* parsed once, NULL if not needed */
};

/* ---- table.c: tables, pure ---- */
struct seg {
	uint64_t start, len;
	char *type, *params;
};

struct table {
	struct seg *segs;
	int n;
};

void table_free(struct table *t);
int table_add(struct table *t, uint64_t start, uint64_t len,
	      const char *type, const char *params);
bool table_equal(const struct table *a, const struct table *b);
int table_count(const struct table *t, const char *type);
int table_rewrite(const struct table *live, const char *from, const char *to,
		  struct table *want);

/*
 * ---- dm.c: libdevmapper, every task pinned ----
 * A device is named once, by the user, and from then on addressed by its
 * UUID (if it has one) or its dev_t: a rename, or a remove and create of
 * another device under the same name, cannot redirect a later ioctl.
 * Each reply is checked against the pin (dev_t and UUID): -ESTALE when
 * it is not the device first seen.  A device with no UUID removed and
 * made again gets the same dev_t (dm takes the lowest free minor): its
 * diskseq (5.15 and later), checked before each change, tells them apart.
 */
struct dev {
	char name[DM_NAME_LEN];
	char uuid[DM_UUID_LEN];
	struct dm_info info;
	char vg[DM_NAME_LEN], lv[DM_NAME_LEN], layer[DM_NAME_LEN];
	uint64_t diskseq;	/* the disk's sequence number: dev_t reused */
};

int dm_info_by_name(const char *name, struct dev *d);
int dm_info_by_devt(unsigned int major, unsigned int minor, struct dev *d);
int dm_refresh(const struct dev *pin, struct dev *now);
int dm_read(const struct dev *pin, int task, bool inactive, struct table *t);
int dm_load(const struct dev *pin, const struct table *t, bool read_only);
int dm_suspend(const struct dev *pin);
int dm_clear(const struct dev *pin);
int dm_list_names(char ***names);
void names_free(char **names, int n);
int dm_list_devs(struct dev **devs);
bool dm_target_known(const char *target);

/* a resume made ready before the suspend: its task and udev cookie */
struct resume {
	struct dm_task *dmt;
	uint32_t cookie;
};

int resume_prepare(const struct dev *pin, uint16_t flags, struct resume *r);
int resume_run(const struct dev *pin, struct resume *r);
void resume_wait(struct resume *r);
void resume_drop(struct resume *r);
int dm_resume_plain(const struct dev *pin);

/* ---- blockdev.c: the block device's own settings ---- */
int read_ahead_get(const struct dev *d);
int read_ahead_set(const struct dev *d, int kb);
int table_read_only(const struct dev *d, bool *ro);
uint64_t diskseq_get(const struct dev *d);

/* ---- lvm.c: LVM's rules ---- */
bool is_top_lv(const struct dev *d);
bool is_lvm_layer(const struct dev *d);
void lvm_split(struct dev *d);
int vg_has_pvmove(const char *vg);
int lvmconfig(const char *key, char *buf, size_t size);
const char *lvm_lock_dir(void);

/* ---- state.c: locks and marks ---- */
int state_dir_ok(const struct opts *o);
int lock_dev(const struct opts *o, const struct dev *d, char *path, size_t size);
void unlock_dev(const char *path, int fd);
int escape_name(const char *prefix, const char *s, char *out, size_t size);
void mark(const struct opts *o, const struct dev *d, bool converted);
bool marked(const struct opts *o, const struct dev *d);

/* ---- config.c: fastlinear.conf, parsed once ---- */
int config_load(const char *path, struct config **out);
int config_parse(FILE *f, const char *path, struct config **out);
bool config_matches(const struct config *c, const struct dev *d);
void config_free(struct config *c);

/* ---- json.c: a JSON writer ---- */
struct json {
	FILE *f;
	int depth;
	bool first[8];
};

void json_init(struct json *j, FILE *f);
void json_open(struct json *j, const char *key, char bracket);
void json_close(struct json *j, char bracket);
void json_string(struct json *j, const char *key, const char *s);
void json_string_or_null(struct json *j, const char *key, const char *s);
void json_int(struct json *j, const char *key, long long v);
void json_bool(struct json *j, const char *key, bool v);
void json_write_str(FILE *f, const char *s);

/* ---- udev.c: udev flags and the boot gate ---- */
uint16_t dev_udev_flags(const struct dev *d);
int udev_gate(const struct opts *o, const char *kname);

/* ---- swap.c: convert and revert ---- */
int swap_one(const struct opts *o, const char *arg, const struct dev *listed,
	     enum op op);
int resolve(const char *arg, struct dev *d);
bool is_kname(const char *s);

/* ---- status.c ---- */
struct status;
struct status *status_begin(const struct opts *o);
int status_one(struct status *s, const char *arg, const struct dev *listed);
int status_fail(struct status *s, const char *arg, int errnum, const char *why);
void status_end(struct status *s);

/* ---- log.c: messages, held while a device may be suspended ---- */
extern const char *prog;
void log_init(bool quiet);
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hold_begin(void);
void hold_end(void);

#endif
