/*
 * examples/curl-pool: libcurl with shiftpool as its allocator.
 *
 *   curl-pool [--allocator=pool|pool-set|system]
 *             [--pool-mode=locked|per-thread] [--block-size=BYTES]
 *             [--blocks=N] [--class-bytes=BYTES] [--buffer-size=BYTES]
 *             [--repeat=N] [--output=FILE] [--json] URL
 *
 * It installs counting allocation callbacks with curl_global_init_mem(),
 * downloads URL (to FILE, else nowhere) and prints what the curl posts
 * measured with curl's memdebug log and memanalyze.pl: the calls by kind,
 * the allocations by size, how many the pool served and how many fell
 * back to malloc, the peak of bytes in use, the allocations made while
 * data was flowing, and the throughput.  --allocator=system counts the
 * same way over malloc, the comparison.  --allocator=pool-set hands every
 * call to a pool set of 16 B to 64 KiB classes instead of one pool, so
 * that libcurl's allocations of every size come from shiftpool; its
 * report adds each class's counters.
 *
 * Only libcurl's own allocations pass through the callbacks (TLS and the
 * C library allocate for themselves), as in the posts.
 *
 * The pool is POOL_LOCKED by default: the easy interface calls back from
 * the application's thread, but the threaded resolver of Debian's
 * libcurl allocates on a thread of its own.
 *
 * The default pool (256 blocks of 256 B) comes from measuring libcurl
 * 7.88 on a plain HTTP download (see README.md): most allocations are
 * small, at most 256 B, and at most ~130 are live at once; the few large
 * ones (the easy handle, the connection, the download buffer) go to the
 * fallback, which is what it is for.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L /* strdup(), clock_gettime() */

#include "shiftpool.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ limits */

#define DEFAULT_BLOCK_SIZE 256
#define DEFAULT_BLOCKS     256
/* The pool set's classes: every request libcurl 7.88 makes on a plain
 * HTTP download fits the largest (see README.md).  Each class reserves
 * DEFAULT_CLASS_BYTES of address space and touches only what it uses. */
#define SET_MIN_BLOCK       16
#define SET_MAX_BLOCK       ((size_t)64 << 10)
#define DEFAULT_CLASS_BYTES ((size_t)1 << 20)
/* Size classes of the histogram: up to 16 B, 32 B, ... 1 MiB, larger. */
#define FIRST_CLASS_SHIFT 4
#define LAST_CLASS_SHIFT  20
#define CLASS_COUNT       (LAST_CLASS_SHIFT - FIRST_CLASS_SHIFT + 2)
#define MAX_REPEAT        1000

/* ------------------------------------------------------------ types */

enum call {
	CALL_MALLOC,
	CALL_CALLOC,
	CALL_REALLOC,
	CALL_STRDUP,
	CALL_FREE,
	CALL_FREE_NULL, /* free(NULL): curl does it often; a no-op */
	CALL_COUNT
};

static const char *const call_names[CALL_COUNT] = {
    "malloc", "calloc", "realloc", "strdup", "free", "free_null",
};

enum backend {
	BACKEND_SYSTEM,
	BACKEND_POOL,
	BACKEND_SET,
};

static const char *const backend_names[] = {"system", "pool", "pool-set"};

/* One live allocation: its address and the size asked for. */
struct live {
	uintptr_t address; /* 0: an empty slot */
	size_t size;
};

/*
 * Everything the callbacks count.  Global, because curl's allocation
 * callbacks take no argument.  Invariants, under lock: table holds
 * exactly the live allocations (count of them, at most half of capacity,
 * so probes stay short); bytes_in_use is the sum of their sizes;
 * created - destroyed == count.
 */
static struct tracker {
	enum backend backend;
	pool_t *pool;    /* BACKEND_POOL */
	pool_set_t *set; /* BACKEND_SET */
	pthread_mutex_t lock;
	struct live *table;
	size_t capacity; /* a power of two */
	size_t count;
	uint64_t calls[CALL_COUNT];
	uint64_t created;       /* new allocations: malloc, calloc, strdup,
	                           realloc(NULL) */
	uint64_t destroyed;     /* free(p), realloc(p, 0) */
	uint64_t unknown_frees; /* pointers the table did not know: a bug */
	uint64_t class_calls[CLASS_COUNT];
	uint64_t class_pool[CLASS_COUNT]; /* of which the pool (or set)
	                                     served */
	size_t bytes_in_use;
	size_t peak_bytes;
	bool table_full; /* growing the table failed: counts are partial */
} tracker = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct options {
	enum backend backend;
	int pool_mode;
	size_t block_size;
	size_t blocks;
	size_t class_bytes; /* BACKEND_SET: bytes_per_class */
	long buffer_size;   /* 0: libcurl's default */
	int repeat;
	const char *output;
	bool json;
	const char *url;
};

/* What the transfers did. */
struct transfer {
	FILE *output;
	uint64_t bytes;
	double seconds;
	long http_status;
	CURLcode result;
	char error[CURL_ERROR_SIZE];
	bool flowing;              /* data has arrived in this transfer */
	uint64_t flow_start;       /* allocations when the first data came */
	uint64_t flow_allocations; /* made while data was flowing */
};

/* curl_version(), for the report. */
static char libcurl_version[256];

/* ------------------------------------------------------------ table */

static size_t slot_of(uintptr_t address, size_t capacity)
{
	/* Fibonacci hashing: allocations are aligned, so the low bits of an
	 * address say little. */
	return (size_t)(((uint64_t)address * 11400714819323198485u) >> 20) &
	       (capacity - 1);
}

/* Doubles the table; called with the lock held.  Returns 0 or -1. */
static int table_grow(void)
{
	size_t capacity = tracker.capacity == 0 ? 1024 : tracker.capacity * 2;
	/* The system's calloc, not the callbacks: the table is the
	 * instrument's, not curl's. */
	struct live *table = calloc(capacity, sizeof(*table));
	if (table == NULL)
		return -1;
	for (size_t i = 0; i < tracker.capacity; i++) {
		if (tracker.table[i].address == 0)
			continue;
		size_t slot = slot_of(tracker.table[i].address, capacity);
		while (table[slot].address != 0)
			slot = (slot + 1) & (capacity - 1);
		table[slot] = tracker.table[i];
	}
	free(tracker.table);
	tracker.table = table;
	tracker.capacity = capacity;
	return 0;
}

static unsigned class_of(size_t size)
{
	unsigned shift = FIRST_CLASS_SHIFT;
	while (shift <= LAST_CLASS_SHIFT && ((size_t)1 << shift) < size)
		shift++;
	return shift - FIRST_CLASS_SHIFT;
}

/* Records a new live allocation; lock held. */
static void track_insert(void *p, size_t size)
{
	if (tracker.count + 1 > tracker.capacity / 2 && table_grow() != 0) {
		tracker.table_full = true;
		return;
	}
	uintptr_t address = (uintptr_t)p;
	size_t slot = slot_of(address, tracker.capacity);
	while (tracker.table[slot].address != 0)
		slot = (slot + 1) & (tracker.capacity - 1);
	tracker.table[slot] = (struct live){address, size};
	tracker.count++;
	tracker.bytes_in_use += size;
	if (tracker.bytes_in_use > tracker.peak_bytes)
		tracker.peak_bytes = tracker.bytes_in_use;
}

/* Forgets a live allocation and returns its size; lock held.  Deletion
 * shifts the rest of the probe run back, so no tombstones pile up. */
static size_t track_remove(void *p)
{
	uintptr_t address = (uintptr_t)p;
	if (tracker.capacity == 0) {
		tracker.unknown_frees++;
		return 0;
	}
	size_t mask = tracker.capacity - 1;
	size_t slot = slot_of(address, tracker.capacity);
	while (tracker.table[slot].address != address) {
		if (tracker.table[slot].address == 0) {
			tracker.unknown_frees++;
			return 0;
		}
		slot = (slot + 1) & mask;
	}
	size_t size = tracker.table[slot].size;
	size_t hole = slot;
	for (size_t next = (hole + 1) & mask; tracker.table[next].address != 0;
	     next = (next + 1) & mask) {
		size_t home =
		    slot_of(tracker.table[next].address, tracker.capacity);
		/* Move the entry into the hole unless its home lies
		 * cyclically in (hole, next]. */
		bool stays = hole <= next ? (hole < home && home <= next)
		                          : (hole < home || home <= next);
		if (!stays) {
			tracker.table[hole] = tracker.table[next];
			hole = next;
		}
	}
	tracker.table[hole].address = 0;
	tracker.count--;
	tracker.bytes_in_use -= size;
	return size;
}

/* The set's fallback allocations so far; lock held, so that no set call
 * is under way and the per-thread counters are exact. */
static uint64_t set_fallbacks(void)
{
	pool_stats_t stats;
	if (tracker.set == NULL || pool_set_stats(tracker.set, 0, &stats) != 0)
		return 0;
	return stats.fallback_allocs;
}

/* Counts an allocation call that produced p of size bytes; lock held.
 * fallbacks_before: set_fallbacks() before the call.  The set has no
 * pool_owns(): a call it served is one that made no fallback
 * allocation. */
static void count_allocation(void *p, size_t size, uint64_t fallbacks_before)
{
	unsigned class = class_of(size);
	tracker.class_calls[class]++;
	if ((tracker.backend == BACKEND_POOL && pool_owns(tracker.pool, p)) ||
	    (tracker.backend == BACKEND_SET &&
	     set_fallbacks() == fallbacks_before))
		tracker.class_pool[class]++;
}

/* ------------------------------------------------------------ callbacks */

static void *counting_malloc(size_t size)
{
	pthread_mutex_lock(&tracker.lock);
	uint64_t fallbacks = set_fallbacks();
	void *p =
	    tracker.backend == BACKEND_SET ? pool_set_malloc(tracker.set, size)
	    : tracker.backend == BACKEND_POOL ? pool_malloc(tracker.pool, size)
	                                      : malloc(size);
	tracker.calls[CALL_MALLOC]++;
	if (p != NULL) {
		tracker.created++;
		track_insert(p, size);
		count_allocation(p, size, fallbacks);
	}
	pthread_mutex_unlock(&tracker.lock);
	return p;
}

static void *counting_calloc(size_t count, size_t size)
{
	pthread_mutex_lock(&tracker.lock);
	uint64_t fallbacks = set_fallbacks();
	void *p = tracker.backend == BACKEND_SET
	              ? pool_set_calloc(tracker.set, count, size)
	          : tracker.backend == BACKEND_POOL
	              ? pool_calloc(tracker.pool, count, size)
	              : calloc(count, size);
	tracker.calls[CALL_CALLOC]++;
	if (p != NULL) {
		tracker.created++;
		/* Cannot overflow: the allocator refused those. */
		track_insert(p, count * size);
		count_allocation(p, count * size, fallbacks);
	}
	pthread_mutex_unlock(&tracker.lock);
	return p;
}

static char *counting_strdup(const char *s)
{
	pthread_mutex_lock(&tracker.lock);
	uint64_t fallbacks = set_fallbacks();
	char *p =
	    tracker.backend == BACKEND_SET    ? pool_set_strdup(tracker.set, s)
	    : tracker.backend == BACKEND_POOL ? pool_strdup(tracker.pool, s)
	                                      : strdup(s);
	tracker.calls[CALL_STRDUP]++;
	if (p != NULL) {
		size_t size = strlen(p) + 1;
		tracker.created++;
		track_insert(p, size);
		count_allocation(p, size, fallbacks);
	}
	pthread_mutex_unlock(&tracker.lock);
	return p;
}

static void *counting_realloc(void *old, size_t size)
{
	/* The lock is held across the call, so that no other thread can be
	 * handed the old address before the table has forgotten it. */
	pthread_mutex_lock(&tracker.lock);
	uint64_t fallbacks = set_fallbacks();
	void *p = tracker.backend == BACKEND_SET
	              ? pool_set_realloc(tracker.set, old, size)
	          : tracker.backend == BACKEND_POOL
	              ? pool_realloc(tracker.pool, old, size)
	              : realloc(old, size);
	tracker.calls[CALL_REALLOC]++;
	if (old != NULL && (p != NULL || size == 0)) {
		/* Moved or resized (or, for size 0, freed). */
		track_remove(old);
		if (p == NULL)
			tracker.destroyed++;
	} else if (old == NULL && p != NULL) {
		tracker.created++;
	}
	if (p != NULL) {
		track_insert(p, size);
		count_allocation(p, size, fallbacks);
	}
	pthread_mutex_unlock(&tracker.lock);
	return p;
}

static void counting_free(void *p)
{
	pthread_mutex_lock(&tracker.lock);
	if (p == NULL) {
		tracker.calls[CALL_FREE_NULL]++;
	} else {
		tracker.calls[CALL_FREE]++;
		tracker.destroyed++;
		track_remove(p);
		if (tracker.backend == BACKEND_SET)
			pool_set_free(tracker.set, p);
		else if (tracker.backend == BACKEND_POOL)
			pool_free(tracker.pool, p);
		else
			free(p);
	}
	pthread_mutex_unlock(&tracker.lock);
}

/* Allocations in memanalyze's sense: every call that returns memory. */
static uint64_t allocation_calls(void)
{
	return tracker.calls[CALL_MALLOC] + tracker.calls[CALL_CALLOC] +
	       tracker.calls[CALL_REALLOC] + tracker.calls[CALL_STRDUP];
}

/* ------------------------------------------------------------ transfer */

static size_t on_data(char *data, size_t size, size_t count, void *arg)
{
	struct transfer *transfer = arg;
	size_t length = size * count;
	if (!transfer->flowing) {
		transfer->flowing = true;
		pthread_mutex_lock(&tracker.lock);
		transfer->flow_start = allocation_calls();
		pthread_mutex_unlock(&tracker.lock);
	}
	if (transfer->output != NULL &&
	    fwrite(data, 1, length, transfer->output) != length)
		return 0; /* curl then fails with CURLE_WRITE_ERROR */
	transfer->bytes += length;
	return length;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) +
	       (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Runs the downloads on one easy handle (so the connection is reused, as
 * an application would). */
static void download(const struct options *options, struct transfer *transfer)
{
	CURL *easy = curl_easy_init();
	if (easy == NULL) {
		transfer->result = CURLE_OUT_OF_MEMORY;
		return;
	}
	curl_easy_setopt(easy, CURLOPT_URL, options->url);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, transfer);
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, transfer->error);
	curl_easy_setopt(easy, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	if (options->buffer_size > 0)
		curl_easy_setopt(easy, CURLOPT_BUFFERSIZE,
		                 options->buffer_size);

	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int i = 0; i < options->repeat; i++) {
		/* Only the last transfer's body goes to the file. */
		if (transfer->output != NULL && i + 1 < options->repeat) {
			FILE *keep = transfer->output;
			transfer->output = NULL;
			transfer->result = curl_easy_perform(easy);
			transfer->output = keep;
		} else {
			transfer->result = curl_easy_perform(easy);
		}
		if (transfer->flowing) {
			pthread_mutex_lock(&tracker.lock);
			transfer->flow_allocations +=
			    allocation_calls() - transfer->flow_start;
			pthread_mutex_unlock(&tracker.lock);
			transfer->flowing = false;
		}
		if (transfer->result != CURLE_OK)
			break;
	}
	transfer->seconds = seconds_since(&start);
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &transfer->http_status);
	curl_easy_cleanup(easy);
}

/* ------------------------------------------------------------ report */

static void class_label(unsigned class, char *label, size_t size)
{
	unsigned shift = class + FIRST_CLASS_SHIFT;
	if (shift > LAST_CLASS_SHIFT)
		snprintf(label, size, ">%zuK",
		         ((size_t)1 << LAST_CLASS_SHIFT) >> 10);
	else if (shift >= 10)
		snprintf(label, size, "<=%zuK", ((size_t)1 << shift) >> 10);
	else
		snprintf(label, size, "<=%zu", (size_t)1 << shift);
}

static double megabytes_per_second(const struct transfer *transfer)
{
	return transfer->seconds > 0
	           ? (double)transfer->bytes / 1e6 / transfer->seconds
	           : 0.0;
}

static const char *mode_name(const struct options *options, bool upper)
{
	if (options->pool_mode == POOL_LOCKED)
		return upper ? "POOL_LOCKED" : "locked";
	return upper ? "POOL_PER_THREAD" : "per-thread";
}

/* Calls f with the counters of each class of the set that served or
 * fell back for anything, first true on the first call. */
static void set_classes(void (*f)(const pool_stats_t *, bool first))
{
	bool first = true;
	for (size_t block = SET_MIN_BLOCK; block <= SET_MAX_BLOCK; block *= 2) {
		pool_stats_t stats;
		if (pool_set_stats(tracker.set, block, &stats) != 0 ||
		    stats.allocs + stats.fallback_allocs == 0)
			continue;
		f(&stats, first);
		first = false;
	}
}

static void set_class_text(const pool_stats_t *stats, bool first)
{
	if (first)
		printf("  set classes    %-8s %8s %8s %8s\n", "block", "served",
		       "fallback", "peak");
	printf("                 %-8zu %8" PRIu64 " %8" PRIu64 " %8zu\n",
	       stats->block_size, stats->allocs, stats->fallback_allocs,
	       stats->peak_in_use);
}

static void set_report_text(void)
{
	set_classes(set_class_text);
}

static void set_class_json(const pool_stats_t *stats, bool first)
{
	printf("%s{\"block_size\":%zu,\"allocs\":%" PRIu64
	       ",\"fallback_allocs\":%" PRIu64 ",\"peak_in_use\":%zu}",
	       first ? "" : ",", stats->block_size, stats->allocs,
	       stats->fallback_allocs, stats->peak_in_use);
}

/* After the "pool" object, which the tests read as one flat object. */
static void set_report_json(void)
{
	printf(",\"set_classes\":[");
	set_classes(set_class_json);
	printf("]");
}

static void report_text(const struct options *options,
                        const struct transfer *transfer,
                        const pool_stats_t *stats, bool clean)
{
	printf("curl-pool: %s -> %s (%d transfer%s)\n", options->url,
	       options->output != NULL ? options->output : "discarded",
	       options->repeat, options->repeat == 1 ? "" : "s");
	printf("  libcurl        %s\n", libcurl_version);
	if (options->backend == BACKEND_POOL)
		printf("  allocator      shiftpool %s, %zu blocks of %zu B "
		       "(larger requests: malloc)\n",
		       mode_name(options, true), stats->block_count,
		       stats->block_size);
	else if (options->backend == BACKEND_SET)
		printf("  allocator      shiftpool set %s, classes %d B .. %zu "
		       "KiB of %zu bytes each (larger requests: malloc)\n",
		       mode_name(options, true), SET_MIN_BLOCK,
		       SET_MAX_BLOCK >> 10, options->class_bytes);
	else
		printf("  allocator      system (malloc)\n");
	if (transfer->result == CURLE_OK)
		printf("  transfer       %" PRIu64 " bytes in %.4f s: %.1f MB/s"
		       " (HTTP %ld)\n",
		       transfer->bytes, transfer->seconds,
		       megabytes_per_second(transfer), transfer->http_status);
	else
		printf("  transfer       failed: %s (%s)\n",
		       curl_easy_strerror(transfer->result), transfer->error);
	printf("  calls          malloc %" PRIu64 ", calloc %" PRIu64
	       ", realloc %" PRIu64 ", strdup %" PRIu64 ", free %" PRIu64
	       " (and free(NULL) %" PRIu64 ")\n",
	       tracker.calls[CALL_MALLOC], tracker.calls[CALL_CALLOC],
	       tracker.calls[CALL_REALLOC], tracker.calls[CALL_STRDUP],
	       tracker.calls[CALL_FREE], tracker.calls[CALL_FREE_NULL]);
	printf("  allocations    %" PRIu64 ", of which %" PRIu64
	       " while data flowed\n",
	       allocation_calls(), transfer->flow_allocations);
	printf("  peak in use    %zu bytes\n", tracker.peak_bytes);
	if (options->backend != BACKEND_SYSTEM)
		printf("  %-14s served %" PRIu64 ", fallback %" PRIu64
		       "; peak %zu blocks; in use at the end %zu\n",
		       backend_names[options->backend], stats->allocs,
		       stats->fallback_allocs, stats->peak_in_use,
		       stats->in_use);
	printf("  sizes          %-8s %8s %8s\n", "bytes", "calls",
	       options->backend != BACKEND_SYSTEM ? "pool" : "");
	for (unsigned class = 0; class < CLASS_COUNT; class ++) {
		if (tracker.class_calls[class] == 0)
			continue;
		char label[16];
		class_label(class, label, sizeof(label));
		if (options->backend != BACKEND_SYSTEM)
			printf("                 %-8s %8" PRIu64 " %8" PRIu64
			       "\n",
			       label, tracker.class_calls[class],
			       tracker.class_pool[class]);
		else
			printf("                 %-8s %8" PRIu64 "\n", label,
			       tracker.class_calls[class]);
	}
	if (options->backend == BACKEND_SET)
		set_report_text();
	if (clean)
		printf("  leaks          none: %" PRIu64 " allocated, %" PRIu64
		       " freed\n",
		       tracker.created, tracker.destroyed);
	else
		printf("  leaks          %zu live of %" PRIu64
		       " allocated, %" PRIu64 " unknown frees%s\n",
		       tracker.count, tracker.created, tracker.unknown_frees,
		       tracker.table_full ? ", table overflowed" : "");
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void report_json(const struct options *options,
                        const struct transfer *transfer,
                        const pool_stats_t *stats, bool clean)
{
	printf("{\"url\":");
	json_string(options->url);
	printf(
	    ",\"allocator\":\"%s\",\"repeat\":%d,\"ok\":%s,\"bytes\":%" PRIu64
	    ",\"seconds\":%.6f,\"mb_per_s\":%.1f,\"http_status\":%ld"
	    ",\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"live\":%zu"
	    ",\"allocations\":%" PRIu64 ",\"flow_allocations\":%" PRIu64
	    ",\"peak_bytes\":%zu,\"calls\":{",
	    backend_names[options->backend], options->repeat,
	    transfer->result == CURLE_OK ? "true" : "false", transfer->bytes,
	    transfer->seconds, megabytes_per_second(transfer),
	    transfer->http_status, tracker.created, tracker.destroyed,
	    tracker.count, allocation_calls(), transfer->flow_allocations,
	    tracker.peak_bytes);
	for (int i = 0; i < CALL_COUNT; i++)
		printf("%s\"%s\":%" PRIu64, i == 0 ? "" : ",", call_names[i],
		       tracker.calls[i]);
	printf("},\"sizes\":[");
	bool first = true;
	for (unsigned class = 0; class < CLASS_COUNT; class ++) {
		if (tracker.class_calls[class] == 0)
			continue;
		unsigned shift = class + FIRST_CLASS_SHIFT;
		if (shift > LAST_CLASS_SHIFT)
			printf("%s{\"above\":%zu", first ? "" : ",",
			       (size_t)1 << LAST_CLASS_SHIFT);
		else
			printf("%s{\"upto\":%zu", first ? "" : ",",
			       (size_t)1 << shift);
		printf(",\"calls\":%" PRIu64 ",\"pool\":%" PRIu64 "}",
		       tracker.class_calls[class], tracker.class_pool[class]);
		first = false;
	}
	printf("]");
	if (options->backend != BACKEND_SYSTEM)
		printf(",\"pool\":{\"mode\":\"%s\",\"block_size\":%zu,"
		       "\"block_count\":%zu,\"allocs\":%" PRIu64
		       ",\"frees\":%" PRIu64 ",\"fallback_allocs\":%" PRIu64
		       ",\"fallback_frees\":%" PRIu64 ",\"in_use\":%zu"
		       ",\"peak_in_use\":%zu}",
		       mode_name(options, false), stats->block_size,
		       stats->block_count, stats->allocs, stats->frees,
		       stats->fallback_allocs, stats->fallback_frees,
		       stats->in_use, stats->peak_in_use);
	if (options->backend == BACKEND_SET)
		set_report_json();
	printf(",\"clean\":%s}\n", clean ? "true" : "false");
}

/* ------------------------------------------------------------ options */

static void usage(FILE *stream)
{
	fprintf(stream,
	        "usage: curl-pool [options] URL\n"
	        "Downloads URL with libcurl and counts libcurl's allocations.\n"
	        "\n"
	        "  --allocator=pool|pool-set|system  one shiftpool pool "
	        "(default),\n"
	        "                            a pool set, or malloc\n"
	        "  --pool-mode=locked|per-thread  (default locked)\n"
	        "  --block-size=BYTES        pool block size (default %d)\n"
	        "  --blocks=N                pool blocks (default %d)\n"
	        "  --class-bytes=BYTES       pool-set: bytes of each class, "
	        "%d B .. %zu KiB\n"
	        "                            (default %zu)\n"
	        "  --buffer-size=BYTES       CURLOPT_BUFFERSIZE (default: "
	        "libcurl's)\n"
	        "  --repeat=N                N downloads on one handle "
	        "(default 1)\n"
	        "  --output=FILE             write the (last) body to FILE\n"
	        "  --json                    one JSON line instead of text\n"
	        "\n"
	        "Exits 0 when every transfer succeeded and every allocation "
	        "was freed.\n",
	        DEFAULT_BLOCK_SIZE, DEFAULT_BLOCKS, SET_MIN_BLOCK,
	        SET_MAX_BLOCK >> 10, DEFAULT_CLASS_BYTES);
}

/* A decimal number in [min, max], the whole of text. */
static bool parse_number(const char *text, long long min, long long max,
                         long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(text, &end, 10);
	return errno == 0 && end != text && *end == '\0' && *out >= min &&
	       *out <= max;
}

static int parse_options(int argc, char **argv, struct options *options)
{
	static const struct option long_options[] = {
	    {"allocator", required_argument, NULL, 'a'},
	    {"pool-mode", required_argument, NULL, 'm'},
	    {"block-size", required_argument, NULL, 'b'},
	    {"blocks", required_argument, NULL, 'n'},
	    {"class-bytes", required_argument, NULL, 'c'},
	    {"buffer-size", required_argument, NULL, 'B'},
	    {"repeat", required_argument, NULL, 'r'},
	    {"output", required_argument, NULL, 'o'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	long long value;

	*options = (struct options){
	    .backend = BACKEND_POOL,
	    .pool_mode = POOL_LOCKED,
	    .block_size = DEFAULT_BLOCK_SIZE,
	    .blocks = DEFAULT_BLOCKS,
	    .class_bytes = DEFAULT_CLASS_BYTES,
	    .repeat = 1,
	};
	for (int c;
	     (c = getopt_long(argc, argv, "", long_options, NULL)) != -1;) {
		switch (c) {
		case 'a':
			if (strcmp(optarg, "pool") == 0)
				options->backend = BACKEND_POOL;
			else if (strcmp(optarg, "pool-set") == 0)
				options->backend = BACKEND_SET;
			else if (strcmp(optarg, "system") == 0)
				options->backend = BACKEND_SYSTEM;
			else
				goto bad;
			break;
		case 'm':
			if (strcmp(optarg, "locked") == 0)
				options->pool_mode = POOL_LOCKED;
			else if (strcmp(optarg, "per-thread") == 0)
				options->pool_mode = POOL_PER_THREAD;
			else
				goto bad;
			break;
		case 'b':
			if (!parse_number(optarg, 1,
			                  (long long)POOL_MAX_BLOCK_SIZE,
			                  &value))
				goto bad;
			options->block_size = (size_t)value;
			break;
		case 'n':
			if (!parse_number(optarg, 1, 1 << 24, &value))
				goto bad;
			options->blocks = (size_t)value;
			break;
		case 'c':
			if (!parse_number(optarg, 1, (long long)1 << 30,
			                  &value))
				goto bad;
			options->class_bytes = (size_t)value;
			break;
		case 'B':
			/* libcurl takes 1 KiB to 10 MiB. */
			if (!parse_number(optarg, 1, 10 << 20, &value) ||
			    value < 1024)
				goto bad;
			options->buffer_size = (long)value;
			break;
		case 'r':
			if (!parse_number(optarg, 1, MAX_REPEAT, &value))
				goto bad;
			options->repeat = (int)value;
			break;
		case 'o':
			options->output = optarg;
			break;
		case 'j':
			options->json = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default: /* getopt_long() said what is wrong */
			usage(stderr);
			return -1;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return -1;
	}
	options->url = argv[optind];
	return 0;
bad:
	fprintf(stderr, "curl-pool: invalid value '%s'\n", optarg);
	usage(stderr);
	return -1;
}

/* ------------------------------------------------------------ main */

/* Creates the pool or the set the options ask for.  Returns 0 or -1. */
static int backend_open(const struct options *options)
{
	tracker.backend = options->backend;
	if (options->backend == BACKEND_POOL) {
		tracker.pool = pool_init(options->block_size, options->blocks,
		                         options->pool_mode);
		if (tracker.pool == NULL) {
			fprintf(stderr, "curl-pool: pool_init: %s\n",
			        strerror(errno));
			return -1;
		}
	} else if (options->backend == BACKEND_SET) {
		tracker.set =
		    pool_set_init(SET_MIN_BLOCK, SET_MAX_BLOCK,
		                  options->class_bytes, options->pool_mode);
		if (tracker.set == NULL) {
			fprintf(stderr, "curl-pool: pool_set_init: %s\n",
			        strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void backend_close(void)
{
	pool_destroy(tracker.pool);
	pool_set_destroy(tracker.set);
}

int main(int argc, char **argv)
{
	struct options options;
	if (parse_options(argc, argv, &options) != 0)
		return 2;

	if (backend_open(&options) != 0)
		return 1;

	struct transfer transfer = {.result = CURLE_OK};
	if (options.output != NULL) {
		transfer.output = fopen(options.output, "wb");
		if (transfer.output == NULL) {
			fprintf(stderr, "curl-pool: %s: %s\n", options.output,
			        strerror(errno));
			backend_close();
			return 1;
		}
	}

	/* Before any other libcurl call: from here on every allocation of
	 * libcurl passes through the counting callbacks. */
	CURLcode code = curl_global_init_mem(
	    CURL_GLOBAL_DEFAULT, counting_malloc, counting_free,
	    counting_realloc, counting_strdup, counting_calloc);
	if (code != CURLE_OK) {
		fprintf(stderr, "curl-pool: curl_global_init_mem: %s\n",
		        curl_easy_strerror(code));
		if (transfer.output != NULL)
			fclose(transfer.output);
		backend_close();
		return 1;
	}
	/* Asked before the cleanup, which may release what it points to. */
	snprintf(libcurl_version, sizeof(libcurl_version), "%s",
	         curl_version());
	download(&options, &transfer);
	curl_global_cleanup();

	if (transfer.output != NULL && fclose(transfer.output) != 0 &&
	    transfer.result == CURLE_OK) {
		transfer.result = CURLE_WRITE_ERROR;
		snprintf(transfer.error, sizeof(transfer.error), "%s: %s",
		         options.output, strerror(errno));
	}

	pool_stats_t stats = {0};
	if (tracker.backend == BACKEND_POOL)
		pool_stats(tracker.pool, &stats);
	else if (tracker.backend == BACKEND_SET)
		pool_set_stats(tracker.set, 0, &stats);
	bool clean = tracker.count == 0 && tracker.unknown_frees == 0 &&
	             !tracker.table_full &&
	             tracker.created == tracker.destroyed &&
	             (tracker.backend == BACKEND_SYSTEM ||
	              (stats.in_use == 0 &&
	               stats.fallback_allocs == stats.fallback_frees));
	if (options.json)
		report_json(&options, &transfer, &stats, clean);
	else
		report_text(&options, &transfer, &stats, clean);

	backend_close();
	free(tracker.table);
	return transfer.result == CURLE_OK && clean ? 0 : 1;
}
