/*
 * The external workloads of bench: http (bench/httpd under wrk) and
 * curl (examples/curl-pool downloading from lighttpd).  Unlike the other
 * workloads they run whole programs, one process per run as the rest of
 * bench: the allocator is the program's own (httpd --allocator=X, which
 * runs httpd-tcmalloc and its other peers; curl-pool --allocator=pool or
 * system), the load generator or server around it is not measured.
 *
 * The programs are found relative to the driver's directory: httpd
 * beside it, curl-pool in ../examples, in the build tree and in a VPATH
 * build alike.  wrk and lighttpd come from configure (BENCH_WRK,
 * BENCH_LIGHTTPD), else PATH.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_WRK
#define BENCH_WRK ""
#endif
#ifndef BENCH_LIGHTTPD
#define BENCH_LIGHTTPD ""
#endif

#define START_TIMEOUT 10.0 /* seconds for a server to listen */
#define STOP_TIMEOUT  10.0 /* seconds for httpd to report after SIGTERM */
#define CURL_TIMEOUT  120.0
#define OUT_MAX       16384

/* wrk's done() hook: the percentiles --latency does not print (p99.9),
 * and the counts, in one line that is easy to parse.  Microseconds. */
static const char wrk_script[] =
    "done = function(summary, latency, requests)\n"
    "  io.write(string.format(\"bench-wrk requests=%d duration_us=%d "
    "p50_us=%d p99_us=%d p999_us=%d connect=%d read=%d write=%d "
    "status=%d timeout=%d\\n\",\n"
    "    summary.requests, summary.duration, latency:percentile(50),\n"
    "    latency:percentile(99), latency:percentile(99.9),\n"
    "    summary.errors.connect, summary.errors.read, "
    "summary.errors.write,\n"
    "    summary.errors.status, summary.errors.timeout))\n"
    "end\n";

static char temp_dir[PATH_MAX];
static pid_t lighttpd_pid = -1;
static int lighttpd_port;

/* ------------------------------------------------------------ helpers */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The configured program, else the first name on PATH (then extra). */
static int find_program(const char *configured, const char *name,
                        const char *extra, char *buf, size_t size)
{
	const char *path = getenv("PATH");
	char list[4096];
	char *dir, *save = NULL;

	if (configured[0] != '\0' && access(configured, X_OK) == 0) {
		snprintf(buf, size, "%s", configured);
		return 0;
	}
	snprintf(list, sizeof(list), "%s:%s", path ? path : "/usr/bin", extra);
	for (dir = strtok_r(list, ":", &save); dir != NULL;
	     dir = strtok_r(NULL, ":", &save)) {
		if ((size_t)snprintf(buf, size, "%s/%s", dir[0] ? dir : ".",
		                     name) < size &&
		    access(buf, X_OK) == 0)
			return 0;
	}
	return -1;
}

/* The programs run: httpd beside the driver, curl-pool in examples/. */
#define HTTPD_PROGRAM     "httpd"
#define CURL_POOL_PROGRAM "../examples/curl-pool"

/* A built program, by its path from the driver's directory. */
static int program_path(const char *directory, const char *relative, char *buf,
                        size_t size)
{
	return (size_t)snprintf(buf, size, "%s/%s", directory, relative) <
	                   size &&
	               access(buf, X_OK) == 0
	           ? 0
	           : -1;
}

static int temp_file(const char *name, char *buf, size_t size)
{
	if (temp_dir[0] == '\0') {
		const char *base = getenv("TMPDIR");
		snprintf(temp_dir, sizeof(temp_dir),
		         "%s/shiftpool-bench.XXXXXX",
		         base && base[0] ? base : "/tmp");
		if (mkdtemp(temp_dir) == NULL) {
			temp_dir[0] = '\0';
			return -1;
		}
	}
	return (size_t)snprintf(buf, size, "%s/%s", temp_dir, name) < size ? 0
	                                                                   : -1;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

/* The first line of a file, for a message ("" if none). */
static const char *file_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f != NULL) {
		while (fgets(buf, (int)size, f) != NULL)
			if (buf[0] != '\n')
				break;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Starts argv with stdout into a pipe (*out, if out) and stderr into
 * err_path.  Returns the pid, or -1. */
static pid_t spawn(char *const argv[], int *out, const char *err_path)
{
	int fds[2] = {-1, -1};
	pid_t pid;

	if (out != NULL && pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int null = open("/dev/null", O_RDWR);
		if (err >= 0)
			dup2(err, STDERR_FILENO);
		dup2(out != NULL ? fds[1] : null, STDOUT_FILENO);
		dup2(null, STDIN_FILENO);
		if (out != NULL) {
			close(fds[0]);
			close(fds[1]);
		}
		unsetenv("LD_PRELOAD");
		execv(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (out != NULL) {
		close(fds[1]);
		if (pid < 0)
			close(fds[0]);
		else
			*out = fds[0];
	}
	return pid;
}

/* Reads fd into buf (appending) until stop appears in it, end of file, or
 * the deadline.  Returns 1 when stop was found (or at end of file when
 * stop is NULL), 0 otherwise. */
static int read_until(int fd, char *buf, size_t size, const char *stop,
                      double deadline)
{
	size_t used = strlen(buf);

	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		double left = deadline - now();
		ssize_t n;

		if (stop != NULL && strstr(buf, stop) != NULL)
			return 1;
		if (left <= 0)
			return 0;
		if (poll(&p, 1, (int)(left * 1000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (p.revents == 0)
			continue;
		if (used + 1 < size) {
			n = read(fd, buf + used, size - used - 1);
			if (n > 0)
				buf[used += (size_t)n] = '\0';
		} else {
			char scratch[1024];
			n = read(fd, scratch, sizeof(scratch));
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return stop == NULL;
	}
}

/* Waits for pid until the deadline, then kills it. */
static int wait_child(pid_t pid, double deadline, int *status,
                      struct rusage *usage)
{
	int killed = 0;

	for (;;) {
		pid_t got = wait4(pid, status, WNOHANG, usage);
		if (got == pid)
			return killed ? -1 : 0;
		if (got < 0 && errno != EINTR)
			return -1;
		if (!killed && now() > deadline) {
			kill(pid, SIGKILL);
			killed = 1;
		}
		usleep(2000);
	}
}

/* The number after "key": or key= in text; -1 if none. */
static double field(const char *text, const char *key)
{
	char pattern[64];
	const char *at;

	snprintf(pattern, sizeof(pattern), "\"%s\":", key);
	at = strstr(text, pattern);
	if (at == NULL) {
		snprintf(pattern, sizeof(pattern), " %s=", key);
		at = strstr(text, pattern);
	}
	if (at == NULL)
		return -1;
	return strtod(at + strlen(pattern), NULL);
}

static void json_text(const char *text, const char *key, char *buf, size_t size)
{
	char pattern[64];
	const char *at;
	size_t n;

	buf[0] = '\0';
	snprintf(pattern, sizeof(pattern), "\"%s\":\"", key);
	at = strstr(text, pattern);
	if (at == NULL)
		return;
	at += strlen(pattern);
	n = strcspn(at, "\"");
	if (n >= size)
		n = size - 1;
	memcpy(buf, at, n);
	buf[n] = '\0';
}

static const char *allocator_arg(enum allocator a)
{
	return a == ALLOCATOR_GLIBC ? "--allocator=system" : "--allocator=pool";
}

static int free_port(void)
{
	struct sockaddr_in addr;
	socklen_t length = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -1;
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&addr, &length) == 0)
		port = ntohs(addr.sin_port);
	close(fd);
	return port;
}

static int can_connect(int port)
{
	struct sockaddr_in addr;
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	if (fd < 0)
		return 0;
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t)port);
	ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
	close(fd);
	return ok;
}

/* ------------------------------------------------------------ public */

const char *external_missing(const struct bench_case *c, const char *directory,
                             char *buf, size_t size)
{
	char path[PATH_MAX];

	if (c->workload == WORKLOAD_HTTP) {
		if (program_path(directory, HTTPD_PROGRAM, path,
		                 sizeof(path)) != 0)
			snprintf(buf, size, "not run: bench/httpd not built");
		else if (find_program(BENCH_WRK, "wrk", "", path,
		                      sizeof(path)) != 0)
			snprintf(buf, size, "not run: wrk not found");
		else
			return NULL;
		return buf;
	}
	if (program_path(directory, CURL_POOL_PROGRAM, path, sizeof(path)) != 0)
		snprintf(buf, size,
		         "not run: examples/curl-pool not built "
		         "(configure found no libcurl)");
	else if (find_program(BENCH_LIGHTTPD, "lighttpd", "/usr/sbin:/sbin",
	                      path, sizeof(path)) != 0)
		snprintf(buf, size, "not run: lighttpd not found");
	else
		return NULL;
	return buf;
}

void external_command(const struct bench_case *c, char *buf, size_t size)
{
	if (c->workload == WORKLOAD_HTTP)
		snprintf(buf, size,
		         "bench/httpd --port=0 --threads=%zu --allocator=%s & "
		         "wrk -t%d -c%zu -d%gs --latency -s p999.lua "
		         "http://127.0.0.1:PORT/bytes/%zu; kill -TERM %%1",
		         c->threads, allocator_names[c->allocator],
		         HTTP_WRK_THREADS, c->clients, c->duration, c->size);
	else
		snprintf(buf, size,
		         "examples/curl-pool %s%s --json "
		         "http://127.0.0.1:PORT/big (lighttpd -D; %zu MiB "
		         "sparse file)",
		         allocator_arg(c->allocator),
		         c->allocator == ALLOCATOR_POOL_PER_THREAD
		             ? " --pool-mode=per-thread"
		             : "",
		         c->size >> 20);
}

static int http_run(const struct bench_case *c, const char *directory,
                    struct external_result *r)
{
	char httpd[PATH_MAX], wrk[PATH_MAX], script[PATH_MAX];
	char err_path[PATH_MAX], wrk_err[PATH_MAX], line[256];
	char threads[32], allocator[64], tflag[16], cflag[16], dflag[32];
	char url[64];
	char *out = calloc(1, OUT_MAX), *wout = calloc(1, OUT_MAX);
	char *server_argv[6], *wrk_argv[10];
	const char *at;
	struct rusage usage;
	pid_t server, client;
	int fd = -1, status, port, result = -1;
	double requests, duration_us;

	if (out == NULL || wout == NULL)
		goto done;
	if (program_path(directory, HTTPD_PROGRAM, httpd, sizeof(httpd)) != 0 ||
	    find_program(BENCH_WRK, "wrk", "", wrk, sizeof(wrk)) != 0 ||
	    temp_file("p999.lua", script, sizeof(script)) != 0 ||
	    temp_file("httpd.err", err_path, sizeof(err_path)) != 0 ||
	    temp_file("wrk.err", wrk_err, sizeof(wrk_err)) != 0 ||
	    write_text(script, wrk_script) != 0) {
		snprintf(r->message, sizeof(r->message),
		         "cannot set up httpd/wrk: %s", strerror(errno));
		goto done;
	}
	snprintf(threads, sizeof(threads), "--threads=%zu", c->threads);
	snprintf(allocator, sizeof(allocator), "--allocator=%s",
	         allocator_names[c->allocator]);
	server_argv[0] = httpd;
	server_argv[1] = "--port=0";
	server_argv[2] = threads;
	server_argv[3] = allocator;
	server_argv[4] = NULL;
	server = spawn(server_argv, &fd, err_path);
	if (server < 0) {
		snprintf(r->message, sizeof(r->message), "httpd: %s",
		         strerror(errno));
		goto done;
	}
	if (!read_until(fd, out, OUT_MAX, "\n", now() + START_TIMEOUT) ||
	    (at = strstr(out, "127.0.0.1:")) == NULL ||
	    (port = atoi(at + 10)) <= 0) {
		kill(server, SIGKILL);
		wait_child(server, now() + STOP_TIMEOUT, &status, &usage);
		snprintf(r->message, sizeof(r->message),
		         "httpd did not listen: %s",
		         file_line(err_path, line, sizeof(line)));
		goto done;
	}

	snprintf(tflag, sizeof(tflag), "-t%d", HTTP_WRK_THREADS);
	snprintf(cflag, sizeof(cflag), "-c%zu", c->clients);
	snprintf(dflag, sizeof(dflag), "-d%.0fs", c->duration);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/bytes/%zu", port,
	         c->size);
	wrk_argv[0] = wrk;
	wrk_argv[1] = tflag;
	wrk_argv[2] = cflag;
	wrk_argv[3] = dflag;
	wrk_argv[4] = "--latency";
	wrk_argv[5] = "-s";
	wrk_argv[6] = script;
	wrk_argv[7] = url;
	wrk_argv[8] = NULL;
	{
		int wfd = -1;
		struct rusage wusage;
		client = spawn(wrk_argv, &wfd, wrk_err);
		if (client > 0) {
			double deadline = now() + c->duration + 30;
			read_until(wfd, wout, OUT_MAX, NULL, deadline);
			close(wfd);
			if (wait_child(client, deadline, &status, &wusage) !=
			        0 ||
			    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
				client = -1;
		}
	}

	/* Stop the server and read its report, even when wrk failed. */
	kill(server, SIGTERM);
	read_until(fd, out, OUT_MAX, NULL, now() + STOP_TIMEOUT);
	close(fd);
	if (wait_child(server, now() + STOP_TIMEOUT, &status, &usage) != 0) {
		snprintf(r->message, sizeof(r->message),
		         "httpd did not stop on SIGTERM");
		goto done;
	}
	r->maxrss_kib = usage.ru_maxrss;
	if (client < 0 || (at = strstr(wout, "bench-wrk ")) == NULL) {
		snprintf(r->message, sizeof(r->message), "wrk failed: %s",
		         file_line(wrk_err, line, sizeof(line)));
		goto done;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    strstr(out, "\"clean\":true") == NULL) {
		snprintf(
		    r->message, sizeof(r->message), "httpd %s%d, not clean: %s",
		    WIFEXITED(status) ? "exit " : "signal ",
		    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		    file_line(err_path, line, sizeof(line)));
		goto done;
	}
	if (field(at, "connect") != 0 || field(at, "write") != 0 ||
	    field(at, "status") != 0) {
		snprintf(r->message, sizeof(r->message),
		         "wrk saw errors: connect %.0f, write %.0f, non-2xx "
		         "%.0f",
		         field(at, "connect"), field(at, "write"),
		         field(at, "status"));
		goto done;
	}
	requests = field(at, "requests");
	duration_us = field(at, "duration_us");
	if (!(requests > 0) || !(duration_us > 0)) {
		snprintf(r->message, sizeof(r->message), "wrk made no request");
		goto done;
	}
	r->ops = (uint64_t)requests;
	r->ns_per_op = duration_us * 1e3 / requests;
	r->metric[METRIC_P50_US] = field(at, "p50_us");
	r->metric[METRIC_P99_US] = field(at, "p99_us");
	r->metric[METRIC_P999_US] = field(at, "p999_us");
	r->allocs = (uint64_t)field(out, "allocs");
	json_text(out, "library", r->source, sizeof(r->source));
	at = strstr(out, "\"pool\":{");
	if (at != NULL) {
		r->pool_allocs = (uint64_t)field(at, "allocs");
		r->fallback_allocs = (uint64_t)field(at, "fallback_allocs");
	}
	result = 0;
done:
	free(out);
	free(wout);
	return result;
}

static int lighttpd_start(char *message, size_t size)
{
	char lighttpd[PATH_MAX], root[PATH_MAX], big[PATH_MAX];
	char conf[PATH_MAX], log[PATH_MAX], err[PATH_MAX], text[4 * PATH_MAX];
	char line[256];
	char *argv[5];
	double deadline;
	int fd;

	if (find_program(BENCH_LIGHTTPD, "lighttpd", "/usr/sbin:/sbin",
	                 lighttpd, sizeof(lighttpd)) != 0 ||
	    temp_file("root", root, sizeof(root)) != 0 ||
	    temp_file("root/big", big, sizeof(big)) != 0 ||
	    temp_file("lighttpd.conf", conf, sizeof(conf)) != 0 ||
	    temp_file("lighttpd.log", log, sizeof(log)) != 0 ||
	    temp_file("lighttpd.err", err, sizeof(err)) != 0 ||
	    (mkdir(root, 0700) != 0 && errno != EEXIST)) {
		snprintf(message, size, "cannot set up lighttpd: %s",
		         strerror(errno));
		return -1;
	}
	/* Sparse: no disk, and the page cache holds zero pages only. */
	fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)CURL_FILE_BYTES) != 0) {
		snprintf(message, size, "%.200s: %s", big, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	lighttpd_port = free_port();
	snprintf(text, sizeof(text),
	         "server.document-root = \"%s\"\n"
	         "server.bind = \"127.0.0.1\"\n"
	         "server.port = %d\n"
	         "server.errorlog = \"%s\"\n",
	         root, lighttpd_port, log);
	if (lighttpd_port <= 0 || write_text(conf, text) != 0) {
		snprintf(message, size, "cannot write %.200s", conf);
		return -1;
	}
	argv[0] = lighttpd;
	argv[1] = "-D";
	argv[2] = "-f";
	argv[3] = conf;
	argv[4] = NULL;
	lighttpd_pid = spawn(argv, NULL, err);
	deadline = now() + START_TIMEOUT;
	while (lighttpd_pid > 0 && !can_connect(lighttpd_port)) {
		int status;
		if (waitpid(lighttpd_pid, &status, WNOHANG) == lighttpd_pid ||
		    now() > deadline) {
			if (now() > deadline) {
				kill(lighttpd_pid, SIGKILL);
				waitpid(lighttpd_pid, &status, 0);
			}
			lighttpd_pid = -1;
			file_line(err, line, sizeof(line));
			if (line[0] == '\0')
				file_line(log, line, sizeof(line));
			snprintf(message, size, "lighttpd did not start: %s",
			         line);
			return -1;
		}
		usleep(10000);
	}
	return lighttpd_pid > 0 ? 0 : -1;
}

static int curl_run(const struct bench_case *c, const char *directory,
                    struct external_result *r)
{
	char program[PATH_MAX], err[PATH_MAX], url[64], line[256];
	char *out = calloc(1, OUT_MAX);
	char *argv[6];
	struct rusage usage;
	pid_t pid;
	int fd = -1, status, argc = 0, result = -1;
	double bytes, seconds, cpu;
	const char *pool;

	if (out == NULL)
		goto done;
	if (lighttpd_pid < 0 &&
	    lighttpd_start(r->message, sizeof(r->message)) != 0)
		goto done;
	if (program_path(directory, CURL_POOL_PROGRAM, program,
	                 sizeof(program)) != 0 ||
	    temp_file("curl-pool.err", err, sizeof(err)) != 0) {
		snprintf(r->message, sizeof(r->message), "no curl-pool");
		goto done;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/big", lighttpd_port);
	argv[argc++] = program;
	argv[argc++] = (char *)allocator_arg(c->allocator);
	if (c->allocator == ALLOCATOR_POOL_PER_THREAD)
		argv[argc++] = "--pool-mode=per-thread";
	argv[argc++] = "--json";
	argv[argc++] = url;
	argv[argc] = NULL;
	pid = spawn(argv, &fd, err);
	if (pid < 0) {
		snprintf(r->message, sizeof(r->message), "curl-pool: %s",
		         strerror(errno));
		goto done;
	}
	read_until(fd, out, OUT_MAX, NULL, now() + CURL_TIMEOUT);
	close(fd);
	if (wait_child(pid, now() + CURL_TIMEOUT, &status, &usage) != 0 ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    strstr(out, "\"ok\":true") == NULL ||
	    strstr(out, "\"clean\":true") == NULL) {
		snprintf(r->message, sizeof(r->message),
		         "curl-pool failed (status %d): %s", status,
		         file_line(err, line, sizeof(line)));
		goto done;
	}
	bytes = field(out, "bytes");
	seconds = field(out, "seconds");
	if (bytes != (double)c->size || !(seconds > 0)) {
		snprintf(r->message, sizeof(r->message),
		         "curl-pool got %.0f bytes of %zu", bytes, c->size);
		goto done;
	}
	cpu = (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 +
	      (double)usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
	r->maxrss_kib = usage.ru_maxrss;
	r->ops = (uint64_t)(bytes / 1e6);
	r->ns_per_op = seconds * 1e9 / (bytes / 1e6);
	r->metric[METRIC_CPU_S_PER_GB] = cpu / (bytes / 1e9);
	r->allocs = (uint64_t)field(out, "allocations");
	r->flow_allocs = (uint64_t)field(out, "flow_allocations");
	pool = strstr(out, "\"pool\":{");
	if (pool != NULL) {
		r->fallback_allocs = (uint64_t)field(pool, "fallback_allocs");
		r->pool_allocs = (uint64_t)field(pool, "allocs");
	}
	result = 0;
done:
	free(out);
	return result;
}

int external_run(const struct bench_case *c, const char *directory,
                 struct external_result *r)
{
	memset(r, 0, sizeof(*r));
	return c->workload == WORKLOAD_HTTP ? http_run(c, directory, r)
	                                    : curl_run(c, directory, r);
}

void external_cleanup(void)
{
	static const char *const files[] = {
	    "p999.lua",      "httpd.err",    "wrk.err",      "root/big",
	    "lighttpd.conf", "lighttpd.log", "lighttpd.err", "curl-pool.err",
	};
	char path[PATH_MAX];
	size_t i;

	if (lighttpd_pid > 0) {
		int status;
		kill(lighttpd_pid, SIGTERM);
		if (wait_child(lighttpd_pid, now() + STOP_TIMEOUT, &status,
		               &(struct rusage){0}) != 0)
			waitpid(lighttpd_pid, &status, 0);
		lighttpd_pid = -1;
	}
	if (temp_dir[0] == '\0')
		return;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (temp_file(files[i], path, sizeof(path)) == 0)
			unlink(path);
	if (temp_file("root", path, sizeof(path)) == 0)
		rmdir(path);
	rmdir(temp_dir);
	temp_dir[0] = '\0';
}
