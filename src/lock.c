/*
 * The waiting side of POOL_LOCKED's lock.  Taking a free lock and
 * releasing it are inline functions (lock_acquire() and lock_release() in
 * internal.h); a thread that finds the lock taken waits here.
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <sched.h>

/* ------------------------------------------------------------ constants */

/*
 * A waiter backs off exponentially between its looks at the lock, from
 * LOCK_BACKOFF_MIN pauses up to LOCK_BACKOFF_MAX pauses.  Once it waits
 * LOCK_BACKOFF_MAX pauses, it yields its core after every LOCK_YIELD_AFTER
 * such waits.  Each look takes the lock's cache line (and, at the next
 * acquisition, the list's) away from the thread that holds the lock.
 * Under contention, waiters that look less often let the holder run many
 * short sections with these lines in its own cache.  When the waiters
 * looked after every pause, every section had to wait for the lines to
 * come back.
 */
#define LOCK_BACKOFF_MIN 8
#define LOCK_BACKOFF_MAX 64
#define LOCK_YIELD_AFTER 4

/* ------------------------------------------------------------ helpers */

static void pause_for(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#else
		atomic_signal_fence(memory_order_seq_cst);
#endif
	}
}

/* ------------------------------------------------------------ internal API */

void lock_give_way(void)
{
	pause_for(2 * LOCK_BACKOFF_MAX);
	sched_yield();
}

void lock_wait(struct spin_lock *lock)
{
	unsigned backoff = LOCK_BACKOFF_MIN, at_max = 0;

	atomic_fetch_add_explicit(&lock->waiting, 1, memory_order_relaxed);
	for (;;) {
		uint32_t expected = 0;
		if (atomic_load_explicit(&lock->state, memory_order_relaxed) ==
		        0 &&
		    atomic_compare_exchange_weak_explicit(
		        &lock->state, &expected, 1, memory_order_acquire,
		        memory_order_relaxed)) {
			atomic_fetch_sub_explicit(&lock->waiting, 1,
			                          memory_order_relaxed);
			return;
		}
		pause_for(backoff);
		if (backoff < LOCK_BACKOFF_MAX) {
			backoff *= 2;
		} else if (++at_max == LOCK_YIELD_AFTER) {
			at_max = 0;
			sched_yield();
		}
	}
}
