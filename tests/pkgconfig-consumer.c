/*
 * A program that knows shiftpool only through pkg-config: tests/pkgconfig.sh
 * installs the library into a temporary DESTDIR, builds this with nothing
 * but `pkg-config --cflags --libs shiftpool`, runs it, and compares what it
 * prints with what it expects.
 *
 * SPDX-License-Identifier: MIT
 */
#include <shiftpool.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
	pool_stats_t st;
	pool_t *pool = pool_init(50, 4, POOL_LOCKED);

	if (pool == NULL) {
		perror("pool_init");
		return 1;
	}
	/* The installed header and the library it was installed with agree. */
	printf("version %s %s\n", SHIFTPOOL_VERSION_STRING, shiftpool_version());

	unsigned char *p = pool_calloc(pool, 6, 8);
	if (p == NULL) {
		perror("pool_calloc");
		return 1;
	}
	int zeroed = 1;
	for (size_t i = 0; i < 48; i++)
		zeroed &= p[i] == 0;
	memset(p, 0xee, 48);
	printf("calloc owned %d zeroed %d\n", pool_owns(pool, p), zeroed);

	if (pool_stats(pool, &st) != 0)
		return 1;
	printf("block_size %zu block_count %zu in_use %zu allocs %llu\n",
	       st.block_size, st.block_count, st.in_use,
	       (unsigned long long)st.allocs);

	pool_free(pool, p);
	if (pool_stats(pool, &st) != 0)
		return 1;
	printf("in_use %zu frees %llu\n", st.in_use,
	       (unsigned long long)st.frees);
	pool_destroy(pool);
	return 0;
}
