/*
 * The words of a row every output shares: its status and its workload
 * parameters.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "report.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

const char *row_status_name(enum row_status status)
{
	switch (status) {
	case ROW_OK:
		return "ok";
	case ROW_NOT_BUILT:
		return "not built";
	case ROW_NOT_APPLICABLE:
		return "n/a";
	case ROW_FAILED:
		return "failed";
	case ROW_NOT_RUN:
		return "not run";
	default:
		return "wrong source";
	}
}

void format_list(const struct size_list *list, const char *separator, char *buf,
                 size_t size)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < list->count && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%zu",
		                         i ? separator : "", list->value[i]);
}

void format_order(const struct bench_case *c, char *buf, size_t size)
{
	if (c->order_kind == ORDER_RANDOM)
		snprintf(buf, size, "random");
	else
		format_list(&c->order, ",", buf, size);
}

void row_describe(const struct row *row, char *buf, size_t size)
{
	const struct bench_case *c = &row->c;
	char list[LIST_MAX * 24];

	switch (c->workload) {
	case WORKLOAD_HELD:
		snprintf(buf, size,
		         "N x calloc(1, %zu) held, then freed in allocation "
		         "order; pool of %zu x %zu B blocks (N above %zu falls "
		         "back); op = one calloc and its free",
		         c->size, c->blocks, c->block_size, c->blocks);
		break;
	case WORKLOAD_OVERSIZE:
		snprintf(
		    buf, size,
		    "2N x alternating calloc(1, %zu) and calloc(1, %zu) "
		    "held (4N allocations), then freed in allocation "
		    "order; pool of %zu x %zu B blocks: the %zu B requests "
		    "fall back; op = one calloc and its free",
		    c->size, 2 * c->size, c->blocks, c->block_size,
		    2 * c->size);
		break;
	case WORKLOAD_LIGHTTPD:
		format_order(c, list, sizeof(list));
		if (c->rolling)
			snprintf(
			    buf, size,
			    "%zu clients connected, each holding %zu x "
			    "calloc(1, %zu); %zu departures (order %s), "
			    "each followed by an arrival; pool of %zu x %zu "
			    "B blocks; op = one buffer's calloc and its free",
			    c->clients, c->buffers, c->size,
			    c->rounds * c->clients, list, c->blocks,
			    c->block_size);
		else
			snprintf(
			    buf, size,
			    "%zu rounds: %zu clients connect, each allocating "
			    "%zu x calloc(1, %zu), then leave in the order %s, "
			    "freeing them; pool of %zu x %zu B blocks; op = "
			    "one buffer's calloc and its free",
			    c->rounds, c->clients, c->buffers, c->size, list,
			    c->blocks, c->block_size);
		break;
	case WORKLOAD_PARALLEL:
		format_list(&c->lens, ",", list, sizeof(list));
		snprintf(
		    buf, size,
		    "T threads, each for %g s: malloc(8 x len), copy len "
		    "items in, read one, free; len cycles %s; pool of %zu x "
		    "%zu B blocks shared (POOL_SINGLE: one per thread); op "
		    "= one malloc and its free, ns/op = wall time / ops of "
		    "all threads",
		    c->duration, list, c->blocks, c->block_size);
		break;
	case WORKLOAD_SORT:
		snprintf(
		    buf, size,
		    "malloc(8 x len), copy len items in, sort them (the "
		    "benchmark's own quicksort), free; stack = alloca, floor "
		    "= a caller-provided buffer; pool of %zu x %zu B "
		    "blocks; op = one sort with its allocation",
		    c->blocks, c->block_size);
		break;
	case WORKLOAD_HTTP:
		snprintf(
		    buf, size,
		    "bench/httpd --threads=%zu --allocator=X (its own "
		    "process, peers as httpd-tcmalloc ...), loaded for %g s "
		    "by wrk -t%d -c%zu (keep-alive) with GET /bytes/%zu; op "
		    "= one request; latency percentiles from wrk (p99.9 by a "
		    "done() script); RSS = the server's",
		    c->threads, c->duration, HTTP_WRK_THREADS, c->clients,
		    c->size);
		break;
	case WORKLOAD_CURL:
		snprintf(
		    buf, size,
		    "examples/curl-pool (libcurl, allocator by "
		    "curl_global_init_mem()) downloads a %zu MiB sparse "
		    "file from lighttpd on 127.0.0.1; pool = --allocator="
		    "pool (POOL_LOCKED; pool-per-thread: --pool-mode="
		    "per-thread), glibc = --allocator=system; MB = 10^6 B; "
		    "CPU = user + system of curl-pool per GB (10^9 B)",
		    c->size >> 20);
		break;
	case WORKLOAD_PAIR:
		snprintf(
		    buf, size,
		    "T threads, each for %g s: malloc(%zu), copy %zu bytes "
		    "in (no zeroing), read the last 8, free; pool of %zu x "
		    "%zu B blocks shared (POOL_SINGLE: one per thread); op "
		    "= one malloc and its free, ns/op = thread time (wall "
		    "time x T / ops of all threads), overhead = ns/op - the "
		    "floor's",
		    c->duration, c->size, c->size, c->blocks, c->block_size);
		break;
	case WORKLOAD_BULK:
		snprintf(
		    buf, size,
		    "T threads, each for %g s: %d blocks of %zu B at once "
		    "(rte_mempool_get_bulk, pool_malloc_bulk; the others %d "
		    "single calls), a word written into each and read back, "
		    "all freed at once; pool of %zu x %zu B blocks shared "
		    "(POOL_SINGLE, boost: one per thread); op = one block, "
		    "ns/op = thread time, overhead = ns/op - the floor's",
		    c->duration, BULK_BATCH, c->size, BULK_BATCH, c->blocks,
		    c->block_size);
		break;
	case WORKLOAD_FOOTPRINT:
		snprintf(
		    buf, size,
		    "N blocks of %zu B allocated (malloc; the pools: a pool "
		    "of exactly N), each written whole, all live; overhead = "
		    "RSS growth (RssAnon + RssShmem) from before the "
		    "allocator's set-up to then, beyond N x %zu B, in %% of "
		    "it; set-up = what the set-up alone added; ns/op = one "
		    "allocation and its writing, first touch included",
		    c->size, c->size);
		break;
	case WORKLOAD_XTHREAD:
		snprintf(
		    buf, size,
		    "T producers each calloc(1, %zu) and pass the buffer "
		    "through a bounded queue (%zu slots) to a consumer "
		    "thread, which frees it, for %g s; pool of %zu x %zu B "
		    "blocks; op = one buffer made, passed and freed, ns/op "
		    "= wall time / buffers",
		    c->size, c->queue_depth, c->duration, c->blocks,
		    c->block_size);
		break;
	case WORKLOAD_MIXED:
		snprintf(
		    buf, size,
		    "T threads each keep %d objects live (malloc of sizes "
		    "drawn, seeded, from libcurl 7.88's counted profile, 1 B "
		    "to %zu KiB) and %zu times free a random one and "
		    "allocate the next size in its place, writing its first "
		    "bytes; pool sets (pool_set_malloc/free): classes %d B "
		    "to %zu B, %zu B each (POOL_SINGLE: one per thread); op "
		    "= one malloc and one free, ns/op = wall time / ops of "
		    "all threads; rounding = what the set's classes hand "
		    "out / the bytes asked for, over the live objects",
		    MIXED_WINDOW, MIXED_MAX_SIZE >> 10, c->repeat,
		    MIXED_MIN_BLOCK, c->block_size, c->blocks * c->block_size);
		break;
	default:
		if (workload_is_mt(c->workload))
			mt_case_describe(c, buf, size);
		else
			snprintf(buf, size, "-");
		break;
	}
}

/* 46.9M, 812k */
void format_rate(double per_second, char *buf, size_t size)
{
	if (per_second >= 1e9)
		snprintf(buf, size, "%.2fG", per_second / 1e9);
	else if (per_second >= 1e6)
		snprintf(buf, size, "%.1fM", per_second / 1e6);
	else if (per_second >= 1e3)
		snprintf(buf, size, "%.1fk", per_second / 1e3);
	else
		snprintf(buf, size, "%.0f", per_second);
}

/* Three significant digits. */
void format_ns(double ns, char *buf, size_t size)
{
	if (ns >= 100)
		snprintf(buf, size, "%.0f", ns);
	else if (ns >= 10)
		snprintf(buf, size, "%.1f", ns);
	else
		snprintf(buf, size, "%.2f", ns);
}

void format_ratio(double ratio, char *buf, size_t size)
{
	if (ratio <= 0)
		snprintf(buf, size, "-");
	else if (ratio >= 100)
		snprintf(buf, size, "%.0f", ratio);
	else if (ratio >= 10)
		snprintf(buf, size, "%.1f", ratio);
	else
		snprintf(buf, size, "%.2f", ratio);
}

double fallback_share(const struct row *row)
{
	uint64_t total = row->pool_allocs + row->fallback_allocs;
	return total ? 100.0 * (double)row->fallback_allocs / (double)total : 0;
}

/* The pool's modes and the sets, which report fallbacks. */
int is_pool(enum allocator allocator)
{
	return allocator_is_pool_mode(allocator) ||
	       allocator_is_pool_set(allocator);
}

/* mixed: what a set's classes hand out over what was asked for. */
double mixed_rounding(const struct row *row)
{
	return row->mixed_live_bytes ? (double)row->mixed_rounded_bytes /
	                                   (double)row->mixed_live_bytes
	                             : 0;
}

void print_size_or(FILE *out, size_t value, const char *otherwise)
{
	if (value > 0)
		fprintf(out, "%zu", value);
	else
		fputs(otherwise, out);
}
