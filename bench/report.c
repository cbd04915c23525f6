/*
 * The driver's outputs: a table for people, CSV and JSON for machines.
 * Each carries the machine, the command line and every parameter, so that
 * a run can be repeated from its own output.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "driver.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "shiftpool.h"

/* ------------------------------------------------------------ helpers */

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

static void format_list(const struct size_list *list, const char *separator,
                        char *buf, size_t size)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < list->count && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%zu",
		                         i ? separator : "", list->value[i]);
}

static void format_order(const struct bench_case *c, char *buf, size_t size)
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
static void format_rate(double per_second, char *buf, size_t size)
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
static void format_ns(double ns, char *buf, size_t size)
{
	if (ns >= 100)
		snprintf(buf, size, "%.0f", ns);
	else if (ns >= 10)
		snprintf(buf, size, "%.1f", ns);
	else
		snprintf(buf, size, "%.2f", ns);
}

static void format_ratio(double ratio, char *buf, size_t size)
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

static double fallback_share(const struct row *row)
{
	uint64_t total = row->pool_allocs + row->fallback_allocs;
	return total ? 100.0 * (double)row->fallback_allocs / (double)total : 0;
}

/* The pool's modes and the sets, which report fallbacks. */
static int is_pool(enum allocator allocator)
{
	return allocator_is_pool_mode(allocator) ||
	       allocator_is_pool_set(allocator);
}

/* mixed: what a set's classes hand out over what was asked for. */
static double mixed_rounding(const struct row *row)
{
	return row->mixed_live_bytes ? (double)row->mixed_rounded_bytes /
	                                   (double)row->mixed_live_bytes
	                             : 0;
}

static const struct row *first_of(const struct row *rows, size_t count,
                                  enum workload workload)
{
	size_t i;
	for (i = 0; i < count; i++)
		if (rows[i].c.workload == workload)
			return &rows[i];
	return NULL;
}

/* ------------------------------------------------------------ table */

static void print_size_or(FILE *out, size_t value, const char *otherwise)
{
	if (value > 0)
		fprintf(out, "%zu", value);
	else
		fputs(otherwise, out);
}

/* The allocation functions an allocator's rows called, e.g.
 * "calloc, malloc". */
static const char *allocator_symbols(const struct row *rows, size_t count,
                                     enum allocator allocator, char *buf,
                                     size_t size)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < count; i++) {
		const char *symbol = rows[i].symbol;
		const char *found;
		size_t length = strlen(symbol);

		if (rows[i].c.allocator != allocator || rows[i].runs == 0)
			continue;
		/* Already listed: the whole name, between separators. */
		for (found = strstr(buf, symbol); found != NULL;
		     found = strstr(found + 1, symbol))
			if ((found == buf || found[-1] == ' ') &&
			    (found[length] == ',' || found[length] == '\0'))
				break;
		if (found == NULL && used < size)
			used +=
			    (size_t)snprintf(buf + used, size - used, "%s%s",
			                     used ? ", " : "", symbol);
	}
	return buf;
}

/* What was measured where, and how: the machine, the command, the
 * method and what the columns mean. */
static void header_method(FILE *out, const struct run_info *info)
{
	const struct options *o = info->options;

	fprintf(out, "shiftpool %s benchmark, %s\n", SHIFTPOOL_VERSION_STRING,
	        info->date);
	fprintf(out, "machine:    %s, %ld CPUs online, %s, %s\n", info->cpu,
	        info->cpus, info->system, info->libc);
	fprintf(out,
	        "load:       %s before, %s after (1, 5, 15 minute "
	        "averages)\n",
	        info->load_before, info->load_after);
	fprintf(out, "compiler:   %s\n", info->compiler);
	fprintf(out, "command:    %s\n", info->command);
	fprintf(out,
	        "method:     every run of every row is a process of its "
	        "own, linked with that allocator only;\n"
	        "            %zu warm-up + %zu counted runs per row, "
	        "allocators interleaved run by run;\n",
	        o->warmup, o->runs);
	if (o->cold)
		fprintf(out, "            each process (--cold, the seed's "
		             "method): set-up and pool_init() untimed,\n"
		             "            then at once one timed pass "
		             "(CLOCK_MONOTONIC), no warm-up pass.\n");
	else
		fprintf(out, "            each process: set-up and pool_init() "
		             "untimed, one untimed warm-up pass,\n"
		             "            then the timed region "
		             "(CLOCK_MONOTONIC).\n");
	fprintf(out, "columns:    ns/op median [min .. max] of the counted "
	             "runs; ops/s = 1e9 / median;\n"
	             "            x glibc, x tcmalloc, x floor: this row's "
	             "median / that row's, same case (below 1: faster);\n"
	             "            RSS: peak resident set of the row's "
	             "processes, program included;\n"
	             "            fallback: share of a pool's allocations "
	             "served by its fallback (glibc);\n"
	             "            from: the shared object whose entry point "
	             "the row called (dladdr);\n"
	             "            faults: minor page faults of the row's "
	             "process in the timed region, median.\n");
	if (o->workloads & (1u << WORKLOAD_FOOTPRINT))
		fprintf(out, "            footprint: overhead = RSS growth "
		             "beyond the blocks' bytes, %% of them, median "
		             "[min .. max].\n");
	if (o->workloads & ((1u << WORKLOAD_PAIR) | (1u << WORKLOAD_BULK)))
		fprintf(out,
		        "            pair, bulk: ns/op is thread time (wall "
		        "time x threads / ops), ops/s per thread;\n"
		        "            overhead = ns/op - the floor's, "
		        "what the allocator adds to the copy.\n");
	if (o->workloads & ((1u << WORKLOAD_HTTP) | (1u << WORKLOAD_CURL)))
		fprintf(out,
		        "            http, curl: whole programs, one process "
		        "per run; rates (req/s, MB/s) are\n"
		        "            medians [min .. max], x glibc = this "
		        "row's rate / glibc's (above 1: faster).\n");
}

/* --latency: the timer, as measured before the runs. */
static void header_timer(FILE *out, const struct timer_info *timer)
{
	if (!timer->measured)
		return;
	fprintf(out,
	        "timer:      %s, %.4f ticks per ns (against "
	        "CLOCK_MONOTONIC), steady: %s;\n"
	        "            an empty timed region reads %.0f ticks (%.1f ns) "
	        "at p50, %.0f at least.\n",
	        LATENCY_TIMER, timer->ticks_per_ns,
	        timer->invariant_tsc ? "yes" : "NO (ticks may drift)",
	        timer->empty_p50, timer->empty_p50 / timer->ticks_per_ns,
	        timer->empty_min);
}

/* Every parameter, in the options' own spelling, so that the run can be
 * repeated from its output. */
static void header_parameters(FILE *out, const struct options *o)
{
	char list[LIST_MAX * 24];

	format_list(&o->n, ",", list, sizeof(list));
	fprintf(out,
	        "parameters: --seed=%" PRIu64 " --runs=%zu --warmup=%zu "
	        "--n=%s",
	        o->seed, o->runs, o->warmup, list);
	format_list(&o->len, ",", list, sizeof(list));
	fprintf(out, " --len=%s", list);
	format_list(&o->threads, ",", list, sizeof(list));
	fprintf(out, " --threads=%s", list);
	format_list(&o->sizes, ",", list, sizeof(list));
	fprintf(out, " --sizes=%s%s%s%s\n            --block-size=", list,
	        o->cold ? " --cold" : "", o->latency ? " --latency" : "",
	        o->prefault ? " --prefault" : "");
	print_size_or(out, o->block_size, "default");
	fprintf(out, " --blocks=");
	print_size_or(out, o->blocks, "default");
	fprintf(out, " --clients=%zu --buffers=%zu --rounds=%zu --order=",
	        o->clients, o->buffers, o->rounds);
	if (o->order_kind == ORDER_RANDOM)
		fprintf(out, "random");
	else if (o->order.count == 0)
		fprintf(out, "default");
	else {
		format_list(&o->order, ",", list, sizeof(list));
		fprintf(out, "%s", list);
	}
	fprintf(out, "%s --queue-depth=%zu --repeat=",
	        o->rolling ? " --rolling" : "", o->queue_depth);
	print_size_or(out, o->repeat, "auto");
	fprintf(out, " --duration=%g", o->duration);
	if (o->workloads & MT_WORKLOADS) {
		if (o->live_given)
			format_list(&o->live, ",", list, sizeof(list));
		else
			strcpy(list, "default");
		fprintf(out, "\n            --live=%s --min-size=", list);
		print_size_or(out, o->min_size, "default");
		fprintf(out, " --max-size=");
		print_size_or(out, o->max_size, "default");
		fprintf(out, "; larson ... replace: threads, live objects, "
		             "sizes, --repeat and --rounds\n"
		             "            as each case resolved them, in "
		             "its workload's header and its worker's "
		             "command (--csv)");
	}
	fprintf(out, "%s\n",
	        o->quick
	            ? "\n            --quick: a smoke run, not a measurement"
	            : "");
}

/* One line for the allocator of a measured row: what it called, from
 * which object, and the pool's fallback. */
static void header_allocator(FILE *out, const struct row *row,
                             const struct row *rows, size_t count)
{
	enum allocator a = row->c.allocator;
	char symbols[96];

	if (strcmp(row->symbol, "none") == 0)
		fprintf(out, "  %-22s no allocator (%s)\n", allocator_names[a],
		        a == ALLOCATOR_STACK
		            ? "alloca"
		            : "preallocated memory, the same bytes");
	else
		fprintf(
		    out, "  %-22s %s/%s from %s, %s\n", allocator_names[a],
		    allocator_symbols(rows, count, a, symbols, sizeof(symbols)),
		    row->free_symbol, row->source, row->version);
	if (strcmp(row->fallback_source, "none") != 0)
		fprintf(out, "  %-22s fallback %s from %s\n", "",
		        row->fallback_symbol, row->fallback_source);
	if (a == ALLOCATOR_GLIBC_NOTRIM)
		fprintf(out, "  %-22s in its environment only: %s\n", "",
		        row->note);
}

/* The allocators of the bench workers' rows, measured ones first, then
 * those configure did not find. */
static void header_allocators(FILE *out, const struct row *rows, size_t count)
{
	int printed[ALLOCATOR_COUNT] = {0};
	size_t i, j;

	for (i = 0; i < count; i++)
		if (!workload_is_external(rows[i].c.workload))
			break;
	if (i < count)
		fprintf(out, "allocators:\n");
	for (i = 0; i < count; i++) {
		const struct row *row = &rows[i];

		/* http, curl: the from/program column says it. */
		if (printed[row->c.allocator] || row->runs == 0 ||
		    workload_is_external(row->c.workload))
			continue;
		printed[row->c.allocator] = 1;
		header_allocator(out, row, rows, count);
	}
	for (i = 0; i < ALLOCATOR_COUNT; i++)
		for (j = 0; j < count && !printed[i]; j++)
			if (rows[j].c.allocator == i &&
			    rows[j].status == ROW_NOT_BUILT) {
				fprintf(out, "  %-22s %s\n", allocator_names[i],
				        rows[j].message);
				printed[i] = 1;
			}
}

static void table_header(FILE *out, const struct run_info *info,
                         const struct row *rows, size_t count)
{
	header_method(out, info);
	header_timer(out, &info->timer);
	header_parameters(out, info->options);
	header_allocators(out, rows, count);
	if (info->unoptimized)
		fprintf(out,
		        "WARNING: workers were built without optimisation; "
		        "these numbers mean little.\n");
#ifdef BENCH_SANITIZED
	fprintf(out, "WARNING: built with sanitizers; these numbers mean "
	             "little.\n");
#endif
}

/* A table's column: its title and printf width (negative: left-aligned).
 * The last column of a table is not padded; two spaces set it off. */
struct column {
	const char *title;
	int width;
};

#define COLUMNS_MAX 14

/* A row's cells: cell[i] points into text[i] unless set elsewhere; next
 * is the cell next_cell() gives. */
struct cells {
	const char *cell[COLUMNS_MAX];
	char text[COLUMNS_MAX][48];
	char from[256];
	size_t next;
};

#define CELL_SIZE sizeof(((struct cells *)0)->text[0])

/* The next cell of a row, to write its text into. */
static char *next_cell(struct cells *t)
{
	t->cell[t->next] = t->text[t->next];
	return t->text[t->next++];
}

/* How one workload's table looks and how a row's cells are made; the
 * first two columns, case and allocator, are common to all. */
struct table_kind {
	const struct column *columns;
	size_t count;
	void (*fill)(const struct row *row, struct cells *t);
};

static double rss_mib(const struct row *row)
{
	return (double)row->peak_rss_kib / 1024.0;
}

static void format_range(const char *lo, const char *hi, char *buf, size_t size)
{
	snprintf(buf, size, " [%s .. %s]", lo, hi);
}

/* A count: exact below a million, then 1.2M. */
static void format_count(double count, char *buf, size_t size)
{
	if (count >= 1e6)
		snprintf(buf, size, "%.1fM", count / 1e6);
	else
		snprintf(buf, size, "%.0f", count);
}

/* The RSS and, for the pools, the share of fallbacks. */
static void rss_fallback_cells(const struct row *row, struct cells *t)
{
	snprintf(next_cell(t), CELL_SIZE, "%.1f", rss_mib(row));
	if (is_pool(row->c.allocator))
		snprintf(next_cell(t), CELL_SIZE, "%.1f%%",
		         fallback_share(row));
	else
		snprintf(next_cell(t), CELL_SIZE, "-");
}

/* The last cell: where the allocator came from, and the row's note. */
static void from_cell(const struct row *row, struct cells *t)
{
	snprintf(t->from, sizeof(t->from), "%s%s%s", row->source,
	         row->note ? "; " : "", row->note ? row->note : "");
	t->cell[t->next++] = t->from;
}

/* The bench workers' rows; pair's also have the overhead, mixed's the
 * live bytes and the sets' rounding. */
static void local_cells(const struct row *row, struct cells *t)
{
	char lo[16], hi[16];

	format_ns(row->median, next_cell(t), CELL_SIZE);
	format_ns(row->min, lo, sizeof(lo));
	format_ns(row->max, hi, sizeof(hi));
	format_range(lo, hi, next_cell(t), CELL_SIZE);
	if (row->c.workload == WORKLOAD_PAIR ||
	    row->c.workload == WORKLOAD_BULK) {
		if (row->has_overhead)
			snprintf(next_cell(t), CELL_SIZE, "%.2f",
			         row->overhead);
		else
			snprintf(next_cell(t), CELL_SIZE, "-");
	}
	format_count(row->faults_median, next_cell(t), CELL_SIZE);
	format_rate(1e9 / row->median, next_cell(t), CELL_SIZE);
	format_ratio(row->vs_glibc, next_cell(t), CELL_SIZE);
	format_ratio(row->vs_tcmalloc, next_cell(t), CELL_SIZE);
	format_ratio(row->vs_floor, next_cell(t), CELL_SIZE);
	rss_fallback_cells(row, t);
	if (row->c.workload == WORKLOAD_MIXED) {
		snprintf(next_cell(t), CELL_SIZE, "%.0f",
		         (double)row->mixed_live_bytes / 1024.0);
		if (allocator_is_pool_set(row->c.allocator))
			snprintf(next_cell(t), CELL_SIZE, "%.3f",
			         mixed_rounding(row));
		else
			snprintf(next_cell(t), CELL_SIZE, "-");
	}
	from_cell(row, t);
}

/* http, curl: rates, not times; the slowest run's rate is the min. */
static void external_cells(const struct row *row, struct cells *t)
{
	char lo[16], hi[16];

	snprintf(t->text[2], sizeof(t->text[2]), "%.0f", 1e9 / row->median);
	snprintf(lo, sizeof(lo), "%.0f", 1e9 / row->max);
	snprintf(hi, sizeof(hi), "%.0f", 1e9 / row->min);
	format_range(lo, hi, t->text[3], sizeof(t->text[3]));
	snprintf(t->text[8], sizeof(t->text[8]), "%.1f", rss_mib(row));
	t->cell[9] = row->source;
}

static void http_cells(const struct row *row, struct cells *t)
{
	int k;

	external_cells(row, t);
	/* Rates: glibc's over this row's, so above 1 is faster. */
	format_ratio(row->vs_glibc > 0 ? 1 / row->vs_glibc : 0, t->text[4],
	             sizeof(t->text[4]));
	for (k = 0; k < 3; k++)
		snprintf(t->text[5 + k], sizeof(t->text[5 + k]), "%.3f",
		         row->metric_median[METRIC_P50_US + k] / 1e3);
}

static void curl_cells(const struct row *row, struct cells *t)
{
	external_cells(row, t);
	snprintf(t->text[4], sizeof(t->text[4]), "%.3f",
	         row->metric_median[METRIC_CPU_S_PER_GB]);
	snprintf(t->text[5], sizeof(t->text[5]), "%" PRIu64, row->allocs);
	snprintf(t->text[6], sizeof(t->text[6]), "%" PRIu64, row->flow_allocs);
	if (is_pool(row->c.allocator))
		snprintf(t->text[7], sizeof(t->text[7]), "%" PRIu64,
		         row->pool_allocs);
	else
		snprintf(t->text[7], sizeof(t->text[7]), "-");
}

static const struct column local_columns[] = {
    {"case", -14},  {"allocator", -22}, {"ns/op", 9},    {" [min .. max]", -21},
    {"faults", 8},  {"ops/s", 8},       {"x glibc", 7},  {"x tcmalloc", 9},
    {"x floor", 7}, {"RSS MiB", 8},     {"fallback", 8}, {"from", 0},
};

static const struct column pair_columns[] = {
    {"case", -14},     {"allocator", -22},
    {"ns/op", 9},      {" [min .. max]", -21},
    {"overhead", 8},   {"faults", 8},
    {"ops/s", 8},      {"x glibc", 7},
    {"x tcmalloc", 9}, {"x floor", 7},
    {"RSS MiB", 8},    {"fallback", 8},
    {"from", 0},
};

static const struct column mixed_columns[] = {
    {"case", -14},          {"allocator", -22}, {"ns/op", 9},
    {" [min .. max]", -21}, {"faults", 8},      {"ops/s", 8},
    {"x glibc", 7},         {"x tcmalloc", 9},  {"x floor", 7},
    {"RSS MiB", 8},         {"fallback", 8},    {"live KiB", 8},
    {"rounding", 8},        {"from", 0},
};

/* footprint: the overhead instead of times. */
static void footprint_cells(const struct row *row, struct cells *t)
{
	snprintf(next_cell(t), CELL_SIZE, "%.2f%%", row->footprint_median);
	snprintf(next_cell(t), CELL_SIZE, " [%.2f .. %.2f]", row->footprint_min,
	         row->footprint_max);
	snprintf(next_cell(t), CELL_SIZE, "%.0f", row->footprint_open_median);
	snprintf(next_cell(t), CELL_SIZE, "%.1f",
	         (double)row->footprint_bytes / (1 << 20));
	format_ns(row->median, next_cell(t), CELL_SIZE);
	rss_fallback_cells(row, t);
	from_cell(row, t);
}

static const struct column footprint_columns[] = {
    {"case", -14},      {"allocator", -22},
    {"overhead", 9},    {" [min .. max]", -18},
    {"set-up KiB", 10}, {"blocks MiB", 10},
    {"ns/op", 8},       {"RSS MiB", 8},
    {"fallback", 8},    {"from", 0},
};

static const struct column http_columns[] = {
    {"case", -14},  {"allocator", -22}, {"req/s", 9},  {" [min .. max]", -21},
    {"x glibc", 7}, {"p50 ms", 8},      {"p99 ms", 8}, {"p99.9 ms", 8},
    {"RSS MiB", 8}, {"from", 0},
};

static const struct column curl_columns[] = {
    {"case", -14},   {"allocator", -22}, {"MB/s", 9},    {" [min .. max]", -21},
    {"CPU s/GB", 7}, {"allocs", 9},      {"in flow", 7}, {"pool", 7},
    {"RSS MiB", 8},  {"program", 0},
};

#define TABLE_KIND(columns, fill)                                              \
	{                                                                      \
		columns, sizeof(columns) / sizeof(columns[0]), fill            \
	}

static const struct table_kind local_table =
    TABLE_KIND(local_columns, local_cells);
static const struct table_kind pair_table =
    TABLE_KIND(pair_columns, local_cells);
static const struct table_kind http_table =
    TABLE_KIND(http_columns, http_cells);
static const struct table_kind curl_table =
    TABLE_KIND(curl_columns, curl_cells);
static const struct table_kind footprint_table =
    TABLE_KIND(footprint_columns, footprint_cells);
static const struct table_kind mixed_table =
    TABLE_KIND(mixed_columns, local_cells);

static void table_line(FILE *out, const struct column *columns, size_t count,
                       const char *const *cells)
{
	size_t i;

	for (i = 0; i + 1 < count; i++)
		fprintf(out, "%s%*s", i ? " " : "", columns[i].width, cells[i]);
	fprintf(out, "  %s\n", cells[count - 1]);
}

/* One workload's table: the header, then a line per row. */
static void table_rows(FILE *out, const struct row *rows, size_t count,
                       enum workload w)
{
	const struct table_kind *kind =
	    w == WORKLOAD_HTTP                         ? &http_table
	    : w == WORKLOAD_CURL                       ? &curl_table
	    : w == WORKLOAD_PAIR || w == WORKLOAD_BULK ? &pair_table
	    : w == WORKLOAD_FOOTPRINT                  ? &footprint_table
	    : w == WORKLOAD_MIXED                      ? &mixed_table
	                                               : &local_table;
	const struct column *columns = kind->columns;
	size_t i, j, last_group = (size_t)-1;
	struct cells t;

	for (j = 0; j < kind->count; j++)
		t.cell[j] = columns[j].title;
	table_line(out, columns, kind->count, t.cell);
	for (i = 0; i < count; i++) {
		const struct row *row = &rows[i];

		if (row->c.workload != w)
			continue;
		fprintf(out, "%*s %*s ", columns[0].width,
		        row->group != last_group ? row->label : "",
		        columns[1].width, allocator_names[row->c.allocator]);
		last_group = row->group;
		if (row->status != ROW_OK) {
			fprintf(out, "%s%s\n",
			        row->status == ROW_FAILED ||
			                row->status == ROW_WRONG_SOURCE
			            ? "FAILED: "
			            : "",
			        row->message);
			continue;
		}
		for (j = 0; j < kind->count; j++)
			t.cell[j] = t.text[j];
		t.next = 2;
		kind->fill(row, &t);
		table_line(out, columns + 2, kind->count - 2, t.cell + 2);
	}
}

/* Whether a workload has rows with --latency's histograms. */
static int has_latency(const struct row *rows, size_t count, enum workload w)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (rows[i].c.workload == w && rows[i].status == ROW_OK &&
		    rows[i].latency[LATENCY_ALLOC] != NULL)
			return 1;
	return 0;
}

/* --latency: a line per row and side (allocation, free), ns. */
static void latency_table(FILE *out, const struct row *rows, size_t count,
                          enum workload w)
{
	static const struct column columns[] = {
	    {"case", -14}, {"allocator", -22}, {"call", -5},
	    {"p50", 8},    {"p99", 8},         {"p99.9", 8},
	    {"p99.99", 8}, {"max", 9},         {"calls", 0},
	};
	const size_t n = sizeof(columns) / sizeof(columns[0]);
	size_t i, j, last_group = (size_t)-1;
	struct cells t;
	int side, k;

	if (!has_latency(rows, count, w))
		return;
	fprintf(out, "  latency of one call, ns (the timer's own cost "
	             "included), all counted runs:\n");
	for (j = 0; j < n; j++)
		t.cell[j] = columns[j].title;
	table_line(out, columns, n, t.cell);
	for (i = 0; i < count; i++) {
		const struct row *row = &rows[i];

		if (row->c.workload != w || row->status != ROW_OK ||
		    row->latency[LATENCY_ALLOC] == NULL)
			continue;
		for (side = 0; side < LATENCY_SIDES; side++) {
			t.next = 0;
			snprintf(next_cell(&t), CELL_SIZE, "%s",
			         row->group != last_group ? row->label : "");
			snprintf(next_cell(&t), CELL_SIZE, "%s",
			         side == 0 ? allocator_names[row->c.allocator]
			                   : "");
			snprintf(next_cell(&t), CELL_SIZE, "%s",
			         latency_side_names[side]);
			for (k = 0; k < LATENCY_POINTS; k++)
				format_ns(row->latency_ns[side][k],
				          next_cell(&t), CELL_SIZE);
			snprintf(next_cell(&t), CELL_SIZE, "%" PRIu64,
			         row->latency[side]->count);
			table_line(out, columns, n, t.cell);
			last_group = row->group;
		}
	}
}

void report_table(FILE *out, const struct run_info *info,
                  const struct row *rows, size_t count)
{
	size_t i, w;
	char description[640];

	table_header(out, info, rows, count);
	for (w = 0; w < WORKLOAD_COUNT; w++) {
		const struct row *first =
		    first_of(rows, count, (enum workload)w);
		size_t last_group = (size_t)-1;

		if (first == NULL)
			continue;
		row_describe(first, description, sizeof(description));
		fprintf(out, "\n%s: %s\n", workload_names[w], description);
		if (w == WORKLOAD_HELD || w == WORKLOAD_OVERSIZE ||
		    w == WORKLOAD_SORT) {
			fprintf(out, "  timed repetitions per run:");
			for (i = 0; i < count; i++)
				if (rows[i].c.workload == w &&
				    rows[i].group != last_group) {
					fprintf(out, " %s: %zu", rows[i].label,
					        rows[i].c.repeat);
					last_group = rows[i].group;
				}
			fprintf(out, "\n");
		}
		table_rows(out, rows, count, (enum workload)w);
		latency_table(out, rows, count, (enum workload)w);
	}
	fprintf(out, "\n%zu rows, measured in %.0f s%s\n", count, info->seconds,
	        info->failed ? "; SOME ROWS FAILED" : "");
}

/* ------------------------------------------------------------ CSV, JSON */

/* The fields CSV and JSON share are written by one function each: CSV
 * puts a comma between them, JSON its key. */
enum format { FORMAT_CSV, FORMAT_JSON };

static void csv_string(FILE *out, const char *s)
{
	if (strpbrk(s, ",\"\n") == NULL) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

static void json_list(FILE *out, const struct size_list *list)
{
	size_t i;

	fputc('[', out);
	for (i = 0; i < list->count; i++)
		fprintf(out, "%s%zu", i ? ", " : "", list->value[i]);
	fputc(']', out);
}

static void json_number(FILE *out, double value)
{
	if (value > 0)
		fprintf(out, "%.4f", value);
	else
		fputs("null", out);
}

/* Before a field: CSV a comma, JSON ", " and the key; the first of a
 * group has no separator. */
static void field_key(FILE *out, enum format f, const char *key, int first)
{
	if (f == FORMAT_JSON)
		fprintf(out, "%s\"%s\": ", first ? "" : ", ", key);
	else if (!first)
		fputc(',', out);
}

static void field_text(FILE *out, enum format f, const char *key, int first,
                       const char *value)
{
	field_key(out, f, key, first);
	if (f == FORMAT_JSON)
		json_string(out, value);
	else
		csv_string(out, value);
}

static void field_size(FILE *out, enum format f, const char *key, size_t value)
{
	field_key(out, f, key, 0);
	fprintf(out, "%zu", value);
}

/* JSON true or false, CSV 1 or 0. */
static void field_bool(FILE *out, enum format f, const char *key, int value)
{
	field_key(out, f, key, 0);
	if (f == FORMAT_JSON)
		fputs(value ? "true" : "false", out);
	else
		fprintf(out, "%d", value ? 1 : 0);
}

/* The row's workload, case, allocator, status, message and note. */
static void row_identity(FILE *out, enum format f, const struct row *row)
{
	field_text(out, f, "workload", 1, workload_names[row->c.workload]);
	field_text(out, f, "case", 0, row->label);
	field_text(out, f, "allocator", 0, allocator_names[row->c.allocator]);
	field_text(out, f, "status", 0, row_status_name(row->status));
	field_text(out, f, "message", 0, row->message);
	field_text(out, f, "note", 0, row->note ? row->note : "");
}

/* Where the row's allocation functions came from. */
static const struct {
	const char *key;
	size_t offset;
} row_sources[] = {
    {"symbol", offsetof(struct row, symbol)},
    {"source", offsetof(struct row, source)},
    {"free_symbol", offsetof(struct row, free_symbol)},
    {"free_source", offsetof(struct row, free_source)},
    {"fallback_symbol", offsetof(struct row, fallback_symbol)},
    {"fallback_source", offsetof(struct row, fallback_source)},
    {"version", offsetof(struct row, version)},
};

static void row_source_fields(FILE *out, enum format f, const struct row *row)
{
	size_t k;

	for (k = 0; k < sizeof(row_sources) / sizeof(row_sources[0]); k++)
		field_text(out, f, row_sources[k].key, k == 0,
		           (const char *)row + row_sources[k].offset);
}

/* Every parameter of the row's case. */
static void case_fields(FILE *out, enum format f, const struct bench_case *c)
{
	char text[LIST_MAX * 24];
	size_t k;

	field_key(out, f, "seed", 1);
	fprintf(out, "%" PRIu64, c->seed);
	field_size(out, f, "size", c->size);
	field_size(out, f, "block_size", c->block_size);
	field_size(out, f, "blocks", c->blocks);
	field_size(out, f, "n", c->n);
	field_size(out, f, "len", c->len);
	field_key(out, f, "lens", 0);
	if (f == FORMAT_JSON) {
		json_list(out, &c->lens);
	} else {
		format_list(&c->lens, ";", text, sizeof(text));
		fputs(text, out);
	}
	field_size(out, f, "threads", c->threads);
	field_size(out, f, "clients", c->clients);
	field_size(out, f, "buffers", c->buffers);
	field_size(out, f, "rounds", c->rounds);
	if (c->workload == WORKLOAD_LIGHTTPD)
		format_order(c, text, sizeof(text));
	else
		text[0] = '\0';
	if (f == FORMAT_CSV)
		for (k = 0; text[k]; k++)
			if (text[k] == ',')
				text[k] = ';';
	field_text(out, f, "order", 0, text);
	field_bool(out, f, "rolling", c->rolling);
	field_size(out, f, "queue_depth", c->queue_depth);
	field_size(out, f, "repeat", c->repeat);
	field_key(out, f, "duration_s", 0);
	fprintf(out, "%g", c->duration);
	field_bool(out, f, "cold", c->cold);
}

/* The counted runs' ns per operation. */
static void print_samples(FILE *out, const struct row *row,
                          const char *separator)
{
	size_t k;

	for (k = 0; k < row->runs; k++)
		fprintf(out, "%s%.3f", k ? separator : "", row->ns_per_op[k]);
}

/* ------------------------------------------------------------ CSV */

/* The keys of the latency points in CSV and JSON. */
static const char *const latency_keys[LATENCY_POINTS] = {"p50", "p99", "p999",
                                                         "p9999", "max"};

static void csv_header(FILE *out)
{
	int side, k;

	fputs("workload,case,allocator,status,message,note,runs,"
	      "ns_per_op_median,ns_per_op_min,ns_per_op_max,ops_per_s,"
	      "vs_glibc,vs_tcmalloc,vs_floor,peak_rss_kib,pool_allocs,"
	      "fallback_allocs,checksum,symbol,source,free_symbol,free_source,"
	      "fallback_symbol,fallback_source,version,seed,size,block_size,"
	      "blocks,n,len,lens,threads,clients,buffers,rounds,order,rolling,"
	      "queue_depth,repeat,duration_s,cold,ops_per_run,"
	      "samples_ns_per_op,command,latency_p50_us,latency_p99_us,"
	      "latency_p999_us,cpu_s_per_gb,allocations,flow_allocations,"
	      "minor_faults,minor_faults_runs,overhead_ns,"
	      "footprint_overhead_pct,footprint_setup_kib,footprint_bytes,"
	      "mixed_live_bytes,mixed_rounded_bytes,mixed_rounding",
	      out);
	for (side = 0; side < LATENCY_SIDES; side++) {
		for (k = 0; k < LATENCY_POINTS; k++)
			fprintf(out, ",%s_%s_ns", latency_side_names[side],
			        latency_keys[k]);
		fprintf(out, ",%s_calls", latency_side_names[side]);
	}
	fputc('\n', out);
}

/* The figures of http and curl rows; empty fields for the others. */
static void csv_external(FILE *out, const struct row *row)
{
	int ok = row->status == ROW_OK;

	if (ok && row->c.workload == WORKLOAD_HTTP)
		fprintf(out, ",%.0f,%.0f,%.0f,,%" PRIu64 ",",
		        row->metric_median[METRIC_P50_US],
		        row->metric_median[METRIC_P99_US],
		        row->metric_median[METRIC_P999_US], row->allocs);
	else if (ok && row->c.workload == WORKLOAD_CURL)
		fprintf(out, ",,,,%.4f,%" PRIu64 ",%" PRIu64,
		        row->metric_median[METRIC_CPU_S_PER_GB], row->allocs,
		        row->flow_allocs);
	else
		fputs(",,,,,,", out);
}

/* Page faults, pair's overhead and --latency's percentiles; empty where
 * a row has none. */
static void csv_faults_latency(FILE *out, const struct row *row)
{
	int ok = row->status == ROW_OK, side, k;
	size_t run;

	if (ok && !workload_is_external(row->c.workload))
		fprintf(out, ",%.0f,", row->faults_median);
	else
		fputs(",,", out);
	for (run = 0; run < row->runs; run++)
		fprintf(out, "%s%.0f", run ? ";" : "", row->faults[run]);
	if (ok && row->has_overhead)
		fprintf(out, ",%.3f", row->overhead);
	else
		fputc(',', out);
	if (ok && row->c.workload == WORKLOAD_FOOTPRINT)
		fprintf(out, ",%.3f,%.0f,%" PRIu64, row->footprint_median,
		        row->footprint_open_median, row->footprint_bytes);
	else
		fputs(",,,", out);
	if (ok && row->c.workload == WORKLOAD_MIXED)
		fprintf(out, ",%" PRIu64, row->mixed_live_bytes);
	else
		fputc(',', out);
	if (ok && row->c.workload == WORKLOAD_MIXED &&
	    allocator_is_pool_set(row->c.allocator))
		fprintf(out, ",%" PRIu64 ",%.4f", row->mixed_rounded_bytes,
		        mixed_rounding(row));
	else
		fputs(",,", out);
	for (side = 0; side < LATENCY_SIDES; side++) {
		if (!ok || row->latency[side] == NULL) {
			fputs(",,,,,,", out);
			continue;
		}
		for (k = 0; k < LATENCY_POINTS; k++)
			fprintf(out, ",%.1f", row->latency_ns[side][k]);
		fprintf(out, ",%" PRIu64, row->latency[side]->count);
	}
}

void report_csv(FILE *out, const struct run_info *info, const struct row *rows,
                size_t count)
{
	size_t i;

	(void)info;
	csv_header(out);
	for (i = 0; i < count; i++) {
		const struct row *row = &rows[i];

		row_identity(out, FORMAT_CSV, row);
		fprintf(out, ",%zu,", row->runs);
		if (row->status == ROW_OK)
			fprintf(out, "%.3f,%.3f,%.3f,%.0f,%.4f,%.4f,%.4f,",
			        row->median, row->min, row->max,
			        1e9 / row->median, row->vs_glibc,
			        row->vs_tcmalloc, row->vs_floor);
		else
			fputs(",,,,,,,", out);
		fprintf(out, "%ld,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
		        row->peak_rss_kib, row->pool_allocs,
		        row->fallback_allocs, row->checksum);
		row_source_fields(out, FORMAT_CSV, row);
		fputc(',', out);
		case_fields(out, FORMAT_CSV, &row->c);
		fprintf(out, ",%" PRIu64 ",", row->runs ? row->ops[0] : 0);
		print_samples(out, row, ";");
		fputc(',', out);
		csv_string(out, row->command);
		csv_external(out, row);
		csv_faults_latency(out, row);
		fputc('\n', out);
	}
}

/* ------------------------------------------------------------ JSON */

/* A number that only an OK row has; null otherwise. */
static void json_ok_number(FILE *out, const char *key, int first,
                           const struct row *row, double value)
{
	field_key(out, FORMAT_JSON, key, first);
	json_number(out, row->status == ROW_OK ? value : 0);
}

/* The run as a whole: what, when, the command and the machine. */
static void json_run(FILE *out, const struct run_info *info)
{
	fprintf(out, "{\n  \"benchmark\": \"shiftpool bench\",\n  ");
	field_text(out, FORMAT_JSON, "shiftpool_version", 1,
	           SHIFTPOOL_VERSION_STRING);
	fprintf(out, ",\n  ");
	field_text(out, FORMAT_JSON, "date", 1, info->date);
	fprintf(out, ",\n  ");
	field_text(out, FORMAT_JSON, "command", 1, info->command);
	fprintf(out, ",\n  \"machine\": {");
	field_text(out, FORMAT_JSON, "cpu", 1, info->cpu);
	fprintf(out, ", \"cpus_online\": %ld", info->cpus);
	field_text(out, FORMAT_JSON, "system", 0, info->system);
	field_text(out, FORMAT_JSON, "libc", 0, info->libc);
	field_text(out, FORMAT_JSON, "compiler", 0, info->compiler);
	field_text(out, FORMAT_JSON, "load_before", 0, info->load_before);
	field_text(out, FORMAT_JSON, "load_after", 0, info->load_after);
	fprintf(out, "},\n");
}

static void json_method(FILE *out, const struct run_info *info)
{
	const struct options *o = info->options;

	fprintf(out,
	        "  \"method\": {\"process_per_run\": true, \"warmup_runs\": "
	        "%zu, \"counted_runs\": %zu, \"interleaved\": true, \"clock\": "
	        "\"CLOCK_MONOTONIC\", \"statistic\": \"median\", "
	        "\"seconds\": %.1f, \"quick\": %s, \"cold\": %s, "
	        "\"optimized\": %s, \"sanitized\": %s",
	        o->warmup, o->runs, info->seconds, o->quick ? "true" : "false",
	        o->cold ? "true" : "false",
	        info->unoptimized ? "false" : "true",
#ifdef BENCH_SANITIZED
	        "true"
#else
	        "false"
#endif
	);
	if (info->timer.measured)
		fprintf(out,
		        ", \"timer\": {\"kind\": \"%s\", \"ticks_per_ns\": "
		        "%.6f, \"empty_region_p50_ticks\": %.0f, "
		        "\"empty_region_min_ticks\": %.0f, \"steady\": %s, "
		        "\"histogram\": \"log-linear, %u buckets per power of "
		        "two\"}",
		        LATENCY_TIMER, info->timer.ticks_per_ns,
		        info->timer.empty_p50, info->timer.empty_min,
		        info->timer.invariant_tsc ? "true" : "false",
		        LATENCY_SUB);
	fprintf(out, "},\n");
}

/* The options as given; null for a size means the workload's default,
 * resolved in each row. */
static void json_parameters(FILE *out, const struct options *o)
{
	fprintf(out,
	        "  \"parameters\": {\"seed\": %" PRIu64 ", \"n\": ", o->seed);
	json_list(out, &o->n);
	fprintf(out, ", \"len\": ");
	json_list(out, &o->len);
	fprintf(out, ", \"threads\": ");
	json_list(out, &o->threads);
	fprintf(out, ", \"sizes\": ");
	json_list(out, &o->sizes);
	fprintf(out, ", \"block_size\": ");
	print_size_or(out, o->block_size, "null");
	fprintf(out, ", \"blocks\": ");
	print_size_or(out, o->blocks, "null");
	fprintf(out, ", \"repeat\": ");
	print_size_or(out, o->repeat, "null");
	fprintf(out,
	        ", \"clients\": %zu, \"buffers\": %zu, \"rounds\": %zu, "
	        "\"order\": ",
	        o->clients, o->buffers, o->rounds);
	if (o->order_kind == ORDER_RANDOM)
		fprintf(out, "\"random\"");
	else if (o->order.count == 0)
		fprintf(out, "null");
	else
		json_list(out, &o->order);
	fprintf(out,
	        ", \"rolling\": %s, \"queue_depth\": %zu, \"duration_s\": "
	        "%g, \"cold\": %s, \"latency\": %s},\n",
	        o->rolling ? "true" : "false", o->queue_depth, o->duration,
	        o->cold ? "true" : "false", o->latency ? "true" : "false");
}

/* A row's times, their ratios, memory, counters and checksum. */
static void json_row_figures(FILE *out, const struct row *row)
{
	size_t k;

	fprintf(out, ",\n     \"ns_per_op\": {");
	json_ok_number(out, "median", 1, row, row->median);
	json_ok_number(out, "min", 0, row, row->min);
	json_ok_number(out, "max", 0, row, row->max);
	fprintf(out, ", \"runs\": [");
	print_samples(out, row, ", ");
	fprintf(out, "]}");
	json_ok_number(out, "ops_per_s", 0, row, 1e9 / row->median);
	fprintf(out, ", \"ops_per_run\": [");
	for (k = 0; k < row->runs; k++)
		fprintf(out, "%s%" PRIu64, k ? ", " : "", row->ops[k]);
	fprintf(out, "],\n     ");
	json_ok_number(out, "vs_glibc", 1, row, row->vs_glibc);
	json_ok_number(out, "vs_tcmalloc", 0, row, row->vs_tcmalloc);
	json_ok_number(out, "vs_floor", 0, row, row->vs_floor);
	fprintf(out,
	        ", \"peak_rss_kib\": %ld, \"pool_allocs\": %" PRIu64
	        ", \"fallback_allocs\": %" PRIu64 ", \"checksum\": %" PRIu64
	        ",\n     ",
	        row->peak_rss_kib, row->pool_allocs, row->fallback_allocs,
	        row->checksum);
	if (!workload_is_external(row->c.workload)) {
		fprintf(out, "\"minor_faults\": {\"median\": ");
		if (row->status == ROW_OK)
			fprintf(out, "%.0f", row->faults_median);
		else
			fputs("null", out);
		fprintf(out, ", \"runs\": [");
		for (k = 0; k < row->runs; k++)
			fprintf(out, "%s%.0f", k ? ", " : "", row->faults[k]);
		fprintf(out, "]}, ");
	}
	if (row->c.workload == WORKLOAD_FOOTPRINT && row->status == ROW_OK) {
		fprintf(
		    out,
		    "\"footprint\": {\"overhead_pct\": %.3f, \"runs_pct\": [",
		    row->footprint_median);
		for (k = 0; k < row->runs; k++)
			fprintf(out, "%s%.3f", k ? ", " : "",
			        row->footprint[k]);
		fprintf(out,
		        "], \"setup_kib\": %.0f, \"block_bytes\": %" PRIu64
		        "}, ",
		        row->footprint_open_median, row->footprint_bytes);
	}
	if (row->c.workload == WORKLOAD_MIXED && row->status == ROW_OK) {
		fprintf(out, "\"mixed\": {\"live_bytes\": %" PRIu64,
		        row->mixed_live_bytes);
		if (allocator_is_pool_set(row->c.allocator))
			fprintf(out,
			        ", \"rounded_bytes\": %" PRIu64
			        ", \"rounding\": %.4f",
			        row->mixed_rounded_bytes, mixed_rounding(row));
		fprintf(out, "}, ");
	}
	if (row->c.workload == WORKLOAD_PAIR ||
	    row->c.workload == WORKLOAD_BULK) {
		fprintf(out, "\"overhead_ns\": ");
		if (row->status == ROW_OK && row->has_overhead)
			fprintf(out, "%.4f", row->overhead);
		else
			fputs("null", out);
		fprintf(out, ", ");
	}
}

/* --latency: the percentiles of each side's calls, ns. */
static void json_latency(FILE *out, const struct row *row)
{
	int side, k;

	if (row->status != ROW_OK || row->latency[LATENCY_ALLOC] == NULL)
		return;
	fprintf(out, ",\n     \"latency_ns\": {");
	for (side = 0; side < LATENCY_SIDES; side++) {
		fprintf(out, "%s\"%s\": {", side ? ", " : "",
		        latency_side_names[side]);
		for (k = 0; k < LATENCY_POINTS; k++)
			fprintf(out, "\"%s\": %.1f, ", latency_keys[k],
			        row->latency_ns[side][k]);
		fprintf(out, "\"calls\": %" PRIu64 "}",
		        row->latency[side]->count);
	}
	fputc('}', out);
}

/* http and curl rows: their own figures, in an object of their own. */
static void json_external(FILE *out, const struct row *row)
{
	const struct bench_case *c = &row->c;

	if (row->status != ROW_OK)
		return;
	if (c->workload == WORKLOAD_HTTP)
		fprintf(out,
		        ",\n     \"http\": {\"requests_per_s\": %.1f, "
		        "\"latency_us\": {\"p50\": %.0f, \"p99\": %.0f, "
		        "\"p999\": %.0f}, \"server_allocations\": %" PRIu64
		        ", \"wrk_threads\": %d, \"connections\": %zu, "
		        "\"server_threads\": %zu, \"body_bytes\": %zu}",
		        1e9 / row->median, row->metric_median[METRIC_P50_US],
		        row->metric_median[METRIC_P99_US],
		        row->metric_median[METRIC_P999_US], row->allocs,
		        HTTP_WRK_THREADS, c->clients, c->threads, c->size);
	else if (c->workload == WORKLOAD_CURL)
		fprintf(
		    out,
		    ",\n     \"curl\": {\"mb_per_s\": %.1f, "
		    "\"cpu_s_per_gb\": %.4f, \"allocations\": %" PRIu64
		    ", \"flow_allocations\": %" PRIu64 ", \"file_bytes\": %zu}",
		    1e9 / row->median, row->metric_median[METRIC_CPU_S_PER_GB],
		    row->allocs, row->flow_allocs, c->size);
}

static void json_row(FILE *out, const struct row *row)
{
	char description[640];

	fputc('{', out);
	row_identity(out, FORMAT_JSON, row);
	row_describe(row, description, sizeof(description));
	fprintf(out, ",\n     ");
	field_text(out, FORMAT_JSON, "description", 1, description);
	json_row_figures(out, row);
	row_source_fields(out, FORMAT_JSON, row);
	fprintf(out, ",\n     \"parameters\": {");
	case_fields(out, FORMAT_JSON, &row->c);
	fprintf(out, "},\n     ");
	field_text(out, FORMAT_JSON, "command", 1, row->command);
	json_external(out, row);
	json_latency(out, row);
	fputc('}', out);
}

void report_json(FILE *out, const struct run_info *info, const struct row *rows,
                 size_t count)
{
	size_t i;

	json_run(out, info);
	json_method(out, info);
	json_parameters(out, info->options);
	fprintf(out, "  \"failed_rows\": %d,\n  \"rows\": [", info->failed);
	for (i = 0; i < count; i++) {
		fprintf(out, "%s\n    ", i ? "," : "");
		json_row(out, &rows[i]);
	}
	fprintf(out, "\n  ]\n}\n");
}
