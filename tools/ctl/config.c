// SPDX-License-Identifier: GPL-2.0-only
/*
 * fastlinear.conf (fastlinear.conf(5)), read once a run into a list of
 * entries, so that a bad line is warned about once, not once a device.
 * One entry a line, lines of any length:
 *   all-lvm            every logical volume (not LVM's internal layers)
 *   lv VG/LV           a logical volume; VG and LV may be glob patterns
 *   VG/LV              the same
 *   name NAME          a dm device by name (glob)
 *   uuid UUID          a dm device by UUID (glob)
 * A '#' at the start of a word starts a comment ("name a#b" is the name
 * a#b).  Patterns are fnmatch(3) globs without backslash escapes: dm's
 * mangled names carry backslashes ("my\x20disk"), matched as written.
 * No form selects one of LVM's internal layers.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"

enum kind { K_ALL_LVM, K_LV, K_NAME, K_UUID };

struct entry {
	enum kind kind;
	char *pat;
};

struct config {
	struct entry *e;
	int n;
};

void config_free(struct config *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		free(c->e[i].pat);
	free(c->e);
	free(c);
}

static int add(struct config *c, enum kind kind, const char *pat)
{
	struct entry *e = realloc(c->e, (c->n + 1) * sizeof(*e));

	if (!e)
		return -ENOMEM;
	c->e = e;
	e[c->n].kind = kind;
	e[c->n].pat = strdup(pat ? pat : "");
	if (!e[c->n].pat)
		return -ENOMEM;
	c->n++;
	return 0;
}

/* the words of LINE, up to a '#' that starts one; returns how many */
static int split(char *line, char *w[3])
{
	char *p = line;
	int n = 0;

	for (;;) {
		p += strspn(p, " \t\r\n");
		if (!*p || *p == '#')
			return n;
		if (n < 3)
			w[n] = p;
		n++;
		p += strcspn(p, " \t\r\n");
		if (*p)
			*p++ = 0;
	}
}

/* one line: 0 (an entry, or nothing), 1 (not an entry), -ENOMEM */
static int parse_line(struct config *c, char *line)
{
	char *w[3];
	int n = split(line, w);

	if (!n)
		return 0;
	if (n == 1 && !strcmp(w[0], "all-lvm"))
		return add(c, K_ALL_LVM, NULL);
	if (n == 1 && strchr(w[0], '/'))
		return add(c, K_LV, w[0]);
	if (n != 2)
		return 1;
	if (!strcmp(w[0], "lv"))
		return add(c, K_LV, w[1]);
	if (!strcmp(w[0], "name"))
		return add(c, K_NAME, w[1]);
	if (!strcmp(w[0], "uuid"))
		return add(c, K_UUID, w[1]);
	return 1;
}

/* the config in F (named PATH in messages) */
int config_parse(FILE *f, const char *path, struct config **out)
{
	struct config *c = calloc(1, sizeof(*c));
	char *line = NULL, *copy;
	size_t cap = 0;
	int ret = 0, no = 0;
	ssize_t len;

	if (!c)
		return -ENOMEM;
	while (!ret && (len = getline(&line, &cap, f)) >= 0) {
		no++;
		if (len && line[len - 1] == '\n')
			line[len - 1] = 0;
		copy = strdup(line);
		if (!copy) {
			ret = -ENOMEM;
			break;
		}
		ret = parse_line(c, line);
		if (ret == 1) {
			err("%s:%d: ignoring '%s'", path, no, copy);
			ret = 0;
		}
		free(copy);
	}
	if (!ret && ferror(f)) {
		ret = -(errno ? errno : EIO);
		err("cannot read %s: %s", path, strerror(-ret));
	}
	free(line);
	if (ret) {
		config_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

/*
 * The config at PATH: a missing file configures nothing; anything else
 * that cannot be read whole (a directory, a FIFO, a read error) is an
 * error, never taken for "nothing configured".
 */
int config_load(const char *path, struct config **out)
{
	struct stat st;
	FILE *f;
	int fd, ret;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		*out = calloc(1, sizeof(**out));
		return *out ? 0 : -ENOMEM;
	}
	if (fd < 0) {
		ret = -errno;
		err("cannot read %s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st))
		ret = -errno;
	else
		ret = S_ISREG(st.st_mode) ? 0 : S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	if (ret) {
		err("cannot read %s: %s", path, ret == -EINVAL ? "not a regular file" :
		    strerror(-ret));
		close(fd);
		return ret;
	}
	f = fdopen(fd, "r");
	if (!f) {
		ret = -errno;
		close(fd);
		return ret;
	}
	errno = 0;
	ret = config_parse(f, path, out);
	fclose(f);
	return ret;
}

bool config_matches(const struct config *c, const struct dev *d)
{
	char vglv[2 * DM_NAME_LEN + 2];
	int i;

	if (!c || is_lvm_layer(d))
		return false;
	snprintf(vglv, sizeof(vglv), "%s/%s", d->vg, d->lv);
	for (i = 0; i < c->n; i++) {
		const char *pat = c->e[i].pat;

		switch (c->e[i].kind) {
		case K_ALL_LVM:
			if (is_top_lv(d))
				return true;
			break;
		case K_LV:
			if (is_top_lv(d) && !fnmatch(pat, vglv, FNM_NOESCAPE))
				return true;
			break;
		case K_NAME:
			if (!fnmatch(pat, d->name, FNM_NOESCAPE))
				return true;
			break;
		case K_UUID:
			if (!fnmatch(pat, d->uuid, FNM_NOESCAPE))
				return true;
			break;
		}
	}
	return false;
}
