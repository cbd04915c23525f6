/*
 * What the drop-in suites (check_dropin.c, check_fallback.c) share: the
 * sets they make, a byte pattern, and the checks of a report.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_TESTS_DROPIN_H
#define SHIFTPOOL_TESTS_DROPIN_H

#include <stddef.h>

#include "testutil.h"

#define MIN_BLOCK 16
#define MAX_BLOCK 4096
#define PER_CLASS ((size_t)1 << 20)
/* A slice of 16 KiB: with 4 KiB pages its 4096 B class has 3 blocks (the
 * last page is the guard), so a class runs out after a few requests. */
#define SMALL_PER_CLASS ((size_t)16 << 10)

/* A set of MIN_BLOCK..MAX_BLOCK classes of per_class bytes each. */
pool_set_t *new_set(size_t per_class, int flags);
/* A pattern that differs at every offset and from seed to seed. */
unsigned char pattern_byte(size_t offset, unsigned seed);
void fill(void *p, size_t len, unsigned seed);
void assert_filled(const void *p, size_t len, unsigned seed, const char *what);
/* The in_use counter of the set's class of block_size bytes. */
size_t class_in_use(const pool_set_t *set, size_t block_size);
/* Asserts the latest report: what, where, by whom. */
void assert_report(enum pool_error error, const char *function,
                   const pool_t *pool, const void *ptr);
/* p as an allocator hook gets it, through a function pointer. */
void *opaque(void *p);
/* Writes to memory the pool may have poisoned (a free block). */
void raw_write(void *p, size_t len, unsigned char value);
/* Copies len bytes as raw_write() writes them (from a free block too). */
void raw_copy(void *to, const void *from, size_t len);

#endif /* SHIFTPOOL_TESTS_DROPIN_H */
