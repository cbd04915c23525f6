/*
 * The latency histogram (see latency.h): merging, quantiles, and the one
 * line of text that carries it from a worker to the driver.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "latency.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const double latency_quantiles[LATENCY_POINTS] = {0.5, 0.99, 0.999, 0.9999,
                                                  1.0};
const char *const latency_point_names[LATENCY_POINTS] = {"p50", "p99", "p99.9",
                                                         "p99.99", "max"};
const char *const latency_side_names[LATENCY_SIDES] = {"alloc", "free"};

void latency_merge(struct latency_histogram *into,
                   const struct latency_histogram *from)
{
	size_t i;

	for (i = 0; i < LATENCY_BUCKETS; i++)
		into->bucket[i] += from->bucket[i];
	into->count += from->count;
	if (from->max > into->max)
		into->max = from->max;
}

/* The values a bucket holds: lo .. lo + width - 1. */
static void bucket_range(unsigned index, uint64_t *lo, uint64_t *width)
{
	unsigned shift, sub;

	if (index < LATENCY_SUB) {
		*lo = index;
		*width = 1;
		return;
	}
	shift = (index - LATENCY_SUB) / LATENCY_SUB;
	sub = (index - LATENCY_SUB) % LATENCY_SUB;
	*lo = (uint64_t)(LATENCY_SUB + sub) << shift;
	*width = (uint64_t)1 << shift;
}

double latency_quantile(const struct latency_histogram *h, double q)
{
	uint64_t rank, seen = 0, lo, width;
	double middle;
	unsigned i;

	if (h->count == 0)
		return 0;
	if (q >= 1)
		return (double)h->max;
	/* The smallest value with at least q of the values at or below. */
	rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count || rank == 0)
		rank++;
	for (i = 0; i < LATENCY_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			break;
	}
	if (i == LATENCY_BUCKETS)
		return (double)h->max;
	bucket_range(i, &lo, &width);
	middle = (double)lo + (double)(width - 1) / 2;
	return middle < (double)h->max ? middle : (double)h->max;
}

void latency_write(FILE *out, const struct latency_histogram *h)
{
	const char *separator = "";
	size_t i;

	fprintf(out, "%llu %llu ", (unsigned long long)h->count,
	        (unsigned long long)h->max);
	for (i = 0; i < LATENCY_BUCKETS; i++)
		if (h->bucket[i] != 0) {
			fprintf(out, "%s%zu:%llu", separator, i,
			        (unsigned long long)h->bucket[i]);
			separator = ",";
		}
}

/* A number of text at *at, followed by one of the characters in ends;
 * moves *at past both.  Returns 0, or -1. */
static int parse_number(const char **at, const char *ends, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(*at, &end, 10);
	if (errno != 0 || end == *at || *end == '\0' ||
	    strchr(ends, *end) == NULL)
		return -1;
	*at = end + 1;
	return 0;
}

int latency_parse(const char *text, struct latency_histogram *h)
{
	struct latency_histogram part = {0};
	uint64_t index, n, sum = 0;
	const char *at = text;

	if (parse_number(&at, " ", &part.count) != 0 ||
	    parse_number(&at, " \n", &part.max) != 0)
		return -1;
	while (at[-1] != '\n' && *at != '\n' && *at != '\0') {
		if (parse_number(&at, ":", &index) != 0 ||
		    parse_number(&at, ",\n", &n) != 0 ||
		    index >= LATENCY_BUCKETS)
			return -1;
		part.bucket[index] += n;
		sum += n;
	}
	if (sum != part.count)
		return -1;
	latency_merge(h, &part);
	return 0;
}

/* ------------------------------------------------------------ the timer */

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double latency_ticks_per_ns(void)
{
	double rates[3];
	size_t k;

	for (k = 0; k < 3; k++) {
		uint64_t ns0 = monotonic_ns(), t0 = latency_tick(), ns1, t1;

		/* Spinning, not sleeping: a sleeping CPU may slow its
		 * counter on hardware without an invariant one. */
		while ((ns1 = monotonic_ns()) - ns0 < 50000000u)
			;
		t1 = latency_tick();
		rates[k] = (double)(t1 - t0) / (double)(ns1 - ns0);
	}
	qsort(rates, 3, sizeof(rates[0]), compare_doubles);
	return rates[1];
}

void latency_empty_region(double *p50, double *min)
{
	static struct latency_histogram h;
	uint64_t least = UINT64_MAX;
	size_t k;

	memset(&h, 0, sizeof(h));
	for (k = 0; k < 100000; k++) {
		uint64_t start = latency_tick(), ticks = latency_tick() - start;
		latency_add(&h, ticks);
		if (ticks < least)
			least = ticks;
	}
	*p50 = latency_quantile(&h, 0.5);
	*min = (double)least;
}

int latency_timer_steady(void)
{
#if defined(__x86_64__)
	FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int steady = 0;

	if (cpuinfo == NULL)
		return 0;
	while (fgets(line, sizeof(line), cpuinfo) != NULL)
		if (strncmp(line, "flags", 5) == 0) {
			steady = strstr(line, " constant_tsc") != NULL &&
			         strstr(line, " nonstop_tsc") != NULL;
			break;
		}
	fclose(cpuinfo);
	return steady;
#else
	return 1; /* CLOCK_MONOTONIC */
#endif
}
