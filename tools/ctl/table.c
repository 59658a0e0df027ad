// SPDX-License-Identifier: GPL-2.0-only
/* Tables as lists of segments, and the rewrite from one target to another. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

void table_free(struct table *t)
{
	int i;

	for (i = 0; i < t->n; i++) {
		free(t->segs[i].type);
		free(t->segs[i].params);
	}
	free(t->segs);
	t->segs = NULL;
	t->n = 0;
}

/* silent: -ENOMEM is the only failure */
int table_add(struct table *t, uint64_t start, uint64_t len,
	      const char *type, const char *params)
{
	struct seg *s = realloc(t->segs, (t->n + 1) * sizeof(*s));

	if (!s)
		return -ENOMEM;
	t->segs = s;
	s = &t->segs[t->n];
	s->start = start;
	s->len = len;
	s->type = strdup(type ? type : "");
	s->params = strdup(params ? params : "");
	if (!s->type || !s->params) {
		free(s->type);
		free(s->params);
		return -ENOMEM;
	}
	t->n++;
	return 0;
}

bool table_equal(const struct table *a, const struct table *b)
{
	int i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->segs[i].start != b->segs[i].start ||
		    a->segs[i].len != b->segs[i].len ||
		    strcmp(a->segs[i].type, b->segs[i].type) ||
		    strcmp(a->segs[i].params, b->segs[i].params))
			return false;
	return true;
}

int table_count(const struct table *t, const char *type)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		n += !strcmp(t->segs[i].type, type);
	return n;
}

/*
 * WANT: LIVE with every segment of target FROM made one of TO, the same
 * start, length and parameters (a fastlinear line is a linear line with
 * another target name).  Returns how many were changed, or -ENOMEM.
 */
int table_rewrite(const struct table *live, const char *from, const char *to,
		  struct table *want)
{
	int i, changed = 0;

	want->segs = NULL;
	want->n = 0;
	for (i = 0; i < live->n; i++) {
		const struct seg *s = &live->segs[i];
		bool swap = !strcmp(s->type, from);

		changed += swap;
		if (table_add(want, s->start, s->len, swap ? to : s->type, s->params)) {
			table_free(want);
			return -ENOMEM;
		}
	}
	return changed;
}
