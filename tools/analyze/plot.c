/*
 * shiftpool-analyze: a picture of a trace.  After every call on a pool the
 * pool gets a sample: blocks in use, fallback bytes live, and the fallback
 * rate, the share of the fallback among the pool's last opt.plot_window
 * allocations that succeeded (a sliding window of allocations, so that a
 * burst shows however the calls are spread in time).  The x of a sample is
 * the seconds since the first record when every record has t=, else the
 * record's number.  gnuplot draws one panel per quantity, a line per pool;
 * --plot-data writes every sample.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include "analyze.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GNUPLOT "gnuplot"
/* The columns of a sample: x, blocks, fallback bytes, fallback rate. */
#define RATE_COLUMN 4

/* ------------------------------------------------------------- sampling */

static int plotting(const struct analysis *a)
{
	return a->opt.plot != NULL || a->opt.plot_data != NULL;
}

/* The pool's series, made when it is first sampled: only a run that
 * plots pays for one. */
static struct series *series_of(struct pool *p)
{
	if (p->series == NULL)
		p->series = xcalloc(1, sizeof *p->series);
	return p->series;
}

/* The pool's samples, none when it has no series. */
static const struct series *samples(const struct pool *p)
{
	static const struct series none;
	return p->series != NULL ? p->series : &none;
}

void series_count(const struct analysis *a, struct pool *p, int fallback)
{
	if (!plotting(a))
		return;
	struct series *s = series_of(p);
	size_t size = a->opt.plot_window;
	if (s->window == NULL)
		s->window = xcalloc(size, 1);
	if (s->filled == size)
		s->fallbacks -= s->window[s->next];
	else
		s->filled++;
	s->window[s->next] = (unsigned char)(fallback != 0);
	s->fallbacks += (size_t)(fallback != 0);
	s->next = (s->next + 1) % size;
}

void series_sample(const struct analysis *a, struct pool *p, uint64_t t)
{
	series_sample_at(a, p, a->applied + 1, t);
}

void series_sample_at(const struct analysis *a, struct pool *p, uint64_t record,
                      uint64_t t)
{
	if (!plotting(a))
		return;
	struct series *s = series_of(p);
	s->v = array_reserve(s->v, &s->cap, s->n + 1, sizeof *s->v);
	s->v[s->n++] = (struct sample){
	    .record = record,
	    .t = t,
	    .blocks = counts_get(&p->st, STAT(live_pool_blocks)),
	    .fallback_bytes = counts_get(&p->st, STAT(live_fallback_bytes)),
	    .rate = s->filled ? (double)s->fallbacks / (double)s->filled : -1,
	};
}

void series_free(struct series *s)
{
	free(s->v);
	free(s->window);
	memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- data */

static int timed(const struct analysis *a)
{
	return a->has_t0 && a->untimed == 0;
}

static const char *x_label(const struct analysis *a)
{
	return timed(a) ? "seconds since the first record" : "record number";
}

static void write_sample(const struct analysis *a, FILE *o,
                         const struct sample *s)
{
	if (timed(a))
		fprintf(o, "%.9f", (double)(int64_t)(s->t - a->t0) / 1e9);
	else
		fprintf(o, "%" PRIu64, s->record);
	fprintf(o, " %" PRIu64 " %" PRIu64, s->blocks, s->fallback_bytes);
	if (s->rate < 0)
		fprintf(o, " ?\n");
	else
		fprintf(o, " %.4f\n", s->rate);
}

static void write_series(const struct analysis *a, FILE *o,
                         const struct series *s)
{
	for (size_t i = 0; i < s->n; i++)
		write_sample(a, o, &s->v[i]);
}

int plot_data_write(const struct analysis *a, FILE *o)
{
	fprintf(o, "# shiftpool-analyze plot data: %s\n", input_name(a));
	fprintf(o, "# x: %s\n", x_label(a));
	fprintf(o,
	        "# fallback rate: fallback allocations among the pool's "
	        "last %zu allocations\n",
	        a->opt.plot_window);
	fprintf(o, "# columns: x blocks_in_use fallback_bytes_live "
	           "fallback_rate (? before the first allocation)\n");
	for (size_t i = 0; i < a->npools; i++) {
		const struct pool *p = &a->pools[i];
		char name[64];
		if (samples(p)->n == 0)
			continue;
		pool_name(a, p, name, sizeof name);
		fprintf(o, "\n\n# %s %s\n", pool_kind(p), name);
		write_series(a, o, samples(p));
	}
	return fflush(o) != 0 || ferror(o) ? (errno ? errno : EIO) : 0;
}

/* ------------------------------------------------------------- drawing */

/* Whether dir (of len bytes; empty: the current directory) holds an
 * executable gnuplot. */
static int has_gnuplot(const char *dir, size_t len)
{
	if (len == 0)
		dir = ".", len = 1;
	size_t size = len + sizeof "/" GNUPLOT;
	char *file = xmalloc(size);
	snprintf(file, size, "%.*s/%s", (int)len, dir, GNUPLOT);
	int found = access(file, X_OK) == 0;
	free(file);
	return found;
}

int plot_can_draw(void)
{
	const char *path = getenv("PATH");
	while (path != NULL && *path) {
		size_t len = strcspn(path, ":");
		if (has_gnuplot(path, len))
			return 1;
		path += len + (path[len] == ':');
	}
	return 0;
}

/* s as a gnuplot string: single quotes, '' for a quote. */
static void gp_string(FILE *o, const char *s)
{
	fputc('\'', o);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', o);
		fputc(*s == '\n' ? ' ' : *s, o);
	}
	fputc('\'', o);
}

/* The picture is 1000 pixels wide: past this many chunks a series is
 * thinned to each chunk's extremes, in order, so no peak is lost. */
#define PLOT_CHUNKS 2000

static int by_index(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	return (i > j) - (i < j);
}

/* Writes samples [start, end): the first, the last, and those with the
 * most and the fewest blocks and fallback bytes. */
static void gp_chunk(const struct analysis *a, FILE *o, const struct sample *v,
                     size_t start, size_t end)
{
	size_t pick[6] = {start, end - 1, start, start, start, start};
	for (size_t i = start; i < end; i++) {
		if (v[i].blocks > v[pick[2]].blocks)
			pick[2] = i;
		if (v[i].blocks < v[pick[3]].blocks)
			pick[3] = i;
		if (v[i].fallback_bytes > v[pick[4]].fallback_bytes)
			pick[4] = i;
		if (v[i].fallback_bytes < v[pick[5]].fallback_bytes)
			pick[5] = i;
	}
	qsort(pick, 6, sizeof pick[0], by_index);
	for (int k = 0; k < 6; k++)
		if (k == 0 || pick[k] != pick[k - 1])
			write_sample(a, o, &v[pick[k]]);
}

static void gp_series(const struct analysis *a, FILE *o, const struct series *s)
{
	size_t chunk = s->n / PLOT_CHUNKS + 1;
	for (size_t start = 0; start < s->n; start += chunk)
		gp_chunk(a, o, s->v, start,
		         s->n - start < chunk ? s->n : start + chunk);
}

static void gp_data(const struct analysis *a, FILE *o)
{
	for (size_t i = 0; i < a->npools; i++) {
		if (samples(&a->pools[i])->n == 0)
			continue;
		fprintf(o, "$pool%zu << EOD\n", i);
		gp_series(a, o, samples(&a->pools[i]));
		fprintf(o, "EOD\n");
	}
}

/* Whether a pool's series has a fallback rate somewhere. */
static int has_rate(const struct pool *p)
{
	return samples(p)->filled != 0;
}

/* One panel: column of the series of every pool that has one against x;
 * a pool keeps its colour (its rank among the pools with samples) in
 * every panel. */
static void gp_panel(const struct analysis *a, FILE *o, int column,
                     const char *label)
{
	const char *sep = "plot ";
	unsigned rank = 0;
	fprintf(o, "set ylabel ");
	gp_string(o, label);
	fputc('\n', o);
	for (size_t i = 0; i < a->npools; i++) {
		const struct pool *p = &a->pools[i];
		char name[64], title[80];
		if (samples(p)->n == 0)
			continue;
		rank++;
		if (column == RATE_COLUMN && !has_rate(p))
			continue;
		pool_name(a, p, name, sizeof name);
		snprintf(title, sizeof title, "%s %s", pool_kind(p), name);
		fprintf(o,
		        "%s$pool%zu using 1:%d with steps linetype %u title ",
		        sep, i, column, rank);
		gp_string(o, title);
		sep = ", \\\n     ";
	}
	fputc('\n', o);
}

void plot_script_write(const struct analysis *a, FILE *o)
{
	char rate[80];
	snprintf(rate, sizeof rate, "fallback rate (last %zu allocations)",
	         a->opt.plot_window);
	fprintf(o, "set terminal png size 1000,900 noenhanced\nset output ");
	gp_string(o, a->opt.plot);
	fprintf(o, "\nset datafile missing '?'\n");
	gp_data(a, o);
	fprintf(o, "set multiplot layout 3,1 title ");
	gp_string(o, input_name(a));
	fprintf(o, "\nset key outside right\nset xlabel ");
	gp_string(o, x_label(a));
	/* Room above the highest value, which the frame would hide. */
	fprintf(o, "\nset yrange [0:*]\nset offsets 0, 0, graph 0.05, 0\n");
	gp_panel(a, o, 2, "pool blocks in use");
	gp_panel(a, o, 3, "fallback bytes live");
	fprintf(o, "set yrange [0:1.05]\n");
	gp_panel(a, o, RATE_COLUMN, rate);
	fprintf(o, "unset multiplot\nunset output\n");
}

static int has_samples(const struct analysis *a)
{
	for (size_t i = 0; i < a->npools; i++)
		if (samples(&a->pools[i])->n != 0)
			return 1;
	return 0;
}

int plot_draw(const struct analysis *a)
{
	if (!has_samples(a)) {
		fprintf(stderr, "%s: %s: no calls on any pool to plot\n",
		        progname, input_name(a));
		return -1;
	}
	/* gnuplot may stop reading early; its status says why. */
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	FILE *gp = popen(GNUPLOT, "w");
	if (gp == NULL) {
		fprintf(stderr, "%s: cannot run %s: %s\n", progname, GNUPLOT,
		        strerror(errno));
		signal(SIGPIPE, old);
		return -1;
	}
	plot_script_write(a, gp);
	int status = pclose(gp);
	signal(SIGPIPE, old);
	if (status != 0) {
		fprintf(stderr, "%s: %s failed to draw %s (status %d)\n",
		        progname, GNUPLOT, a->opt.plot,
		        WIFEXITED(status) ? WEXITSTATUS(status) : status);
		return -1;
	}
	return 0;
}
