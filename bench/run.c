/*
 * The driver's runs: every run visits every case and, within a case, every
 * allocator, each in a worker process of its own (spawned here, its
 * outputs read until it ends or times out, reaped with wait4() for its
 * peak RSS), with the allocators' order rotated from run to run.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "collect.h"
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

/* ------------------------------------------------------------ workers */

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
void measure(const struct options *o, const char *directory, struct row *rows,
             size_t count)
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
