/*
 * The region: one contiguous mapping of block_count blocks of 2^k bytes,
 * plus the side tables a mode needs (a byte per block, or a state and a claim
 * word per block and a descriptor per span).
 *
 * Everything is mapped anonymous and private, so the kernel hands out zero
 * pages on first touch: a pool costs address space at pool_init() and
 * resident memory only as blocks are used, and a block that was never handed
 * out is known to be zero.
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

/* Adds n (rounded to align) to *total, returning the offset; SIZE_MAX on
 * overflow. */
static size_t layout_add(size_t *total, size_t n, size_t align)
{
	size_t offset = round_up(*total, align);
	if (offset == 0 && *total != 0)
		return SIZE_MAX;
	if (n > SIZE_MAX - offset)
		return SIZE_MAX;
	*total = offset + n;
	return offset;
}

static size_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);
	return page > 0 ? (size_t)page : 4096;
}

/* ------------------------------------------------------------ internal API */

/*
 * One mapping holds, in order: the blocks (page aligned, so every block is
 * aligned to its own size up to the page size), then the side tables.
 * MAP_NORESERVE: untouched pages cost nothing, not even commit charge.
 */
int region_reserve(struct pool *pool)
{
	size_t page = page_size();
	size_t count = pool->block_count;
	size_t total = 0, off_bits = 0, off_state = 0, off_claims = 0,
	       off_spans = 0;

	if (count > SIZE_MAX >> pool->block_shift)
		return ENOMEM;
	layout_add(&total, count << pool->block_shift, page);
	if (pool->mode == POOL_PER_THREAD) {
		size_t spans = ((count - 1) >> pool->span_shift) + 1;
		if (count > SIZE_MAX / sizeof(uint32_t) ||
		    spans > SIZE_MAX / sizeof(struct span))
			return ENOMEM;
		off_state = layout_add(&total, count * sizeof(uint32_t),
		                       POOL_CACHE_LINE);
		off_claims = layout_add(&total, count * sizeof(uint32_t),
		                        POOL_CACHE_LINE);
		off_spans = layout_add(&total, spans * sizeof(struct span),
		                       POOL_CACHE_LINE);
		pool->span_count = spans;
	} else {
		off_bits = layout_add(&total, count, POOL_CACHE_LINE);
	}
	if (off_bits == SIZE_MAX || off_state == SIZE_MAX ||
	    off_claims == SIZE_MAX || off_spans == SIZE_MAX)
		return ENOMEM;
	total = round_up(total, page);
	if (total == 0)
		return ENOMEM;

	void *map = mmap(NULL, total, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return ENOMEM;

	pool->mapping = map;
	pool->mapping_size = total;
	pool->base = map;
	pool->end = pool->base + (count << pool->block_shift);
	if (pool->mode == POOL_PER_THREAD) {
		pool->block_state =
		    (_Atomic uint32_t *)(pool->base + off_state);
		pool->claims = (_Atomic uint32_t *)(pool->base + off_claims);
		pool->spans = (struct span *)(pool->base + off_spans);
	} else {
		pool->allocated = (uint8_t *)(pool->base + off_bits);
	}
	return 0;
}

void region_release(struct pool *pool)
{
	if (pool->mapping) {
		hooks_mapping_forget(pool->mapping, pool->mapping_size);
		munmap(pool->mapping, pool->mapping_size);
	}
	pool->mapping = NULL;
}
