/*
 * The library calls no malloc() for its own state, so that a program
 * whose malloc() is a pool set, or which calls the library from inside an
 * allocator hook, is never called back.
 *
 * This program defines the C library's allocation functions itself
 * (malloc, calloc, realloc, reallocarray, free, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc), each forwarding to glibc's
 * own (__libc_malloc() and the rest), and counts the calls made while the
 * calling thread is inside a call on the library.  With every library
 * call bracketed so, it makes sets and pools in every mode, allocates,
 * reallocates and frees from this thread and from four others (each gets
 * its own thread caches), reports a misuse, switches among twenty error
 * handlers, trims and destroys everything.  It prints the count of each
 * step and fails if any is not 0.
 *
 * What a pool does not serve goes to its fallback, which may allocate:
 * the pools made with pool_init() and pool_set_init() get only requests
 * they serve (their fallback counters are checked), and the ones made
 * with pool_init_with() and pool_set_init_with() get a fallback that
 * leaves the bracket while it runs (and counts its own calls: the test
 * makes sure it was used).
 *
 * A thread's caches are given back by a destructor when it exits, outside
 * any bracket; they cannot hold memory from malloc(), since nothing was
 * allocated inside one.
 *
 * Exit status: 0 when nothing was counted, 1 when something was, 77
 * (skipped) without glibc's __libc_malloc() or in a sanitizer build (its
 * runtime owns malloc()), 99 when the test itself went wrong.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#if defined(SHIFTPOOL_ASAN) || defined(SHIFTPOOL_TSAN) || !defined(__GLIBC__)

int main(void)
{
	puts("no-malloc: needs glibc's __libc_malloc() and a build without "
	     "ASan or TSan (they own malloc()); skipped");
	return 77;
}

#else

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "shiftpool.h"

/* ------------------------------------------------------------ the count */

/* The steps the calls are counted by. */
enum step {
	STEP_OUTSIDE, /* not counted: no bracket is open */
	STEP_INIT,
	STEP_INIT_WITH,
	STEP_CALLS,
	STEP_THREADS,
	STEP_REMOTE_FREES,
	STEP_HANDLERS,
	STEP_DESTROY,
	STEP_COUNT
};

static const char *const step_names[STEP_COUNT] = {
    [STEP_OUTSIDE] = "outside",
    [STEP_INIT] = "pool_set_init, pool_init",
    [STEP_INIT_WITH] = "pool_set_init_with, pool_init_with",
    [STEP_CALLS] = "allocations and frees, this thread",
    [STEP_THREADS] = "allocations and frees, 4 threads",
    [STEP_REMOTE_FREES] = "frees of the threads' blocks",
    [STEP_HANDLERS] = "pool_set_error_handler, 20 handlers",
    [STEP_DESTROY] = "pool_set_destroy, pool_destroy",
};

/* The functions the calls are counted by. */
enum function {
	FN_MALLOC,
	FN_CALLOC,
	FN_REALLOC,
	FN_REALLOCARRAY,
	FN_FREE,
	FN_POSIX_MEMALIGN,
	FN_ALIGNED_ALLOC,
	FN_MEMALIGN,
	FN_VALLOC,
	FN_PVALLOC,
	FN_COUNT
};

static const char *const function_names[FN_COUNT] = {
    "malloc",         "calloc",        "realloc",  "reallocarray", "free",
    "posix_memalign", "aligned_alloc", "memalign", "valloc",       "pvalloc",
};

/* Whether this thread is inside a library call (the bracket), and the
 * step it belongs to.  The counters are plain atomics in static storage:
 * counting allocates nothing.  volatile: the compiler knows malloc() as a
 * builtin that reads no variable of the program, and would otherwise drop
 * the fallback's store around it (see outside_malloc()). */
static __thread volatile bool inside_library;
static _Atomic int current_step = STEP_OUTSIDE;
static atomic_ulong counted[STEP_COUNT][FN_COUNT];
/* Calls of the bracketed fallback, which must be used. */
static atomic_ulong fallback_calls;

static void count(enum function fn)
{
	if (inside_library)
		atomic_fetch_add_explicit(
		    &counted[atomic_load_explicit(&current_step,
		                                  memory_order_relaxed)][fn],
		    1, memory_order_relaxed);
}

/* Brackets one statement: a call on the library. */
#define INSIDE(statement)                                                      \
	do {                                                                   \
		inside_library = true;                                         \
		statement;                                                     \
		inside_library = false;                                        \
	} while (0)

/* ------------------------------------------------------------ the allocator */

/* glibc's own allocator, which the functions below forward to. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

void *malloc(size_t size)
{
	count(FN_MALLOC);
	return __libc_malloc(size);
}

void *calloc(size_t nmemb, size_t size)
{
	count(FN_CALLOC);
	return __libc_calloc(nmemb, size);
}

void *realloc(void *ptr, size_t size)
{
	count(FN_REALLOC);
	return __libc_realloc(ptr, size);
}

void *reallocarray(void *ptr, size_t nmemb, size_t size)
{
	size_t bytes;

	count(FN_REALLOCARRAY);
	if (__builtin_mul_overflow(nmemb, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(ptr, bytes);
}

void free(void *ptr)
{
	count(FN_FREE);
	__libc_free(ptr);
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
	count(FN_POSIX_MEMALIGN);
	if (alignment == 0 || (alignment & (alignment - 1)) != 0 ||
	    alignment % sizeof(void *) != 0)
		return EINVAL;
	void *ptr = __libc_memalign(alignment, size);
	if (ptr == NULL)
		return ENOMEM;
	*out = ptr;
	return 0;
}

void *aligned_alloc(size_t alignment, size_t size)
{
	count(FN_ALIGNED_ALLOC);
	return __libc_memalign(alignment, size);
}

void *memalign(size_t alignment, size_t size)
{
	count(FN_MEMALIGN);
	return __libc_memalign(alignment, size);
}

void *valloc(size_t size)
{
	count(FN_VALLOC);
	return __libc_valloc(size);
}

void *pvalloc(size_t size)
{
	count(FN_PVALLOC);
	return __libc_pvalloc(size);
}

/* ------------------------------------------------------------ helpers */

/* The test itself went wrong: exit 99 with what. */
static void broken(const char *what, int mode)
{
	fprintf(stderr, "no-malloc: %s (mode %#x)\n", what, (unsigned)mode);
	exit(99);
}

/* A fallback over the C library's that leaves the bracket while it runs:
 * its allocations are the program's, not the library's. */
static void *outside_malloc(size_t size, void *arg)
{
	(void)arg;
	bool was = inside_library;
	inside_library = false;
	void *ptr = malloc(size);
	inside_library = was;
	atomic_fetch_add(&fallback_calls, 1);
	return ptr;
}

static void *outside_calloc(size_t nmemb, size_t size, void *arg)
{
	(void)arg;
	bool was = inside_library;
	inside_library = false;
	void *ptr = calloc(nmemb, size);
	inside_library = was;
	atomic_fetch_add(&fallback_calls, 1);
	return ptr;
}

static void *outside_realloc(void *ptr, size_t size, void *arg)
{
	(void)arg;
	bool was = inside_library;
	inside_library = false;
	void *moved = realloc(ptr, size);
	inside_library = was;
	atomic_fetch_add(&fallback_calls, 1);
	return moved;
}

static void outside_free(void *ptr, void *arg)
{
	(void)arg;
	bool was = inside_library;
	inside_library = false;
	free(ptr);
	inside_library = was;
	atomic_fetch_add(&fallback_calls, 1);
}

static size_t outside_usable_size(const void *ptr, void *arg)
{
	(void)arg;
	return malloc_usable_size((void *)ptr);
}

static const pool_fallback_t outside_fallback = {
    .malloc = outside_malloc,
    .calloc = outside_calloc,
    .realloc = outside_realloc,
    .free = outside_free,
    .usable_size = outside_usable_size,
    .arg = NULL,
};

/* Twenty (handler, argument) pairs: two functions, ten arguments each. */
static atomic_uint reports;

static void handler_even(const pool_t *pool, const char *function,
                         const void *ptr, enum pool_error error, void *arg)
{
	(void)pool, (void)function, (void)ptr, (void)error, (void)arg;
	atomic_fetch_add(&reports, 1);
}

static void handler_odd(const pool_t *pool, const char *function,
                        const void *ptr, enum pool_error error, void *arg)
{
	(void)pool, (void)function, (void)ptr, (void)error, (void)arg;
	atomic_fetch_add(&reports, 1);
}

/* ------------------------------------------------------------ the work */

/* What every thread allocates from, bracketed call by call. */
struct targets {
	int mode;
	pool_set_t *set;      /* fallback: the C library's */
	pool_t *pool;         /* fallback: the C library's */
	pool_set_t *with_set; /* fallback: outside_fallback */
	pool_t *with_pool;    /* fallback: outside_fallback */
};

enum { PER_THREAD = 300, THREADS = 4 };

struct worker {
	const struct targets *t;
	unsigned seed;
	/* Left allocated for the main thread to free. */
	void *set_blocks[PER_THREAD / 2];
	void *pool_blocks[PER_THREAD / 2];
	void *with_set_blocks[PER_THREAD / 2];
	void *with_pool_blocks[PER_THREAD / 2];
};

/* Sizes that every class of the set serves (1 to 4096 bytes). */
static size_t set_size(unsigned i)
{
	return (size_t)1 << (i % 13);
}

/*
 * Allocations from each target, half freed at once and half kept (for
 * another thread to free); reallocations across classes and to the
 * fallback; the calls that ask.  Returns false when an allocation failed.
 */
static bool allocate_and_free(struct worker *w)
{
	const struct targets *t = w->t;
	void *p, *q;
	size_t usable;
	int owns;

	for (unsigned i = 0; i < PER_THREAD; i++) {
		size_t size = set_size(i + w->seed);
		INSIDE(p = pool_set_malloc(t->set, size));
		INSIDE(q = pool_malloc(t->pool, 64));
		if (p == NULL || q == NULL)
			return false;
		memset(p, 1, size);
		INSIDE(usable = pool_set_usable_size(t->set, p));
		INSIDE(owns = pool_set_owns(t->set, p));
		if (usable < size || !owns)
			return false;
		if (i % 2) {
			INSIDE(pool_set_free(t->set, p));
			INSIDE(pool_free(t->pool, q));
		} else {
			w->set_blocks[i / 2] = p;
			w->pool_blocks[i / 2] = q;
		}

		/* The pools with a fallback of their own: too big, and
		 * exhausted, and reallocated in and out of their blocks. */
		INSIDE(p = pool_set_calloc(t->with_set, 1, i % 3 ? 8 : 5000));
		INSIDE(q = pool_malloc(t->with_pool, i % 5 ? 32 : 1000));
		if (p == NULL || q == NULL)
			return false;
		INSIDE(p = pool_set_realloc(t->with_set, p, size));
		INSIDE(q = pool_realloc(t->with_pool, q, i % 7 ? 64 : 3000));
		if (p == NULL || q == NULL)
			return false;
		if (i % 2) {
			INSIDE(pool_set_free(t->with_set, p));
			INSIDE(pool_free(t->with_pool, q));
		} else {
			w->with_set_blocks[i / 2] = p;
			w->with_pool_blocks[i / 2] = q;
		}
	}
	return true;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	return allocate_and_free(w) ? w : NULL;
}

/* The main thread's own calls: the rest of the API's allocation calls. */
static void calls_on_this_thread(const struct targets *t)
{
	void *blocks[64];
	char *s;
	size_t n, bytes, usable;
	pool_stats_t st;
	int rc;

	for (unsigned i = 0; i < 64; i++) {
		INSIDE(blocks[i] = pool_set_malloc(t->set, set_size(i)));
		if (blocks[i] == NULL)
			broken("pool_set_malloc() failed", t->mode);
	}
	/* Up and down the classes (never out of the set: its fallback is
	 * the C library's, whose calls would be counted). */
	INSIDE(blocks[0] = pool_set_realloc(t->set, blocks[0], 3000));
	INSIDE(blocks[0] = pool_set_realloc(t->set, blocks[0], 20));
	INSIDE(blocks[1] = pool_set_realloc(t->set, blocks[1], 4096));
	INSIDE(s = pool_set_strdup(t->set, "no malloc() inside"));
	INSIDE(usable = pool_set_usable_size(t->set, s));
	INSIDE(n = pool_set_class_size(t->set, 100));
	if (blocks[0] == NULL || blocks[1] == NULL || s == NULL ||
	    usable < sizeof "no malloc() inside" || n < 100)
		broken("a set call failed", t->mode);
	INSIDE(pool_set_free(t->set, s));
	for (unsigned i = 0; i < 64; i++)
		INSIDE(pool_set_free(t->set, blocks[i]));

	INSIDE(n = pool_malloc_bulk(t->pool, 64, 64, blocks));
	if (n != 64)
		broken("pool_malloc_bulk() failed", t->mode);
	INSIDE(usable = pool_usable_size(t->pool, blocks[0]));
	INSIDE(pool_free_bulk(t->pool, 64, blocks));
	INSIDE(s = pool_strdup(t->pool, "pool"));
	INSIDE(s = pool_realloc(t->pool, s, 10));
	INSIDE(pool_free(t->pool, s));

	/* A misuse, reported to an installed handler. */
	INSIDE(s = pool_malloc(t->pool, 64));
	INSIDE(pool_set_error_handler(handler_even, NULL));
	INSIDE(pool_free(t->pool, s));
	INSIDE(pool_free(t->pool, s));
	INSIDE(pool_set_error_handler(NULL, NULL));
	if (atomic_load(&reports) == 0)
		broken("the double free was not reported", t->mode);

	INSIDE(bytes = pool_set_trim(t->set));
	INSIDE(bytes += pool_trim(t->pool));
	INSIDE(rc = pool_stats(t->pool, &st));
	INSIDE(rc |= pool_set_stats(t->set, 0, &st));
	(void)bytes;
	if (rc != 0)
		broken("pool_stats() failed", t->mode);
}

static void join_worker(pthread_t thread, int mode)
{
	void *done;
	if (pthread_join(thread, &done) != 0 || done == NULL)
		broken("a thread's allocation failed", mode);
}

/* Everything, for one mode. */
static void run_mode(int mode)
{
	struct targets t = {.mode = mode};
	static struct worker workers[THREADS];
	pthread_t threads[THREADS];

	atomic_store(&current_step, STEP_INIT);
	INSIDE(t.set = pool_set_init(16, 4096, (size_t)8 << 20, mode));
	INSIDE(t.pool = pool_init(64, 65536, mode));
	if (t.set == NULL || t.pool == NULL)
		broken("pool_set_init() or pool_init() failed", mode);

	atomic_store(&current_step, STEP_INIT_WITH);
	/* Small: their requests overflow into the fallback. */
	INSIDE(t.with_set = pool_set_init_with(16, 256, (size_t)16 << 10, mode,
	                                       &outside_fallback));
	INSIDE(t.with_pool = pool_init_with(64, 16, mode, &outside_fallback));
	if (t.with_set == NULL || t.with_pool == NULL)
		broken("pool_set_init_with() or pool_init_with() failed", mode);

	atomic_store(&current_step, STEP_CALLS);
	calls_on_this_thread(&t);

	atomic_store(&current_step, STEP_THREADS);
	/* POOL_SINGLE is for one thread at a time: its workers run one
	 * after the other (each still makes its own thread's state). */
	bool one_at_a_time = mode == POOL_SINGLE;
	for (unsigned i = 0; i < THREADS; i++) {
		workers[i] = (struct worker){.t = &t, .seed = i * 5};
		if (pthread_create(&threads[i], NULL, worker_main,
		                   &workers[i]) != 0)
			broken("pthread_create() failed", mode);
		if (one_at_a_time)
			join_worker(threads[i], mode);
	}
	for (unsigned i = 0; i < THREADS && !one_at_a_time; i++)
		join_worker(threads[i], mode);

	atomic_store(&current_step, STEP_REMOTE_FREES);
	for (unsigned i = 0; i < THREADS; i++)
		for (unsigned k = 0; k < PER_THREAD / 2; k++) {
			INSIDE(pool_set_free(t.set, workers[i].set_blocks[k]));
			INSIDE(pool_free(t.pool, workers[i].pool_blocks[k]));
			INSIDE(pool_set_free(t.with_set,
			                     workers[i].with_set_blocks[k]));
			INSIDE(pool_free(t.with_pool,
			                 workers[i].with_pool_blocks[k]));
		}

	/* Requests the C library's fallback would have served were the
	 * program's own malloc() calls, counted as the library's: there
	 * must be none. */
	pool_stats_t set_total, pool_st;
	if (pool_set_stats(t.set, 0, &set_total) != 0 ||
	    pool_stats(t.pool, &pool_st) != 0)
		broken("pool_stats() failed", mode);
	if (set_total.in_use != 0 || pool_st.in_use != 0)
		broken("blocks still in use", mode);
	if (set_total.fallback_allocs != 0 || pool_st.fallback_allocs != 0)
		broken("a request that should fit went to the C library", mode);

	atomic_store(&current_step, STEP_HANDLERS);
	static int args[10];
	for (unsigned round = 0; round < 5; round++)
		for (unsigned i = 0; i < 20; i++)
			INSIDE(pool_set_error_handler(
			    i % 2 ? handler_odd : handler_even, &args[i / 2]));
	pool_error_handler_fn *fn;
	void *arg;
	INSIDE(pool_get_error_handler(&fn, &arg));
	if (fn != handler_odd || arg != &args[9])
		broken("pool_get_error_handler() tells another pair", mode);
	INSIDE(pool_set_error_handler(NULL, NULL));

	atomic_store(&current_step, STEP_DESTROY);
	INSIDE(pool_set_destroy(t.with_set));
	INSIDE(pool_destroy(t.with_pool));
	INSIDE(pool_set_destroy(t.set));
	INSIDE(pool_destroy(t.pool));
	atomic_store(&current_step, STEP_OUTSIDE);
}

int main(void)
{
	static const int modes[] = {POOL_SINGLE, POOL_LOCKED, POOL_PER_THREAD};

	/* The trace and the debug options are files and settings of their
	 * own; this is about the library's state. */
	unsetenv("SHIFTPOOL_TRACE");
	unsetenv("SHIFTPOOL_DEBUG");

	for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
		run_mode(modes[m]);

	unsigned long total = 0;
	for (int s = STEP_OUTSIDE + 1; s < STEP_COUNT; s++) {
		unsigned long step_total = 0;
		for (int f = 0; f < FN_COUNT; f++)
			step_total += atomic_load(&counted[s][f]);
		printf("%-40s %lu calls\n", step_names[s], step_total);
		for (int f = 0; f < FN_COUNT; f++)
			if (atomic_load(&counted[s][f]) != 0)
				printf("    %-16s %lu\n", function_names[f],
				       atomic_load(&counted[s][f]));
		total += step_total;
	}
	printf("fallback calls outside the count: %lu\n",
	       atomic_load(&fallback_calls));
	if (total != 0) {
		printf("FAIL: the library called the C library's allocator "
		       "%lu times for itself\n",
		       total);
		return 1;
	}
	/* Else the exclusion of the fallback's calls went untried. */
	if (atomic_load(&fallback_calls) == 0)
		broken("the fallback of pool_init_with() was never used", 0);
	puts("no-malloc: no allocator call inside the library, every mode");
	return 0;
}

#endif
