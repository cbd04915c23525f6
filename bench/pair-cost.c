/*
 * pair-cost MODE COUNT: COUNT pool_malloc() + pool_free() pairs of one
 * 64-byte block from a pool of 1024 blocks in MODE (single, locked or
 * per-thread), for counting the instructions of one pair under callgrind.
 * bench/targets.py runs it twice with different counts and divides the
 * difference, so set-up, warm-up and exit cancel out.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <shiftpool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int flags;
	} modes[] = {
	    {"single", POOL_SINGLE},
	    {"locked", POOL_LOCKED},
	    {"per-thread", POOL_PER_THREAD},
	};
	char *end;
	int flags = -1;

	if (argc != 3) {
		fprintf(stderr, "usage: %s single|locked|per-thread COUNT\n",
		        argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (strcmp(argv[1], modes[i].name) == 0)
			flags = modes[i].flags;
	unsigned long long count = strtoull(argv[2], &end, 10);
	if (flags < 0 || *end != '\0' || end == argv[2]) {
		fprintf(stderr, "%s: bad mode or count\n", argv[0]);
		return 2;
	}

	pool_t *pool = pool_init(64, 1024, flags);
	if (pool == NULL) {
		perror("pool_init");
		return 1;
	}
	/* One block held throughout, so the pairs run on a list that is
	 * never empty, as in a program in its steady state. */
	void *held = pool_malloc(pool, 64);
	/* The whole loop is what is counted: the pair and nothing else. */
	for (unsigned long long i = 0; i < count; i++) {
		void *p = pool_malloc(pool, 64);
		/* The compiler cannot drop the pair. */
		__asm__ volatile("" : : "r"(p) : "memory");
		pool_free(pool, p);
	}
	/* Every pair was served by the pool, or the count means nothing. */
	pool_stats_t st;
	if (pool_stats(pool, &st) != 0 || st.allocs != count + 1 ||
	    st.fallback_allocs != 0) {
		fprintf(stderr, "%s: not every pair was served by the pool\n",
		        argv[0]);
		return 1;
	}
	pool_free(pool, held);
	pool_destroy(pool);
	return 0;
}
