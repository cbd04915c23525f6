/*
 * The helpers of the drop-in suites (dropin.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "dropin.h"

#ifdef HAVE_VALGRIND_MEMCHECK_H
#include <valgrind/memcheck.h>
#endif

/* ------------------------------------------------------------ helpers */

pool_set_t *new_set(size_t per_class, int flags)
{
	errno = 0;
	pool_set_t *set = pool_set_init(MIN_BLOCK, MAX_BLOCK, per_class, flags);
	ck_assert_msg(set != NULL, "pool_set_init(%s, %#x): %s",
	              mode_name(flags), (unsigned)flags, strerror(errno));
	return set;
}

/* A pattern that differs at every offset and from seed to seed. */
unsigned char pattern_byte(size_t offset, unsigned seed)
{
	return (unsigned char)(seed * 31u + offset * 7u + (offset >> 8));
}

void fill(void *p, size_t len, unsigned seed)
{
	unsigned char *bytes = p;
	for (size_t i = 0; i < len; i++)
		bytes[i] = pattern_byte(i, seed);
}

void assert_filled(const void *p, size_t len, unsigned seed,
                          const char *what)
{
	const unsigned char *bytes = p;
	for (size_t i = 0; i < len; i++)
		expect(bytes[i] == pattern_byte(i, seed),
		       "%s: byte %zu of %zu changed", what, i, len);
}

/* The in_use counter of the set's class of block_size bytes. */
size_t class_in_use(const pool_set_t *set, size_t block_size)
{
	pool_stats_t st;
	ck_assert_int_eq(pool_set_stats(set, block_size, &st), 0);
	return st.in_use;
}

/* Asserts the latest report: what, where, by whom. */
void assert_report(enum pool_error error, const char *function,
                          const pool_t *pool, const void *ptr)
{
	struct misuse_report last = misuse_last();
	ck_assert_int_eq(last.error, error);
	ck_assert_str_eq(last.function, function);
	ck_assert_ptr_eq(last.pool, pool);
	ck_assert_ptr_eq(last.ptr, ptr);
}

/* p as an allocator hook gets it, through a function pointer: the
 * compiler cannot know the size asked (from the alloc_size attribute) and
 * hold the caller to it. */
void *opaque(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

/* Writes to memory the pool may have poisoned for ASan, or described to
 * Valgrind as freed (a free block): the test plays a buggy program here,
 * and tells the tools so, which then watch the pool find the damage. */
#ifdef SHIFTPOOL_ASAN
__attribute__((no_sanitize_address))
#endif
__attribute__((noinline)) void
raw_write(void *p, size_t len, unsigned char value)
{
#ifdef HAVE_VALGRIND_MEMCHECK_H
	VALGRIND_MAKE_MEM_UNDEFINED(p, len);
#endif
	for (size_t i = 0; i < len; i++)
		((volatile unsigned char *)p)[i] = value;
}

/* Copies len bytes between blocks the pool may have poisoned or described
 * as freed, as raw_write() writes. */
#ifdef SHIFTPOOL_ASAN
__attribute__((no_sanitize_address))
#endif
__attribute__((noinline)) void
raw_copy(void *to, const void *from, size_t len)
{
#ifdef HAVE_VALGRIND_MEMCHECK_H
	VALGRIND_MAKE_MEM_UNDEFINED(to, len);
	VALGRIND_MAKE_MEM_DEFINED(from, len);
#endif
	for (size_t i = 0; i < len; i++)
		((volatile unsigned char *)to)[i] =
		    ((const volatile unsigned char *)from)[i];
}
