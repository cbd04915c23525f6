/*
 * The debug options, SHIFTPOOL_DEBUG (read by pool_init) and the
 * POOL_DEBUG_FILL flag:
 *
 *  - fill: a freed block is filled with 0xdb, and the pattern is verified
 *    when the block is handed out again; a write after free to any byte
 *    past the first 8 (the link) is reported as POOL_ERROR_WRITE_AFTER_FREE,
 *    with the block's address, in every mode, through every allocating
 *    call, and after a free by another thread (which writes nothing in
 *    the block but the pattern); the damaged block is quarantined: never
 *    handed out again, the call gets another.  Without fill the same
 *    write goes unreported (so the report is fill's doing), and a long
 *    mixed workload with fill on gives no false report.
 *  - fail-fallback=N: exactly the Nth fallback allocation of each pool fails
 *    (NULL, errno ENOMEM), whatever call asked for it, and the counters stay
 *    consistent.
 *  - the parsing of the comma list.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <unistd.h>

#define BLOCK 128
#define COUNT 64
#define BIG (4 * BLOCK) /* always a fallback */
#define FILL_BYTE 0xdb
#define LINK_BYTES 8

static void set_debug(const char *value)
{
	if (value)
		setenv("SHIFTPOOL_DEBUG", value, 1);
	else
		unsetenv("SHIFTPOOL_DEBUG");
}

static pool_t *make_pool(int flags, const char *debug, size_t count)
{
	set_debug(debug);
	pool_t *pool = pool_init(BLOCK, count, flags);
	set_debug(NULL);
	REQUIRE(pool != NULL, "pool_init(%d, \"%s\"): %s", flags,
	        debug ? debug : "", strerror(errno));
	return pool;
}

/* ------------------------------------------------------------ fill */

/* How the block comes back after the bad write. */
enum via { VIA_MALLOC, VIA_CALLOC, VIA_STRDUP, VIA_REALLOC, VIA_COUNT };
static const char *const via_names[] = {"pool_malloc", "pool_calloc",
                                        "pool_strdup", "pool_realloc"};

static void *take_back(pool_t *pool, enum via via)
{
	switch (via) {
	case VIA_MALLOC:
		return pool_malloc(pool, BLOCK);
	case VIA_CALLOC:
		return pool_calloc(pool, 1, BLOCK);
	case VIA_STRDUP:
		return pool_strdup(pool, "back again");
	default:
		return pool_realloc(pool, NULL, BLOCK);
	}
}

struct frees {
	pool_t *pool;
	void *block;
};

static void *free_one(void *arg)
{
	struct frees *f = arg;
	pool_free(f->pool, f->block);
	return NULL;
}

static void free_remotely(pool_t *pool, void *block)
{
	struct frees f = {pool, block};
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, free_one, &f) == 0, "pthread_create");
	pthread_join(t, NULL);
}

/*
 * Frees a block (remotely: from another thread), writes one byte of it at
 * offset, and allocates with via until the pool meets the block again
 * (the lists are LIFO; a remote free comes back when the owner drains
 * its span's claims).  Returns how many WRITE_AFTER_FREE reports that
 * gave; the damaged block itself must never be handed out with fill on,
 * and comes back, unreported, with it off.
 */
static unsigned write_after_free(pool_t *pool, size_t offset, enum via via,
                                 bool remote, bool fill, const char *ctx)
{
	/* Neighbours live on both sides, the victim between them. */
	void *left = pool_malloc(pool, BLOCK);
	unsigned char *p = pool_malloc(pool, BLOCK);
	void *right = pool_malloc(pool, BLOCK);
	REQUIRE(p != NULL && pool_owns(pool, p), "%s: no pool block", ctx);
	memset(p, 0x33, BLOCK);
	if (remote)
		free_remotely(pool, p);
	else
		pool_free(pool, p);

	safety_reports_reset();
	/* A byte the write must change: without fill a free block's bytes
	 * may hold any value, and writing the one a byte already holds (one
	 * time in 256) would be no write at all. */
	safety_raw_write(p, offset, (unsigned char)~safety_raw_read(p, offset));
	void *taken[COUNT];
	size_t ntaken = 0;
	while (safety_reported_total() == 0 && ntaken < COUNT) {
		void *q = take_back(pool, via);
		if (q == NULL)
			break;
		if (q == p) {
			CHECK(!fill, "%s: the damaged block %p was handed out",
			      ctx, (void *)p);
			taken[ntaken++] = q;
			break;
		}
		if (via == VIA_CALLOC && pool_owns(pool, q))
			for (size_t i = 0; i < BLOCK; i++)
				if (((unsigned char *)q)[i] != 0) {
					safety_fail(__FILE__, __LINE__,
					            "%s: calloc byte %zu is 0x%x",
					            ctx, i,
					            ((unsigned char *)q)[i]);
					break;
				}
		if (via == VIA_STRDUP)
			CHECK(strcmp((char *)q, "back again") == 0,
			      "%s: strdup copy wrong", ctx);
		taken[ntaken++] = q;
	}
	unsigned n = safety_reported(POOL_ERROR_WRITE_AFTER_FREE);
	if (n) {
		CHECK(atomic_load(&safety_seen.last_ptr) == p,
		      "%s: reported %p, the block is %p", ctx,
		      atomic_load(&safety_seen.last_ptr), (void *)p);
		CHECK(atomic_load(&safety_seen.last_pool) == pool,
		      "%s: reported for another pool", ctx);
	}
	CHECK(safety_reported_total() == n, "%s: %u reports of other kinds",
	      ctx, safety_reported_total() - n);
	while (ntaken)
		pool_free(pool, taken[--ntaken]);
	pool_free(pool, left);
	pool_free(pool, right);
	return n;
}

/* A quarantined block never comes back, and counts as in use.  The pool
 * hands out every other block, then falls back. */
static void check_quarantined(pool_t *pool, size_t quarantined, const char *ctx)
{
	pool_stats_t st = safety_stats(pool);
	CHECK(st.in_use == quarantined,
	      "%s: in_use %zu, expected the %zu quarantined blocks", ctx,
	      st.in_use, quarantined);
	void *all[COUNT];
	size_t n = 0;
	for (; n < COUNT; n++) {
		all[n] = pool_malloc(pool, BLOCK);
		if (all[n] == NULL || !pool_owns(pool, all[n]))
			break;
	}
	CHECK(n == COUNT - quarantined,
	      "%s: %zu blocks handed out, expected %zu", ctx, n,
	      COUNT - quarantined);
	if (n < COUNT && all[n] != NULL)
		pool_free(pool, all[n]);
	while (n)
		pool_free(pool, all[--n]);
}

/* A freed block holds the pattern past its links. */
static void check_filled(pool_t *pool, const char *ctx)
{
	unsigned char *p = pool_malloc(pool, BLOCK);
	REQUIRE(p != NULL, "%s: no block", ctx);
	memset(p, 0x77, BLOCK);
	pool_free(pool, p);
	for (size_t i = LINK_BYTES; i < BLOCK; i++)
		if (safety_raw_read(p, i) != FILL_BYTE) {
			safety_fail(__FILE__, __LINE__,
			            "%s: freed block byte %zu is 0x%x, not 0x%x",
			            ctx, i, safety_raw_read(p, i), FILL_BYTE);
			break;
		}
	void *q = pool_malloc(pool, BLOCK);
	CHECK(q == p, "%s: the freed block did not come back", ctx);
	pool_free(pool, q);
}

static void test_fill_mode(const struct safety_mode *mode, bool by_flag)
{
	char ctx[160];
	const size_t offsets[] = {LINK_BYTES, 15, LINK_BYTES + 8, BLOCK / 2,
	                          BLOCK - 1};
	size_t quarantined = 0;
	pool_t *pool = by_flag ? make_pool(mode->flag | POOL_DEBUG_FILL, NULL,
	                                   COUNT)
	                       : make_pool(mode->flag, "fill", COUNT);
	const char *how = by_flag ? "POOL_DEBUG_FILL" : "SHIFTPOOL_DEBUG=fill";

	snprintf(ctx, sizeof ctx, "%s, %s", mode->name, how);
	check_filled(pool, ctx);
	for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++)
		for (int v = 0; v < VIA_COUNT; v++) {
			snprintf(ctx, sizeof ctx, "%s, %s, byte %zu, %s",
			         mode->name, how, offsets[o], via_names[v]);
			unsigned n = write_after_free(pool, offsets[o],
			                              (enum via)v, false, true,
			                              ctx);
			CHECK(n == 1, "%s: %u WRITE_AFTER_FREE reports, not 1",
			      ctx, n);
			quarantined += n;
		}
	snprintf(ctx, sizeof ctx, "%s, %s, freed by another thread",
	         mode->name, how);
	for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
		unsigned n = write_after_free(pool, offsets[o], VIA_MALLOC,
		                              true, true, ctx);
		CHECK(n == 1, "%s, byte %zu: %u WRITE_AFTER_FREE reports, not 1",
		      ctx, offsets[o], n);
		quarantined += n;
	}
	snprintf(ctx, sizeof ctx, "%s, %s, after the reports", mode->name,
	         how);
	check_quarantined(pool, quarantined, ctx);
	pool_destroy(pool);
	printf("fill: %-10s %-22s write after free reported\n", mode->name,
	       how);
}

/* Without fill the write goes unseen: the reports above are fill's. */
static void test_fill_off(const struct safety_mode *mode)
{
	char ctx[160];
	snprintf(ctx, sizeof ctx, "%s, no fill", mode->name);
	pool_t *pool = make_pool(mode->flag, NULL, COUNT);
	unsigned n =
	    write_after_free(pool, BLOCK / 2, VIA_MALLOC, false, false, ctx);
	CHECK(n == 0, "%s: %u reports without fill", ctx, n);
	pool_destroy(pool);
}

/* A mixed workload on two threads with fill on: no false report, and
 * every calloc zeroed. */
struct work {
	pool_t *pool;
	unsigned seed;
	void **shared; /* blocks passed between the two threads */
	pthread_mutex_t *lock;
};

#define WORK_OPS 20000
#define WORK_SLOTS 48

static void *workload(void *arg)
{
	struct work *w = arg;
	unsigned char *slot[WORK_SLOTS] = {0};
	size_t size[WORK_SLOTS] = {0};
	unsigned seed = w->seed;

	for (int op = 0; op < WORK_OPS; op++) {
		seed = seed * 1103515245u + 12345u;
		unsigned r = seed >> 8;
		size_t i = r % WORK_SLOTS;
		if (slot[i] != NULL) {
			for (size_t j = 0; j < size[i]; j++)
				if (slot[i][j] != (unsigned char)(i + j)) {
					safety_fail(__FILE__, __LINE__,
					            "workload: block changed");
					break;
				}
			if ((r >> 8) % 4 == 0) {
				/* Pass it to the other thread. */
				pthread_mutex_lock(w->lock);
				void *old = w->shared[i];
				w->shared[i] = slot[i];
				pthread_mutex_unlock(w->lock);
				if (old)
					pool_free(w->pool, old);
			} else if ((r >> 8) % 4 == 1) {
				size_t n = 1 + (r >> 12) % (2 * BLOCK);
				unsigned char *q =
				    pool_realloc(w->pool, slot[i], n);
				if (q == NULL) {
					safety_fail(__FILE__, __LINE__,
					            "workload: realloc failed");
					pool_free(w->pool, slot[i]);
				} else {
					slot[i] = q;
					memset(q, 0, n);
					for (size_t j = 0; j < n; j++)
						q[j] = (unsigned char)(i + j);
					size[i] = n;
					continue;
				}
			} else {
				pool_free(w->pool, slot[i]);
			}
			slot[i] = NULL;
			continue;
		}
		size_t n = 1 + (r >> 8) % BLOCK;
		if ((r >> 16) % 8 == 0)
			n += BLOCK; /* a fallback now and then */
		bool zero = (r >> 20) % 2;
		slot[i] = zero ? pool_calloc(w->pool, n, 1)
		               : pool_malloc(w->pool, n);
		if (slot[i] == NULL) {
			safety_fail(__FILE__, __LINE__, "workload: no memory");
			continue;
		}
		if (zero)
			for (size_t j = 0; j < n; j++)
				if (slot[i][j] != 0) {
					safety_fail(__FILE__, __LINE__,
					            "workload: calloc byte %zu "
					            "is 0x%x",
					            j, slot[i][j]);
					break;
				}
		for (size_t j = 0; j < n; j++)
			slot[i][j] = (unsigned char)(i + j);
		size[i] = n;
	}
	for (size_t i = 0; i < WORK_SLOTS; i++)
		pool_free(w->pool, slot[i]);
	return NULL;
}

static void test_fill_no_false_report(const struct safety_mode *mode)
{
	pool_t *pool = make_pool(mode->flag, "fill", COUNT);
	safety_reports_reset();
	void *shared[WORK_SLOTS] = {0};
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct work w[2] = {{pool, 1, shared, &lock}, {pool, 2, shared, &lock}};
	int threads = mode->flag == POOL_SINGLE ? 1 : 2;
	pthread_t t[2];
	for (int i = 0; i < threads; i++)
		REQUIRE(pthread_create(&t[i], NULL, workload, &w[i]) == 0,
		        "pthread_create");
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	for (size_t i = 0; i < WORK_SLOTS; i++)
		pool_free(pool, shared[i]);
	CHECK(safety_reported_total() == 0,
	      "%s, fill: %u false reports under correct use", mode->name,
	      safety_reported_total());
	pool_stats_t st = safety_stats(pool);
	CHECK(st.in_use == 0 && st.allocs == st.frees &&
	          st.fallback_allocs == st.fallback_frees && st.allocs > 0,
	      "%s, fill workload: counters do not balance", mode->name);
	pool_destroy(pool);
	printf("fill: %-10s %d thread(s), %ju pool allocations, no false "
	       "report\n",
	       mode->name, threads, (uintmax_t)st.allocs);
}

/* ------------------------------------------------------------ fail-fallback */

/* Does up to max oversize allocations; returns the 1-based index of each
 * that failed as bits, and checks errno. */
static unsigned long failing_fallbacks(pool_t *pool, int max, const char *ctx)
{
	unsigned long failed = 0;
	void *p[64];
	for (int i = 0; i < max; i++) {
		errno = 0;
		p[i] = pool_malloc(pool, BIG);
		if (p[i] == NULL) {
			failed |= 1ul << (i + 1);
			CHECK(errno == ENOMEM, "%s: fallback #%d: errno %d",
			      ctx, i + 1, errno);
		}
	}
	for (int i = 0; i < max; i++)
		pool_free(pool, p[i]);
	return failed;
}

static void test_fail_fallback(const struct safety_mode *mode)
{
	char ctx[160];
	void *p[COUNT + 8];

	/* Oversize requests, with pool allocations between them. */
	snprintf(ctx, sizeof ctx, "%s, fail-fallback=3", mode->name);
	pool_t *pool = make_pool(mode->flag, "fail-fallback=3", 4);
	void *small[4];
	size_t nsmall = 0;
	for (int i = 1; i <= 6; i++) {
		if (nsmall < 4) {
			small[nsmall] = pool_malloc(pool, 8);
			CHECK(small[nsmall] && pool_owns(pool, small[nsmall]),
			      "%s: pool allocation failed", ctx);
			nsmall++;
		}
		errno = 0;
		p[i] = pool_malloc(pool, BIG);
		if (i == 3)
			CHECK(p[i] == NULL && errno == ENOMEM,
			      "%s: fallback #3 gave %p, errno %d", ctx, p[i],
			      errno);
		else
			CHECK(p[i] != NULL, "%s: fallback #%d failed", ctx, i);
	}
	pool_stats_t st = safety_stats(pool);
	CHECK(st.fallback_allocs == 5 && st.fallback_frees == 0 &&
	          st.allocs == 4 && st.in_use == 4,
	      "%s: stats: fallback_allocs %ju, allocs %ju, in_use %zu", ctx,
	      (uintmax_t)st.fallback_allocs, (uintmax_t)st.allocs, st.in_use);
	for (int i = 1; i <= 6; i++)
		pool_free(pool, p[i]);
	while (nsmall)
		pool_free(pool, small[--nsmall]);
	st = safety_stats(pool);
	CHECK(st.fallback_frees == 5 && st.frees == 4 && st.in_use == 0,
	      "%s: stats after the frees: fallback_frees %ju, frees %ju, "
	      "in_use %zu",
	      ctx, (uintmax_t)st.fallback_frees, (uintmax_t)st.frees,
	      st.in_use);
	/* Only the Nth: later ones succeed. */
	CHECK(failing_fallbacks(pool, 10, ctx) == 0,
	      "%s: a later fallback failed", ctx);
	pool_destroy(pool);

	/* Fallbacks for an exhausted pool, from calloc too. */
	snprintf(ctx, sizeof ctx, "%s, fail-fallback=2, exhausted",
	         mode->name);
	pool = make_pool(mode->flag, "fail-fallback=2", 8);
	for (int i = 0; i < 8; i++)
		p[i] = pool_calloc(pool, 1, BLOCK);
	for (int i = 0; i < 8; i++)
		CHECK(p[i] && pool_owns(pool, p[i]), "%s: block %d", ctx, i);
	p[8] = pool_calloc(pool, 1, 16);
	errno = 0;
	p[9] = pool_calloc(pool, 2, 8);
	CHECK(p[8] != NULL && !pool_owns(pool, p[8]),
	      "%s: fallback #1 failed", ctx);
	CHECK(p[9] == NULL && errno == ENOMEM,
	      "%s: fallback #2 (calloc) gave %p, errno %d", ctx, p[9], errno);
	p[10] = pool_malloc(pool, 16);
	CHECK(p[10] != NULL, "%s: fallback #3 failed", ctx);
	st = safety_stats(pool);
	CHECK(st.fallback_allocs == 2 && st.in_use == 8 && st.allocs == 8,
	      "%s: stats: fallback_allocs %ju, in_use %zu", ctx,
	      (uintmax_t)st.fallback_allocs, st.in_use);
	for (int i = 0; i <= 10; i++)
		pool_free(pool, p[i]);
	pool_destroy(pool);

	/* realloc out of a block: the failure leaves the block as it was. */
	snprintf(ctx, sizeof ctx, "%s, fail-fallback=1, realloc", mode->name);
	pool = make_pool(mode->flag, "fail-fallback=1", 8);
	unsigned char *b = pool_malloc(pool, BLOCK);
	REQUIRE(b != NULL, "%s: no block", ctx);
	memset(b, 0x42, BLOCK);
	errno = 0;
	void *r = pool_realloc(pool, b, BIG);
	CHECK(r == NULL && errno == ENOMEM,
	      "%s: realloc gave %p, errno %d", ctx, r, errno);
	bool intact = true;
	for (size_t i = 0; i < BLOCK; i++)
		intact = intact && b[i] == 0x42;
	CHECK(intact, "%s: the failed realloc changed the block", ctx);
	st = safety_stats(pool);
	CHECK(st.in_use == 1 && st.fallback_allocs == 0 && st.frees == 0,
	      "%s: stats after the failed realloc: in_use %zu", ctx,
	      st.in_use);
	r = pool_realloc(pool, b, BIG);
	CHECK(r != NULL && !pool_owns(pool, r) &&
	          ((unsigned char *)r)[BLOCK - 1] == 0x42,
	      "%s: the second realloc failed", ctx);
	pool_free(pool, r);
	st = safety_stats(pool);
	CHECK(st.in_use == 0 && st.fallback_allocs == 1 &&
	          st.fallback_frees == 1 && st.frees == 1,
	      "%s: stats at the end", ctx);
	pool_destroy(pool);

	/* Each pool counts its own. */
	snprintf(ctx, sizeof ctx, "%s, fail-fallback=2, two pools",
	         mode->name);
	pool_t *one = make_pool(mode->flag, "fail-fallback=2", 4);
	pool_t *two = make_pool(mode->flag, "fail-fallback=2", 4);
	void *x[4], *y[4];
	for (int i = 0; i < 4; i++) {
		x[i] = pool_malloc(one, BIG);
		y[i] = pool_malloc(two, BIG);
		CHECK((x[i] == NULL) == (i == 1) && (y[i] == NULL) == (i == 1),
		      "%s: fallback #%d: %p, %p", ctx, i + 1, x[i], y[i]);
	}
	for (int i = 0; i < 4; i++) {
		pool_free(one, x[i]);
		pool_free(two, y[i]);
	}
	pool_destroy(one);
	pool_destroy(two);
	printf("fail-fallback: %-10s exactly the Nth fallback fails\n",
	       mode->name);
}

/* Per-thread pools count fallbacks pool-wide: across threads. */
struct big_alloc {
	pool_t *pool;
	void *p[5];
};

static void *big_allocs(void *arg)
{
	struct big_alloc *b = arg;
	for (int i = 0; i < 5; i++)
		b->p[i] = pool_malloc(b->pool, BIG);
	return NULL;
}

static void test_fail_fallback_threads(void)
{
	pool_t *pool = make_pool(POOL_PER_THREAD, "fail-fallback=7", COUNT);
	struct big_alloc b[2] = {{.pool = pool}, {.pool = pool}};
	pthread_t t;
	big_allocs(&b[0]);
	REQUIRE(pthread_create(&t, NULL, big_allocs, &b[1]) == 0,
	        "pthread_create");
	pthread_join(t, NULL);
	int nulls = 0;
	for (int i = 0; i < 5; i++) {
		nulls += b[0].p[i] == NULL;
		nulls += b[1].p[i] == NULL;
	}
	CHECK(nulls == 1 && b[1].p[1] == NULL,
	      "per-thread, fail-fallback=7 over two threads: %d failed", nulls);
	pool_stats_t st = safety_stats(pool);
	CHECK(st.fallback_allocs == 9, "per-thread: fallback_allocs %ju",
	      (uintmax_t)st.fallback_allocs);
	for (int i = 0; i < 5; i++) {
		pool_free(pool, b[0].p[i]);
		pool_free(pool, b[1].p[i]);
	}
	st = safety_stats(pool);
	CHECK(st.fallback_frees == 9, "per-thread: fallback_frees %ju",
	      (uintmax_t)st.fallback_frees);
	pool_destroy(pool);
}

/* ------------------------------------------------------------ parsing */

/* Whether a write after free is reported: fill is on. */
static bool fill_on(pool_t *pool)
{
	unsigned n = write_after_free(pool, BLOCK / 2, VIA_MALLOC, false, false,
	                              "fill probe");
	return n > 0;
}

/* The 1-based index of the first failing fallback among 8, or 0. */
static int fail_at(pool_t *pool)
{
	unsigned long failed = failing_fallbacks(pool, 8, "fail probe");
	for (int i = 1; i <= 8; i++)
		if (failed & (1ul << i))
			return i;
	return 0;
}

static void test_parsing(void)
{
	static const struct {
		const char *value;
		bool fill;
		int fail;
	} cases[] = {
	    {"fill,fail-fallback=3", true, 3},
	    {"fail-fallback=2,fill", true, 2},
	    {"fill", true, 0},
	    {"fail-fallback=5", false, 5},
	    {"fail-fallback=1", false, 1},
	    {",fill,,", true, 0},
	    {"unknown,fill,fail-fallback=4,other=1", true, 4},
	    {"no-valgrind,fill", true, 0},
	    {"fillx", false, 0},
	    {"xfill", false, 0},
	    {"FILL", false, 0},
	    {"fil", false, 0},
	    {"fail-fallback=", false, 0},
	    {"fail-fallback=0", false, 0},
	    {"fail-fallback=3x", false, 0},
	    {"fail-fallback", false, 0},
	    {"fail-fallback=2=3", false, 0},
	    {"", false, 0},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (size_t m = 0; m < SAFETY_MODE_COUNT; m++) {
			pool_t *pool = make_pool(safety_modes[m].flag,
			                         cases[c].value, COUNT);
			int fail = fail_at(pool);
			bool fill = fill_on(pool);
			CHECK(fill == cases[c].fill && fail == cases[c].fail,
			      "%s, SHIFTPOOL_DEBUG=\"%s\": fill %s, "
			      "fail-fallback %d; want fill %s, %d",
			      safety_modes[m].name, cases[c].value,
			      fill ? "on" : "off", fail,
			      cases[c].fill ? "on" : "off", cases[c].fail);
			pool_destroy(pool);
		}

	/* Read by pool_init(): a pool made before the variable is set, or
	 * after it is gone, has no debug option. */
	pool_t *before = make_pool(POOL_SINGLE, NULL, COUNT);
	set_debug("fill,fail-fallback=1");
	pool_t *during = pool_init(BLOCK, COUNT, POOL_SINGLE);
	set_debug(NULL);
	pool_t *after = pool_init(BLOCK, COUNT, POOL_SINGLE);
	REQUIRE(during && after, "pool_init");
	CHECK(!fill_on(before) && fail_at(before) == 0,
	      "a pool made before SHIFTPOOL_DEBUG was set uses it");
	CHECK(fill_on(during) && fail_at(during) == 1,
	      "a pool made while SHIFTPOOL_DEBUG was set ignores it");
	CHECK(!fill_on(after) && fail_at(after) == 0,
	      "a pool made after SHIFTPOOL_DEBUG was unset uses it");
	pool_destroy(before);
	pool_destroy(during);
	pool_destroy(after);
	printf("parsing: %zu values checked in every mode\n",
	       sizeof cases / sizeof cases[0]);
}

int main(void)
{
	set_debug(NULL);
	unsetenv("SHIFTPOOL_TRACE");
	safety_record_reports();
	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++) {
		test_fill_mode(&safety_modes[m], true);
		test_fill_mode(&safety_modes[m], false);
		test_fill_off(&safety_modes[m]);
		test_fill_no_false_report(&safety_modes[m]);
		test_fail_fallback(&safety_modes[m]);
	}
	test_fail_fallback_threads();
	test_parsing();
	pool_set_error_handler(NULL, NULL);
	return safety_result("safety-debug");
}
