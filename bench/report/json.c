/*
 * The JSON output: the run, the method, the parameters, then every row
 * with its runs, figures and latency points.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "fields.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "shiftpool.h"

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
