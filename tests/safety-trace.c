/*
 * SHIFTPOOL_TRACE=FILE: every call is logged.  This test sets the variable
 * to a temporary file, runs a known sequence (malloc, calloc, strdup,
 * realloc in place / out of the pool / into the pool / to size 0, frees of
 * pool and fallback pointers, a double free and an interior free with a
 * handler installed, realloc of a freed block and of an interior pointer
 * (also to size 0), free(NULL), and two threads passing blocks to each
 * other), then reads the log back and checks it record by record: the
 * header, the operation, pool, process, thread, size, old, ptr and src of
 * every line, and the counts per operation.  If tools/shiftpool-analyze
 * was built, it must report the known leaks (3, 336 bytes), the 3 double
 * and 2 invalid frees, and nothing else.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <inttypes.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK 64
#define MAX_RECORDS 256
#define MAX_FIELDS 16

static long tid(void)
{
	return (long)syscall(SYS_gettid);
}

/* ------------------------------------------------------------ expected */

/* A record as the test expects it; NULL fields are not checked. */
struct record {
	char op[16];
	char pool[24];
	char thread[24];
	char size[24];
	char old[24];
	char ptr[24];
	char src[16];
};

static struct record expected[MAX_RECORDS];
static size_t nexpected;
static unsigned long long pool_a_id; /* learnt from the log */

static void fmt_ptr(char *out, size_t n, const void *p)
{
	snprintf(out, n, "0x%" PRIxPTR, (uintptr_t)p);
}

/* expect(op, size or -1, old or (void*)-1, ptr, src) for pool A, this
 * thread. */
#define NO_SIZE ((size_t)-1)
#define NO_OLD ((void *)-1)

static void expect(const char *op, size_t size, const void *old,
                   const void *ptr, const char *src)
{
	REQUIRE(nexpected < MAX_RECORDS, "too many records");
	struct record *r = &expected[nexpected++];
	memset(r, 0, sizeof *r);
	snprintf(r->op, sizeof r->op, "%s", op);
	snprintf(r->thread, sizeof r->thread, "%ld", tid());
	if (size != NO_SIZE)
		snprintf(r->size, sizeof r->size, "%zu", size);
	if (old != NO_OLD)
		fmt_ptr(r->old, sizeof r->old, old);
	if (ptr != NO_OLD)
		fmt_ptr(r->ptr, sizeof r->ptr, ptr);
	if (src)
		snprintf(r->src, sizeof r->src, "%s", src);
}

/* ------------------------------------------------------------ parsing */

struct line {
	char op[16];
	char *key[MAX_FIELDS];
	char *value[MAX_FIELDS];
	int n;
};

/* Splits "op k=v k=v" in place. */
static bool parse(char *text, struct line *l)
{
	memset(l, 0, sizeof *l);
	char *save = NULL;
	char *word = strtok_r(text, " \n", &save);
	if (word == NULL)
		return false;
	snprintf(l->op, sizeof l->op, "%s", word);
	while ((word = strtok_r(NULL, " \n", &save)) != NULL) {
		char *eq = strchr(word, '=');
		if (eq == NULL || l->n == MAX_FIELDS)
			return false;
		*eq = '\0';
		l->key[l->n] = word;
		l->value[l->n++] = eq + 1;
	}
	return true;
}

static const char *field(const struct line *l, const char *key)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->key[i], key) == 0)
			return l->value[i];
	return NULL;
}

static void check_field(const struct line *l, size_t lineno,
                        const char *key, const char *want)
{
	if (want == NULL || *want == '\0')
		return;
	const char *got = field(l, key);
	CHECK(got != NULL && strcmp(got, want) == 0,
	      "trace line %zu (%s): %s=%s, expected %s", lineno, l->op, key,
	      got ? got : "(missing)", want);
}

/* ------------------------------------------------------------ threads */

struct peer {
	pool_t *pool;
	void *mine[5];
	void *theirs[5];
	long tid;
};

static void *peer_thread(void *arg)
{
	struct peer *p = arg;
	p->tid = tid();
	for (int i = 0; i < 5; i++)
		p->mine[i] = pool_malloc(p->pool, 32);
	for (int i = 0; i < 5; i++)
		pool_free(p->pool, p->theirs[i]);
	return NULL;
}

/* ------------------------------------------------------------ analyzer */

/* Runs tools/shiftpool-analyze on the log if it was built; checks its
 * report.  Returns false when there is no analyzer. */
static bool run_analyzer(const char *log)
{
	char path[4096];
	const char *top = getenv("abs_top_builddir");
	snprintf(path, sizeof path, "%s/tools/shiftpool-analyze",
	         top && *top ? top : ".");
	if (access(path, X_OK) != 0)
		return false;
	char command[8400];
	snprintf(command, sizeof command, "'%s' '%s' 2>&1", path, log);
	FILE *out = popen(command, "r");
	REQUIRE(out != NULL, "popen %s", command);
	char line[1024];
	bool in_total = false, in_a = false;
	bool total_leaks = false, a_leaks = false, total_double = false,
	     total_invalid = false, total_unknown = false, total_live = false;
	char section[64];
	snprintf(section, sizeof section, "pool %llu", pool_a_id);
	while (fgets(line, sizeof line, out)) {
		fputs(line, stdout);
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "total", 5) == 0)
			in_total = true, in_a = false;
		else if (strncmp(line, "pool ", 5) == 0)
			in_a = strcmp(line, section) == 0, in_total = false;
		if (in_a && strcmp(line, "  leaks: 3 (336 bytes)") == 0)
			a_leaks = true;
		if (!in_total)
			continue;
		if (strcmp(line, "  leaks: 3 (336 bytes)") == 0)
			total_leaks = true;
		if (strcmp(line, "  double frees (reported by the library): 3") ==
		    0)
			total_double = true;
		if (strcmp(line,
		           "  invalid frees (reported by the library): 2") == 0)
			total_invalid = true;
		if (strcmp(line, "  frees of unknown pointers: 0") == 0)
			total_unknown = true;
		if (strcmp(line, "  allocations returning a live pointer: 0") ==
		    0)
			total_live = true;
	}
	int status = pclose(out);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1,
	      "shiftpool-analyze: exit status 0x%x, not 1 (problems found)",
	      (unsigned)status);
	CHECK(a_leaks, "shiftpool-analyze: pool %llu: not \"leaks: 3 (336 "
	               "bytes)\"",
	      pool_a_id);
	CHECK(total_leaks, "shiftpool-analyze: total: not \"leaks: 3 (336 "
	                   "bytes)\"");
	CHECK(total_double, "shiftpool-analyze: not 3 double frees");
	CHECK(total_invalid, "shiftpool-analyze: not 2 invalid frees");
	CHECK(total_unknown, "shiftpool-analyze: frees of unknown pointers");
	CHECK(total_live, "shiftpool-analyze: allocations returning a live "
	                  "pointer");
	return true;
}

/* ------------------------------------------------------------ main */

int main(void)
{
	char log[4096];
	const char *dir = getenv("TMPDIR");
	snprintf(log, sizeof log, "%s/safety-trace.XXXXXX",
	         dir && *dir ? dir : "/tmp");
	int fd = mkstemp(log);
	REQUIRE(fd >= 0, "mkstemp: %s", strerror(errno));
	close(fd);
	unsetenv("SHIFTPOOL_DEBUG");
	setenv("SHIFTPOOL_TRACE", log, 1);
	safety_record_reports();

	/* Pool A: one thread, every call.  4 blocks of 64 bytes. */
	pool_t *a = pool_init(BLOCK, 4, POOL_SINGLE);
	REQUIRE(a != NULL, "pool_init");
	expect("init", NO_SIZE, NO_OLD, NO_OLD, NULL);
	char *m1 = pool_malloc(a, 10);
	expect("malloc", 10, NO_OLD, m1, "pool");
	char *m2 = pool_malloc(a, 100);
	expect("malloc", 100, NO_OLD, m2, "fallback");
	char *c1 = pool_calloc(a, 3, 8);
	expect("calloc", 24, NO_OLD, c1, "pool");
	char *c2 = pool_calloc(a, 1, 200);
	expect("calloc", 200, NO_OLD, c2, "fallback");
	char *s1 = pool_strdup(a, "trace");
	expect("strdup", 6, NO_OLD, s1, "pool");
	char longer[101];
	memset(longer, 'x', 100);
	longer[100] = '\0';
	char *s2 = pool_strdup(a, longer);
	expect("strdup", 101, NO_OLD, s2, "fallback");
	REQUIRE(m1 && m2 && c1 && c2 && s1 && s2, "allocation failed");
	REQUIRE(pool_owns(a, m1) && !pool_owns(a, m2) && pool_owns(a, c1) &&
	            !pool_owns(a, c2) && pool_owns(a, s1) && !pool_owns(a, s2),
	        "allocation from the wrong place");

	char *r1 = pool_realloc(a, m1, 200); /* out of the pool */
	expect("realloc", 200, m1, r1, "fallback");
	char *r2 = pool_realloc(a, m2, 20); /* into the pool */
	expect("realloc", 20, m2, r2, "pool");
	char *r3 = pool_realloc(a, r2, 30); /* in place */
	expect("realloc", 30, r2, r3, "pool");
	REQUIRE(r3 == r2 && pool_owns(a, r2) && !pool_owns(a, r1),
	        "realloc moved wrongly");
	char *r4 = pool_realloc(a, NULL, 16); /* a malloc */
	expect("realloc", 16, NULL, r4, "pool");
	char *m5 = pool_malloc(a, 8); /* the pool is full */
	expect("malloc", 8, NO_OLD, m5, "fallback");
	REQUIRE(r4 && m5 && pool_owns(a, r4) && !pool_owns(a, m5),
	        "exhaustion went wrong");

	pool_free(a, c2);
	expect("free", NO_SIZE, NO_OLD, c2, "fallback");
	pool_free(a, s2);
	expect("free", NO_SIZE, NO_OLD, s2, "fallback");
	pool_free(a, m5);
	expect("free", NO_SIZE, NO_OLD, m5, "fallback");
	pool_free(a, r1);
	expect("free", NO_SIZE, NO_OLD, r1, "fallback");
	pool_free(a, c1);
	expect("free", NO_SIZE, NO_OLD, c1, "pool");
	pool_free(a, c1); /* double free: reported, logged */
	expect("free", NO_SIZE, NO_OLD, c1, "double");
	pool_free(a, s1 + 1); /* interior: reported, logged */
	expect("free", NO_SIZE, NO_OLD, s1 + 1, "invalid");
	/* realloc's misuse is logged as what the library decided. */
	CHECK(pool_realloc(a, c1, 16) == NULL, "realloc of a freed block");
	expect("realloc", 16, c1, NULL, "double");
	CHECK(pool_realloc(a, s1 + 1, 16) == NULL, "realloc of an interior");
	expect("realloc", 16, s1 + 1, NULL, "invalid");
	CHECK(pool_realloc(a, c1, 0) == NULL, "realloc(freed, 0)");
	expect("realloc", 0, c1, NULL, "double");
	pool_free(a, NULL);
	expect("free", NO_SIZE, NO_OLD, NULL, "none");
	void *r0 = pool_realloc(a, r4, 0); /* a free */
	expect("realloc", 0, r4, NULL, "none");
	CHECK(r0 == NULL, "realloc(p, 0) returned %p", r0);
	char *m6 = pool_malloc(a, 300); /* leaked, with r2 and s1 */
	expect("malloc", 300, NO_OLD, m6, "fallback");
	CHECK(safety_reported(POOL_ERROR_DOUBLE_FREE) == 3 &&
	          safety_reported(POOL_ERROR_INVALID_POINTER) == 2 &&
	          safety_reported_total() == 5,
	      "the handler saw %u reports, not the 3 double and 2 invalid "
	      "frees",
	      safety_reported_total());
	pool_destroy(a);
	expect("destroy", NO_SIZE, NO_OLD, NO_OLD, NULL);
	free(m6); /* a fallback allocation outlives its pool */
	size_t a_records = nexpected;

	/* Pool B: two threads pass blocks to each other. */
	pool_t *b = pool_init(BLOCK, 64, POOL_PER_THREAD);
	REQUIRE(b != NULL, "pool_init");
	struct peer peer = {.pool = b};
	for (int i = 0; i < 5; i++)
		peer.theirs[i] = pool_malloc(b, 32);
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, peer_thread, &peer) == 0,
	        "pthread_create");
	pthread_join(t, NULL);
	for (int i = 0; i < 5; i++)
		pool_free(b, peer.mine[i]);
	pool_destroy(b);
	unsetenv("SHIFTPOOL_TRACE");
	pool_set_error_handler(NULL, NULL);

	/* ---- read the log back */
	FILE *in = fopen(log, "r");
	REQUIRE(in != NULL, "open %s: %s", log, strerror(errno));
	char text[1024];
	REQUIRE(fgets(text, sizeof text, in) != NULL, "empty trace");
	CHECK(strcmp(text, "# shiftpool trace v3\n") == 0,
	      "first line: %s", text);

	size_t lineno = 1, a_seen = 0;
	unsigned long long a_seq = 0; /* pool A's last seq= */
	unsigned long long pool_b_id = 0;
	unsigned b_ops[2][2] = {{0}}; /* [main|peer][malloc|free] */
	unsigned b_init = 0, b_destroy = 0, b_other = 0, b_not_pool = 0;
	char main_tid[24], peer_tid[24];
	snprintf(main_tid, sizeof main_tid, "%ld", tid());
	snprintf(peer_tid, sizeof peer_tid, "%ld", peer.tid);
	while (fgets(text, sizeof text, in) != NULL) {
		lineno++;
		struct line l;
		if (text[0] == '#')
			continue;
		CHECK(parse(text, &l), "trace line %zu: not \"op k=v...\"",
		      lineno);
		const char *pool = field(&l, "pool");
		CHECK(pool != NULL, "trace line %zu: no pool", lineno);
		const char *pid = field(&l, "pid");
		CHECK(field(&l, "t") != NULL && pid != NULL &&
		          strtol(pid, NULL, 10) == (long)getpid(),
		      "trace line %zu: no t=, or not pid=%ld", lineno,
		      (long)getpid());
		if (pool == NULL)
			continue;
		unsigned long long id = strtoull(pool, NULL, 10);
		if (pool_a_id == 0 && strcmp(l.op, "init") == 0)
			pool_a_id = id;
		else if (pool_b_id == 0 && strcmp(l.op, "init") == 0)
			pool_b_id = id;
		if (id == pool_a_id) {
			/* Pool A: record by record. */
			if (a_seen >= a_records) {
				safety_fail(__FILE__, __LINE__,
				            "trace line %zu: an extra %s record",
				            lineno, l.op);
				continue;
			}
			const struct record *r = &expected[a_seen++];
			/* One thread's records: their seq= goes up. */
			const char *seq = field(&l, "seq");
			unsigned long long sn =
			    seq ? strtoull(seq, NULL, 10) : 0;
			CHECK(seq != NULL && sn > a_seq,
			      "trace line %zu: seq=%s after %llu", lineno,
			      seq ? seq : "(missing)", a_seq);
			a_seq = sn;
			CHECK(strcmp(l.op, r->op) == 0,
			      "trace line %zu: %s, expected %s", lineno, l.op,
			      r->op);
			if (strcmp(r->op, "init") == 0) {
				check_field(&l, lineno, "block_size", "64");
				check_field(&l, lineno, "block_count", "4");
				continue;
			}
			if (strcmp(r->op, "destroy") == 0)
				continue;
			check_field(&l, lineno, "thread", r->thread);
			check_field(&l, lineno, "size", r->size);
			check_field(&l, lineno, "old", r->old);
			check_field(&l, lineno, "ptr", r->ptr);
			check_field(&l, lineno, "src", r->src);
		} else if (id == pool_b_id) {
			const char *th = field(&l, "thread");
			const char *src = field(&l, "src");
			int who = th && strcmp(th, main_tid) == 0   ? 0
			          : th && strcmp(th, peer_tid) == 0 ? 1
			                                            : -1;
			if (strcmp(l.op, "init") == 0) {
				b_init++;
			} else if (strcmp(l.op, "destroy") == 0) {
				b_destroy++;
			} else if (who >= 0 && strcmp(l.op, "malloc") == 0) {
				b_ops[who][0]++;
			} else if (who >= 0 && strcmp(l.op, "free") == 0) {
				b_ops[who][1]++;
			} else {
				b_other++;
			}
			if ((strcmp(l.op, "malloc") == 0 ||
			     strcmp(l.op, "free") == 0) &&
			    (src == NULL || strcmp(src, "pool") != 0))
				b_not_pool++;
		} else {
			safety_fail(__FILE__, __LINE__,
			            "trace line %zu: unknown pool %s", lineno,
			            pool);
		}
	}
	fclose(in);
	CHECK(a_seen == a_records, "pool A: %zu records in the log, expected "
	                           "%zu",
	      a_seen, a_records);
	CHECK(b_init == 1 && b_destroy == 1 && b_other == 0 &&
	          b_not_pool == 0,
	      "pool B: init %u, destroy %u, %u unexpected records, %u not "
	      "from the pool",
	      b_init, b_destroy, b_other, b_not_pool);
	CHECK(b_ops[0][0] == 5 && b_ops[0][1] == 5 && b_ops[1][0] == 5 &&
	          b_ops[1][1] == 5,
	      "pool B: main malloc %u free %u, peer malloc %u free %u; "
	      "expected 5 each",
	      b_ops[0][0], b_ops[0][1], b_ops[1][0], b_ops[1][1]);
	CHECK(strcmp(main_tid, peer_tid) != 0, "the threads share an id");
	printf("trace: %zu lines, pool %llu record by record (%zu), pool "
	       "%llu on two threads\n",
	       lineno, pool_a_id, a_records, pool_b_id);

	if (!run_analyzer(log))
		printf("tools/shiftpool-analyze not built: analysis skipped\n");
	if (atomic_load(&safety_failures) == 0)
		unlink(log);
	else
		fprintf(stderr, "the trace is kept in %s\n", log);
	return safety_result("safety-trace");
}
