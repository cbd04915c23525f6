/*
 * The hardened free lists: a free block's link is stored encoded with a
 * per-pool secret and the block's own address, and every decoded link is
 * checked before it is followed.  This test plays a use-after-free bug that
 * overwrites the link of a free block, in every mode and many ways, then
 * allocates until the pool is drained, and proves that:
 *
 *  - the installed handler sees POOL_ERROR_CORRUPTED (exactly once, from
 *    pool_malloc, naming the damaged block, or for a copied link the
 *    block the copy led to) and nothing else;
 *  - no block is ever handed out twice (pointers, and a pattern in every
 *    live block checked at the end);
 *  - nothing outside the region is handed out: every pointer the pool
 *    returns is a block start of the region (pool_owns) or counted in
 *    fallback_allocs, and none is the decoy the damaged link pointed to;
 *  - the pool stays usable and consistent: everything frees without a
 *    report, the counters balance, and blocks are handed out again.
 *
 * The ways: zero (with the encoding, zero is not NULL: it decodes to the
 * secret xor the block's address, so it cannot silently cut the list),
 * all ones, garbage, the plain address of the true next block (a plausible
 * pointer, which the encoding turns into garbage), of a free block further
 * down (without the encoding the list would silently skip blocks), of a
 * live block, of the block itself, of an interior address, of a decoy
 * outside the region, and copies of another free block's encoded link.
 * Every kind must be reported; the copies (see is_copy_kind()) are the
 * ones an encoding bound only linearly to the block's address would miss.
 *
 * In POOL_PER_THREAD mode, blocks freed by another thread are damaged
 * too (words 0 and 1, the same ways).  Such a free only claims the block
 * and writes no link in it; the owner's drain writes the block's link
 * afresh.  The damage is never read: nothing may be reported, and every
 * other proof above holds.  And such a free writes no byte of the block
 * (check_remote_free_untouched()).
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#define BLOCK 64
/* 512 blocks: in POOL_PER_THREAD mode the pool cuts them into spans of 8,
 * so a[0..7] below share one span. */
#define COUNT 512
#define FIRST 8 /* blocks allocated before the damage: a[0..7] */
#define MAX_LIVE (4 * COUNT)

/* Outside the region: a link the pool must never follow. */
static _Alignas(BLOCK) unsigned char decoy[8 * BLOCK];

enum kind {
	K_ZERO,
	K_ONES,
	K_GARBAGE1,
	K_GARBAGE2,
	K_GARBAGE3,
	K_RAW_NEXT,
	K_RAW_FURTHER,
	K_RAW_LIVE,
	K_RAW_SELF,
	K_INTERIOR,
	K_DECOY,
	K_COPY,
	K_COPY_SILENT, /* a copy that decodes to a free block further down */
	K_MIDDLE, /* garbage in a block in the middle of the list */
	K_NO_FALLBACK, /* garbage, POOL_NO_FALLBACK: NULL, never a block */
	/* POOL_PER_THREAD: words 0 and 1 of a block another thread freed */
	K_REMOTE_ZERO,
	K_REMOTE_GARBAGE,
	K_REMOTE_RAW_INDEX,
	K_REMOTE_COPY,
	K_KINDS
};

static const char *const kind_names[K_KINDS] = {
	"zero",
	"all ones",
	"garbage 0x4141...",
	"garbage 0xdeadbeefcafebabe",
	"garbage (random)",
	"plain address of the true next block",
	"plain address of a block further down",
	"plain address of a live block",
	"plain address of the block itself",
	"interior address of a free block",
	"address of a decoy outside the region",
	"copy of another free block's link",
	"copy of a link, decoding to a free block",
	"garbage in the middle of the list",
	"garbage, POOL_NO_FALLBACK",
	"freed by another thread: zero",
	"freed by another thread: garbage",
	"freed by another thread: plain index",
	"freed by another thread: copy of another",
};

static bool is_remote(enum kind k)
{
	return k >= K_REMOTE_ZERO;
}

/*
 * Copies of another block's link: with a key that were the secret xor the
 * block's address, a copy from block B into block A would decode to
 * next(B) ^ B ^ A, often a block start further down the list, and the list
 * would silently skip the blocks between.  The library binds the link to
 * the block non-linearly, so these must be reported like every other kind.
 */
static bool is_copy_kind(enum kind k)
{
	return k == K_COPY_SILENT;
}

/* The live set of one case. */
struct live {
	void *ptr[MAX_LIVE + FIRST];
	bool owned[MAX_LIVE + FIRST];
	size_t n;
	size_t fallbacks; /* pointers the pool did not own */
};

static unsigned char pattern_of(size_t i)
{
	return (unsigned char)(0x11 + i * 13);
}

/* Checks a pointer pool_malloc() returned and adds it to the live set. */
static void take(pool_t *pool, struct live *lv, void *p, const char *ctx)
{
	if (p == NULL)
		return;
	bool owned = pool_owns(pool, p);
	CHECK((uintptr_t)p % 16 == 0, "%s: unaligned pointer %p", ctx, p);
	CHECK(!((unsigned char *)p >= decoy &&
	        (unsigned char *)p < decoy + sizeof decoy),
	      "%s: the pool handed out the decoy %p: it followed the link",
	      ctx, p);
	for (size_t i = 0; i < lv->n; i++)
		CHECK(lv->ptr[i] != p, "%s: %p handed out twice", ctx, p);
	REQUIRE(lv->n < MAX_LIVE + FIRST, "%s: too many allocations", ctx);
	lv->ptr[lv->n] = p;
	lv->owned[lv->n] = owned;
	memset(p, pattern_of(lv->n), BLOCK);
	lv->n++;
	if (!owned)
		lv->fallbacks++;
}

/* Every live block still holds its own pattern: no two owners. */
static void check_patterns(const struct live *lv, const char *ctx)
{
	for (size_t i = 0; i < lv->n; i++) {
		const unsigned char *p = lv->ptr[i];
		for (size_t j = 0; j < BLOCK; j++)
			if (p[j] != pattern_of(i)) {
				safety_fail(__FILE__, __LINE__,
				            "%s: block %p (#%zu) was overwritten "
				            "at byte %zu: two owners",
				            ctx, (void *)p, i, j);
				break;
			}
	}
}

struct frees {
	pool_t *pool;
	void **blocks;
	size_t n;
};

static void *free_all(void *arg)
{
	struct frees *f = arg;
	for (size_t i = 0; i < f->n; i++)
		pool_free(f->pool, f->blocks[i]);
	return NULL;
}

/* Frees blocks from another thread: remote frees in per-thread mode. */
static void free_remotely(pool_t *pool, void **blocks, size_t n)
{
	struct frees f = {pool, blocks, n};
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, free_all, &f) == 0, "pthread_create");
	pthread_join(t, NULL);
}


static uintptr_t random_word(void)
{
	uintptr_t w = 0;
	for (int i = 0; i < 4; i++)
		w = (w << 16) ^ (uintptr_t)(rand() & 0xffff);
	return w | 1; /* never a plausible, aligned pointer */
}

static void run(const struct safety_mode *mode, enum kind k)
{
	char ctx[160];
	snprintf(ctx, sizeof ctx, "%s, %s", mode->name, kind_names[k]);
	int flags = mode->flag | (k == K_NO_FALLBACK ? POOL_NO_FALLBACK : 0);
	pool_t *pool = pool_init(BLOCK, COUNT, flags);
	REQUIRE(pool != NULL, "%s: pool_init: %s", ctx, strerror(errno));
	safety_record_reports();

	/* a[0..7] from the start of the region (one span in per-thread
	 * mode: spans hold 8 blocks here); a[1..6] go back, so the free list
	 * is a[6] -> a[5] -> ... -> a[1]; a[0] and a[7] stay live. */
	void *a[FIRST];
	for (int i = 0; i < FIRST; i++) {
		a[i] = pool_malloc(pool, BLOCK);
		REQUIRE(a[i] != NULL && pool_owns(pool, a[i]),
		        "%s: a[%d] not from the pool", ctx, i);
	}
	if (is_remote(k))
		free_remotely(pool, a + 1, FIRST - 2);
	else
		for (int i = 1; i <= FIRST - 2; i++)
			pool_free(pool, a[i]);
	REQUIRE(safety_reported_total() == 0, "%s: reports before the damage",
	        ctx);

	/* The damage, by the buggy program. */
	void *victim = k == K_MIDDLE ? a[3] : a[FIRST - 2];
	uintptr_t value = 0;
	switch (k) {
	case K_ZERO:
	case K_REMOTE_ZERO:
		value = 0;
		break;
	case K_ONES:
		value = ~(uintptr_t)0;
		break;
	case K_GARBAGE1:
		value = (uintptr_t)0x4141414141414141ull;
		break;
	case K_GARBAGE2:
	case K_MIDDLE:
	case K_NO_FALLBACK:
	case K_REMOTE_GARBAGE:
		value = (uintptr_t)0xdeadbeefcafebabeull;
		break;
	case K_GARBAGE3:
		value = random_word();
		break;
	case K_RAW_NEXT:
		value = (uintptr_t)a[FIRST - 3];
		break;
	case K_RAW_FURTHER:
		value = (uintptr_t)a[1];
		break;
	case K_RAW_LIVE:
		value = (uintptr_t)a[0];
		break;
	case K_RAW_SELF:
		value = (uintptr_t)victim;
		break;
	case K_INTERIOR:
		value = (uintptr_t)a[3] + 16;
		break;
	case K_DECOY:
		value = (uintptr_t)(decoy + BLOCK);
		break;
	case K_COPY:
		/* a[3] links to a[2]: decodes to a[2] ^ a[3] ^ a[6], which is
		 * a[7] here (live): caught, one step late. */
		value = safety_raw_read_word(a[3], 0);
		break;
	case K_COPY_SILENT:
		/* a[4] links to a[3]: decodes to a[3] ^ a[4] ^ a[6] == a[1],
		 * free at the end of the list. */
		value = safety_raw_read_word(a[4], 0);
		if (((uintptr_t)a[3] ^ (uintptr_t)a[4] ^ (uintptr_t)a[6]) !=
		    (uintptr_t)a[1]) {
			printf("%-10s %-45s not applicable: region not aligned "
			       "so\n",
			       mode->name, kind_names[k]);
			pool_destroy(pool);
			return;
		}
		break;
	case K_REMOTE_COPY:
		value = safety_raw_read_word(a[2], 0) ^ 0x10;
		break;
	case K_REMOTE_RAW_INDEX:
		value = 2; /* index + 1 of a[1] in its span, not encoded */
		break;
	case K_KINDS:
		break;
	}
	if (is_remote(k)) {
		safety_raw_write_word(victim, 0, value);
		safety_raw_write_word(victim, 1, value);
	} else {
		CHECK(value != safety_raw_read_word(victim, 0),
		      "%s: the damage leaves the link as it was", ctx);
		safety_raw_write_word(victim, 0, value);
	}

	/* Drain: allocate until the pool gives four non-pool answers in a
	 * row (fallback pointers, or NULL under POOL_NO_FALLBACK). */
	struct live *lv = calloc(1, sizeof *lv);
	REQUIRE(lv != NULL, "calloc");
	lv->ptr[lv->n] = a[0];
	lv->owned[lv->n++] = true;
	lv->ptr[lv->n] = a[FIRST - 1];
	lv->owned[lv->n++] = true;
	memset(a[0], pattern_of(0), BLOCK);
	memset(a[FIRST - 1], pattern_of(1), BLOCK);
	size_t misses = 0, nulls = 0, handed = 0;
	for (size_t i = 0; i < MAX_LIVE && misses < 4; i++) {
		errno = 0;
		void *p = pool_malloc(pool, BLOCK);
		if (p == NULL) {
			nulls++;
			CHECK(errno == ENOMEM, "%s: NULL with errno %d", ctx,
			      errno);
			CHECK(k == K_NO_FALLBACK, "%s: NULL with a fallback",
			      ctx);
		}
		misses = p != NULL && pool_owns(pool, p) ? 0 : misses + 1;
		if (p != NULL && pool_owns(pool, p))
			handed++;
		take(pool, lv, p, ctx);
	}
	CHECK(misses == 4, "%s: the pool never ran dry", ctx);

	/* What the handler saw. */
	unsigned corrupted = safety_reported(POOL_ERROR_CORRUPTED);
	unsigned expected = is_remote(k) ? 0 : 1;
	CHECK(corrupted == expected,
	      "%s: %u POOL_ERROR_CORRUPTED reports, not %u%s", ctx, corrupted,
	      expected,
	      is_copy_kind(k) ? " (a copied link must not decode to a block)"
	                      : "");
	CHECK(safety_reported_total() == corrupted,
	      "%s: %u reports of other kinds", ctx,
	      safety_reported_total() - corrupted);
	if (corrupted) {
		const char *fn = atomic_load(&safety_seen.last_function);
		CHECK(fn != NULL && strcmp(fn, "pool_malloc") == 0,
		      "%s: reported by %s, not pool_malloc", ctx,
		      fn ? fn : "(null)");
		CHECK(atomic_load(&safety_seen.last_pool) == pool,
		      "%s: reported for another pool", ctx);
		/* The damaged block is named, except where the damage
		 * decodes to a valid link: then the block it led to. */
		if (k != K_COPY && k != K_COPY_SILENT)
			CHECK(atomic_load(&safety_seen.last_ptr) == victim,
			      "%s: reported %p, the damaged block is %p", ctx,
			      atomic_load(&safety_seen.last_ptr), victim);
	}
	/* Only the damaged list is lost: the pool still handed out most of
	 * its blocks; all of them when the damage was never read. */
	CHECK(handed >= (is_remote(k) ? COUNT - 2 : COUNT - 2 * FIRST),
	      "%s: only %zu pool blocks handed out after the damage", ctx,
	      handed);

	/* Nothing outside the region passed for a pool block. */
	pool_stats_t st = safety_stats(pool);
	CHECK(st.fallback_allocs == lv->fallbacks,
	      "%s: %zu pointers not owned by the pool, %ju fallback "
	      "allocations",
	      ctx, lv->fallbacks, (uintmax_t)st.fallback_allocs);
	CHECK(st.in_use == lv->n - lv->fallbacks,
	      "%s: in_use %zu, %zu pool blocks live", ctx, st.in_use,
	      lv->n - lv->fallbacks);
	check_patterns(lv, ctx);

	/* Everything goes back without a report. */
	for (size_t i = 0; i < lv->n; i++)
		pool_free(pool, lv->ptr[i]);
	st = safety_stats(pool);
	CHECK(safety_reported_total() == corrupted,
	      "%s: freeing the live blocks was reported", ctx);
	CHECK(st.in_use == 0 && st.allocs == st.frees &&
	          st.fallback_allocs == st.fallback_frees,
	      "%s: counters do not balance: in_use %zu allocs %ju frees %ju "
	      "fallback %ju/%ju",
	      ctx, st.in_use, (uintmax_t)st.allocs, (uintmax_t)st.frees,
	      (uintmax_t)st.fallback_allocs, (uintmax_t)st.fallback_frees);

	/* And the pool works on: blocks come back, no report, no overlap. */
	safety_reports_reset();
	for (int round = 0; round < 3; round++) {
		memset(lv, 0, sizeof *lv);
		size_t owned = 0;
		for (size_t i = 0; i < COUNT; i++) {
			void *p = pool_malloc(pool, BLOCK);
			if (p != NULL && pool_owns(pool, p))
				owned++;
			take(pool, lv, p, ctx);
		}
		check_patterns(lv, ctx);
		CHECK(owned >= COUNT - 2 * FIRST,
		      "%s: round %d after the damage: only %zu pool blocks",
		      ctx, round, owned);
		for (size_t i = 0; i < lv->n; i++)
			pool_free(pool, lv->ptr[i]);
	}
	CHECK(safety_reported_total() == 0,
	      "%s: %u reports after the damage was dealt with", ctx,
	      safety_reported_total());
	free(lv);
	pool_destroy(pool);
	printf("%-10s %-45s CORRUPTED x%u, %zu pool blocks after, %zu "
	       "NULL\n",
	       mode->name, kind_names[k], corrupted, handed, nulls);
}

/* POOL_PER_THREAD: a free by another thread only claims the block, so
 * every byte of it stays as the program left it until the owner takes it
 * back (then the drain writes its link, in word 0). */
static void check_remote_free_untouched(void)
{
	pool_t *pool = pool_init(BLOCK, COUNT, POOL_PER_THREAD);
	REQUIRE(pool != NULL, "pool_init: %s", strerror(errno));
	void *a[FIRST];
	for (int i = 0; i < FIRST; i++) {
		a[i] = pool_malloc(pool, BLOCK);
		REQUIRE(a[i] != NULL && pool_owns(pool, a[i]),
		        "a[%d] not from the pool", i);
		memset(a[i], pattern_of((size_t)i), BLOCK);
	}
	free_remotely(pool, a, FIRST);
	for (int i = 0; i < FIRST; i++)
		for (size_t b = 0; b < BLOCK; b++)
			if (safety_raw_read(a[i], b) != pattern_of((size_t)i)) {
				CHECK(false,
				      "a free by another thread wrote byte %zu "
				      "of a[%d]",
				      b, i);
				break;
			}
	CHECK(safety_stats(pool).in_use == 0,
	      "in use after the frees by another thread");
	pool_destroy(pool);
}

int main(void)
{
	srand(12345);
	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++)
		for (int k = 0; k < K_KINDS; k++) {
			if (is_remote(k) && safety_modes[m].flag != POOL_PER_THREAD)
				continue;
			run(&safety_modes[m], (enum kind)k);
		}
	check_remote_free_untouched();
	pool_set_error_handler(NULL, NULL);
	return safety_result("safety-hardened");
}
