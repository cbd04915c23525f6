/*
 * Shared pieces of the concurrency stress programs, tests/stress and
 * tests/aba: sanitizer detection, failure reporting, a seeded random
 * generator and a clock, threads that must start, the preemption timer
 * that interrupts a worker at random points, thread serials, the test-side
 * owner table in which each block's word holds 0 or the stamp of the
 * object holding it, and a pool tracked through such a table.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_CONCURRENCY_H
#define SHIFTPOOL_CONCURRENCY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "modes.h" /* mode_name() */
#include "shiftpool.h"

/* ------------------------------------------------------------ build */

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif
/* ThreadSanitizer holds back asynchronous signals until the thread's next
 * intercepted call, so the preemption timer cannot stop a thread at a
 * random point there: it is off by default in such a build. */
#if defined(__SANITIZE_THREAD__)
#define TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_BUILD 1
#endif
#endif
#ifndef TSAN_BUILD
#define TSAN_BUILD 0
#endif

/* ------------------------------------------------------------ failure */

/* The program's name, the first word of every line it prints about a
 * failure ("stress", "aba"); set by concurrency_start(). */
extern const char *concurrency_name;
/* The part of the program running, printed in brackets after FAIL; NULL
 * (the default) prints none. */
extern const char *concurrency_part;

/* Prints "NAME: FAIL [PART] FILE:LINE: COND: message" and aborts. */
void failf(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond))                                                   \
			failf(__FILE__, __LINE__, #cond, __VA_ARGS__);         \
	} while (0)

/* ------------------------------------------------------------ helpers */

/* The splitmix64 finalizer, and the generator built on it. */
uint64_t mix64(uint64_t x);
uint64_t rnd(uint64_t *state);

/* CLOCK_MONOTONIC in seconds. */
double now(void);

/* pool_stats(), which must succeed. */
pool_stats_t stats_of(const pool_t *pool);

/* ------------------------------------------------------------ threads */

/* Prints "NAME: what: error" and aborts unless rc, a pthread result, is 0. */
void check_pthread(int rc, const char *what);

void start_thread(pthread_t *thread, void *(*fn)(void *), void *arg);
void join_thread(pthread_t thread);

/* Starts n threads running fn, thread i on the i-th element of args, an
 * array of elements of size bytes; join_threads() waits for them. */
void start_threads(pthread_t *threads, size_t n, void *(*fn)(void *),
                   void *args, size_t size);
void join_threads(const pthread_t *threads, size_t n);

/* Every thread of a run gets a serial, unique and never 0; stamps and
 * object ids are serial << 32 | n. */
uint32_t next_serial(void);

/* ------------------------------------------------------------ preemption */

/*
 * Preemption at random points.  On a machine with few cores the window of
 * a lock-free pop (between reading the top's next link and the CAS) is a
 * few nanoseconds and a thread is rarely descheduled inside it.  So each
 * worker arms a timer of its own (SIGEV_THREAD_ID) that interrupts it
 * every preempt_us microseconds wherever it is, and the handler yields the
 * core: the thread stops mid-operation while the others run, the
 * interleaving that turns a stale link into a double hand-out.  0 turns it
 * off; the program sets its default (PREEMPT_DEFAULT_US) and --preempt-us.
 */
extern unsigned preempt_us;
#define PREEMPT_DEFAULT_US(us) (TSAN_BUILD ? 0u : (unsigned)(us))

/* Arms the calling thread's timer; false if it is off or not available.
 * An armed timer is deleted with timer_delete(). */
bool preempt_arm(timer_t *timer);

/* Interruptions so far, over all threads. */
uint64_t preempt_count(void);

/* ------------------------------------------------------------ run */

/* Whether STRESS_LONG in the environment asks for the long run. */
bool long_run_from_env(void);

/*
 * Parses the options both programs take: --long, --mode=locked,
 * --mode=per-thread and --preempt-us=N.  Returns false if arg is none of
 * them.  --mode= sets modes[0] and *nmodes = 1.
 */
bool common_option(const char *arg, bool *long_run, int *modes, int *nmodes);

/*
 * Before the first thread: names the program for failf(), installs the
 * preemption handler, starts the watchdog (a deadlock fails the test
 * instead of hanging it) and makes stdout line-buffered.
 */
void concurrency_start(const char *name, bool long_run);

/* --only=LIST: whether LIST (a comma list; NULL for every part) names
 * part. */
bool only_selected(const char *only, const char *part);

/* Prints "NAME: all OK in Ts (N preemptions by timer)". */
void concurrency_done(double t0);

/* ------------------------------------------------------------ owner table */

/*
 * One word per block of a pool: 0 while the block is free, else the stamp
 * of whoever holds it.  owner_take() claims a free block for stamp and
 * owner_release() gives it back; each returns false, with the word found
 * in *held, if the word was not what it should be (a block handed out
 * twice, a second owner).
 */
bool owner_take(_Atomic uint64_t *word, uint64_t stamp, uint64_t *held);
bool owner_release(_Atomic uint64_t *word, uint64_t stamp, uint64_t *held);

/* Blocks of the table held by someone.  Exact only at quiescence. */
size_t owner_live(_Atomic uint64_t *owner, size_t count);

/* ------------------------------------------------------------ tracked pool */

/*
 * One pool and the test's view of it: who holds each block.  owner[i] is
 * 0 while block i is free, else the id of the object living in it.  The
 * region's base is inferred from the first block seen: pool_owns() is a
 * pure range-and-alignment check, so the lowest k with
 * pool_owns(p - k * block_size) still 1 finds the first block.
 */
struct tracked {
	pool_t *pool;
	int flags;
	int index; /* this pool's number in a run (0 or 1) */
	size_t block_size;
	size_t block_count;
	unsigned shift;
	_Atomic uintptr_t base; /* 0 until the first block is seen */
	_Atomic uint64_t *owner;
};

/* Makes the pool (any failure fails the test) and its empty table. */
void tracked_init(struct tracked *tr, int index, size_t block_size,
                  size_t block_count, int flags);
void tracked_destroy(struct tracked *tr);

/* The index of a block of the pool in its region. */
size_t tracked_index(struct tracked *tr, const void *block);

/* Records that object id now holds p; returns whether p is a pool block
 * (else p must lie outside the region).  A block still held fails. */
bool track_alloc(struct tracked *tr, void *p, uint64_t id);

/* Releases object id's hold of p, just before p goes back to the pool;
 * a block the table gives to another object fails. */
void track_free(struct tracked *tr, void *p, uint64_t id);

/*
 * Takes every block of the pool from the calling thread, block i recorded
 * as held by id_base | (i + 1) and filled: each must be a block of the
 * pool, handed out once.  Returns them in an array from malloc().
 */
void **take_every_block(struct tracked *tr, uint64_t id_base, const char *when);

/* Gives back blocks[0..n), taken under id_base | (i + 1), and frees the
 * array. */
void give_back_blocks(struct tracked *tr, void **blocks, size_t n,
                      uint64_t id_base);

/* take_every_block(), then the next request must not be a block and
 * pool_stats() must count them all; then every block back and the
 * counters even.  when names the moment in a failure. */
void check_whole_capacity(struct tracked *tr, const char *when);

#endif
