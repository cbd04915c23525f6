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

#include "driver.h"

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

/* A worker that runs longer than this is killed and its row fails. */
#define WORKER_TIMEOUT_SECONDS 600.0

/* A worker's report, with --latency's histograms (a few KiB each). */
#define OUTPUT_MAX ((size_t)1 << 18)

/* ------------------------------------------------------------ helpers */

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size);
	if (p == NULL) {
		fprintf(stderr, "bench: out of memory\n");
		exit(2);
	}
	return p;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Copies src into dst, cut to fit. */
static void copy_string(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

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

/* ------------------------------------------------------------ workers */

struct worker_output {
	char out[OUTPUT_MAX];
	char err[OUTPUT_MAX];
	int status; /* from wait4 */
	long maxrss_kib;
	int timed_out;
};

/* Appends what fd has to buf; returns 0 at end of file. */
static int drain(int fd, char *buf, size_t size)
{
	size_t used = strlen(buf);
	char scratch[1024];
	ssize_t n;

	if (used + 1 < size)
		n = read(fd, buf + used, size - used - 1);
	else
		n = read(fd, scratch, sizeof(scratch)); /* discard */
	if (n > 0 && used + 1 < size)
		buf[used + (size_t)n] = '\0';
	if (n < 0 && errno == EINTR)
		return 1;
	return n > 0;
}

/* Splits a row's command, in args, which it modifies: the NAME=VALUE
 * words before the worker's name into environment, the arguments after
 * it into argv (path first).  Each list ends with NULL. */
static void worker_argv(const char *path, char *args, char **argv,
                        char **environment, size_t size)
{
	size_t argc = 0, envc = 0;
	char *save = NULL, *arg;

	arg = strtok_r(args, " ", &save);
	while (arg != NULL && strchr(arg, '=') != NULL && envc + 1 < size) {
		environment[envc++] = arg;
		arg = strtok_r(NULL, " ", &save);
	}
	environment[envc] = NULL;
	argv[argc++] = (char *)path; /* for the worker's name, arg */
	while ((arg = strtok_r(NULL, " ", &save)) != NULL && argc + 1 < size)
		argv[argc++] = arg;
	argv[argc] = NULL;
}

/* Starts path with argv and environment added to the driver's, its
 * stdout and stderr into *out and *err.  Returns its pid, or -1 with the
 * reason in w->err. */
static pid_t worker_spawn(const char *path, char **argv, char **environment,
                          struct worker_output *w, int *out, int *err)
{
	int out_pipe[2], err_pipe[2];
	pid_t pid;

	if (pipe2(out_pipe, O_CLOEXEC) != 0 ||
	    pipe2(err_pipe, O_CLOEXEC) != 0) {
		snprintf(w->err, sizeof(w->err), "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(out_pipe[1], STDOUT_FILENO);
		dup2(err_pipe[1], STDERR_FILENO);
		/* No allocator may be slipped under a worker, nor glibc's
		 * settings changed but where a row says so. */
		unsetenv("LD_PRELOAD");
		unsetenv("GLIBC_TUNABLES");
		unsetenv("G_SLICE");
		while (*environment != NULL)
			putenv(*environment++);
		execv(path, argv);
		fprintf(stderr, "cannot run %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(out_pipe[1]);
	close(err_pipe[1]);
	if (pid < 0) {
		snprintf(w->err, sizeof(w->err), "fork: %s", strerror(errno));
		close(out_pipe[0]);
		close(err_pipe[0]);
		return -1;
	}
	*out = out_pipe[0];
	*err = err_pipe[0];
	return pid;
}

/* Reads the worker's stdout and stderr until both end or the deadline
 * passes (then kills it), and reaps it. */
static void worker_collect(pid_t pid, int out, int err, double deadline,
                           struct worker_output *w)
{
	struct pollfd fds[2] = {{.fd = out, .events = POLLIN},
	                        {.fd = err, .events = POLLIN}};
	char *buffers[2] = {w->out, w->err};
	struct rusage usage;
	int k;

	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		double left = deadline - now_seconds();

		if (left <= 0) {
			w->timed_out = 1;
			kill(pid, SIGKILL);
			break;
		}
		if (poll(fds, 2, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			break;
		for (k = 0; k < 2; k++)
			if (fds[k].fd >= 0 && fds[k].revents &&
			    !drain(fds[k].fd, buffers[k], OUTPUT_MAX)) {
				close(fds[k].fd);
				fds[k].fd = -1;
			}
	}
	for (k = 0; k < 2; k++)
		if (fds[k].fd >= 0)
			close(fds[k].fd);
	while (wait4(pid, &w->status, 0, &usage) < 0 && errno == EINTR)
		;
	w->maxrss_kib = usage.ru_maxrss;
}

/*
 * Runs path with the row's arguments; collects stdout, stderr, the exit
 * status and the peak RSS.  Returns 0 when the worker ran to a normal exit
 * with status 0.
 */
static int worker_run(const char *path, const struct row *row,
                      struct worker_output *w)
{
	char args[sizeof(row->command)];
	char *argv[64], *environment[64];
	int out, err;
	pid_t pid;

	memset(w, 0, sizeof(*w));
	copy_string(args, sizeof(args), row->command);
	worker_argv(path, args, argv, environment,
	            sizeof(argv) / sizeof(argv[0]));
	pid = worker_spawn(path, argv, environment, w, &out, &err);
	if (pid < 0)
		return -1;
	worker_collect(
	    pid, out, err,
	    now_seconds() + WORKER_TIMEOUT_SECONDS + 10 * row->c.duration, w);
	if (w->timed_out)
		return -1;
	return WIFEXITED(w->status) && WEXITSTATUS(w->status) == 0 ? 0 : -1;
}

/* Where the value of "key=" starts in a worker's output, or NULL. */
static const char *output_value(const char *out, const char *key)
{
	size_t length = strlen(key);
	const char *line = out;

	while (line != NULL && *line != '\0') {
		if (strncmp(line, key, length) == 0 && line[length] == '=')
			return line + length + 1;
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return NULL;
}

/* The value of "key=" in a worker's output, copied into buf; "" if none. */
static const char *output_field(const char *out, const char *key, char *buf,
                                size_t size)
{
	const char *value = output_value(out, key);
	size_t n = value ? strcspn(value, "\n") : 0;

	if (n >= size)
		n = size - 1;
	if (n > 0)
		memcpy(buf, value, n);
	buf[n] = '\0';
	return buf;
}

static uint64_t output_number(const char *out, const char *key)
{
	char buf[64];
	return strtoull(output_field(out, key, buf, sizeof(buf)), NULL, 10);
}

__attribute__((format(printf, 3, 4))) static void
row_fail(struct row *row, enum row_status status, const char *format, ...)
{
	va_list args;

	row->status = status;
	va_start(args, format);
	vsnprintf(row->message, sizeof(row->message), format, args);
	va_end(args);
}

/* The first line of a worker's complaint, for the row's message. */
static const char *first_line(char *text)
{
	text[strcspn(text, "\n")] = '\0';
	return text[0] ? text : "no message";
}

/* Whether the object that served a row is the one its allocator names. */
static int source_expected(enum allocator allocator, const char *source)
{
	switch (allocator) {
	case ALLOCATOR_GLIBC:
	case ALLOCATOR_GLIBC_NOTRIM:
		return has_prefix(source, "libc.so") ||
		       has_prefix(source, "libc-");
	case ALLOCATOR_TCMALLOC:
		return has_prefix(source, "libtcmalloc");
	case ALLOCATOR_JEMALLOC:
		return has_prefix(source, "libjemalloc");
	case ALLOCATOR_MIMALLOC:
		return has_prefix(source, "libmimalloc");
	case ALLOCATOR_GSLICE:
		return has_prefix(source, "libglib-2.0");
	case ALLOCATOR_DPDK:
		/* rte_mempool_get() and _put() are inline functions. */
		return strcmp(source, "bench-dpdk") == 0;
	case ALLOCATOR_BOOST:
		/* boost::pool<> is header-only C++. */
		return strcmp(source, "bench-boost") == 0;
	case ALLOCATOR_POOL_SINGLE:
	case ALLOCATOR_POOL_LOCKED:
	case ALLOCATOR_POOL_PER_THREAD:
	case ALLOCATOR_POOL_SET_SINGLE:
	case ALLOCATOR_POOL_SET_LOCKED:
	case ALLOCATOR_POOL_SET_PER_THREAD:
		/* A static build holds the pool in the worker itself. */
		return has_prefix(source, "libshiftpool") ||
		       strcmp(source, "bench-pool") == 0;
	case ALLOCATOR_POOL_SINGLE_INLINE:
	case ALLOCATOR_POOL_PER_THREAD_INLINE:
		/* The fast paths are in the worker; the rest is the
		 * library's. */
		return strcmp(source, "bench-pool-inline") == 0;
	default:
		return strcmp(source, "none") == 0;
	}
}

/* Adds a counted run's histograms to the row's (--latency).  Returns 0,
 * or -1 after failing the row. */
static int row_take_latency(struct row *row, const char *out)
{
	char key[32];
	int side;

	for (side = 0; side < LATENCY_SIDES; side++) {
		const char *value;

		if (row->latency[side] == NULL)
			continue;
		snprintf(key, sizeof(key), "latency_%s",
		         latency_side_names[side]);
		value = output_value(out, key);
		if (value == NULL ||
		    latency_parse(value, row->latency[side]) != 0) {
			row_fail(row, ROW_FAILED,
			         "worker reported no readable %s", key);
			return -1;
		}
	}
	return 0;
}

/* footprint: one counted run's RSS growth beyond the blocks, in % of
 * them (negative when less than the blocks became resident). */
static void row_take_footprint(struct row *row, const char *out)
{
	double before = (double)output_number(out, "footprint_before");
	double open = (double)output_number(out, "footprint_open");
	double after = (double)output_number(out, "footprint_after");
	double bytes = (double)output_number(out, "footprint_bytes");

	row->footprint_bytes = output_number(out, "footprint_bytes");
	row->footprint[row->runs] =
	    bytes > 0 ? 100.0 * (after - before - bytes) / bytes : 0;
	row->footprint_open[row->runs] = (open - before) / 1024.0;
}

/* Takes one worker's report into its row. */
static void row_take(struct row *row, struct worker_output *w, int counted)
{
	char field[256];
	uint64_t ops, ns;

	ops = output_number(w->out, "ops");
	ns = output_number(w->out, "ns");
	if (ops == 0 || ns == 0) {
		row_fail(row, ROW_FAILED, "worker reported no work: %s",
		         first_line(w->err));
		return;
	}
	output_field(w->out, "symbol", row->symbol, sizeof(row->symbol));
	output_field(w->out, "free_symbol", row->free_symbol,
	             sizeof(row->free_symbol));
	output_field(w->out, "fallback_symbol", row->fallback_symbol,
	             sizeof(row->fallback_symbol));
	output_field(w->out, "version", row->version, sizeof(row->version));
	copy_string(
	    row->source, sizeof(row->source),
	    base_name(output_field(w->out, "source", field, sizeof(field))));
	copy_string(row->free_source, sizeof(row->free_source),
	            base_name(output_field(w->out, "free_source", field,
	                                   sizeof(field))));
	copy_string(row->fallback_source, sizeof(row->fallback_source),
	            base_name(output_field(w->out, "fallback_source", field,
	                                   sizeof(field))));
	if (output_number(w->out, "optimized") == 0)
		row->unoptimized = 1;

	if (!source_expected(row->c.allocator, row->source) ||
	    strcmp(row->source, row->free_source) != 0) {
		row_fail(row, ROW_WRONG_SOURCE,
		         "%s came from %s and %s from %s, not from %s",
		         row->symbol, row->source, row->free_symbol,
		         row->free_source, allocator_names[row->c.allocator]);
		return;
	}
#ifndef BENCH_SANITIZED
	if (strcmp(row->fallback_source, "none") != 0 &&
	    !source_expected(ALLOCATOR_GLIBC, row->fallback_source)) {
		row_fail(row, ROW_WRONG_SOURCE,
		         "the pool's fallback %s came from %s, not from glibc",
		         row->fallback_symbol, row->fallback_source);
		return;
	}
#endif
	if (!counted)
		return;
	row->ns_per_op[row->runs] = (double)ns / (double)ops;
	row->ops[row->runs] = ops;
	if (row->runs == 0)
		row->checksum = output_number(w->out, "checksum");
	else if (!case_is_timed(&row->c) &&
	         row->checksum != output_number(w->out, "checksum"))
		row->checksum_differs = 1;
	row->pool_allocs = output_number(w->out, "pool_allocs");
	row->fallback_allocs = output_number(w->out, "fallback_allocs");
	row->faults[row->runs] = (double)output_number(w->out, "minor_faults");
	if (row->c.workload == WORKLOAD_FOOTPRINT)
		row_take_footprint(row, w->out);
	if (row->c.workload == WORKLOAD_MIXED) {
		row->mixed_live_bytes =
		    output_number(w->out, "mixed_live_bytes");
		row->mixed_rounded_bytes =
		    output_number(w->out, "mixed_rounded_bytes");
	}
	if (w->maxrss_kib > row->peak_rss_kib)
		row->peak_rss_kib = w->maxrss_kib;
	if (row_take_latency(row, w->out) != 0)
		return;
	row->runs++;
}

/*
 * Whether source is a sanitizer's runtime standing in for glibc's malloc:
 * bench/httpd is built with the project's sanitizers, which interpose
 * malloc, so its glibc row is served by them in such a build.
 */
static int sanitizer_serves_malloc(enum allocator allocator, const char *source)
{
#ifdef BENCH_SANITIZED
	return allocator == ALLOCATOR_GLIBC &&
	       (strncmp(source, "libasan", 7) == 0 ||
	        strncmp(source, "libtsan", 7) == 0);
#else
	(void)allocator;
	(void)source;
	return 0;
#endif
}

/* Runs one run of an external row (http, curl) and takes its figures. */
static void external_take(struct row *row, const char *directory, int counted)
{
	struct external_result r;
	size_t k;

	if (external_run(&row->c, directory, &r) != 0) {
		row_fail(row, ROW_FAILED, "failed: %s", r.message);
		return;
	}
	if (row->c.workload == WORKLOAD_HTTP) {
		/* httpd names the library of its allocation entry point. */
		copy_string(row->source, sizeof(row->source),
		            base_name(r.source));
		if (!source_expected(row->c.allocator, row->source) &&
		    !sanitizer_serves_malloc(row->c.allocator, row->source)) {
			row_fail(
			    row, ROW_WRONG_SOURCE,
			    "httpd's allocations came from %s, not from %s",
			    row->source, allocator_names[row->c.allocator]);
			return;
		}
	} else {
		copy_string(row->source, sizeof(row->source),
		            row->c.allocator == ALLOCATOR_GLIBC
		                ? "curl-pool --allocator=system"
		            : row->c.allocator == ALLOCATOR_POOL_PER_THREAD
		                ? "curl-pool --allocator=pool "
		                  "--pool-mode=per-thread"
		                : "curl-pool --allocator=pool");
	}
	if (!counted)
		return;
	row->ns_per_op[row->runs] = r.ns_per_op;
	row->ops[row->runs] = r.ops;
	for (k = 0; k < METRIC_COUNT; k++)
		row->metric[k][row->runs] = r.metric[k];
	row->allocs = r.allocs;
	row->flow_allocs = r.flow_allocs;
	row->pool_allocs = r.pool_allocs;
	row->fallback_allocs = r.fallback_allocs;
	if (r.maxrss_kib > row->peak_rss_kib)
		row->peak_rss_kib = r.maxrss_kib;
	row->runs++;
}

/* ------------------------------------------------------------ progress */

struct progress {
	size_t done, total;
	double start;
	int tty;
};

static void progress_show(struct progress *p, size_t run,
                          const struct options *o, const struct row *row)
{
	double elapsed = now_seconds() - p->start;
	double left =
	    p->done ? elapsed / (double)p->done * (double)(p->total - p->done)
	            : 0;
	int is_warmup = run < o->warmup;

	if (p->tty)
		fprintf(stderr,
		        "\r\033[Kbench: %s %zu/%zu  %-8s %-14s %-15s  "
		        "%zu/%zu  %.0fs, ~%.0fs left",
		        is_warmup ? "warm-up" : "run",
		        is_warmup ? run + 1 : run - o->warmup + 1,
		        is_warmup ? o->warmup : o->runs,
		        workload_names[row->c.workload], row->label,
		        allocator_names[row->c.allocator], p->done, p->total,
		        elapsed, left);
	else
		fprintf(stderr,
		        "bench: %s %zu/%zu: %s %s (%zu/%zu, %.0fs, "
		        "~%.0fs left)\n",
		        is_warmup ? "warm-up" : "run",
		        is_warmup ? run + 1 : run - o->warmup + 1,
		        is_warmup ? o->warmup : o->runs,
		        workload_names[row->c.workload], row->label, p->done,
		        p->total, elapsed, left);
}

/* ------------------------------------------------------------ measure */

/* One run of a row, counted or not: its worker, or its external
 * programs. */
static void row_run_once(struct row *row, const char *directory,
                         struct worker_output *w, int counted)
{
	const char *worker = allocator_worker(row->c.allocator);
	char path[PATH_MAX];

	if (workload_is_external(row->c.workload)) {
		external_take(row, directory, counted);
		return;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", directory, worker) >=
	        sizeof(path) ||
	    access(path, X_OK) != 0) {
		row_fail(row, ROW_FAILED, "worker %s is missing", worker);
		return;
	}
	if (worker_run(path, row, w) == 0)
		row_take(row, w, counted);
	else if (w->timed_out)
		row_fail(row, ROW_FAILED, "failed: timed out");
	else if (WIFSIGNALED(w->status))
		row_fail(row, ROW_FAILED, "failed: killed by signal %d: %s",
		         WTERMSIG(w->status), first_line(w->err));
	else
		row_fail(row, ROW_FAILED, "failed: %s", first_line(w->err));
}

/* The end of the group of rows that starts at rows[first]. */
static size_t group_end(const struct row *rows, size_t count, size_t first)
{
	size_t last = first;

	while (last < count && rows[last].group == rows[first].group)
		last++;
	return last;
}

/*
 * Every run visits every case, and within a case every allocator, starting
 * one further along each run, so that no allocator always runs first after
 * another workload or always follows the same neighbour.
 */
static void measure(const struct options *o, const char *directory,
                    struct row *rows, size_t count)
{
	const size_t total_runs = o->warmup + o->runs;
	struct progress progress;
	struct worker_output *w = xcalloc(1, sizeof(*w));
	size_t run, first, last, i, k, active = 0;

	for (i = 0; i < count; i++)
		if (rows[i].status == ROW_OK)
			active++;
	memset(&progress, 0, sizeof(progress));
	progress.total = active * total_runs;
	progress.start = now_seconds();
	progress.tty = isatty(STDERR_FILENO);

	for (run = 0; run < total_runs; run++)
		for (first = 0; first < count; first = last) {
			last = group_end(rows, count, first);
			if (!progress.tty)
				progress_show(&progress, run, o, &rows[first]);
			for (k = 0; k < last - first; k++) {
				struct row *row =
				    &rows[first + (k + run) % (last - first)];
				if (row->status != ROW_OK)
					continue;
				if (progress.tty)
					progress_show(&progress, run, o, row);
				row_run_once(row, directory, w,
				             run >= o->warmup);
				progress.done++;
			}
		}
	if (progress.tty)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "bench: %zu worker runs in %.1f s\n", progress.done,
	        now_seconds() - progress.start);
	free(w);
}

/* ------------------------------------------------------------ derive */

static const struct row *group_row(const struct row *rows, size_t count,
                                   size_t group, enum allocator allocator)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (rows[i].group == group &&
		    rows[i].c.allocator == allocator &&
		    rows[i].status == ROW_OK)
			return &rows[i];
	return NULL;
}

/* The median of n > 0 values, which it sorts. */
static double median_of(double *values, size_t n)
{
	qsort(values, n, sizeof(double), compare_doubles);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* A row's median, min and max ns/op over its counted runs (at least
 * one), and the medians of its metrics. */
static void row_summarise(struct row *row)
{
	size_t n = row->runs, k;
	double *values = xcalloc(n, sizeof(double));

	memcpy(values, row->ns_per_op, n * sizeof(double));
	row->median = median_of(values, n);
	row->min = values[0];
	row->max = values[n - 1];
	for (k = 0; k < METRIC_COUNT; k++) {
		memcpy(values, row->metric[k], n * sizeof(double));
		row->metric_median[k] = median_of(values, n);
	}
	memcpy(values, row->faults, n * sizeof(double));
	row->faults_median = median_of(values, n);
	memcpy(values, row->footprint, n * sizeof(double));
	row->footprint_median = median_of(values, n);
	row->footprint_min = values[0];
	row->footprint_max = values[n - 1];
	memcpy(values, row->footprint_open, n * sizeof(double));
	row->footprint_open_median = median_of(values, n);
	free(values);
}

/* --latency: the row's percentiles, from ticks to ns. */
static void row_latency(struct row *row, const struct timer_info *timer)
{
	int side, k;

	for (side = 0; side < LATENCY_SIDES; side++)
		for (k = 0; row->latency[side] != NULL && k < LATENCY_POINTS;
		     k++)
			row->latency_ns[side][k] =
			    latency_quantile(row->latency[side],
			                     latency_quantiles[k]) /
			    timer->ticks_per_ns;
}

/* Fixed work gives every allocator of a case the same checksum: glibc's,
 * else the first row's, is the reference. */
static void rows_check_checksums(struct row *rows, size_t count)
{
	size_t i, j;

	for (i = 0; i < count; i++) {
		struct row *row = &rows[i];
		const struct row *reference =
		    group_row(rows, count, row->group, ALLOCATOR_GLIBC);

		if (row->status != ROW_OK || case_is_timed(&row->c))
			continue;
		for (j = 0; reference == NULL && j < count; j++)
			if (rows[j].group == row->group &&
			    rows[j].status == ROW_OK)
				reference = &rows[j];
		if (reference != NULL && reference->checksum != row->checksum)
			row_fail(row, ROW_FAILED, "checksum %llu, %s's is %llu",
			         (unsigned long long)row->checksum,
			         allocator_names[reference->c.allocator],
			         (unsigned long long)reference->checksum);
	}
}

/* Each row's median over the glibc, tcmalloc and floor rows' of its
 * case; 0 where that row is missing. */
static void rows_ratios(struct row *rows, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		struct row *row = &rows[i];
		const struct row *glibc, *tcmalloc, *floor_row;

		if (row->status != ROW_OK)
			continue;
		glibc = group_row(rows, count, row->group, ALLOCATOR_GLIBC);
		tcmalloc =
		    group_row(rows, count, row->group, ALLOCATOR_TCMALLOC);
		floor_row = group_row(rows, count, row->group, ALLOCATOR_FLOOR);
		row->vs_glibc = glibc ? row->median / glibc->median : 0;
		row->vs_tcmalloc =
		    tcmalloc ? row->median / tcmalloc->median : 0;
		row->vs_floor = floor_row ? row->median / floor_row->median : 0;
		/* pair: what the allocator adds to the same copy. */
		row->has_overhead = (row->c.workload == WORKLOAD_PAIR ||
		                     row->c.workload == WORKLOAD_BULK) &&
		                    floor_row != NULL;
		if (row->has_overhead)
			row->overhead = row->median - floor_row->median;
	}
}

static void derive(struct row *rows, size_t count,
                   const struct timer_info *timer)
{
	size_t i;

	for (i = 0; i < count; i++) {
		struct row *row = &rows[i];

		if (row->status != ROW_OK)
			continue;
		if (row->runs == 0) {
			row_fail(row, ROW_FAILED, "no counted run");
			continue;
		}
		row_summarise(row);
		if (timer->measured)
			row_latency(row, timer);
		if (row->checksum_differs)
			row_fail(row, ROW_FAILED,
			         "checksum differs between runs");
	}
	rows_check_checksums(rows, count);
	rows_ratios(rows, count);
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
