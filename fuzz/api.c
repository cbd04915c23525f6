/*
 * The fuzz target of the API: the input picks one or two pools (mode,
 * options, a small block size and count, so that exhaustion is frequent)
 * and then a sequence of calls against them, each checked against a model
 * as it returns:
 *
 *  - every pointer handed out is aligned as documented, overlaps no live
 *    one, and keeps the bytes written into it until it is freed (each
 *    allocation is filled with its own byte, checked at free and realloc;
 *    realloc keeps the smaller size's prefix); calloc gives zeros;
 *  - a request that fits a block is served by the pool while the model
 *    says a block is free, else by the fallback, or gives NULL and ENOMEM
 *    with POOL_NO_FALLBACK;
 *  - pool_stats() agrees with the model after every call: blocks in use
 *    (the live pointers pool_owns() claims), allocs - frees, fallback
 *    allocations still out;
 *  - misuse (a block freed twice, a pointer inside a block, a block of the
 *    other pool) is reported once, with the right code, pool, pointer and
 *    function, through a handler that records instead of aborting, and
 *    changes no counter of either pool.
 *
 * Any difference calls abort(), which libFuzzer reports with the input.
 *
 * SPDX-License-Identifier: MIT
 */
#include "shiftpool.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------ limits */

/* Blocks per pool, at most: exhaustion within a few calls. */
#define MAX_BLOCKS 48
/* Live pointers the model follows; allocations beyond are skipped. */
#define MAX_LIVE 256
/* Block starts remembered per pool, for misuse: every block of it. */
#define MAX_SEEN MAX_BLOCKS
/* Calls per input, so that one input stays fast. */
#define MAX_CALLS 2048

/* ------------------------------------------------------------ types */

/* The input, read one byte at a time; past its end every byte is 0. */
struct input {
	const uint8_t *data;
	size_t size;
	size_t at;
};

/* A live pointer: fill is in each of its size bytes.  in_pool is
 * pool_owns() of the pool that handed it out, at that time. */
struct live {
	unsigned char *ptr;
	size_t size;
	int pool;
	bool in_pool;
	uint8_t fill;
};

/* One pool under test.  fallback_out is fallback_allocs - fallback_frees
 * as the model counts them: the frees are those made through this pool,
 * whichever pool the pointer came from. */
struct tested {
	pool_t *pool;
	int flags;
	size_t block_size;
	size_t block_count;
	int64_t fallback_out;
	unsigned char *seen[MAX_SEEN]; /* block starts handed out */
	size_t seen_count;
};

/* What the handler was told; count says how many reports came. */
struct report {
	unsigned count;
	const pool_t *pool;
	const char *function;
	const void *ptr;
	enum pool_error error;
};

struct model {
	struct tested pools[2];
	int pool_count;
	struct live live[MAX_LIVE];
	size_t live_count;
	uint8_t next_fill;
};

/* ------------------------------------------------------------ helpers */

static struct report last_report;

static void record_report(const pool_t *pool, const char *function,
                          const void *ptr, enum pool_error error, void *arg)
{
	(void)arg;
	last_report =
	    (struct report){last_report.count + 1, pool, function, ptr, error};
}

/* A broken promise: say which, for the crash report, and stop. */
static void violated(const char *what)
{
	fprintf(stderr, "fuzz/api: model violated: %s\n", what);
	abort();
}

static void expect(bool ok, const char *what)
{
	if (!ok)
		violated(what);
}

static uint8_t next_byte(struct input *in)
{
	return in->at < in->size ? in->data[in->at++] : 0;
}

static size_t page_size(void)
{
	static size_t page;
	if (page == 0)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

/* A request size for a pool of that block size: the edges (0, the block
 * size, one past it) and small, just-over and large sizes, all common. */
static size_t size_for(uint8_t b, size_t block_size)
{
	size_t n = b >> 2;
	switch (b & 3) {
	case 0:
		return n == 0 ? 0 : n == 1 ? block_size + 1 : block_size;
	case 1:
		return n;
	case 2:
		return block_size + n;
	default:
		return n * 97;
	}
}

static struct tested *pool_of(struct model *m, uint8_t b)
{
	return &m->pools[b % m->pool_count];
}

static int index_of(const struct model *m, const struct tested *t)
{
	return (int)(t - m->pools);
}

static bool no_fallback(const struct tested *t)
{
	return (t->flags & POOL_NO_FALLBACK) != 0;
}

/* The model's count of blocks in use: the live pointers the pool owns. */
static size_t model_in_use(const struct model *m, const struct tested *t)
{
	size_t n = 0;
	for (size_t i = 0; i < m->live_count; i++)
		n += (size_t)pool_owns(t->pool, m->live[i].ptr);
	return n;
}

static void check_stats(const struct model *m, const struct tested *t)
{
	pool_stats_t st;
	expect(pool_stats(t->pool, &st) == 0, "pool_stats() failed");
	size_t in_use = model_in_use(m, t);
	expect(st.block_size == t->block_size, "stats: block_size");
	expect(st.block_count == t->block_count, "stats: block_count");
	expect(st.flags == t->flags, "stats: flags");
	expect(st.in_use == in_use, "stats: in_use differs from the model");
	expect(st.allocs - st.frees == in_use, "stats: allocs - frees");
	expect(st.peak_in_use >= in_use && st.peak_in_use <= t->block_count,
	       "stats: peak_in_use out of range");
	expect((int64_t)(st.fallback_allocs - st.fallback_frees) ==
	           t->fallback_out,
	       "stats: fallback allocations out differ from the model");
}

static void check_all_stats(const struct model *m)
{
	for (int i = 0; i < m->pool_count; i++)
		check_stats(m, &m->pools[i]);
}

static void check_bytes(const unsigned char *p, size_t size, uint8_t byte,
                        const char *what)
{
	for (size_t i = 0; i < size; i++)
		expect(p[i] == byte, what);
}

static void check_contents(const struct live *l)
{
	check_bytes(l->ptr, l->size, l->fill, "contents changed while live");
}

/* The extent a pointer occupies: a pool block is its whole block. */
static size_t extent_of(const struct model *m, const struct live *l)
{
	if (l->in_pool)
		return m->pools[l->pool].block_size;
	return l->size > 0 ? l->size : 1;
}

/* A pointer just handed out by t for size bytes: aligned, and apart from
 * every live one; its entry is filled and added. */
static void take(struct model *m, struct tested *t, void *ptr, size_t size)
{
	struct live l = {
	    .ptr = ptr,
	    .size = size,
	    .pool = index_of(m, t),
	    .in_pool = pool_owns(t->pool, ptr) != 0,
	    .fill = m->next_fill++,
	};
	uintptr_t at = (uintptr_t)ptr;
	size_t align = l.in_pool ? (t->block_size < page_size() ? t->block_size
	                                                        : page_size())
	                         : _Alignof(max_align_t);
	expect(at % align == 0, "pointer not aligned as documented");
	for (int i = 0; i < m->pool_count; i++)
		if (&m->pools[i] != t)
			expect(!pool_owns(m->pools[i].pool, ptr),
			       "another pool owns a new pointer");
	size_t extent = extent_of(m, &l);
	for (size_t i = 0; i < m->live_count; i++) {
		uintptr_t other = (uintptr_t)m->live[i].ptr;
		expect(at + extent <= other ||
		           other + extent_of(m, &m->live[i]) <= at,
		       "new pointer overlaps a live one");
	}
	if (l.in_pool) {
		bool known = false;
		for (size_t i = 0; i < t->seen_count; i++)
			known |= t->seen[i] == l.ptr;
		if (!known) {
			expect(t->seen_count < MAX_SEEN,
			       "more distinct blocks than the pool has");
			t->seen[t->seen_count++] = l.ptr;
		}
	} else {
		t->fallback_out++;
	}
	memset(ptr, l.fill, size);
	m->live[m->live_count++] = l;
}

/* Entry i leaves the model, freed through t. */
static void drop(struct model *m, size_t i, struct tested *t)
{
	if (!m->live[i].in_pool)
		t->fallback_out--;
	m->live[i] = m->live[--m->live_count];
}

/* What an allocation of size bytes from t must give, ptr being what it
 * gave: a block while one is free, else the fallback or ENOMEM. */
static void check_served(const struct model *m, const struct tested *t,
                         const void *ptr, size_t size, int error)
{
	bool fits = size <= t->block_size;
	bool room = model_in_use(m, t) < t->block_count;
	if (fits && room) {
		expect(ptr != NULL && pool_owns(t->pool, ptr),
		       "a free block was not handed out");
	} else if (no_fallback(t)) {
		expect(ptr == NULL && error == ENOMEM,
		       "POOL_NO_FALLBACK: no NULL/ENOMEM when the pool "
		       "cannot serve");
	} else {
		expect(ptr != NULL && !pool_owns(t->pool, ptr),
		       "the fallback did not serve");
	}
}

/* The counters of every pool, to see that a call changed none. */
static void snapshot(const struct model *m, pool_stats_t out[2])
{
	memset(out, 0, 2 * sizeof *out);
	for (int i = 0; i < m->pool_count; i++)
		expect(pool_stats(m->pools[i].pool, &out[i]) == 0,
		       "pool_stats() failed");
}

/* ------------------------------------------------------------ operations */

static void op_malloc(struct model *m, struct input *in)
{
	struct tested *t = pool_of(m, next_byte(in));
	size_t size = size_for(next_byte(in), t->block_size);
	if (m->live_count == MAX_LIVE)
		return;
	errno = 0;
	void *p = pool_malloc(t->pool, size);
	check_served(m, t, p, size, errno);
	if (p != NULL)
		take(m, t, p, size);
}

static void op_calloc(struct model *m, struct input *in)
{
	struct tested *t = pool_of(m, next_byte(in));
	uint8_t how = next_byte(in);
	size_t size = size_for(next_byte(in), t->block_size);
	if (m->live_count == MAX_LIVE)
		return;
	/* One in four: a product that overflows, size times a huge count. */
	if ((how & 3) == 0 && size > 1) {
		pool_stats_t before[2], after[2];
		snapshot(m, before);
		errno = 0;
		void *p = pool_calloc(t->pool, SIZE_MAX / size + 1 + (how >> 2),
		                      size);
		expect(p == NULL && errno == ENOMEM,
		       "calloc overflow: no NULL/ENOMEM");
		snapshot(m, after);
		expect(memcmp(before, after, sizeof before) == 0,
		       "calloc overflow changed a counter");
		return;
	}
	/* Else nmemb * size split unevenly, or the other way round. */
	size_t nmemb = 1 + (how >> 6), each = size / nmemb;
	size_t total = nmemb * each;
	errno = 0;
	void *p = (how & 2) ? pool_calloc(t->pool, each, nmemb)
	                    : pool_calloc(t->pool, nmemb, each);
	check_served(m, t, p, total, errno);
	if (p != NULL) {
		check_bytes(p, total, 0, "calloc gave bytes that are not zero");
		take(m, t, p, total);
	}
}

static void op_strdup(struct model *m, struct input *in)
{
	struct tested *t = pool_of(m, next_byte(in));
	uint8_t how = next_byte(in);
	if (how == 0) {
		errno = 0;
		expect(pool_strdup(t->pool, NULL) == NULL && errno == EINVAL,
		       "strdup(NULL): no NULL/EINVAL");
		return;
	}
	if (m->live_count == MAX_LIVE)
		return;
	char s[512];
	size_t len = size_for(how, t->block_size) % sizeof s;
	memset(s, 'a' + how % 26, len);
	s[len] = '\0';
	errno = 0;
	char *p = pool_strdup(t->pool, s);
	check_served(m, t, p, len + 1, errno);
	if (p != NULL) {
		expect(memcmp(p, s, len + 1) == 0, "strdup copied wrongly");
		take(m, t, p, len + 1);
	}
}

/* Frees a live pointer through its pool, or a fallback one through the
 * other pool when that one has a fallback (pool_free() hands a pointer
 * outside its region to its fallback). */
static void op_free(struct model *m, struct input *in)
{
	uint8_t which = next_byte(in), how = next_byte(in);
	if (m->live_count == 0 || (how & 7) == 0) {
		pool_stats_t before[2], after[2];
		snapshot(m, before);
		pool_free(pool_of(m, how >> 3)->pool, NULL);
		snapshot(m, after);
		expect(memcmp(before, after, sizeof before) == 0,
		       "pool_free(NULL) changed a counter");
		return;
	}
	size_t i = which % m->live_count;
	struct live *l = &m->live[i];
	struct tested *t = &m->pools[l->pool];
	/* Through the other pool only where it has a fallback: under
	 * POOL_NO_FALLBACK a pointer from outside is misuse. */
	if (!l->in_pool && (how & 8) &&
	    !no_fallback(pool_of(m, (uint8_t)(l->pool + 1))))
		t = pool_of(m, (uint8_t)(l->pool + 1));
	check_contents(l);
	pool_free(t->pool, l->ptr);
	drop(m, i, t);
}

static void op_realloc(struct model *m, struct input *in)
{
	uint8_t which = next_byte(in), how = next_byte(in);
	uint8_t sb = next_byte(in);

	if (m->live_count == 0 || (how & 7) == 0) {
		/* realloc(NULL, size) is malloc(size). */
		struct tested *t = pool_of(m, how >> 3);
		size_t size = size_for(sb, t->block_size);
		if (m->live_count == MAX_LIVE)
			return;
		errno = 0;
		void *p = pool_realloc(t->pool, NULL, size);
		check_served(m, t, p, size, errno);
		if (p != NULL)
			take(m, t, p, size);
		return;
	}
	size_t i = which % m->live_count;
	struct live l = m->live[i];
	struct tested *t = &m->pools[l.pool];
	size_t size = (how & 7) == 1 ? 0 : size_for(sb, t->block_size);
	check_contents(&l);
	errno = 0;
	unsigned char *p = pool_realloc(t->pool, l.ptr, size);
	int error = errno;
	if (size == 0) {
		expect(p == NULL, "realloc to 0 did not return NULL");
		drop(m, i, t);
		return;
	}
	if (p == NULL) {
		expect(error == ENOMEM, "realloc failed without ENOMEM");
		expect(no_fallback(t) && size > t->block_size,
		       "realloc failed where it could succeed");
		return; /* still live, untouched: checked when freed */
	}
	if (l.in_pool && size <= t->block_size)
		expect(p == l.ptr, "realloc moved a block the size fits");
	else if (size > t->block_size)
		expect(!pool_owns(t->pool, p), "realloc: oversize in a block");
	else if (model_in_use(m, t) < t->block_count)
		expect(pool_owns(t->pool, p),
		       "realloc into the pool: a free block was not used");
	check_bytes(p, l.size < size ? l.size : size, l.fill,
	            "realloc lost the contents");
	drop(m, i, t);
	take(m, t, p, size);
}

/* Questions that change nothing: pool_owns(), pool_block_size(),
 * pool_stats() with bad arguments, and every live pointer's bytes. */
static void op_query(struct model *m, struct input *in)
{
	struct tested *t = pool_of(m, next_byte(in));
	uint8_t off = next_byte(in);
	pool_stats_t st;

	expect(pool_block_size(t->pool) == t->block_size, "pool_block_size");
	expect(pool_block_size(NULL) == 0, "pool_block_size(NULL)");
	expect(!pool_owns(NULL, t), "pool_owns(NULL, ...)");
	expect(!pool_owns(t->pool, NULL), "pool_owns(pool, NULL)");
	errno = 0;
	expect(pool_stats(NULL, &st) == -1 && errno == EINVAL,
	       "pool_stats(NULL, ...)");
	errno = 0;
	expect(pool_stats(t->pool, NULL) == -1 && errno == EINVAL,
	       "pool_stats(pool, NULL)");
	for (size_t i = 0; i < t->seen_count; i++) {
		uintptr_t start = (uintptr_t)t->seen[i];
		expect(pool_owns(t->pool, t->seen[i]), "pool_owns(own block)");
		/* Only block starts are owned, whatever the offset. */
		if (off % t->block_size != 0)
			expect(!pool_owns(t->pool, (void *)(start + off)),
			       "pool_owns() of a pointer inside a block");
	}
	for (size_t i = 0; i < m->live_count; i++)
		check_contents(&m->live[i]);
}

/* The misuses the handler must see. */
enum misuse { MISUSE_FREED, MISUSE_INTERIOR, MISUSE_OTHER_POOL };

/*
 * A pointer for a misuse of t: a free block start of t, a pointer inside
 * one of t's blocks, or anything in the other pool's region.  NULL when
 * there is none to be had; *error is what the report must say.
 */
static void *misuse_pointer(const struct model *m, const struct tested *t,
                            enum misuse kind, uint8_t b, int *error)
{
	const struct tested *from = t;
	if (kind == MISUSE_OTHER_POOL) {
		if (m->pool_count < 2)
			return NULL;
		from = &m->pools[1 - index_of(m, t)];
	}
	if (from->seen_count == 0)
		return NULL;
	uintptr_t start = (uintptr_t)from->seen[b % from->seen_count];
	/* Steps of a block either way reach blocks never handed out. */
	uintptr_t block =
	    start + ((intptr_t)(b >> 4) - 8) * (intptr_t)from->block_size;
	if (!pool_owns(from->pool, (void *)block))
		block = start;
	size_t inside = 1 + b % (from->block_size - 1);

	switch (kind) {
	case MISUSE_FREED:
		for (size_t i = 0; i < m->live_count; i++)
			if ((uintptr_t)m->live[i].ptr == block)
				return NULL;
		*error = POOL_ERROR_DOUBLE_FREE;
		return (void *)block;
	case MISUSE_INTERIOR:
		*error = POOL_ERROR_INVALID_POINTER;
		return (void *)(block + inside);
	case MISUSE_OTHER_POOL:
		*error = POOL_ERROR_WRONG_POOL;
		return (void *)(b & 1 ? block + inside : block);
	}
	return NULL;
}

/* A misuse through pool_free() or pool_realloc(): one report, exactly as
 * the model predicts, and no counter of either pool changed. */
static void op_misuse(struct model *m, struct input *in)
{
	struct tested *t = pool_of(m, next_byte(in));
	uint8_t how = next_byte(in), b = next_byte(in);
	int error = 0;
	void *ptr = misuse_pointer(m, t, (enum misuse)(how % 3), b, &error);
	if (ptr == NULL)
		return;

	pool_stats_t before[2], after[2];
	snapshot(m, before);
	unsigned reports = last_report.count;
	const char *function = "pool_free";
	if ((how >> 2) & 1) {
		size_t size = (how >> 3) & 1 ? 0 : size_for(b, t->block_size);
		function = "pool_realloc";
		expect(pool_realloc(t->pool, ptr, size) == NULL,
		       "realloc of a misused pointer returned one");
	} else {
		pool_free(t->pool, ptr);
	}
	expect(last_report.count == reports + 1, "misuse not reported once");
	expect(last_report.error == (enum pool_error)error,
	       "misuse reported with the wrong code");
	expect(last_report.pool == t->pool && last_report.ptr == ptr &&
	           strcmp(last_report.function, function) == 0,
	       "misuse reported with the wrong pool, pointer or function");
	snapshot(m, after);
	expect(memcmp(before, after, sizeof before) == 0,
	       "a misuse changed a counter");
}

/* ------------------------------------------------------------ the run */

/* A pool from three bytes: flags, block size, block count. */
static void start_pool(struct tested *t, struct input *in)
{
	static const int modes[] = {POOL_SINGLE, POOL_LOCKED, POOL_PER_THREAD};
	uint8_t f = next_byte(in);
	int flags = modes[f % 3];
	if (f & 4)
		flags |= POOL_NO_FALLBACK;
	if (f & 8)
		flags |= POOL_DEBUG_FILL;
	size_t size = 1 + next_byte(in);
	size_t count = 1 + next_byte(in) % MAX_BLOCKS;

	*t = (struct tested){.flags = flags, .block_count = count};
	t->pool = pool_init(size, count, flags);
	if (t->pool == NULL)
		violated("pool_init() of a small pool failed");
	t->block_size = pool_block_size(t->pool);
	expect(t->block_size >= size && t->block_size >= POOL_MIN_BLOCK_SIZE &&
	           (t->block_size & (t->block_size - 1)) == 0 &&
	           t->block_size < 2 * size + POOL_MIN_BLOCK_SIZE,
	       "block size not the next power of two");
}

/*
 * The end of an input: every pointer checked, then either freed (the pools
 * must come back to no block in use) or left to pool_destroy(), the
 * fallback's given to free() as the header says.
 */
static void finish(struct model *m, bool destroy_live)
{
	for (size_t i = 0; i < m->live_count; i++)
		check_contents(&m->live[i]);
	while (m->live_count > 0) {
		struct live *l = &m->live[m->live_count - 1];
		struct tested *t = &m->pools[l->pool];
		if (!destroy_live)
			pool_free(t->pool, l->ptr);
		drop(m, m->live_count - 1, t);
		if (!destroy_live)
			check_stats(m, t);
	}
	for (int i = 0; i < m->pool_count; i++)
		pool_destroy(m->pools[i].pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model m;
	static bool handler_set;
	void *outside[MAX_LIVE];
	size_t outside_count = 0;

	if (!handler_set) {
		pool_set_error_handler(record_report, NULL);
		handler_set = true;
	}
	struct input in = {data, size, 0};
	memset(&m, 0, sizeof m);
	uint8_t setup = next_byte(&in);
	m.pool_count = 1 + (setup & 1);
	for (int i = 0; i < m.pool_count; i++)
		start_pool(&m.pools[i], &in);

	unsigned reports = last_report.count;
	for (int calls = 0; in.at < in.size && calls < MAX_CALLS; calls++) {
		uint8_t op = next_byte(&in);
		if (op % 8 == 7) {
			op_misuse(&m, &in);
			reports = last_report.count;
		} else {
			static void (*const ops[])(struct model *,
			                           struct input *) = {
			    op_malloc,  op_malloc, op_calloc, op_strdup,
			    op_realloc, op_free,   op_query,
			};
			ops[op % 8](&m, &in);
			expect(last_report.count == reports,
			       "a correct call was reported as misuse");
		}
		check_all_stats(&m);
	}

	bool destroy_live = (setup & 2) != 0;
	if (destroy_live)
		for (size_t i = 0; i < m.live_count; i++)
			if (!m.live[i].in_pool)
				outside[outside_count++] = m.live[i].ptr;
	finish(&m, destroy_live);
	for (size_t i = 0; i < outside_count; i++)
		free(outside[i]);
	return 0;
}
