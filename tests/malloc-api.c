/*
 * The malloc family's edges, checked the same way on the C library's
 * allocator and under libshiftpool-malloc.so (tests/malloc-api.sh runs it
 * both ways, and tests/malloc-linked links it with the library): every
 * aligned call gives memory of the alignment asked for, usable for the
 * size asked for; reallocarray() refuses an overflowing product;
 * malloc_usable_size() covers the request and survives realloc(); free()
 * leaves errno alone; the rejected arguments fail as glibc's do.
 *
 * With the argument "set", it also checks that the set serves the process:
 * a 17-byte request has the usable size of its class (32), a size above
 * the largest class and an alignment above a page are served (by the C
 * library) and freed through the same free(), and malloc_trim() gives
 * back the pages of the set's free blocks.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int failures;

/* Sizes the compiler cannot see, so that it neither warns about the
 * overflowing products on purpose nor folds the calls. */
static volatile size_t huge_half = SIZE_MAX / 2;
static volatile size_t huge_quarter = SIZE_MAX / 4;
static volatile size_t huge_eighth = SIZE_MAX / 8;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
			        __LINE__, #cond);                              \
			failures++;                                            \
		}                                                              \
	} while (0)

static int aligned(const void *ptr, size_t alignment)
{
	return ((uintptr_t)ptr & (alignment - 1)) == 0;
}

/* Fills the whole request, so that a block too small for it shows (under
 * the set the next block's contents, checked below, would change). */
static void fill(void *ptr, size_t size, int byte)
{
	memset(ptr, byte, size);
}

static int all(const void *ptr, size_t size, int byte)
{
	const unsigned char *p = ptr;
	for (size_t i = 0; i < size; i++)
		if (p[i] != (unsigned char)byte)
			return 0;
	return 1;
}

static void check_aligned_calls(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	static const size_t alignments[] = {
	    8, 16, 32, 64, 128, 256, 1024, 4096, 8192, 65536, 1 << 20};
	static const size_t sizes[] = {0,   1,    15,   16,    17,
	                               100, 4096, 5000, 40000, 1 << 20};
	for (size_t a = 0; a < sizeof alignments / sizeof *alignments; a++) {
		size_t al = alignments[a];
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
			size_t size = sizes[s];
			void *p = NULL;
			CHECK(posix_memalign(&p, al, size) == 0);
			CHECK(p != NULL && aligned(p, al));
			CHECK(malloc_usable_size(p) >= size);
			void *q = memalign(al, size);
			CHECK(q != NULL && aligned(q, al));
			CHECK(malloc_usable_size(q) >= size);
			/* aligned_alloc() with a multiple of the alignment. */
			size_t multiple = (size + al - 1) / al * al;
			void *r = aligned_alloc(al, multiple);
			CHECK(r != NULL && aligned(r, al));
			if (p != NULL && q != NULL && r != NULL) {
				fill(p, size, 0x11);
				fill(q, size, 0x22);
				fill(r, multiple, 0x33);
				CHECK(all(p, size, 0x11));
				CHECK(all(q, size, 0x22));
				CHECK(all(r, multiple, 0x33));
			}
			/* realloc() of an aligned allocation keeps the
			 * contents (not the alignment). */
			if (q != NULL) {
				void *grown = realloc(q, size + 100);
				CHECK(grown != NULL);
				if (grown != NULL) {
					CHECK(all(grown, size, 0x22));
					q = grown;
				}
			}
			free(p);
			free(q);
			free(r);
		}
	}

	void *v = valloc(10);
	CHECK(v != NULL && aligned(v, page));
	CHECK(malloc_usable_size(v) >= 10);
	void *pv = pvalloc(page + 1);
	CHECK(pv != NULL && aligned(pv, page));
	CHECK(malloc_usable_size(pv) >= 2 * page);
	void *pv0 = pvalloc(0);
	CHECK(pv0 != NULL && aligned(pv0, page));
	free(v);
	free(pv);
	free(pv0);

	/* Rejected arguments: posix_memalign() returns EINVAL and leaves
	 * its output alone. */
	void *untouched = &failures;
	CHECK(posix_memalign(&untouched, 24, 10) == EINVAL);
	CHECK(posix_memalign(&untouched, 4, 10) == EINVAL);
	CHECK(untouched == &failures);
	/* An alignment that is no power of two is rounded up by memalign()
	 * (glibc's behaviour). */
	void *m = memalign(48, 100);
	CHECK(m != NULL && aligned(m, 64));
	free(m);
	errno = 0;
	CHECK(memalign(SIZE_MAX / 2 + 2, 10) == NULL && errno == EINVAL);
}

static void check_reallocarray(void)
{
	errno = 0;
	CHECK(reallocarray(NULL, huge_half, 3) == NULL && errno == ENOMEM);
	int *a = reallocarray(NULL, 10, sizeof *a);
	CHECK(a != NULL);
	if (a == NULL)
		return;
	for (int i = 0; i < 10; i++)
		a[i] = i * 7;
	int *b = reallocarray(a, 5000, sizeof *b);
	CHECK(b != NULL);
	if (b == NULL) {
		free(a);
		return;
	}
	for (int i = 0; i < 10; i++)
		CHECK(b[i] == i * 7);
	/* A failed reallocarray() leaves the old allocation whole (the
	 * compiler is told so: it takes any reallocarray() to end b). */
	errno = 0;
	int *volatile kept = b;
	CHECK(reallocarray(b, huge_quarter, 8) == NULL && errno == ENOMEM);
	CHECK(kept[9] == 63);
	free(kept);
}

static void check_usable_and_realloc(void)
{
	CHECK(malloc_usable_size(NULL) == 0);
	size_t sizes[] = {0,    1,    16,    17,    31,     33,     1000,
	                  4096, 4097, 32768, 32769, 100000, 5 << 20};
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		size_t size = sizes[i];
		unsigned char *p = malloc(size);
		CHECK(p != NULL);
		if (p == NULL)
			continue;
		size_t usable = malloc_usable_size(p);
		CHECK(usable >= size);
		/* Every usable byte may be written. */
		memset(p, 0x5a, usable);
		/* Grow and shrink through the classes and beyond, the
		 * common prefix kept. */
		size_t steps[] = {size + 1, 3 * size + 40, 70000, 20, 1};
		size_t kept = usable;
		for (size_t s = 0; s < sizeof steps / sizeof *steps; s++) {
			unsigned char *q = realloc(p, steps[s]);
			CHECK(q != NULL);
			if (q == NULL)
				break;
			size_t common = kept < steps[s] ? kept : steps[s];
			CHECK(all(q, common, 0x5a));
			size_t now = malloc_usable_size(q);
			CHECK(now >= steps[s]);
			memset(q, 0x5a, now);
			kept = now;
			p = q;
		}
		free(p);
	}
	void *z = calloc(1000, 40);
	CHECK(z != NULL && all(z, 40000, 0));
	free(z);
	errno = 0;
	CHECK(calloc(huge_eighth, 16) == NULL && errno == ENOMEM);
	/* realloc(p, 0) frees p and returns NULL, as glibc's does. */
	void *gone = malloc(10);
	CHECK(realloc(gone, 0) == NULL);
	/* realloc(NULL, n) is malloc(n). */
	void *fresh = realloc(NULL, 24);
	CHECK(fresh != NULL && malloc_usable_size(fresh) >= 24);
	free(fresh);
	/* free() keeps errno. */
	void *kept_errno = malloc(100);
	errno = 1234;
	free(kept_errno);
	CHECK(errno == 1234);
	errno = 4321;
	free(malloc(1 << 20));
	CHECK(errno == 4321);
}

/* Under the set: a class block's usable size is its class's. */
static void check_set_serves(void)
{
	void *p = malloc(17);
	CHECK(p != NULL && malloc_usable_size(p) == 32);
	void *q = calloc(3, 100);
	CHECK(q != NULL && malloc_usable_size(q) == 512);
	char *s = strdup("strdup goes through malloc()");
	CHECK(s != NULL && malloc_usable_size(s) == 32);
	/* memalign() inside a page: the class of the larger of the two. */
	void *a = memalign(256, 10);
	CHECK(a != NULL && aligned(a, 256) && malloc_usable_size(a) == 256);
	free(p);
	free(q);
	free(s);
	free(a);
}

/* The process's resident bytes, from /proc/self/statm; 0 if unknown. */
static size_t resident_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* Under the set: malloc_trim() gives back the pages of the set's free
 * blocks.  16 MiB of 4 KiB blocks (a class of the set), written, then
 * freed: a trim gives back at least half of them and says so, and the
 * class serves them again. */
#define TRIM_BLOCKS 4096
#define TRIM_SIZE   4096

static void check_set_trim(void)
{
	static void *blocks[TRIM_BLOCKS];
	for (int i = 0; i < TRIM_BLOCKS; i++) {
		blocks[i] = malloc(TRIM_SIZE);
		CHECK(blocks[i] != NULL);
		if (blocks[i] != NULL)
			memset(blocks[i], i, TRIM_SIZE);
	}
	for (int i = 0; i < TRIM_BLOCKS; i++)
		free(blocks[i]);
	size_t before = resident_bytes();
	CHECK(malloc_trim(0) == 1);
	size_t after = resident_bytes();
	if (before != 0)
		CHECK(after + (size_t)TRIM_BLOCKS * TRIM_SIZE / 2 <= before);
	void *again = malloc(TRIM_SIZE);
	CHECK(again != NULL && malloc_usable_size(again) == TRIM_SIZE);
	if (again != NULL)
		memset(again, 1, TRIM_SIZE);
	free(again);
	/* Nothing more to give back: still a valid call. */
	int second = malloc_trim(0);
	CHECK(second == 0 || second == 1);
}

/* "heap": the page faults of large blocks (the set's classes stop at 32
 * KiB, so the C library's heap serves them) allocated, written and freed
 * in turn, printed for malloc-settings.sh to compare heap= settings. */
static int heap_faults(void)
{
	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	for (int i = 0; i < 1000; i++) {
		char *a = malloc(100 << 10), *b = malloc(100 << 10);
		CHECK(a != NULL && b != NULL);
		if (a == NULL || b == NULL)
			break;
		memset(a, i, 100 << 10);
		memset(b, i, 100 << 10);
		free(b);
		free(a);
	}
	getrusage(RUSAGE_SELF, &after);
	printf("faults %ld\n", after.ru_minflt - before.ru_minflt);
	return failures == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "heap") == 0)
		return heap_faults();
	int set = argc > 1 && strcmp(argv[1], "set") == 0;
	check_aligned_calls();
	check_reallocarray();
	check_usable_and_realloc();
	if (set) {
		check_set_serves();
		check_set_trim();
	}
	printf("malloc-api: %s, %d failures\n", set ? "set" : "C library",
	       failures);
	return failures == 0 ? 0 : 1;
}
