/*
 * examples/adapters/sqlite-pool: SQLite's allocator on a shiftpool set.
 *
 * SQLite asks its allocator for the usable size of each allocation
 * (xSize) and for the size a request will really get (xRoundup): the set
 * answers both from the pointer and from its classes, so no allocation
 * carries a header and a request of a class's exact size stays in that
 * class.  SQLite calls xRoundup before every xMalloc and xRealloc and
 * uses the whole rounded size.
 *
 * SPDX-License-Identifier: MIT
 */
#include "sqlite-pool.h"

#include <sqlite3.h>

/* SQLite's allocation calls take no argument: the set SQLite allocates
 * from, set by sqlite_pool_install() before SQLite is initialised. */
static pool_set_t *sqlite_set;

static void *sqlite_pool_malloc(int size)
{
	return pool_set_malloc(sqlite_set, (size_t)size);
}

static void sqlite_pool_free(void *ptr)
{
	pool_set_free(sqlite_set, ptr);
}

static void *sqlite_pool_realloc(void *ptr, int size)
{
	return pool_set_realloc(sqlite_set, ptr, (size_t)size);
}

static int sqlite_pool_size(void *ptr)
{
	return (int)pool_set_usable_size(sqlite_set, ptr);
}

/* The class's block size; above the largest class the request goes to
 * the set's fallback as it is. */
static int sqlite_pool_roundup(int size)
{
	size_t rounded = pool_set_class_size(sqlite_set, (size_t)size);
	return rounded != 0 ? (int)rounded : size;
}

/* The set is made and destroyed by the program, around SQLite's life. */
static int sqlite_pool_init(void *unused)
{
	(void)unused;
	return SQLITE_OK;
}

static void sqlite_pool_shutdown(void *unused)
{
	(void)unused;
}

int sqlite_pool_install(pool_set_t *set)
{
	static const sqlite3_mem_methods methods = {
	    .xMalloc = sqlite_pool_malloc,
	    .xFree = sqlite_pool_free,
	    .xRealloc = sqlite_pool_realloc,
	    .xSize = sqlite_pool_size,
	    .xRoundup = sqlite_pool_roundup,
	    .xInit = sqlite_pool_init,
	    .xShutdown = sqlite_pool_shutdown,
	};
	if (set == NULL)
		return SQLITE_MISUSE;
	/* SQLite copies the methods; the set is read at the first call. */
	int result = sqlite3_config(SQLITE_CONFIG_MALLOC, &methods);
	if (result == SQLITE_OK)
		sqlite_set = set;
	return result;
}
