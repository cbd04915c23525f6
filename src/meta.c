/*
 * The library's own small objects: a set's descriptor, a thread's cache
 * for a pool, and the registry's chunks of slots.  They come from mappings
 * of the library's own, never from malloc(), so that a program whose
 * malloc() is a pool set (libshiftpool-malloc.so, or any allocator hook)
 * can call the library from inside malloc() without the library calling
 * malloc() back.
 *
 * Objects of up to META_MAX_SMALL bytes are cut from 64 KiB mappings
 * (META_CHUNK), in power-of-two sizes from 2^META_MIN_SHIFT bytes (a cache
 * line) up.  A freed object goes on the free list of its size, to be
 * reused.  These objects are few (a handful per pool and per thread), and
 * they are made and freed rarely, so one mutex guards them all.  Larger
 * objects are mappings of their own, unmapped when they are freed.  Every
 * object is zeroed when it is handed out, and aligned to a cache line.
 *
 * The mutex is taken around fork() (registry.c's fork handlers call
 * meta_fork_prepare() and meta_fork_release()), so that a child forked
 * while another thread was making a cache can make one too.
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <string.h>
#include <sys/mman.h>

/* ------------------------------------------------------------ data */

#define META_MIN_SHIFT 6  /* a cache line */
#define META_MAX_SHIFT 12 /* 4 KiB */
#define META_CLASSES   (META_MAX_SHIFT - META_MIN_SHIFT + 1)
#define META_MAX_SMALL ((size_t)1 << META_MAX_SHIFT)
#define META_CHUNK     ((size_t)64 << 10)

/* A free object holds a pointer to the next free object of its size. */
struct meta_free_object {
	struct meta_free_object *next;
};

/* These are guarded by meta_lock.  The invariant: every object on
 * free_lists[c] is a piece of 2^(c + META_MIN_SHIFT) bytes of a chunk, and
 * none of them is handed out; [carve, carve_end) is the unused rest of the
 * newest chunk. */
static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static struct meta_free_object *free_lists[META_CLASSES];
static char *carve, *carve_end;

/* ------------------------------------------------------------ helpers */

static unsigned meta_class_of(size_t size)
{
	unsigned shift = META_MIN_SHIFT;
	while (((size_t)1 << shift) < size)
		shift++;
	return shift - META_MIN_SHIFT;
}

static void *meta_map(size_t size)
{
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return map == MAP_FAILED ? NULL : map;
}

static size_t meta_large_size(size_t size)
{
	size_t page = region_page_size();
	return (size + page - 1) & ~(page - 1);
}

/* Returns an object of class c, or NULL when no memory can be had.  The
 * caller holds the lock. */
static void *meta_take(unsigned c)
{
	size_t size = (size_t)1 << (c + META_MIN_SHIFT);
	struct meta_free_object *object = free_lists[c];

	if (object != NULL) {
		free_lists[c] = object->next;
		memset(object, 0, size);
		return object;
	}
	if ((size_t)(carve_end - carve) < size) {
		/* The rest of the old chunk goes to the free lists, in the
		 * largest pieces that fit, so that none of it is stranded. */
		while (carve_end - carve >= (ptrdiff_t)((size_t)1 << META_MIN_SHIFT)) {
			unsigned piece = META_CLASSES - 1;
			while (((size_t)1 << (piece + META_MIN_SHIFT)) >
			       (size_t)(carve_end - carve))
				piece--;
			struct meta_free_object *rest = (void *)carve;
			rest->next = free_lists[piece];
			free_lists[piece] = rest;
			carve += (size_t)1 << (piece + META_MIN_SHIFT);
		}
		char *chunk = meta_map(META_CHUNK);
		if (chunk == NULL)
			return NULL;
		carve = chunk;
		carve_end = chunk + META_CHUNK;
	}
	void *fresh = carve; /* a new mapping reads as zero */
	carve += size;
	return fresh;
}

/* ------------------------------------------------------------ internal API */

void *meta_alloc(size_t size)
{
	if (size > META_MAX_SMALL)
		return meta_map(meta_large_size(size));
	pthread_mutex_lock(&meta_lock);
	void *object = meta_take(meta_class_of(size));
	pthread_mutex_unlock(&meta_lock);
	return object;
}

void meta_free(void *object, size_t size)
{
	if (object == NULL)
		return;
	if (size > META_MAX_SMALL) {
		munmap(object, meta_large_size(size));
		return;
	}
	unsigned c = meta_class_of(size);
	struct meta_free_object *freed = object;
	pthread_mutex_lock(&meta_lock);
	freed->next = free_lists[c];
	free_lists[c] = freed;
	pthread_mutex_unlock(&meta_lock);
}

void meta_fork_prepare(void)
{
	pthread_mutex_lock(&meta_lock);
}

void meta_fork_release(void)
{
	pthread_mutex_unlock(&meta_lock);
}
