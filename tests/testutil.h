/*
 * Shared pieces of the Check suites: the table of pool modes every
 * mode-independent test loops over, the per-test fixture, a misuse handler
 * that records reports instead of aborting, and helpers that look at a
 * pool's whole block set.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_TESTUTIL_H
#define SHIFTPOOL_TESTUTIL_H

#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "modes.h" /* mode_name(), for failure messages */
#include "shiftpool.h"

/* Check 0.10 lacks the NULL-pointer assertions; 0.11 added them. */
#ifndef ck_assert_ptr_nonnull
#define ck_assert_ptr_nonnull(p) ck_assert_ptr_ne((p), NULL)
#define ck_assert_ptr_null(p) ck_assert_ptr_eq((p), NULL)
#endif

/*
 * ck_assert_msg() for checks made thousands of times in a loop: Check
 * records the place of every passing assertion (in fork mode, a write to a
 * pipe), which would dominate such loops; this records failures only.
 */
#define expect(cond, ...)                                                     \
	do {                                                                  \
		if (!(cond))                                                  \
			ck_abort_msg(__VA_ARGS__);                            \
	} while (0)

/* Clears errno, asserts call gives NULL, then that errno is err. */
#define assert_null_errno(call, err)                                           \
	do {                                                                   \
		errno = 0;                                                     \
		ck_assert_ptr_null(call);                                      \
		ck_assert_int_eq(errno, err);                                  \
	} while (0)

/* ------------------------------------------------------------ suites */

/* One suite per concern; check_shiftpool.c runs them all. */
Suite *init_suite(void);
Suite *alloc_suite(void);
Suite *free_suite(void);
Suite *misuse_suite(void);
Suite *stats_suite(void);
Suite *threads_suite(void);
Suite *memory_suite(void);
Suite *bulk_suite(void);
Suite *set_suite(void);
Suite *dropin_suite(void);
Suite *fallback_suite(void);
Suite *spans_suite(void);

/* Whether the test runs under Valgrind (which keeps memory of its own
 * beside the process's, and takes its time over every mapping). */
bool under_valgrind(void);

/* ------------------------------------------------------------ modes */

/*
 * A test that holds in every mode is added with
 *	tcase_add_loop_test(tc, test, 0, TEST_MODE_COUNT);
 * and reads its mode as test_modes[_i].  Modes from
 * TEST_FIRST_CONCURRENT_MODE on may be called by many threads at once.
 */
extern const int test_modes[];
#define TEST_MODE_COUNT 3
#define TEST_FIRST_CONCURRENT_MODE 1

/* Every option bit the header defines; pool_init() must refuse any other
 * bit.  A new option belongs here, with its own tests. */
#define TEST_KNOWN_OPTIONS                                                     \
	(POOL_NO_FALLBACK | POOL_DEBUG_FILL | POOL_PREFAULT | POOL_HUGEPAGES | \
	 POOL_LOCK_MEMORY)

/* ------------------------------------------------------------ fixture */

/* Checked fixture: errno cleared, default misuse handler, no pools. */
void test_setup(void);
/* Destroys the pools test_pool() made and restores the default handler. */
void test_teardown(void);

/* A new TCase called name, with the fixture, added to s; every TCase of
 * the suites is made so. */
TCase *test_tcase(Suite *s, const char *name);

/* Adds test to tc once for every mode (see test_modes). */
#define test_add_every_mode(tc, test)                                          \
	tcase_add_loop_test(tc, test, 0, TEST_MODE_COUNT)

/* Adds test to tc once for every mode from TEST_FIRST_CONCURRENT_MODE on;
 * the test's mode is test_modes[_i + TEST_FIRST_CONCURRENT_MODE]. */
#define test_add_concurrent_modes(tc, test)                                    \
	tcase_add_loop_test(tc, test, 0,                                       \
	                    TEST_MODE_COUNT - TEST_FIRST_CONCURRENT_MODE)

/* A fresh pool, asserted to exist, destroyed by test_teardown(). */
pool_t *test_pool(size_t block_size, size_t block_count, int flags);

/* ------------------------------------------------------------ misuse */

/*
 * What the recording handler saw.  It may be called from any thread, so
 * read it through misuse_count() and misuse_last() only.
 */
struct misuse_report {
	const pool_t *pool;
	const void *ptr;
	enum pool_error error;
	char function[32];
};

/* Installs the recording handler and forgets earlier reports. */
void misuse_record(void);
/* Reports seen since misuse_record(), of any kind or of one kind. */
unsigned misuse_count(void);
unsigned misuse_count_of(enum pool_error error);
/* The latest report; asserts there is one. */
struct misuse_report misuse_last(void);

/* ------------------------------------------------------------ blocks */

/*
 * Takes every block of the pool with pool_malloc(size), asserting each is
 * served by the pool; returns a malloc()ed array of pool_block_size()
 * pointers in allocation order.
 */
void **take_every_block(pool_t *pool, size_t size);

/*
 * Asserts that blocks, sorted, are count distinct starts of one contiguous
 * run with a stride of block_size: exactly the region's block set.  Returns
 * the lowest, the region's base.  blocks is sorted in place.
 */
char *assert_region_blocks(void **blocks, size_t count, size_t block_size);

/*
 * Asserts the pool has no free block left: one more request is served by
 * the fallback (or refused with ENOMEM under POOL_NO_FALLBACK).
 */
void assert_exhausted(pool_t *pool);

/* pool_free()s every pointer of blocks, then free()s the array. */
void give_back(pool_t *pool, void **blocks, size_t count);

/* The counters, asserted to be readable. */
pool_stats_t stats_of(const pool_t *pool);

/* ------------------------------------------------------------ misc */

/* A fixed-seed generator, so every run is the same run (splitmix64). */
uint64_t test_random(uint64_t *state);

/* Fisher-Yates over an array of pointers. */
void shuffle_pointers(void **items, size_t count, uint64_t seed);

/* Asserts len bytes at p all equal value; what names the buffer. */
void assert_bytes(const void *p, size_t len, unsigned char value,
                  const char *what);

/* The process's resident set in bytes, or 0 when it cannot be read. */
size_t resident_bytes(void);

/* The process's mapped address space in bytes, or 0 when unknown. */
size_t virtual_bytes(void);

/* The system page size. */
size_t page_size(void);

#endif /* SHIFTPOOL_TESTUTIL_H */
