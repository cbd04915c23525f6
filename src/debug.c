/*
 * Debugging aids, all off unless asked for: the fill pattern that catches
 * writes after free, failing the Nth fallback allocation, the description
 * of blocks to Valgrind's memcheck, and the trace of every call.
 *
 *   SHIFTPOOL_DEBUG=fill,fail-fallback=N,no-valgrind
 *                                          (comma list; unknown words are
 *                                           ignored; no-valgrind keeps the
 *                                           pool from describing itself to
 *                                           Valgrind, e.g. under callgrind)
 *   SHIFTPOOL_TRACE=FILE                   (appends one line per call)
 *
 * Both are read by pool_init(), so they apply to pools created after they
 * are set.
 *
 * SPDX-License-Identifier: MIT
 */
#include "hooks.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ data */

/* The trace file, opened by the first pool that sees SHIFTPOOL_TRACE and
 * kept until exit.  stdio locks the stream: each line is one fwrite. */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *trace_file;
static char trace_buffer[1 << 16];

/* ------------------------------------------------------------ helpers */

static void trace_flush(void)
{
	if (trace_file)
		fflush(trace_file);
}

/* Opens the trace file once; returns whether tracing is on. */
static bool trace_open(const char *path)
{
	pthread_mutex_lock(&trace_lock);
	if (trace_file == NULL) {
		trace_file = fopen(path, "ae");
		if (trace_file) {
			setvbuf(trace_file, trace_buffer, _IOFBF,
			        sizeof trace_buffer);
			fputs("# shiftpool trace v1\n", trace_file);
			atexit(trace_flush);
		}
	}
	bool on = trace_file != NULL;
	pthread_mutex_unlock(&trace_lock);
	return on;
}

/* Parses SHIFTPOOL_DEBUG into the pool; returns false for no-valgrind. */
static bool parse_debug_options(struct pool *pool, const char *options)
{
	bool valgrind = true;
	const char *word = options;
	while (*word) {
		size_t len = strcspn(word, ",");
		if (len == 4 && strncmp(word, "fill", 4) == 0) {
			pool->hooks |= HOOK_FILL;
		} else if (len > 14 &&
		           strncmp(word, "fail-fallback=", 14) == 0) {
			char *end;
			unsigned long long n = strtoull(word + 14, &end, 10);
			if (end == word + len)
				pool->fail_fallback_at = n;
		} else if (len == 11 && strncmp(word, "no-valgrind", 11) == 0) {
			valgrind = false;
		}
		word += len;
		if (*word == ',')
			word++;
	}
	return valgrind;
}

/* Whether bytes [from, size) of block all hold the fill pattern. */
static bool fill_intact(const unsigned char *block, size_t from, size_t size)
{
	for (size_t i = from; i < size; i++)
		if (block[i] != FILL_BYTE)
			return false;
	return true;
}

/* ------------------------------------------------------------ internal API */

void debug_configure(struct pool *pool)
{
	if (pool->flags & POOL_DEBUG_FILL)
		pool->hooks |= HOOK_FILL;
	const char *options = getenv("SHIFTPOOL_DEBUG");
	bool valgrind = options ? parse_debug_options(pool, options) : true;
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (valgrind && RUNNING_ON_VALGRIND) {
		pool->hooks |= HOOK_VALGRIND;
		/* Blocks become accessible when handed out. */
		VALGRIND_MAKE_MEM_NOACCESS(pool->base,
		                           (size_t)(pool->end - pool->base));
	}
#else
	(void)valgrind;
#endif
	const char *trace = getenv("SHIFTPOOL_TRACE");
	if (trace && *trace && trace_open(trace)) {
		pool->hooks |= HOOK_TRACE;
		trace_write(pool,
		            "init pool=%llu block_size=%zu block_count=%zu "
		            "flags=0x%x",
		            (unsigned long long)pool->id, pool->block_size,
		            pool->block_count, (unsigned)pool->flags);
	}
}

void debug_release(struct pool *pool)
{
	if (pool->hooks & HOOK_TRACE) {
		trace_write(pool, "destroy pool=%llu",
		            (unsigned long long)pool->id);
		pthread_mutex_lock(&trace_lock);
		trace_flush();
		pthread_mutex_unlock(&trace_lock);
	}
#ifdef HAVE_VALGRIND_MEMCHECK_H
	/* Blocks still handed out die with the pool: say so, or memcheck
	 * would call them leaks. */
	if (pool->hooks & HOOK_VALGRIND) {
		size_t limit = pool->mode == POOL_PER_THREAD
		                   ? pool->block_count
		                   : pool->shared.bump;
		for (size_t i = 0; i < limit; i++)
			if (pool_block_is_live(pool, i))
				VALGRIND_FREELIKE_BLOCK(region_block(pool, i),
				                        0);
	}
#endif
}

bool debug_fail_fallback(struct pool *pool)
{
	uint64_t n = atomic_fetch_add_explicit(&pool->fallback_attempts, 1,
	                                       memory_order_relaxed) +
	             1;
	return n == pool->fail_fallback_at;
}

void trace_write(const struct pool *pool, const char *format, ...)
{
	char line[512];
	int saved = errno;
	va_list args;

	(void)pool;
	va_start(args, format);
	int n = vsnprintf(line, sizeof line - 1, format, args);
	va_end(args);
	if (n < 0) {
		errno = saved;
		return;
	}
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	fwrite(line, 1, (size_t)n, trace_file);
	errno = saved;
}

void hooks_block_out_slow(struct pool *pool, void *block, bool fresh,
                          unsigned hooks)
{
	size_t from = LINK_WORDS * sizeof(uintptr_t);
	if ((hooks & HOOK_FILL) && !fresh) {
#ifdef SHIFTPOOL_ASAN
		ASAN_UNPOISON_MEMORY_REGION(block, pool->block_size);
#endif
#ifdef HAVE_VALGRIND_MEMCHECK_H
		if (hooks & HOOK_VALGRIND)
			VALGRIND_MAKE_MEM_DEFINED(block, pool->block_size);
#endif
		if (!fill_intact(block, from, pool->block_size))
			pool_report(pool, "pool_malloc", block,
			            POOL_ERROR_WRITE_AFTER_FREE);
	}
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (hooks & HOOK_VALGRIND)
		VALGRIND_MALLOCLIKE_BLOCK(block, pool->block_size, 0, fresh);
#endif
}

void hooks_block_in_slow(struct pool *pool, void *block, unsigned hooks)
{
	if (hooks & HOOK_FILL) {
#ifdef SHIFTPOOL_ASAN
		ASAN_UNPOISON_MEMORY_REGION(block, pool->block_size);
#endif
		memset(block, FILL_BYTE, pool->block_size);
	}
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (hooks & HOOK_VALGRIND)
		VALGRIND_FREELIKE_BLOCK(block, 0);
#endif
}

/* Called by pool_report() before the handler, which may abort. */
void debug_before_report(void)
{
	if (pthread_mutex_trylock(&trace_lock) == 0) {
		trace_flush();
		pthread_mutex_unlock(&trace_lock);
	}
}
