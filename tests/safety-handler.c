/*
 * What a misuse handler may do (shiftpool.h): it is never called with a
 * lock of the library held, so it may call back into the library, on the
 * very pool it is told about, and other threads go on while it runs.
 *
 * In every mode, each way a misuse reaches the handler:
 *
 *  - the allocation path: a free block's link overwritten as a use after
 *    free would (the way tests/safety-hardened.c does), then pool_malloc()
 *    until the pool reports POOL_ERROR_CORRUPTED;
 *  - the allocation path with POOL_DEBUG_FILL: a write into a free block,
 *    POOL_ERROR_WRITE_AFTER_FREE;
 *  - pool_free() of a freed block (double free) and of an interior
 *    pointer (invalid pointer);
 *  - pool_realloc() of a freed block and of an interior pointer.
 *
 * The handler calls pool_stats(), pool_stats_print() and pool_malloc() /
 * pool_free() on the pool that reported, and each must succeed.  In the
 * thread-safe modes each case runs a second time with another thread that
 * keeps allocating and freeing on the same pool: the handler waits until
 * that thread has made progress while the handler runs.
 *
 * Each case runs in a child process of its own, under alarm(): a handler
 * that deadlocks (the library held a lock around it) fails its case, and
 * the other cases still run.  The alarm is generous; it only turns a hang
 * into a failure.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK        64
#define COUNT        512 /* in POOL_PER_THREAD, spans of 8 blocks */
#define FIRST        8
#define PROGRESS     200 /* the other thread's calls the handler waits for */
#define CASE_SECONDS 60

enum trigger {
	T_CORRUPTED,
	T_WRITE_AFTER_FREE,
	T_DOUBLE_FREE,
	T_INVALID_FREE,
	T_REALLOC_FREED,
	T_REALLOC_INTERIOR,
	T_TRIGGERS
};

static const struct {
	const char *name;
	enum pool_error error;
	const char *function;
} triggers[T_TRIGGERS] = {
    {"corrupted free list", POOL_ERROR_CORRUPTED, "pool_malloc"},
    {"write after free", POOL_ERROR_WRITE_AFTER_FREE, "pool_malloc"},
    {"double free", POOL_ERROR_DOUBLE_FREE, "pool_free"},
    {"interior free", POOL_ERROR_INVALID_POINTER, "pool_free"},
    {"realloc of a freed block", POOL_ERROR_DOUBLE_FREE, "pool_realloc"},
    {"realloc of an interior pointer", POOL_ERROR_INVALID_POINTER,
     "pool_realloc"},
};

/* The case this process runs, for the alarm's message. */
static char case_name[160];
static pool_t *pool;
static pthread_t reporter;

/* ------------------------------------------------------------ the other
 * thread */

static atomic_bool handler_running, other_stop;
static _Atomic unsigned long other_calls;

static void *other_thread(void *arg)
{
	(void)arg;
	/* It starts when the handler does: before that it could be the one
	 * to meet the damage. */
	while (!atomic_load(&handler_running) && !atomic_load(&other_stop))
		sched_yield();
	while (!atomic_load(&other_stop)) {
		void *p = pool_malloc(pool, BLOCK);
		if (p == NULL) {
			safety_fail(__FILE__, __LINE__,
			            "%s: other thread: pool_malloc: %s",
			            case_name, strerror(errno));
			break;
		}
		memset(p, 0x5a, BLOCK);
		pool_free(pool, p);
		atomic_fetch_add(&other_calls, 1);
	}
	return NULL;
}

/* ------------------------------------------------------------ handler */

static _Atomic unsigned handler_calls;
static bool wait_for_other;

static void handler(const pool_t *reported, const char *function,
                    const void *ptr, enum pool_error error, void *arg)
{
	(void)ptr, (void)error, (void)function;
	CHECK(arg == &handler_calls, "%s: the handler got arg %p", case_name,
	      arg);
	if (atomic_fetch_add(&handler_calls, 1) != 0)
		return; /* only the first report calls back, no recursion */
	safety_record(reported, function, ptr, error, arg);
	CHECK(pthread_equal(pthread_self(), reporter),
	      "%s: the handler runs on another thread than the call",
	      case_name);
	CHECK(reported == pool, "%s: the handler was told of pool %p, not %p",
	      case_name, (const void *)reported, (void *)pool);

	/* Back into the library, on the same pool. */
	pool_stats_t st;
	CHECK(pool_stats(reported, &st) == 0 && st.block_count == COUNT,
	      "%s: pool_stats() in the handler", case_name);
	FILE *out = fopen("/dev/null", "w");
	REQUIRE(out != NULL, "fopen /dev/null: %s", strerror(errno));
	CHECK(pool_stats_print(reported, out, POOL_STATS_TEXT) == 0 &&
	          pool_stats_print(reported, out, POOL_STATS_JSON) == 0,
	      "%s: pool_stats_print() in the handler: %s", case_name,
	      strerror(errno));
	fclose(out);
	void *p = pool_malloc(pool, BLOCK);
	CHECK(p != NULL, "%s: pool_malloc() in the handler: %s", case_name,
	      strerror(errno));
	if (p != NULL) {
		memset(p, 0xa5, BLOCK);
		pool_free(pool, p);
	}

	if (wait_for_other) {
		/* Another thread uses the pool while this handler runs; a
		 * lock held around the handler would stop it, and the alarm
		 * would end this wait. */
		unsigned long start = atomic_load(&other_calls);
		atomic_store(&handler_running, true);
		while (atomic_load(&other_calls) < start + PROGRESS)
			sched_yield();
	}
}

/* ------------------------------------------------------------ a case */

/* a[0..7] from the start of the region (one span in POOL_PER_THREAD), and
 * a[1..6] freed: a[6] heads the free list. */
static void take_first(void **a)
{
	for (int i = 0; i < FIRST; i++) {
		a[i] = pool_malloc(pool, BLOCK);
		REQUIRE(a[i] != NULL && pool_owns(pool, a[i]),
		        "%s: a[%d] not from the pool", case_name, i);
	}
	for (int i = 1; i < FIRST - 1; i++)
		pool_free(pool, a[i]);
}

static void trigger(enum trigger t)
{
	void *a[FIRST];
	void *p;

	switch (t) {
	case T_CORRUPTED:
		take_first(a);
		safety_raw_write_word(a[FIRST - 2], 0,
		                      (uintptr_t)0xdeadbeefcafebabeull);
		for (int i = 0; i < COUNT && atomic_load(&handler_calls) == 0;
		     i++)
			p = pool_malloc(pool, BLOCK); /* kept: never freed */
		(void)p;
		break;
	case T_WRITE_AFTER_FREE:
		take_first(a);
		/* Past the link words: the fill pattern, not the list. */
		safety_raw_write(a[FIRST - 2], BLOCK - 1, 0x11);
		for (int i = 0; i < COUNT && atomic_load(&handler_calls) == 0;
		     i++)
			p = pool_malloc(pool, BLOCK);
		(void)p;
		break;
	case T_DOUBLE_FREE:
		p = pool_malloc(pool, BLOCK);
		pool_free(pool, p);
		pool_free(pool, p);
		break;
	case T_INVALID_FREE:
		p = pool_malloc(pool, BLOCK);
		pool_free(pool, (char *)p + 8);
		pool_free(pool, p);
		break;
	case T_REALLOC_FREED:
		p = pool_malloc(pool, BLOCK);
		pool_free(pool, p);
		CHECK(pool_realloc(pool, p, BLOCK / 2) == NULL,
		      "%s: pool_realloc() of a freed block", case_name);
		break;
	case T_REALLOC_INTERIOR:
		p = pool_malloc(pool, BLOCK);
		CHECK(pool_realloc(pool, (char *)p + 8, BLOCK / 2) == NULL,
		      "%s: pool_realloc() of an interior pointer", case_name);
		pool_free(pool, p);
		break;
	case T_TRIGGERS:
		break;
	}
}

/* The child: one case.  Exits 0 when it passed. */
static void run_case(const struct safety_mode *mode, enum trigger t, bool other)
{
	alarm(CASE_SECONDS);
	atomic_store(&safety_failures, 0); /* the parent's are not ours */
	int flags =
	    mode->flag | (t == T_WRITE_AFTER_FREE ? POOL_DEBUG_FILL : 0);
	pool = pool_init(BLOCK, COUNT, flags);
	REQUIRE(pool != NULL, "%s: pool_init: %s", case_name, strerror(errno));
	reporter = pthread_self();
	wait_for_other = other;
	safety_reports_reset();
	pool_set_error_handler(handler, &handler_calls);

	pthread_t thread;
	if (other)
		REQUIRE(pthread_create(&thread, NULL, other_thread, NULL) == 0,
		        "pthread_create");
	trigger(t);
	atomic_store(&other_stop, true);
	if (other)
		pthread_join(thread, NULL);

	CHECK(atomic_load(&handler_calls) == 1,
	      "%s: the handler was called %u times, not once", case_name,
	      atomic_load(&handler_calls));
	CHECK(safety_reported(triggers[t].error) == 1,
	      "%s: not reported as error %d", case_name,
	      (int)triggers[t].error);
	const char *fn = atomic_load(&safety_seen.last_function);
	CHECK(fn != NULL && strcmp(fn, triggers[t].function) == 0,
	      "%s: reported by %s, not %s", case_name, fn ? fn : "(nothing)",
	      triggers[t].function);
	if (other)
		CHECK(atomic_load(&other_calls) >= PROGRESS,
		      "%s: the other thread made %lu calls", case_name,
		      atomic_load(&other_calls));

	/* And the pool goes on working after the handler returned. */
	void *p = pool_malloc(pool, BLOCK);
	CHECK(p != NULL, "%s: pool_malloc() after the report", case_name);
	pool_free(pool, p);
	pool_set_error_handler(NULL, NULL);
	exit(atomic_load(&safety_failures) == 0 ? 0 : 1);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = ": no progress within the alarm: the "
	                          "handler deadlocked, or the other thread "
	                          "was blocked while it ran\n";
	ssize_t w = write(STDERR_FILENO, case_name, strlen(case_name));
	w = write(STDERR_FILENO, msg, sizeof msg - 1);
	(void)w;
	_exit(2);
}

int main(void)
{
	unsetenv("SHIFTPOOL_DEBUG");
	unsetenv("SHIFTPOOL_TRACE");
	signal(SIGALRM, on_alarm);
	unsigned cases = 0, failed = 0;
	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++)
		for (int t = 0; t < T_TRIGGERS; t++)
			for (int other = 0; other < 2; other++) {
				const struct safety_mode *mode =
				    &safety_modes[m];
				if (other && mode->flag == POOL_SINGLE)
					continue; /* one thread per pool */
				snprintf(case_name, sizeof case_name,
				         "%s, %s%s", mode->name,
				         triggers[t].name,
				         other ? ", another thread busy" : "");
				fflush(NULL);
				pid_t pid = fork();
				REQUIRE(pid >= 0, "fork: %s", strerror(errno));
				if (pid == 0)
					run_case(mode, (enum trigger)t, other);
				int status;
				REQUIRE(waitpid(pid, &status, 0) == pid,
				        "waitpid: %s", strerror(errno));
				cases++;
				bool ok = WIFEXITED(status) &&
				          WEXITSTATUS(status) == 0;
				if (!ok) {
					failed++;
					safety_fail(__FILE__, __LINE__,
					            "%s: status 0x%x",
					            case_name,
					            (unsigned)status);
				}
				printf("%-60s %s\n", case_name,
				       ok ? "ok" : "FAILED");
			}
	printf("%u cases, %u failed\n", cases, failed);
	return safety_result("safety-handler");
}
