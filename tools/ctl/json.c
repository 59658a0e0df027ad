// SPDX-License-Identifier: GPL-2.0-only
/*
 * A small JSON writer: nesting, commas and one array element a line, and
 * strings that keep every byte.  dm names and UUIDs are bytes, not text:
 * a byte that is not part of valid UTF-8 is written as \udcXX, a lone
 * low surrogate (Python's "surrogateescape"), so a name with the byte
 * 0xff and one with "\u00ff" stay two strings, and a reader that decodes
 * with surrogateescape gets the bytes back (fastlinearctl(8)).
 */
#include <string.h>

#include "ctl.h"

/* the length of the valid UTF-8 sequence at S, or 0 */
static int utf8_len(const unsigned char *s)
{
	int i, n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates, past U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

void json_write_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	fputc('"', f);
	while (*s) {
		n = utf8_len(s);
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else if (!n)
			fprintf(f, "\\udc%02x", *s);
		else
			fwrite(s, 1, n, f);
		s += n ? n : 1;
	}
	fputc('"', f);
}

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

/* the comma, line and key before a value at the current depth */
static void member(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputs(key ? ", " : ",", j->f);
	if (!key && j->depth)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	j->first[j->depth] = false;
	if (key) {
		json_write_str(j->f, key);
		fputs(": ", j->f);
	}
}

void json_open(struct json *j, const char *key, char bracket)
{
	member(j, key);
	fputc(bracket, j->f);
	if (j->depth + 1 < (int)(sizeof(j->first) / sizeof(j->first[0])))
		j->depth++;
	j->first[j->depth] = true;
}

void json_close(struct json *j, char bracket)
{
	bool empty = j->first[j->depth];

	if (j->depth)
		j->depth--;
	if (bracket == ']' && !empty)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(bracket, j->f);
}

void json_string(struct json *j, const char *key, const char *s)
{
	member(j, key);
	json_write_str(j->f, s);
}

void json_string_or_null(struct json *j, const char *key, const char *s)
{
	member(j, key);
	if (s && s[0])
		json_write_str(j->f, s);
	else
		fputs("null", j->f);
}

void json_int(struct json *j, const char *key, long long v)
{
	member(j, key);
	fprintf(j->f, "%lld", v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}
