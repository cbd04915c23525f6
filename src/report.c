/*
 * Misuse reports.  This is the one place where the library writes to
 * stderr.
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ data */

/*
 * The handler and its argument are installed together.  A reporter reads
 * the pair as one, whatever other threads install meanwhile, without
 * taking a lock and without the library allocating anything (so
 * installing never fails).  Writers, serialised by handler_lock, make the
 * sequence count odd, store the pair, and make the count even again.  A
 * reader that sees the count odd, or sees it change across its reads of
 * the pair, reads again.  A NULL fn stands for the default handler.
 */
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t handler_seq;
static _Atomic(pool_error_handler_fn *) handler_fn;
static _Atomic(void *) handler_arg;

/* ------------------------------------------------------------ fork */

/* The handler lock is taken around fork(), so that a child forked while
 * another thread was installing a handler can install one too. */
void report_fork_prepare(void)
{
	pthread_mutex_lock(&handler_lock);
}

void report_fork_release(void)
{
	pthread_mutex_unlock(&handler_lock);
}

/* ------------------------------------------------------------ helpers */

/* Reads the pair installed now, as one (see handler_seq). */
static void handler_read(pool_error_handler_fn **fn, void **arg)
{
	for (;;) {
		/* This acquire load pairs with the writer's release store of
		 * the even count, so the pair read below is at least as new
		 * as that count. */
		uint64_t seq =
		    atomic_load_explicit(&handler_seq, memory_order_acquire);
		*fn = atomic_load_explicit(&handler_fn, memory_order_relaxed);
		*arg = atomic_load_explicit(&handler_arg, memory_order_relaxed);
		/* The fence orders the loads of the pair before the second
		 * load of the count.  It pairs with the writer's fence after
		 * its store of the odd count. */
		atomic_thread_fence(memory_order_acquire);
		if (!(seq & 1) &&
		    atomic_load_explicit(&handler_seq, memory_order_relaxed) ==
		        seq)
			return;
		sched_yield();
	}
}

/* Returns the public name of the set's call that stands for a pool call
 * made by one of the set's classes: "pool_free" becomes "pool_set_free",
 * and so on.  The class pools are the library's own: a program sees only
 * the set, and only the set's calls. */
static const char *set_call_name(const char *function)
{
	static const char *const names[][2] = {
	    {"pool_malloc", "pool_set_malloc"},
	    {"pool_calloc", "pool_set_calloc"},
	    {"pool_realloc", "pool_set_realloc"},
	    {"pool_strdup", "pool_set_strdup"},
	    {"pool_free", "pool_set_free"},
	    {"pool_trim", "pool_set_trim"},
	    {"pool_usable_size", "pool_set_usable_size"},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(function, names[i][0]) == 0)
			return names[i][1];
	return function;
}

static void default_handler(const pool_t *pool, const char *function,
                            const void *ptr, enum pool_error error, void *arg)
{
	char line[256];
	/* A set's call is reported with the set's address (passed as arg,
	 * see report_misuse()), and a pool's call with the pool's. */
	int n = snprintf(line, sizeof line, "shiftpool: %s(): %s: %p (%s %p)\n",
	                 function, pool_error_string(error), ptr,
	                 pool != NULL ? "pool" : "set",
	                 pool != NULL ? (const void *)pool : arg);
	/* The line is written with write(2), not stdio, because the heap or
	 * stdout may be what is broken. */
	if (n > 0) {
		ssize_t w = write(STDERR_FILENO, line,
		                  (size_t)n < sizeof line ? (size_t)n
		                                          : sizeof line - 1);
		(void)w;
	}
	abort();
}

/* The public call being made on this thread, for a report made deep
 * inside it that cannot otherwise tell which call it belongs to (a
 * corrupted link found by a trim, say).  NULL stands for an allocation,
 * which the report names pool_malloc. */
static __thread const char *current_call
    __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ internal API */

void report_misuse(const struct pool *pool, const char *function,
                   const void *ptr, enum pool_error error)
{
	pool_error_handler_fn *fn;
	void *arg;
	const pool_t *told = pool;
	/* A report changes no errno: the handler's own (or the default's
	 * write()) is undone, so that pool_free() keeps errno whatever it
	 * meets. */
	int saved = errno;

	handler_read(&fn, &arg);
	/* For a class of a set, the report names the set's call, and the
	 * handler is given no pool, since the set is not a pool. */
	if (pool != NULL && pool->set != NULL) {
		function = set_call_name(function);
		told = NULL;
	}
	/* The handler may abort, so what the trace has buffered must reach
	 * the file first. */
	trace_flush();
	if (fn != NULL)
		fn(told, function, ptr, error, arg);
	else
		default_handler(told, function, ptr, error,
		                told == NULL && pool != NULL
		                    ? (void *)pool->set
		                    : NULL);
	errno = saved;
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
	const char *call = current_call;
	report_detected(pool, call != NULL ? call : "pool_malloc", link,
	                POOL_ERROR_CORRUPTED);
}

const char *report_call_begin(const char *function)
{
	const char *outer = current_call;
	current_call = function;
	return outer;
}

void report_call_end(const char *outer)
{
	current_call = outer;
}

/* ------------------------------------------------------------ public API */

POOL_API pool_error_handler_fn *
pool_set_error_handler(pool_error_handler_fn *fn, void *arg)
{
	pthread_mutex_lock(&handler_lock);
	pool_error_handler_fn *previous =
	    atomic_load_explicit(&handler_fn, memory_order_relaxed);
	uint64_t seq = atomic_load_explicit(&handler_seq, memory_order_relaxed);
	atomic_store_explicit(&handler_seq, seq + 1, memory_order_relaxed);
	/* This release fence makes any reader that sees the new pair see
	 * the odd count too.  It pairs with the fence in handler_read(). */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&handler_fn, fn, memory_order_relaxed);
	atomic_store_explicit(&handler_arg, arg, memory_order_relaxed);
	/* This release store pairs with handler_read()'s acquire load of
	 * the count. */
	atomic_store_explicit(&handler_seq, seq + 2, memory_order_release);
	pthread_mutex_unlock(&handler_lock);
	return previous;
}

POOL_API void pool_get_error_handler(pool_error_handler_fn **handler,
                                     void **arg)
{
	pool_error_handler_fn *fn;
	void *a;

	handler_read(&fn, &a);
	if (handler != NULL)
		*handler = fn;
	if (arg != NULL)
		*arg = a;
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
