/*
 * The two-pools part: the stress of stress-crossing.c with every thread
 * using two pools at once (per-thread + per-thread, locked +
 * per-thread), at the largest thread count of the sweep.  Objects must
 * go back to the pool that made them, and no pool may hand out a block
 * of the other.
 *
 * SPDX-License-Identifier: MIT
 */
#include "shiftpool.h"
#include "stress.h"

void part_two_pools(const struct stress_options *o, int mode)
{
	static const int pairs[2][2] = {{POOL_PER_THREAD, POOL_PER_THREAD},
	                                {POOL_LOCKED, POOL_PER_THREAD}};
	(void)mode;
	for (int pr = 0; pr < 2; pr++)
		run_stress(o, "two-pools", pairs[pr], 2,
		           o->threads[o->nthreads - 1]);
}
