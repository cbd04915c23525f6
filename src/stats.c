/*
 * Counters for people and for machines: pool_stats() gathers the counters
 * of each mode (from list.c and span.c), and pool_stats_print() formats
 * them.
 *
 * SPDX-License-Identifier: MIT
 */
#include "list.h"
#include "locked.h"
#include "span.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

static const char *mode_name(int flags)
{
	switch (flags & POOL_MODE_MASK) {
	case POOL_SINGLE:
		return "single";
	case POOL_LOCKED:
		return "locked";
	default:
		return "per-thread";
	}
}

/* ------------------------------------------------------------ internal API */

int stats_write(FILE *stream, const pool_stats_t *st, int format,
                const char *separator)
{
	if (format == POOL_STATS_JSON)
		return fprintf(
		    stream,
		    "{\"mode\":\"%s\",\"block_size\":%zu,"
		    "\"block_count\":%zu,\"in_use\":%zu,"
		    "\"peak_in_use\":%zu,\"allocs\":%" PRIu64
		    ",\"frees\":%" PRIu64 ",\"fallback_allocs\":%" PRIu64
		    ",\"fallback_frees\":%" PRIu64 "}",
		    mode_name(st->flags), st->block_size, st->block_count,
		    st->in_use, st->peak_in_use, st->allocs, st->frees,
		    st->fallback_allocs, st->fallback_frees);
	const char *s = separator;
	return fprintf(stream,
	               "mode: %s%sblock_size: %zu%sblock_count: %zu%s"
	               "in_use: %zu%speak_in_use: %zu%sallocs: %" PRIu64
	               "%sfrees: %" PRIu64 "%sfallback_allocs: %" PRIu64
	               "%sfallback_frees: %" PRIu64 "\n",
	               mode_name(st->flags), s, st->block_size, s,
	               st->block_count, s, st->in_use, s, st->peak_in_use, s,
	               st->allocs, s, st->frees, s, st->fallback_allocs, s,
	               st->fallback_frees);
}

int stats_flush(FILE *stream, bool failed)
{
	/* A buffered stream fails only when its buffer is written out.  The
	 * buffer is written out now, so that a full device is this call's
	 * error. */
	if (failed || fflush(stream) != 0 || ferror(stream)) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ public API */

POOL_API int pool_stats(const pool_t *pool, pool_stats_t *out)
{
	if (pool == NULL || out == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* In the thread-safe modes the counters change under the caller's
	 * feet anyway.  Reading them is not a write to the pool, so the
	 * caller's pool is const, and the const is cast away here. */
	struct pool *p = (struct pool *)pool;
	memset(out, 0, sizeof *out);
	out->block_size = p->block_size;
	out->block_count = p->block_count;
	out->flags = p->flags;
	if (p->mode == POOL_PER_THREAD)
		thread_stats(p, out);
	else if (p->mode == POOL_LOCKED && !p->hooks)
		locked_stats(p, out);
	else
		list_stats(p, out);
	return 0;
}

POOL_API int pool_stats_print(const pool_t *pool, FILE *stream, int format)
{
	pool_stats_t st;

	if (stream == NULL ||
	    (format != POOL_STATS_TEXT && format != POOL_STATS_JSON) ||
	    pool_stats(pool, &st) != 0) {
		errno = EINVAL;
		return -1;
	}
	bool failed = stats_write(stream, &st, format, "\n") < 0;
	if (format == POOL_STATS_JSON)
		failed |= fputc('\n', stream) == EOF;
	return stats_flush(stream, failed);
}
