/*
 * What pool_trim() does on a fragmented POOL_SINGLE or POOL_LOCKED pool,
 * counted, not timed: this program is built with the library's sources
 * and SHIFTPOOL_TRIM_COUNTERS (the library itself never is), which count
 * the trim's steps of work (a block or a bitmap word looked at, a system
 * call), in all and in the longest time it held the pool (what another
 * thread may have to wait for), and call a hook between the times it
 * holds the pool.  With every other page of 256 B blocks free:
 *
 *  - the work grows with the region, no faster: at most WORK_PER_BLOCK
 *    steps per block, whether the region is 4, 16 or 64 MiB;
 *  - no hold is longer than HOLD_BOUND steps, whatever the size;
 *  - the free pages are given back, the live blocks keep their contents,
 *    and the free blocks come back zero.
 *
 * Then the hook uses the pool between the trim's holds, as other threads
 * would: it takes and frees blocks, and once takes every free block there
 * is (none may be missing while a trim holds some aside), checking each
 * one's contents; the pool is whole after.  Once it forks: in the child,
 * where the trim is nobody's, the pool is whole too, and trims again.  The
 * invariant checks of --enable-debug are compiled in.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <sys/wait.h>
#include <unistd.h>

extern uint64_t shiftpool_test_trim_work, shiftpool_test_trim_hold_max;
extern void (*shiftpool_test_trim_between)(pool_t *pool);

#define WORK_PER_BLOCK 8
#define HOLD_BOUND     16384

static const struct safety_mode *const shared_modes[] = {
    &safety_modes[0], /* single */
    &safety_modes[1], /* locked */
};

/* The byte block i holds while live. */
static unsigned char mark_of(size_t i)
{
	return (unsigned char)(i % 251 + 1);
}

static bool holds(const unsigned char *p, size_t size, unsigned char value)
{
	for (size_t b = 0; b < size; b++)
		if (p[b] != value)
			return false;
	return true;
}

/* Every other page of a pool of 256 B blocks freed, then trimmed. */
static void fragmented(const struct safety_mode *m, size_t mib)
{
	const size_t block = 256, count = (mib << 20) / block;
	const size_t per_page = (size_t)sysconf(_SC_PAGESIZE) / block;
	pool_t *pool = pool_init(block, count, m->flag | POOL_NO_FALLBACK);
	unsigned char **all = malloc(count * sizeof *all);
	REQUIRE(pool != NULL && all != NULL, "%s: pool_init", m->name);

	for (size_t i = 0; i < count; i++) {
		all[i] = pool_malloc(pool, block);
		REQUIRE(all[i] != NULL, "%s: block %zu", m->name, i);
		memset(all[i], mark_of(i), block);
	}
	size_t freed = 0;
	for (size_t i = 0; i < count; i++)
		if ((i / per_page) % 2 == 1) {
			pool_free(pool, all[i]);
			all[i] = NULL;
			freed++;
		}
	shiftpool_test_trim_work = shiftpool_test_trim_hold_max = 0;
	size_t bytes = pool_trim(pool);
	uint64_t work = shiftpool_test_trim_work;
	uint64_t hold = shiftpool_test_trim_hold_max;
	printf("%s, %zu MiB: %zu KiB given back, %llu steps (%.2f a block), "
	       "longest hold %llu steps\n",
	       m->name, mib, bytes >> 10, (unsigned long long)work,
	       (double)work / (double)count, (unsigned long long)hold);
	CHECK(bytes == freed * block,
	      "%s, %zu MiB: %zu bytes given back, %zu free", m->name, mib,
	      bytes, freed * block);
	CHECK(work <= WORK_PER_BLOCK * count,
	      "%s, %zu MiB: %llu steps of work for %zu blocks", m->name, mib,
	      (unsigned long long)work, count);
	CHECK(hold <= HOLD_BOUND, "%s, %zu MiB: the pool held for %llu steps",
	      m->name, mib, (unsigned long long)hold);

	for (size_t i = 0, bad = 0; i < count && bad < 4; i++)
		if (all[i] != NULL && !holds(all[i], block, mark_of(i))) {
			CHECK(false, "%s: live block %zu changed", m->name, i);
			bad++;
		}
	size_t zero = 0;
	for (size_t k = 0; k < freed; k++) {
		unsigned char *p = pool_calloc(pool, 1, block);
		REQUIRE(p != NULL, "%s: pool_calloc %zu of %zu", m->name, k,
		        freed);
		zero += holds(p, block, 0);
	}
	CHECK(zero == freed, "%s: %zu of %zu blocks not zero", m->name,
	      freed - zero, freed);
	CHECK(pool_malloc(pool, block) == NULL, "%s: more blocks than made",
	      m->name);
	pool_destroy(pool);
	free(all);
}

/* ------------------------------------------------------------ between */

#define LIVE 64

/* What the hook works with: the pool's blocks it holds, each filled with
 * the byte of its slot. */
static struct {
	size_t block, count, calls;
	unsigned char **all; /* the test's live blocks (NULL: free) */
	unsigned char *live[LIVE];
	bool drained;
} hk;

/* Every free block of the pool, taken and given back; returns how many
 * there were, checking that the pool then has no more. */
static size_t drain(pool_t *pool)
{
	pool_stats_t st;
	REQUIRE(pool_stats(pool, &st) == 0, "pool_stats");
	size_t free_now = st.block_count - st.in_use, got = 0;
	unsigned char **taken = malloc(free_now * sizeof *taken);
	REQUIRE(taken != NULL, "malloc");
	while (got < free_now &&
	       (taken[got] = pool_malloc(pool, hk.block)) != NULL)
		got++;
	CHECK(got == free_now, "%zu of %zu free blocks served", got, free_now);
	CHECK(pool_malloc(pool, hk.block) == NULL,
	      "a block past every free one");
	for (size_t i = 0; i < got; i++)
		pool_free(pool, taken[i]);
	free(taken);
	return got;
}

/* A child forked while the trim lets the pool go: the trim is not the
 * child's, whose pool must be whole without it, and trim again. */
static void fork_in_trim(pool_t *pool)
{
	fflush(stdout);
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		shiftpool_test_trim_between = NULL;
		drain(pool);
		/* Everything free: a trim gives back nearly all. */
		for (size_t i = 0; i < hk.count; i++)
			if (hk.all[i] != NULL)
				pool_free(pool, hk.all[i]);
		for (size_t i = 0; i < LIVE; i++)
			if (hk.live[i] != NULL)
				pool_free(pool, hk.live[i]);
		size_t bytes = pool_trim(pool);
		CHECK(bytes + 2 * hk.block + 4096 >= hk.count * hk.block,
		      "a trim in the child gave back %zu of %zu bytes", bytes,
		      hk.count * hk.block);
		drain(pool);
		_exit(atomic_load(&safety_failures) ? 1 : 0);
	}
	int status;
	CHECK(safety_wait_bounded(pid, &status, 120) && WIFEXITED(status) &&
	          WEXITSTATUS(status) == 0,
	      "the child forked in a trim failed or hung");
}

static void hook(pool_t *pool)
{
	size_t slot = hk.calls++ % LIVE;
	if (hk.live[slot] != NULL) {
		CHECK(holds(hk.live[slot], hk.block, (unsigned char)slot + 1),
		      "a block the hook holds changed under the trim");
		pool_free(pool, hk.live[slot]);
	}
	hk.live[slot] = pool_calloc(pool, 1, hk.block);
	CHECK(hk.live[slot] != NULL && holds(hk.live[slot], hk.block, 0),
	      "pool_calloc() between a trim's holds: not zero, or none");
	if (hk.live[slot] != NULL)
		memset(hk.live[slot], (int)slot + 1, hk.block);
	if (hk.calls == 2)
		fork_in_trim(pool);
	if (hk.calls == 3 && !hk.drained) {
		/* Every free block, while the trim holds some aside. */
		hk.drained = true;
		drain(pool);
	}
}

/* The hook's churn through a trim of a fragmented pool. */
static void between(const struct safety_mode *m, size_t block, size_t count)
{
	pool_t *pool = pool_init(block, count, m->flag | POOL_NO_FALLBACK);
	unsigned char **all = malloc(count * sizeof *all);
	REQUIRE(pool != NULL && all != NULL, "%s: pool_init", m->name);
	memset(&hk, 0, sizeof hk);
	hk.block = block;
	hk.count = count;
	hk.all = all;

	for (size_t i = 0; i < count; i++) {
		all[i] = pool_malloc(pool, block);
		REQUIRE(all[i] != NULL, "%s: block %zu", m->name, i);
		memset(all[i], mark_of(i), block);
	}
	/* Free runs of 1 to 7 blocks between live ones: some pages whole,
	 * some not. */
	for (size_t i = 0; i < count; i++)
		if ((i * 2654435761u >> 7) % 8 != 0 || (i / 64) % 3 == 0) {
			pool_free(pool, all[i]);
			all[i] = NULL;
		}
	shiftpool_test_trim_between = hook;
	pool_trim(pool);
	shiftpool_test_trim_between = NULL;
	CHECK(hk.calls >= 3, "%s, %zu B: only %zu holds in the trim", m->name,
	      block, hk.calls);
	for (size_t i = 0; i < count; i++)
		if (all[i] != NULL) {
			CHECK(holds(all[i], block, mark_of(i)),
			      "%s, %zu B: live block %zu changed", m->name,
			      block, i);
			pool_free(pool, all[i]);
		}
	for (size_t s = 0; s < LIVE; s++)
		if (hk.live[s] != NULL)
			pool_free(pool, hk.live[s]);
	/* Whole: every block once, zero where given back or new. */
	size_t got = 0;
	while (got < count && (all[got] = pool_malloc(pool, block)) != NULL)
		got++;
	CHECK(got == count, "%s, %zu B: %zu of %zu blocks after the trim",
	      m->name, block, got, count);
	CHECK(pool_malloc(pool, block) == NULL, "%s: a block too many",
	      m->name);
	for (size_t i = 0; i < got; i++)
		pool_free(pool, all[i]);
	pool_stats_t st;
	REQUIRE(pool_stats(pool, &st) == 0, "pool_stats");
	CHECK(st.in_use == 0, "%s: %zu in use at the end", m->name, st.in_use);
	pool_destroy(pool);
	free(all);
}

int main(void)
{
	static const size_t sizes[] = {4, 16, 64};

	for (size_t m = 0; m < 2; m++) {
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
			fragmented(shared_modes[m], sizes[s]);
		between(shared_modes[m], 16, 65536);
		between(shared_modes[m], 256, 32768);
		between(shared_modes[m], 4096, 2048);
		between(shared_modes[m], 16384, 512);
	}
	return safety_result("trim-work");
}
