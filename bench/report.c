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
		snprintf(buf, size,
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
			snprintf(buf, size,
			         "%zu clients connected, each holding %zu x "
			         "calloc(1, %zu); %zu departures (order %s), "
			         "each followed by an arrival; pool of %zu x %zu "
			         "B blocks; op = one buffer's calloc and its free",
			         c->clients, c->buffers, c->size,
			         c->rounds * c->clients, list, c->blocks,
			         c->block_size);
		else
			snprintf(buf, size,
			         "%zu rounds: %zu clients connect, each allocating "
			         "%zu x calloc(1, %zu), then leave in the order %s, "
			         "freeing them; pool of %zu x %zu B blocks; op = "
			         "one buffer's calloc and its free",
			         c->rounds, c->clients, c->buffers, c->size, list,
			         c->blocks, c->block_size);
		break;
	case WORKLOAD_PARALLEL:
		format_list(&c->lens, ",", list, sizeof(list));
		snprintf(buf, size,
		         "T threads, each for %g s: malloc(8 x len), copy len "
		         "items in, read one, free; len cycles %s; pool of %zu x "
		         "%zu B blocks shared (POOL_SINGLE: one per thread); op "
		         "= one malloc and its free, ns/op = wall time / ops of "
		         "all threads",
		         c->duration, list, c->blocks, c->block_size);
		break;
	case WORKLOAD_SORT:
		snprintf(buf, size,
		         "malloc(8 x len), copy len items in, sort them (the "
		         "benchmark's own quicksort), free; stack = alloca, floor "
		         "= a caller-provided buffer; pool of %zu x %zu B "
		         "blocks; op = one sort with its allocation",
		         c->blocks, c->block_size);
		break;
	case WORKLOAD_HTTP:
		snprintf(buf, size,
		         "examples/httpd --threads=%zu --allocator=X (its own "
		         "process, peers as httpd-tcmalloc ...), loaded for %g s "
		         "by wrk -t%d -c%zu (keep-alive) with GET /bytes/%zu; op "
		         "= one request; latency percentiles from wrk (p99.9 by a "
		         "done() script); RSS = the server's",
		         c->threads, c->duration, HTTP_WRK_THREADS, c->clients,
		         c->size);
		break;
	case WORKLOAD_CURL:
		snprintf(buf, size,
		         "examples/curl-pool (libcurl, allocator by "
		         "curl_global_init_mem()) downloads a %zu MiB sparse "
		         "file from lighttpd on 127.0.0.1; pool = --allocator="
		         "pool (POOL_LOCKED; pool-per-thread: --pool-mode="
		         "per-thread), glibc = --allocator=system; MB = 10^6 B; "
		         "CPU = user + system of curl-pool per GB (10^9 B)",
		         c->size >> 20);
		break;
	case WORKLOAD_XTHREAD:
		snprintf(buf, size,
		         "T producers each calloc(1, %zu) and pass the buffer "
		         "through a bounded queue (%zu slots) to a consumer "
		         "thread, which frees it, for %g s; pool of %zu x %zu B "
		         "blocks; op = one buffer made, passed and freed, ns/op "
		         "= wall time / buffers",
		         c->size, c->queue_depth, c->duration, c->blocks,
		         c->block_size);
		break;
	default:
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
	return total ? 100.0 * (double)row->fallback_allocs / (double)total
	             : 0;
}

static int is_pool(enum allocator allocator)
{
	return allocator == ALLOCATOR_POOL_SINGLE ||
	       allocator == ALLOCATOR_POOL_LOCKED ||
	       allocator == ALLOCATOR_POOL_PER_THREAD;
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
			used += (size_t)snprintf(buf + used, size - used,
			                         "%s%s", used ? ", " : "", symbol);
	}
	return buf;
}

static void table_header(FILE *out, const struct run_info *info,
                         const struct row *rows, size_t count)
{
	const struct options *o = info->options;
	char list[LIST_MAX * 24];
	int printed[ALLOCATOR_COUNT] = {0};
	char symbols[96];
	size_t i;

	fprintf(out, "shiftpool %s benchmark, %s\n", SHIFTPOOL_VERSION_STRING,
	        info->date);
	fprintf(out, "machine:    %s, %ld CPUs online, %s, %s\n", info->cpu,
	        info->cpus, info->system, info->libc);
	fprintf(out, "load:       %s before, %s after (1, 5, 15 minute "
	             "averages)\n",
	        info->load_before, info->load_after);
	fprintf(out, "compiler:   %s\n", info->compiler);
	fprintf(out, "command:    %s\n", info->command);
	fprintf(out, "method:     every run of every row is a process of its "
	             "own, linked with that allocator only;\n"
	             "            %zu warm-up + %zu counted runs per row, "
	             "allocators interleaved run by run;\n"
	             "            each process: set-up and pool_init() "
	             "untimed, one untimed warm-up pass,\n"
	             "            then the timed region (CLOCK_MONOTONIC).\n",
	        o->warmup, o->runs);
	fprintf(out, "columns:    ns/op median [min .. max] of the counted "
	             "runs; ops/s = 1e9 / median;\n"
	             "            x glibc, x tcmalloc, x floor: this row's "
	             "median / that row's, same case (below 1: faster);\n"
	             "            RSS: peak resident set of the row's "
	             "processes, program included;\n"
	             "            fallback: share of a pool's allocations "
	             "served by its fallback (glibc);\n"
	             "            from: the shared object whose entry point "
	             "the row called (dladdr).\n");
	if (o->workloads & ((1u << WORKLOAD_HTTP) | (1u << WORKLOAD_CURL)))
		fprintf(out,
		        "            http, curl: whole programs, one process "
		        "per run; rates (req/s, MB/s) are\n"
		        "            medians [min .. max], x glibc = this "
		        "row's rate / glibc's (above 1: faster).\n");
	format_list(&o->n, ",", list, sizeof(list));
	fprintf(out, "parameters: --seed=%" PRIu64 " --runs=%zu --warmup=%zu "
	             "--n=%s",
	        o->seed, o->runs, o->warmup, list);
	format_list(&o->len, ",", list, sizeof(list));
	fprintf(out, " --len=%s", list);
	format_list(&o->threads, ",", list, sizeof(list));
	fprintf(out, " --threads=%s\n            --block-size=", list);
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
	fprintf(out, " --duration=%g%s\n", o->duration,
	        o->quick ? "\n            --quick: a smoke run, not a measurement"
	                 : "");
	for (i = 0; i < count; i++)
		if (!workload_is_external(rows[i].c.workload))
			break;
	if (i < count)
		fprintf(out, "allocators:\n");
	for (i = 0; i < count; i++) {
		const struct row *row = &rows[i];
		enum allocator a = row->c.allocator;

		/* http, curl: the from/program column says it. */
		if (printed[a] || row->runs == 0 ||
		    workload_is_external(row->c.workload))
			continue;
		printed[a] = 1;
		if (strcmp(row->symbol, "none") == 0)
			fprintf(out, "  %-16s no allocator (%s)\n",
			        allocator_names[a],
			        a == ALLOCATOR_STACK
			            ? "alloca"
			            : "preallocated memory, the same bytes");
		else
			fprintf(out, "  %-16s %s/%s from %s, %s\n",
			        allocator_names[a],
			        allocator_symbols(rows, count, a, symbols,
			                          sizeof(symbols)),
			        row->free_symbol, row->source, row->version);
		if (strcmp(row->fallback_source, "none") != 0)
			fprintf(out, "  %-16s fallback %s from %s\n", "",
			        row->fallback_symbol, row->fallback_source);
	}
	for (i = 0; i < ALLOCATOR_COUNT; i++) {
		size_t j;
		for (j = 0; j < count && !printed[i]; j++)
			if (rows[j].c.allocator == i &&
			    rows[j].status == ROW_NOT_BUILT) {
				fprintf(out, "  %-16s not built: configure did not "
				             "find it\n",
				        allocator_names[i]);
				printed[i] = 1;
			}
	}
	if (info->unoptimized)
		fprintf(out, "WARNING: workers were built without optimisation; "
		             "these numbers mean little.\n");
#ifdef BENCH_SANITIZED
	fprintf(out, "WARNING: built with sanitizers; these numbers mean "
	             "little.\n");
#endif
}

static void table_external(FILE *out, const struct row *rows, size_t count,
                           enum workload w)
{
	size_t i, last_group = (size_t)-1;

	if (w == WORKLOAD_HTTP)
		fprintf(out, "%-14s %-16s %9s %-21s %7s %8s %8s %8s %8s  %s\n",
		        "case", "allocator", "req/s", " [min .. max]",
		        "x glibc", "p50 ms", "p99 ms", "p99.9 ms", "RSS MiB",
		        "from");
	else
		fprintf(out, "%-14s %-16s %9s %-21s %7s %9s %7s %7s %8s  %s\n",
		        "case", "allocator", "MB/s", " [min .. max]", "CPU s/GB",
		        "allocs", "in flow", "pool", "RSS MiB", "program");
	for (i = 0; i < count; i++) {
		const struct row *row = &rows[i];
		char rate[16], lo[16], hi[16], range[40], vg[16], pool[16];

		if (row->c.workload != w)
			continue;
		fprintf(out, "%-14s %-16s ",
		        row->group != last_group ? row->label : "",
		        allocator_names[row->c.allocator]);
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
		/* The slowest run's rate is the min. */
		snprintf(rate, sizeof(rate), "%.0f", 1e9 / row->median);
		snprintf(lo, sizeof(lo), "%.0f", 1e9 / row->max);
		snprintf(hi, sizeof(hi), "%.0f", 1e9 / row->min);
		snprintf(range, sizeof(range), " [%s .. %s]", lo, hi);
		/* Rates: glibc's over this row's, so above 1 is faster. */
		format_ratio(row->vs_glibc > 0 ? 1 / row->vs_glibc : 0, vg,
		             sizeof(vg));
		if (w == WORKLOAD_HTTP) {
			fprintf(out, "%9s %-21s %7s %8.3f %8.3f %8.3f %8.1f  %s\n",
			        rate, range, vg,
			        row->metric_median[METRIC_P50_US] / 1e3,
			        row->metric_median[METRIC_P99_US] / 1e3,
			        row->metric_median[METRIC_P999_US] / 1e3,
			        (double)row->peak_rss_kib / 1024.0, row->source);
			continue;
		}
		if (is_pool(row->c.allocator))
			snprintf(pool, sizeof(pool), "%" PRIu64,
			         row->pool_allocs);
		else
			snprintf(pool, sizeof(pool), "-");
		fprintf(out, "%9s %-21s %7.3f %9" PRIu64 " %7" PRIu64
		             " %7s %8.1f  %s\n",
		        rate, range, row->metric_median[METRIC_CPU_S_PER_GB],
		        row->allocs, row->flow_allocs, pool,
		        (double)row->peak_rss_kib / 1024.0, row->source);
	}
}

void report_table(FILE *out, const struct run_info *info,
                  const struct row *rows, size_t count)
{
	size_t i, w;
	char description[640];

	table_header(out, info, rows, count);
	for (w = 0; w < WORKLOAD_COUNT; w++) {
		const struct row *first = first_of(rows, count, (enum workload)w);
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
			last_group = (size_t)-1;
		}
		if (workload_is_external((enum workload)w)) {
			table_external(out, rows, count, (enum workload)w);
			continue;
		}
		fprintf(out, "%-14s %-16s %9s %-21s %8s %7s %9s %7s %8s %8s  "
		             "%s\n",
		        "case", "allocator", "ns/op", " [min .. max]", "ops/s",
		        "x glibc", "x tcmalloc", "x floor", "RSS MiB", "fallback",
		        "from");
		for (i = 0; i < count; i++) {
			const struct row *row = &rows[i];
			char ns[16], lo[16], hi[16], range[40], rate[16];
			char vg[16], vt[16], vf[16], fallback[16];

			if (row->c.workload != w)
				continue;
			fprintf(out, "%-14s %-16s ",
			        row->group != last_group ? row->label : "",
			        allocator_names[row->c.allocator]);
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
			format_ns(row->median, ns, sizeof(ns));
			format_ns(row->min, lo, sizeof(lo));
			format_ns(row->max, hi, sizeof(hi));
			snprintf(range, sizeof(range), " [%s .. %s]", lo, hi);
			format_rate(1e9 / row->median, rate, sizeof(rate));
			format_ratio(row->vs_glibc, vg, sizeof(vg));
			format_ratio(row->vs_tcmalloc, vt, sizeof(vt));
			format_ratio(row->vs_floor, vf, sizeof(vf));
			if (is_pool(row->c.allocator))
				snprintf(fallback, sizeof(fallback), "%.1f%%",
				         fallback_share(row));
			else
				snprintf(fallback, sizeof(fallback), "-");
			fprintf(out,
			        "%9s %-21s %8s %7s %9s %7s %8.1f %8s  %s%s%s\n",
			        ns, range, rate, vg, vt, vf,
			        (double)row->peak_rss_kib / 1024.0, fallback,
			        row->source, row->note ? "; " : "",
			        row->note ? row->note : "");
		}
	}
	fprintf(out, "\n%zu rows, measured in %.0f s%s\n", count, info->seconds,
	        info->failed ? "; SOME ROWS FAILED" : "");
}

/* ------------------------------------------------------------ CSV */

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

void report_csv(FILE *out, const struct run_info *info,
                const struct row *rows, size_t count)
{
	size_t i, k;
	char list[LIST_MAX * 24];

	(void)info;
	fputs("workload,case,allocator,status,message,note,runs,"
	      "ns_per_op_median,ns_per_op_min,ns_per_op_max,ops_per_s,"
	      "vs_glibc,vs_tcmalloc,vs_floor,peak_rss_kib,pool_allocs,"
	      "fallback_allocs,checksum,symbol,source,free_symbol,free_source,"
	      "fallback_symbol,fallback_source,version,seed,size,block_size,"
	      "blocks,n,len,lens,threads,clients,buffers,rounds,order,rolling,"
	      "queue_depth,repeat,duration_s,ops_per_run,samples_ns_per_op,"
	      "command,latency_p50_us,latency_p99_us,latency_p999_us,"
	      "cpu_s_per_gb,allocations,flow_allocations\n",
	      out);
	for (i = 0; i < count; i++) {
		const struct row *row = &rows[i];
		const struct bench_case *c = &row->c;
		int ok = row->status == ROW_OK;

		csv_string(out, workload_names[c->workload]);
		fputc(',', out);
		csv_string(out, row->label);
		fprintf(out, ",%s,%s,", allocator_names[c->allocator],
		        row_status_name(row->status));
		csv_string(out, row->message);
		fputc(',', out);
		csv_string(out, row->note ? row->note : "");
		fprintf(out, ",%zu,", row->runs);
		if (ok)
			fprintf(out, "%.3f,%.3f,%.3f,%.0f,%.4f,%.4f,%.4f,",
			        row->median, row->min, row->max,
			        1e9 / row->median, row->vs_glibc,
			        row->vs_tcmalloc, row->vs_floor);
		else
			fputs(",,,,,,,", out);
		fprintf(out, "%ld,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
		        row->peak_rss_kib, row->pool_allocs,
		        row->fallback_allocs, row->checksum);
		fprintf(out, "%s,%s,%s,%s,%s,%s,", row->symbol, row->source,
		        row->free_symbol, row->free_source,
		        row->fallback_symbol, row->fallback_source);
		csv_string(out, row->version);
		fprintf(out, ",%" PRIu64 ",%zu,%zu,%zu,%zu,%zu,", c->seed,
		        c->size, c->block_size, c->blocks, c->n, c->len);
		format_list(&c->lens, ";", list, sizeof(list));
		fprintf(out, "%s,%zu,%zu,%zu,%zu,", list, c->threads,
		        c->clients, c->buffers, c->rounds);
		if (c->workload == WORKLOAD_LIGHTTPD) {
			format_order(c, list, sizeof(list));
			for (k = 0; list[k]; k++)
				if (list[k] == ',')
					list[k] = ';';
		} else {
			list[0] = '\0';
		}
		fprintf(out, "%s,%d,%zu,%zu,%g,", list, c->rolling,
		        c->queue_depth, c->repeat, c->duration);
		fprintf(out, "%" PRIu64 ",", row->runs ? row->ops[0] : 0);
		for (k = 0; k < row->runs; k++)
			fprintf(out, "%s%.3f", k ? ";" : "", row->ns_per_op[k]);
		fputc(',', out);
		csv_string(out, row->command);
		if (ok && c->workload == WORKLOAD_HTTP)
			fprintf(out, ",%.0f,%.0f,%.0f,,%" PRIu64 ",",
			        row->metric_median[METRIC_P50_US],
			        row->metric_median[METRIC_P99_US],
			        row->metric_median[METRIC_P999_US], row->allocs);
		else if (ok && c->workload == WORKLOAD_CURL)
			fprintf(out, ",,,,%.4f,%" PRIu64 ",%" PRIu64,
			        row->metric_median[METRIC_CPU_S_PER_GB],
			        row->allocs, row->flow_allocs);
		else
			fputs(",,,,,,", out);
		fputc('\n', out);
	}
}

/* ------------------------------------------------------------ JSON */

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

static void json_size(FILE *out, size_t value)
{
	if (value > 0)
		fprintf(out, "%zu", value);
	else
		fputs("null", out);
}

static void json_number(FILE *out, double value)
{
	if (value > 0)
		fprintf(out, "%.4f", value);
	else
		fputs("null", out);
}

void report_json(FILE *out, const struct run_info *info,
                 const struct row *rows, size_t count)
{
	const struct options *o = info->options;
	char description[640];
	size_t i, k;

	fprintf(out, "{\n  \"benchmark\": \"shiftpool bench\",\n");
	fprintf(out, "  \"shiftpool_version\": ");
	json_string(out, SHIFTPOOL_VERSION_STRING);
	fprintf(out, ",\n  \"date\": ");
	json_string(out, info->date);
	fprintf(out, ",\n  \"command\": ");
	json_string(out, info->command);
	fprintf(out, ",\n  \"machine\": {\"cpu\": ");
	json_string(out, info->cpu);
	fprintf(out, ", \"cpus_online\": %ld, \"system\": ", info->cpus);
	json_string(out, info->system);
	fprintf(out, ", \"libc\": ");
	json_string(out, info->libc);
	fprintf(out, ", \"compiler\": ");
	json_string(out, info->compiler);
	fprintf(out, ", \"load_before\": ");
	json_string(out, info->load_before);
	fprintf(out, ", \"load_after\": ");
	json_string(out, info->load_after);
	fprintf(out, "},\n");
	fprintf(out,
	        "  \"method\": {\"process_per_run\": true, \"warmup_runs\": "
	        "%zu, \"counted_runs\": %zu, \"interleaved\": true, \"clock\": "
	        "\"CLOCK_MONOTONIC\", \"statistic\": \"median\", "
	        "\"seconds\": %.1f, \"quick\": %s, \"optimized\": %s, "
	        "\"sanitized\": %s},\n",
	        o->warmup, o->runs, info->seconds, o->quick ? "true" : "false",
	        info->unoptimized ? "false" : "true",
#ifdef BENCH_SANITIZED
	        "true"
#else
	        "false"
#endif
	);
	fprintf(out, "  \"parameters\": {\"seed\": %" PRIu64 ", \"n\": ",
	        o->seed);
	json_list(out, &o->n);
	fprintf(out, ", \"len\": ");
	json_list(out, &o->len);
	fprintf(out, ", \"threads\": ");
	json_list(out, &o->threads);
	/* null: the workload's default, resolved in each row. */
	fprintf(out, ", \"block_size\": ");
	json_size(out, o->block_size);
	fprintf(out, ", \"blocks\": ");
	json_size(out, o->blocks);
	fprintf(out, ", \"repeat\": ");
	json_size(out, o->repeat);
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
	        "%g},\n",
	        o->rolling ? "true" : "false", o->queue_depth, o->duration);
	fprintf(out, "  \"failed_rows\": %d,\n  \"rows\": [", info->failed);
	for (i = 0; i < count; i++) {
		const struct row *row = &rows[i];
		const struct bench_case *c = &row->c;
		char order[LIST_MAX * 24];

		fprintf(out, "%s\n    {\"workload\": ", i ? "," : "");
		json_string(out, workload_names[c->workload]);
		fprintf(out, ", \"case\": ");
		json_string(out, row->label);
		fprintf(out, ", \"allocator\": ");
		json_string(out, allocator_names[c->allocator]);
		fprintf(out, ", \"status\": ");
		json_string(out, row_status_name(row->status));
		fprintf(out, ", \"message\": ");
		json_string(out, row->message);
		fprintf(out, ", \"note\": ");
		json_string(out, row->note ? row->note : "");
		row_describe(row, description, sizeof(description));
		fprintf(out, ",\n     \"description\": ");
		json_string(out, description);
		fprintf(out, ",\n     \"ns_per_op\": {\"median\": ");
		json_number(out, row->status == ROW_OK ? row->median : 0);
		fprintf(out, ", \"min\": ");
		json_number(out, row->status == ROW_OK ? row->min : 0);
		fprintf(out, ", \"max\": ");
		json_number(out, row->status == ROW_OK ? row->max : 0);
		fprintf(out, ", \"runs\": [");
		for (k = 0; k < row->runs; k++)
			fprintf(out, "%s%.3f", k ? ", " : "", row->ns_per_op[k]);
		fprintf(out, "]}, \"ops_per_s\": ");
		json_number(out, row->status == ROW_OK ? 1e9 / row->median : 0);
		fprintf(out, ", \"ops_per_run\": [");
		for (k = 0; k < row->runs; k++)
			fprintf(out, "%s%" PRIu64, k ? ", " : "", row->ops[k]);
		fprintf(out, "],\n     \"vs_glibc\": ");
		json_number(out, row->status == ROW_OK ? row->vs_glibc : 0);
		fprintf(out, ", \"vs_tcmalloc\": ");
		json_number(out, row->status == ROW_OK ? row->vs_tcmalloc : 0);
		fprintf(out, ", \"vs_floor\": ");
		json_number(out, row->status == ROW_OK ? row->vs_floor : 0);
		fprintf(out,
		        ", \"peak_rss_kib\": %ld, \"pool_allocs\": %" PRIu64
		        ", \"fallback_allocs\": %" PRIu64
		        ", \"checksum\": %" PRIu64 ",\n     \"symbol\": ",
		        row->peak_rss_kib, row->pool_allocs,
		        row->fallback_allocs, row->checksum);
		json_string(out, row->symbol);
		fprintf(out, ", \"source\": ");
		json_string(out, row->source);
		fprintf(out, ", \"free_symbol\": ");
		json_string(out, row->free_symbol);
		fprintf(out, ", \"free_source\": ");
		json_string(out, row->free_source);
		fprintf(out, ", \"fallback_symbol\": ");
		json_string(out, row->fallback_symbol);
		fprintf(out, ", \"fallback_source\": ");
		json_string(out, row->fallback_source);
		fprintf(out, ", \"version\": ");
		json_string(out, row->version);
		fprintf(out,
		        ",\n     \"parameters\": {\"seed\": %" PRIu64
		        ", \"size\": %zu, \"block_size\": %zu, \"blocks\": %zu, "
		        "\"n\": %zu, \"len\": %zu, \"lens\": ",
		        c->seed, c->size, c->block_size, c->blocks, c->n, c->len);
		json_list(out, &c->lens);
		format_order(c, order, sizeof(order));
		fprintf(out,
		        ", \"threads\": %zu, \"clients\": %zu, \"buffers\": %zu, "
		        "\"rounds\": %zu, \"order\": ",
		        c->threads, c->clients, c->buffers, c->rounds);
		json_string(out, c->workload == WORKLOAD_LIGHTTPD ? order : "");
		fprintf(out,
		        ", \"rolling\": %s, \"queue_depth\": %zu, \"repeat\": "
		        "%zu, \"duration_s\": %g},\n     \"command\": ",
		        c->rolling ? "true" : "false", c->queue_depth, c->repeat,
		        c->duration);
		json_string(out, row->command);
		if (row->status == ROW_OK && c->workload == WORKLOAD_HTTP)
			fprintf(out,
			        ",\n     \"http\": {\"requests_per_s\": %.1f, "
			        "\"latency_us\": {\"p50\": %.0f, \"p99\": %.0f, "
			        "\"p999\": %.0f}, \"server_allocations\": %" PRIu64
			        ", \"wrk_threads\": %d, \"connections\": %zu, "
			        "\"server_threads\": %zu, \"body_bytes\": %zu}",
			        1e9 / row->median,
			        row->metric_median[METRIC_P50_US],
			        row->metric_median[METRIC_P99_US],
			        row->metric_median[METRIC_P999_US], row->allocs,
			        HTTP_WRK_THREADS, c->clients, c->threads, c->size);
		else if (row->status == ROW_OK && c->workload == WORKLOAD_CURL)
			fprintf(out,
			        ",\n     \"curl\": {\"mb_per_s\": %.1f, "
			        "\"cpu_s_per_gb\": %.4f, \"allocations\": %" PRIu64
			        ", \"flow_allocations\": %" PRIu64
			        ", \"file_bytes\": %zu}",
			        1e9 / row->median,
			        row->metric_median[METRIC_CPU_S_PER_GB],
			        row->allocs, row->flow_allocs, c->size);
		fputc('}', out);
	}
	fprintf(out, "\n  ]\n}\n");
}
