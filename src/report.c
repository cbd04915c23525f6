/*
 * Misuse reporting: the one place where the library writes to stderr.
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ------------------------------------------------------------ data */

/*
 * The handler and its argument are installed together, as one pair that
 * never changes once published: a reporter holding a pair reads the one
 * that was current, whatever other threads install meanwhile.  Pairs are
 * kept for the life of the process and reused when the same pair is
 * installed again, so a program that switches between handlers does not
 * grow; the first HANDLER_STATIC pairs need no allocation.
 */
struct handler {
	pool_error_handler_fn *fn;
	void *arg;
	struct handler *next; /* every pair ever made, guarded by the lock */
};

#define HANDLER_STATIC 8

static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handler handler_static[HANDLER_STATIC];
static size_t handler_static_used;
static struct handler *handler_pairs;
/* Published with release, read with acquire: a reader sees the pair's
 * fields as they were written. */
static _Atomic(struct handler *) current_handler;

/* ------------------------------------------------------------ fork */

/* fork(): the handler lock is taken around it, so that a child forked
 * while another thread installs a handler can install one too. */
void report_fork_prepare(void)
{
	pthread_mutex_lock(&handler_lock);
}

void report_fork_release(void)
{
	pthread_mutex_unlock(&handler_lock);
}

/* ------------------------------------------------------------ helpers */

static void default_handler(const pool_t *pool, const char *function,
                            const void *ptr, enum pool_error error, void *arg)
{
	char line[256];
	(void)arg;
	int n = snprintf(line, sizeof line,
	                 "shiftpool: %s(): %s: %p (pool %p)\n", function,
	                 pool_error_string(error), ptr, (const void *)pool);
	/* write(2), not stdio: the heap or stdout may be what is broken. */
	if (n > 0) {
		ssize_t w = write(STDERR_FILENO, line,
		                  (size_t)n < sizeof line ? (size_t)n
		                                          : sizeof line - 1);
		(void)w;
	}
	abort();
}

/* The pair (fn, arg): one made before, or a new one; NULL when memory for
 * it cannot be had.  Lock held. */
static struct handler *handler_find(pool_error_handler_fn *fn, void *arg)
{
	struct handler *pair;

	for (pair = handler_pairs; pair != NULL; pair = pair->next)
		if (pair->fn == fn && pair->arg == arg)
			return pair;
	if (handler_static_used < HANDLER_STATIC)
		pair = &handler_static[handler_static_used++];
	else if ((pair = malloc(sizeof *pair)) == NULL)
		return NULL;
	pair->fn = fn;
	pair->arg = arg;
	pair->next = handler_pairs;
	handler_pairs = pair;
	return pair;
}

/* ------------------------------------------------------------ internal API */

void report_misuse(const struct pool *pool, const char *function,
                   const void *ptr, enum pool_error error)
{
	struct handler *h =
	    atomic_load_explicit(&current_handler, memory_order_acquire);
	/* The handler may abort: what the trace holds must reach the file
	 * first. */
	trace_flush();
	if (h && h->fn)
		h->fn(pool, function, ptr, error, h->arg);
	else
		default_handler(pool, function, ptr, error, NULL);
}

void report_detected(const struct pool *pool, const char *function,
                     const void *ptr, enum pool_error error)
{
	if (pool->hooks & HOOK_TRACE)
		trace_record(pool, TRACE_OP_REPORT,
		             "error=%s function=%s ptr=0x%" PRIxPTR,
		             trace_error_name(error), function, (uintptr_t)ptr);
	report_misuse(pool, function, ptr, error);
}

void report_corrupted(struct pool *pool, const void *link)
{
	report_detected(pool, "pool_malloc", link, POOL_ERROR_CORRUPTED);
}

/* ------------------------------------------------------------ public API */

POOL_API pool_error_handler_fn *
pool_set_error_handler(pool_error_handler_fn *fn, void *arg)
{
	pthread_mutex_lock(&handler_lock);
	struct handler *old =
	    atomic_load_explicit(&current_handler, memory_order_relaxed);
	pool_error_handler_fn *previous = old ? old->fn : NULL;
	struct handler *pair = handler_find(fn, arg);
	if (pair != NULL)
		atomic_store_explicit(&current_handler, pair,
		                      memory_order_release);
	pthread_mutex_unlock(&handler_lock);
	if (pair == NULL) {
		/* Nothing changed: say so the only way this call can. */
		errno = ENOMEM;
		return NULL;
	}
	return previous;
}

POOL_API const char *pool_error_string(enum pool_error error)
{
	switch (error) {
	case POOL_ERROR_INVALID_POINTER:
		return "invalid pointer (not the start of a block)";
	case POOL_ERROR_DOUBLE_FREE:
		return "double free";
	case POOL_ERROR_CORRUPTED:
		return "pool corrupted";
	case POOL_ERROR_WRITE_AFTER_FREE:
		return "write after free";
	case POOL_ERROR_WRONG_POOL:
		return "pointer of another pool";
	}
	return "unknown error";
}

POOL_API const char *shiftpool_version(void)
{
	return SHIFTPOOL_VERSION_STRING;
}
