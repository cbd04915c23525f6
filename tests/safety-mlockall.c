/*
 * pool_trim() in a process that locked all its memory (mlockall()): the
 * kernel refuses to drop locked pages (madvise() fails with EINVAL), so
 * nothing is given back, and the blocks keep what they held.  A trim must
 * then not count them as given back, nor hand them out as known to be
 * zero: after a fill, a free of everything and a trim, every
 * pool_calloc() still reads zero and pool_trim() reports no bytes.  In a
 * child of its own, so the lock dies with it; skipped where the limit on
 * locked memory forbids mlockall().
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <sys/mman.h>
#include <unistd.h>

/* Blocks not a whole page apart, and one block per page and more. */
static const size_t block_sizes[] = {256, 4096, 16384};
#define BLOCKS 256

/* Fill, free, trim, calloc: one mode, one block size. */
static void locked_trim(const struct safety_mode *m, size_t block)
{
	pool_t *pool = pool_init(block, BLOCKS, m->flag | POOL_NO_FALLBACK);
	REQUIRE(pool != NULL, "%s: pool_init: %s", m->name, strerror(errno));
	void *blocks[BLOCKS];

	for (size_t i = 0; i < BLOCKS; i++) {
		blocks[i] = pool_malloc(pool, block);
		REQUIRE(blocks[i] != NULL, "%s: block %zu", m->name, i);
		memset(blocks[i], 0xab, block);
	}
	for (size_t i = 0; i < BLOCKS; i++)
		pool_free(pool, blocks[i]);
	size_t bytes = pool_trim(pool);
	CHECK(bytes == 0,
	      "%s, %zu B blocks: pool_trim() says %zu bytes given back of "
	      "locked memory",
	      m->name, block, bytes);
	size_t stale = 0;
	for (size_t i = 0; i < BLOCKS; i++) {
		unsigned char *p = pool_calloc(pool, 1, block);
		REQUIRE(p != NULL, "%s: pool_calloc %zu", m->name, i);
		for (size_t b = 0; b < block; b++)
			if (p[b] != 0) {
				stale++;
				break;
			}
		blocks[i] = p;
	}
	CHECK(stale == 0,
	      "%s, %zu B blocks: %zu of %d pool_calloc() blocks hold old "
	      "bytes after pool_trim()",
	      m->name, block, stale, BLOCKS);
	for (size_t i = 0; i < BLOCKS; i++)
		pool_free(pool, blocks[i]);
	pool_destroy(pool);
}

static int child(void)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
		printf("mlockall: %s: skipped\n", strerror(errno));
		return SAFETY_SKIP;
	}
	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++) {
		/* POOL_PER_THREAD gives back whole spans by its own code. */
		if (safety_modes[m].flag == POOL_PER_THREAD)
			continue;
		for (size_t s = 0; s < sizeof block_sizes / sizeof *block_sizes;
		     s++)
			locked_trim(&safety_modes[m], block_sizes[s]);
	}
	return safety_result("safety-mlockall");
}

int main(void)
{
#ifdef SHIFTPOOL_ASAN
	/* ASan's shadow memory is far too large to lock. */
	printf("safety-mlockall: AddressSanitizer build: skipped\n");
	return SAFETY_SKIP;
#endif
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0)
		_exit(child());
	int status;
	if (!safety_wait_bounded(pid, &status, 300)) {
		fprintf(stderr, "safety-mlockall: the child hung\n");
		return 1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	fprintf(stderr, "safety-mlockall: the child died of signal %d\n",
	        WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 1;
}
