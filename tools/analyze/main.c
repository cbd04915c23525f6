/*
 * shiftpool-analyze: read a SHIFTPOOL_TRACE log (format v1 or v2, see
 * src/trace-format.h) and report, per pool and in total, what was
 * allocated, from where, what peaked, what leaked and what was freed
 * wrongly; optionally draw it.
 *
 * Exit status: 0 clean, 1 problems found, 2 usage error or unreadable input.
 *
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "analyze.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Records held back to be applied in seq= order, by default: far more
 * than a thread's record is seen out of place on a loaded machine, at
 * about 220 bytes each (order.c). */
#define DEFAULT_WINDOW 262144

/* Set to anything: the hash tables' probe counts go to stderr. */
#define TABLE_STATS_ENV "SHIFTPOOL_ANALYZE_TABLE_STATS"

/* clang-format off */
static void usage(FILE *o)
{
	fputs(
"NAME\n"
"    shiftpool-analyze - summarise a shiftpool trace log\n"
"\n"
"SYNOPSIS\n"
"    shiftpool-analyze [--json] [--strict] [--limit N] [--top N]\n"
"                      [--plot PNG] [--plot-data FILE] [--plot-window N]\n"
"                      [--window N] FILE\n"
"    shiftpool-analyze --help | --version\n"
"\n"
"DESCRIPTION\n"
"    Reads the log that libshiftpool writes when the environment variable\n"
"    SHIFTPOOL_TRACE=FILE is set (one line per call, after a version line\n"
"    \"# shiftpool trace v3\"; v2 logs, without seq=, and v1 logs, without\n"
"    times, pids or sets, read too) and reports, for each pool or pool set\n"
"    and in total:\n"
"      - block size and count from the pool's init line; for a set, its\n"
"        classes from its set_init line and its classes' init lines;\n"
"      - calls by operation (malloc_bulk and free_bulk records are one per\n"
"        object; a failed batch is one failed allocation), threads seen,\n"
"        frees by outcome (free and free_bulk records), frees made by\n"
"        another thread than the allocating one (cross-thread),\n"
"        pool_trim() calls and the bytes they released;\n"
"      - allocations served by the pool, by the malloc fallback, or failed,\n"
"        and the fallback rate, fallback / (pool + fallback); reallocs in\n"
"        place, moved, freed by size 0, failed;\n"
"      - requested sizes: the most frequent exactly, all of them in\n"
"        power-of-two buckets, and how many exceed the block size; for a\n"
"        set, per class: the requests it is the first class to fit, how\n"
"        many of those the fallback served and how many the class\n"
"        served, then the requests above the largest class;\n"
"      - peak live pool blocks and peak live fallback bytes;\n"
"      - leaks: allocations live at the end of the log (pointer, size,\n"
"        operation, line), first listed first;\n"
"      - problems the library reported: invalid frees, double frees, frees\n"
"        of another pool's pointer (src=invalid, double, wrong_pool, also\n"
"        as a realloc's refused old pointer), and report records: corrupted\n"
"        free lists, writes after free and the kinds above;\n"
"      - problems only the analyzer sees: frees of unknown pointers, which\n"
"        the log never showed allocated in that pool or which were\n"
"        already given back to the system allocator (that address may\n"
"        have been any malloc's since); double frees of pool blocks the\n"
"        library did not report; allocations that returned a pointer\n"
"        still live.  A double free the library reports later (report\n"
"        error=double, as for a free racing another thread's) counts as\n"
"        reported.\n"
"    Pointers are tracked per (pool, address), so an address may be\n"
"    allocated, freed and allocated again.  Pools are told apart by\n"
"    (process, pool number); when the log has several processes they are\n"
"    named PID:POOL (PID#N:POOL for the Nth process with a reused pid).  A\n"
"    fork record starts the child with its parent's pools as they are at\n"
"    that point, live blocks included; the child's copy of one is reported\n"
"    from the child's first record that names it, and what the child never\n"
"    frees of those blocks are its leaks.  The blocks of the pools a child\n"
"    never names count as leaks in the total only.\n"
"    Threads write their records after their calls, so a block freed by\n"
"    one thread and handed out again to another may have its allocation\n"
"    logged before its free.  The seq= of v3 records gives the order of\n"
"    the calls back: the records of each process are applied in seq=\n"
"    order, through a window of --window records; a record further out of\n"
"    place is applied where it is and counted as out of order (the report\n"
"    says how many).  v1 and v2 records are applied in the order of their\n"
"    lines.  Problems are listed in the order the records are applied.\n"
"    Pools are reported in the order the log first names them.  Lines\n"
"    starting with # are comments.  Unknown operations and keys are\n"
"    skipped and counted, so a newer log still reads; malformed lines are\n"
"    counted and listed.  FILE - is standard input.\n"
"\n"
"OPTIONS\n"
"    --json            print the report as one JSON object instead of text\n"
"    --strict          count malformed lines and unknown operations as\n"
"                      problems\n"
"    --limit N         list at most N entries (leaks, problem lines,\n"
"                      malformed line numbers) per list; default 20, 0\n"
"                      lists all\n"
"    --top N           show the N most frequent sizes per pool; default 10\n"
"    --plot PNG        draw, per pool, pool blocks in use, fallback bytes\n"
"                      live and the fallback rate over the log into the PNG\n"
"                      file, with gnuplot (which must be on PATH).  x is the\n"
"                      seconds since the first record, or the record number\n"
"                      when a record has no time (v1 logs).  A long\n"
"                      series is drawn thinned to about 2000 chunks, each\n"
"                      as its first, last, highest and lowest samples\n"
"    --plot-data FILE  write the series behind the plot as text: a block\n"
"                      per pool, after every call on it a line\n"
"                      \"x blocks_in_use fallback_bytes_live fallback_rate\"\n"
"                      (the rate is ? before the pool's first allocation);\n"
"                      every sample, none thinned out\n"
"    --plot-window N   the fallback rate is the share of the fallback among\n"
"                      the pool's last N allocations that succeeded (a\n"
"                      sliding window); default 100\n"
"    --window N        hold back at most N records to apply them in seq=\n"
"                      order (about 220 bytes each, allocated as they are\n"
"                      held); default 262144, 0 applies every record in\n"
"                      the order of its line\n"
"    -h, --help        print this help and exit\n"
"    --version         print the version and exit\n"
"    An option's value may follow it or be joined with =: --top=5.\n"
"\n"
"ENVIRONMENT\n"
"    " TABLE_STATS_ENV "\n"
"        when set and not empty, how far the hash tables' lookups walked\n"
"        (lookups, slots probed, mean, longest), the same of the snapshots\n"
"        forked processes share (\"forks\", nodes walked) and the nodes\n"
"        made for them go to standard error\n"
"\n"
"EXIT STATUS\n"
"    0  clean: no leaks and no problem of any kind above\n"
"    1  problems found (with --strict, malformed or unknown lines too)\n"
"    2  usage error, FILE cannot be read, or the plot or its data cannot\n"
"       be written (--plot without gnuplot on PATH among them)\n"
"\n"
"EXAMPLES\n"
"    SHIFTPOOL_TRACE=/tmp/trace ./server; shiftpool-analyze /tmp/trace\n"
"    shiftpool-analyze --json --limit 0 /tmp/trace > report.json\n"
"    shiftpool-analyze --plot trace.png /tmp/trace\n",
	      o);
}
/* clang-format on */

/* ------------------------------------------------------------- options */

enum option_type { O_FLAG, O_COUNT, O_FILE };

struct option_spec {
	const char *name;
	enum option_type type;
	size_t offset; /* of the field in struct options */
};

static const struct option_spec option_specs[] = {
    {"--json", O_FLAG, offsetof(struct options, json)},
    {"--strict", O_FLAG, offsetof(struct options, strict)},
    {"--limit", O_COUNT, offsetof(struct options, limit)},
    {"--top", O_COUNT, offsetof(struct options, top)},
    {"--plot", O_FILE, offsetof(struct options, plot)},
    {"--plot-data", O_FILE, offsetof(struct options, plot_data)},
    {"--plot-window", O_COUNT, offsetof(struct options, plot_window)},
    {"--window", O_COUNT, offsetof(struct options, window)},
};

static void exit_after_printing(void)
{
	exit(fflush(stdout) == 0 ? EXIT_CLEAN : EXIT_USAGE);
}

/* --help and --version: print and exit; anything else returns. */
static void informational(const char *s)
{
	if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
		usage(stdout);
		exit_after_printing();
	}
	if (strcmp(s, "--version") == 0) {
		printf("shiftpool-analyze (shiftpool) %s\n", PACKAGE_VERSION);
		exit_after_printing();
	}
}

static const struct option_spec *find_option(const char *s, size_t len)
{
	size_t n = sizeof option_specs / sizeof option_specs[0];
	for (size_t i = 0; i < n; i++)
		if (strlen(option_specs[i].name) == len &&
		    strncmp(s, option_specs[i].name, len) == 0)
			return &option_specs[i];
	return NULL;
}

static int set_option(const struct option_spec *o, const char *arg,
                      struct options *opt)
{
	char *field = (char *)opt + o->offset;
	uint64_t v;
	switch (o->type) {
	case O_FLAG:
		*(int *)field = 1;
		return 1;
	case O_FILE:
		*(const char **)field = arg;
		return 1;
	case O_COUNT:
		break;
	}
	if (!parse_dec(arg, &v)) {
		fprintf(stderr, "%s: %s needs a non-negative number\n",
		        progname, o->name);
		return 0;
	}
	*(size_t *)field = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
	return 1;
}

/* The option at argv[*i], its value joined with = or the next argument. */
static int parse_option(int argc, char **argv, int *i, struct options *opt)
{
	const char *s = argv[*i];
	const char *eq = strchr(s, '=');
	const struct option_spec *o =
	    find_option(s, eq ? (size_t)(eq - s) : strlen(s));
	if (o == NULL || (o->type == O_FLAG && eq != NULL)) {
		fprintf(stderr, "%s: unknown option '%s'\n", progname, s);
		return 0;
	}
	const char *arg = eq ? eq + 1 : NULL;
	if (o->type != O_FLAG && arg == NULL) {
		if (*i + 1 >= argc) {
			fprintf(stderr, "%s: %s needs a value\n", progname,
			        o->name);
			return 0;
		}
		arg = argv[++*i];
	}
	return set_option(o, arg, opt);
}

static int check_options(struct options *opt)
{
	if (opt->file == NULL) {
		fprintf(stderr, "%s: no FILE given\n", progname);
		return 0;
	}
	if (opt->plot_window == 0) {
		fprintf(stderr, "%s: --plot-window needs a positive number\n",
		        progname);
		return 0;
	}
	if (opt->limit == 0)
		opt->limit = SIZE_MAX;
	return 1;
}

static int parse_args(int argc, char **argv, struct options *opt)
{
	int only_files = 0;
	*opt = (struct options){.limit = 20,
	                        .top = 10,
	                        .plot_window = 100,
	                        .window = DEFAULT_WINDOW};
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!only_files && strcmp(s, "--") == 0) {
			only_files = 1;
		} else if (!only_files && s[0] == '-' && s[1] != '\0') {
			informational(s);
			if (!parse_option(argc, argv, &i, opt))
				return 0;
		} else if (opt->file != NULL) {
			fprintf(stderr, "%s: one FILE only\n", progname);
			return 0;
		} else {
			opt->file = s;
		}
	}
	return check_options(opt);
}

/* -------------------------------------------------------------- outputs */

static int write_plot_data(const struct analysis *a)
{
	FILE *o = fopen(a->opt.plot_data, "w");
	int err = o ? plot_data_write(a, o) : errno;
	if (o != NULL && fclose(o) != 0 && err == 0)
		err = errno;
	if (err != 0)
		fprintf(stderr, "%s: %s: %s\n", progname, a->opt.plot_data,
		        strerror(err));
	return err == 0;
}

static void print_probes(const char *what, const struct probe_stats *s)
{
	fprintf(stderr,
	        "table %s: lookups %" PRIu64 " probes %" PRIu64
	        " mean %.3f max %" PRIu64 "\n",
	        what, s->lookups, s->probes,
	        s->lookups ? (double)s->probes / (double)s->lookups : 0.0,
	        s->max);
}

static void print_table_stats(const struct analysis *a)
{
	const char *env = getenv(TABLE_STATS_ENV);
	if (env == NULL || *env == '\0')
		return;
	print_probes("live", &a->live_probes);
	print_probes("maps", &a->map_probes);
	print_probes("forks", &a->fork_probes);
	fprintf(stderr, "snapshots: nodes %" PRIu64 " bytes %" PRIu64 "\n",
	        a->snap.nodes, a->snap.nodes * snapshot_node_size());
	fprintf(stderr,
	        "order: held at most %" PRIu64 " records, out of order %" PRIu64
	        "\n",
	        a->order.held_max, a->order.late);
}

/* Plot, data and report; the exit status. */
static int write_outputs(const struct analysis *a)
{
	if (a->opt.plot_data != NULL && !write_plot_data(a))
		return EXIT_USAGE;
	if (a->opt.plot != NULL && plot_draw(a) != 0)
		return EXIT_USAGE;
	if (a->opt.json)
		json_report(a, stdout);
	else
		text_report(a, stdout);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: write error: %s\n", progname,
		        strerror(errno));
		return EXIT_USAGE;
	}
	return total_problems(a) ? EXIT_PROBLEMS : EXIT_CLEAN;
}

static FILE *open_input(const char *file)
{
	if (strcmp(file, "-") == 0)
		return stdin;
	FILE *f = fopen(file, "r");
	if (f == NULL)
		fprintf(stderr, "%s: %s: %s\n", progname, file,
		        strerror(errno));
	return f;
}

int main(int argc, char **argv)
{
	static struct analysis a;
	struct options opt;

	if (!parse_args(argc, argv, &opt)) {
		fprintf(stderr, "Try '%s --help'.\n", progname);
		return EXIT_USAGE;
	}
	if (opt.plot != NULL && !plot_can_draw()) {
		fprintf(stderr,
		        "%s: --plot needs gnuplot, which is not on PATH\n",
		        progname);
		return EXIT_USAGE;
	}
	FILE *f = open_input(opt.file);
	if (f == NULL)
		return EXIT_USAGE;
	analysis_init(&a, &opt);
	int err = analysis_read(&a, f);
	if (f != stdin)
		fclose(f);
	int status = EXIT_USAGE;
	if (err != 0) {
		fprintf(stderr, "%s: %s: %s\n", progname, opt.file,
		        strerror(err));
	} else {
		analysis_finish(&a);
		status = write_outputs(&a);
		print_table_stats(&a);
	}
	analysis_free(&a);
	return status;
}
