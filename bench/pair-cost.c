/*
 * pair-cost MODE COUNT: COUNT pool_malloc() + pool_free() pairs of one
 * 64-byte block, for counting the instructions of one pair under
 * callgrind.  MODE is single, locked or per-thread (a pool of 1024 blocks
 * in that mode), or set-single, set-locked or set-per-thread
 * (pool_set_malloc() + pool_set_free() on a pool set of 16 B .. 4 KiB
 * classes in that mode).  Built twice: bench/pair-cost calls the library,
 * bench/pair-cost-inline takes the header's inline fast paths
 * (SHIFTPOOL_INLINE; the sets have none).  bench/targets.py runs it twice
 * with different counts and divides the difference, so set-up, warm-up
 * and exit cancel out and what remains is one pair, the loop included.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <shiftpool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The compiler may not drop the pair. */
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int flags;
		int set;
	} modes[] = {
	    {"single", POOL_SINGLE, 0},
	    {"locked", POOL_LOCKED, 0},
	    {"per-thread", POOL_PER_THREAD, 0},
	    {"set-single", POOL_SINGLE, 1},
	    {"set-locked", POOL_LOCKED, 1},
	    {"set-per-thread", POOL_PER_THREAD, 1},
	};
	char *end;
	int flags = -1, set = 0;

	if (argc != 3) {
		fprintf(stderr,
		        "usage: %s single|locked|per-thread|set-single|"
		        "set-locked|set-per-thread COUNT\n",
		        argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (strcmp(argv[1], modes[i].name) == 0) {
			flags = modes[i].flags;
			set = modes[i].set;
		}
	unsigned long long count = strtoull(argv[2], &end, 10);
	if (flags < 0 || *end != '\0' || end == argv[2]) {
		fprintf(stderr, "%s: bad mode or count\n", argv[0]);
		return 2;
	}

	pool_stats_t st;
	int failed;
	if (set) {
		pool_set_t *s = pool_set_init(16, 4096, 1 << 20, flags);
		if (s == NULL) {
			perror("pool_set_init");
			return 1;
		}
		void *held = pool_set_malloc(s, 64);
		for (unsigned long long i = 0; i < count; i++) {
			void *p = pool_set_malloc(s, 64);
			KEEP(p);
			pool_set_free(s, p);
		}
		failed = pool_set_stats(s, 64, &st) != 0;
		pool_set_free(s, held);
		pool_set_destroy(s);
	} else {
		pool_t *pool = pool_init(64, 1024, flags);
		if (pool == NULL) {
			perror("pool_init");
			return 1;
		}
		/* One block held throughout, so the pairs run on a list that
		 * is never empty, as in a program in its steady state. */
		void *held = pool_malloc(pool, 64);
		/* The whole loop is what is counted: the pair and nothing
		 * else. */
		for (unsigned long long i = 0; i < count; i++) {
			void *p = pool_malloc(pool, 64);
			KEEP(p);
			pool_free(pool, p);
		}
		failed = pool_stats(pool, &st) != 0;
		pool_free(pool, held);
		pool_destroy(pool);
	}
	/* Every pair was served by the pool, or the count means nothing. */
	if (failed || st.allocs != count + 1 || st.fallback_allocs != 0) {
		fprintf(stderr, "%s: not every pair was served by the pool\n",
		        argv[0]);
		return 1;
	}
	return 0;
}
