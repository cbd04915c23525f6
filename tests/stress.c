/*
 * Concurrency stress test (reliability goal 3), after the shape of
 * mimalloc's test/test-stress.c: many threads, objects crossing threads
 * through a shared array, thread churn, patterns checked at every free.
 *
 *	tests/stress [--long] [--mode=locked|per-thread] [--threads=1,2,4]
 *	             [--only=stress,churn,misuse,trim,set,bulk,two-pools,destroy]
 *	             [--steps=N] [--rounds=N] [--cycles=N] [--preempt-us=N]
 *	             [--seed=N]
 *
 * Without arguments it is the short run of `make check` (a few seconds);
 * --long, or STRESS_LONG=1 in the environment, is the long sweep.  Every
 * check that fails prints what broke and aborts: no timing is asserted.
 *
 * Parts, each described in the file the table below names:
 *  stress     objects of random sizes crossing threads through a shared
 *	       array, in rounds of threads, with a table of who holds each
 *	       block (the objects themselves are stress-objects.c);
 *  churn      thousands of threads created and joined: thread exit never
 *	       strands capacity;
 *  two-pools  the stress with every thread using two pools at once;
 *  destroy    pool_destroy() while threads that used the POOL_PER_THREAD
 *	       pool are alive;
 *  misuse     cross-thread double frees, racing and sequential: each one
 *	       reported;
 *  trim       pool_trim() racing with threads that allocate and free: no
 *	       live block's page is given back;
 *  set        a pool set of several classes under threads, objects of
 *	       every class crossing threads, classes running out;
 *  bulk       threads that hold no span free with pool_free_bulk(): no
 *	       shared write (a race in the ThreadSanitizer build).
 * What the parts share (tracked pools, threads, failure reports, the
 * preemption timer) is concurrency.c, which tests/aba uses too.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shiftpool.h"
#include "concurrency.h"
#include "stress.h"

/* The parts in the order they run: those per mode once for each mode,
 * then the others once. */
static const struct part {
	const char *name;
	bool per_mode;
	void (*run)(const struct stress_options *o, int mode);
} parts[] = {
    {"stress", true, part_stress},        /* stress-crossing.c */
    {"churn", true, part_churn},          /* stress-churn.c */
    {"misuse", true, part_misuse},        /* stress-misuse.c */
    {"trim", true, part_trim},            /* stress-trim.c */
    {"set", true, part_set},              /* stress-set.c */
    {"bulk", true, part_bulk},            /* stress-bulk.c */
    {"two-pools", false, part_two_pools}, /* stress-two-pools.c */
    {"destroy", false, part_destroy},     /* stress-destroy.c */
};

#define NPARTS (sizeof parts / sizeof parts[0])

/* --only lists every part of the table, so a new part shows here. */
static void usage(const char *argv0)
{
	fprintf(stderr,
	        "usage: %s [--long] [--mode=locked|per-thread] "
	        "[--threads=N[,N...]]\n"
	        "       [--only=",
	        argv0);
	for (size_t i = 0; i < NPARTS; i++)
		fprintf(stderr, "%s%s", i ? "," : "", parts[i].name);
	fprintf(stderr, "] [--steps=N] [--rounds=N]\n"
	                "       [--cycles=N] [--preempt-us=N (0: off)] "
	                "[--seed=N]\n");
	exit(2);
}

/* --threads=N[,N...]: false if a count is not 1 to 1024. */
static bool parse_threads(const char *list, struct stress_options *o)
{
	const char *p = list;
	while (*p && o->nthreads < MAX_THREAD_COUNTS) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || v == 0 || v > 1024)
			return false;
		o->threads[o->nthreads++] = (unsigned)v;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return false;
	}
	return true;
}

/* --only=LIST: false unless every name of LIST is a part (a misspelt
 * part would run nothing and pass). */
static bool parts_known(const char *list)
{
	for (const char *p = list;; p++) {
		size_t n = strcspn(p, ",");
		bool known = false;
		for (size_t i = 0; i < NPARTS; i++)
			known |= strlen(parts[i].name) == n &&
			         strncmp(parts[i].name, p, n) == 0;
		if (!known)
			return false;
		p += n;
		if (*p == 0)
			return true;
	}
}

/* The options only tests/stress takes; false for any other. */
static bool stress_option(const char *a, struct stress_options *o)
{
	if (strncmp(a, "--threads=", 10) == 0)
		return parse_threads(a + 10, o);
	if (strncmp(a, "--only=", 7) == 0) {
		o->only = a + 7;
		return parts_known(o->only);
	} else if (strncmp(a, "--steps=", 8) == 0)
		o->steps = strtoul(a + 8, NULL, 10);
	else if (strncmp(a, "--rounds=", 9) == 0)
		o->rounds = (unsigned)strtoul(a + 9, NULL, 10);
	else if (strncmp(a, "--cycles=", 9) == 0)
		o->cycles = (unsigned)strtoul(a + 9, NULL, 10);
	else if (strncmp(a, "--seed=", 7) == 0)
		o->seed = strtoull(a + 7, NULL, 0);
	else
		return false;
	return true;
}

static void parse_options(int argc, char **argv, struct stress_options *o)
{
	for (int i = 1; i < argc; i++)
		if (!common_option(argv[i], &o->long_run, o->modes,
		                   &o->nmodes) &&
		    !stress_option(argv[i], o))
			usage(argv[0]);
}

/*
 * Work per configuration, spread over its threads and rounds.  Short: a
 * few seconds for everything on two cores (less work again under a
 * sanitizer, at the same thread counts).  Long: minutes.
 */
static void scale_defaults(struct stress_options *o)
{
	static const unsigned sweep[] = {1, 2, 4, 8, 16, 32, 64};
	bool long_run = o->long_run;
	if (o->nthreads == 0)
		for (size_t i = 0; i < sizeof sweep / sizeof sweep[0]; i++)
			o->threads[o->nthreads++] = sweep[i];
	o->total_steps = long_run ? 20000000 : SANITIZED ? 100000 : 500000;
	if (o->rounds == 0)
		o->rounds = long_run ? 40 : 3;
	if (o->cycles == 0)
		o->cycles = long_run ? 10000 : SANITIZED ? 1000 : 10000;
	o->destroy_reps = long_run ? 300 : 30;
	o->race_its = long_run ? 40000 : SANITIZED ? 200 : 1000;
	o->seq_its = long_run ? 20000 : SANITIZED ? 500 : 2000;
}

/* The selected parts that run per mode (with that mode) or once. */
static void run_parts(const struct stress_options *o, bool per_mode, int mode)
{
	for (size_t i = 0; i < NPARTS; i++) {
		if (parts[i].per_mode != per_mode ||
		    !only_selected(o->only, parts[i].name))
			continue;
		concurrency_part = parts[i].name;
		parts[i].run(o, mode);
	}
}

int main(int argc, char **argv)
{
	struct stress_options o = {
	    .long_run = long_run_from_env(),
	    .modes = {POOL_LOCKED, POOL_PER_THREAD},
	    .nmodes = 2,
	    .seed = 0x5eed,
	};

	concurrency_part = "setup";
	preempt_us = PREEMPT_DEFAULT_US(1000);
	parse_options(argc, argv, &o);
	scale_defaults(&o);
	concurrency_start("stress", o.long_run);
	printf("stress: %s run, seed %#" PRIx64 "%s\n",
	       o.long_run ? "long" : "short", o.seed,
	       SANITIZED ? " (sanitizer build: fewer steps)" : "");
	double t0 = now();
	for (int m = 0; m < o.nmodes; m++)
		run_parts(&o, true, o.modes[m]);
	run_parts(&o, false, 0);
	concurrency_done(t0);
	return 0;
}
