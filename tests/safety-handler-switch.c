/*
 * pool_set_error_handler() while reports are under way (shiftpool.h: "a
 * report already under way calls the pair (handler, arg) that was current
 * when it began").  Reporter threads keep freeing a block twice, each on
 * a POOL_SINGLE pool of its own, while another thread keeps installing
 * three handlers in turn, each with its own argument.  Every report must
 * reach a handler with the argument it was installed with (handler 0 with
 * &cookie[0], and so on), every report must reach one handler exactly
 * once, and every switch must return the handler it replaced.
 *
 * Three, not two: a library that kept two slots and rewrote the older
 * one would rewrite it with the same pair each time when switching
 * between two.  The trace is on (to /dev/null), so each report writes it
 * out between choosing the pair and calling it: a window in which other
 * threads run.  A pair read while another thread rewrites it shows up as
 * a handler with another's argument; under ThreadSanitizer (configure
 * --enable-sanitizers=thread) as a data race as well, and the test must be
 * clean there.  Bounded by alarm(): nothing here waits on time.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <time.h>
#include <unistd.h>

#define REPORTERS    3
#define HANDLERS     3
#define REPORTS      200000 /* in all, at least */
#define SWITCHES     100000 /* at least */
#define MAX_SHOWN    10
#define TEST_SECONDS 240

static int cookie[HANDLERS];
static _Atomic unsigned long calls[HANDLERS], wrong_arg, switches;
static atomic_bool stop;

static void check_arg(int which, const void *arg)
{
	atomic_fetch_add_explicit(&calls[which], 1, memory_order_relaxed);
	if (arg == &cookie[which])
		return;
	if (atomic_fetch_add(&wrong_arg, 1) < MAX_SHOWN)
		safety_fail(__FILE__, __LINE__,
		            "handler %d called with arg %p, installed with %p "
		            "(cookies %p %p %p)",
		            which, arg, (void *)&cookie[which],
		            (void *)&cookie[0], (void *)&cookie[1],
		            (void *)&cookie[2]);
}

#define HANDLER(n)                                                             \
	static void handler_##n(const pool_t *pool, const char *function,      \
	                        const void *ptr, enum pool_error error,        \
	                        void *arg)                                     \
	{                                                                      \
		(void)pool, (void)function, (void)ptr, (void)error;            \
		check_arg(n, arg);                                             \
	}
HANDLER(0)
HANDLER(1)
HANDLER(2)

static pool_error_handler_fn *const handlers[HANDLERS] = {handler_0, handler_1,
                                                          handler_2};

struct reporter {
	pthread_t thread;
	unsigned long reports; /* the double frees it made */
};

static void *reporter(void *arg)
{
	struct reporter *r = arg;
	pool_t *pool = pool_init(64, 4, POOL_SINGLE);
	REQUIRE(pool != NULL, "pool_init: %s", strerror(errno));
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		void *p = pool_malloc(pool, 64);
		REQUIRE(p != NULL && pool_owns(pool, p), "pool_malloc");
		pool_free(pool, p);
		pool_free(pool, p); /* reported */
		r->reports++;
	}
	pool_destroy(pool);
	return NULL;
}

static void *switcher(void *arg)
{
	(void)arg;
	unsigned long shown = 0;
	int current = 0; /* installed by main */
	for (unsigned long n = 1; !atomic_load(&stop); n++) {
		int next = (int)(n % HANDLERS);
		pool_error_handler_fn *previous =
		    pool_set_error_handler(handlers[next], &cookie[next]);
		if (previous != handlers[current] && shown++ < MAX_SHOWN)
			safety_fail(__FILE__, __LINE__,
			            "switch %lu returned %p, not the handler "
			            "it replaced (%p)",
			            n, (void *)previous,
			            (void *)handlers[current]);
		current = next;
		atomic_fetch_add_explicit(&switches, 1, memory_order_relaxed);
	}
	return NULL;
}

static unsigned long handled(void)
{
	unsigned long sum = 0;
	for (int i = 0; i < HANDLERS; i++)
		sum += atomic_load(&calls[i]);
	return sum;
}

int main(void)
{
	alarm(TEST_SECONDS);
	unsetenv("SHIFTPOOL_DEBUG");
	setenv("SHIFTPOOL_TRACE", "/dev/null", 1);
	pool_set_error_handler(handlers[0], &cookie[0]);

	struct reporter r[REPORTERS] = {{0}};
	pthread_t s;
	for (int i = 0; i < REPORTERS; i++)
		REQUIRE(pthread_create(&r[i].thread, NULL, reporter, &r[i]) ==
		            0,
		        "pthread_create");
	REQUIRE(pthread_create(&s, NULL, switcher, NULL) == 0,
	        "pthread_create");
	/* Until enough of both happened, however long that takes. */
	while ((handled() < REPORTS || atomic_load(&switches) < SWITCHES) &&
	       atomic_load(&wrong_arg) < MAX_SHOWN) {
		struct timespec nap = {0, 10 * 1000 * 1000};
		nanosleep(&nap, NULL);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < REPORTERS; i++)
		pthread_join(r[i].thread, NULL);
	pthread_join(s, NULL);
	pool_set_error_handler(NULL, NULL);

	unsigned long made = 0;
	for (int i = 0; i < REPORTERS; i++)
		made += r[i].reports;
	CHECK(handled() == made, "%lu double frees made, %lu reports handled",
	      made, handled());
	printf("%lu reports (handler 0: %lu, 1: %lu, 2: %lu) during %lu "
	       "switches, %lu with the wrong arg\n",
	       handled(), atomic_load(&calls[0]), atomic_load(&calls[1]),
	       atomic_load(&calls[2]), atomic_load(&switches),
	       atomic_load(&wrong_arg));
	return safety_result("safety-handler-switch");
}
