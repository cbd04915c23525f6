/*
 * bench/region: what the region options and pool_trim() buy and cost, in
 * one process per measurement (a fresh process is the only way to see a
 * first touch honestly).
 *
 *   region first [--prefault] [--mode=M]
 *       The seed's lighttpd pattern (clients x buffers of 4 KiB calloc'd,
 *       freed in the seed's order, rounds times) from a new pool, for 20
 *       new pools, after the calls' code ran once on another pool: the
 *       p50/p99/p99.9/p99.99/max of each pool_calloc(), in ns, for the
 *       first round alone and for the rounds after it.  With --prefault
 *       the pool is made with POOL_PREFAULT.
 *   region random [--hugepages] [--mib=N]
 *       N MiB of 4 KiB blocks, all held, touched in a random order (one
 *       word read and written per step): ns per step, and the region's
 *       AnonHugePages.  With --hugepages the pool is POOL_HUGEPAGES.
 *   region trim [--mode=M] [--mib=N]
 *       A spike: N MiB of 4 KiB blocks taken, written and freed; then
 *       pool_trim(): its time, the bytes it gave back, and RSS before the
 *       spike, at its peak and after the trim.
 *
 * Prints one line of key=value pairs.  The times are CLOCK_MONOTONIC (the
 * totals) and bench/latency.h's timer (each call).
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "latency.h"
#include "shiftpool.h"

#define BLOCK   4096
#define CLIENTS 10
#define BUFFERS 256
#define ROUNDS  200

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "region: %s\n", what);
	exit(1);
}

/* The process's resident and AnonHugePages bytes of the mapping holding
 * p (0 when p is NULL), from /proc/self/status and /proc/self/smaps. */
static size_t rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, resident = 0;
	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (size_t)resident * 4096;
}

static size_t anon_huge_bytes(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int inside = 0;
	size_t kib = 0;
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL) {
		uintptr_t lo, hi;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (inside && sscanf(line, "AnonHugePages: %zu kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib << 10;
}

static int mode_of(const char *name)
{
	if (strcmp(name, "single") == 0)
		return POOL_SINGLE;
	if (strcmp(name, "locked") == 0)
		return POOL_LOCKED;
	if (strcmp(name, "per-thread") == 0)
		return POOL_PER_THREAD;
	die("--mode: single, locked or per-thread");
	return 0;
}

static void print_points(const char *name, const struct latency_histogram *h,
                         double ticks_per_ns)
{
	printf(" %s_count=%" PRIu64, name, h->count);
	for (int i = 0; i < LATENCY_POINTS; i++)
		printf(" %s_%s=%.0f", name, latency_point_names[i],
		       latency_quantile(h, latency_quantiles[i]) /
		           ticks_per_ns);
}

/* The seed's departure order of a round's buffers: by client, in this
 * order. */
static const int order[CLIENTS] = {3, 0, 5, 1, 6, 2, 4, 9, 8, 7};

/* The calls' code run once on a pool of its own, so that the first round
 * measures the new pool's pages, not the dynamic linker binding the
 * library's symbols or the code's first fetch. */
static void warm_up(int flags)
{
	pool_t *pool = pool_init(BLOCK, 2, flags);
	if (pool == NULL)
		die("pool_init");
	for (int i = 0; i < 2; i++) {
		void *a = pool_calloc(pool, 1, BLOCK);
		void *b = pool_calloc(pool, 1, BLOCK);
		pool_free(pool, a);
		pool_free(pool, b);
	}
	pool_destroy(pool);
	(void)latency_tick();
}

/* Fresh pools measured: the first round of one pool is only
 * CLIENTS x BUFFERS calls, too few for a p99.9 of its own. */
#define POOLS 20

static void first_round(int flags)
{
	static void *buf[CLIENTS][BUFFERS];
	static struct latency_histogram first, later;
	double ticks_per_ns = latency_ticks_per_ns();
	warm_up(flags);
	/* The test's own array touched before, not in the first round. */
	memset(buf, 0, sizeof buf);
	for (int n = 0; n < POOLS; n++) {
		pool_t *pool = pool_init(BLOCK, CLIENTS * BUFFERS, flags);
		if (pool == NULL)
			die("pool_init");
		for (int round = 0; round < ROUNDS; round++) {
			struct latency_histogram *h =
			    round == 0 ? &first : &later;
			for (int c = 0; c < CLIENTS; c++)
				for (int b = 0; b < BUFFERS; b++) {
					uint64_t t0 = latency_tick();
					void *p = pool_calloc(pool, 1, BLOCK);
					latency_add(h, latency_tick() - t0);
					if (p == NULL)
						die("pool_calloc");
					buf[c][b] = p;
					((char *)p)[BLOCK - 1] = (char)b;
				}
			for (int k = 0; k < CLIENTS; k++)
				for (int b = 0; b < BUFFERS; b++)
					pool_free(pool, buf[order[k]][b]);
		}
		pool_destroy(pool);
	}
	printf("first prefault=%d mode=%d pools=%d",
	       (flags & POOL_PREFAULT) != 0, flags & 0xf, POOLS);
	print_points("first_round", &first, ticks_per_ns);
	print_points("later_rounds", &later, ticks_per_ns);
	printf("\n");
}

static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void random_access(int flags, size_t mib)
{
	size_t count = (mib << 20) / BLOCK;
	pool_t *pool = pool_init(BLOCK, count, flags | POOL_NO_FALLBACK);
	void **blocks = malloc(count * sizeof *blocks);
	if (pool == NULL || blocks == NULL)
		die("pool_init");
	for (size_t i = 0; i < count; i++) {
		blocks[i] = pool_malloc(pool, BLOCK);
		if (blocks[i] == NULL)
			die("pool_malloc");
		memset(blocks[i], 1, BLOCK);
	}
	uint64_t state = 1, sum = 0;
	size_t steps = 20 * 1000 * 1000;
	double t0 = now_ns();
	for (size_t s = 0; s < steps; s++) {
		uint64_t r = next_random(&state);
		uint64_t *word = (uint64_t *)blocks[r % count] +
		                 (r >> 40) % (BLOCK / sizeof(uint64_t));
		sum += *word;
		*word = sum;
	}
	double ns = (now_ns() - t0) / (double)steps;
	printf("random hugepages=%d mib=%zu ns_per_step=%.2f "
	       "anon_huge_mib=%zu checksum=%" PRIu64 "\n",
	       (flags & POOL_HUGEPAGES) != 0, mib, ns,
	       anon_huge_bytes(blocks[0]) >> 20, sum & 0xff);
	for (size_t i = 0; i < count; i++)
		pool_free(pool, blocks[i]);
	free(blocks);
	pool_destroy(pool);
}

static void trim(int flags, size_t mib)
{
	size_t count = (mib << 20) / BLOCK;
	pool_t *pool = pool_init(BLOCK, count, flags | POOL_NO_FALLBACK);
	if (pool == NULL)
		die("pool_init");
	size_t before = rss_bytes();
	void *last = NULL;
	for (size_t i = 0; i < count; i++) {
		void **p = pool_malloc(pool, BLOCK);
		if (p == NULL)
			die("pool_malloc");
		memset(p, 1, BLOCK);
		*p = last;
		last = p;
	}
	size_t peak = rss_bytes();
	while (last != NULL) {
		void *prev = *(void **)last;
		pool_free(pool, last);
		last = prev;
	}
	double t0 = now_ns();
	size_t released = pool_trim(pool);
	double trim_ms = (now_ns() - t0) / 1e6;
	size_t after = rss_bytes();
	t0 = now_ns();
	size_t again = pool_trim(pool);
	double idle_us = (now_ns() - t0) / 1e3;
	printf("trim mode=%d mib=%zu rss_before_mib=%.1f rss_peak_mib=%.1f "
	       "rss_after_mib=%.1f released_mib=%.1f trim_ms=%.2f "
	       "second_trim_us=%.1f second_released=%zu\n",
	       flags & 0xf, mib, before / 1048576.0, peak / 1048576.0,
	       after / 1048576.0, released / 1048576.0, trim_ms, idle_us,
	       again);
	pool_destroy(pool);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: region first|random|trim [options]");
	int flags = POOL_SINGLE;
	size_t mib = 0;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--prefault") == 0)
			flags |= POOL_PREFAULT;
		else if (strcmp(argv[i], "--hugepages") == 0)
			flags |= POOL_HUGEPAGES;
		else if (strncmp(argv[i], "--mode=", 7) == 0)
			flags = (flags & ~0xf) | mode_of(argv[i] + 7);
		else if (strncmp(argv[i], "--mib=", 6) == 0)
			mib = strtoul(argv[i] + 6, NULL, 10);
		else
			die("unknown option");
	}
	if (strcmp(argv[1], "first") == 0)
		first_round(flags);
	else if (strcmp(argv[1], "random") == 0)
		random_access(flags, mib ? mib : 1024);
	else if (strcmp(argv[1], "trim") == 0)
		trim(flags, mib ? mib : 256);
	else
		die("usage: region first|random|trim [options]");
	return 0;
}
