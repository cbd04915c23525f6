/*
 * The "set" suite: pool sets in every mode.  Each size goes to the
 * smallest class that fits (at every class boundary too) and is served
 * there until that class is exhausted, then by the fallback or not at all
 * (every class); pool_set_free() takes back every pointer (blocks of any
 * class, fallback allocations); realloc moves across classes keeping the
 * contents; misuse (a double free, a pointer into a slice that is no
 * block, another set's block) is reported and never reaches free();
 * arguments are checked; pool_set_stats_print() prints what
 * pool_set_stats() says, class by class and in total.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MIN_BLOCK 16
#define MAX_BLOCK 4096
#define PER_CLASS ((size_t)1 << 20)

static pool_set_t *test_set(int flags)
{
	errno = 0;
	pool_set_t *set = pool_set_init(MIN_BLOCK, MAX_BLOCK, PER_CLASS, flags);
	ck_assert_msg(set != NULL, "pool_set_init(%#x): %s", (unsigned)flags,
	              strerror(errno));
	return set;
}

static pool_stats_t class_stats(const pool_set_t *set, size_t block_size)
{
	pool_stats_t st;
	ck_assert_int_eq(pool_set_stats(set, block_size, &st), 0);
	ck_assert_uint_eq(st.block_size, block_size);
	return st;
}

/* The smallest power of two >= size, at least MIN_BLOCK. */
static size_t class_of(size_t size)
{
	size_t c = MIN_BLOCK;
	while (c < size)
		c <<= 1;
	return c;
}

/* Every size from 1 to MAX_BLOCK goes to its class. */
START_TEST(test_set_classes)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode | POOL_NO_FALLBACK);

	for (size_t size = 1; size <= MAX_BLOCK; size += size < 64 ? 1 : 61) {
		size_t c = class_of(size);
		pool_stats_t before = class_stats(set, c);
		char *p = pool_set_malloc(set, size);
		ck_assert_ptr_nonnull(p);
		memset(p, 0x5a, size);
		pool_stats_t after = class_stats(set, c);
		ck_assert_msg(after.in_use == before.in_use + 1,
		              "size %zu not served by the %zu B class", size,
		              c);
		pool_set_free(set, p);
		ck_assert_uint_eq(class_stats(set, c).in_use, before.in_use);
	}
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.fallback_allocs, 0);
	pool_set_destroy(set);
}
END_TEST

/* The classes of a set from MIN_BLOCK to MAX_BLOCK. */
#define CLASS_COUNT 9
_Static_assert((MIN_BLOCK << (CLASS_COUNT - 1)) == MAX_BLOCK,
               "CLASS_COUNT is the number of classes");
/* bytes_per_class of a set whose classes run out soon: with 4 KiB pages,
 * 768 blocks of 16 B down to 3 of 4 KiB. */
#define SMALL_PER_CLASS ((size_t)16 << 10)

/* Every class's counters, out[k] those of the class MIN_BLOCK << k. */
static void every_class_stats(const pool_set_t *set,
                              pool_stats_t out[CLASS_COUNT])
{
	for (unsigned k = 0; k < CLASS_COUNT; k++)
		out[k] = class_stats(set, (size_t)MIN_BLOCK << k);
}

/* The index k of the class of block_size bytes. */
static unsigned class_index(size_t block_size)
{
	return (unsigned)__builtin_ctzll(block_size / MIN_BLOCK);
}

/* Asserts that no class but the one of index except served, took back or
 * fell back since before; what names the moment. */
static void assert_others_untouched(const pool_set_t *set,
                                    const pool_stats_t before[CLASS_COUNT],
                                    unsigned except, const char *what)
{
	pool_stats_t now[CLASS_COUNT];
	every_class_stats(set, now);
	for (unsigned k = 0; k < CLASS_COUNT; k++)
		expect(k == except || (now[k].allocs == before[k].allocs &&
		                       now[k].in_use == before[k].in_use &&
		                       now[k].fallback_allocs ==
		                           before[k].fallback_allocs),
		       "%s: the %zu B class moved too (allocs %" PRIu64
		       " -> %" PRIu64 ", in_use %zu -> %zu, fallback %" PRIu64
		       " -> %" PRIu64 ")",
		       what, now[k].block_size, before[k].allocs, now[k].allocs,
		       before[k].in_use, now[k].in_use,
		       before[k].fallback_allocs, now[k].fallback_allocs);
}

static int compare_pointers(const void *x, const void *y)
{
	uintptr_t a = (uintptr_t) * (void *const *)x;
	uintptr_t b = (uintptr_t) * (void *const *)y;
	return (a > b) - (a < b);
}

/*
 * Fills every class of a set of small classes, the smallest first, each
 * with sizes only it fits (above half its block), and keeps every block:
 * each request is served by that class (its allocs grow, no fallback, no
 * other class moves) until the class is exhausted; the next one goes to
 * the fallback, counted by that class, or under POOL_NO_FALLBACK fails
 * with ENOMEM, and no other class serves it.  The classes filled before
 * stay exhausted meanwhile.  Then everything goes back, and each class
 * serves again.
 */
static void exhaust_every_class(int flags)
{
	const char *mode = mode_name(flags);
	bool fallback = !(flags & POOL_NO_FALLBACK);
	size_t page = page_size();
	size_t slice = SMALL_PER_CLASS;
	while (slice < MAX_BLOCK + page)
		slice *= 2;
	errno = 0;
	pool_set_t *set =
	    pool_set_init(MIN_BLOCK, MAX_BLOCK, SMALL_PER_CLASS, flags);
	ck_assert_msg(set != NULL, "pool_set_init(%#x): %s", (unsigned)flags,
	              strerror(errno));
	void **held[CLASS_COUNT];
	size_t counts[CLASS_COUNT];
	void *extra[CLASS_COUNT];
	uint64_t blocks = 0;
	char what[128];

	for (unsigned k = 0; k < CLASS_COUNT; k++) {
		size_t block = (size_t)MIN_BLOCK << k;
		size_t least = k == 0 ? 1 : block / 2 + 1;
		size_t sizes = block - least + 1;
		pool_stats_t before[CLASS_COUNT];
		every_class_stats(set, before);
		size_t count = before[k].block_count;
		/* A slice less its guard page, all blocks. */
		ck_assert_msg(count >= (slice - page) / block,
		              "%s: %zu blocks of %zu B in a slice of %zu", mode,
		              count, block, slice);
		ck_assert_uint_eq(before[k].allocs, 0);
		void **p = malloc(count * sizeof *p);
		ck_assert_ptr_nonnull(p);
		for (size_t i = 0; i < count; i++) {
			size_t size = least + i % sizes;
			p[i] = pool_set_malloc(set, size);
			expect(p[i] != NULL,
			       "%s: request %zu of %zu (%zu bytes) for the "
			       "%zu B class failed: %s",
			       mode, i + 1, count, size, block,
			       strerror(errno));
			memset(p[i], (int)k, size);
			pool_stats_t st = class_stats(set, block);
			expect(st.allocs == i + 1 && st.in_use == i + 1 &&
			           st.fallback_allocs == 0,
			       "%s: request %zu of %zu (%zu bytes) not served "
			       "by the %zu B class (allocs %" PRIu64
			       ", in_use %zu, fallback %" PRIu64 ")",
			       mode, i + 1, count, size, block, st.allocs,
			       st.in_use, st.fallback_allocs);
		}
		snprintf(what, sizeof what, "%s: %zu B class filled", mode,
		         block);
		assert_others_untouched(set, before, k, what);

		/* Exhausted: one more request of its sizes. */
		size_t size = least + count % sizes;
		errno = 0;
		extra[k] = pool_set_malloc(set, size);
		pool_stats_t st = class_stats(set, block);
		if (fallback) {
			ck_assert_msg(extra[k] != NULL,
			              "%s: %zu bytes past the %zu B class: %s",
			              mode, size, block, strerror(errno));
			memset(extra[k], 0xee, size);
			ck_assert_msg(st.fallback_allocs == 1,
			              "%s: %zu bytes past the %zu B class: its "
			              "fallback_allocs %" PRIu64 ", not 1",
			              mode, size, block, st.fallback_allocs);
		} else {
			ck_assert_msg(
			    extra[k] == NULL,
			    "%s: the %zu B class, exhausted after %zu "
			    "blocks, served %zu bytes",
			    mode, block, count, size);
			ck_assert_int_eq(errno, ENOMEM);
			ck_assert_uint_eq(st.fallback_allocs, 0);
		}
		ck_assert_uint_eq(st.allocs, count);
		ck_assert_uint_eq(st.in_use, count);
		snprintf(what, sizeof what,
		         "%s: %zu bytes past the %zu B class", mode, size,
		         block);
		assert_others_untouched(set, before, k, what);

		/* All distinct, and none written by a later request. */
		qsort(p, count, sizeof *p, compare_pointers);
		for (size_t i = 0; i < count; i++)
			expect((i == 0 || p[i - 1] != p[i]) &&
			           *(unsigned char *)p[i] == k,
			       "%s: the %zu B class handed out %p twice", mode,
			       block, p[i]);
		held[k] = p;
		counts[k] = count;
		blocks += count;
	}

	for (unsigned k = 0; k < CLASS_COUNT; k++) {
		for (size_t i = 0; i < counts[k]; i++)
			pool_set_free(set, held[k][i]);
		pool_set_free(set, extra[k]);
		free(held[k]);
	}
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.allocs, blocks);
	ck_assert_uint_eq(total.frees, blocks);
	ck_assert_uint_eq(total.fallback_allocs, fallback ? CLASS_COUNT : 0);
	ck_assert_uint_eq(total.fallback_frees, total.fallback_allocs);
	/* Exhaustion does not last. */
	for (unsigned k = 0; k < CLASS_COUNT; k++) {
		size_t block = (size_t)MIN_BLOCK << k;
		void *p = pool_set_malloc(set, block);
		ck_assert_ptr_nonnull(p);
		pool_stats_t st = class_stats(set, block);
		ck_assert_uint_eq(st.allocs, counts[k] + 1);
		ck_assert_uint_eq(st.in_use, 1);
		pool_set_free(set, p);
	}
	pool_set_destroy(set);
}

/* Every class, with and without the fallback. */
START_TEST(test_set_every_class_until_exhausted)
{
	int mode = test_modes[_i];
	exhaust_every_class(mode);
	exhaust_every_class(mode | POOL_NO_FALLBACK);
}
END_TEST

/*
 * The sizes at every class boundary, 2^k - 1, 2^k and 2^k + 1 up to
 * 2 * MAX_BLOCK, by malloc and by calloc: each is served by the smallest
 * class that fits it, on a block aligned to its size (up to a page), and
 * no other class moves; above MAX_BLOCK the fallback serves it, counted
 * by the largest class.
 */
START_TEST(test_set_class_boundaries)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode);
	size_t page = page_size();
	char what[128];

	for (size_t power = 1; power <= 2 * MAX_BLOCK; power *= 2) {
		const size_t sizes[] = {power - 1, power, power + 1};
		for (unsigned s = 0; s < 6; s++) {
			size_t size = sizes[s / 2];
			bool zero = s % 2;
			if (size == 0)
				continue;
			bool fits = size <= MAX_BLOCK;
			size_t block = fits ? class_of(size) : MAX_BLOCK;
			unsigned k = class_index(block);
			pool_stats_t before[CLASS_COUNT];
			every_class_stats(set, before);
			char *p = zero ? pool_set_calloc(set, size, 1)
			               : pool_set_malloc(set, size);
			ck_assert_ptr_nonnull(p);
			if (zero)
				assert_bytes(p, size, 0, "pool_set_calloc");
			memset(p, 0x5a, size);
			pool_stats_t st = class_stats(set, block);
			snprintf(
			    what, sizeof what, "%s: %s(%zu)", mode_name(mode),
			    zero ? "pool_set_calloc" : "pool_set_malloc", size);
			if (fits) {
				ck_assert_msg(
				    st.allocs == before[k].allocs + 1 &&
				        st.in_use == before[k].in_use + 1 &&
				        st.fallback_allocs ==
				            before[k].fallback_allocs,
				    "%s not served by the %zu B class", what,
				    block);
				size_t align = block < page ? block : page;
				ck_assert_msg((uintptr_t)p % align == 0,
				              "%s: %p not aligned to %zu", what,
				              (void *)p, align);
			} else {
				ck_assert_msg(
				    st.fallback_allocs ==
				            before[k].fallback_allocs + 1 &&
				        st.allocs == before[k].allocs,
				    "%s not served by the fallback of "
				    "the largest class",
				    what);
			}
			assert_others_untouched(set, before, k, what);
			pool_set_free(set, p);
			ck_assert_uint_eq(class_stats(set, block).in_use,
			                  before[k].in_use);
		}
	}
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.fallback_allocs, total.fallback_frees);
	pool_set_destroy(set);
}
END_TEST

START_TEST(test_set_above_max)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode);
	char *big = pool_set_malloc(set, MAX_BLOCK + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, 1, MAX_BLOCK + 1);
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.fallback_allocs, 1);
	ck_assert_uint_eq(total.in_use, 0);
	pool_set_free(set, big);
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.fallback_frees, 1);
	pool_set_destroy(set);

	set = test_set(mode | POOL_NO_FALLBACK);
	errno = 0;
	ck_assert_ptr_null(pool_set_malloc(set, MAX_BLOCK + 1));
	ck_assert_int_eq(errno, ENOMEM);
	volatile size_t huge = SIZE_MAX / 2;
	errno = 0;
	ck_assert_ptr_null(pool_set_calloc(set, huge, 4));
	ck_assert_int_eq(errno, ENOMEM);
	pool_set_destroy(set);
}
END_TEST

/* The counters pool_set_stats_print() wrote for one class (SIZE, or 0 for
 * the total), as text and as JSON, read back from its output. */
static void printed_counts(const char *text, const char *json, size_t size,
                           uint64_t *allocs, size_t *in_use,
                           uint64_t *fallback_allocs)
{
	char key[64];
	const char *at;
	if (size != 0)
		snprintf(key, sizeof key, "\nclass %zu: ", size);
	else
		snprintf(key, sizeof key, "\ntotal: ");
	at = strstr(text, key);
	ck_assert_msg(at != NULL, "no \"%s\" line in:\n%s", key + 1, text);
	at = strstr(at, "in_use: ");
	ck_assert_ptr_nonnull(at);
	ck_assert_int_eq(sscanf(at, "in_use: %zu", in_use), 1);
	at = strstr(at, "allocs: ");
	ck_assert_ptr_nonnull(at);
	ck_assert_int_eq(sscanf(at, "allocs: %" SCNu64, allocs), 1);
	at = strstr(at, "fallback_allocs: ");
	ck_assert_ptr_nonnull(at);
	ck_assert_int_eq(
	    sscanf(at, "fallback_allocs: %" SCNu64, fallback_allocs), 1);
	/* The JSON object of the same class says the same. */
	if (size != 0)
		snprintf(key, sizeof key, "\"block_size\":%zu,", size);
	else
		snprintf(key, sizeof key, "\"total\":{");
	at = strstr(json, key);
	ck_assert_msg(at != NULL, "no %s in %s", key, json);
	char want[160];
	snprintf(want, sizeof want, "\"in_use\":%zu,\"peak_in_use\":", *in_use);
	ck_assert_msg(strstr(at, want) != NULL, "%s: %s not in %s", key, want,
	              at);
	snprintf(want, sizeof want, "\"allocs\":%" PRIu64 ",", *allocs);
	ck_assert_msg(strstr(at, want) != NULL, "%s: %s not in %s", key, want,
	              at);
}

/* pool_set_stats_print() writes every class and the total, as
 * pool_set_stats() counts them; text and JSON; its errors. */
START_TEST(test_set_stats_print)
{
	pool_set_t *set = test_set(test_modes[_i]);
	void *p[6];
	const size_t sizes[6] = {1, 16, 17, 300, 4096, MAX_BLOCK + 1};
	for (int i = 0; i < 6; i++)
		ck_assert_ptr_nonnull(p[i] = pool_set_malloc(set, sizes[i]));
	pool_set_free(set, p[1]);

	char text[8192], json[8192];
	FILE *f = fmemopen(text, sizeof text, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pool_set_stats_print(set, f, POOL_STATS_TEXT), 0);
	fclose(f);
	f = fmemopen(json, sizeof json, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pool_set_stats_print(set, f, POOL_STATS_JSON), 0);
	fclose(f);
	static const char head[] = "set: 9 classes, 16 .. 4096 B\n";
	static const char json_head[] = "{\"kind\":\"set\",\"classes\":[{";
	ck_assert_msg(strncmp(text, head, strlen(head)) == 0,
	              "first line: %.40s", text);
	ck_assert_msg(strncmp(json, json_head, strlen(json_head)) == 0 &&
	                  strchr(json, '\n') == json + strlen(json) - 1,
	              "not one JSON object on one line: %s", json);

	for (size_t size = MIN_BLOCK; size <= MAX_BLOCK; size <<= 1) {
		pool_stats_t st = class_stats(set, size);
		uint64_t allocs, fallbacks;
		size_t in_use;
		printed_counts(text, json, size, &allocs, &in_use, &fallbacks);
		ck_assert_uint_eq(allocs, st.allocs);
		ck_assert_uint_eq(in_use, st.in_use);
		ck_assert_uint_eq(fallbacks, st.fallback_allocs);
	}
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	uint64_t allocs, fallbacks;
	size_t in_use;
	printed_counts(text, json, 0, &allocs, &in_use, &fallbacks);
	ck_assert_uint_eq(allocs, 5);
	ck_assert_uint_eq(in_use, 4);
	ck_assert_uint_eq(fallbacks, 1);
	ck_assert_uint_eq(total.allocs, allocs);

	errno = 0;
	ck_assert_int_eq(pool_set_stats_print(NULL, stdout, POOL_STATS_TEXT),
	                 -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_set_stats_print(set, NULL, POOL_STATS_TEXT), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_set_stats_print(set, stdout, 7), -1);
	ck_assert_int_eq(errno, EINVAL);
	f = fopen("/dev/full", "w");
	if (f != NULL) {
		errno = 0;
		ck_assert_int_eq(pool_set_stats_print(set, f, POOL_STATS_JSON),
		                 -1);
		ck_assert_int_eq(errno, EIO);
		fclose(f);
	}
	for (int i = 0; i < 6; i++)
		if (i != 1)
			pool_set_free(set, p[i]);
	pool_set_destroy(set);
}
END_TEST

/* realloc moves across classes, up and down, and to the fallback and
 * back, keeping the contents. */
START_TEST(test_set_realloc)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode);
	static const size_t sizes[] = {10, 12, 1000, 100, 5000, 3000, 20, 17};
	char *p = pool_set_realloc(set, NULL, 1);
	ck_assert_ptr_nonnull(p);
	p[0] = 'a';
	size_t kept = 1;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size_t size = sizes[i];
		char *q = pool_set_realloc(set, p, size);
		ck_assert_ptr_nonnull(q);
		for (size_t k = 0; k < (kept < size ? kept : size); k++)
			ck_assert_int_eq(q[k], (char)('a' + k % 26));
		for (size_t k = 0; k < size; k++)
			q[k] = (char)('a' + k % 26);
		kept = size;
		p = q;
		pool_stats_t total;
		ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
		ck_assert_uint_eq(total.in_use, size > MAX_BLOCK ? 0 : 1);
		if (size <= MAX_BLOCK)
			ck_assert_uint_eq(
			    class_stats(set, class_of(size)).in_use, 1);
	}
	ck_assert_ptr_null(pool_set_realloc(set, p, 0));
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.fallback_allocs, total.fallback_frees);

	char *s = pool_set_strdup(set, "pool sets");
	ck_assert_str_eq(s, "pool sets");
	char *z = pool_set_calloc(set, 10, 30);
	assert_bytes(z, 300, 0, "pool_set_calloc");
	pool_set_free(set, s);
	pool_set_free(set, z);
	pool_set_free(set, NULL);
	errno = 0;
	ck_assert_ptr_null(pool_set_strdup(set, NULL));
	ck_assert_int_eq(errno, EINVAL);
	pool_set_destroy(set);
}
END_TEST

/* Misuse through a set: reported, nothing freed, nothing handed to
 * free(). */
START_TEST(test_set_misuse)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode);
	pool_set_t *other = test_set(mode);
	char *a = pool_set_malloc(set, 100);
	char *theirs = pool_set_malloc(other, 100);

	misuse_record();
	pool_set_free(set, a + 8);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_INVALID_POINTER), 1);
	pool_set_free(set, theirs);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_WRONG_POOL), 1);
	pool_set_free(set, a);
	pool_set_free(set, a);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_DOUBLE_FREE), 1);
	/* The last page of a slice is its guard: inside the set, no block.
	 * A request of the 64 B class tells where its slice is; the slice
	 * before it is the 32 B class's. */
	char *b = pool_set_malloc(set, 64);
	uintptr_t slice = (uintptr_t)b & ~(uintptr_t)(PER_CLASS - 1);
	pool_set_free(set, (void *)(slice + PER_CLASS - page_size()));
	pool_set_free(set, (void *)(slice - 64));
	ck_assert_uint_eq(misuse_count(), 5);
	/* Reports name the set's call, and give no pool: the classes are
	 * the set's own. */
	ck_assert_str_eq(misuse_last().function, "pool_set_free");
	ck_assert_ptr_null(misuse_last().pool);
	pool_set_free(set, b);
	ck_assert_uint_eq(misuse_count(), 5);
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.fallback_frees, 0);
	pool_set_free(other, theirs);
	pool_set_destroy(other);
	pool_set_destroy(set);
}
END_TEST

START_TEST(test_set_arguments)
{
	int mode = test_modes[_i];
	static const size_t bad[][2] = {{0, 64},  {8, 64},   {24, 64},
	                                {64, 96}, {128, 64}, {16, 0}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		errno = 0;
		ck_assert_ptr_null(
		    pool_set_init(bad[i][0], bad[i][1], PER_CLASS, mode));
		ck_assert_int_eq(errno, EINVAL);
	}
	errno = 0;
	ck_assert_ptr_null(pool_set_init(16, 64, 0, mode));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pool_set_init(16, 64, PER_CLASS, mode | 0x40000));
	ck_assert_int_eq(errno, EINVAL);
	pool_set_destroy(NULL);

	/* A tiny bytes_per_class still holds a block of the largest class. */
	pool_set_t *set = pool_set_init(16, 8192, 1, mode | POOL_NO_FALLBACK);
	ck_assert_ptr_nonnull(set);
	void *p = pool_set_malloc(set, 8192);
	ck_assert_ptr_nonnull(p);
	pool_stats_t st;
	errno = 0;
	ck_assert_int_eq(pool_set_stats(set, 100, &st), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(pool_set_stats(set, 32768, &st), -1);
	ck_assert_int_eq(pool_set_stats(NULL, 0, &st), -1);
	ck_assert_int_eq(pool_set_stats(set, 0, NULL), -1);
	ck_assert_int_eq(pool_set_stats(set, 0, &st), 0);
	ck_assert_uint_eq(st.in_use, 1);
	ck_assert_int_eq(st.flags, mode | POOL_NO_FALLBACK);
	pool_set_free(set, p);
	pool_set_destroy(set);
}
END_TEST

struct set_worker {
	pool_set_t *set;
	void **mine;   /* allocated by this thread */
	void **theirs; /* to free: allocated by another */
	size_t n;
	unsigned seed;
};

static void *set_worker_fn(void *arg)
{
	struct set_worker *w = arg;
	for (size_t i = 0; i < w->n; i++)
		pool_set_free(w->set, w->theirs[i]);
	uint64_t rng = w->seed;
	for (size_t i = 0; i < w->n; i++) {
		size_t size = 1 + (size_t)(test_random(&rng) % (2 * MAX_BLOCK));
		w->mine[i] = pool_set_malloc(w->set, size);
		ck_assert_ptr_nonnull(w->mine[i]);
		memset(w->mine[i], (int)i, size < 16 ? size : 16);
	}
	return NULL;
}

/* Threads allocate every size and free each other's. */
START_TEST(test_set_threads)
{
	int mode = test_modes[_i + TEST_FIRST_CONCURRENT_MODE];
	enum { T = 4, N = 2000, ROUNDS = 4 };
	pool_set_t *set = test_set(mode);
	static void *blocks[ROUNDS + 1][T][N];
	struct set_worker w[T];
	for (int round = 0; round < ROUNDS; round++) {
		pthread_t th[T];
		for (int t = 0; t < T; t++) {
			w[t] = (struct set_worker){
			    set, blocks[round + 1][t],
			    round ? blocks[round][(t + 1) % T] : blocks[0][t],
			    N, (unsigned)(round * T + t + 1)};
			ck_assert_int_eq(
			    pthread_create(&th[t], NULL, set_worker_fn, &w[t]),
			    0);
		}
		for (int t = 0; t < T; t++)
			ck_assert_int_eq(pthread_join(th[t], NULL), 0);
	}
	for (int t = 0; t < T; t++)
		for (int i = 0; i < N; i++)
			pool_set_free(set, blocks[ROUNDS][t][i]);
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.allocs, total.frees);
	ck_assert_uint_eq(total.fallback_allocs, total.fallback_frees);
	ck_assert_uint_eq(total.allocs + total.fallback_allocs,
	                  (uint64_t)ROUNDS * T * N);
	pool_set_destroy(set);
}
END_TEST

/*
 * The set's reservation around its slices: the guard page and the slack
 * below the first slice, and what lies past the last.  No block is there,
 * yet the addresses are the set's: each is reported as an invalid pointer,
 * never handed to free() (which would abort, or fault on a page that is
 * not accessible).
 */
START_TEST(test_set_reservation_edges)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode);
	size_t classes = (size_t)__builtin_ctzll(MAX_BLOCK / MIN_BLOCK) + 1;
	size_t page = page_size();
	char *first = pool_set_malloc(set, MIN_BLOCK);

	ck_assert_ptr_nonnull(first);
	/* Slices are aligned to their size; the first is the smallest
	 * class's. */
	char *lo = (char *)((uintptr_t)first & ~(uintptr_t)(PER_CLASS - 1));
	char *hi = lo + classes * PER_CLASS;
	char *edges[] = {lo - 16, lo - page, hi, hi + 16, hi + page - 16};

	misuse_record();
	unsigned seen = 0;
	for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
		pool_set_free(set, edges[i]);
		expect(misuse_count() == seen + 1 &&
		           misuse_last().error == POOL_ERROR_INVALID_POINTER &&
		           misuse_last().ptr == edges[i],
		       "pool_set_free(%p): not one invalid-pointer report",
		       (void *)edges[i]);
		seen++;
		errno = 0;
		ck_assert_ptr_null(pool_set_realloc(set, edges[i], MIN_BLOCK));
		expect(misuse_count() == seen + 1 &&
		           misuse_last().error == POOL_ERROR_INVALID_POINTER &&
		           misuse_last().ptr == edges[i],
		       "pool_set_realloc(%p): not one invalid-pointer report",
		       (void *)edges[i]);
		seen++;
	}
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 1);
	ck_assert_uint_eq(total.fallback_frees, 0);
	pool_set_free(set, first);
	ck_assert_uint_eq(misuse_count(), seen);
	pool_set_destroy(set);
}
END_TEST

Suite *set_suite(void)
{
	Suite *s = suite_create("set");

	TCase *tc = test_tcase(s, "set");
	test_add_every_mode(tc, test_set_classes);
	test_add_every_mode(tc, test_set_every_class_until_exhausted);
	test_add_every_mode(tc, test_set_class_boundaries);
	test_add_every_mode(tc, test_set_above_max);
	test_add_every_mode(tc, test_set_realloc);
	test_add_every_mode(tc, test_set_misuse);
	test_add_every_mode(tc, test_set_reservation_edges);
	test_add_every_mode(tc, test_set_arguments);
	test_add_every_mode(tc, test_set_stats_print);
	test_add_concurrent_modes(tc, test_set_threads);
	return s;
}
