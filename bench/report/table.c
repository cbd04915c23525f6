/*
 * The table for people: a header with the machine, the method and every
 * parameter, so that a run can be repeated from its own output, then one
 * table per workload and the latency tables.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "report.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "shiftpool.h"

static const struct row *first_of(const struct row *rows, size_t count,
                                  enum workload workload)
{
	size_t i;
	for (i = 0; i < count; i++)
		if (rows[i].c.workload == workload)
			return &rows[i];
	return NULL;
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
