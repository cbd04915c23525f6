/*
 * bench: the driver.  Expands the options into cases, runs every
 * (case, allocator) row in a worker process of its own, run after run with
 * the allocators interleaved (A B C, B C A, ...), checks what each worker
 * says about itself, and prints the results.
 *
 * The workers are found next to this program (bench-glibc, bench-pool, ...,
 * see allocator_worker()), so it runs the same in the build tree and in a
 * VPATH build.  Peak RSS comes from wait4(), per process, so per row.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"
#include "config.h"

#include "collect.h"
#include "driver.h"
#include "report/report.h"
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ constants */

/* Allocators configure found; the others' rows say "not built".  The
 * optional ones (allocator_is_optional()) are looked for as programs. */
static const int allocator_built[ALLOCATOR_COUNT] = {
    [ALLOCATOR_GLIBC] = 1,
    [ALLOCATOR_GLIBC_NOTRIM] = 1,
#ifdef HAVE_TCMALLOC
    [ALLOCATOR_TCMALLOC] = 1,
#endif
#ifdef HAVE_JEMALLOC
    [ALLOCATOR_JEMALLOC] = 1,
#endif
#ifdef HAVE_MIMALLOC
    [ALLOCATOR_MIMALLOC] = 1,
#endif
    [ALLOCATOR_POOL_SINGLE] = 1,
    [ALLOCATOR_POOL_LOCKED] = 1,
    [ALLOCATOR_POOL_PER_THREAD] = 1,
    [ALLOCATOR_POOL_SET_SINGLE] = 1,
#ifdef HAVE_INLINE_PATHS
    [ALLOCATOR_POOL_SINGLE_INLINE] = 1,
    [ALLOCATOR_POOL_PER_THREAD_INLINE] = 1,
#endif
    [ALLOCATOR_POOL_SET_LOCKED] = 1,
    [ALLOCATOR_POOL_SET_PER_THREAD] = 1,
    [ALLOCATOR_STACK] = 1,
    [ALLOCATOR_FLOOR] = 1,
};

/* ------------------------------------------------------------ helpers */

/* The directory of this program, where the workers are. */
static int program_directory(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (slash == NULL)
		return -1;
	*slash = '\0';
	return 0;
}

/* ------------------------------------------------------------ machine */

static void machine_describe(struct run_info *info)
{
	struct utsname uts;
	FILE *cpuinfo;
	char line[256];
	time_t t = time(NULL);

	strftime(info->date, sizeof(info->date), "%Y-%m-%dT%H:%M:%SZ",
	         gmtime(&t));
	copy_string(info->cpu, sizeof(info->cpu), "unknown");
	cpuinfo = fopen("/proc/cpuinfo", "r");
	if (cpuinfo != NULL) {
		while (fgets(line, sizeof(line), cpuinfo) != NULL) {
			char *colon = strchr(line, ':');
			if (colon != NULL && has_prefix(line, "model name")) {
				colon++;
				while (*colon == ' ' || *colon == '\t')
					colon++;
				colon[strcspn(colon, "\n")] = '\0';
				copy_string(info->cpu, sizeof(info->cpu),
				            colon);
				break;
			}
		}
		fclose(cpuinfo);
	}
	info->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (uname(&uts) == 0)
		snprintf(info->system, sizeof(info->system), "%s %s %s",
		         uts.sysname, uts.release, uts.machine);
	snprintf(info->libc, sizeof(info->libc), "glibc %s",
	         gnu_get_libc_version());
#if defined(__clang__)
	snprintf(info->compiler, sizeof(info->compiler), "clang %s",
	         __clang_version__);
#elif defined(__GNUC__)
	snprintf(info->compiler, sizeof(info->compiler), "gcc %s", __VERSION__);
#endif
}

/* The load averages, "1.00 0.50 0.25", or "unknown". */
static void load_average(char *buf, size_t size)
{
	FILE *in = fopen("/proc/loadavg", "r");
	double one, five, fifteen;

	if (in != NULL && fscanf(in, "%lf %lf %lf", &one, &five, &fifteen) == 3)
		snprintf(buf, size, "%.2f %.2f %.2f", one, five, fifteen);
	else
		snprintf(buf, size, "unknown");
	if (in != NULL)
		fclose(in);
}

/* --latency: the timer's rate and its own cost, on this machine, now. */
static void timer_measure(struct timer_info *timer)
{
	timer->ticks_per_ns = latency_ticks_per_ns();
	latency_empty_region(&timer->empty_p50, &timer->empty_min);
	timer->invariant_tsc = latency_timer_steady();
	timer->measured = 1;
}

/* ------------------------------------------------------------ rows */

/* What a row's worker has in its environment beyond the driver's (which
 * loses LD_PRELOAD and GLIBC_TUNABLES), as "NAME=VALUE", or NULL. */
static const char *row_environment(const struct row *row)
{
	return row->c.allocator == ALLOCATOR_GLIBC_NOTRIM
	           ? "GLIBC_TUNABLES=" GLIBC_NOTRIM_TUNABLES
	           : NULL;
}

/* The command that runs a row, as a shell would take it: its
 * environment, the worker and its arguments; or the external programs'. */
static void row_command(struct row *row)
{
	const char *environment = row_environment(row);
	int length;

	if (workload_is_external(row->c.workload)) {
		external_command(&row->c, row->command, sizeof(row->command));
		return;
	}
	length =
	    snprintf(row->command, sizeof(row->command), "%s%s%s ",
	             environment ? environment : "", environment ? " " : "",
	             allocator_worker(row->c.allocator));
	case_format_args(&row->c, row->command + length,
	                 sizeof(row->command) - length);
}

/* Whether the row can run at all: not when its allocator was not built,
 * does not apply, or its programs are missing. */
static void row_check_runnable(struct row *row, const char *directory)
{
	const char *reason = case_not_applicable(&row->c);
	enum allocator a = row->c.allocator;
	char path[PATH_MAX];

	int length = snprintf(path, sizeof(path), "%s/%s", directory,
	                      allocator_worker(a));

	if (allocator_is_optional(a)
	        ? length < 0 || (size_t)length >= sizeof(path) ||
	              access(path, X_OK) != 0
	        : !allocator_built[a]) {
		row->status = ROW_NOT_BUILT;
		copy_string(row->message, sizeof(row->message),
		            allocator_is_optional(a)
		                ? "not built: its library was not found"
		                : "not built: configure did not find it");
	} else if (reason != NULL) {
		row->status = ROW_NOT_APPLICABLE;
		copy_string(row->message, sizeof(row->message), reason);
	} else if (workload_is_external(row->c.workload) &&
	           external_missing(&row->c, directory, row->message,
	                            sizeof(row->message)) != NULL) {
		row->status = ROW_NOT_RUN;
	}
}

/* One allocator at one point of a workload's sweep, ready to run. */
static void row_init(struct row *row, const struct options *o, enum workload w,
                     enum allocator a, size_t point, size_t group,
                     const char *directory)
{
	size_t k;

	row->group = group;
	case_resolve(o, w, a, point, &row->c);
	case_label(&row->c, row->label, sizeof(row->label));
	row->note = case_note(&row->c);
	row_command(row);
	for (k = 0; k < METRIC_COUNT; k++)
		row->metric[k] = xcalloc(o->runs, sizeof(*row->metric[k]));
	row->ns_per_op = xcalloc(o->runs, sizeof(*row->ns_per_op));
	row->ops = xcalloc(o->runs, sizeof(*row->ops));
	row->faults = xcalloc(o->runs, sizeof(*row->faults));
	row->footprint = xcalloc(o->runs, sizeof(*row->footprint));
	row->footprint_open = xcalloc(o->runs, sizeof(*row->footprint_open));
	for (k = 0; row->c.latency && k < LATENCY_SIDES; k++)
		row->latency[k] = xcalloc(1, sizeof(*row->latency[k]));
	row_check_runnable(row, directory);
}

/* Whether the options ask for an allocator in a workload. */
static int row_wanted(const struct options *o, enum workload w,
                      enum allocator a)
{
	return (o->allocators & (1u << a)) && allocator_applies(a, w);
}

/* Writes the rows of one workload from rows[0]: point by point of its
 * sweep, each point a group of its own, allocator by allocator.  Returns
 * how many. */
static size_t rows_of_workload(struct row *rows, const struct options *o,
                               enum workload w, size_t *group,
                               const char *directory)
{
	size_t n = 0, point;
	enum allocator a;

	for (point = 0; point < case_points(o, w); point++, (*group)++)
		for (a = 0; a < ALLOCATOR_COUNT; a++)
			if (row_wanted(o, w, a))
				row_init(&rows[n++], o, w, a, point, *group,
				         directory);
	return n;
}

/* Every (case, allocator) row, in the order of the outputs. */
static struct row *rows_build(const struct options *o, const char *directory,
                              size_t *count)
{
	size_t capacity = 0, n = 0, group = 0;
	struct row *rows;
	enum workload w;

	for (w = 0; w < WORKLOAD_COUNT; w++)
		if (o->workloads & (1u << w))
			capacity += case_points(o, w) * ALLOCATOR_COUNT;
	rows = xcalloc(capacity, sizeof(*rows));
	for (w = 0; w < WORKLOAD_COUNT; w++)
		if (o->workloads & (1u << w))
			n +=
			    rows_of_workload(rows + n, o, w, &group, directory);
	*count = n;
	return rows;
}

/* ------------------------------------------------------------ output */

static char *command_line(int argc, char **argv)
{
	size_t size = 16, i;
	char *line;

	for (i = 1; i < (size_t)argc; i++)
		size += strlen(argv[i]) + 3;
	line = xcalloc(size, 1);
	strcpy(line, "bench");
	for (i = 1; i < (size_t)argc; i++) {
		strcat(line, " ");
		if (strchr(argv[i], ' ') != NULL) {
			strcat(line, "'");
			strcat(line, argv[i]);
			strcat(line, "'");
		} else {
			strcat(line, argv[i]);
		}
	}
	return line;
}

static int write_file(const char *path, const struct run_info *info,
                      const struct row *rows, size_t count,
                      void (*report)(FILE *, const struct run_info *,
                                     const struct row *, size_t))
{
	FILE *out = fopen(path, "w");

	if (out == NULL) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	report(out, info, rows, count);
	if (fclose(out) != 0) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(stderr, "bench: wrote %s\n", path);
	return 0;
}

/* Counts the failed rows, and notes unoptimised workers. */
static void rows_verdict(const struct row *rows, size_t count,
                         struct run_info *info)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (rows[i].status == ROW_FAILED ||
		    rows[i].status == ROW_WRONG_SOURCE)
			info->failed++;
		if (rows[i].unoptimized)
			info->unoptimized = 1;
	}
}

/* The table, CSV or JSON on stdout, then the files and charts asked
 * for.  Returns 0, or 2 when one could not be written. */
static int report_all(const struct options *o, const struct run_info *info,
                      const struct row *rows, size_t count)
{
	int status = 0;

	if (o->csv)
		report_csv(stdout, info, rows, count);
	else if (o->json)
		report_json(stdout, info, rows, count);
	else
		report_table(stdout, info, rows, count);
	fflush(stdout);
	if (o->csv_file != NULL &&
	    write_file(o->csv_file, info, rows, count, report_csv) != 0)
		status = 2;
	if (o->json_file != NULL &&
	    write_file(o->json_file, info, rows, count, report_json) != 0)
		status = 2;
	if (o->plot_dir != NULL &&
	    plot_all(o->plot_dir, info, rows, count) != 0)
		status = 2;
	return status;
}

static void rows_free(struct row *rows, size_t count)
{
	size_t i, k;

	for (i = 0; i < count; i++) {
		free(rows[i].ns_per_op);
		free(rows[i].ops);
		free(rows[i].faults);
		free(rows[i].footprint);
		free(rows[i].footprint_open);
		for (k = 0; k < LATENCY_SIDES; k++)
			free(rows[i].latency[k]);
		for (k = 0; k < METRIC_COUNT; k++)
			free(rows[i].metric[k]);
	}
	free(rows);
}

int main(int argc, char **argv)
{
	struct options options;
	struct run_info info;
	struct row *rows;
	size_t count;
	char directory[PATH_MAX];
	double start;
	int status;

	if (options_parse(&options, argc, argv) != 0) {
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		return 2;
	}
	if (options.help) {
		options_usage(argv[0]);
		return 0;
	}
	if (options.plot_from != NULL) {
		if (options.plot_dir == NULL) {
			fprintf(stderr,
			        "bench: --plot-from needs --plot=DIR\n");
			return 2;
		}
		return plot_from_csv(options.plot_from, options.plot_dir) == 0
		           ? 0
		           : 1;
	}
	if (options.allocators == 0)
		options.allocators = (1u << ALLOCATOR_COUNT) - 1;
	if (program_directory(directory, sizeof(directory)) != 0) {
		fprintf(stderr, "bench: cannot find my own directory\n");
		return 2;
	}
	if (getenv("LD_PRELOAD") != NULL)
		fprintf(stderr, "bench: LD_PRELOAD is set; the workers run "
		                "without it\n");
	if (getenv("GLIBC_TUNABLES") != NULL)
		fprintf(stderr, "bench: GLIBC_TUNABLES is set; the workers run "
		                "without it (glibc-notrim with its own)\n");

	memset(&info, 0, sizeof(info));
	info.options = &options;
	info.command = command_line(argc, argv);
	machine_describe(&info);

	rows = rows_build(&options, directory, &count);
	if (count == 0) {
		fprintf(stderr, "bench: nothing to run: stack is a control of "
		                "the sort workload only\n");
		free(rows);
		return 2;
	}
	if (options.latency)
		timer_measure(&info.timer);
	load_average(info.load_before, sizeof(info.load_before));
	start = now_seconds();
	measure(&options, directory, rows, count);
	external_cleanup();
	info.seconds = now_seconds() - start;
	load_average(info.load_after, sizeof(info.load_after));
	derive(rows, count, &info.timer);
	rows_verdict(rows, count, &info);

	status = report_all(&options, &info, rows, count);
	if (info.failed) {
		fprintf(stderr,
		        "bench: %d row%s failed or ran the wrong "
		        "allocator (see the table)\n",
		        info.failed, info.failed == 1 ? "" : "s");
		status = 1;
	}
	rows_free(rows, count);
	free((char *)info.command);
	return status;
}
