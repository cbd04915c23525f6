/*
 * Helpers shared by the safety-* tests (tests/safety.mk): the modes, a
 * misuse handler that records instead of aborting, failure counting, raw
 * access to a block the pool has poisoned (the tests write into free
 * blocks on purpose), and a bounded wait for a child process.  Header
 * only: each test is one translation unit.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SAFETY_UTIL_H
#define SAFETY_UTIL_H

#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#include "shiftpool.h"

#ifdef SHIFTPOOL_ASAN
#include <sanitizer/asan_interface.h>
#define SAFETY_NO_ASAN                                                         \
	static __attribute__((noinline, unused, no_sanitize_address))
#else
#define SAFETY_NO_ASAN static __attribute__((noinline, unused))
#endif

/* Every helper may go unused in a given test. */
#define SAFETY_FN static __attribute__((unused))

/* Automake's exit status for a skipped test. */
#define SAFETY_SKIP 77

/* ------------------------------------------------------------ modes */

struct safety_mode {
	int flag;
	const char *name;
};

static const struct safety_mode safety_modes[] __attribute__((unused)) = {
    {POOL_SINGLE, "single"},
    {POOL_LOCKED, "locked"},
    {POOL_PER_THREAD, "per-thread"},
};
#define SAFETY_MODE_COUNT (sizeof safety_modes / sizeof safety_modes[0])

/* ------------------------------------------------------------ failures */

static _Atomic unsigned safety_failures;

__attribute__((format(printf, 3, 4))) SAFETY_FN void
safety_fail(const char *file, int line, const char *format, ...)
{
	va_list args;
	fprintf(stderr, "%s:%d: FAIL: ", file, line);
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
	atomic_fetch_add(&safety_failures, 1);
}

/* CHECK(cond, "context %d", x): counts a failure, goes on. */
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
			        __LINE__, #cond);                              \
			safety_fail(__FILE__, __LINE__, __VA_ARGS__);          \
		}                                                              \
	} while (0)

/* REQUIRE: as CHECK, but the test cannot go on: exit 1 (99 is "hard
 * error" to automake; a broken precondition is a plain failure here). */
#define REQUIRE(cond, ...)                                                     \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: requirement failed: %s\n",     \
			        __FILE__, __LINE__, #cond);                    \
			safety_fail(__FILE__, __LINE__, __VA_ARGS__);          \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* The exit status of a test: 0 when nothing failed. */
SAFETY_FN int safety_result(const char *name)
{
	unsigned n = atomic_load(&safety_failures);
	if (n)
		fprintf(stderr, "%s: %u failure%s\n", name, n,
		        n == 1 ? "" : "s");
	else
		printf("%s: all checks passed\n", name);
	return n ? 1 : 0;
}

/* ------------------------------------------------------------ reports */

#define SAFETY_MAX_ERROR 8

/* What the recording handler saw since the last safety_reports_reset(). */
struct safety_reports {
	_Atomic unsigned count[SAFETY_MAX_ERROR]; /* by enum pool_error */
	_Atomic unsigned total;
	const void *_Atomic last_ptr;
	const pool_t *_Atomic last_pool;
	const char *_Atomic last_function;
};

static struct safety_reports safety_seen;

SAFETY_FN void safety_record(const pool_t *pool, const char *function,
                             const void *ptr, enum pool_error error, void *arg)
{
	(void)arg;
	unsigned e = (unsigned)error < SAFETY_MAX_ERROR ? (unsigned)error : 0;
	atomic_fetch_add(&safety_seen.count[e], 1);
	atomic_fetch_add(&safety_seen.total, 1);
	atomic_store(&safety_seen.last_ptr, ptr);
	atomic_store(&safety_seen.last_pool, pool);
	atomic_store(&safety_seen.last_function, function);
}

SAFETY_FN void safety_reports_reset(void)
{
	for (unsigned i = 0; i < SAFETY_MAX_ERROR; i++)
		atomic_store(&safety_seen.count[i], 0);
	atomic_store(&safety_seen.total, 0);
	atomic_store(&safety_seen.last_ptr, NULL);
	atomic_store(&safety_seen.last_pool, NULL);
	atomic_store(&safety_seen.last_function, NULL);
}

SAFETY_FN unsigned safety_reported(enum pool_error error)
{
	return atomic_load(&safety_seen.count[error]);
}

SAFETY_FN unsigned safety_reported_total(void)
{
	return atomic_load(&safety_seen.total);
}

/* Installs the recording handler (and clears what it saw). */
SAFETY_FN void safety_record_reports(void)
{
	safety_reports_reset();
	pool_set_error_handler(safety_record, NULL);
}

/* ------------------------------------------------------------ raw access */

/* Byte access to memory the pool may have poisoned for ASan: the tests
 * play the buggy program here, and must not be stopped by ASan for it. */
SAFETY_NO_ASAN void safety_raw_write(void *p, size_t offset,
                                     unsigned char value)
{
	((volatile unsigned char *)p)[offset] = value;
}

SAFETY_NO_ASAN unsigned char safety_raw_read(const void *p, size_t offset)
{
	return ((const volatile unsigned char *)p)[offset];
}

SAFETY_NO_ASAN void safety_raw_write_word(void *p, size_t word, uintptr_t value)
{
	((volatile uintptr_t *)p)[word] = value;
}

SAFETY_NO_ASAN uintptr_t safety_raw_read_word(const void *p, size_t word)
{
	return ((const volatile uintptr_t *)p)[word];
}

/* ------------------------------------------------------------ stats */

SAFETY_FN pool_stats_t safety_stats(const pool_t *pool)
{
	pool_stats_t st;
	if (pool_stats(pool, &st) != 0) {
		safety_fail(__FILE__, __LINE__, "pool_stats failed");
		memset(&st, 0, sizeof st);
	}
	return st;
}

/* ------------------------------------------------------------ children */

/* Seconds on the monotonic clock: for reports, never for a verdict. */
SAFETY_FN double safety_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits for a child at most `seconds`, a bound far above any normal run
 * that only turns a hang into a failure; kills it and returns false when
 * the bound passes.  *status is waitpid()'s, or -1 when waiting failed. */
SAFETY_FN bool safety_wait_bounded(pid_t pid, int *status, int seconds)
{
	struct timespec nap = {0, 200 * 1000};
	double deadline = safety_now() + seconds;
	while (safety_now() < deadline) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return true;
		if (w < 0 && errno != EINTR) {
			*status = -1;
			return true;
		}
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 10 * 1000 * 1000)
			nap.tv_nsec *= 2;
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return false;
}

#endif /* SAFETY_UTIL_H */
