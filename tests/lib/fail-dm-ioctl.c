// SPDX-License-Identifier: GPL-2.0-only
/*
 * fail-dm-ioctl.so: an LD_PRELOAD shim for the fault-injection tests
 * (tests/lvm/fault-injection, signals, cookie-fail, foreign-inactive,
 * pin-rename).  It wraps ioctl() and counts the device-mapper ioctls
 * only (_IOC_TYPE == DM_IOCTL), from 1:
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
 *                      EPOCHREALTIME) and the outcome; nothing else, so
 *                      that line N is DM ioctl N
 *   FL_HOLD_IOCTL=N    after the Nth DM ioctl (done, logged) the caller is
 *                      held FL_HOLD_MS milliseconds (default 500): a signal
 *                      sent then lands at a known point, e.g. with the
 *                      device suspended
 *   FL_EXEC_IOCTL=N    before the Nth DM ioctl (before it is failed, if
 *                      it is to fail), FL_EXEC_CMD is run with /bin/sh -c
 *                      (fork, exec, wait; LD_PRELOAD unset, no signal
 *                      blocked or ignored in it): another tool acts at a
 *                      known point of the caller's, a race made
 *                      deterministic
 *
 * and, for libdevmapper's udev cookie (a System V semaphore: semget(key,
 * 1, IPC_CREAT|IPC_EXCL|0600), semctl SETVAL and GETVAL, semop +1; at
 * the wait semget(key, 1, 0), semop -1 and 0, semctl IPC_RMID; and once
 * semctl SEM_INFO, whose failure turns udev sync off rather than failing
 * a cookie), semget(), semop() and semtimedop() (one kind, "op"), and
 * semctl(), each kind counted from 1:
 *
 *   FL_FAIL_SEM=get|op|ctl  calls of that kind fail
 *   FL_FAIL_SEM_N=K    only the Kth call of that kind does (default: all)
 *   FL_FAIL_SEM_ERRNO=E  with errno E (default ENOSPC for get, the
 *                      semaphore limit; ENOMEM for op and ctl)
 *
 *   FL_HOLD_SEMGET=K   after the Kth semget() (done, logged) the caller is
 *                      held FL_HOLD_MS milliseconds: a signal sent then
 *                      lands with the cookie's semaphore made
 *
 *   FL_CALL_LOG=FILE   appends a line per semaphore call (its kind, its
 *                      index, its arguments), per flock() call (its path,
 *                      its operation; a blocking one also a line before it
 *                      blocks: "waits") and per FL_EXEC_CMD run (its
 *                      status), with the pid, the time and the outcome: a
 *                      test finds the Kth semctl that is a SETVAL, or
 *                      waits until the caller is blocked on a lock, there
 *   FL_FAIL_PROG=NAME  only a process of that name (program_invocation_
 *                      short_name) counts, fails, runs FL_EXEC_CMD and
 *                      logs; the others (a timeout(1) around it, an
 *                      lvmconfig it runs, which inherit LD_PRELOAD) pass
 *                      every call through
 *
 * Build: cc -shared -fPIC -O2 -Wall -Werror -o faildm.so fail-dm-ioctl.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dm-ioctl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/sem.h>
#include <sys/wait.h>
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

/* LINE (LEN bytes) appended to the file named by the variable ENV, if set */
static void log_append(const char *env, const char *line, int len)
{
	const char *path = getenv(env);
	ssize_t n;
	int fd;

	if (!path || !*path || len <= 0)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		/* one write(): lines of concurrent processes do not mix */
		n = write(fd, line, len);
		(void)n;
		close(fd);
	}
}

static void dm_log(unsigned long idx, unsigned int nr, const char *what,
		   const char *outcome)
{
	char line[DM_NAME_LEN + 256];
	const char *name;
	int len, saved = errno;
	struct timespec now;

	if (!getenv("FL_IOCTL_LOG"))
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
	if ((size_t)len >= sizeof(line))
		len = sizeof(line) - 1;
	log_append("FL_IOCTL_LOG", line, len);
	errno = saved;
}

/* a line for FL_CALL_LOG: "KIND IDX WHAT pid P at T: OUTCOME" */
static void call_log(const char *kind, unsigned long idx, const char *what,
		     const char *outcome)
{
	char line[PATH_MAX + 512];
	int len, saved = errno;
	struct timespec now;

	if (!getenv("FL_CALL_LOG"))
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	len = snprintf(line, sizeof(line), "%s %lu %s pid %d at %lld.%06ld: %s\n",
		       kind, idx, what, (int)getpid(), (long long)now.tv_sec,
		       now.tv_nsec / 1000, outcome);
	if ((size_t)len >= sizeof(line))
		len = sizeof(line) - 1;
	log_append("FL_CALL_LOG", line, len);
	errno = saved;
}

/* "ok" or "failed: ERROR" for a call that returned RET */
static void outcome_of(int ret, char *buf, size_t size)
{
	int saved = errno;

	if (ret < 0)
		snprintf(buf, size, "failed: %s", strerror(errno));
	else
		snprintf(buf, size, "ok (%d)", ret);
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

/*
 * FL_EXEC_CMD, run before DM ioctl IDX: /bin/sh -c in a child with
 * LD_PRELOAD unset, every signal unblocked and at its default (the caller
 * may block them all in its critical section), waited for
 */
static void run_cmd(unsigned long idx)
{
	const char *cmd = getenv("FL_EXEC_CMD");
	char what[96], outcome[64];
	int st = 0, saved = errno;
	pid_t pid, w;

	if (!cmd || !*cmd)
		return;
	snprintf(what, sizeof(what), "before DM ioctl %lu: sh -c", idx);
	call_log("exec", idx, what, cmd);
	pid = fork();
	if (pid == 0) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigset_t none;
		int sig;

		for (sig = 1; sig < NSIG; sig++)
			sigaction(sig, &dfl, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		unsetenv("LD_PRELOAD");
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	do
		w = pid > 0 ? waitpid(pid, &st, 0) : -1;
	while (w < 0 && errno == EINTR);
	if (w < 0)
		snprintf(outcome, sizeof(outcome), "not run: %s", strerror(errno));
	else if (WIFEXITED(st))
		snprintf(outcome, sizeof(outcome), "exit %d", WEXITSTATUS(st));
	else
		snprintf(outcome, sizeof(outcome), "killed by signal %d",
			 WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	call_log("exec", idx, "done", outcome);
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
	if (idx == (unsigned long)env_long("FL_EXEC_IOCTL", 0))
		run_cmd(idx);

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

/* ---- System V semaphores (libdevmapper's udev cookie) and flock() ---- */

/* what semctl's fourth argument is; the caller defines it (semctl(2)) */
union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *__buf;
};

typedef int (*semget_fn)(key_t key, int nsems, int semflg);
typedef int (*semop_fn)(int semid, struct sembuf *sops, size_t nsops);
typedef int (*semtimedop_fn)(int semid, struct sembuf *sops, size_t nsops,
			     const struct timespec *timeout);
typedef int (*semctl_fn)(int semid, int semnum, int cmd, ...);
typedef int (*flock_fn)(int fd, int operation);

static unsigned long sem_get_count, sem_op_count, sem_ctl_count, flock_count;

static void *real_fn(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		errno = ENOSYS;
	return f;
}

/*
 * Call number IDX of kind KIND (get, op, ctl) fails (FL_FAIL_SEM,
 * FL_FAIL_SEM_N): its errno (FL_FAIL_SEM_ERRNO, default DEF), else 0.
 */
static int sem_fails(const char *kind, unsigned long idx, int def)
{
	const char *which = getenv("FL_FAIL_SEM");
	long n = env_long("FL_FAIL_SEM_N", 0);

	if (!which || strcmp(which, kind))
		return 0;
	if (n > 0 && idx != (unsigned long)n)
		return 0;
	return env_long("FL_FAIL_SEM_ERRNO", def);
}

/* the outcome of a call injected to fail with E (errno set to it) */
static int injected(int e, char *outcome, size_t size)
{
	snprintf(outcome, size, "INJECTED %s", strerror(e));
	errno = e;
	return -1;
}

int semget(key_t key, int nsems, int semflg)
{
	static semget_fn real;
	char what[128], outcome[96];
	unsigned long idx;
	int ret, e;

	if (!real && !(real = (semget_fn)real_fn("semget")))
		return -1;
	if (!prog_counts())
		return real(key, nsems, semflg);
	idx = __atomic_add_fetch(&sem_get_count, 1, __ATOMIC_SEQ_CST);
	snprintf(what, sizeof(what), "key 0x%08x nsems %d flags %s%s0%o",
		 (unsigned int)key, nsems, semflg & IPC_CREAT ? "IPC_CREAT|" : "",
		 semflg & IPC_EXCL ? "IPC_EXCL|" : "", semflg & 0777);
	e = sem_fails("get", idx, ENOSPC);
	if (e) {
		ret = injected(e, outcome, sizeof(outcome));
	} else {
		ret = real(key, nsems, semflg);
		outcome_of(ret, outcome, sizeof(outcome));
	}
	call_log("semget", idx, what, outcome);
	if (idx == (unsigned long)env_long("FL_HOLD_SEMGET", 0))
		hold(env_long("FL_HOLD_MS", 500));
	return ret;
}

/* semop and semtimedop: the kind "op" */
static int sem_op(int semid, struct sembuf *sops, size_t nsops,
		  const struct timespec *timeout, bool timed)
{
	static semtimedop_fn real_timed;
	static semop_fn real;
	char what[256], outcome[96];
	unsigned long idx;
	size_t i, len;
	int ret, e;

	if (timed ? !real_timed && !(real_timed = (semtimedop_fn)real_fn("semtimedop")) :
	    !real && !(real = (semop_fn)real_fn("semop")))
		return -1;
	if (!prog_counts())
		return timed ? real_timed(semid, sops, nsops, timeout) :
			       real(semid, sops, nsops);
	idx = __atomic_add_fetch(&sem_op_count, 1, __ATOMIC_SEQ_CST);
	len = snprintf(what, sizeof(what), "%s id %d", timed ? "semtimedop" : "semop",
		       semid);
	for (i = 0; i < nsops && len < sizeof(what); i++)
		len += snprintf(what + len, sizeof(what) - len, " sem %u op %+d%s",
				sops[i].sem_num, sops[i].sem_op,
				sops[i].sem_flg & IPC_NOWAIT ? " nowait" : "");
	e = sem_fails("op", idx, ENOMEM);
	if (e) {
		ret = injected(e, outcome, sizeof(outcome));
	} else {
		ret = timed ? real_timed(semid, sops, nsops, timeout) :
			      real(semid, sops, nsops);
		outcome_of(ret, outcome, sizeof(outcome));
	}
	call_log("semop", idx, what, outcome);
	return ret;
}

int semop(int semid, struct sembuf *sops, size_t nsops)
{
	return sem_op(semid, sops, nsops, NULL, false);
}

int semtimedop(int semid, struct sembuf *sops, size_t nsops,
	       const struct timespec *timeout)
{
	return sem_op(semid, sops, nsops, timeout, true);
}

static const char *semctl_cmd(int cmd)
{
	switch (cmd) {
	case IPC_RMID: return "IPC_RMID";
	case IPC_SET: return "IPC_SET";
	case IPC_STAT: return "IPC_STAT";
	case IPC_INFO: return "IPC_INFO";
	case SEM_INFO: return "SEM_INFO";
	case SEM_STAT: return "SEM_STAT";
	case SEM_STAT_ANY: return "SEM_STAT_ANY";
	case GETVAL: return "GETVAL";
	case SETVAL: return "SETVAL";
	case GETALL: return "GETALL";
	case SETALL: return "SETALL";
	case GETPID: return "GETPID";
	case GETNCNT: return "GETNCNT";
	case GETZCNT: return "GETZCNT";
	}
	return "?";
}

int semctl(int semid, int semnum, int cmd, ...)
{
	static semctl_fn real;
	union semun arg = { 0 };
	char what[128], outcome[96];
	unsigned long idx;
	int ret, e;
	va_list ap;

	/* the fourth argument is there for these only (as glibc reads it) */
	switch (cmd) {
	case SETVAL: case GETALL: case SETALL: case IPC_STAT: case IPC_SET:
	case IPC_INFO: case SEM_INFO: case SEM_STAT: case SEM_STAT_ANY:
		va_start(ap, cmd);
		arg = va_arg(ap, union semun);
		va_end(ap);
		break;
	}
	if (!real && !(real = (semctl_fn)real_fn("semctl")))
		return -1;
	if (!prog_counts())
		return real(semid, semnum, cmd, arg);
	idx = __atomic_add_fetch(&sem_ctl_count, 1, __ATOMIC_SEQ_CST);
	if (cmd == SETVAL)
		snprintf(what, sizeof(what), "id %d sem %d SETVAL %d", semid, semnum, arg.val);
	else
		snprintf(what, sizeof(what), "id %d sem %d %s", semid, semnum, semctl_cmd(cmd));
	e = sem_fails("ctl", idx, ENOMEM);
	if (e) {
		ret = injected(e, outcome, sizeof(outcome));
	} else {
		ret = real(semid, semnum, cmd, arg);
		outcome_of(ret, outcome, sizeof(outcome));
	}
	call_log("semctl", idx, what, outcome);
	return ret;
}

/* flock(): logged only (FL_CALL_LOG), for a test to see a caller wait */
int flock(int fd, int operation)
{
	static flock_fn real;
	char what[PATH_MAX + 64], path[PATH_MAX], proc[64], outcome[96];
	unsigned long idx;
	ssize_t n;
	int ret;

	if (!real && !(real = (flock_fn)real_fn("flock")))
		return -1;
	if (!prog_counts() || !getenv("FL_CALL_LOG"))
		return real(fd, operation);
	idx = __atomic_add_fetch(&flock_count, 1, __ATOMIC_SEQ_CST);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, path, sizeof(path) - 1);
	path[n < 0 ? 0 : n] = '\0';
	snprintf(what, sizeof(what), "%s %s%s", path,
		 (operation & LOCK_UN) ? "LOCK_UN" :
		 (operation & LOCK_EX) ? "LOCK_EX" : "LOCK_SH",
		 (operation & LOCK_NB) ? "|LOCK_NB" : "");
	if (!(operation & (LOCK_NB | LOCK_UN)))
		call_log("flock", idx, what, "waits");
	ret = real(fd, operation);
	outcome_of(ret, outcome, sizeof(outcome));
	call_log("flock", idx, what, outcome);
	return ret;
}
