/*
 * The workloads, compiled into every worker program against that worker's
 * peer (peer.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_WORKLOAD_H
#define BENCH_WORKLOAD_H

#include <stdint.h>

#include "bench.h"
#include "latency.h"

/* What one timed run of a case measured. */
struct workload_result {
	uint64_t ops;      /* allocations (each with its free) timed */
	uint64_t ns;       /* monotonic nanoseconds of the timed region;
	                      pair: times its threads (thread time) */
	uint64_t checksum; /* consumes the work; fixed-work cases give the
	                      same value for every allocator */
	uint64_t pool_allocs, fallback_allocs; /* pool peers, whole process */
	uint64_t minor_faults; /* the process's, over the timed region */
	/* footprint: resident bytes before the allocator's set-up, after it,
	 * and with every block allocated and written; the blocks' bytes. */
	uint64_t footprint_before, footprint_open, footprint_after;
	uint64_t footprint_bytes;
	/* mixed: the bytes the live objects asked for at the end, and what
	 * a pool set's classes round them up to (summed over threads). */
	uint64_t mixed_live_bytes, mixed_rounded_bytes;
	/* --latency: each timed call's ticks, by side; NULL when off. */
	struct latency_histogram *latency[LATENCY_SIDES];
};

/*
 * Runs a case: set-up (pool_init, inputs, pointer arrays) untimed, one
 * untimed warm-up pass, then the timed region.  Checks what it gets
 * (calloc'ed memory is zero, nothing handed out twice is overwritten, the
 * sort sorts) and ends the process with a message on any failure.
 */
void workload_run(const struct bench_case *c, struct workload_result *out);

#endif /* BENCH_WORKLOAD_H */
