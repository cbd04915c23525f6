/*
 * Run by tests/safety-setuid.sh, as itself and as a set-user-ID copy:
 * prints who it runs as, then makes a pool (which reads SHIFTPOOL_TRACE
 * and SHIFTPOOL_DEBUG), allocates from it, asks its fallback for one
 * allocation, and says whether that worked (SHIFTPOOL_DEBUG=
 * fail-fallback=1 makes it fail when the variable is obeyed).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shiftpool.h"

int main(void)
{
	printf("ruid=%ld euid=%ld\n", (long)getuid(), (long)geteuid());
	pool_t *pool = pool_init(64, 16, POOL_SINGLE);
	if (pool == NULL) {
		printf("pool_init: %s\n", strerror(errno));
		return 1;
	}
	void *block = pool_malloc(pool, 8);
	void *big = pool_malloc(pool, 1000); /* more than a block */
	printf("fallback=%s\n", big != NULL ? "ok" : "failed");
	int owned = pool_owns(pool, block);
	pool_free(pool, big);
	pool_free(pool, block);
	pool_destroy(pool);
	return owned ? 0 : 1;
}
