// SPDX-License-Identifier: GPL-2.0-only
/*
 * fail-dm-ioctl.so: an LD_PRELOAD shim for the fault-injection tests
 * (tests/lvm/fault-injection).  It wraps ioctl() and counts the
 * device-mapper ioctls only (_IOC_TYPE == DM_IOCTL), from 1:
 *
 *   FL_FAIL_IOCTL=N    the Nth DM ioctl fails (unset or 0: none does)
 *   FL_FAIL_COUNT=M    and the M-1 after it too (default 1): a step
 *                      that retries a failed read once fails twice
 *   FL_FAIL_ERRNO=E    with errno E (a number; default EIO)
 *   FL_FAIL_WHEN=before  the kernel never sees that ioctl (default)
 *   FL_FAIL_WHEN=after   the real ioctl runs, then -1/E is returned: a
 *                      resume whose table swap happened but which reported
 *                      failure, a load that did load
 *   FL_IOCTL_LOG=FILE  appends a line per DM ioctl: its index, its name,
 *                      what it asked (suspend or resume, table or status,
 *                      inactive, ro or rw), the device name, the pid, the
 *                      time it returned (CLOCK_REALTIME, as bash's
 *                      EPOCHREALTIME) and the outcome
 *   FL_HOLD_IOCTL=N    after the Nth DM ioctl (done, logged) the caller is
 *                      held FL_HOLD_MS milliseconds (default 500): a signal
 *                      sent then lands at a known point, e.g. with the
 *                      device suspended
 *   FL_FAIL_PROG=NAME  only a process of that name (program_invocation_
 *                      short_name) counts, fails and logs; the others (a
 *                      timeout(1) around it, an lvmconfig it runs, which
 *                      inherit LD_PRELOAD) pass every ioctl through
 *
 * Build: cc -shared -fPIC -O2 -Wall -Werror -o faildm.so fail-dm-ioctl.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

typedef int (*ioctl_fn)(int fd, unsigned long request, ...);

static const char * const dm_cmd_names[] = {
	[DM_VERSION_CMD] = "DM_VERSION",
	[DM_REMOVE_ALL_CMD] = "DM_REMOVE_ALL",
	[DM_LIST_DEVICES_CMD] = "DM_LIST_DEVICES",
	[DM_DEV_CREATE_CMD] = "DM_DEV_CREATE",
	[DM_DEV_REMOVE_CMD] = "DM_DEV_REMOVE",
	[DM_DEV_RENAME_CMD] = "DM_DEV_RENAME",
	[DM_DEV_SUSPEND_CMD] = "DM_DEV_SUSPEND",
	[DM_DEV_STATUS_CMD] = "DM_DEV_STATUS",
	[DM_DEV_WAIT_CMD] = "DM_DEV_WAIT",
	[DM_TABLE_LOAD_CMD] = "DM_TABLE_LOAD",
	[DM_TABLE_CLEAR_CMD] = "DM_TABLE_CLEAR",
	[DM_TABLE_DEPS_CMD] = "DM_TABLE_DEPS",
	[DM_TABLE_STATUS_CMD] = "DM_TABLE_STATUS",
	[DM_LIST_VERSIONS_CMD] = "DM_LIST_VERSIONS",
	[DM_TARGET_MSG_CMD] = "DM_TARGET_MSG",
	[DM_DEV_SET_GEOMETRY_CMD] = "DM_DEV_SET_GEOMETRY",
	[DM_DEV_ARM_POLL_CMD] = "DM_DEV_ARM_POLL",
	[DM_GET_TARGET_VERSION_CMD] = "DM_GET_TARGET_VERSION",
};

static unsigned long dm_count;

static long env_long(const char *name, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	return *end ? def : v;
}

/* this process counts, fails and logs DM ioctls (FL_FAIL_PROG) */
static int prog_counts(void)
{
	const char *prog = getenv("FL_FAIL_PROG");

	return !prog || !*prog || !strcmp(prog, program_invocation_short_name);
}

/* what the request asked, from the flags it went in with */
static void dm_what(unsigned int nr, const struct dm_ioctl *dmi,
		    char *buf, size_t size)
{
	const char *what = "";

	buf[0] = '\0';
	if (!dmi)
		return;
	switch (nr) {
	case DM_DEV_SUSPEND_CMD:
		what = dmi->flags & DM_SUSPEND_FLAG ? " suspend" : " resume";
		break;
	case DM_TABLE_STATUS_CMD:
		what = dmi->flags & DM_STATUS_TABLE_FLAG ? " table" : " status";
		break;
	case DM_TABLE_LOAD_CMD:
		what = dmi->flags & DM_READONLY_FLAG ? " ro" : " rw";
		break;
	}
	snprintf(buf, size, "%s%s%s%.*s", what,
		 nr == DM_TABLE_STATUS_CMD &&
		 (dmi->flags & DM_QUERY_INACTIVE_TABLE_FLAG) ? " inactive" : "",
		 dmi->name[0] ? " " : "", DM_NAME_LEN, dmi->name);
}

static void dm_log(unsigned long idx, unsigned int nr, const char *what,
		   const char *outcome)
{
	const char *path = getenv("FL_IOCTL_LOG");
	char line[DM_NAME_LEN + 256];
	const char *name;
	int fd, len, saved = errno;
	struct timespec now;
	ssize_t n;

	if (!path || !*path)
		return;
	if (nr < ARRAY_SIZE(dm_cmd_names) &&
	    dm_cmd_names[nr])
		name = dm_cmd_names[nr];
	else
		name = "DM_UNKNOWN";
	clock_gettime(CLOCK_REALTIME, &now);
	len = snprintf(line, sizeof(line), "%lu %s%s pid %d at %lld.%06ld: %s\n",
		       idx, name, what, (int)getpid(), (long long)now.tv_sec,
		       now.tv_nsec / 1000, outcome);
	if (len < 0)
		goto out;
	if ((size_t)len >= sizeof(line))
		len = sizeof(line) - 1;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		/* one write(): lines of concurrent processes do not mix */
		n = write(fd, line, len);
		(void)n;
		close(fd);
	}
out:
	errno = saved;
}

/* sleep MS milliseconds, errno kept (a signal that is not blocked ends it) */
static void hold(long ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };
	int saved = errno;

	nanosleep(&t, NULL);
	errno = saved;
}

int ioctl(int fd, unsigned long request, ...)
{
	static ioctl_fn real_ioctl;
	unsigned long idx, fail_at, fail_n;
	char what[DM_NAME_LEN + 64], outcome[96];
	const char *when;
	unsigned int nr;
	int ret, fail_errno;
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);

	if (!real_ioctl) {
		real_ioctl = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
		if (!real_ioctl) {
			errno = EFAULT;
			return -1;
		}
	}
	if (_IOC_TYPE(request) != DM_IOCTL || !prog_counts())
		return real_ioctl(fd, request, arg);

	idx = __atomic_add_fetch(&dm_count, 1, __ATOMIC_SEQ_CST);
	nr = _IOC_NR(request);
	dm_what(nr, arg, what, sizeof(what));
	fail_at = env_long("FL_FAIL_IOCTL", 0);
	fail_n = env_long("FL_FAIL_COUNT", 1);
	fail_errno = env_long("FL_FAIL_ERRNO", EIO);
	when = getenv("FL_FAIL_WHEN");
	if (!when || !*when)
		when = "before";

	if (!fail_at || idx < fail_at || idx - fail_at >= fail_n) {
		ret = real_ioctl(fd, request, arg);
		if (ret < 0)
			snprintf(outcome, sizeof(outcome), "failed: %s",
				 strerror(errno));
		else
			snprintf(outcome, sizeof(outcome), "ok");
		dm_log(idx, nr, what, outcome);
		if (idx == (unsigned long)env_long("FL_HOLD_IOCTL", 0))
			hold(env_long("FL_HOLD_MS", 500));
		return ret;
	}
	if (!strcmp(when, "after")) {
		ret = real_ioctl(fd, request, arg);
		snprintf(outcome, sizeof(outcome),
			 "ran (%s), then INJECTED %s (after)",
			 ret < 0 ? strerror(errno) : "ok", strerror(fail_errno));
	} else {
		snprintf(outcome, sizeof(outcome), "INJECTED %s (before)",
			 strerror(fail_errno));
	}
	dm_log(idx, nr, what, outcome);
	errno = fail_errno;
	return -1;
}
