/*
 * The region is one contiguous mapping of block_count blocks of 2^k bytes,
 * between two inaccessible guard pages.  Apart from it, in a mapping of
 * their own, lie the pool structure and the side tables that its mode
 * needs (a bit per block, or a descriptor per span).  The last block ends
 * where the upper guard page starts, so a write that runs off the end of
 * the region faults at the write.  A write that runs off the start faults
 * too when the blocks fill whole pages; otherwise it lands in the unused
 * start of the first page.  Neither reaches the pool's own bookkeeping.
 *
 * Everything is mapped anonymous and private, so the kernel hands out zero
 * pages on first touch.  A pool costs address space at pool_init(), and
 * resident memory only as its blocks are used, and a block that was never
 * handed out is known to be zero.  The mappings are made with
 * MAP_NORESERVE, so untouched pages cost nothing, not even commit charge.
 *
 * SPDX-License-Identifier: MIT
 */
#include "hooks.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

/* Rounds n up to a multiple of align (a power of two); 0 on overflow. */
static size_t round_up(size_t n, size_t align)
{
	if (n > SIZE_MAX - (align - 1))
		return 0;
	return (n + align - 1) & ~(align - 1);
}

/* Makes resident the side tables of a pool that must not wait on a page
 * fault: they are locked (under POOL_LOCK_MEMORY) or touched (under
 * POOL_PREFAULT), along with the region.  This is best effort, as the
 * tables are small: a failure is ignored. */
static void mlock_side(struct pool *pool)
{
	if (pool->flags & POOL_LOCK_MEMORY)
		mlock(pool->side, pool->side_size);
	else
		/* A write (adding 0) faults each page in for good, where a
		 * read would only map the shared zero page. */
		for (size_t at = 0; at < pool->side_size;
		     at += region_page_size())
			__atomic_fetch_add((char *)pool->side + at, 0,
			                   __ATOMIC_RELAXED);
}

static void *map_anonymous(size_t size, int protection)
{
	void *map = mmap(NULL, size, protection,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return map == MAP_FAILED ? NULL : map;
}

/* Returns the size of a pool's own mapping, or 0 on overflow.  The mapping
 * holds the pool structure, then the tables, which start on a cache line:
 * a bit per block, a bit per chunk and another bit per block (POOL_SINGLE
 * and POOL_LOCKED), or a descriptor per span (POOL_PER_THREAD).  It sets
 * *tables_at to the tables' offset, and in POOL_PER_THREAD mode *n_spans
 * to the number of spans. */
static size_t side_size(int mode, size_t count, unsigned shift,
                        unsigned span_shift, size_t chunks, size_t *tables_at,
                        size_t *n_spans)
{
	/* The bitmaps start at pool->allocated[], right after the
	 * structure. */
	size_t head = mode == POOL_PER_THREAD
	                  ? round_up(sizeof(struct pool), POOL_CACHE_LINE)
	                  : offsetof(struct pool, allocated);
	*tables_at = head;
	if (mode != POOL_PER_THREAD) {
		/* They are allocated[], released[], then held[] (see
		 * list.c), and in POOL_LOCKED mode the depot, on cache lines
		 * of its own (locked.c): a word per magazine the pool's
		 * blocks make, at most. */
		size_t words =
		    2 * ((count - 1) / 64 + 1) + (chunks - 1) / 64 + 1;
		if (mode == POOL_LOCKED)
			words += 3 * POOL_CACHE_LINE / sizeof(uint64_t) +
			         count / stack_limit_of(shift, count,
			                                LOCKED_STACK_MOST) +
			         1;
		return words > (SIZE_MAX - head) / sizeof(uint64_t)
		           ? 0
		           : head + words * sizeof(uint64_t);
	}
	size_t spans = ((count - 1) >> span_shift) + 1;
	*n_spans = spans;
	if (spans > (SIZE_MAX - head) / sizeof(struct span))
		return 0;
	return head + spans * sizeof(struct span);
}

/* Returns the alignment of the region's accessible part (the area), to
 * which the area's size is rounded up too: a page, or a 2 MiB huge page
 * under POOL_HUGEPAGES. */
static size_t area_align(int flags)
{
	return (flags & POOL_HUGEPAGES) ? REGION_HUGE_PAGE : region_page_size();
}

/* Populates the area, and locks it, as the options ask.  Returns 0 or an
 * errno value. */
static int area_prepare(struct pool *pool)
{
	if (pool->flags & POOL_HUGEPAGES)
		madvise(pool->area, pool->area_size, MADV_HUGEPAGE);
	if (pool->flags & POOL_LOCK_MEMORY) {
		/* mlock() populates what it locks. */
		if (mlock(pool->area, pool->area_size) != 0)
			return errno == EPERM ? EPERM : ENOMEM;
		return 0;
	}
	if (!(pool->flags & POOL_PREFAULT))
		return 0;
#ifdef MADV_POPULATE_WRITE
	if (madvise(pool->area, pool->area_size, MADV_POPULATE_WRITE) == 0)
		return 0;
	if (errno != EINVAL)
		return ENOMEM;
#endif
	/* An older kernel does not know MADV_POPULATE_WRITE, so every page
	 * is touched instead.  The area is zero, and writing zero keeps it
	 * so, as never-used blocks are known to be zero. */
	for (size_t at = 0; at < pool->area_size; at += region_page_size())
		((volatile char *)pool->area)[at] = 0;
	return 0;
}

/* ------------------------------------------------------------ internal API */

struct pool *region_pool_map(int flags, size_t block_count, unsigned shift,
                             unsigned span_shift)
{
	int mode = flags & POOL_MODE_MASK;
	size_t align = area_align(flags);
	size_t area = round_up(block_count << shift, align);
	size_t chunk = (size_t)1 << shift > region_page_size()
	                   ? (size_t)1 << shift
	                   : region_page_size();
	size_t tables_at = 0, span_count = 0;
	if (area == 0)
		return NULL;
	size_t size = round_up(side_size(mode, block_count, shift, span_shift,
	                                 area / chunk, &tables_at, &span_count),
	                       region_page_size());
	if (size == 0)
		return NULL;
	/* Each pool starts at one of REGION_COLORS places in its first page,
	 * in turn: at the page's start, every pool's header and first span
	 * descriptors would fall in the same few sets of a cache indexed by
	 * the address's low bits, and a set's classes would evict each other
	 * from them. */
	static _Atomic unsigned next_color;
	size_t color =
	    atomic_fetch_add_explicit(&next_color, 1, memory_order_relaxed) %
	    REGION_COLORS;
	size_t offset = color * SHIFTPOOL_MAP_OFFSET_;
	if (size > SIZE_MAX - region_page_size())
		return NULL;
	size = round_up(size + offset, region_page_size());
	char *map = map_anonymous(size, PROT_READ | PROT_WRITE);
	if (map == NULL)
		return NULL;
	struct pool *pool = (struct pool *)(void *)(map + offset);
	pool->side = map;
	pool->side_size = size;
	pool->chunk_shift = (uint8_t)log2_of(chunk);
	pool->chunk_count = area / chunk;
	char *tables = (char *)pool + tables_at;
	if (mode == POOL_PER_THREAD) {
		pool->spans = (struct span *)tables;
		pool->span_count = span_count;
	} else {
		pool->list.released =
		    (uint64_t *)tables + (block_count - 1) / 64 + 1;
		pool->list.held =
		    pool->list.released + (area / chunk - 1) / 64 + 1;
		if (mode == POOL_LOCKED) {
			uintptr_t at = (uintptr_t)(pool->list.held +
			                           (block_count - 1) / 64 + 1);
			pool->depot = (struct locked_depot *)round_up(
			    at + 1, POOL_CACHE_LINE);
		}
	}
	return pool;
}

int region_reserve(struct pool *pool)
{
	size_t page = region_page_size();
	size_t align = area_align(pool->flags);
	size_t used = pool->block_count << pool->block_shift;
	size_t area = round_up(used, align);

	/* The mapping holds a guard page on each side, and room to align
	 * the area. */
	if (area == 0 || area > SIZE_MAX - 2 * page - align)
		return ENOMEM;
	size_t total = area + 2 * page + (align - page);
	char *map = map_anonymous(total, PROT_NONE);
	if (map == NULL)
		return ENOMEM;
	pool->mapping = map;
	pool->mapping_size = total;
	pool->area = (char *)round_up((uintptr_t)map + page, align);
	pool->area_size = area;
	if (mprotect(pool->area, area, PROT_READ | PROT_WRITE) != 0)
		return ENOMEM;
	/* The last block ends where the upper guard page starts, so an
	 * overflow off its end faults.  Blocks stay aligned to their size, up
	 * to the page size, because area - used is a multiple of the smaller
	 * of the two. */
	pool->base = pool->area + (area - used);
	pool->end = pool->base + used;
	/* The pool answers for its whole mapping.  A pointer into a guard
	 * page, into the unused start of the first page, or into the slack
	 * left by the alignment is misuse, and is never handed to free(). */
	pool->claim_lo = map;
	pool->claim_hi = map + total;
	int error = area_prepare(pool);
	if (error)
		return error;
	if (pool->flags & (POOL_PREFAULT | POOL_LOCK_MEMORY))
		mlock_side(pool);
	return 0;
}

int region_place(struct pool *pool, char *slice, size_t size)
{
	size_t page = region_page_size();
	size_t used = pool->block_count << pool->block_shift;

	if (used > size - page)
		return ENOMEM;
	pool->end = slice + size - page;
	pool->base = pool->end - used;
	pool->area = (char *)((uintptr_t)pool->base & ~(uintptr_t)(page - 1));
	pool->area_size = (size_t)(pool->end - pool->area);
	pool->claim_lo = slice;
	pool->claim_hi = slice + size;
	if (mprotect(pool->area, pool->area_size, PROT_READ | PROT_WRITE) != 0)
		return ENOMEM;
	int error = area_prepare(pool);
	if (error)
		return error;
	if (pool->flags & (POOL_PREFAULT | POOL_LOCK_MEMORY))
		mlock_side(pool);
	return 0;
}

void region_chunk_blocks(const struct pool *pool, size_t chunk, size_t *first,
                         size_t *end)
{
	size_t lead = (size_t)(pool->base - pool->area);
	size_t lo = chunk << pool->chunk_shift;
	size_t hi = lo + ((size_t)1 << pool->chunk_shift);
	*first = (lo > lead ? lo - lead : 0) >> pool->block_shift;
	*end = (hi - lead) >> pool->block_shift;
	if (*end > pool->block_count)
		*end = pool->block_count;
}

bool region_drop_pages(char *lo, char *hi)
{
	return madvise(lo, (size_t)(hi - lo), MADV_DONTNEED) == 0;
}

size_t region_give_back(struct pool *pool, char *lo, char *hi)
{
	size_t page = region_page_size();
	lo = (char *)round_up((uintptr_t)lo, page);
	hi = (char *)((uintptr_t)hi & ~(uintptr_t)(page - 1));
	if (hi <= lo || (pool->flags & POOL_LOCK_MEMORY))
		return 0;
	if (madvise(lo, (size_t)(hi - lo), MADV_DONTNEED) != 0)
		return 0;
	return (size_t)(hi - lo);
}

char *region_chunk_address(const struct pool *pool, size_t chunk)
{
	return pool->area + (chunk << pool->chunk_shift);
}

void region_release(struct pool *pool)
{
	if (pool->mapping) {
		hooks_mapping_forget(pool->mapping, pool->mapping_size);
		munmap(pool->mapping, pool->mapping_size);
	}
	/* The pool's own mapping is released last, because the pool
	 * structure itself lives there. */
	void *side = pool->side;
	size_t size = pool->side_size;
	hooks_mapping_forget(side, size);
	munmap(side, size);
}
