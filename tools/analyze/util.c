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

/* ------------------------------------------------------- sparse counters */

/* Where word goes among the values of c. */
static size_t counts_index(const struct counts *c, size_t word)
{
	return (size_t)__builtin_popcountll(c->present &
	                                    ((UINT64_C(1) << word) - 1));
}

uint64_t counts_get(const struct counts *c, size_t word)
{
	if (!((c->present >> word) & 1))
		return 0;
	return c->v[counts_index(c, word)];
}

void counts_set(struct counts *c, size_t word, uint64_t value)
{
	size_t i = counts_index(c, word);
	if ((c->present >> word) & 1) {
		c->v[i] = value;
		return;
	}
	if (value == 0)
		return;
	size_t n = (size_t)__builtin_popcountll(c->present);
	c->v = xrealloc(c->v, n + 1, sizeof *c->v);
	memmove(c->v + i + 1, c->v + i, (n - i) * sizeof *c->v);
	c->v[i] = value;
	c->present |= UINT64_C(1) << word;
}

void counts_add(struct counts *c, size_t word, uint64_t delta)
{
	counts_set(c, word, counts_get(c, word) + delta);
}

uint64_t *stats_word(struct stats *s, size_t word)
{
	return (uint64_t *)((char *)s + word * sizeof(uint64_t));
}

void counts_expand(const struct counts *c, struct stats *out)
{
	memset(out, 0, sizeof *out);
	for (size_t w = 0; w < STAT_WORDS; w++)
		*stats_word(out, w) = counts_get(c, w);
}

void counts_free(struct counts *c)
{
	free(c->v);
	c->v = NULL;
	c->present = 0;
}

/* ------------------------------------------------------------ numbers */

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
