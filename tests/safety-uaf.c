/*
 * The program tests/safety-valgrind.sh runs under Valgrind's memcheck.
 *
 *   safety-uaf info          print what this build has (Valgrind headers,
 *                            sanitizers), one key=value per line
 *   safety-uaf MODE clean    use a pool correctly, every call, in MODE
 *                            (single, locked, per-thread): memcheck must
 *                            find nothing
 *   safety-uaf MODE uaf      free a pool block, then read byte 128 and
 *                            write byte 136 of it: memcheck must report an
 *                            invalid read and an invalid write inside a
 *                            freed block
 *   safety-uaf MODE remote   the same, the block freed by another thread
 *
 * The addresses of the bad accesses are printed first, as "read=0x..." and
 * "write=0x...", so the script can match memcheck's "Address ... is 128
 * bytes inside a block of size 256 free'd".
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

/* Blocks of 256 bytes, and accesses in their middle: memcheck describes an
 * address by the nearest live block when one is within its redzone size of
 * it, so the bad accesses stay far from the live neighbours. */
#define BLOCK 256
#define COUNT 32
#define READ_AT 128
#define WRITE_AT 136

static int mode_flag(const char *name)
{
	for (size_t i = 0; i < SAFETY_MODE_COUNT; i++)
		if (strcmp(name, safety_modes[i].name) == 0)
			return safety_modes[i].flag;
	fprintf(stderr, "safety-uaf: unknown mode %s\n", name);
	exit(2);
}

static void info(void)
{
#ifdef HAVE_VALGRIND_MEMCHECK_H
	puts("valgrind_h=1");
#else
	puts("valgrind_h=0");
#endif
#if defined(SHIFTPOOL_ASAN) || defined(SHIFTPOOL_TSAN) ||                   \
    defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	puts("sanitized=1");
#else
	puts("sanitized=0");
#endif
}

/* Makes memcheck look at every byte: a branch on each. */
static unsigned sum(const unsigned char *p, size_t n)
{
	unsigned s = 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			s += p[i];
	return s;
}

static void fill(void *p, size_t n, int c)
{
	memset(p, c, n);
}

struct cross {
	pool_t *pool;
	void *blocks[8];
};

/* Frees the other thread's blocks and allocates its own. */
static void *cross_thread(void *arg)
{
	struct cross *x = arg;
	for (int i = 0; i < 8; i++)
		pool_free(x->pool, x->blocks[i]);
	for (int i = 0; i < 8; i++) {
		x->blocks[i] = pool_malloc(x->pool, BLOCK);
		fill(x->blocks[i], BLOCK, 0x40 + i);
	}
	return NULL;
}

/* Every call of the API, correctly; memcheck must stay quiet. */
static int clean(int flag)
{
	pool_t *pool = pool_init(BLOCK, COUNT, flag);
	if (pool == NULL)
		return 1;
	unsigned char *p[COUNT + 4];

	/* Fresh blocks, then recycled ones, each used in full. */
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < COUNT + 4; i++) {
			p[i] = round == 1 ? pool_calloc(pool, 1, BLOCK)
			                  : pool_malloc(pool, BLOCK);
			if (p[i] == NULL)
				return 1;
			if (round == 1 && sum(p[i], BLOCK) != 0)
				return 1; /* calloc must zero */
			fill(p[i], BLOCK, i);
		}
		for (int i = 0; i < COUNT + 4; i++)
			if (sum(p[i], BLOCK) != (unsigned)i * BLOCK)
				return 1;
		for (int i = COUNT + 3; i >= 0; i--)
			pool_free(pool, p[i]);
	}

	/* realloc: in place, out to the fallback, back into the pool. */
	unsigned char *r = pool_malloc(pool, 10);
	fill(r, 10, 7);
	r = pool_realloc(pool, r, BLOCK);
	fill(r + 10, BLOCK - 10, 7);
	r = pool_realloc(pool, r, 4 * BLOCK);
	if (r == NULL || sum(r, BLOCK) != 7u * BLOCK)
		return 1;
	fill(r + BLOCK, 3 * BLOCK, 1);
	r = pool_realloc(pool, r, 8 * BLOCK);
	fill(r, 8 * BLOCK, 2);
	r = pool_realloc(pool, r, 20);
	if (r == NULL || sum(r, 20) != 40)
		return 1;
	r = pool_realloc(pool, r, 0);
	if (r != NULL)
		return 1;

	/* strdup, short and long. */
	char big[3 * BLOCK];
	memset(big, 'b', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	char *s1 = pool_strdup(pool, "shiftpool");
	char *s2 = pool_strdup(pool, big);
	if (s1 == NULL || s2 == NULL || strcmp(s1, "shiftpool") != 0 ||
	    strcmp(s2, big) != 0)
		return 1;
	pool_free(pool, s1);
	pool_free(pool, s2);

	/* Blocks crossing threads. */
	struct cross x = {.pool = pool};
	for (int i = 0; i < 8; i++) {
		x.blocks[i] = pool_malloc(pool, BLOCK);
		fill(x.blocks[i], BLOCK, i);
	}
	pthread_t t;
	if (pthread_create(&t, NULL, cross_thread, &x) != 0)
		return 1;
	pthread_join(t, NULL);
	for (int i = 0; i < 8; i++) {
		if (sum(x.blocks[i], BLOCK) != (unsigned)(0x40 + i) * BLOCK)
			return 1;
		if (i < 4)
			pool_free(pool, x.blocks[i]);
	}

	/* The last four die with the pool: no leak, no error. */
	pool_stats_t st;
	if (pool_stats(pool, &st) != 0 || st.in_use != 4)
		return 1;
	pool_destroy(pool);
	return 0;
}

struct remote {
	pool_t *pool;
	void *block;
};

static void *remote_free(void *arg)
{
	struct remote *rf = arg;
	pool_free(rf->pool, rf->block);
	return NULL;
}

/* A use after free: memcheck must report both accesses. */
static int uaf(int flag, bool remote)
{
	pool_t *pool = pool_init(BLOCK, COUNT, flag);
	if (pool == NULL)
		return 1;
	unsigned char *keep = pool_malloc(pool, BLOCK);
	unsigned char *p = pool_malloc(pool, 200);
	unsigned char *after = pool_malloc(pool, BLOCK);
	if (keep == NULL || p == NULL || after == NULL || !pool_owns(pool, p))
		return 1;
	fill(keep, BLOCK, 1);
	fill(p, 200, 2);
	fill(after, BLOCK, 3);
	if (remote) {
		struct remote rf = {pool, p};
		pthread_t t;
		if (pthread_create(&t, NULL, remote_free, &rf) != 0)
			return 1;
		pthread_join(t, NULL);
	} else {
		pool_free(pool, p);
	}
	printf("read=%p\nwrite=%p\n", (void *)(p + READ_AT),
	       (void *)(p + WRITE_AT));
	fflush(stdout);

	/* The bug. */
	volatile unsigned char *bad = p;
	unsigned char c = bad[READ_AT];
	bad[WRITE_AT] = (unsigned char)(c + 1);

	/* The neighbours are still fine. */
	if (sum(keep, BLOCK) != BLOCK || sum(after, BLOCK) != 3 * BLOCK)
		return 1;
	pool_free(pool, keep);
	pool_free(pool, after);
	pool_destroy(pool);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "info") == 0) {
		info();
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr,
		        "usage: safety-uaf info | MODE clean|uaf|remote\n");
		return 2;
	}
	int flag = mode_flag(argv[1]);
	if (strcmp(argv[2], "clean") == 0)
		return clean(flag);
	if (strcmp(argv[2], "uaf") == 0)
		return uaf(flag, false);
	if (strcmp(argv[2], "remote") == 0)
		return uaf(flag, true);
	fprintf(stderr, "safety-uaf: unknown action %s\n", argv[2]);
	return 2;
}
