/*
 * The driver of tests/interpose.sh: linked with a definition of every
 * name the library exports (each aborts when called) and exporting them
 * (-rdynamic), it opens the library with dlopen() and calls it through
 * dlsym(), so that only the library's own calls between its functions can
 * reach the program's: a set's calls go to its classes' pools, a print to
 * the counters, a report to the error strings.  It prints "ok" when the
 * library used itself throughout.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shiftpool.h"

/* A function of the library, as dlsym() finds it there. */
#define REAL(name) ((__typeof__(&name))real(lib, #name))

static void *real(void *lib, const char *name)
{
	void *fn = dlsym(lib, name);
	if (fn == NULL) {
		fprintf(stderr, "interpose: dlsym(%s): %s\n", name, dlerror());
		exit(99);
	}
	return fn;
}

static unsigned reports;

static void record(const pool_t *pool, const char *function, const void *ptr,
                   enum pool_error error, void *arg)
{
	(void)pool, (void)function, (void)ptr, (void)error, (void)arg;
	reports++;
}

static int fail(const char *what)
{
	fprintf(stderr, "interpose: %s\n", what);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return fail("usage: interpose-driver LIBRARY");
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		fprintf(stderr, "interpose: dlopen: %s\n", dlerror());
		return 99;
	}
	FILE *null = fopen("/dev/null", "w");
	if (null == NULL)
		return 99;

	/* A set: every call reaches a class's pool inside the library. */
	pool_set_t *set = REAL(pool_set_init)(16, 4096, 1 << 20, POOL_LOCKED);
	if (set == NULL)
		return fail("pool_set_init failed");
	char *a = REAL(pool_set_malloc)(set, 100);
	char *b = REAL(pool_set_calloc)(set, 3, 40);
	char *s = REAL(pool_set_strdup)(set, "interposed");
	if (a == NULL || b == NULL || s == NULL || strcmp(s, "interposed"))
		return fail("a set's allocation failed");
	a = REAL(pool_set_realloc)(set, a, 1000);
	if (a == NULL)
		return fail("pool_set_realloc failed");
	pool_stats_t st;
	if (REAL(pool_set_stats)(set, 0, &st) != 0 || st.in_use != 3)
		return fail("pool_set_stats");
	if (REAL(pool_set_stats_print)(set, null, POOL_STATS_JSON) != 0)
		return fail("pool_set_stats_print");
	REAL(pool_set_free)(set, a);
	REAL(pool_set_free)(set, b);
	REAL(pool_set_free)(set, s);
	REAL(pool_set_destroy)(set);

	/* A pool: strdup, realloc, the bulk calls, a print, a report. */
	pool_t *pool = REAL(pool_init)(64, 64, POOL_SINGLE);
	if (pool == NULL)
		return fail("pool_init failed");
	void *out[8];
	if (REAL(pool_malloc_bulk)(pool, 64, 8, out) != 8)
		return fail("pool_malloc_bulk");
	REAL(pool_free_bulk)(pool, 8, out);
	char *d = REAL(pool_strdup)(pool, "x");
	d = REAL(pool_realloc)(pool, d, 200);
	if (d == NULL)
		return fail("pool_realloc");
	d = REAL(pool_realloc)(pool, d, 10);
	REAL(pool_set_error_handler)(record, NULL);
	REAL(pool_free)(pool, d + 1);
	if (reports != 1)
		return fail("no report through the handler");
	REAL(pool_free)(pool, d);
	if (REAL(pool_stats_print)(pool, null, POOL_STATS_TEXT) != 0)
		return fail("pool_stats_print");
	REAL(pool_trim)(pool);
	REAL(pool_destroy)(pool);
	fclose(null);
	puts("ok");
	return 0;
}
