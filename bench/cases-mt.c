/*
 * The cases of the workloads modelled on the published allocator
 * benchmarks (larson, xmalloc, glibc-thread, alloc-test) and of replace,
 * the many-threads case: their sweeps, defaults, worker command lines,
 * labels and notes.  cases.c calls these for them; the workloads
 * themselves are in workloads-mt.c.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "bench.h"
#include "shiftpool.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Operations per thread when --repeat is not given; replace divides its
 * total among its threads.  --quick divides both by MT_QUICK_DIVISOR. */
#define MT_OPS           ((size_t)1 << 18)
#define REPLACE_OPS      ((size_t)1 << 20)
#define MT_QUICK_DIVISOR 64

/* larson: thread generations per run (each thread hands its slots to a
 * successor this many times). */
#define LARSON_ROUNDS 16

/* replace: the size of every request. */
#define REPLACE_SIZE 64

/* The thread counts: --threads when given, else 1 and 2 (replace: and
 * 256, more threads than any machine here has CPUs). */
static struct size_list mt_threads(const struct options *o, enum workload w)
{
	struct size_list list = {2, {1, 2}};

	if (o->threads_given)
		return o->threads;
	if (w == WORKLOAD_REPLACE) {
		list.count = 3;
		list.value[2] = 256;
	}
	return list;
}

/* replace's live blocks per thread: --live, else 16, 100 and 1000 (16
 * alone with --quick). */
static struct size_list replace_live(const struct options *o)
{
	struct size_list list = {3, {16, 100, 1000}};

	if (o->live_given)
		return o->live;
	if (o->quick)
		list.count = 1;
	return list;
}

size_t mt_case_points(const struct options *o, enum workload w)
{
	size_t threads = mt_threads(o, w).count;

	return w == WORKLOAD_REPLACE ? threads * replace_live(o).count
	                             : threads;
}

static size_t next_power(size_t value)
{
	size_t power = MT_MIN_BLOCK;

	while (power < value)
		power <<= 1;
	return power;
}

void mt_case_resolve(const struct options *o, enum workload w, size_t point,
                     struct bench_case *c)
{
	struct size_list threads = mt_threads(o, w);
	size_t divisor = o->quick ? MT_QUICK_DIVISOR : 1;
	size_t live_objects; /* at most, over all threads */

	if (w == WORKLOAD_REPLACE) {
		struct size_list live = replace_live(o);
		c->threads = threads.value[point / live.count];
		c->live = live.value[point % live.count];
	} else {
		c->threads = threads.value[point];
	}
	switch (w) {
	case WORKLOAD_LARSON:
		c->live = o->live_given ? o->live.value[0] : 1000;
		c->min_size = 16;
		c->max_size = 1024;
		c->rounds = o->rounds_given ? o->rounds
		                            : (o->quick ? 2 : LARSON_ROUNDS);
		break;
	case WORKLOAD_XMALLOC:
		c->live = XMALLOC_BATCH;
		c->min_size = 16;
		c->max_size = 256;
		c->queue_depth = o->queue_depth;
		break;
	case WORKLOAD_GLIBC_THREAD:
		c->live = o->live_given ? o->live.value[0] : 1024;
		c->min_size = 16;
		c->max_size = 4096;
		break;
	case WORKLOAD_ALLOC_TEST:
		c->live = o->live_given ? o->live.value[0] : 4096;
		c->min_size = 16;
		c->max_size = 1024;
		break;
	default: /* replace */
		c->min_size = c->max_size =
		    o->sizes_given ? o->sizes.value[0] : REPLACE_SIZE;
		break;
	}
	if (w != WORKLOAD_REPLACE) {
		if (o->min_size)
			c->min_size = o->min_size;
		if (o->max_size)
			c->max_size = o->max_size;
		if (c->min_size > c->max_size)
			c->max_size = c->min_size;
	}
	c->size = c->max_size;

	c->repeat = o->repeat;
	if (c->repeat == 0) {
		c->repeat = (w == WORKLOAD_REPLACE ? REPLACE_OPS / c->threads
		                                   : MT_OPS) /
		            divisor;
		if (c->repeat < 64)
			c->repeat = 64;
	}
	if (w == WORKLOAD_XMALLOC && c->repeat < XMALLOC_BATCH)
		c->repeat = XMALLOC_BATCH;
	if (w == WORKLOAD_LARSON && c->rounds > c->repeat)
		c->rounds = c->repeat;

	if (w == WORKLOAD_REPLACE) {
		/* A pool with room for every thread's blocks, and no more. */
		c->block_size =
		    o->block_size ? o->block_size : next_power(c->size);
		c->blocks = o->blocks ? o->blocks : c->threads * c->live;
		return;
	}
	/* The sets: classes 16 B .. 32 KiB, each with room for every live
	 * object of every thread four times over in the class of the
	 * largest request (reserved address space, not memory). */
	c->block_size = o->block_size ? o->block_size : MT_MAX_BLOCK;
	live_objects =
	    w == WORKLOAD_XMALLOC
	        ? (c->queue_depth + 2 * c->threads + 1) * XMALLOC_BATCH
	        : c->threads * c->live;
	c->blocks = o->blocks ? o->blocks
	                      : 4 * live_objects * next_power(c->max_size) /
	                                c->block_size +
	                            8;
}

int mt_case_format_args(const struct bench_case *c, char *buf, size_t size)
{
	int n =
	    snprintf(buf, size,
	             " --threads=%zu --live=%zu --min-size=%zu "
	             "--max-size=%zu --repeat=%zu",
	             c->threads, c->live, c->min_size, c->max_size, c->repeat);
	int more = 0;

	if (n < 0 || (size_t)n >= size)
		return n;
	if (c->workload == WORKLOAD_LARSON)
		more = snprintf(buf + n, size - (size_t)n, " --rounds=%zu",
		                c->rounds);
	else if (c->workload == WORKLOAD_XMALLOC)
		more = snprintf(buf + n, size - (size_t)n, " --queue-depth=%zu",
		                c->queue_depth);
	else if (c->workload == WORKLOAD_REPLACE)
		more = snprintf(buf + n, size - (size_t)n, " --sizes=%zu",
		                c->size);
	return more < 0 ? more : n + more;
}

/* Whether the case runs more threads than the machine has CPUs. */
static int oversubscribed(const struct bench_case *c)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t threads =
	    c->workload == WORKLOAD_XMALLOC ? 2 * c->threads : c->threads;

	return cpus > 0 && threads > (size_t)cpus;
}

/* An oversubscribed case's label carries a star, in tables and charts
 * alike; its rows' note says what it means. */
void mt_case_label(const struct bench_case *c, char *buf, size_t size)
{
	const char *star = oversubscribed(c) ? "*" : "";

	if (c->workload == WORKLOAD_XMALLOC)
		snprintf(buf, size, "%zu+%zu%s", c->threads, c->threads, star);
	else if (c->workload == WORKLOAD_REPLACE)
		snprintf(buf, size, "T=%zu%s H=%zu", c->threads, star, c->live);
	else
		snprintf(buf, size, "T=%zu%s", c->threads, star);
}

const char *mt_case_not_applicable(const struct bench_case *c)
{
	int single = (allocator_is_pool_mode(c->allocator) ||
	              allocator_is_pool_set(c->allocator)) &&
	             allocator_pool_flags(c->allocator) == POOL_SINGLE;

	if (single && c->workload == WORKLOAD_XMALLOC)
		return "n/a: a POOL_SINGLE set takes no frees from other "
		       "threads";
	if (single && c->threads > 1)
		return "n/a: one POOL_SINGLE pool serves one thread at a "
		       "time";
	return NULL;
}

const char *mt_case_note(const struct bench_case *c)
{
	/* The machine's CPU count is in the report's header. */
	if (oversubscribed(c))
		return "*: oversubscribed (more threads than CPUs)";
	if (c->workload == WORKLOAD_LARSON && c->threads == 1 &&
	    allocator_is_pool_set(c->allocator) &&
	    allocator_pool_flags(c->allocator) == POOL_SINGLE)
		return "POOL_SINGLE: the generations run one at a time";
	return NULL;
}

void mt_case_describe(const struct bench_case *c, char *buf, size_t size)
{
	switch (c->workload) {
	case WORKLOAD_LARSON:
		snprintf(buf, size,
		         "T threads each hold %zu slots of malloc(%zu..%zu) "
		         "(uniform, seeded) and replace a random slot per op, "
		         "%zu ops in %zu rounds; at each round's end the "
		         "thread starts a successor that takes over its slots "
		         "(frees what another thread allocated) and ends; op "
		         "= one free and one malloc",
		         c->live, c->min_size, c->max_size, c->repeat,
		         c->rounds);
		break;
	case WORKLOAD_XMALLOC:
		snprintf(buf, size,
		         "T producers each malloc %zu objects of %zu..%zu B "
		         "(uniform, seeded) in batches of %d, write them and "
		         "push each batch on one mutex-guarded stack (at most "
		         "%zu batches); T consumers pop batches and free "
		         "them; op = one object made and freed",
		         c->repeat, c->min_size, c->max_size, XMALLOC_BATCH,
		         c->queue_depth);
		break;
	case WORKLOAD_GLIBC_THREAD:
		snprintf(buf, size,
		         "T threads each keep %zu objects live and %zu times "
		         "free a random one and malloc a size drawn from "
		         "%zu..%zu B (seeded; each power of two alike, near "
		         "glibc's 1/size^0.95) in its place; op = one free "
		         "and one malloc",
		         c->live, c->repeat, c->min_size, c->max_size);
		break;
	case WORKLOAD_ALLOC_TEST:
		snprintf(buf, size,
		         "T threads each %zu times either malloc (%zu..%zu B, "
		         "as glibc-thread) or free a random live object, "
		         "the live set growing (6 in 10 malloc) to %zu and "
		         "shrinking (4 in 10) to %zu in turn; op = one call",
		         c->repeat, c->min_size, c->max_size, c->live,
		         c->live / 8);
		break;
	case WORKLOAD_REPLACE:
		snprintf(buf, size,
		         "T threads each hold H blocks of malloc(%zu) and %zu "
		         "times free a random one and malloc another in its "
		         "place; the pools: one pool of exactly T x H blocks "
		         "(--blocks); op = one free and one malloc",
		         c->size, c->repeat);
		break;
	default:
		snprintf(buf, size, "-");
		break;
	}
}
