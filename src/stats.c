/*
 * Counters for people and machines: pool_stats() gathers each mode's
 * (shared.c, thread.c), pool_stats_print() formats them.
 *
 * SPDX-License-Identifier: MIT
 */
#include "shared.h"
#include "thread.h"

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

/* ------------------------------------------------------------ public API */

POOL_API int pool_stats(const pool_t *pool, pool_stats_t *out)
{
	if (pool == NULL || out == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* The counters change under the caller's feet in the thread-safe
	 * modes: reading them is not a write to the pool. */
	struct pool *p = (struct pool *)pool;
	memset(out, 0, sizeof *out);
	out->block_size = p->block_size;
	out->block_count = p->block_count;
	out->flags = p->flags;
	if (p->mode == POOL_PER_THREAD)
		thread_stats(p, out);
	else
		shared_stats(p, out);
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
	int n;
	if (format == POOL_STATS_JSON)
		n = fprintf(stream,
		            "{\"mode\":\"%s\",\"block_size\":%zu,"
		            "\"block_count\":%zu,\"in_use\":%zu,"
		            "\"peak_in_use\":%zu,\"allocs\":%" PRIu64
		            ",\"frees\":%" PRIu64
		            ",\"fallback_allocs\":%" PRIu64
		            ",\"fallback_frees\":%" PRIu64 "}\n",
		            mode_name(st.flags), st.block_size, st.block_count,
		            st.in_use, st.peak_in_use, st.allocs, st.frees,
		            st.fallback_allocs, st.fallback_frees);
	else
		n = fprintf(stream,
		            "mode: %s\nblock_size: %zu\nblock_count: %zu\n"
		            "in_use: %zu\npeak_in_use: %zu\nallocs: %" PRIu64
		            "\nfrees: %" PRIu64 "\nfallback_allocs: %" PRIu64
		            "\nfallback_frees: %" PRIu64 "\n",
		            mode_name(st.flags), st.block_size, st.block_count,
		            st.in_use, st.peak_in_use, st.allocs, st.frees,
		            st.fallback_allocs, st.fallback_frees);
	/* A stream that buffers only fails when the buffer is written out:
	 * write it now, so that a full device is this call's error. */
	if (n < 0 || fflush(stream) != 0 || ferror(stream)) {
		errno = EIO;
		return -1;
	}
	return 0;
}
