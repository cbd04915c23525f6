/*
 * The driver's collection of results: it parses what a worker printed
 * into its row, checks that the row was served by the library it names,
 * takes the external workloads' results, and once all runs are in derives
 * the medians, latency points and ratios the reports print.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "collect.h"

#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *output_value(const char *out, const char *key)
{
	size_t length = strlen(key);
	const char *line = out;

	while (line != NULL && *line != '\0') {
		if (strncmp(line, key, length) == 0 && line[length] == '=')
			return line + length + 1;
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return NULL;
}

/* The value of "key=" in a worker's output, copied into buf; "" if none. */
static const char *output_field(const char *out, const char *key, char *buf,
                                size_t size)
{
	const char *value = output_value(out, key);
	size_t n = value ? strcspn(value, "\n") : 0;

	if (n >= size)
		n = size - 1;
	if (n > 0)
		memcpy(buf, value, n);
	buf[n] = '\0';
	return buf;
}

static uint64_t output_number(const char *out, const char *key)
{
	char buf[64];
	return strtoull(output_field(out, key, buf, sizeof(buf)), NULL, 10);
}

void row_fail(struct row *row, enum row_status status, const char *format, ...)
{
	va_list args;

	row->status = status;
	va_start(args, format);
	vsnprintf(row->message, sizeof(row->message), format, args);
	va_end(args);
}

/* The first line of a worker's complaint, for the row's message. */
const char *first_line(char *text)
{
	text[strcspn(text, "\n")] = '\0';
	return text[0] ? text : "no message";
}

/* Whether the object that served a row is the one its allocator names. */
static int source_expected(enum allocator allocator, const char *source)
{
	switch (allocator) {
	case ALLOCATOR_GLIBC:
	case ALLOCATOR_GLIBC_NOTRIM:
		return has_prefix(source, "libc.so") ||
		       has_prefix(source, "libc-");
	case ALLOCATOR_TCMALLOC:
		return has_prefix(source, "libtcmalloc");
	case ALLOCATOR_JEMALLOC:
		return has_prefix(source, "libjemalloc");
	case ALLOCATOR_MIMALLOC:
		return has_prefix(source, "libmimalloc");
	case ALLOCATOR_GSLICE:
		return has_prefix(source, "libglib-2.0");
	case ALLOCATOR_DPDK:
		/* rte_mempool_get() and _put() are inline functions. */
		return strcmp(source, "bench-dpdk") == 0;
	case ALLOCATOR_BOOST:
		/* boost::pool<> is header-only C++. */
		return strcmp(source, "bench-boost") == 0;
	case ALLOCATOR_POOL_SINGLE:
	case ALLOCATOR_POOL_LOCKED:
	case ALLOCATOR_POOL_PER_THREAD:
	case ALLOCATOR_POOL_SET_SINGLE:
	case ALLOCATOR_POOL_SET_LOCKED:
	case ALLOCATOR_POOL_SET_PER_THREAD:
		/* A static build holds the pool in the worker itself. */
		return has_prefix(source, "libshiftpool") ||
		       strcmp(source, "bench-pool") == 0;
	case ALLOCATOR_POOL_SINGLE_INLINE:
	case ALLOCATOR_POOL_PER_THREAD_INLINE:
		/* The fast paths are in the worker; the rest is the
		 * library's. */
		return strcmp(source, "bench-pool-inline") == 0;
	default:
		return strcmp(source, "none") == 0;
	}
}

/* Adds a counted run's histograms to the row's (--latency).  Returns 0,
 * or -1 after failing the row. */
static int row_take_latency(struct row *row, const char *out)
{
	char key[32];
	int side;

	for (side = 0; side < LATENCY_SIDES; side++) {
		const char *value;

		if (row->latency[side] == NULL)
			continue;
		snprintf(key, sizeof(key), "latency_%s",
		         latency_side_names[side]);
		value = output_value(out, key);
		if (value == NULL ||
		    latency_parse(value, row->latency[side]) != 0) {
			row_fail(row, ROW_FAILED,
			         "worker reported no readable %s", key);
			return -1;
		}
	}
	return 0;
}

/* footprint: one counted run's RSS growth beyond the blocks, in % of
 * them (negative when less than the blocks became resident). */
static void row_take_footprint(struct row *row, const char *out)
{
	double before = (double)output_number(out, "footprint_before");
	double open = (double)output_number(out, "footprint_open");
	double after = (double)output_number(out, "footprint_after");
	double bytes = (double)output_number(out, "footprint_bytes");

	row->footprint_bytes = output_number(out, "footprint_bytes");
	row->footprint[row->runs] =
	    bytes > 0 ? 100.0 * (after - before - bytes) / bytes : 0;
	row->footprint_open[row->runs] = (open - before) / 1024.0;
}

/* Takes one worker's report into its row. */
void row_take(struct row *row, struct worker_output *w, int counted)
{
	char field[256];
	uint64_t ops, ns;

	ops = output_number(w->out, "ops");
	ns = output_number(w->out, "ns");
	if (ops == 0 || ns == 0) {
		row_fail(row, ROW_FAILED, "worker reported no work: %s",
		         first_line(w->err));
		return;
	}
	output_field(w->out, "symbol", row->symbol, sizeof(row->symbol));
	output_field(w->out, "free_symbol", row->free_symbol,
	             sizeof(row->free_symbol));
	output_field(w->out, "fallback_symbol", row->fallback_symbol,
	             sizeof(row->fallback_symbol));
	output_field(w->out, "version", row->version, sizeof(row->version));
	copy_string(
	    row->source, sizeof(row->source),
	    base_name(output_field(w->out, "source", field, sizeof(field))));
	copy_string(row->free_source, sizeof(row->free_source),
	            base_name(output_field(w->out, "free_source", field,
	                                   sizeof(field))));
	copy_string(row->fallback_source, sizeof(row->fallback_source),
	            base_name(output_field(w->out, "fallback_source", field,
	                                   sizeof(field))));
	if (output_number(w->out, "optimized") == 0)
		row->unoptimized = 1;

	if (!source_expected(row->c.allocator, row->source) ||
	    strcmp(row->source, row->free_source) != 0) {
		row_fail(row, ROW_WRONG_SOURCE,
		         "%s came from %s and %s from %s, not from %s",
		         row->symbol, row->source, row->free_symbol,
		         row->free_source, allocator_names[row->c.allocator]);
		return;
	}
#ifndef BENCH_SANITIZED
	if (strcmp(row->fallback_source, "none") != 0 &&
	    !source_expected(ALLOCATOR_GLIBC, row->fallback_source)) {
		row_fail(row, ROW_WRONG_SOURCE,
		         "the pool's fallback %s came from %s, not from glibc",
		         row->fallback_symbol, row->fallback_source);
		return;
	}
#endif
	if (!counted)
		return;
	row->ns_per_op[row->runs] = (double)ns / (double)ops;
	row->ops[row->runs] = ops;
	if (row->runs == 0)
		row->checksum = output_number(w->out, "checksum");
	else if (!case_is_timed(&row->c) &&
	         row->checksum != output_number(w->out, "checksum"))
		row->checksum_differs = 1;
	row->pool_allocs = output_number(w->out, "pool_allocs");
	row->fallback_allocs = output_number(w->out, "fallback_allocs");
	row->faults[row->runs] = (double)output_number(w->out, "minor_faults");
	if (row->c.workload == WORKLOAD_FOOTPRINT)
		row_take_footprint(row, w->out);
	if (row->c.workload == WORKLOAD_MIXED) {
		row->mixed_live_bytes =
		    output_number(w->out, "mixed_live_bytes");
		row->mixed_rounded_bytes =
		    output_number(w->out, "mixed_rounded_bytes");
	}
	if (w->maxrss_kib > row->peak_rss_kib)
		row->peak_rss_kib = w->maxrss_kib;
	if (row_take_latency(row, w->out) != 0)
		return;
	row->runs++;
}

/*
 * Whether source is a sanitizer's runtime standing in for glibc's malloc:
 * bench/httpd is built with the project's sanitizers, which interpose
 * malloc, so its glibc row is served by them in such a build.
 */
static int sanitizer_serves_malloc(enum allocator allocator, const char *source)
{
#ifdef BENCH_SANITIZED
	return allocator == ALLOCATOR_GLIBC &&
	       (strncmp(source, "libasan", 7) == 0 ||
	        strncmp(source, "libtsan", 7) == 0);
#else
	(void)allocator;
	(void)source;
	return 0;
#endif
}

/* Runs one run of an external row (http, curl) and takes its figures. */
void external_take(struct row *row, const char *directory, int counted)
{
	struct external_result r;
	size_t k;

	if (external_run(&row->c, directory, &r) != 0) {
		row_fail(row, ROW_FAILED, "failed: %s", r.message);
		return;
	}
	if (row->c.workload == WORKLOAD_HTTP) {
		/* httpd names the library of its allocation entry point. */
		copy_string(row->source, sizeof(row->source),
		            base_name(r.source));
		if (!source_expected(row->c.allocator, row->source) &&
		    !sanitizer_serves_malloc(row->c.allocator, row->source)) {
			row_fail(
			    row, ROW_WRONG_SOURCE,
			    "httpd's allocations came from %s, not from %s",
			    row->source, allocator_names[row->c.allocator]);
			return;
		}
	} else {
		copy_string(row->source, sizeof(row->source),
		            row->c.allocator == ALLOCATOR_GLIBC
		                ? "curl-pool --allocator=system"
		            : row->c.allocator == ALLOCATOR_POOL_PER_THREAD
		                ? "curl-pool --allocator=pool "
		                  "--pool-mode=per-thread"
		                : "curl-pool --allocator=pool");
	}
	if (!counted)
		return;
	row->ns_per_op[row->runs] = r.ns_per_op;
	row->ops[row->runs] = r.ops;
	for (k = 0; k < METRIC_COUNT; k++)
		row->metric[k][row->runs] = r.metric[k];
	row->allocs = r.allocs;
	row->flow_allocs = r.flow_allocs;
	row->pool_allocs = r.pool_allocs;
	row->fallback_allocs = r.fallback_allocs;
	if (r.maxrss_kib > row->peak_rss_kib)
		row->peak_rss_kib = r.maxrss_kib;
	row->runs++;
}

/* ------------------------------------------------------------ derive */

static const struct row *group_row(const struct row *rows, size_t count,
                                   size_t group, enum allocator allocator)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (rows[i].group == group &&
		    rows[i].c.allocator == allocator &&
		    rows[i].status == ROW_OK)
			return &rows[i];
	return NULL;
}

/* The median of n > 0 values, which it sorts. */
static double median_of(double *values, size_t n)
{
	qsort(values, n, sizeof(double), compare_doubles);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* A row's median, min and max ns/op over its counted runs (at least
 * one), and the medians of its metrics. */
static void row_summarise(struct row *row)
{
	size_t n = row->runs, k;
	double *values = xcalloc(n, sizeof(double));

	memcpy(values, row->ns_per_op, n * sizeof(double));
	row->median = median_of(values, n);
	row->min = values[0];
	row->max = values[n - 1];
	for (k = 0; k < METRIC_COUNT; k++) {
		memcpy(values, row->metric[k], n * sizeof(double));
		row->metric_median[k] = median_of(values, n);
	}
	memcpy(values, row->faults, n * sizeof(double));
	row->faults_median = median_of(values, n);
	memcpy(values, row->footprint, n * sizeof(double));
	row->footprint_median = median_of(values, n);
	row->footprint_min = values[0];
	row->footprint_max = values[n - 1];
	memcpy(values, row->footprint_open, n * sizeof(double));
	row->footprint_open_median = median_of(values, n);
	free(values);
}

/* --latency: the row's percentiles, from ticks to ns. */
static void row_latency(struct row *row, const struct timer_info *timer)
{
	int side, k;

	for (side = 0; side < LATENCY_SIDES; side++)
		for (k = 0; row->latency[side] != NULL && k < LATENCY_POINTS;
		     k++)
			row->latency_ns[side][k] =
			    latency_quantile(row->latency[side],
			                     latency_quantiles[k]) /
			    timer->ticks_per_ns;
}

/* Fixed work gives every allocator of a case the same checksum: glibc's,
 * else the first row's, is the reference. */
static void rows_check_checksums(struct row *rows, size_t count)
{
	size_t i, j;

	for (i = 0; i < count; i++) {
		struct row *row = &rows[i];
		const struct row *reference =
		    group_row(rows, count, row->group, ALLOCATOR_GLIBC);

		if (row->status != ROW_OK || case_is_timed(&row->c))
			continue;
		for (j = 0; reference == NULL && j < count; j++)
			if (rows[j].group == row->group &&
			    rows[j].status == ROW_OK)
				reference = &rows[j];
		if (reference != NULL && reference->checksum != row->checksum)
			row_fail(row, ROW_FAILED, "checksum %llu, %s's is %llu",
			         (unsigned long long)row->checksum,
			         allocator_names[reference->c.allocator],
			         (unsigned long long)reference->checksum);
	}
}

/* Each row's median over the glibc, tcmalloc and floor rows' of its
 * case; 0 where that row is missing. */
static void rows_ratios(struct row *rows, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		struct row *row = &rows[i];
		const struct row *glibc, *tcmalloc, *floor_row;

		if (row->status != ROW_OK)
			continue;
		glibc = group_row(rows, count, row->group, ALLOCATOR_GLIBC);
		tcmalloc =
		    group_row(rows, count, row->group, ALLOCATOR_TCMALLOC);
		floor_row = group_row(rows, count, row->group, ALLOCATOR_FLOOR);
		row->vs_glibc = glibc ? row->median / glibc->median : 0;
		row->vs_tcmalloc =
		    tcmalloc ? row->median / tcmalloc->median : 0;
		row->vs_floor = floor_row ? row->median / floor_row->median : 0;
		/* pair: what the allocator adds to the same copy. */
		row->has_overhead = (row->c.workload == WORKLOAD_PAIR ||
		                     row->c.workload == WORKLOAD_BULK) &&
		                    floor_row != NULL;
		if (row->has_overhead)
			row->overhead = row->median - floor_row->median;
	}
}

void derive(struct row *rows, size_t count, const struct timer_info *timer)
{
	size_t i;

	for (i = 0; i < count; i++) {
		struct row *row = &rows[i];

		if (row->status != ROW_OK)
			continue;
		if (row->runs == 0) {
			row_fail(row, ROW_FAILED, "no counted run");
			continue;
		}
		row_summarise(row);
		if (timer->measured)
			row_latency(row, timer);
		if (row->checksum_differs)
			row_fail(row, ROW_FAILED,
			         "checksum differs between runs");
	}
	rows_check_checksums(rows, count);
	rows_ratios(rows, count);
}
