/*
 * Shared pieces of the concurrency stress programs; see concurrency.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid(), SIGEV_THREAD_ID */
#endif
#include "concurrency.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ failure */

const char *concurrency_name = "test";
const char *concurrency_part;

void failf(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;
	flockfile(stderr);
	fprintf(stderr, "%s: FAIL ", concurrency_name);
	if (concurrency_part)
		fprintf(stderr, "[%s] ", concurrency_part);
	fprintf(stderr, "%s:%d: %s: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	funlockfile(stderr);
	abort();
}

/* ------------------------------------------------------------ helpers */

uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* splitmix64 */
uint64_t rnd(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return mix64(*state);
}

double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static _Atomic uint32_t serials = 1;

uint32_t next_serial(void)
{
	return atomic_fetch_add(&serials, 1);
}

/* ------------------------------------------------------------ preemption */

unsigned preempt_us;
static _Atomic uint64_t preemptions;

static void preempt_handler(int sig)
{
	(void)sig;
	int saved = errno;
	atomic_fetch_add_explicit(&preemptions, 1, memory_order_relaxed);
	sched_yield();
	errno = saved;
}

bool preempt_arm(timer_t *timer)
{
#ifndef SIGEV_THREAD_ID
	(void)timer;
	return false;
#else
	if (preempt_us == 0)
		return false;
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
#ifdef sigev_notify_thread_id
	sev.sigev_notify_thread_id = gettid();
#else
	sev._sigev_un._tid = gettid();
#endif
	if (timer_create(CLOCK_MONOTONIC, &sev, timer) != 0)
		return false;
	struct itimerspec its = {{0, (long)preempt_us * 1000},
	                         {0, (long)preempt_us * 1000}};
	timer_settime(*timer, 0, &its, NULL);
	return true;
#endif
}

uint64_t preempt_count(void)
{
	return atomic_load(&preemptions);
}

/* ------------------------------------------------------------ run */

bool long_run_from_env(void)
{
	const char *env = getenv("STRESS_LONG");
	return env && *env && strcmp(env, "0") != 0;
}

bool common_option(const char *arg, bool *long_run, int *modes, int *nmodes)
{
	if (strcmp(arg, "--long") == 0)
		*long_run = true;
	else if (strcmp(arg, "--mode=locked") == 0)
		modes[0] = POOL_LOCKED, *nmodes = 1;
	else if (strcmp(arg, "--mode=per-thread") == 0)
		modes[0] = POOL_PER_THREAD, *nmodes = 1;
	else if (strncmp(arg, "--preempt-us=", 13) == 0)
		preempt_us = (unsigned)strtoul(arg + 13, NULL, 10);
	else
		return false;
	return true;
}

void concurrency_start(const char *name, bool long_run)
{
	concurrency_name = name;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = preempt_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	alarm(long_run ? 4 * 3600 : 600);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

void concurrency_done(double t0)
{
	printf("%s: all OK in %.2fs (%" PRIu64 " preemptions by timer)\n",
	       concurrency_name, now() - t0, preempt_count());
}

/* ------------------------------------------------------------ owner table */

bool owner_take(_Atomic uint64_t *word, uint64_t stamp, uint64_t *held)
{
	*held = 0;
	return atomic_compare_exchange_strong_explicit(
	    word, held, stamp, memory_order_acq_rel, memory_order_acquire);
}

bool owner_release(_Atomic uint64_t *word, uint64_t stamp, uint64_t *held)
{
	*held = stamp;
	return atomic_compare_exchange_strong_explicit(
	    word, held, 0, memory_order_acq_rel, memory_order_acquire);
}

size_t owner_live(_Atomic uint64_t *owner, size_t count)
{
	size_t live = 0;
	for (size_t i = 0; i < count; i++)
		live += atomic_load(&owner[i]) != 0;
	return live;
}
