/*
 * --latency: the time of each allocation and free call, read with a cheap
 * timer around the call, kept in a histogram that the workers fill and
 * the driver merges over the runs of a row.
 *
 * The timer is the time-stamp counter on x86-64: rdtscp, which waits for
 * the instructions before it to finish, then lfence, which keeps the
 * instructions after it (the timed call) from starting early.  Elsewhere
 * it is CLOCK_MONOTONIC in nanoseconds.  The driver converts ticks to ns
 * at a rate it measures against CLOCK_MONOTONIC, and measures what an
 * empty timed region reads (the timer's own cost, which every reading
 * includes).
 *
 * The histogram is log-linear: below 2^LATENCY_SUB_BITS ticks every value
 * has its own bucket; above, each power of two is cut into
 * 2^LATENCY_SUB_BITS buckets, so a bucket is at most 1/64 (1.6%) as wide
 * as its values, and a percentile read from it is that close.  The
 * largest value is kept exactly.  Counts add, so histograms merge.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_LATENCY_H
#define BENCH_LATENCY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define LATENCY_TIMER "rdtscp + lfence"
#else
#define LATENCY_TIMER "clock_gettime(CLOCK_MONOTONIC)"
#endif

#define LATENCY_SUB_BITS 6
#define LATENCY_SUB      (1u << LATENCY_SUB_BITS)
/* Values from 2^LATENCY_MAX_BITS ticks on (a day at 3 GHz) share the
 * last bucket. */
#define LATENCY_MAX_BITS 48
#define LATENCY_BUCKETS                                                        \
	(LATENCY_SUB + (LATENCY_MAX_BITS - LATENCY_SUB_BITS) * LATENCY_SUB)

/* The sides of a timed operation. */
enum latency_side { LATENCY_ALLOC, LATENCY_FREE, LATENCY_SIDES };

/* The points every output reports, in order: p50, p99, p99.9, p99.99 and
 * the largest value. */
#define LATENCY_POINTS 5
extern const double latency_quantiles[LATENCY_POINTS];
extern const char *const latency_point_names[LATENCY_POINTS];
extern const char *const latency_side_names[LATENCY_SIDES];

/* Invariant: count is the sum of bucket[], and max the largest value
 * added (0 when count is 0). */
struct latency_histogram {
	uint64_t count;
	uint64_t max;
	uint64_t bucket[LATENCY_BUCKETS];
};

/* The timer, in ticks. */
static inline uint64_t latency_tick(void)
{
#if defined(__x86_64__)
	unsigned aux;
	uint64_t t = __rdtscp(&aux);
	_mm_lfence();
	return t;
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static inline unsigned latency_bucket(uint64_t ticks)
{
	unsigned top;

	if (ticks < LATENCY_SUB)
		return (unsigned)ticks;
	top = 63u - (unsigned)__builtin_clzll(ticks);
	if (top >= LATENCY_MAX_BITS)
		return LATENCY_BUCKETS - 1;
	return LATENCY_SUB + (top - LATENCY_SUB_BITS) * LATENCY_SUB +
	       (unsigned)((ticks >> (top - LATENCY_SUB_BITS)) &
	                  (LATENCY_SUB - 1));
}

static inline void latency_add(struct latency_histogram *h, uint64_t ticks)
{
	h->bucket[latency_bucket(ticks)]++;
	h->count++;
	if (ticks > h->max)
		h->max = ticks;
}

/* Adds every count of from to into. */
void latency_merge(struct latency_histogram *into,
                   const struct latency_histogram *from);

/* The value at quantile q (0 < q <= 1) in ticks: the middle of the bucket
 * that holds it, never above the largest value; q = 1 is the largest
 * value.  0 for an empty histogram. */
double latency_quantile(const struct latency_histogram *h, double q);

/* Writes the histogram as one line of text, "COUNT MAX INDEX:N,...",
 * nonzero buckets only; latency_parse() reads it back and adds it to h.
 * latency_parse() returns 0, or -1 for text it cannot read. */
void latency_write(FILE *out, const struct latency_histogram *h);
int latency_parse(const char *text, struct latency_histogram *h);

/* The driver's measurements of the timer.  Ticks per nanosecond against
 * CLOCK_MONOTONIC (the median of three 50 ms spans); what an empty timed
 * region reads, p50 and least of 100,000 (the cost every reading
 * includes); whether the counter runs at one rate in every CPU and power
 * state (x86-64: the constant_tsc and nonstop_tsc flags). */
double latency_ticks_per_ns(void);
void latency_empty_region(double *p50, double *min);
int latency_timer_steady(void);

#endif /* BENCH_LATENCY_H */
