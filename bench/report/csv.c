/*
 * The CSV output: one line per row with its parameters, figures and
 * counted runs.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "fields.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
