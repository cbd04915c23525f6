/*
 * A correct program whose threads hand blocks to each other, traced, must
 * get a clean bill from tools/shiftpool-analyze: no double free, no
 * pointer handed out twice, no unknown free, no leak.  Records are written
 * after their calls, so the free of a block by one thread and its
 * allocation by the next can reach the log in the wrong order; seq=
 * (trace-format.h) gives the analyzer the true order back.
 *
 * THREADS threads share a POOL_LOCKED and a POOL_PER_THREAD pool of few
 * blocks, so that a freed block is soon handed out again, to any thread.
 * Each thread runs ROUNDS rounds on each pool: it allocates a block (or,
 * every eighth round, more than a block, from the fallback), swaps it into
 * one of a few shared slots, and frees what it took out, which another
 * thread allocated; every fifth such block is first moved by
 * pool_realloc() (out of the pool or into it), and every sixteenth round
 * adds a batch of pool_malloc_bulk() and pool_free_bulk().  Then what the
 * slots hold is freed and the pools destroyed.
 *
 * The analyzer is run with a window (--window) larger than the log, so
 * that its verdict depends on the log alone, never on how far out of
 * place the threads' timing put a record.  The test also checks that
 * every record carries seq=, each number once.
 *
 * With a path as its argument, the log is written there and kept.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <unistd.h>

#define THREADS 4
#define ROUNDS  20000
#define SLOTS   8
#define BLOCK   64
#define BLOCKS  32
#define BULK    4

struct shared {
	pool_t *pool;
	void *_Atomic slots[SLOTS];
};

static struct shared shared[2];
/* The threads start together, so that they run side by side. */
static pthread_barrier_t start;

struct worker {
	pthread_t thread;
	unsigned index;
};

/* Gives back a block another thread allocated, sometimes moving it
 * first. */
static void give_back(pool_t *pool, void *p, unsigned round)
{
	if (round % 5 == 0) {
		/* Out of the pool when it is a block, into it when not. */
		size_t size = pool_owns(pool, p) ? 2 * BLOCK : BLOCK / 2;
		void *moved = pool_realloc(pool, p, size);
		CHECK(moved != NULL, "pool_realloc to %zu", size);
		if (moved != NULL)
			p = moved;
	}
	pool_free(pool, p);
}

static void one_round(struct shared *s, unsigned round, unsigned *rng)
{
	*rng = *rng * 1103515245u + 12345u;
	size_t size = round % 8 == 0 ? 2 * BLOCK : BLOCK / 2;
	void *p = pool_malloc(s->pool, size);
	REQUIRE(p != NULL, "pool_malloc(%zu)", size);
	memset(p, (int)(round & 0xff), size);
	void *q = atomic_exchange(&s->slots[(*rng >> 16) % SLOTS], p);
	if (q != NULL)
		give_back(s->pool, q, round);
	if (round % 16 == 0) {
		void *batch[BULK];
		size_t got = pool_malloc_bulk(s->pool, BLOCK, BULK, batch);
		/* The pool may be short of blocks: all or nothing. */
		CHECK(got == 0 || got == BULK, "pool_malloc_bulk: %zu", got);
		if (got == BULK)
			pool_free_bulk(s->pool, BULK, batch);
	}
}

static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned rng = 2654435761u * (w->index + 1);
	pthread_barrier_wait(&start);
	for (unsigned round = 0; round < ROUNDS; round++)
		for (int i = 0; i < 2; i++)
			one_round(&shared[i], round, &rng);
	return NULL;
}

/* ------------------------------------------------------------ the log */

static int compare_seq(const void *x, const void *y)
{
	unsigned long long a = *(const unsigned long long *)x;
	unsigned long long b = *(const unsigned long long *)y;
	return (a > b) - (a < b);
}

/* Every record has seq=, and no number comes twice (one process); returns
 * the number of lines. */
static size_t check_seq(const char *log)
{
	FILE *in = fopen(log, "r");
	REQUIRE(in != NULL, "open %s: %s", log, strerror(errno));
	size_t cap = 1 << 20, n = 0, lines = 0, missing = 0;
	unsigned long long *seen = malloc(cap * sizeof *seen);
	REQUIRE(seen != NULL, "out of memory");
	char text[1024];
	while (fgets(text, sizeof text, in) != NULL) {
		lines++;
		if (text[0] == '#')
			continue;
		const char *seq = strstr(text, " seq=");
		if (seq == NULL) {
			missing++;
			continue;
		}
		if (n == cap) {
			cap *= 2;
			seen = realloc(seen, cap * sizeof *seen);
			REQUIRE(seen != NULL, "out of memory");
		}
		seen[n++] = strtoull(seq + 5, NULL, 10);
	}
	fclose(in);
	CHECK(missing == 0, "%zu records without seq=", missing);
	/* Sorted, a number that comes twice is next to itself. */
	qsort(seen, n, sizeof *seen, compare_seq);
	size_t twice = 0;
	for (size_t i = 1; i < n; i++)
		twice += seen[i] == seen[i - 1];
	CHECK(twice == 0, "%zu seq= numbers come twice", twice);
	free(seen);
	return lines;
}

/* The analyzer's report: exit status 0, and each count below 0. */
static void run_analyzer(const char *log, size_t lines)
{
	static const char *const zero[] = {
	    "  double frees not reported by the library: 0",
	    "  allocations returning a live pointer: 0",
	    "  frees of unknown pointers: 0",
	    "  double frees (reported by the library): 0",
	    "  leaks: 0 (0 bytes)",
	};
	enum { NZERO = sizeof zero / sizeof zero[0] };
	char path[4096];
	const char *top = getenv("abs_top_builddir");
	snprintf(path, sizeof path, "%s/tools/shiftpool-analyze",
	         top && *top ? top : ".");
	if (access(path, X_OK) != 0) {
		printf("no %s: SKIP\n", path);
		exit(SAFETY_SKIP);
	}
	char command[8400];
	snprintf(command, sizeof command, "'%s' --window %zu '%s' 2>&1", path,
	         lines + 1, log);
	FILE *out = popen(command, "r");
	REQUIRE(out != NULL, "popen %s", command);
	char line[1024];
	bool in_total = false, seen[NZERO] = {false};
	while (fgets(line, sizeof line, out)) {
		fputs(line, stdout);
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "total", 5) == 0)
			in_total = true;
		else if (strncmp(line, "pool ", 5) == 0 ||
		         strncmp(line, "set ", 4) == 0)
			in_total = false;
		for (size_t i = 0; in_total && i < NZERO; i++)
			if (strcmp(line, zero[i]) == 0)
				seen[i] = true;
	}
	int status = pclose(out);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "shiftpool-analyze: exit status 0x%x, not 0 (clean)",
	      (unsigned)status);
	for (size_t i = 0; i < NZERO; i++)
		CHECK(seen[i], "shiftpool-analyze: total: no \"%s\"",
		      zero[i] + 2);
}

int main(int argc, char **argv)
{
	char log[4096];
	const char *dir = getenv("TMPDIR");
	bool keep = argc > 1;
	if (keep) {
		snprintf(log, sizeof log, "%s", argv[1]);
		unlink(log);
	} else {
		snprintf(log, sizeof log, "%s/safety-trace-threads.XXXXXX",
		         dir && *dir ? dir : "/tmp");
		int fd = mkstemp(log);
		REQUIRE(fd >= 0, "mkstemp: %s", strerror(errno));
		close(fd);
	}
	unsetenv("SHIFTPOOL_DEBUG");
	setenv("SHIFTPOOL_TRACE", log, 1);

	shared[0].pool = pool_init(BLOCK, BLOCKS, POOL_LOCKED);
	shared[1].pool = pool_init(BLOCK, BLOCKS, POOL_PER_THREAD);
	REQUIRE(shared[0].pool && shared[1].pool, "pool_init: %s",
	        strerror(errno));
	struct worker workers[THREADS];
	REQUIRE(pthread_barrier_init(&start, NULL, THREADS) == 0,
	        "pthread_barrier_init");
	for (unsigned i = 0; i < THREADS; i++) {
		workers[i].index = i;
		REQUIRE(pthread_create(&workers[i].thread, NULL, work,
		                       &workers[i]) == 0,
		        "pthread_create");
	}
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(workers[i].thread, NULL);
	pthread_barrier_destroy(&start);
	for (int i = 0; i < 2; i++) {
		for (unsigned j = 0; j < SLOTS; j++) {
			void *p = atomic_exchange(&shared[i].slots[j], NULL);
			if (p != NULL)
				pool_free(shared[i].pool, p);
		}
		pool_destroy(shared[i].pool);
	}
	unsetenv("SHIFTPOOL_TRACE");

	size_t lines = check_seq(log);
	printf("trace: %zu lines\n", lines);
	run_analyzer(log, lines);
	if (!keep)
		unlink(log);
	return safety_result("safety-trace-threads");
}
