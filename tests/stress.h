/*
 * The parts of tests/stress, each in a file of its own, and what they
 * take from the command line.  tests/stress.c parses the options and runs
 * the parts that --only selects.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_STRESS_H
#define SHIFTPOOL_STRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_THREAD_COUNTS 16

/* The command line, defaults resolved: every count is set. */
struct stress_options {
	bool long_run;
	int modes[2]; /* POOL_LOCKED and/or POOL_PER_THREAD */
	int nmodes;
	const char *only; /* --only: parts to run, NULL for all */
	unsigned threads[MAX_THREAD_COUNTS]; /* thread counts of the sweep */
	int nthreads;
	size_t steps;       /* per thread per round; 0: total_steps spread */
	size_t total_steps; /* per configuration of the stress */
	unsigned rounds;
	unsigned cycles; /* threads made by the churn */
	unsigned destroy_reps;
	unsigned race_its, seq_its; /* misuse iterations */
	uint64_t seed;
};

/*
 * The parts, each in tests/stress-NAME.c (the stress part in
 * stress-crossing.c).  tests/stress.c runs stress, churn, misuse, trim,
 * set and bulk once per mode, then two-pools and destroy once (they ignore
 * mode).
 */
void part_stress(const struct stress_options *o, int mode);
void part_churn(const struct stress_options *o, int mode);
void part_misuse(const struct stress_options *o, int mode);
void part_trim(const struct stress_options *o, int mode);
void part_set(const struct stress_options *o, int mode);
void part_bulk(const struct stress_options *o, int mode);
void part_two_pools(const struct stress_options *o, int mode);
void part_destroy(const struct stress_options *o, int mode);

/*
 * One run of the objects crossing threads (stress-crossing.c): threads
 * workers over npools pools of modes flags[0..npools), for o's rounds,
 * steps and seed; name starts its line of output.
 */
void run_stress(const struct stress_options *o, const char *name,
                const int *flags, int npools, unsigned threads);

#endif
