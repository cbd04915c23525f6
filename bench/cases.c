/*
 * One case of ./bench: which allocators take part in a workload, the
 * points of each workload's sweep, and every parameter of one point
 * resolved from the options (the defaults are the figures of the
 * published measurements, see README.md), written out as the worker's
 * command line and labelled for the report.  The mt workloads' are in
 * cases-mt.c.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "bench.h"
#include "shiftpool.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ constants */

/* The departure order of the ten lighttpd clients of the original
 * measurement. */
static const size_t seed_order[] = {3, 0, 5, 1, 6, 2, 4, 9, 8, 7};
#define SEED_CLIENTS (sizeof(seed_order) / sizeof(seed_order[0]))

/* Fixed-work cases repeat their work until about this many allocations are
 * timed (at least MIN_REPEAT times); sort until about SORT_TARGET_ITEMS
 * items are sorted, at least SORT_MIN_OPS times.  --quick divides the
 * targets by QUICK_DIVISOR. */
#define TARGET_ALLOCS     ((size_t)1 << 17)
#define MIN_REPEAT        2
#define SORT_TARGET_ITEMS ((size_t)1 << 17)
#define SORT_MIN_OPS      256
#define QUICK_DIVISOR     64

/* pair's timed window when --duration is not given: its operations take
 * nanoseconds, so a shorter window than parallel's still counts millions
 * of them, and its 6 cases x 10 allocators stay cheap. */
#define PAIR_DURATION 0.05

/* Pools of the workloads whose original names no pool: big enough that no
 * request falls back (the fallback column shows it). */
#define DEFAULT_BLOCKS 1024

static size_t next_power_of_two(size_t value)
{
	size_t power = 16;

	while (power < value)
		power <<= 1;
	return power;
}

static size_t ceil_div(size_t a, size_t b)
{
	return (a + b - 1) / b;
}

static size_t max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}
/* ------------------------------------------------------------ cases */

/* footprint's sizes: --sizes when given, else 16, 64 and 4096 bytes, the
 * smallest block, a small object and a page. */
static const struct size_list *footprint_sizes(const struct options *o)
{
	static const struct size_list sizes = {3, {16, 64, 4096}};

	return o->sizes_given ? &o->sizes : &sizes;
}

size_t case_points(const struct options *o, enum workload workload)
{
	if (workload_is_mt(workload))
		return mt_case_points(o, workload);
	switch (workload) {
	case WORKLOAD_HELD:
	case WORKLOAD_OVERSIZE:
		return o->n.count;
	case WORKLOAD_PARALLEL:
	case WORKLOAD_XTHREAD:
	case WORKLOAD_MIXED:
		return o->threads.count;
	case WORKLOAD_SORT:
		return o->len.count;
	case WORKLOAD_PAIR:
	case WORKLOAD_BULK:
		return o->sizes.count * o->threads.count;
	case WORKLOAD_FOOTPRINT:
		return footprint_sizes(o)->count;
	default:
		return 1;
	}
}

size_t case_point_value(const struct options *o, enum workload workload,
                        size_t point)
{
	switch (workload) {
	case WORKLOAD_HELD:
	case WORKLOAD_OVERSIZE:
		return o->n.value[point];
	case WORKLOAD_PARALLEL:
	case WORKLOAD_XTHREAD:
	case WORKLOAD_MIXED:
		return o->threads.value[point];
	case WORKLOAD_SORT:
		return o->len.value[point];
	case WORKLOAD_PAIR: /* size by size, each for every thread count */
	case WORKLOAD_BULK:
		return o->threads.value[point % o->threads.count];
	case WORKLOAD_FOOTPRINT:
		return footprint_sizes(o)->value[point];
	default:
		return 0;
	}
}

/* Whether a case gives each thread a private pool: POOL_SINGLE and
 * boost::pool<> are for one thread at a time. */
int case_private_pools(const struct bench_case *c)
{
	enum allocator a = c->allocator;

	/* The mt workloads run POOL_SINGLE on one thread only. */
	if (workload_is_mt(c->workload))
		return 0;
	return (a == ALLOCATOR_BOOST ||
	        ((allocator_is_pool_mode(a) || allocator_is_pool_set(a)) &&
	         allocator_pool_flags(a) == POOL_SINGLE)) &&
	       c->threads > 1;
}

int case_has_bulk(const struct bench_case *c)
{
	return allocator_is_pool_mode(c->allocator) ||
	       c->allocator == ALLOCATOR_DPDK;
}

size_t case_dpdk_cache(const struct bench_case *c)
{
	/* xthread's producers and consumers, the other workloads' threads,
	 * and the main thread. */
	size_t threads =
	    (c->workload == WORKLOAD_XTHREAD ? 2 * c->threads : c->threads) + 1;
	size_t cache = c->blocks / (4 * threads);

	/* DPDK's cache lets its length reach 1.5 x the size before it
	 * flushes, hence the quarter above; 256 is below its maximum
	 * (RTE_MEMPOOL_CACHE_MAX_SIZE, 512) and is DPDK's own examples'. */
	return cache < 256 ? cache : 256;
}

const char *case_not_applicable(const struct bench_case *c)
{
	if (workload_is_mt(c->workload) && mt_case_not_applicable(c) != NULL)
		return mt_case_not_applicable(c);
	if (c->workload == WORKLOAD_XTHREAD &&
	    allocator_is_pool_mode(c->allocator) &&
	    allocator_pool_flags(c->allocator) == POOL_SINGLE)
		return "n/a: a POOL_SINGLE pool takes no frees from other "
		       "threads";
	if (c->workload == WORKLOAD_XTHREAD && c->allocator == ALLOCATOR_BOOST)
		return "n/a: boost::pool<> takes no frees from other threads";
	if (c->workload == WORKLOAD_OVERSIZE &&
	    allocator_is_fixed_size(c->allocator))
		return "n/a: a fixed-size pool has one block size";
	if (c->allocator == ALLOCATOR_DPDK && c->workload == WORKLOAD_HELD &&
	    c->n > c->blocks)
		return "n/a: rte_mempool has no fallback, and N exceeds its "
		       "blocks";
	if (!allocator_applies(c->allocator, c->workload))
		return c->allocator == ALLOCATOR_STACK
		           ? "n/a: the stack buffer is a control of sort only"
		           : "n/a: the pool sets run mixed; pools of one size "
		             "do not";
	return NULL;
}

const char *case_note(const struct bench_case *c)
{
	if (workload_is_mt(c->workload) && mt_case_note(c) != NULL)
		return mt_case_note(c);
	if (case_private_pools(c) && c->workload != WORKLOAD_XTHREAD)
		return c->allocator == ALLOCATOR_BOOST
		           ? "one boost::pool<> per thread"
		       : c->allocator == ALLOCATOR_POOL_SET_SINGLE
		           ? "one POOL_SINGLE set per thread"
		           : "one POOL_SINGLE pool per thread";
	if (c->workload == WORKLOAD_BULK && c->allocator != ALLOCATOR_FLOOR &&
	    !case_has_bulk(c))
		return "single calls: no bulk call";
	if (c->allocator == ALLOCATOR_GSLICE && c->block_size > GSLICE_SLAB_MAX)
		return "above GSlice's slabs: g_slice_alloc calls malloc";
	if (c->allocator == ALLOCATOR_DPDK)
		return c->threads > 0 ? "lcore caches; threads registered "
		                        "with rte_thread_register()"
		                      : "the main lcore's cache";
	if (c->allocator == ALLOCATOR_GLIBC_NOTRIM)
		return "GLIBC_TUNABLES=" GLIBC_NOTRIM_TUNABLES;
	if (c->allocator == ALLOCATOR_FLOOR && c->workload == WORKLOAD_SORT)
		return "caller-provided buffer";
	if (c->allocator == ALLOCATOR_STACK)
		return "alloca";
	return NULL;
}

int case_is_timed(const struct bench_case *c)
{
	return c->workload == WORKLOAD_PARALLEL ||
	       c->workload == WORKLOAD_XTHREAD ||
	       c->workload == WORKLOAD_PAIR || c->workload == WORKLOAD_BULK ||
	       workload_is_external(c->workload);
}

void case_resolve(const struct options *o, enum workload workload,
                  enum allocator allocator, size_t point, struct bench_case *c)
{
	size_t divisor = o->quick ? QUICK_DIVISOR : 1;
	/* --cold: one timed pass, as the seed timed its first. */
	int one_pass = o->cold && o->repeat == 0;
	size_t value =
	    workload_is_mt(workload) ? 0 : case_point_value(o, workload, point);
	size_t i;

	memset(c, 0, sizeof(*c));
	c->workload = workload;
	c->allocator = allocator;
	c->seed = o->seed;
	c->blocks = o->blocks ? o->blocks : DEFAULT_BLOCKS;
	c->cold = o->cold;
	c->prefault = o->prefault && (allocator_is_pool_mode(allocator) ||
	                              allocator_is_pool_set(allocator));
	c->latency = o->latency && (workload == WORKLOAD_HELD ||
	                            workload == WORKLOAD_LIGHTTPD ||
	                            workload == WORKLOAD_XTHREAD);

	if (workload_is_mt(workload)) {
		mt_case_resolve(o, workload, point, c);
		return;
	}
	switch (workload) {
	case WORKLOAD_HELD:
	case WORKLOAD_OVERSIZE:
		c->n = value;
		c->size = o->block_size ? o->block_size : 1024;
		c->block_size = c->size;
		c->repeat = o->repeat;
		if (one_pass) {
			c->repeat = 1;
		} else if (c->repeat == 0) {
			size_t allocs =
			    workload == WORKLOAD_HELD ? c->n : 4 * c->n;
			c->repeat =
			    max_size(MIN_REPEAT,
			             ceil_div(TARGET_ALLOCS / divisor, allocs));
		}
		break;
	case WORKLOAD_LIGHTTPD:
		c->size = o->block_size ? o->block_size : 4096;
		c->block_size = c->size;
		c->clients = o->clients;
		c->buffers = o->buffers;
		c->rounds = o->rounds;
		c->rolling = o->rolling;
		c->blocks = o->blocks ? o->blocks : c->clients * c->buffers;
		c->order_kind = o->order_kind;
		c->repeat = 1;
		if (o->order_kind == ORDER_LIST) {
			c->order = o->order;
			if (c->order.count == 0) {
				c->order.count = c->clients;
				for (i = 0; i < c->clients; i++)
					c->order.value[i] = i;
				if (c->clients == SEED_CLIENTS)
					list_set(&c->order, seed_order,
					         SEED_CLIENTS);
			}
		}
		break;
	case WORKLOAD_PARALLEL:
		c->threads = value;
		c->lens = o->len;
		c->size = 8 * list_max(&o->len);
		c->block_size =
		    o->block_size ? o->block_size : next_power_of_two(c->size);
		c->duration = o->duration;
		break;
	case WORKLOAD_SORT:
		c->len = value;
		c->size = 8 * value;
		c->block_size = o->block_size
		                    ? o->block_size
		                    : next_power_of_two(8 * list_max(&o->len));
		c->repeat = o->repeat;
		if (one_pass)
			c->repeat = 1;
		else if (c->repeat == 0)
			c->repeat = max_size(
			    SORT_MIN_OPS / divisor,
			    ceil_div(SORT_TARGET_ITEMS / divisor, c->len));
		break;
	case WORKLOAD_XTHREAD:
		c->threads = value;
		c->size = o->block_size ? o->block_size : 4096;
		c->block_size = c->size;
		c->queue_depth = o->queue_depth;
		c->duration = o->duration;
		break;
	case WORKLOAD_PAIR:
	case WORKLOAD_BULK:
		c->threads = value;
		c->size = o->sizes.value[point / o->threads.count];
		c->block_size =
		    o->block_size ? o->block_size : next_power_of_two(c->size);
		c->duration =
		    o->duration_given || o->quick ? o->duration : PAIR_DURATION;
		break;
	case WORKLOAD_MIXED:
		c->threads = value;
		c->n = MIXED_WINDOW;
		c->size = MIXED_MAX_SIZE;
		c->block_size = o->block_size ? o->block_size : MIXED_MAX_BLOCK;
		/* Room in every class for all the live objects of every
		 * thread: reserved address space, not memory. */
		c->blocks = o->blocks ? o->blocks : 2 * MIXED_WINDOW;
		c->repeat = o->repeat;
		if (one_pass)
			c->repeat = MIXED_WINDOW;
		else if (c->repeat == 0)
			c->repeat = MIXED_OPS / divisor;
		break;
	case WORKLOAD_FOOTPRINT:
		/* The pool holds exactly the blocks allocated, so that what
		 * RSS grows by beyond them is the pool's own bookkeeping. */
		c->size = value;
		c->block_size =
		    o->block_size ? o->block_size : next_power_of_two(c->size);
		c->blocks =
		    o->blocks
		        ? o->blocks
		        : max_size(FOOTPRINT_MIN_BLOCKS / divisor,
		                   FOOTPRINT_MIN_BYTES / divisor / c->size);
		c->repeat = 1;
		break;
	case WORKLOAD_HTTP:
		/* The server's own pool sizes; wrk's whole seconds. */
		c->threads = HTTP_SERVER_THREADS;
		c->clients = HTTP_CONNECTIONS;
		c->size = HTTP_BODY_BYTES;
		c->blocks = 0;
		c->duration = o->duration_given
		                  ? (o->duration < 1.5
		                         ? 1
		                         : (double)(size_t)(o->duration + 0.5))
		                  : (o->quick ? 1 : 2);
		break;
	case WORKLOAD_CURL:
		c->size = CURL_FILE_BYTES;
		c->blocks = 0;
		c->repeat = 1;
		break;
	default:
		break;
	}
}

static int format_list(const struct size_list *list, char *buf, size_t size)
{
	size_t i;
	int used = 0, n;

	if (size > 0)
		buf[0] = '\0';
	for (i = 0; i < list->count; i++) {
		n = snprintf(buf + used, (size_t)used < size ? size - used : 0,
		             "%s%zu", i ? "," : "", list->value[i]);
		if (n < 0)
			return n;
		used += n;
	}
	return used;
}

int case_format_args(const struct bench_case *c, char *buf, size_t size)
{
	char list[LIST_MAX * 24];
	int n;

	n = snprintf(
	    buf, size,
	    "--workload=%s --allocator=%s --seed=%llu --block-size=%zu "
	    "--blocks=%zu",
	    workload_names[c->workload], allocator_names[c->allocator],
	    (unsigned long long)c->seed, c->block_size, c->blocks);
	if (n < 0 || (size_t)n >= size)
		return n;

#define APPEND(...)                                                            \
	do {                                                                   \
		int more = snprintf(buf + n, size - (size_t)n, __VA_ARGS__);   \
		if (more < 0 || (size_t)(n + more) >= size)                    \
			return more < 0 ? more : n + more;                     \
		n += more;                                                     \
	} while (0)

	if (workload_is_mt(c->workload)) {
		int more = mt_case_format_args(c, buf + n, size - (size_t)n);
		if (more < 0 || (size_t)(n + more) >= size)
			return more < 0 ? more : n + more;
		n += more;
	}
	switch (c->workload) {
	case WORKLOAD_HELD:
	case WORKLOAD_OVERSIZE:
		APPEND(" --n=%zu --repeat=%zu", c->n, c->repeat);
		break;
	case WORKLOAD_LIGHTTPD:
		if (c->order_kind == ORDER_RANDOM)
			strcpy(list, "random");
		else
			format_list(&c->order, list, sizeof(list));
		APPEND(" --clients=%zu --buffers=%zu --rounds=%zu --order=%s%s",
		       c->clients, c->buffers, c->rounds, list,
		       c->rolling ? " --rolling" : "");
		break;
	case WORKLOAD_PARALLEL:
		format_list(&c->lens, list, sizeof(list));
		APPEND(" --threads=%zu --len=%s --duration=%g", c->threads,
		       list, c->duration);
		break;
	case WORKLOAD_SORT:
		APPEND(" --len=%zu --repeat=%zu", c->len, c->repeat);
		break;
	case WORKLOAD_XTHREAD:
		APPEND(" --threads=%zu --queue-depth=%zu --duration=%g",
		       c->threads, c->queue_depth, c->duration);
		break;
	case WORKLOAD_PAIR:
	case WORKLOAD_BULK:
		APPEND(" --sizes=%zu --threads=%zu --duration=%g", c->size,
		       c->threads, c->duration);
		break;
	case WORKLOAD_FOOTPRINT:
		APPEND(" --sizes=%zu", c->size);
		break;
	case WORKLOAD_MIXED:
		APPEND(" --threads=%zu --repeat=%zu", c->threads, c->repeat);
		break;
	case WORKLOAD_HTTP:
	case WORKLOAD_CURL:
		/* Not a worker's: the driver writes these rows' commands. */
		break;
	default:
		break;
	}
	if (c->cold)
		APPEND(" --cold");
	if (c->latency)
		APPEND(" --latency");
	if (c->prefault)
		APPEND(" --prefault");
#undef APPEND
	return n;
}

void case_label(const struct bench_case *c, char *buf, size_t size)
{
	if (workload_is_mt(c->workload)) {
		mt_case_label(c, buf, size);
		return;
	}
	switch (c->workload) {
	case WORKLOAD_HELD:
	case WORKLOAD_OVERSIZE:
		snprintf(buf, size, "N=%zu", c->n);
		break;
	case WORKLOAD_LIGHTTPD:
		if (c->rolling)
			snprintf(buf, size, "rolling%s",
			         c->order_kind == ORDER_RANDOM ? " random"
			                                       : "");
		else
			snprintf(buf, size, "%s order",
			         c->order_kind == ORDER_RANDOM ? "random"
			                                       : "fixed");
		break;
	case WORKLOAD_PARALLEL:
	case WORKLOAD_MIXED:
		snprintf(buf, size, "T=%zu", c->threads);
		break;
	case WORKLOAD_SORT:
		snprintf(buf, size, "len=%zu", c->len);
		break;
	case WORKLOAD_XTHREAD:
		snprintf(buf, size, "%zu+%zu", c->threads, c->threads);
		break;
	case WORKLOAD_PAIR:
	case WORKLOAD_BULK:
		if (c->size % 1024 == 0)
			snprintf(buf, size, "%zu KiB T=%zu", c->size / 1024,
			         c->threads);
		else
			snprintf(buf, size, "%zu B T=%zu", c->size, c->threads);
		break;
	case WORKLOAD_FOOTPRINT:
		if (c->blocks % 1024 == 0)
			snprintf(buf, size, "%zuKi x %zu B", c->blocks / 1024,
			         c->size);
		else
			snprintf(buf, size, "%zu x %zu B", c->blocks, c->size);
		break;
	case WORKLOAD_HTTP:
		snprintf(buf, size, "c=%zu %gs", c->clients, c->duration);
		break;
	case WORKLOAD_CURL:
		snprintf(buf, size, "%zu MiB", c->size >> 20);
		break;
	default:
		snprintf(buf, size, "-");
		break;
	}
}
