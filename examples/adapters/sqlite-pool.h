/*
 * examples/adapters/sqlite-pool: SQLite's allocator on a shiftpool set.
 *
 * Copy sqlite-pool.c and this header into a program that uses SQLite.
 * SPDX-License-Identifier: MIT
 */
#ifndef SQLITE_POOL_H
#define SQLITE_POOL_H

#include <shiftpool.h>

/*
 * Makes SQLite take all its memory from set, through
 * sqlite3_config(SQLITE_CONFIG_MALLOC).  Call it before SQLite is
 * initialised (before the first sqlite3_open(), or after
 * sqlite3_shutdown()); the set must outlive every SQLite call until
 * sqlite3_shutdown().  The set's mode must allow the threads that use
 * SQLite (POOL_LOCKED or POOL_PER_THREAD unless one thread does).  Its
 * largest class decides what the set serves: apart from large strings and
 * blobs, SQLite's largest allocation is its sorter's memory, which grows
 * up to the page cache's size (2000 KiB by default), so a set of 16 B to
 * 2 MiB serves everything else; larger requests go to the set's fallback.
 * Returns SQLITE_OK, or SQLite's error (SQLITE_MISUSE while SQLite is
 * initialised).
 */
int sqlite_pool_install(pool_set_t *set);

#endif
