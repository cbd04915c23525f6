/*
 * Pool sets: one pool per power of two from min_block to max_block, each
 * in its own slice of one reservation, with every slice the same
 * power-of-two size.  An allocation picks its class from the size, with
 * one count of leading zeros.  A free finds the class from the address,
 * with one subtraction and one shift, and then finds the block within the
 * class as any pool does.
 *
 * A class is an ordinary pool (pool.c) whose region is placed in its
 * slice (see region_place()).  Every mode, option and check of a pool
 * holds for it, and it traces itself (its init record names the set).
 * Requests above the largest class, and pointers from outside the set, go
 * through the largest class, whose fallback serves them and takes them
 * back.  The last page of every slice is a guard page, and in the registry
 * each class answers for its whole slice (the largest class for the whole
 * reservation), so a pointer into a set that is not a block never reaches
 * free().
 *
 * SPDX-License-Identifier: MIT
 */
#include "hooks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static bool power_of_two(size_t n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

/* Returns the pool that a pointer belongs to: the class of its slice or,
 * for a pointer from outside the set, the largest class.  The largest
 * class owns the fallback's pointers, and its free reports a pointer of
 * another pool. */
POOL_INLINE struct pool *class_for_pointer(const struct pool_set *set,
                                           const void *ptr)
{
	size_t c =
	    (size_t)((uintptr_t)ptr - (uintptr_t)set->base) >> set->slice_shift;
	return set->classes[c < set->count ? c : set->last];
}

/* Releases what pool_set_init() made of the set so far. */
static void set_release(struct pool_set *set)
{
	for (unsigned c = 0; c < set->count; c++)
		if (set->classes[c] != NULL)
			pool_destroy(set->classes[c]);
	if (set->mapping != NULL) {
		hooks_mapping_forget(set->mapping, set->mapping_size);
		munmap(set->mapping, set->mapping_size);
	}
	meta_free(set, sizeof *set);
}

/*
 * Reserves set->count slices of 2^shift bytes, inaccessible, aligned to
 * the size of a slice (so that a slice never straddles what a huge page
 * would cover), with a guard page below the first slice.  Returns 0 or an
 * errno value.
 */
static int set_reserve(struct pool_set *set, unsigned shift)
{
	size_t page = region_page_size();
	size_t slice = (size_t)1 << shift;
	if (set->count > (SIZE_MAX - page) / slice - 1)
		return ENOMEM;
	size_t total = (size_t)set->count * slice + slice + page;
	/* With MAP_NORESERVE a set may be reserved far larger than memory,
	 * so that its classes never run out.  Only the pages of used blocks
	 * count, as for a pool's region. */
	void *map = mmap(NULL, total, PROT_NONE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		return ENOMEM;
	set->mapping = map;
	set->mapping_size = total;
	uintptr_t first = ((uintptr_t)map + page + slice - 1) & ~(slice - 1);
	set->base = (char *)first;
	set->slice_shift = shift;
	return 0;
}

POOL_API pool_set_t *pool_set_init_with(size_t min_block, size_t max_block,
                                        size_t bytes_per_class, int flags,
                                        const pool_fallback_t *fallback)
{
	if (!power_of_two(min_block) || !power_of_two(max_block) ||
	    min_block < POOL_MIN_BLOCK_SIZE || min_block > max_block ||
	    max_block > POOL_MAX_BLOCK_SIZE || bytes_per_class == 0 ||
	    !arguments_valid(min_block, 1, flags, fallback)) {
		errno = EINVAL;
		return NULL;
	}
	/* A slice holds at least one block of the largest class and its
	 * guard page, and its size is a power of two (at least 2 MiB for
	 * huge pages). */
	size_t page = region_page_size();
	size_t least = max_block + page;
	if (flags & POOL_HUGEPAGES)
		least = least > REGION_HUGE_PAGE ? least : REGION_HUGE_PAGE;
	size_t slice = bytes_per_class > least ? bytes_per_class : least;
	if (slice > (SIZE_MAX >> 2)) {
		errno = ENOMEM;
		return NULL;
	}
	unsigned shift = (unsigned)(64 - __builtin_clzll((uint64_t)slice - 1));

	struct pool_set *set = meta_alloc(sizeof *set);
	if (set == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	set->min_block = min_block;
	set->min_shift = log2_of(min_block);
	set->count = log2_of(max_block) - set->min_shift + 1;
	set->last = set->count - 1;
	set->flags = flags;
	set->id = serial_next();
	int error = set_reserve(set, shift);
	if (error) {
		meta_free(set, sizeof *set);
		errno = error;
		return NULL;
	}
	if (trace_open())
		trace_record_id(set->id, TRACE_OP_SET_INIT,
		                "min_block=%zu max_block=%zu "
		                "bytes_per_class=%zu flags=0x%x",
		                min_block, max_block, bytes_per_class,
		                (unsigned)flags);
	for (unsigned c = 0; c < set->count; c++) {
		char *at = set->base + ((size_t)c << shift);
		set->classes[c] = class_create(set, min_block << c, fallback,
		                               at, (size_t)1 << shift);
		if (set->classes[c] == NULL) {
			error = errno;
			set_release(set);
			errno = error;
			return NULL;
		}
	}
	/* Pointers from outside every slice go to the largest class.  It
	 * answers for the whole reservation, so that a pointer into the
	 * guard page below the first slice, or into the slack around the
	 * slices, is reported, and never handed to free(). */
	error = registry_widen(set->classes[set->last], set->mapping,
	                       (char *)set->mapping + set->mapping_size);
	if (error) {
		set_release(set);
		errno = error;
		return NULL;
	}
	/* The classes, by the log of the rounded size: sizes below the
	 * first class go to it, and sizes above the last class go to the
	 * last (whose fallback serves them). */
	for (unsigned bit = 0; bit < 63; bit++) {
		unsigned log = bit + 1; /* the log of the rounded size */
		unsigned c = log <= set->min_shift ? 0 : log - set->min_shift;
		set->by_bit[bit] = set->classes[c < set->count ? c : set->last];
	}
	set->by_bit[63] = set->classes[0];
	if (flags & POOL_HUGEPAGES)
		madvise(set->base, (size_t)set->count << shift, MADV_HUGEPAGE);
	return set;
}

POOL_API pool_set_t *pool_set_init(size_t min_block, size_t max_block,
                                   size_t bytes_per_class, int flags)
{
	return pool_set_init_with(min_block, max_block, bytes_per_class, flags,
	                          NULL);
}

POOL_API void pool_set_destroy(pool_set_t *set)
{
	if (set != NULL)
		set_release(set);
}

POOL_API void pool_set_free(pool_set_t *set, void *ptr)
{
	struct pool *pool = class_for_pointer(set, ptr);
	pool->free_entry(pool, ptr);
}

POOL_API char *pool_set_strdup(pool_set_t *set, const char *s)
{
	if (s == NULL) {
		errno = EINVAL;
		return NULL;
	}
	size_t len = strlen(s) + 1;
	return strdup_into(set_class_for_size(set, len), s, len);
}

/* A pool's realloc, from the class of ptr to the class that fits size.
 * The header says when a block stays where it is. */
POOL_API void *pool_set_realloc(pool_set_t *set, void *ptr, size_t size)
{
	return realloc_call(class_for_pointer(set, ptr),
	                    set_class_for_size(set, size), ptr, size);
}

POOL_API size_t pool_set_usable_size(const pool_set_t *set, const void *ptr)
{
	if (set == NULL)
		return 0;
	return usable_size_in(class_for_pointer(set, ptr), ptr);
}

POOL_API int pool_set_owns(const pool_set_t *set, const void *ptr)
{
	if (set == NULL)
		return 0;
	const struct pool *pool = class_for_pointer(set, ptr);
	return region_slot(pool, ptr) < pool->block_count;
}

POOL_API size_t pool_set_class_size(const pool_set_t *set, size_t size)
{
	if (set == NULL)
		return 0;
	const struct pool *pool = set_class_for_size(set, size);
	return size <= pool->block_size ? pool->block_size : 0;
}

POOL_API size_t pool_set_trim(pool_set_t *set)
{
	size_t bytes = 0;

	if (set == NULL)
		return 0;
	for (unsigned c = 0; c < set->count; c++)
		bytes += pool_trim(set->classes[c]);
	return bytes;
}

POOL_API int pool_set_stats(const pool_set_t *set, size_t block_size,
                            pool_stats_t *out)
{
	if (set == NULL || out == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (block_size != 0) {
		for (unsigned c = 0; c < set->count; c++)
			if (set->classes[c]->block_size == block_size)
				return pool_stats(set->classes[c], out);
		errno = EINVAL;
		return -1;
	}
	pool_stats_t sum = {0}, one;
	for (unsigned c = 0; c < set->count; c++) {
		if (pool_stats(set->classes[c], &one) != 0)
			return -1;
		sum.block_count += one.block_count;
		sum.in_use += one.in_use;
		sum.peak_in_use += one.peak_in_use;
		sum.allocs += one.allocs;
		sum.frees += one.frees;
		sum.fallback_allocs += one.fallback_allocs;
		sum.fallback_frees += one.fallback_frees;
	}
	sum.flags = set->flags;
	*out = sum;
	return 0;
}

POOL_API int pool_set_stats_print(const pool_set_t *set, FILE *stream,
                                  int format)
{
	pool_stats_t total, one;

	if (stream == NULL ||
	    (format != POOL_STATS_TEXT && format != POOL_STATS_JSON) ||
	    pool_set_stats(set, 0, &total) != 0) {
		errno = EINVAL;
		return -1;
	}
	bool json = format == POOL_STATS_JSON;
	bool failed = (json ? fprintf(stream, "{\"kind\":\"set\",\"classes\":[")
	                    : fprintf(stream, "set: %u classes, %zu .. %zu B\n",
	                              set->count, set->classes[0]->block_size,
	                              set->classes[set->last]->block_size)) < 0;
	for (unsigned c = 0; c < set->count && !failed; c++) {
		failed = pool_stats(set->classes[c], &one) != 0 ||
		         (json ? c > 0 && fputc(',', stream) == EOF
		               : fprintf(stream,
		                         "class %zu: ", one.block_size) < 0) ||
		         stats_write(stream, &one, format, ", ") < 0;
	}
	if (!failed)
		failed =
		    fputs(json ? "],\"total\":" : "total: ", stream) == EOF ||
		    stats_write(stream, &total, format, ", ") < 0 ||
		    (json && fputs("}\n", stream) == EOF);
	return stats_flush(stream, failed);
}
