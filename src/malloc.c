/*
 * libshiftpool-malloc serves the malloc family of the process from one
 * pool set.
 *
 * Whether it is preloaded (LD_PRELOAD) or linked, this library defines
 * malloc(), calloc(), realloc(), reallocarray(), free(), posix_memalign(),
 * aligned_alloc(), memalign(), valloc(), pvalloc(), malloc_usable_size()
 * and malloc_trim(), and serves them from one pool set.  What the set
 * does not serve (sizes above its largest class, requests to a class that
 * ran out, and alignments above a page) goes to the C library's own
 * allocator, which glibc exports as __libc_malloc() and its kin.  The set
 * is created with those functions as its fallback, so it sends there
 * itself the requests that its classes cannot serve; this file sends the
 * alignments above a page there directly.  Either way, their pointers come
 * back through the same pool_set_free().
 *
 * The set is made on the first call, from the settings in the environment
 * variable SHIFTPOOL_MALLOC (see shiftpool-malloc(7)).  The library never
 * calls malloc() for its own state, so making the set recurses into this
 * file only if something below the library does (the C library, say).
 * Such a call comes from the thread that is making the set, and the C
 * library serves it directly.  Every other thread waits for the set.
 * free() and its kin send a pointer to the set only once the set exists:
 * before that, no pointer can be the set's.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shiftpool.h"

/* The C library's allocator under its own names.  glibc exports these so
 * that a replacement malloc can reach the original. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_memalign(size_t alignment, size_t size);

#define EXPORT      __attribute__((visibility("default")))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* The alignment that malloc() promises for every allocation, and so for
 * every block of a class. */
#define MIN_ALIGN ((size_t)16)

/* ------------------------------------------------------------ settings */

/* The defaults need no configuration and are safe with threads: classes
 * from 16 B to 32 KiB, in POOL_PER_THREAD mode (with per-thread caches),
 * and 1 GiB of address space per class.  That address space is reserved,
 * not committed, so no class runs out before the machine does. */
#define DEFAULT_MIN   ((size_t)16)
#define DEFAULT_MAX   ((size_t)32768)
#define DEFAULT_BYTES ((size_t)1 << 30)
/* When the default reservation is refused (because of a limit on address
 * space, or strict overcommit), smaller sets are tried, down to this many
 * bytes per class. */
#define SMALLEST_BYTES ((size_t)16 << 20)
/* What the set does not serve goes to the C library's heap, which then
 * holds nothing else: every free of a block at its top gives pages back
 * under glibc's default trim threshold (128 KiB), and the next request
 * faults them in again.  So the heap keeps up to this much free at its
 * top, and serves requests below a quarter of it without mmap() (see
 * heap= in shiftpool-malloc(7)). */
#define DEFAULT_HEAP ((size_t)4 << 20)
/* glibc refuses an mmap threshold above 32 MiB on 64-bit machines. */
#define MAX_MMAP_THRESHOLD ((size_t)32 << 20)

struct settings {
	int mode;
	size_t min_block;
	size_t max_block;
	size_t bytes;
	bool bytes_given;
	/* the C library heap's trim threshold, 0 for glibc's own */
	size_t heap;
	/* Where the statistics go at exit: nowhere, to stderr, or to a
	 * file, whose name is in path[] with "%p" standing for the process
	 * ID. */
	enum { STATS_NONE, STATS_STDERR, STATS_FILE } stats;
	int format;
	char path[4096];
};

static struct settings settings;

/* Writes one line on stderr, without calling malloc(). */
static void say(const char *what, const char *detail, size_t detail_len)
{
	static const char prefix[] = "shiftpool-malloc: ";
	ssize_t ignored = write(STDERR_FILENO, prefix, sizeof prefix - 1);
	ignored = write(STDERR_FILENO, what, strlen(what));
	if (detail != NULL) {
		ignored = write(STDERR_FILENO, " '", 2);
		ignored = write(STDERR_FILENO, detail, detail_len);
		ignored = write(STDERR_FILENO, "'", 1);
	}
	ignored = write(STDERR_FILENO, "\n", 1);
	(void)ignored;
}

static bool power_of_two(size_t n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

static bool token_is(const char *token, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(token, word, len) == 0;
}

/* Parses a size: decimal digits, then an optional K, M, G or T (powers of
 * 1024).  Returns false for anything else, for 0, and on overflow. */
static bool parse_size(const char *text, size_t len, size_t *out)
{
	size_t value = 0, i = 0;
	for (; i < len && text[i] >= '0' && text[i] <= '9'; i++)
		if (__builtin_mul_overflow(value, 10, &value) ||
		    __builtin_add_overflow(value, (size_t)(text[i] - '0'),
		                           &value))
			return false;
	if (i == 0)
		return false;
	unsigned shift = 0;
	if (i + 1 == len) {
		static const char units[] = "KMGT";
		const char *unit = memchr(units, text[i] & ~0x20, 4);
		if (unit == NULL)
			return false;
		shift = 10 * (unsigned)(unit - units + 1);
	} else if (i != len) {
		return false;
	}
	if (value == 0 || value > (SIZE_MAX >> shift))
		return false;
	*out = value << shift;
	return true;
}

/* Parses one "key=value" item of SHIFTPOOL_MALLOC into s.  Returns false
 * when it is not an item that this library knows. */
static bool parse_setting(struct settings *s, const char *item, size_t len)
{
	const char *eq = memchr(item, '=', len);
	if (eq == NULL)
		return false;
	size_t key_len = (size_t)(eq - item);
	const char *value = eq + 1;
	size_t value_len = len - key_len - 1;

	if (token_is(item, key_len, "mode")) {
		if (token_is(value, value_len, "per-thread"))
			s->mode = POOL_PER_THREAD;
		else if (token_is(value, value_len, "locked"))
			s->mode = POOL_LOCKED;
		else if (token_is(value, value_len, "single"))
			s->mode = POOL_SINGLE;
		else
			return false;
		return true;
	}
	if (token_is(item, key_len, "min"))
		return parse_size(value, value_len, &s->min_block);
	if (token_is(item, key_len, "max"))
		return parse_size(value, value_len, &s->max_block);
	if (token_is(item, key_len, "bytes")) {
		s->bytes_given = true;
		return parse_size(value, value_len, &s->bytes);
	}
	if (token_is(item, key_len, "heap")) {
		if (token_is(value, value_len, "glibc")) {
			s->heap = 0;
			return true;
		}
		return parse_size(value, value_len, &s->heap) &&
		       s->heap <= INT_MAX;
	}
	if (token_is(item, key_len, "format")) {
		if (token_is(value, value_len, "text"))
			s->format = POOL_STATS_TEXT;
		else if (token_is(value, value_len, "json"))
			s->format = POOL_STATS_JSON;
		else
			return false;
		return true;
	}
	if (token_is(item, key_len, "stats")) {
		if (token_is(value, value_len, "stderr")) {
			s->stats = STATS_STDERR;
			return true;
		}
		if (value_len == 0 || value_len >= sizeof s->path)
			return false;
		memcpy(s->path, value, value_len);
		s->path[value_len] = '\0';
		s->stats = STATS_FILE;
		return true;
	}
	return false;
}

/*
 * Reads the settings: the defaults, then the comma-separated "key=value"
 * items of SHIFTPOOL_MALLOC, which is read with secure_getenv() (so a
 * set-user-ID program keeps the defaults).  Anything that this library
 * does not understand is reported on stderr, and the defaults are then
 * kept whole: a mistyped setting must not quietly run another
 * configuration.  The text is read in place, without malloc().
 */
static void settings_read(struct settings *s)
{
	*s = (struct settings){.mode = POOL_PER_THREAD,
	                       .min_block = DEFAULT_MIN,
	                       .max_block = DEFAULT_MAX,
	                       .bytes = DEFAULT_BYTES,
	                       .heap = DEFAULT_HEAP,
	                       .format = POOL_STATS_TEXT};
	const char *text = secure_getenv("SHIFTPOOL_MALLOC");
	if (text == NULL)
		return;
	struct settings read = *s;
	for (const char *at = text; *at != '\0';) {
		const char *end = strchr(at, ',');
		size_t len = end != NULL ? (size_t)(end - at) : strlen(at);
		if (len > 0 && !parse_setting(&read, at, len)) {
			say("SHIFTPOOL_MALLOC: not understood, using the "
			    "defaults:",
			    at, len);
			return;
		}
		at += len + (end != NULL);
	}
	/* The range of classes is checked here as pool_set_init() would
	 * check it, so that a mistake in it is reported like any other. */
	if (!power_of_two(read.min_block) || !power_of_two(read.max_block) ||
	    read.min_block < POOL_MIN_BLOCK_SIZE ||
	    read.min_block > read.max_block ||
	    read.max_block > POOL_MAX_BLOCK_SIZE) {
		say("SHIFTPOOL_MALLOC: min and max must be powers of two, "
		    "16 <= min <= max <= 1G; using the defaults:",
		    text, strlen(text));
		return;
	}
	*s = read;
}

/* ------------------------------------------------------------ fallback */

/* glibc's malloc_usable_size() and malloc_trim() have no second name, so
 * they are looked up in the objects loaded after this library, and this
 * library's own are never taken for them. */
static _Atomic(size_t (*)(void *)) libc_usable_size_fn;
static _Atomic(int (*)(size_t)) libc_trim_fn;

EXPORT size_t malloc_usable_size(void *ptr);
EXPORT int malloc_trim(size_t pad);

/* The next definition of name in the search order (the C library's), or
 * NULL when there is none but self.  dlsym() with RTLD_NEXT allocates
 * nothing when it succeeds. */
static void *libc_next(const char *name, void *self)
{
	void *sym = dlsym(RTLD_NEXT, name);
	return sym == self ? NULL : sym;
}

static size_t (*libc_usable_size_resolve(void))(void *)
{
	size_t (*fn)(void *) =
	    atomic_load_explicit(&libc_usable_size_fn, memory_order_acquire);
	if (likely(fn != NULL))
		return fn;
	fn = (size_t(*)(void *))libc_next("malloc_usable_size",
	                                  (void *)malloc_usable_size);
	atomic_store_explicit(&libc_usable_size_fn, fn, memory_order_release);
	return fn;
}

static int (*libc_trim_resolve(void))(size_t)
{
	int (*fn)(size_t) =
	    atomic_load_explicit(&libc_trim_fn, memory_order_acquire);
	if (likely(fn != NULL))
		return fn;
	fn = (int (*)(size_t))libc_next("malloc_trim", (void *)malloc_trim);
	atomic_store_explicit(&libc_trim_fn, fn, memory_order_release);
	return fn;
}

static size_t libc_usable_size(const void *ptr)
{
	size_t (*fn)(void *) = libc_usable_size_resolve();
	return fn != NULL ? fn((void *)ptr) : 0;
}

static void *fallback_malloc(size_t size, void *arg)
{
	(void)arg;
	return __libc_malloc(size);
}

static void *fallback_calloc(size_t nmemb, size_t size, void *arg)
{
	(void)arg;
	return __libc_calloc(nmemb, size);
}

static void *fallback_realloc(void *ptr, size_t size, void *arg)
{
	(void)arg;
	return __libc_realloc(ptr, size);
}

static void fallback_free(void *ptr, void *arg)
{
	(void)arg;
	__libc_free(ptr);
}

static size_t fallback_usable_size(const void *ptr, void *arg)
{
	(void)arg;
	return libc_usable_size(ptr);
}

static const pool_fallback_t libc_fallback = {
    .malloc = fallback_malloc,
    .calloc = fallback_calloc,
    .realloc = fallback_realloc,
    .free = fallback_free,
    .usable_size = fallback_usable_size,
    .arg = NULL,
};

/* ------------------------------------------------------------ the set */

enum { SET_NONE, SET_MAKING, SET_READY, SET_NEVER };

static atomic_int set_state = SET_NONE;
static pool_set_t *the_set;
static size_t page_size = 4096;
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
/* The thread that is making the set (its pthread_self()), while it makes
 * it. */
static _Atomic uintptr_t set_maker;
/* The allocations that this file sent to the C library directly: those
 * made while the set was being made, and aligned ones that no class
 * served (alignments beyond a page, say). */
static atomic_ulong direct_allocs;

static size_t page_now(void)
{
	long page = sysconf(_SC_PAGESIZE);
	return page > 0 ? (size_t)page : 4096;
}

/* Whether the environment sets glibc's thresholds itself, which then
 * stand. */
static bool heap_configured(void)
{
	const char *tunables = secure_getenv("GLIBC_TUNABLES");
	return secure_getenv("MALLOC_TRIM_THRESHOLD_") != NULL ||
	       secure_getenv("MALLOC_MMAP_THRESHOLD_") != NULL ||
	       (tunables != NULL &&
	        (strstr(tunables, "glibc.malloc.trim_threshold") != NULL ||
	         strstr(tunables, "glibc.malloc.mmap_threshold") != NULL));
}

/* The C library heap's thresholds, for what the set does not serve. */
static void heap_tune(size_t heap)
{
	if (heap == 0 || heap_configured())
		return;
	size_t mmap_at =
	    heap / 4 < MAX_MMAP_THRESHOLD ? heap / 4 : MAX_MMAP_THRESHOLD;
	mallopt(M_TRIM_THRESHOLD, (int)heap);
	if (mmap_at > 0)
		mallopt(M_MMAP_THRESHOLD, (int)mmap_at);
}

static pool_set_t *set_make(void)
{
	settings_read(&settings);
	page_size = page_now();
	heap_tune(settings.heap);

	size_t bytes = settings.bytes;
	for (;;) {
		pool_set_t *set =
		    pool_set_init_with(settings.min_block, settings.max_block,
		                       bytes, settings.mode, &libc_fallback);
		if (set != NULL)
			return set;
		/* The default reservation may be more than a limit on
		 * address space allows, so smaller ones are tried. */
		if (errno != ENOMEM || settings.bytes_given ||
		    bytes / 2 < SMALLEST_BYTES)
			break;
		bytes /= 2;
	}
	say(errno == EINVAL ? "the pool set was refused (EINVAL), the C "
	                      "library serves every allocation"
	                    : "no room for the pool set, the C library "
	                      "serves every allocation",
	    NULL, 0);
	return NULL;
}

/* Returns the set, which is made on the first call.  Returns NULL while
 * this thread is making it (the C library then serves the thread's
 * calls), or when the set could not be made. */
static __attribute__((noinline)) pool_set_t *set_start(void)
{
	int state = atomic_load_explicit(&set_state, memory_order_acquire);
	if (state == SET_MAKING &&
	    atomic_load_explicit(&set_maker, memory_order_relaxed) ==
	        (uintptr_t)pthread_self())
		return NULL;
	if (state == SET_NEVER)
		return NULL;

	pthread_mutex_lock(&set_lock);
	if (atomic_load_explicit(&set_state, memory_order_relaxed) ==
	    SET_NONE) {
		atomic_store_explicit(&set_maker, (uintptr_t)pthread_self(),
		                      memory_order_relaxed);
		atomic_store_explicit(&set_state, SET_MAKING,
		                      memory_order_relaxed);
		int saved = errno;
		the_set = set_make();
		errno = saved;
		atomic_store_explicit(&set_maker, 0, memory_order_relaxed);
		atomic_store_explicit(&set_state,
		                      the_set != NULL ? SET_READY : SET_NEVER,
		                      memory_order_release);
	}
	pthread_mutex_unlock(&set_lock);
	return the_set;
}

static inline pool_set_t *set_get(void)
{
	if (likely(atomic_load_explicit(&set_state, memory_order_acquire) ==
	           SET_READY))
		return the_set;
	return set_start();
}

/* Returns the set if it exists, without making it.  A pointer that is
 * given back can belong only to a set that exists. */
static inline pool_set_t *set_if_ready(void)
{
	if (likely(atomic_load_explicit(&set_state, memory_order_acquire) ==
	           SET_READY))
		return the_set;
	return NULL;
}

/* Counts an allocation made directly by the C library.  It is counted
 * only while there may be statistics to print: without a set, every call
 * goes to the C library, and nothing is printed. */
static void count_direct(void)
{
	if (atomic_load_explicit(&set_state, memory_order_relaxed) != SET_NEVER)
		atomic_fetch_add_explicit(&direct_allocs, 1,
		                          memory_order_relaxed);
}

/* ------------------------------------------------------------ the calls */

EXPORT void *malloc(size_t size)
{
	pool_set_t *set = set_get();
	if (likely(set != NULL))
		return pool_set_malloc(set, size);
	count_direct();
	return __libc_malloc(size);
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
	pool_set_t *set = set_get();
	if (likely(set != NULL))
		return pool_set_calloc(set, nmemb, size);
	count_direct();
	return __libc_calloc(nmemb, size);
}

/* free() leaves errno alone, as POSIX asks and glibc does: pool_set_free()
 * changes none, so only the C library's free is wrapped. */
EXPORT void free(void *ptr)
{
	if (ptr == NULL)
		return;
	pool_set_t *set = set_if_ready();
	if (likely(set != NULL)) {
		pool_set_free(set, ptr);
		return;
	}
	int saved = errno;
	__libc_free(ptr);
	errno = saved;
}

EXPORT void *realloc(void *ptr, size_t size)
{
	if (ptr == NULL)
		return malloc(size);
	pool_set_t *set = set_if_ready();
	if (likely(set != NULL))
		return pool_set_realloc(set, ptr, size);
	/* There is no set yet, so the pointer is the C library's. */
	return __libc_realloc(ptr, size);
}

EXPORT void *reallocarray(void *ptr, size_t nmemb, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(nmemb, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(ptr, total);
}

/*
 * Returns size bytes aligned to alignment, a power of two.  A block of a
 * class of 2^k bytes is aligned to 2^k, up to the page size, so for an
 * alignment up to a page, the class that fits the larger of size and
 * alignment serves the request.  Its block is checked all the same,
 * because an exhausted class hands out the fallback's memory.  Larger
 * alignments, and sizes that no class holds, are served by the C library.
 */
static void *aligned_get(size_t alignment, size_t size)
{
	if (alignment <= MIN_ALIGN)
		return malloc(size);
	pool_set_t *set = set_get();
	if (set != NULL && alignment <= page_size) {
		size_t want = size > alignment ? size : alignment;
		if (pool_set_class_size(set, want) != 0) {
			void *ptr = pool_set_malloc(set, want);
			if (ptr != NULL &&
			    ((uintptr_t)ptr & (alignment - 1)) == 0)
				return ptr;
			if (ptr != NULL)
				pool_set_free(set, ptr);
		}
	}
	count_direct();
	return __libc_memalign(alignment, size);
}

/* memalign() as glibc has it: an alignment that is not a power of two is
 * rounded up to one, and an alignment beyond half the address space fails
 * with EINVAL. */
EXPORT void *memalign(size_t alignment, size_t size)
{
	if (alignment > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (alignment & (alignment - 1))
		alignment = (size_t)1 << (64 - __builtin_clzll(alignment));
	return aligned_get(alignment, size);
}

EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
	return memalign(alignment, size);
}

EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
	if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0)
		return EINVAL;
	int saved = errno;
	void *ptr = aligned_get(alignment, size);
	if (ptr == NULL) {
		errno = saved;
		return ENOMEM;
	}
	*out = ptr;
	return 0;
}

EXPORT void *valloc(size_t size)
{
	return aligned_get(page_now(), size);
}

/* valloc() of the size rounded up to whole pages.  A size of 0 stays 0,
 * as in glibc. */
EXPORT void *pvalloc(size_t size)
{
	size_t page = page_now();
	if (size > SIZE_MAX - (page - 1)) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned_get(page, (size + page - 1) & ~(page - 1));
}

EXPORT size_t malloc_usable_size(void *ptr)
{
	if (ptr == NULL)
		return 0;
	pool_set_t *set = set_if_ready();
	if (likely(set != NULL))
		return pool_set_usable_size(set, ptr);
	return libc_usable_size(ptr);
}

/*
 * Gives back the pages of the set's free blocks (pool_set_trim(): in a
 * POOL_PER_THREAD set the calling thread gives up its spans first, so a
 * thread about to go idle makes the blocks others free into them every
 * thread's), then the C library's heap's, as glibc's malloc_trim() does
 * with pad.  Returns 1 when either gave memory back, else 0.
 */
EXPORT int malloc_trim(size_t pad)
{
	size_t bytes = 0;
	pool_set_t *set = set_if_ready();
	if (set != NULL)
		bytes = pool_set_trim(set);
	int (*fn)(size_t) = libc_trim_resolve();
	int heap = fn != NULL ? fn(pad) : 0;
	return bytes > 0 || heap != 0;
}

/* ------------------------------------------------------------ load, exit */

/* Looks up glibc's malloc_usable_size() and malloc_trim() while the
 * program starts, so that no later call has to. */
__attribute__((constructor)) static void malloc_load(void)
{
	(void)libc_usable_size_resolve();
	(void)libc_trim_resolve();
}

/* Writes the name of the statistics file into out: "%p" becomes the
 * process ID, and "%%" becomes a single %. */
static void stats_path(char *out, size_t size)
{
	size_t n = 0;
	for (const char *at = settings.path; *at != '\0' && n + 1 < size;
	     at++) {
		if (at[0] == '%' && at[1] == 'p') {
			int len =
			    snprintf(out + n, size - n, "%ld", (long)getpid());
			n += len > 0 ? (size_t)len : 0;
			at++;
			if (n >= size)
				n = size - 1;
			continue;
		}
		if (at[0] == '%' && at[1] == '%')
			at++;
		out[n++] = *at;
	}
	out[n] = '\0';
}

/*
 * Writes the set's statistics at exit, when the settings ask for them: a
 * line naming the process and telling how many allocations went to the C
 * library directly, then the set's own report.  In JSON the report is one
 * object per process, on one line:
 * {"kind":"malloc","pid":N,"direct":N,"set":{...}}.  The whole report is
 * written with one write(), so that processes sharing a file (a pipeline,
 * say) never mix their lines.  The set is never destroyed, because later
 * destructors may still call free().
 */
__attribute__((destructor)) static void malloc_unload(void)
{
	static char set_text[1 << 16], report[(1 << 16) + 256];

	if (settings.stats == STATS_NONE ||
	    atomic_load_explicit(&set_state, memory_order_acquire) != SET_READY)
		return;
	FILE *memory = fmemopen(set_text, sizeof set_text, "w");
	if (memory == NULL)
		return;
	int failed = pool_set_stats_print(the_set, memory, settings.format);
	failed |= fclose(memory);
	set_text[sizeof set_text - 1] = '\0';
	size_t len = strlen(set_text);
	if (failed || len == 0)
		return;
	if (settings.format == POOL_STATS_JSON && set_text[len - 1] == '\n')
		set_text[len - 1] = '\0';

	unsigned long direct =
	    atomic_load_explicit(&direct_allocs, memory_order_relaxed);
	int n = settings.format == POOL_STATS_JSON
	            ? snprintf(report, sizeof report,
	                       "{\"kind\":\"malloc\",\"pid\":%ld,"
	                       "\"direct\":%lu,\"set\":%s}\n",
	                       (long)getpid(), direct, set_text)
	            : snprintf(report, sizeof report,
	                       "shiftpool-malloc: pid %ld, %lu allocations "
	                       "made directly by the C library\n%s",
	                       (long)getpid(), direct, set_text);
	if (n <= 0 || (size_t)n >= sizeof report)
		return;

	int fd = STDERR_FILENO;
	char path[sizeof settings.path + 32];
	if (settings.stats == STATS_FILE) {
		stats_path(path, sizeof path);
		fd =
		    open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0) {
			say("cannot write the statistics to", path,
			    strlen(path));
			return;
		}
	}
	if (write(fd, report, (size_t)n) != n)
		say("the statistics were not written whole", NULL, 0);
	if (fd != STDERR_FILENO)
		close(fd);
}
