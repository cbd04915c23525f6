/*
 * The "memory" suite: what a pool costs in pages and gives back.
 * pool_trim() after a spike (RSS back near where it was, in every mode;
 * blocks given back still free and zero; live blocks untouched), and the
 * options that shape the region: POOL_PREFAULT (no page fault on first
 * use), POOL_HUGEPAGES and POOL_LOCK_MEMORY (their accounting and their
 * error path).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/capability.h>
#endif

#include "testutil.h"

/* What "near where it was" allows: side tables, a per-thread span, the
 * test's own pages. */
#define TRIM_SLACK ((size_t)8 << 20)
/* The spike README's promise is about, and a smaller one for the other
 * block sizes (every page touched costs a fault, twice). */
#define SPIKE       ((size_t)256 << 20)
#define SMALL_SPIKE ((size_t)32 << 20)

/* The sanitizers keep shadow pages for what the pool touched, and Valgrind
 * keeps its own: the process's RSS is then not the pool's. */
#if defined(SHIFTPOOL_ASAN) || defined(SHIFTPOOL_TSAN)
#define RSS_IS_THE_POOLS 0
#else
#define RSS_IS_THE_POOLS 1
#endif


/*
 * Takes every block of the pool, writing each through (the chain of them
 * lives in the blocks: the test itself allocates nothing that could keep
 * pages), and returns the last; each block's first word names the one
 * taken before it.
 */
static void *take_all_chained(pool_t *pool, size_t block)
{
	size_t count = stats_of(pool).block_count;
	void *prev = NULL;
	for (size_t i = 0; i < count; i++) {
		void **p = pool_malloc(pool, block);
		ck_assert_msg(p != NULL && pool_owns(pool, p),
		              "block %zu of %zu not from the pool", i, count);
		memset(p, 0xa5, block);
		*p = prev;
		prev = p;
	}
	return prev;
}

static void free_chain(pool_t *pool, void *last)
{
	while (last != NULL) {
		void *prev = *(void **)last;
		pool_free(pool, last);
		last = prev;
	}
}

/* After a spike that touched every block and freed them all, pool_trim()
 * gives back (nearly) all of it and RSS falls back; the pool then hands
 * out every block again, each reading zero through pool_calloc(). */
static void check_trim_after_spike(int mode, size_t block, size_t spike)
{
	size_t count = spike / block;
	pool_t *pool = test_pool(block, count, mode | POOL_NO_FALLBACK);
	size_t before = resident_bytes();

	free_chain(pool, take_all_chained(pool, block));
	size_t spiked = resident_bytes();
	size_t released = pool_trim(pool);
	size_t after = resident_bytes();

	/* All but what the thread kept (its active span and one wholly free
	 * span besides), and the lead of the first page. */
	size_t kept = mode == POOL_PER_THREAD ? 2 * 256 * block : 0;
	ck_assert_msg(released + kept + page_size() >= spike &&
	                  released <= spike,
	              "%s, %zu B blocks: pool_trim() gave back %zu KiB of a "
	              "%zu KiB spike",
	              mode_name(mode), block, released >> 10, spike >> 10);
	ck_assert_uint_eq(pool_trim(pool), 0); /* nothing new to give */
	if (RSS_IS_THE_POOLS && !under_valgrind() && before != 0) {
		ck_assert_msg(spiked >= before + spike - TRIM_SLACK,
		              "the spike made only %zu KiB resident",
		              (spiked - before) >> 10);
		ck_assert_msg(after <= before + TRIM_SLACK,
		              "%s, %zu B blocks: RSS %zu KiB before the spike, "
		              "%zu KiB at its peak, %zu KiB after pool_trim()",
		              mode_name(mode), block, before >> 10,
		              spiked >> 10, after >> 10);
	}
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.peak_in_use, count);

	/* Every block again, from the pool; the ones given back read zero
	 * (one in 16 read: every byte read is a page fault). */
	for (size_t i = 0; i < count; i++) {
		void **p = pool_malloc(pool, block);
		ck_assert_msg(p != NULL && pool_owns(pool, p),
		              "after trim: block %zu of %zu not from the pool",
		              i, count);
		if (i % 16 == 0 && !(mode == POOL_PER_THREAD && i < 2 * 256))
			assert_bytes(p, block, 0, "a block after pool_trim()");
	}
	st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, count);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	assert_exhausted(pool);
}

START_TEST(test_trim_spike_small_blocks)
{
	check_trim_after_spike(test_modes[_i], 64, SMALL_SPIKE);
}
END_TEST

START_TEST(test_trim_spike_page_blocks)
{
	/* Under Valgrind every page touched costs a great deal: the smaller
	 * spike proves the same there. */
	check_trim_after_spike(test_modes[_i], 4096,
	                       under_valgrind() ? SMALL_SPIKE : SPIKE);
}
END_TEST

/* Blocks larger than a page go back one by one, between live ones. */
START_TEST(test_trim_spike_large_blocks)
{
	check_trim_after_spike(test_modes[_i], 65536, SMALL_SPIKE);
}
END_TEST

/* Live blocks keep their contents through a trim, even where every other
 * block of their page is free; the free ones around them go. */
START_TEST(test_trim_keeps_live_blocks)
{
	int mode = test_modes[_i];
	const size_t block = 256, count = 8192; /* 2 MiB */
	pool_t *pool = test_pool(block, count, mode | POOL_NO_FALLBACK);
	void **all = take_every_block(pool, block);

	for (size_t i = 0; i < count; i++)
		memset(all[i], (int)(i % 251) + 1, block);
	/* Keep one block in 64: one in every 16 KiB. */
	for (size_t i = 0; i < count; i++)
		if (i % 64 != 0)
			pool_free(pool, all[i]);
	size_t released = pool_trim(pool);
	for (size_t i = 0; i < count; i += 64)
		assert_bytes(all[i], block, (unsigned char)(i % 251 + 1),
		             "a live block after pool_trim()");
	ck_assert_uint_eq(stats_of(pool).in_use, count / 64);

	/* The others are free: all of them can be taken again. */
	for (size_t i = 0; i < count; i++)
		if (i % 64 != 0) {
			all[i] = pool_malloc(pool, block);
			ck_assert_msg(all[i] != NULL && pool_owns(pool, all[i]),
			              "block %zu not served after trim", i);
			memset(all[i], 0x5a, block);
		}
	assert_exhausted(pool);
	for (size_t i = 0; i < count; i += 64)
		assert_bytes(all[i], block, (unsigned char)(i % 251 + 1),
		             "a live block after the others came back");
	give_back(pool, all, count);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	/* In single and locked mode, three pages of every four around the
	 * live blocks held only free blocks; a per-thread span of these 256
	 * blocks holds a live one and stays. */
	if (mode != POOL_PER_THREAD)
		ck_assert_msg(released >= count * block / 2,
		              "%s: only %zu KiB given back around live blocks",
		              mode_name(mode), released >> 10);
}
END_TEST

START_TEST(test_trim_null_and_fresh)
{
	int mode = test_modes[_i];
	ck_assert_uint_eq(pool_trim(NULL), 0);
	/* A pool never used has nothing resident to give. */
	pool_t *pool = test_pool(4096, 1024, mode);
	ck_assert_uint_eq(pool_trim(pool), 0);
	void *p = pool_malloc(pool, 4096);
	ck_assert_ptr_nonnull(p);
	pool_free(pool, p);
}
END_TEST

/* ------------------------------------------------------------ options */

static long minor_faults(void)
{
	struct rusage ru;
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_minflt;
}

/* Touching every block of a POOL_PREFAULT pool takes no page fault: its
 * pages were there at pool_init(). */
START_TEST(test_prefault_no_faults)
{
	int mode = test_modes[_i];
	const size_t block = 4096, count = 4096; /* 16 MiB: 4096 pages */
	pool_t *plain = test_pool(block, count, mode | POOL_NO_FALLBACK);
	pool_t *pool =
	    test_pool(block, count, mode | POOL_NO_FALLBACK | POOL_PREFAULT);
	ck_assert_int_eq(stats_of(pool).flags,
	                 mode | POOL_NO_FALLBACK | POOL_PREFAULT);

	long f0 = minor_faults();
	free_chain(pool, take_all_chained(pool, block));
	long prefaulted = minor_faults() - f0;
	f0 = minor_faults();
	free_chain(plain, take_all_chained(plain, block));
	long lazy = minor_faults() - f0;

	/* Under Valgrind or a sanitizer the faults are their shadow
	 * memory's as well: the calls ran, the count says nothing. */
	if (under_valgrind() || !RSS_IS_THE_POOLS)
		return;
	/* The lazy pool faults once a page; the prefaulted one (nearly)
	 * never: a few for the test's own stack and the library's. */
	ck_assert_msg(lazy >= (long)count / 2,
	              "the plain pool took only %ld faults over %zu pages: the "
	              "comparison measures nothing",
	              lazy, count);
	ck_assert_msg(prefaulted <= lazy / 64,
	              "%s POOL_PREFAULT: %ld page faults over %zu pages (plain "
	              "pool: %ld)",
	              mode_name(mode), prefaulted, count, lazy);
}
END_TEST

/* POOL_HUGEPAGES: the region's blocks start on a 2 MiB boundary (the
 * area is aligned to it and blocks end where it ends), and the pool works
 * as any other.  Whether the kernel backs it with huge pages is
 * tests/safety-hugepages' question. */
START_TEST(test_hugepages_aligned)
{
	int mode = test_modes[_i];
	const size_t block = 4096, count = 1024; /* 4 MiB */
	pool_t *pool = test_pool(block, count, mode | POOL_HUGEPAGES);
	void **all = take_every_block(pool, block);
	char *base = assert_region_blocks(all, count, block);
	ck_assert_msg(((uintptr_t)base & (((size_t)2 << 20) - 1)) == 0,
	              "POOL_HUGEPAGES region at %p: not 2 MiB aligned",
	              (void *)base);
	give_back(pool, all, count);
}
END_TEST

/* Pools made one after the other have their structures at different
 * places in their pages: at one place, every pool's header would fall in
 * the same sets of the cache, and a set's classes would evict each
 * other's. */
START_TEST(test_pools_spread_in_their_pages)
{
	int mode = test_modes[_i];
	enum { POOLS = 8 };
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t offsets[POOLS];
	size_t distinct = 0;

	for (int i = 0; i < POOLS; i++) {
		pool_t *pool = pool_init(64, 64, mode);
		ck_assert_ptr_nonnull(pool);
		uintptr_t offset = (uintptr_t)pool & (page - 1);
		ck_assert_msg(offset % 512 == 0, "pool at %p", (void *)pool);
		bool seen = false;
		for (size_t j = 0; j < distinct; j++)
			seen |= offsets[j] == offset;
		if (!seen)
			offsets[distinct++] = offset;
		void *block = pool_malloc(pool, 64);
		ck_assert(pool_owns(pool, block));
		pool_free(pool, block);
		pool_destroy(pool);
	}
	ck_assert_uint_eq(distinct, POOLS);
}
END_TEST

/* POOL_LOCK_MEMORY: the region is resident at once, and pool_trim() gives
 * none of it back. */
START_TEST(test_lock_memory_resident)
{
	int mode = test_modes[_i];
	const size_t block = 4096, count = 256; /* 1 MiB */
	struct rlimit rl;
	ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	if (geteuid() != 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < 2 * block * count)
		return; /* the limit forbids it: test_lock_memory_refused */

	size_t before = resident_bytes();
	pool_t *pool = test_pool(block, count, mode | POOL_LOCK_MEMORY);
	size_t after = resident_bytes();
	if (before != 0 && RSS_IS_THE_POOLS && !under_valgrind())
		ck_assert_msg(after >= before + block * count,
		              "POOL_LOCK_MEMORY: only %zu KiB resident for a "
		              "%zu KiB region",
		              (after - before) >> 10, (block * count) >> 10);
	void *p = pool_malloc(pool, block);
	ck_assert_ptr_nonnull(p);
	pool_free(pool, p);
	ck_assert_uint_eq(pool_trim(pool), 0);
}
END_TEST

/* Drops CAP_IPC_LOCK from the effective set, so RLIMIT_MEMLOCK applies to
 * this process even as root.  Returns whether it did (or had not it). */
static bool drop_ipc_lock(void)
{
#if defined(__linux__) && defined(SYS_capget)
	struct __user_cap_header_struct header = {
	    .version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &header, data) != 0)
		return geteuid() != 0;
	data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	return syscall(SYS_capset, &header, data) == 0;
#else
	return geteuid() != 0;
#endif
}

/* Over RLIMIT_MEMLOCK, pool_init() fails with ENOMEM or EPERM, and leaves
 * nothing behind (the address space it took is returned). */
START_TEST(test_lock_memory_refused)
{
	int mode = test_modes[_i];
	struct rlimit small = {.rlim_cur = 64 << 10, .rlim_max = 64 << 10};

#if defined(SHIFTPOOL_ASAN) || defined(SHIFTPOOL_TSAN)
	/* The sanitizers' mlock() does nothing and succeeds: no limit to
	 * meet. */
	(void)mode;
	return;
#endif
	/* A forked test: the limit and the capability die with it. */
	if (!drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &small) != 0)
		ck_abort_msg("cannot lower RLIMIT_MEMLOCK to test its error");
	size_t vm_before = virtual_bytes();
	errno = 0;
	pool_t *pool = pool_init(4096, 1024, mode | POOL_LOCK_MEMORY);
	int saved = errno;
	if (pool != NULL)
		pool_destroy(pool);
	ck_assert_msg(pool == NULL,
	              "POOL_LOCK_MEMORY: 4 MiB locked under a 64 KiB limit");
	ck_assert_msg(saved == ENOMEM || saved == EPERM,
	              "POOL_LOCK_MEMORY refused with errno %d (%s)", saved,
	              strerror(saved));
	if (vm_before != 0 && !under_valgrind())
		ck_assert_uint_le(virtual_bytes(), vm_before);
	/* Without the option, the same pool is fine. */
	pool = test_pool(4096, 1024, mode);
	ck_assert_ptr_nonnull(pool_malloc(pool, 1));
}
END_TEST

Suite *memory_suite(void)
{
	Suite *s = suite_create("memory");

	TCase *tc = test_tcase(s, "trim");
	test_add_every_mode(tc, test_trim_spike_small_blocks);
	test_add_every_mode(tc, test_trim_spike_page_blocks);
	test_add_every_mode(tc, test_trim_spike_large_blocks);
	test_add_every_mode(tc, test_trim_keeps_live_blocks);
	test_add_every_mode(tc, test_trim_null_and_fresh);

	tc = test_tcase(s, "options");
	test_add_every_mode(tc, test_prefault_no_faults);
	test_add_every_mode(tc, test_hugepages_aligned);
	test_add_every_mode(tc, test_pools_spread_in_their_pages);
	test_add_every_mode(tc, test_lock_memory_resident);
	/* It lowers the process's limit: only in a forked child of its own
	 * (CK_FORK=no, for a debugger, leaves it out). */
	const char *fork_mode = getenv("CK_FORK");
	if (fork_mode == NULL || strcmp(fork_mode, "no") != 0)
		test_add_every_mode(tc, test_lock_memory_refused);
	return s;
}
