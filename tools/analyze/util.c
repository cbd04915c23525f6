/*
 * shiftpool-analyze: memory that is there or an exit, growable arrays, and
 * the number syntax of the trace.
 *
 * SPDX-License-Identifier: MIT
 */
#include "analyze.h"

#include <stdlib.h>
#include <string.h>

const char *progname = "shiftpool-analyze";

void die_nomem(void)
{
	fprintf(stderr, "%s: out of memory\n", progname);
	exit(EXIT_USAGE);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		die_nomem();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		die_nomem();
	return p;
}

void *xrealloc(void *old, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		die_nomem();
	size_t bytes = n * size;
	void *p = realloc(old, bytes != 0 ? bytes : 1);
	if (p == NULL)
		die_nomem();
	return p;
}

void *array_reserve(void *v, size_t *cap, size_t need, size_t size)
{
	return array_reserve_from(v, cap, need, size, 8);
}

void *array_reserve_from(void *v, size_t *cap, size_t need, size_t size,
                         size_t first)
{
	if (need <= *cap)
		return v;
	size_t ncap = *cap ? *cap : first;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			die_nomem();
		ncap *= 2;
	}
	*cap = ncap;
	return xrealloc(v, ncap, size);
}

int parse_dec(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (s == NULL || *s == '\0')
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	*out = v;
	return 1;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_hex_digits(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (*s == '\0')
		return 0;
	for (; *s; s++) {
		int d = hex_digit(*s);
		if (d < 0 || v >> 60)
			return 0;
		v = (v << 4) | (unsigned)d;
	}
	*out = v;
	return 1;
}

static int has_hex_prefix(const char *s)
{
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

int parse_num(const char *s, uint64_t *out)
{
	if (s != NULL && has_hex_prefix(s))
		return parse_hex_digits(s + 2, out);
	return parse_dec(s, out);
}

int parse_ptr(const char *s, uint64_t *out)
{
	if (s == NULL)
		return 0;
	if (strcmp(s, "(nil)") == 0 || strcmp(s, "0") == 0) {
		*out = 0;
		return 1;
	}
	return has_hex_prefix(s) && parse_hex_digits(s + 2, out);
}
