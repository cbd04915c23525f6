/*
 * The driver's rows and what a run measured: driver.c runs them (with
 * spawn.c for the workers and http/ for the external workloads),
 * collect.c reads what the workers print and derives the figures, and
 * report/ prints the table, CSV and JSON and draws the charts.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_DRIVER_H
#define BENCH_DRIVER_H

#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "latency.h"
#include "http/http.h"

enum row_status {
	ROW_OK,
	ROW_NOT_BUILT,      /* configure did not find the allocator */
	ROW_NOT_APPLICABLE, /* e.g. POOL_SINGLE in xthread */
	ROW_FAILED,         /* a run failed, or its checksum is wrong */
	ROW_WRONG_SOURCE,   /* not served by the library it names */
	ROW_NOT_RUN,        /* http, curl: a program they need is missing */
};

/*
 * One allocator on one case: its counted runs and what was derived from
 * them.  Rows of one case (one workload at one point of its sweep) are
 * adjacent and share a group number.
 */
struct row {
	struct bench_case c;
	size_t group;
	char label[48];    /* the swept value, e.g. "N=500" */
	const char *note;  /* how this row runs differently, or NULL */
	char command[640]; /* the worker's command line, by name */
	enum row_status status;
	char message[512]; /* why not OK */

	size_t runs;          /* counted runs so far */
	double *ns_per_op;    /* per counted run */
	uint64_t *ops;        /* per counted run */
	uint64_t checksum;    /* of the first counted run */
	int checksum_differs; /* between the runs of a fixed-work row */
	long peak_rss_kib;    /* the largest of the counted runs */
	uint64_t pool_allocs, fallback_allocs; /* of the last counted run */
	double *metric[METRIC_COUNT];          /* http, curl: per counted run */
	double metric_median[METRIC_COUNT];
	uint64_t allocs;      /* http, curl: allocations the program
	                         counted (last counted run) */
	uint64_t flow_allocs; /* curl: made while data was flowing */
	int unoptimized;      /* the worker was built without -O */
	double *faults;       /* minor page faults, per counted run */
	/* footprint: RSS growth beyond the blocks' bytes, % of them, and
	 * what the allocator's set-up alone added, KiB; per counted run. */
	double *footprint, *footprint_open;
	uint64_t footprint_bytes; /* the blocks' */
	/* mixed: the live objects' bytes at the end of the last counted
	 * run, and what a pool set's classes round them up to. */
	uint64_t mixed_live_bytes, mixed_rounded_bytes;
	/* --latency: the timed calls of the counted runs, by side, merged
	 * (NULL for rows without them). */
	struct latency_histogram *latency[LATENCY_SIDES];

	char symbol[32], source[128];
	char free_symbol[32], free_source[128];
	char fallback_symbol[32], fallback_source[128];
	char version[128];

	/* Derived once all runs are in. */
	double median, min, max;                /* ns per operation */
	double vs_glibc, vs_tcmalloc, vs_floor; /* median ratios; 0: none */
	double faults_median;                   /* minor faults per run */
	double footprint_median, footprint_min, footprint_max; /* % */
	double footprint_open_median;                          /* KiB */
	int has_overhead; /* pair, bulk, with a floor row to subtract */
	double overhead;  /* pair, bulk: median - the floor's median, ns */
	/* --latency: p50 ... max by side, ns (latency_quantiles order) */
	double latency_ns[LATENCY_SIDES][LATENCY_POINTS];
};

/* What was run, where: printed with every output so that a run can be
 * repeated from its own output. */
struct run_info {
	const struct options *options;
	const char *command; /* the driver's own command line */
	char date[32];       /* UTC, ISO 8601 */
	char cpu[128];
	long cpus;
	char system[256]; /* kernel */
	char libc[32];
	char compiler[96];
	char load_before[64], load_after[64]; /* /proc/loadavg: 1, 5, 15 min */
	double seconds; /* wall time of the whole measurement */
	int failed;     /* rows failed or wrongly sourced */
	int unoptimized;
	/* --latency: the timer, measured before the runs. */
	struct timer_info {
		int measured;
		double ticks_per_ns;         /* against CLOCK_MONOTONIC */
		double empty_p50, empty_min; /* an empty timed region, ticks */
		int invariant_tsc;           /* /proc/cpuinfo: constant_tsc and
		                                nonstop_tsc (x86-64) */
	} timer;
};

#endif /* BENCH_DRIVER_H */
