/*
 * POOL_HUGEPAGES gets transparent huge pages: in every mode a 64 MiB pool
 * whose blocks are all touched has at least half of its region in
 * AnonHugePages, read from /proc/self/smaps for the mapping that holds
 * the blocks.  The same pool without the option is measured beside it
 * (printed: where THP is "always" it gets them too).  SKIP where the
 * kernel has no transparent huge pages or has them "never".
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <inttypes.h>
#include <string.h>

#define REGION ((size_t)64 << 20)
#define BLOCK  ((size_t)4096)

/* The THP mode the kernel is in: "always", "madvise", "never" or NULL. */
static const char *thp_mode(void)
{
	static char mode[16];
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[128];
	if (f == NULL)
		return NULL;
	const char *found = NULL;
	if (fgets(line, sizeof line, f) != NULL) {
		char *open = strchr(line, '['), *close = strchr(line, ']');
		if (open != NULL && close != NULL && close > open &&
		    (size_t)(close - open) < sizeof mode) {
			memcpy(mode, open + 1, (size_t)(close - open - 1));
			mode[close - open - 1] = '\0';
			found = mode;
		}
	}
	fclose(f);
	return found;
}

/* AnonHugePages of the mapping of /proc/self/smaps that contains p, in
 * bytes. */
static size_t anon_huge_bytes(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	REQUIRE(f != NULL, "/proc/self/smaps");
	char line[512];
	bool inside = false;
	size_t kib = 0;
	while (fgets(line, sizeof line, f) != NULL) {
		uintptr_t lo, hi;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (inside && sscanf(line, "AnonHugePages: %zu kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib << 10;
}

/* Takes every block, writes it, and measures; returns the bytes. */
static size_t huge_bytes_of_pool(int flags)
{
	pool_t *pool = pool_init(BLOCK, REGION / BLOCK, flags);
	REQUIRE(pool != NULL, "pool_init(%#x)", (unsigned)flags);
	void **blocks = malloc(REGION / BLOCK * sizeof *blocks);
	REQUIRE(blocks != NULL, "malloc");
	for (size_t i = 0; i < REGION / BLOCK; i++) {
		blocks[i] = pool_malloc(pool, BLOCK);
		REQUIRE(blocks[i] != NULL && pool_owns(pool, blocks[i]),
		        "block %zu", i);
		memset(blocks[i], 1, BLOCK);
	}
	size_t bytes = anon_huge_bytes(blocks[0]);
	for (size_t i = 0; i < REGION / BLOCK; i++)
		pool_free(pool, blocks[i]);
	free(blocks);
	pool_destroy(pool);
	return bytes;
}

int main(void)
{
	const char *mode = thp_mode();
	if (mode == NULL || strcmp(mode, "never") == 0) {
		printf("SKIP: transparent huge pages are %s\n",
		       mode ? "off (never)" : "not in this kernel");
		return SAFETY_SKIP;
	}
	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++) {
		int flags = safety_modes[m].flag | POOL_NO_FALLBACK;
		size_t huge = huge_bytes_of_pool(flags | POOL_HUGEPAGES);
		size_t plain = huge_bytes_of_pool(flags);
		printf("%-10s THP %s: AnonHugePages %zu MiB of %zu with "
		       "POOL_HUGEPAGES, %zu MiB without\n",
		       safety_modes[m].name, mode, huge >> 20, REGION >> 20,
		       plain >> 20);
		CHECK(huge >= REGION / 2,
		      "%s: POOL_HUGEPAGES region has %zu KiB in huge pages of "
		      "%zu KiB",
		      safety_modes[m].name, huge >> 10, REGION >> 10);
	}
	return safety_result("safety-hugepages");
}
