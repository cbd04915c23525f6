/*
 * --plot=DIR: PNG charts drawn by gnuplot (the one configure found, or
 * $GNUPLOT).  For each workload, ns per operation of every allocator at
 * every point of its sweep (bars: median, whiskers: min and max; sort as
 * lines over len); for parallel and xthread also operations per second
 * against the thread count; with --latency, for each case that has them,
 * the percentiles of the calls (latency-WORKLOAD-CASE.png).  The data go
 * inline into the gnuplot script, so DIR receives only the PNGs.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "report.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef BENCH_GNUPLOT
#define BENCH_GNUPLOT ""
#endif

/* ------------------------------------------------------------ constants */

/* One colour per allocator in every chart; the pool's modes in reds. */
static const char *const allocator_colours[ALLOCATOR_COUNT] = {
    [ALLOCATOR_GLIBC] = "#4C72B0",
    [ALLOCATOR_GLIBC_NOTRIM] = "#64B5CD",
    [ALLOCATOR_TCMALLOC] = "#DD8452",
    [ALLOCATOR_JEMALLOC] = "#55A868",
    [ALLOCATOR_MIMALLOC] = "#8172B3",
    [ALLOCATOR_GSLICE] = "#CCB974",
    [ALLOCATOR_DPDK] = "#2CA02C",
    [ALLOCATOR_BOOST] = "#17BECF",
    [ALLOCATOR_POOL_SINGLE] = "#F4A3A3",
    [ALLOCATOR_POOL_LOCKED] = "#E0443E",
    [ALLOCATOR_POOL_PER_THREAD] = "#8B1A1A",
    [ALLOCATOR_POOL_SINGLE_INLINE] = "#FF7F0E",
    [ALLOCATOR_POOL_PER_THREAD_INLINE] = "#A0522D",
    [ALLOCATOR_POOL_SET_SINGLE] = "#F7B6D2",
    [ALLOCATOR_POOL_SET_LOCKED] = "#D6619E",
    [ALLOCATOR_POOL_SET_PER_THREAD] = "#7B2356",
    [ALLOCATOR_STACK] = "#937860",
    [ALLOCATOR_FLOOR] = "#404040",
};

static const char *const sweep_axis[WORKLOAD_COUNT] = {
    [WORKLOAD_HELD] = "N: blocks held at once",
    [WORKLOAD_OVERSIZE] = "N (4N allocations held at once)",
    [WORKLOAD_LIGHTTPD] = "departure order",
    [WORKLOAD_PARALLEL] = "T: threads",
    [WORKLOAD_SORT] = "len: items of 8 bytes",
    [WORKLOAD_XTHREAD] = "producer + consumer threads",
    [WORKLOAD_PAIR] = "request size, threads",
    [WORKLOAD_BULK] = "block size, threads",
    [WORKLOAD_MIXED] = "T: threads",
    [WORKLOAD_LARSON] = "T: threads",
    [WORKLOAD_XMALLOC] = "producer + consumer threads",
    [WORKLOAD_GLIBC_THREAD] = "T: threads",
    [WORKLOAD_ALLOC_TEST] = "T: threads",
    [WORKLOAD_REPLACE] = "T: threads, H: blocks held by each",
};

/* ------------------------------------------------------------ helpers */

/* Allocators with at least one measured row in the workload. */
static unsigned measured_allocators(const struct row *rows, size_t count,
                                    enum workload workload)
{
	unsigned set = 0;
	size_t i;

	for (i = 0; i < count; i++)
		if (rows[i].c.workload == workload && rows[i].status == ROW_OK)
			set |= 1u << rows[i].c.allocator;
	return set;
}

static const struct row *find_row(const struct row *rows, size_t count,
                                  size_t group, enum allocator allocator)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (rows[i].group == group && rows[i].c.allocator == allocator)
			return &rows[i];
	return NULL;
}

/* The groups (cases) of a workload, in order; returns how many. */
static size_t workload_groups(const struct row *rows, size_t count,
                              enum workload workload, size_t *groups,
                              size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < count && n < max; i++)
		if (rows[i].c.workload == workload &&
		    (n == 0 || groups[n - 1] != rows[i].group))
			groups[n++] = rows[i].group;
	return n;
}

static const struct row *group_first(const struct row *rows, size_t count,
                                     size_t group)
{
	size_t i;
	for (i = 0; i < count; i++)
		if (rows[i].group == group)
			return &rows[i];
	return NULL;
}

/* The sweep's numeric value of a group: N, len, or threads (xthread:
 * producers and consumers together). */
static double group_x(const struct row *row)
{
	switch (row->c.workload) {
	case WORKLOAD_HELD:
	case WORKLOAD_OVERSIZE:
		return (double)row->c.n;
	case WORKLOAD_SORT:
		return (double)row->c.len;
	case WORKLOAD_XTHREAD:
	case WORKLOAD_XMALLOC:
		return 2.0 * (double)row->c.threads;
	default:
		return (double)row->c.threads;
	}
}

/* A chart's headline: what one operation of the workload is. */
static void headline(const struct row *row, char *buf, size_t size)
{
	const struct bench_case *c = &row->c;

	switch (c->workload) {
	case WORKLOAD_HELD:
		snprintf(
		    buf, size,
		    "held: N x calloc(1, %zu) held, then freed; pool of %zu "
		    "x %zu B",
		    c->size, c->blocks, c->block_size);
		break;
	case WORKLOAD_OVERSIZE:
		snprintf(
		    buf, size,
		    "oversize: 2N x (calloc(1, %zu) + calloc(1, %zu)) held, "
		    "then freed; pool of %zu x %zu B",
		    c->size, 2 * c->size, c->blocks, c->block_size);
		break;
	case WORKLOAD_LIGHTTPD:
		snprintf(
		    buf, size,
		    "lighttpd: %zu %s of %zu clients x %zu x calloc(1, %zu); "
		    "pool of %zu x %zu B",
		    c->rolling ? c->rounds * c->clients : c->rounds,
		    c->rolling ? "departures" : "rounds", c->clients,
		    c->buffers, c->size, c->blocks, c->block_size);
		break;
	case WORKLOAD_PARALLEL:
		snprintf(buf, size,
		         "parallel: T threads malloc(8 x len), copy, free; len "
		         "%zu..%zu",
		         c->lens.value[0], c->lens.value[c->lens.count - 1]);
		break;
	case WORKLOAD_SORT:
		snprintf(buf, size, "sort: malloc(8 x len), copy, sort, free");
		break;
	case WORKLOAD_XTHREAD:
		snprintf(
		    buf, size,
		    "xthread: calloc(1, %zu) passed through a queue, freed "
		    "by another thread",
		    c->size);
		break;
	case WORKLOAD_PAIR:
		snprintf(buf, size,
		         "pair: T threads malloc(size), copy size bytes, free; "
		         "thread time per op");
		break;
	case WORKLOAD_BULK:
		snprintf(buf, size,
		         "bulk: T threads take %d blocks at once, write, free "
		         "them at once; thread time per block",
		         BULK_BATCH);
		break;
	case WORKLOAD_MIXED:
		snprintf(buf, size,
		         "mixed: T threads each free a random one of %d live "
		         "objects and malloc libcurl's sizes in its place",
		         MIXED_WINDOW);
		break;
	case WORKLOAD_LARSON:
	case WORKLOAD_XMALLOC:
	case WORKLOAD_GLIBC_THREAD:
	case WORKLOAD_ALLOC_TEST:
		snprintf(buf, size,
		         "%s: modelled on the published benchmark of that "
		         "name; ns per operation",
		         workload_names[c->workload]);
		break;
	case WORKLOAD_REPLACE:
		snprintf(buf, size,
		         "replace: T threads each free a random one of H live "
		         "%zu B blocks and malloc another",
		         c->size);
		break;
	default:
		snprintf(buf, size, "-");
		break;
	}
}

static void terminal(FILE *gp, const char *dir, const char *name)
{
	fprintf(gp,
	        "reset\n"
	        "set terminal pngcairo size 1280,720 enhanced font "
	        "'Sans,12'\n"
	        "set output '%s/%s.png'\n"
	        "set grid ytics lc rgb '#d0d0d0'\n"
	        "set border 3\n"
	        "set tics nomirror\n"
	        "set key outside right top vertical Left reverse noautotitle "
	        "spacing 1.2\n"
	        "set datafile missing '?'\n",
	        dir, name);
}

/* The data's spread: log scale when the largest median is 30 times the
 * smallest. */
static int wants_log_scale(const struct row *rows, size_t count,
                           enum workload workload)
{
	double lo = 0, hi = 0;
	size_t i;

	for (i = 0; i < count; i++) {
		const struct row *row = &rows[i];
		if (row->c.workload != workload || row->status != ROW_OK)
			continue;
		if (lo == 0 || row->min < lo)
			lo = row->min;
		if (row->max > hi)
			hi = row->max;
	}
	return lo > 0 && hi / lo > 30;
}

static void subtitle(char *buf, size_t size, const struct run_info *info)
{
	snprintf(buf, size,
	         "{/*0.8 median of %zu runs, whiskers min..max; %s, %ld CPUs; "
	         "lower is better}",
	         info->options->runs, info->cpu, info->cpus);
}

/* ------------------------------------------------------------ charts */

/* Bars: one cluster per case, one bar per allocator. */
static void chart_bars(FILE *gp, const char *dir, const struct run_info *info,
                       const struct row *rows, size_t count,
                       enum workload workload)
{
	unsigned set = measured_allocators(rows, count, workload);
	size_t groups[LIST_MAX], n, g, column = 2;
	int a, first = 1;
	char sub[256], head[256];

	n = workload_groups(rows, count, workload, groups, LIST_MAX);
	terminal(gp, dir, workload_names[workload]);
	fprintf(gp, "$data << EOD\n");
	for (g = 0; g < n; g++) {
		const struct row *leader = group_first(rows, count, groups[g]);
		fprintf(gp, "\"%s\"", leader->label);
		for (a = 0; a < ALLOCATOR_COUNT; a++) {
			const struct row *row;
			if (!(set & (1u << a)))
				continue;
			row =
			    find_row(rows, count, groups[g], (enum allocator)a);
			if (row != NULL && row->status == ROW_OK)
				fprintf(gp, " %g %g %g", row->median, row->min,
				        row->max);
			else
				fprintf(gp, " ? ? ?");
		}
		fprintf(gp, "\n");
	}
	fprintf(gp, "EOD\n");
	subtitle(sub, sizeof(sub), info);
	headline(group_first(rows, count, groups[0]), head, sizeof(head));
	fprintf(gp,
	        "set title \"%s: ns per operation\\n%s\"\n"
	        "set style data histogram\n"
	        "set style histogram errorbars gap 2 lw 1\n"
	        "set style fill solid 0.9 border rgb '#202020'\n"
	        "set boxwidth 0.9\n"
	        "set xlabel '%s'\n"
	        "set ylabel 'ns per operation%s'\n",
	        head, sub, sweep_axis[workload],
	        wants_log_scale(rows, count, workload) ? " (log scale)" : "");
	if (wants_log_scale(rows, count, workload))
		fprintf(gp, "set logscale y\n");
	else
		fprintf(gp, "set yrange [0:*]\n");
	/* The clusters sit at 0 .. n - 1. */
	fprintf(gp, "set xrange [-0.6:%g]\n", (double)n - 0.4);
	fprintf(gp, "plot ");
	for (a = 0; a < ALLOCATOR_COUNT; a++) {
		if (!(set & (1u << a)))
			continue;
		fprintf(gp,
		        "%s$data using %zu:%zu:%zu%s title '%s' lc rgb '%s'",
		        first ? "" : ", \\\n     ", column, column + 1,
		        column + 2, first ? ":xtic(1)" : "", allocator_names[a],
		        allocator_colours[a]);
		column += 3;
		first = 0;
	}
	fprintf(gp, "\n");
}

/* Lines over the sweep's numeric value: ns/op (sort) or ops/s (threads). */
static void chart_lines(FILE *gp, const char *dir, const char *name,
                        const struct run_info *info, const struct row *rows,
                        size_t count, enum workload workload,
                        int operations_per_second)
{
	unsigned set = measured_allocators(rows, count, workload);
	size_t groups[LIST_MAX], n, g, column = 2;
	int a, first = 1;
	char sub[256], head[256];

	n = workload_groups(rows, count, workload, groups, LIST_MAX);
	terminal(gp, dir, name);
	headline(group_first(rows, count, groups[0]), head, sizeof(head));
	fprintf(gp, "$data << EOD\n");
	for (g = 0; g < n; g++) {
		const struct row *leader = group_first(rows, count, groups[g]);
		fprintf(gp, "%g", group_x(leader));
		for (a = 0; a < ALLOCATOR_COUNT; a++) {
			const struct row *row;
			if (!(set & (1u << a)))
				continue;
			row =
			    find_row(rows, count, groups[g], (enum allocator)a);
			if (row == NULL || row->status != ROW_OK)
				fprintf(gp, " ? ? ?");
			else if (operations_per_second)
				fprintf(gp, " %g %g %g", 1e3 / row->median,
				        1e3 / row->max, 1e3 / row->min);
			else
				fprintf(gp, " %g %g %g", row->median, row->min,
				        row->max);
		}
		fprintf(gp, "\n");
	}
	fprintf(gp, "EOD\n");
	subtitle(sub, sizeof(sub), info);
	if (operations_per_second) {
		char *lower = strstr(sub, "lower is better");
		if (lower != NULL)
			memcpy(lower, "higher is better", 16);
		fprintf(gp,
		        "set title \"%s: operations per second\\n%s\"\n"
		        "set ylabel 'million operations per second (all "
		        "threads)'\n"
		        "set yrange [0:*]\n"
		        "set xtics (",
		        head, sub);
		for (g = 0; g < n; g++)
			fprintf(gp, "%s%g", g ? ", " : "",
			        group_x(group_first(rows, count, groups[g])));
		fprintf(gp, ")\nset logscale x 2\n");
	} else {
		fprintf(gp,
		        "set title \"%s: ns per operation\\n%s\"\n"
		        "set ylabel 'ns per operation (log scale)'\n"
		        "set logscale xy\n"
		        "set xtics (",
		        head, sub);
		for (g = 0; g < n; g++)
			fprintf(gp, "%s%g", g ? ", " : "",
			        group_x(group_first(rows, count, groups[g])));
		fprintf(gp, ")\n");
	}
	fprintf(gp,
	        "set xlabel '%s'\nset offsets graph 0.03, graph 0.03, "
	        "0, 0\nplot ",
	        sweep_axis[workload]);
	for (a = 0; a < ALLOCATOR_COUNT; a++) {
		if (!(set & (1u << a)))
			continue;
		fprintf(
		    gp,
		    "%s$data using 1:%zu:%zu:%zu with yerrorlines lw 2 pt 7 "
		    "ps 0.8 lc rgb '%s' title '%s'",
		    first ? "" : ", \\\n     ", column, column + 1, column + 2,
		    allocator_colours[a], allocator_names[a]);
		column += 3;
		first = 0;
	}
	fprintf(gp, "\n");
}

/* ------------------------------------------------------------ latency */

/* A file name's part from a case's label: "fixed order" -> "fixed-order",
 * "N=50" -> "N-50". */
static void label_slug(const char *label, char *buf, size_t size)
{
	size_t n = 0;

	for (; *label != '\0' && n + 1 < size; label++)
		buf[n++] = isalnum((unsigned char)*label) || *label == '+'
		               ? *label
		               : '-';
	buf[n] = '\0';
}

/* One line of the percentile chart: x = the number of nines of the
 * quantile (-log10(1 - q)), y = ns, from p50 to the largest call. */
static void latency_series(FILE *gp, const struct latency_histogram *h,
                           double ticks_per_ns)
{
	double top = log10((double)h->count), x;

	for (x = log10(2.0); x < top; x += 0.05)
		fprintf(gp, "%g %g\n", x,
		        latency_quantile(h, 1 - pow(10, -x)) / ticks_per_ns);
	fprintf(gp, "%g %g\n", top > log10(2.0) ? top : log10(2.0),
	        (double)h->max / ticks_per_ns);
}

/* The range of a case's percentile lines, ns: the least p50 and the
 * slowest call, of either side. */
static void latency_range(const struct row *rows, size_t count, size_t group,
                          double ticks_per_ns, double *lo, double *hi)
{
	size_t i;
	int side;

	*lo = 0;
	*hi = 0;
	for (i = 0; i < count; i++)
		for (side = 0; side < LATENCY_SIDES; side++) {
			const struct latency_histogram *h =
			    rows[i].latency[side];
			double p50;

			if (rows[i].group != group || h == NULL ||
			    rows[i].status != ROW_OK)
				continue;
			p50 = latency_quantile(h, 0.5) / ticks_per_ns;
			if (*lo == 0 || p50 < *lo)
				*lo = p50;
			if ((double)h->max / ticks_per_ns > *hi)
				*hi = (double)h->max / ticks_per_ns;
		}
}

/* The percentiles of one case's calls, allocation and free side by side
 * on the same scales, one line per allocator, both axes logarithmic. */
static void chart_latency(FILE *gp, const char *dir,
                          const struct run_info *info, const struct row *rows,
                          size_t count, size_t group)
{
	const struct row *leader = group_first(rows, count, group);
	char name[96], slug[48], head[256];
	double lo, hi;
	size_t i;
	int side, first;

	label_slug(leader->label, slug, sizeof(slug));
	snprintf(name, sizeof(name), "latency-%s-%s",
	         workload_names[leader->c.workload], slug);
	terminal(gp, dir, name);
	for (i = 0; i < count; i++)
		for (side = 0; side < LATENCY_SIDES; side++) {
			if (rows[i].group != group ||
			    rows[i].status != ROW_OK ||
			    rows[i].latency[side] == NULL)
				continue;
			fprintf(gp, "$%s_%zu << EOD\n",
			        latency_side_names[side], i);
			latency_series(gp, rows[i].latency[side],
			               info->timer.ticks_per_ns);
			fprintf(gp, "EOD\n");
		}
	headline(leader, head, sizeof(head));
	latency_range(rows, count, group, info->timer.ticks_per_ns, &lo, &hi);
	/* Room for the key above the lines. */
	fprintf(gp, "set yrange [%g:%g]\n", lo / 1.5, hi * 30);
	fprintf(gp,
	        "set multiplot layout 1,2 title \"%s, %s: the time of one "
	        "call\\n{/*0.8 all %zu counted runs; %s, %ld CPUs; the "
	        "timer's own %.0f ns included}\"\n"
	        "set logscale y\n"
	        "set xrange [0.2:*]\n"
	        "set xtics ('p50' 0.301, 'p90' 1, 'p99' 2, 'p99.9' 3, "
	        "'p99.99' 4, 'p99.999' 5, 'p99.9999' 6)\n"
	        "set xlabel 'percentile (the last point of a line: the "
	        "slowest call)'\n"
	        "set ylabel 'ns (log scale)'\n"
	        "set format y '10^{%%L}'\n"
	        "set key inside left top Left reverse\n"
	        /* The same plot area in both halves, whatever the labels. */
	        "set lmargin 12\nset rmargin 3\n",
	        head, leader->label, info->options->runs, info->cpu, info->cpus,
	        info->timer.empty_p50 / info->timer.ticks_per_ns);
	for (side = 0; side < LATENCY_SIDES; side++) {
		fprintf(gp, "set title '%s'\nplot ",
		        side == LATENCY_ALLOC ? "allocation" : "free");
		first = 1;
		for (i = 0; i < count; i++) {
			if (rows[i].group != group ||
			    rows[i].status != ROW_OK ||
			    rows[i].latency[side] == NULL)
				continue;
			fprintf(gp,
			        "%s$%s_%zu using 1:2 with lines lw 2 lc rgb "
			        "'%s' title '%s'",
			        first ? "" : ", \\\n     ",
			        latency_side_names[side], i,
			        allocator_colours[rows[i].c.allocator],
			        allocator_names[rows[i].c.allocator]);
			first = 0;
		}
		fprintf(gp, "\n");
	}
	fprintf(gp, "unset multiplot\n");
	fprintf(stderr, "bench: wrote %s/%s.png\n", dir, name);
}

/* Every case with --latency's histograms gets its chart. */
static void charts_latency(FILE *gp, const char *dir,
                           const struct run_info *info, const struct row *rows,
                           size_t count)
{
	size_t i, last_group = (size_t)-1;

	if (!info->timer.measured)
		return;
	for (i = 0; i < count; i++)
		if (rows[i].group != last_group &&
		    rows[i].latency[LATENCY_ALLOC] != NULL) {
			chart_latency(gp, dir, info, rows, count,
			              rows[i].group);
			last_group = rows[i].group;
		}
}

/* ------------------------------------------------------------ entry */

int plot_all(const char *dir, const struct run_info *info,
             const struct row *rows, size_t count)
{
	const char *gnuplot = getenv("GNUPLOT");
	char name[64];
	FILE *gp;
	int w, status;

	if (gnuplot == NULL || gnuplot[0] == '\0')
		gnuplot = BENCH_GNUPLOT;
	if (gnuplot[0] == '\0') {
		fprintf(stderr, "bench: --plot needs gnuplot, which configure "
		                "did not find (set GNUPLOT=path)\n");
		return -1;
	}
	if (strchr(dir, '\'') != NULL) {
		fprintf(stderr, "bench: --plot: a directory name with a quote "
		                "is not supported\n");
		return -1;
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	gp = popen(gnuplot, "w");
	if (gp == NULL) {
		fprintf(stderr, "bench: cannot run %s: %s\n", gnuplot,
		        strerror(errno));
		return -1;
	}
	for (w = 0; w < WORKLOAD_COUNT; w++) {
		/* http, curl and footprint: figures of another kind, in
		 * the table. */
		if (workload_is_external((enum workload)w) ||
		    w == WORKLOAD_FOOTPRINT ||
		    measured_allocators(rows, count, (enum workload)w) == 0)
			continue;
		if (w == WORKLOAD_SORT)
			chart_lines(gp, dir, workload_names[w], info, rows,
			            count, (enum workload)w, 0);
		else
			chart_bars(gp, dir, info, rows, count,
			           (enum workload)w);
		if (w == WORKLOAD_PARALLEL || w == WORKLOAD_XTHREAD) {
			snprintf(name, sizeof(name), "%s-threads",
			         workload_names[w]);
			chart_lines(gp, dir, name, info, rows, count,
			            (enum workload)w, 1);
		}
		fprintf(stderr, "bench: wrote %s/%s.png\n", dir,
		        workload_names[w]);
	}
	charts_latency(gp, dir, info, rows, count);
	status = pclose(gp);
	if (status != 0) {
		fprintf(stderr, "bench: gnuplot failed (status %d)\n", status);
		return -1;
	}
	return 0;
}
