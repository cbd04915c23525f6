/*
 * The objects of the stress: random sizes, some larger than a block (the
 * fallback), some from calloc (checked zero), some moved by pool_realloc.
 * Each carries a unique id, its size and a byte pattern made from the id,
 * all checked when it is freed; the table of its pool records which
 * object holds each block, so a block handed to two owners is caught at
 * the second hand-out.  A worker takes random steps over its own slots
 * and the shared array, through which objects cross to other threads.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "shiftpool.h"
#include "stress-objects.h"

/*
 * An object: word 0 its id, word 1 mix64(id) ^ (size | pool << 56), then
 * bytes 16..size-1 a pattern from the id.  Size is at least 16.
 */
#define OBJ_MIN   16
#define SIZE_BITS 56

struct obj_info {
	uint64_t id;
	size_t size;
	int pool_index;
};

void counts_add(struct counts *to, const struct counts *from)
{
	for (int i = 0; i < 2; i++) {
		to->allocs[i] += from->allocs[i];
		to->frees[i] += from->frees[i];
		to->fb_allocs[i] += from->fb_allocs[i];
		to->fb_frees[i] += from->fb_frees[i];
	}
	to->objects += from->objects;
	to->crossed += from->crossed;
	to->swaps += from->swaps;
	to->reallocs += from->reallocs;
	to->callocs += from->callocs;
	to->exhausted += from->exhausted;
}

/* ------------------------------------------------------------ pattern */

static uint64_t pattern_hash(uint64_t id)
{
	return mix64(id ^ 0x2545f4914f6cdd1dull);
}

static unsigned char pattern_byte(uint64_t h, size_t i)
{
	return (unsigned char)((h >> ((i & 7) * 8)) ^ (i >> 3) ^ 0x5a);
}

/* The first of bytes OBJ_MIN..end-1 of p that is not id's pattern, or
 * end if there is none. */
static size_t pattern_mismatch(const void *p, uint64_t id, size_t end)
{
	uint64_t h = pattern_hash(id);
	const unsigned char *b = p;
	for (size_t i = OBJ_MIN; i < end; i++)
		if (b[i] != pattern_byte(h, i))
			return i;
	return end;
}

static void obj_fill(void *p, uint64_t id, size_t size, int pool_index,
                     size_t from)
{
	uint64_t *w = p;
	w[0] = id;
	w[1] = mix64(id) ^ (size | (uint64_t)pool_index << SIZE_BITS);
	uint64_t h = pattern_hash(id);
	unsigned char *b = p;
	if (from < OBJ_MIN)
		from = OBJ_MIN;
	for (size_t i = from; i < size; i++)
		b[i] = pattern_byte(h, i);
}

/* Checks an object's header and pattern. */
static struct obj_info obj_check(const struct stress *s, const void *p)
{
	const uint64_t *w = p;
	struct obj_info info;
	info.id = w[0];
	uint64_t x = w[1] ^ mix64(info.id);
	info.size = (size_t)(x & (((uint64_t)1 << SIZE_BITS) - 1));
	info.pool_index = (int)(x >> SIZE_BITS);
	CHECK(info.id != 0 && info.pool_index < s->npools &&
	          info.size >= OBJ_MIN && info.size <= s->max_size,
	      "object %p: header overwritten (id %#" PRIx64 ", word 1 %#" PRIx64
	      ")",
	      p, w[0], w[1]);
	size_t bad = pattern_mismatch(p, info.id, info.size);
	const unsigned char *b = p;
	CHECK(bad == info.size,
	      "object %p (id %#" PRIx64 ", size %zu): byte %zu is %#x, "
	      "expected %#x: written by another owner",
	      p, info.id, info.size, bad, b[bad],
	      pattern_byte(pattern_hash(info.id), bad));
	return info;
}

/* ------------------------------------------------------------ new */

static uint64_t next_id(struct worker *w)
{
	return (uint64_t)w->serial << 32 | ++w->next;
}

/* A size from r: 1 in 5 larger than a block, for the fallback. */
static size_t obj_size(uint64_t r, size_t block_size)
{
	if (r % 10 < 2)
		return block_size + 1 + (size_t)((r >> 8) % (3 * block_size));
	return OBJ_MIN + (size_t)((r >> 8) % (block_size - OBJ_MIN + 1));
}

static void check_zeroed(const void *p, size_t size)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < size; i++)
		CHECK(b[i] == 0, "pool_calloc(%zu) gave %p with byte %zu = %#x",
		      size, p, i, b[i]);
}

/* Only a request that fits a block may get one, and from its own pool. */
static void check_served_by(const struct stress *s, int pi, const void *p,
                            bool owned, size_t size)
{
	CHECK(!(owned && size > s->pools[pi].block_size),
	      "pool %d: %zu bytes (block %zu) served by the pool at %p", pi,
	      size, s->pools[pi].block_size, p);
	if (s->npools > 1)
		CHECK(!pool_owns(s->pools[1 - pi].pool, p),
		      "pool %d gave %p, a block of the other pool", pi, p);
}

static void count_new(struct worker *w, int pi, bool owned, bool fits)
{
	if (owned)
		w->c.allocs[pi]++;
	else
		w->c.fb_allocs[pi]++;
	if (!owned && fits)
		w->c.exhausted++;
	w->c.objects++;
}

static void *obj_new(struct worker *w)
{
	struct stress *s = w->s;
	int pi = s->npools > 1 ? (int)(rnd(&w->rng) % (uint64_t)s->npools) : 0;
	struct tracked *tr = &s->pools[pi];
	uint64_t r = rnd(&w->rng);
	size_t size = obj_size(r, tr->block_size);
	bool zeroed = ((r >> 40) % 8) == 0;
	void *p = zeroed ? pool_calloc(tr->pool, 1, size)
	                 : pool_malloc(tr->pool, size);
	CHECK(p != NULL, "pool %d: allocation of %zu bytes failed: %s", pi,
	      size, strerror(errno));
	uint64_t id = next_id(w);
	bool owned = track_alloc(tr, p, id);
	if (zeroed) {
		check_zeroed(p, size);
		w->c.callocs++;
	}
	check_served_by(s, pi, p, owned, size);
	count_new(w, pi, owned, size <= tr->block_size);
	obj_fill(p, id, size, pi, 0);
	return p;
}

/* A zero-size request: a unique pointer that pool_free() accepts. */
static void obj_zero(struct worker *w)
{
	struct tracked *tr = &w->s->pools[0];
	void *p = pool_malloc(tr->pool, 0);
	CHECK(p != NULL, "pool_malloc(0) returned NULL: %s", strerror(errno));
	uint64_t id = next_id(w);
	if (track_alloc(tr, p, id)) {
		track_free(tr, p, id);
		w->c.allocs[0]++;
		w->c.frees[0]++;
	} else {
		w->c.fb_allocs[0]++;
		w->c.fb_frees[0]++;
	}
	pool_free(tr->pool, p);
}

/* ------------------------------------------------------------ free */

void obj_free(struct worker *w, void *p)
{
	struct obj_info info = obj_check(w->s, p);
	struct tracked *tr = &w->s->pools[info.pool_index];
	if ((uint32_t)(info.id >> 32) != w->serial)
		w->c.crossed++;
	if (pool_owns(tr->pool, p)) {
		track_free(tr, p, info.id);
		w->c.frees[info.pool_index]++;
	} else {
		w->c.fb_frees[info.pool_index]++;
	}
	pool_free(tr->pool, p);
}

/* ------------------------------------------------------------ realloc */

/* A move between the pool and the fallback is a free of one and an
 * allocation from the other. */
static void count_realloc(struct worker *w, int pi, bool was_owned, bool owned)
{
	if (was_owned && !owned) {
		w->c.frees[pi]++;
		w->c.fb_allocs[pi]++;
	} else if (!was_owned && owned) {
		w->c.fb_frees[pi]++;
		w->c.allocs[pi]++;
	}
}

/* pool_realloc() of object info at p to size, the table kept in step. */
static void *realloc_tracked(struct worker *w, void *p,
                             const struct obj_info *info, size_t size)
{
	struct tracked *tr = &w->s->pools[info->pool_index];
	bool was_owned = pool_owns(tr->pool, p);
	/* A block that must move is released from the table first: once
	 * pool_realloc() frees it another thread may get it at once. */
	if (was_owned && size > tr->block_size)
		track_free(tr, p, info->id);
	void *q = pool_realloc(tr->pool, p, size);
	CHECK(q != NULL, "pool_realloc(%p, %zu) failed: %s", p, size,
	      strerror(errno));
	if (was_owned && size <= tr->block_size)
		CHECK(q == p,
		      "pool_realloc moved block %p to %p though %zu "
		      "bytes fit the block",
		      p, q, size);
	bool owned = pool_owns(tr->pool, q);
	count_realloc(w, info->pool_index, was_owned, owned);
	/* For a fallback pointer this checks that it is outside the region. */
	if (!owned || q != p)
		track_alloc(tr, q, info->id);
	CHECK(!(owned && size > tr->block_size),
	      "pool_realloc(%zu) gave block %p", size, q);
	return q;
}

/* pool_realloc to a random size; contents up to the smaller size kept. */
static void *obj_realloc(struct worker *w, void *p)
{
	struct obj_info info = obj_check(w->s, p);
	size_t bs = w->s->pools[info.pool_index].block_size;
	size_t size = OBJ_MIN + (size_t)(rnd(&w->rng) % (4 * bs - OBJ_MIN + 1));
	void *q = realloc_tracked(w, p, &info, size);
	/* The kept prefix still has the pattern; then the new size. */
	CHECK(*(const uint64_t *)q == info.id, "pool_realloc lost the id of %p",
	      q);
	size_t keep = size < info.size ? size : info.size;
	size_t bad = pattern_mismatch(q, info.id, keep);
	CHECK(bad == keep,
	      "pool_realloc %p -> %p (%zu -> %zu): byte %zu changed", p, q,
	      info.size, size, bad);
	obj_fill(q, info.id, size, info.pool_index, info.size);
	w->c.reallocs++;
	return q;
}

/* ------------------------------------------------------------ worker */

/* Swaps local slot k with slot j of the shared array: what we hold goes
 * to whoever swaps that slot next. */
static void worker_swap(struct worker *w, size_t k, size_t j)
{
	void *got = atomic_exchange_explicit(&w->s->transfer[j], w->local[k],
	                                     memory_order_acq_rel);
	if (got != NULL)
		obj_check(w->s, got);
	w->local[k] = got;
	w->c.swaps++;
}

static void worker_step(struct worker *w, uint64_t r)
{
	size_t k = (size_t)(r >> 32) % LOCAL_SLOTS;
	unsigned op = (unsigned)(r % 100);
	if (op < 25) {
		worker_swap(w, k, (size_t)(r >> 16) % w->s->ntransfer);
	} else if (op < 30) {
		if (w->local[k] != NULL)
			w->local[k] = obj_realloc(w, w->local[k]);
	} else if (op < 31) {
		obj_zero(w);
	} else if (w->local[k] != NULL) {
		obj_free(w, w->local[k]);
		w->local[k] = NULL;
	} else {
		w->local[k] = obj_new(w);
	}
}

/* Before exiting: half of what we hold goes to the shared array (to be
 * freed by threads of later rounds), the rest is freed. */
static void worker_leave(struct worker *w)
{
	struct stress *s = w->s;
	for (size_t k = 0; k < LOCAL_SLOTS; k++) {
		void *p = w->local[k];
		if (p == NULL)
			continue;
		if (rnd(&w->rng) & 1) {
			size_t j = (size_t)rnd(&w->rng) % s->ntransfer;
			p = atomic_exchange_explicit(&s->transfer[j], p,
			                             memory_order_acq_rel);
		}
		if (p != NULL)
			obj_free(w, p);
		w->local[k] = NULL;
	}
}

void *stress_thread(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	timer_t timer;
	bool armed = preempt_arm(&timer);

	for (size_t step = 0; step < s->steps; step++)
		worker_step(w, rnd(&w->rng));
	worker_leave(w);
	if (armed)
		timer_delete(timer);
	pthread_mutex_lock(&s->counts_lock);
	counts_add(&s->total, &w->c);
	pthread_mutex_unlock(&s->counts_lock);
	return NULL;
}
