// SPDX-License-Identifier: GPL-2.0-only
/*
 * Messages: ours and libdevmapper's.  While a device of ours may be
 * suspended nothing is written: stderr may be a file on the suspended
 * device, and the write would never return.  Messages wait in HELD and go
 * out once the device runs again (hold_end()).
 */
#include <stdarg.h>
#include <string.h>

#include "ctl.h"

const char *prog = "fastlinearctl";

static bool quiet, holding;
static char held[16384];
static size_t held_len;

static void vsay(FILE *f, const char *prefix, const char *fmt, va_list ap,
		 bool newline)
{
	size_t room;
	int n;

	if (!holding) {
		fputs(prefix, f);
		vfprintf(f, fmt, ap);
		if (newline)
			fputc('\n', f);
		fflush(f);
		return;
	}
	/* keep what fits, and always the NUL */
	room = sizeof(held) - held_len;
	n = snprintf(held + held_len, room, "%s", prefix);
	held_len += n > 0 ? ((size_t)n < room ? (size_t)n : room - 1) : 0;
	room = sizeof(held) - held_len;
	n = vsnprintf(held + held_len, room, fmt, ap);
	held_len += n > 0 ? ((size_t)n < room ? (size_t)n : room - 1) : 0;
	if (newline && held_len < sizeof(held) - 1) {
		held[held_len++] = '\n';
		held[held_len] = 0;
	}
}

void msg(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vsay(stdout, "", fmt, ap, false);
	va_end(ap);
}

void err(const char *fmt, ...)
{
	char prefix[64];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s: ", prog);
	va_start(ap, fmt);
	vsay(stderr, prefix, fmt, ap, true);
	va_end(ap);
}

/* libdevmapper's errors and warnings, held like ours */
static void dm_logger(int level, const char *file, int line, int dm_errno,
		      const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void dm_logger(int level, const char *file, int line, int dm_errno,
		      const char *fmt, ...)
{
	va_list ap;

	(void)file;
	(void)line;
	(void)dm_errno;
	if ((level & 7) > 4)	/* below _LOG_WARN */
		return;
	va_start(ap, fmt);
	vsay(stderr, "", fmt, ap, true);
	va_end(ap);
}

void log_init(bool q)
{
	quiet = q;
	dm_log_with_errno_init(dm_logger);
}

void hold_begin(void)
{
	holding = true;
}

void hold_end(void)
{
	holding = false;
	fputs(held, stderr);
	fflush(stderr);
	held_len = 0;
	held[0] = 0;
}
