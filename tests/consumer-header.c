/*
 * The installed header as a C99 or C11 program sees it: tests/consumers.sh
 * compiles this with -std=c99 and -std=c11, -pedantic -Wall -Wextra
 * -Werror, so that nothing in <shiftpool.h> needs a GNU dialect.  It uses
 * every kind of declaration the header has: types, the handler type,
 * enumerators, macros and functions.
 *
 * SPDX-License-Identifier: MIT
 */
/* With CONSUMER_INLINE_HEADER, the opt-in header of the inline paths. */
#ifdef CONSUMER_INLINE_HEADER
#include <shiftpool/inline.h>
#else
#include <shiftpool.h>
#endif

#include <stdio.h>

static void on_misuse(const pool_t *pool, const char *function, const void *ptr,
                      enum pool_error error, void *arg)
{
	(void)pool;
	(void)ptr;
	(void)arg;
	fprintf(stderr, "%s: %s\n", function, pool_error_string(error));
}

int main(void)
{
	pool_stats_t st;
	pool_t *pool =
	    pool_init(POOL_MIN_BLOCK_SIZE, 4, POOL_SINGLE | POOL_NO_FALLBACK);

	if (pool == NULL)
		return 1;
	pool_set_error_handler(on_misuse, NULL);
	char *s = pool_strdup(pool, "abc");
	int ok = s != NULL && pool_owns(pool, s) &&
	         pool_block_size(pool) == POOL_MIN_BLOCK_SIZE &&
	         pool_stats(pool, &st) == 0 && st.in_use == 1 &&
	         SHIFTPOOL_VERSION_MAJOR >= 0;
	pool_free(pool, s);
	pool_set_error_handler(NULL, NULL);
	pool_destroy(pool);
	printf("%s %s\n", ok ? "ok" : "wrong", SHIFTPOOL_VERSION_STRING);
	return ok ? 0 : 1;
}
