/*
 * What the driver reads from a finished run (collect.c): the worker's
 * report, parsed into its row, the external workloads' results, and the
 * figures derived once all runs are in; with the small helpers the
 * driver's files share.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_COLLECT_H
#define BENCH_COLLECT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"

/* A worker that runs longer than this is killed and its row fails. */
#define WORKER_TIMEOUT_SECONDS 600.0

/* A worker's report, with --latency's histograms (a few KiB each). */
#define OUTPUT_MAX ((size_t)1 << 18)

/* What a worker process left: its outputs and how it ended. */
struct worker_output {
	char out[OUTPUT_MAX];
	char err[OUTPUT_MAX];
	int status; /* from wait4 */
	long maxrss_kib;
	int timed_out;
};

static inline double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size);
	if (p == NULL) {
		fprintf(stderr, "bench: out of memory\n");
		exit(2);
	}
	return p;
}

static inline const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static inline int has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Copies src into dst, cut to fit. */
static inline void copy_string(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static inline int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Marks the row failed with status and a message (printf format). */
void row_fail(struct row *row, enum row_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* The first line of text, cut there in place. */
const char *first_line(char *text);
/* Takes the worker's report of one run into the row, counted or not;
 * fails the row when the report is wrong or not the library's. */
void row_take(struct row *row, struct worker_output *w, int counted);
/* One run of an external workload's row (http.c), taken into the row. */
void external_take(struct row *row, const char *directory, int counted);
/* Once all runs are in: medians, latency points, checksums, ratios. */
void derive(struct row *rows, size_t count, const struct timer_info *timer);

#endif /* BENCH_COLLECT_H */
