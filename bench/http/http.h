/*
 * The external workloads of the driver (http.c): http, bench/httpd under
 * wrk, and curl, examples/curl-pool downloading from lighttpd.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_HTTP_H
#define BENCH_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "../bench.h"

/* The extra figures of the external workloads, per counted run:
 * http: latency percentiles in microseconds (from wrk);
 * curl: CPU seconds (user + system, of curl-pool) per GB downloaded. */
enum metric {
	METRIC_P50_US,
	METRIC_P99_US,
	METRIC_P999_US,
	METRIC_CPU_S_PER_GB,
	METRIC_COUNT
};

/* One counted or uncounted run of a row: what it measured. */
struct external_result {
	double ns_per_op; /* http: per request; curl: per MB */
	uint64_t ops;     /* requests; MB (10^6 bytes) */
	long maxrss_kib;  /* the server's (http), curl-pool's */
	double metric[METRIC_COUNT];
	uint64_t allocs, flow_allocs, pool_allocs, fallback_allocs;
	char source[128];  /* http: the library httpd reports */
	char message[512]; /* why it failed */
};

/* NULL when the row's programs are there, else why not ("not run: wrk
 * not found"). */
const char *external_missing(const struct bench_case *c, const char *directory,
                             char *buf, size_t size);
/* The row's command line, for the outputs. */
void external_command(const struct bench_case *c, char *buf, size_t size);
/* 0, or -1 with r->message. */
int external_run(const struct bench_case *c, const char *directory,
                 struct external_result *r);
/* Stops lighttpd and removes the temporary files. */
void external_cleanup(void);

#endif /* BENCH_HTTP_H */
