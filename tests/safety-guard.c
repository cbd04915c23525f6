/*
 * The region lies between two inaccessible guard pages, its last block
 * ending where the upper one starts: a write that runs off the last block
 * faults at the write instead of rewriting what lies beside the region
 * (and so does one before the first block when the region fills whole
 * pages).  Before there was a guard, an
 * 8-byte overflow off the last block silently rewrote the per-block state
 * of a per-thread pool, and the next correct pool_free() aborted as a
 * "double free".  Every mode, several block sizes and counts (filling
 * whole pages or not): a child writes one word past the end (or one
 * before the start of a region of whole pages) and must die of SIGSEGV; a
 * write to the last byte of the last block must not fault.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

enum where { LAST_BYTE, PAST_END, BEFORE_START };

/* Runs the write in a child; returns its wait status. */
static int write_in_child(pool_t *pool, char *first, char *last,
                          size_t block, enum where where)
{
	fflush(NULL);
	pid_t child = fork();
	REQUIRE(child >= 0, "fork");
	if (child == 0) {
		signal(SIGSEGV, SIG_DFL);
		if (where == LAST_BYTE)
			safety_raw_write(last, block - 1, 1);
		else if (where == PAST_END)
			safety_raw_write_word(last + block, 0, 0x4141414141414141);
		else
			safety_raw_write_word(first - sizeof(uintptr_t), 0, 1);
		/* Reaching here is the failure: the pool is still usable. */
		pool_free(pool, last);
		_exit(0);
	}
	int status;
	REQUIRE(waitpid(child, &status, 0) == child, "waitpid");
	return status;
}

static void check_pool(const struct safety_mode *mode, size_t block,
                       size_t count)
{
	pool_t *pool = pool_init(block, count, mode->flag | POOL_NO_FALLBACK);
	REQUIRE(pool != NULL, "pool_init");
	char *first = NULL, *last = NULL;
	/* Every block, so the first and the last are known. */
	for (size_t i = 0; i < count; i++) {
		char *p = pool_malloc(pool, block);
		REQUIRE(p != NULL, "%s: block %zu of %zu", mode->name, i, count);
		if (first == NULL || p < first)
			first = p;
		if (last == NULL || p > last)
			last = p;
	}
	int status = write_in_child(pool, first, last, block, LAST_BYTE);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "%s, %zu x %zu: a write to the last block's last byte faulted",
	      mode->name, count, block);
	status = write_in_child(pool, first, last, block, PAST_END);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	      "%s, %zu x %zu: a write past the last block did not fault "
	      "(status 0x%x)",
	      mode->name, count, block, (unsigned)status);
	if ((count * block) % (size_t)sysconf(_SC_PAGESIZE) != 0) {
		pool_destroy(pool);
		return;
	}
	status = write_in_child(pool, first, last, block, BEFORE_START);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	      "%s, %zu x %zu: a write before the first block did not fault "
	      "(status 0x%x)",
	      mode->name, count, block, (unsigned)status);
	pool_destroy(pool);
}

int main(void)
{
	static const size_t shapes[][2] = {
	    {16, 256}, {16, 100}, {64, 64}, {64, 3}, {4096, 4}, {8192, 3},
	};
	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++)
		for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
			check_pool(&safety_modes[m], shapes[s][0], shapes[s][1]);
	return safety_result("safety-guard");
}
