/*
 * --plot=DIR: PNG charts drawn by gnuplot (the one configure found, or
 * $GNUPLOT), each answering one question:
 *
 *   WORKLOAD.png           what an allocator costs over the floor (the
 *                          worker that allocates nothing): its median ns
 *                          per operation minus the floor's, on a linear
 *                          axis, one cluster of bars per case (sort: one
 *                          line over len of the median as a multiple of
 *                          the floor's, the sort itself being most of
 *                          the time);
 *   WORKLOAD-threads.png   parallel, xthread: how the operations per
 *                          second of all threads grow with the threads;
 *   latency-WORKLOAD-CASE.png  with --latency: how slow the slow calls
 *                          are, p50 to the slowest, allocation and free.
 *
 * A chart has at most six series: shiftpool's two fastest modes in the
 * workload in colour, glibc, tcmalloc, jemalloc and mimalloc in grey (the
 * table has every row).  Cases that run more threads than the machine has
 * CPUs are shaded, and their points hollow: they measure the scheduler as
 * much as the allocator.  The data go inline into the gnuplot script, so
 * DIR receives only the PNGs.
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

#define MAX_SERIES      6
#define MAX_POOL_SERIES 2

/* The peers drawn, in this order, each in its grey. */
static const enum allocator chart_peers[] = {
    ALLOCATOR_GLIBC, ALLOCATOR_TCMALLOC, ALLOCATOR_JEMALLOC,
    ALLOCATOR_MIMALLOC};
static const char *const peer_greys[] = {"#202020", "#555555", "#888888",
                                         "#b4b4b4"};
/* Line charts tell the greys apart by their dashes and points too. */
static const int peer_dashes[] = {2, 3, 4, 5};
static const int peer_points[] = {5, 9, 11,
                                  13}; /* filled; hollow is one less */

/* shiftpool's two modes: two colours no grey can be taken for. */
static const char *const pool_colours[MAX_POOL_SERIES] = {"#d62728", "#1f77b4"};

/* The background of the cases with more threads than CPUs. */
#define OVERSUBSCRIBED_SHADE "#ececec"

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

/* One series of a chart: an allocator and how it is drawn. */
struct series {
	enum allocator allocator;
	const char *colour;
	int pool;  /* shiftpool's: in colour, solid */
	int dash;  /* gnuplot dashtype */
	int point; /* gnuplot pointtype, filled */
};

static const struct row *find_row(const struct row *rows, size_t count,
                                  size_t group, enum allocator allocator)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (rows[i].group == group && rows[i].c.allocator == allocator)
			return &rows[i];
	return NULL;
}

/* The row of the group and allocator if it was measured, else NULL. */
static const struct row *ok_row(const struct row *rows, size_t count,
                                size_t group, enum allocator allocator)
{
	const struct row *row = find_row(rows, count, group, allocator);
	return row != NULL && row->status == ROW_OK ? row : NULL;
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

/* The threads a case runs at once: xthread's producers and consumers
 * together; 1 for the single-threaded workloads. */
static size_t case_threads(const struct bench_case *c)
{
	size_t threads = c->threads ? c->threads : 1;

	if (c->workload == WORKLOAD_XTHREAD || c->workload == WORKLOAD_XMALLOC)
		return 2 * threads;
	return threads;
}

static int oversubscribed(const struct run_info *info, const struct row *row)
{
	return info->cpus > 0 && case_threads(&row->c) > (size_t)info->cpus;
}

/* The sweep's numeric value of a group: N, len, or threads. */
static double group_x(const struct row *row)
{
	switch (row->c.workload) {
	case WORKLOAD_HELD:
	case WORKLOAD_OVERSIZE:
		return (double)row->c.n;
	case WORKLOAD_SORT:
		return (double)row->c.len;
	default:
		return (double)case_threads(&row->c);
	}
}

/* The floor's median in the group, or 0 when it has none. */
static double floor_of(const struct row *rows, size_t count, size_t group)
{
	const struct row *row = ok_row(rows, count, group, ALLOCATOR_FLOOR);
	return row != NULL ? row->median : 0;
}

/* Whether every case of the workload has a floor to subtract. */
static int has_floor(const struct row *rows, size_t count, const size_t *groups,
                     size_t n)
{
	size_t g;

	for (g = 0; g < n; g++)
		if (floor_of(rows, count, groups[g]) <= 0)
			return 0;
	return n > 0;
}

/*
 * The series of a workload's charts: shiftpool's two fastest modes over
 * its cases (the inline builds are in the table; the modes are what a
 * user chooses between), then the peers that were measured.  A mode is
 * ranked by the cases it ran, then by the geometric mean of its medians.
 */
static size_t choose_series(const struct row *rows, size_t count,
                            const size_t *groups, size_t n, struct series *out)
{
	size_t ran[ALLOCATOR_COUNT] = {0}, chosen = 0, g, k;
	double score[ALLOCATOR_COUNT] = {0};
	int a, taken[ALLOCATOR_COUNT] = {0};

	for (a = 0; a < ALLOCATOR_COUNT; a++) {
		if (!is_pool((enum allocator)a) ||
		    allocator_is_inline((enum allocator)a))
			continue;
		for (g = 0; g < n; g++) {
			const struct row *row =
			    ok_row(rows, count, groups[g], (enum allocator)a);
			if (row != NULL && row->median > 0) {
				ran[a]++;
				score[a] += log(row->median);
			}
		}
	}
	while (chosen < MAX_POOL_SERIES) {
		int best = -1;
		for (a = 0; a < ALLOCATOR_COUNT; a++) {
			if (ran[a] == 0 || taken[a])
				continue;
			if (best < 0 || ran[a] > ran[best] ||
			    (ran[a] == ran[best] &&
			     score[a] / (double)ran[a] <
			         score[best] / (double)ran[best]))
				best = a;
		}
		if (best < 0)
			break;
		taken[best] = 1;
		out[chosen] = (struct series){(enum allocator)best,
		                              pool_colours[chosen], 1, 1, 7};
		chosen++;
	}
	for (k = 0; k < sizeof(chart_peers) / sizeof(chart_peers[0]) &&
	            chosen < MAX_SERIES;
	     k++) {
		for (g = 0; g < n; g++)
			if (ok_row(rows, count, groups[g], chart_peers[k]))
				break;
		if (g == n)
			continue;
		out[chosen++] =
		    (struct series){chart_peers[k], peer_greys[k], 0,
		                    peer_dashes[k], peer_points[k]};
	}
	return chosen;
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

/* The chart's second and third lines: what one operation is, and how it
 * was measured. */
static void subtitle(char *buf, size_t size, const struct run_info *info,
                     const char *head, const char *how)
{
	snprintf(buf, size,
	         "{/*0.8 %s}\\n{/*0.75 %s; median of %zu runs; %s, %ld "
	         "CPUs}",
	         head, how, info->options->runs,
	         info->cpu[0] ? info->cpu : "CPU unknown", info->cpus);
}

/* Shades the cluster of bars at x (gnuplot's histogram puts them at
 * 0 .. n - 1). */
static void shade(FILE *gp, double from, double to)
{
	fprintf(gp,
	        "set object rect from first %g, graph 0 to first %g, graph 1 "
	        "behind fc rgb '%s' fs solid 1.0 noborder\n",
	        from, to, OVERSUBSCRIBED_SHADE);
}

/* The key's note on the shaded cases. */
static void shade_key(FILE *gp, const struct run_info *info)
{
	fprintf(gp,
	        ", \\\n     keyentry with boxes fc rgb '%s' fs solid 1.0 "
	        "title 'threads > %ld CPUs: oversubscribed'",
	        OVERSUBSCRIBED_SHADE, info->cpus);
}

/* ------------------------------------------------------------ charts */

/* Bars: one cluster per case, one bar per series, the floor's median
 * subtracted. */
static void chart_bars(FILE *gp, const char *dir, const struct run_info *info,
                       const struct row *rows, size_t count,
                       enum workload workload)
{
	struct series series[MAX_SERIES];
	size_t groups[LIST_MAX], n, g, k, column = 2, ns;
	int over_floor, any_over = 0;
	double lowest = 0;
	char sub[1024], head[256];

	n = workload_groups(rows, count, workload, groups, LIST_MAX);
	ns = choose_series(rows, count, groups, n, series);
	if (ns == 0)
		return;
	over_floor = has_floor(rows, count, groups, n);
	terminal(gp, dir, workload_names[workload]);
	fprintf(gp, "$data << EOD\n");
	for (g = 0; g < n; g++) {
		const struct row *leader = group_first(rows, count, groups[g]);
		double base = over_floor ? floor_of(rows, count, groups[g]) : 0;
		fprintf(gp, "\"%s\"", leader->label);
		for (k = 0; k < ns; k++) {
			const struct row *row =
			    ok_row(rows, count, groups[g], series[k].allocator);
			if (row != NULL && row->min - base < lowest)
				lowest = row->min - base;
			if (row != NULL)
				fprintf(gp, " %g %g %g", row->median - base,
				        row->min - base, row->max - base);
			else
				fprintf(gp, " ? ? ?");
		}
		fprintf(gp, "\n");
	}
	fprintf(gp, "EOD\n");
	for (g = 0; g < n; g++)
		if (oversubscribed(info, group_first(rows, count, groups[g]))) {
			shade(gp, (double)g - 0.5, (double)g + 0.5);
			any_over = 1;
		}
	headline(group_first(rows, count, groups[0]), head, sizeof(head));
	subtitle(sub, sizeof(sub), info, head,
	         over_floor ? "bar: the median minus the floor's median, "
	                      "whiskers: the runs' min..max minus it; lower is "
	                      "better"
	                    : "bar: the median, whiskers: the runs' min..max; "
	                      "lower is better");
	fprintf(gp,
	        "set title \"%s: %s\\n%s\"\n"
	        "set style data histogram\n"
	        "set style histogram errorbars gap 2 lw 1\n"
	        "set style fill solid 1.0 border rgb '#202020'\n"
	        "set boxwidth 0.9\n"
	        "set xlabel '%s'\n"
	        "set ylabel '%s'\n"
	        "set yrange [%s:*]\n"
	        "set xzeroaxis lt -1\n"
	        "set xrange [-0.6:%g]\n"
	        "plot ",
	        workload_names[workload],
	        over_floor ? "ns per operation above the floor (linear axis)"
	                   : "ns per operation (linear axis)",
	        sub, sweep_axis[workload],
	        over_floor ? "ns per operation minus the floor"
	                   : "ns per operation",
	        lowest < 0 ? "*" : "0", (double)n - 0.4);
	for (k = 0; k < ns; k++) {
		fprintf(gp,
		        "%s$data using %zu:%zu:%zu%s title '%s' lc rgb '%s'",
		        k == 0 ? "" : ", \\\n     ", column, column + 1,
		        column + 2, k == 0 ? ":xtic(1)" : "",
		        allocator_names[series[k].allocator], series[k].colour);
		column += 3;
	}
	/* Each bar's value above it, so that short bars can be read, where
	 * there is room: a cluster of ns bars and a gap of 2 is one unit
	 * wide. */
	for (k = 0, column = 2; n <= 3 && k < ns; k++, column += 3)
		fprintf(
		    gp,
		    ", \\\n     $data using ($0 + %g):%zu:(sprintf(abs($%zu) "
		    "< 10 ? '%%.1f' : '%%.0f', $%zu)) with labels offset "
		    "0,0.7 font ',9' notitle",
		    ((double)k - (double)(ns - 1) / 2) / (double)(ns + 2),
		    column, column, column);
	if (any_over)
		shade_key(gp, info);
	fprintf(gp, "\n");
	fprintf(stderr, "bench: wrote %s/%s.png\n", dir,
	        workload_names[workload]);
}

/*
 * Lines over the sweep's numeric value: sort's ns per operation as a
 * multiple of the floor's against len, or the operations per second of all
 * threads against the threads.  A series is drawn as a line, then its points:
 * filled, or hollow where the threads outnumber the CPUs.
 */
static void chart_lines(FILE *gp, const char *dir, const char *name,
                        const struct run_info *info, const struct row *rows,
                        size_t count, enum workload workload,
                        int operations_per_second)
{
	struct series series[MAX_SERIES];
	size_t groups[LIST_MAX], n, g, k, ns;
	int over_floor, any_over = 0;
	double max_x = 0;
	char sub[1024], head[256];

	n = workload_groups(rows, count, workload, groups, LIST_MAX);
	ns = choose_series(rows, count, groups, n, series);
	if (ns == 0)
		return;
	over_floor =
	    !operations_per_second && has_floor(rows, count, groups, n);
	terminal(gp, dir, name);
	/* Per series: the value, its low and high whisker, then the value
	 * again in one of two columns, in or beyond the CPUs. */
	fprintf(gp, "$data << EOD\n");
	for (g = 0; g < n; g++) {
		const struct row *leader = group_first(rows, count, groups[g]);
		double base = over_floor ? floor_of(rows, count, groups[g]) : 0;
		int over = oversubscribed(info, leader);

		any_over |= over;
		if (group_x(leader) > max_x)
			max_x = group_x(leader);
		fprintf(gp, "%g", group_x(leader));
		for (k = 0; k < ns; k++) {
			const struct row *row =
			    ok_row(rows, count, groups[g], series[k].allocator);
			double y, lo, hi;
			if (row == NULL) {
				fprintf(gp, " ? ? ? ? ?");
				continue;
			}
			if (operations_per_second) {
				y = 1e3 / row->median;
				lo = 1e3 / row->max;
				hi = 1e3 / row->min;
			} else if (over_floor) {
				y = row->median / base;
				lo = row->min / base;
				hi = row->max / base;
			} else {
				y = row->median;
				lo = row->min;
				hi = row->max;
			}
			fprintf(gp, " %g %g %g", y, lo, hi);
			if (over)
				fprintf(gp, " ? %g", y);
			else
				fprintf(gp, " %g ?", y);
		}
		fprintf(gp, "\n");
	}
	fprintf(gp, "EOD\n");
	headline(group_first(rows, count, groups[0]), head, sizeof(head));
	if (operations_per_second) {
		subtitle(sub, sizeof(sub), info, head,
		         "whiskers: the runs' slowest..fastest; higher is "
		         "better");
		fprintf(gp,
		        "set title \"%s: operations per second against "
		        "threads (linear axis)\\n%s\"\n"
		        "set ylabel 'million operations per second, all "
		        "threads'\n"
		        "set yrange [0:*]\n"
		        "set logscale x 2\n",
		        workload_names[workload], sub);
		if (any_over)
			fprintf(gp,
			        "set object rect from first %g, graph 0 to "
			        "graph 1, graph 1 behind fc rgb '%s' fs solid "
			        "1.0 noborder\n",
			        (double)info->cpus * 1.41,
			        OVERSUBSCRIBED_SHADE);
	} else {
		subtitle(sub, sizeof(sub), info, head,
		         over_floor ? "the median over the floor's median, "
		                      "whiskers: the runs' min..max over it; "
		                      "lower is better"
		                    : "the median, whiskers: the runs' "
		                      "min..max; lower is better");
		fprintf(gp,
		        "set title \"%s: %s\\n%s\"\n"
		        "set ylabel '%s'\n"
		        "set yrange [0:*]\n"
		        "set logscale x 2\n",
		        workload_names[workload],
		        over_floor ? "ns per operation as a multiple of the "
		                     "floor's (linear axis; 1: the floor)"
		                   : "ns per operation (linear axis)",
		        sub,
		        over_floor ? "ns per operation / the floor"
		                   : "ns per operation");
		if (over_floor)
			fprintf(gp,
			        "set arrow from graph 0, first 1 to graph 1, "
			        "first 1 nohead lc rgb '#000000' lw 1\n");
	}
	fprintf(gp, "set xtics (");
	for (g = 0; g < n; g++)
		fprintf(gp, "%s%g", g ? ", " : "",
		        group_x(group_first(rows, count, groups[g])));
	fprintf(gp,
	        ")\nset xlabel '%s'\nset offsets graph 0.03, graph 0.03, "
	        "0, 0\nplot ",
	        sweep_axis[workload]);
	for (k = 0; k < ns; k++) {
		size_t column = 2 + 5 * k;
		const struct series *s = &series[k];
		fprintf(gp,
		        "%s$data using 1:%zu with lines lw %d dt %d lc rgb "
		        "'%s' title '%s', \\\n"
		        "     $data using 1:%zu:%zu:%zu with yerrorbars pt %d "
		        "ps 1.2 lw 1 lc rgb '%s' notitle, \\\n"
		        "     $data using 1:%zu:%zu:%zu with yerrorbars pt %d "
		        "ps 1.2 lw 1 lc rgb '%s' notitle",
		        k == 0 ? "" : ", \\\n     ", column, s->pool ? 3 : 2,
		        s->dash, s->colour, allocator_names[s->allocator],
		        column + 3, column + 1, column + 2, s->point, s->colour,
		        column + 4, column + 1, column + 2, s->point - 1,
		        s->colour);
	}
	if (any_over)
		fprintf(gp,
		        ", \\\n     keyentry with boxes fc rgb '%s' fs solid "
		        "1.0 title 'hollow, shaded: threads > %ld CPUs'",
		        OVERSUBSCRIBED_SHADE, info->cpus);
	fprintf(gp, "\n");
	fprintf(stderr, "bench: wrote %s/%s.png\n", dir, name);
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

/* Whether the row has --latency's points. */
static int has_latency_points(const struct row *row)
{
	return row->status == ROW_OK && row->latency_ns[LATENCY_ALLOC][0] > 0;
}

/* The percentiles of one case's calls, allocation and free side by side
 * on the same scales, one line per series. */
static void chart_latency(FILE *gp, const char *dir,
                          const struct run_info *info, const struct row *rows,
                          size_t count, size_t group)
{
	const struct row *leader = group_first(rows, count, group);
	struct series series[MAX_SERIES];
	char name[96], label[48], head[256], timer[96];
	double lo = 0, hi = 0;
	size_t k, ns;
	int side, p;

	ns = choose_series(rows, count, &group, 1, series);
	if (ns == 0)
		return;
	label_slug(leader->label, label, sizeof(label));
	snprintf(name, sizeof(name), "latency-%s-%s",
	         workload_names[leader->c.workload], label);
	terminal(gp, dir, name);
	/* One block per side: x = the point, then a column per series. */
	for (side = 0; side < LATENCY_SIDES; side++) {
		fprintf(gp, "$%s << EOD\n", latency_side_names[side]);
		for (p = 0; p < LATENCY_POINTS; p++) {
			fprintf(gp, "%d", p);
			for (k = 0; k < ns; k++) {
				const struct row *row = ok_row(
				    rows, count, group, series[k].allocator);
				double v;
				if (row == NULL || !has_latency_points(row)) {
					fprintf(gp, " ?");
					continue;
				}
				v = row->latency_ns[side][p];
				fprintf(gp, " %g", v);
				if (v > 0 && (lo == 0 || v < lo))
					lo = v;
				if (v > hi)
					hi = v;
			}
			fprintf(gp, "\n");
		}
		fprintf(gp, "EOD\n");
	}
	headline(leader, head, sizeof(head));
	timer[0] = '\0';
	if (info->timer.measured && info->timer.ticks_per_ns > 0)
		snprintf(timer, sizeof(timer),
		         "; the timer's own %.0f ns included",
		         info->timer.empty_p50 / info->timer.ticks_per_ns);
	/* Room for the key above the lines. */
	fprintf(gp, "set yrange [%g:%g]\n", lo / 1.5, hi * 30);
	fprintf(gp,
	        "set multiplot layout 1,2 title \"%s, %s: the time of one "
	        "call, p50 to the slowest\\n{/*0.8 %s}\\n{/*0.75 all %zu "
	        "counted runs%s; %s, %ld CPUs; lower is better}\"\n"
	        "set logscale y\n"
	        "set xrange [-0.3:%g]\n"
	        "set xtics (",
	        workload_names[leader->c.workload], leader->label, head,
	        info->options->runs, timer,
	        info->cpu[0] ? info->cpu : "CPU unknown", info->cpus,
	        LATENCY_POINTS - 0.7);
	for (p = 0; p < LATENCY_POINTS; p++)
		fprintf(gp, "%s'%s' %d", p ? ", " : "", latency_point_names[p],
		        p);
	fprintf(gp,
	        ")\n"
	        "set xlabel 'percentile of the calls'\n"
	        "set ylabel 'ns (log scale: the tail spans decades)'\n"
	        "set format y '10^{%%L}'\n"
	        "set key inside left top Left reverse\n"
	        /* The same plot area in both halves, whatever the labels. */
	        "set lmargin 12\nset rmargin 3\n");
	for (side = 0; side < LATENCY_SIDES; side++) {
		fprintf(gp, "set title '%s'\nplot ",
		        side == LATENCY_ALLOC ? "allocation" : "free");
		for (k = 0; k < ns; k++)
			fprintf(
			    gp,
			    "%s$%s using 1:%zu with linespoints lw %d dt %d "
			    "pt %d ps 1.2 lc rgb '%s' title '%s'",
			    k == 0 ? "" : ", \\\n     ",
			    latency_side_names[side], k + 2,
			    series[k].pool ? 3 : 2, series[k].dash,
			    series[k].point, series[k].colour,
			    allocator_names[series[k].allocator]);
		fprintf(gp, "\n");
	}
	fprintf(gp, "unset multiplot\n");
	fprintf(stderr, "bench: wrote %s/%s.png\n", dir, name);
}

/* Every case with --latency's points gets its chart, but those with more
 * threads than CPUs: their tails are the scheduler's. */
static void charts_latency(FILE *gp, const char *dir,
                           const struct run_info *info, const struct row *rows,
                           size_t count)
{
	size_t i, last_group = (size_t)-1;

	for (i = 0; i < count; i++)
		if (rows[i].group != last_group &&
		    has_latency_points(&rows[i])) {
			last_group = rows[i].group;
			if (oversubscribed(info, &rows[i])) {
				fprintf(stderr,
				        "bench: no latency chart for %s %s: "
				        "more threads than CPUs\n",
				        workload_names[rows[i].c.workload],
				        rows[i].label);
				continue;
			}
			chart_latency(gp, dir, info, rows, count,
			              rows[i].group);
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
		size_t groups[LIST_MAX];
		/* http, curl and footprint: figures of another kind, in
		 * the table. */
		if (workload_is_external((enum workload)w) ||
		    w == WORKLOAD_FOOTPRINT ||
		    workload_groups(rows, count, (enum workload)w, groups,
		                    LIST_MAX) == 0)
			continue;
		if (w == WORKLOAD_SORT) {
			chart_lines(gp, dir, workload_names[w], info, rows,
			            count, (enum workload)w, 0);
		} else if (w == WORKLOAD_PARALLEL || w == WORKLOAD_XTHREAD) {
			/* Their question is how they scale: the bars of
			 * each thread count would say it again. */
			snprintf(name, sizeof(name), "%s-threads",
			         workload_names[w]);
			chart_lines(gp, dir, name, info, rows, count,
			            (enum workload)w, 1);
		} else {
			chart_bars(gp, dir, info, rows, count,
			           (enum workload)w);
		}
	}
	charts_latency(gp, dir, info, rows, count);
	status = pclose(gp);
	if (status != 0) {
		fprintf(stderr, "bench: gnuplot failed (status %d)\n", status);
		return -1;
	}
	return 0;
}
