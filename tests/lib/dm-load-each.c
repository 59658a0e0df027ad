// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-load-each: "dmsetup load DEVICE --table LINE", then, where that
 * worked, "dmsetup table --inactive DEVICE" and "dmsetup clear DEVICE",
 * for every line of its input, in one process.  tests/robust/table-parity
 * loads some 700 tables: under emulation each dmsetup run costs a fifth
 * of a second, the ioctls themselves next to nothing.
 *
 *   dm-load-each DEVICE <TABLES
 *
 * Each input line is one table line, taken as dmsetup takes its --table
 * (_parse_line in lvm2's dmsetup.c): blanks trimmed at both ends, nothing
 * loaded from an empty line or one starting with '#', "START LENGTH TYPE"
 * read by the same sscanf, and a '#' ending the parameters.  They go to
 * the kernel through libdevmapper as dmsetup's do (which doubles each
 * backslash on the way), into the inactive slot of DEVICE.  One line out
 * for each line in:
 *   ok START LENGTH TYPE PARAMS   the load worked: the inactive table as
 *                                 dmsetup table prints it (nothing after
 *                                 "ok " if it has no target), cleared
 *                                 again since
 *   refused                       the load failed (or dmsetup's parsing)
 * A table that cannot be read back or cleared ends the run (status 1).
 * libdevmapper's messages about a refused load are not printed, as the
 * test sends dmsetup load's to /dev/null; the others go to stderr.
 *
 * Build: cc -O2 -Wall -Werror -o dm-load-each dm-load-each.c -ldevmapper
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdevmapper.h>

static int quiet;

/* libdevmapper's levels: 3 error, 4 warning, above that chatter; the
 * bits above 0x7f are flags */
static void log_fn(int level, const char *file, int line, int dm_errno_or_class,
		   const char *f, ...)
{
	va_list ap;

	(void)file;
	(void)line;
	(void)dm_errno_or_class;
	if (quiet || (level & 0x7f) > 4)
		return;
	va_start(ap, f);
	vfprintf(stderr, f, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* dmsetup's _parse_line, on a task of our own; 0: a line dmsetup would
 * refuse before any ioctl */
static int parse_line(struct dm_task *dmt, char *buffer)
{
	char *ttype, *ptr, *comment;
	unsigned long long start, size;
	int n, r = 0;

	for (ptr = buffer + strlen(buffer) - 1; ptr >= buffer; ptr--)
		if (!isspace((int)*ptr))
			break;
	ptr++;
	*ptr = '\0';
	for (ptr = buffer; *ptr && isspace((int)*ptr); ptr++)
		;
	if (!*ptr || *ptr == '#')
		return 1;
	/* as long as the line: %s cannot overflow it */
	ttype = malloc(strlen(ptr) + 1);
	if (!ttype)
		return 0;
	if (sscanf(ptr, "%llu %llu %s %n", &start, &size, ttype, &n) >= 3) {
		ptr += n;
		comment = strchr(ptr, '#');
		if (comment)
			*comment = '\0';
		r = dm_task_add_target(dmt, start, size, ttype, ptr);
	}
	free(ttype);
	return r;
}

static int load(const char *dev, char *line)
{
	struct dm_task *dmt;
	int r = 0;

	dmt = dm_task_create(DM_DEVICE_RELOAD);
	if (!dmt)
		return 0;
	quiet = 1;
	if (dm_task_set_name(dmt, dev) && parse_line(dmt, line))
		r = dm_task_run(dmt);
	quiet = 0;
	dm_task_destroy(dmt);
	return r;
}

/* "dmsetup table --inactive DEV", after "ok " */
static int print_inactive(const char *dev)
{
	struct dm_task *dmt;
	void *next = NULL;
	uint64_t start, length;
	char *type, *params;
	int r = 0, targets = 0;

	dmt = dm_task_create(DM_DEVICE_TABLE);
	if (!dmt)
		return 0;
	if (!dm_task_set_name(dmt, dev) || !dm_task_query_inactive_table(dmt) ||
	    !dm_task_run(dmt))
		goto out;
	fputs("ok ", stdout);
	do {
		next = dm_get_next_target(dmt, next, &start, &length, &type, &params);
		if (!type)
			continue;
		/* one target per line in, one line out */
		if (targets++) {
			fprintf(stderr, "dm-load-each: more than one target in %s\n", dev);
			goto out;
		}
		printf("%llu %llu %s %s", (unsigned long long)start,
		       (unsigned long long)length, type, params ? params : "");
	} while (next);
	putchar('\n');
	r = 1;
out:
	dm_task_destroy(dmt);
	return r;
}

static int clear(const char *dev)
{
	struct dm_task *dmt;
	int r;

	dmt = dm_task_create(DM_DEVICE_CLEAR);
	if (!dmt)
		return 0;
	r = dm_task_set_name(dmt, dev) && dm_task_run(dmt);
	dm_task_destroy(dmt);
	return r;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t size = 0;
	ssize_t len;
	int r = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: dm-load-each DEVICE <TABLES\n");
		return 2;
	}
	dm_log_with_errno_init(log_fn);
	while ((len = getline(&line, &size, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (!load(argv[1], line)) {
			puts("refused");
			continue;
		}
		if (!print_inactive(argv[1])) {
			fprintf(stderr, "dm-load-each: cannot read the inactive table of %s\n", argv[1]);
			r = 1;
			break;
		}
		if (!clear(argv[1])) {
			fprintf(stderr, "dm-load-each: cannot clear %s\n", argv[1]);
			r = 1;
			break;
		}
	}
	free(line);
	dm_lib_release();
	if (fflush(stdout) || ferror(stdout))
		r = 1;
	return r;
}
