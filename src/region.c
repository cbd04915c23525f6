/*
 * The region: one contiguous mapping of block_count blocks of 2^k bytes,
 * between two inaccessible guard pages, and apart from it, in a mapping of
 * their own, the pool and the side tables its mode needs (a bit per block,
 * or a descriptor per span).  The last block ends where the upper guard
 * page starts, so a write that runs off the end of the region faults at
 * the write; one that runs off the start faults too when the region fills
 * whole pages, and otherwise lands in the unused start of the first page.
 * Neither reaches the pool's own bookkeeping.
 *
 * Everything is mapped anonymous and private, so the kernel hands out zero
 * pages on first touch: a pool costs address space at pool_init() and
 * resident memory only as blocks are used, and a block that was never handed
 * out is known to be zero.  MAP_NORESERVE: untouched pages cost nothing,
 * not even commit charge.
 *
 * SPDX-License-Identifier: MIT
 */
#include "hooks.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static size_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);
	return page > 0 ? (size_t)page : 4096;
}

/* Rounds n up to a multiple of align (a power of two); 0 on overflow. */
static size_t round_up(size_t n, size_t align)
{
	if (n > SIZE_MAX - (align - 1))
		return 0;
	return (n + align - 1) & ~(align - 1);
}

static void *map_anonymous(size_t size, int protection)
{
	void *map = mmap(NULL, size, protection,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return map == MAP_FAILED ? NULL : map;
}

/* The size of a pool's own mapping: the structure, then a bit per block
 * (POOL_SINGLE, POOL_LOCKED) or a descriptor per span (POOL_PER_THREAD),
 * cache-line aligned; 0 on overflow. */
static size_t side_size(int mode, size_t count, unsigned span_shift,
                        size_t *spans_at, size_t *span_count)
{
	size_t words = (count - 1) / 64 + 1;
	size_t head = sizeof(struct pool);
	if (mode != POOL_PER_THREAD)
		return words > (SIZE_MAX - head) / sizeof(uint64_t)
		           ? 0
		           : head + words * sizeof(uint64_t);
	size_t spans = ((count - 1) >> span_shift) + 1;
	*spans_at = round_up(head, POOL_CACHE_LINE);
	*span_count = spans;
	if (spans > (SIZE_MAX - *spans_at) / sizeof(struct span))
		return 0;
	return *spans_at + spans * sizeof(struct span);
}

/* ------------------------------------------------------------ internal API */

struct pool *region_pool_map(int mode, size_t block_count, unsigned span_shift)
{
	size_t spans_at = 0, span_count = 0;
	size_t size = round_up(
	    side_size(mode, block_count, span_shift, &spans_at, &span_count),
	    page_size());
	if (size == 0)
		return NULL;
	struct pool *pool = map_anonymous(size, PROT_READ | PROT_WRITE);
	if (pool == NULL)
		return NULL;
	pool->side = pool;
	pool->side_size = size;
	if (mode == POOL_PER_THREAD) {
		pool->spans = (struct span *)((char *)pool + spans_at);
		pool->span_count = span_count;
	}
	return pool;
}

int region_reserve(struct pool *pool)
{
	size_t page = page_size();
	size_t used = pool->block_count << pool->block_shift;
	size_t bytes = round_up(used, page);

	if (bytes == 0 || bytes > SIZE_MAX - 2 * page)
		return ENOMEM;
	/* The whole reservation inaccessible, then the blocks opened. */
	char *map = map_anonymous(bytes + 2 * page, PROT_NONE);
	if (map == NULL)
		return ENOMEM;
	pool->mapping = map;
	pool->mapping_size = bytes + 2 * page;
	if (mprotect(map + page, bytes, PROT_READ | PROT_WRITE) != 0)
		return ENOMEM;
	/* The last block ends where the guard page starts: an overflow off it
	 * faults.  Blocks stay aligned to their size up to the page size
	 * (bytes - used is a multiple of both). */
	pool->base = map + page + (bytes - used);
	pool->end = pool->base + used;
	return 0;
}

void region_release(struct pool *pool)
{
	if (pool->mapping) {
		hooks_mapping_forget(pool->mapping, pool->mapping_size);
		munmap(pool->mapping, pool->mapping_size);
	}
	/* Last: the pool itself lives there. */
	void *side = pool->side;
	size_t size = pool->side_size;
	hooks_mapping_forget(side, size);
	munmap(side, size);
}
