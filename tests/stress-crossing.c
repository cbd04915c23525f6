/*
 * The stress part: objects crossing threads.  T threads, each taking
 * random steps over its own slots and a shared array of objects (25% of
 * steps swap an object into the shared array, so blocks are freed by
 * other threads), rounds in which every thread exits and new ones start;
 * the objects and their checks are stress-objects.c.  At quiescence after
 * every round the table's live blocks equal pool_stats()'s in_use; at the
 * end in_use == 0, allocs == frees == what the test counted, fallback
 * allocs == fallback frees, and one thread can take every block of the
 * pool again.  Meanwhile a reader calls pool_stats() and pool_trim()
 * without pause (the objects' contents are checked, so a trim that took a
 * live block's page would show).  Each
 * worker is interrupted by a timer every millisecond and yields its core
 * in the handler (--preempt-us), so threads stop at random points even on
 * two cores.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shiftpool.h"
#include "stress-objects.h"
#include "stress.h"

struct stress_config {
	int flags[2];
	int npools;
	unsigned threads;
	unsigned rounds;
	size_t steps; /* per thread per round */
	uint64_t seed;
	const char *name;
};

/* ------------------------------------------------------------ checks */

/* What holds at any quiescent moment: the pool counts what the table
 * holds, within its capacity. */
static void check_consistent(const struct tracked *tr, const pool_stats_t *st,
                             const char *when)
{
	int pi = tr->index;
	size_t live = owner_live(tr->owner, tr->block_count);
	CHECK(st->in_use == live,
	      "%s: pool %d (%s): pool_stats in_use %zu, but the test holds "
	      "%zu blocks",
	      when, pi, mode_name(tr->flags), st->in_use, live);
	CHECK(st->in_use <= tr->block_count &&
	          st->peak_in_use <= tr->block_count,
	      "%s: pool %d: in_use %zu / peak %zu beyond %zu blocks", when, pi,
	      st->in_use, st->peak_in_use, tr->block_count);
	CHECK(st->allocs - st->frees == st->in_use,
	      "%s: pool %d: allocs %" PRIu64 " - frees %" PRIu64
	      " != in_use %zu",
	      when, pi, st->allocs, st->frees, st->in_use);
}

/* At the end: nothing in use, and the pool counted what the test did. */
static void check_final(const struct stress *s, int pi, const pool_stats_t *st,
                        const char *when)
{
	const struct counts *t = &s->total;
	CHECK(st->in_use == 0, "%s: pool %d: in_use %zu at the end", when, pi,
	      st->in_use);
	CHECK(st->allocs == t->allocs[pi] && st->frees == t->frees[pi],
	      "%s: pool %d: pool counted %" PRIu64 " allocs / %" PRIu64
	      " frees, the test %" PRIu64 " / %" PRIu64,
	      when, pi, st->allocs, st->frees, t->allocs[pi], t->frees[pi]);
	CHECK(st->fallback_allocs == st->fallback_frees &&
	          st->fallback_allocs >= t->fb_allocs[pi],
	      "%s: pool %d: fallback allocs %" PRIu64 ", frees %" PRIu64
	      ", the test made %" PRIu64,
	      when, pi, st->fallback_allocs, st->fallback_frees,
	      t->fb_allocs[pi]);
}

static void check_quiescent(struct stress *s, const char *when, bool final)
{
	for (int pi = 0; pi < s->npools; pi++) {
		pool_stats_t st = stats_of(s->pools[pi].pool);
		check_consistent(&s->pools[pi], &st, when);
		if (final)
			check_final(s, pi, &st, when);
	}
}

/* ------------------------------------------------------------ reader */

/*
 * Reads pool_stats() over and over while the workers run and threads come
 * and go (their counters are folded in at exit): it must always succeed,
 * and in POOL_LOCKED mode, where it reads under the lock, in_use never
 * exceeds the pool.  (POOL_PER_THREAD counters are exact only at rest.)
 * Between reads it trims the pools: what the workers free is given back
 * and handed out again all the time.
 */
struct stats_reader {
	struct stress *s;
	_Atomic bool stop;
	/* Set by the main thread for a check at rest; the reader answers
	 * with paused, out of every call, until hold is cleared. */
	_Atomic bool hold;
	_Atomic bool paused;
	uint64_t reads;
};

static void check_stats_during_run(const struct tracked *tr)
{
	pool_stats_t st = stats_of(tr->pool);
	CHECK(st.block_count == tr->block_count &&
	          st.block_size == tr->block_size,
	      "pool_stats during the run: %zu blocks of %zu", st.block_count,
	      st.block_size);
	if ((tr->flags & POOL_MODE_MASK) == POOL_LOCKED)
		CHECK(st.in_use <= tr->block_count &&
		          st.peak_in_use <= tr->block_count,
		      "pool_stats during the run: in_use %zu, peak %zu of %zu "
		      "blocks",
		      st.in_use, st.peak_in_use, tr->block_count);
}

static void *stats_reader_fn(void *arg)
{
	struct stats_reader *r = arg;
	while (!atomic_load_explicit(&r->stop, memory_order_acquire)) {
		if (atomic_load_explicit(&r->hold, memory_order_acquire)) {
			atomic_store_explicit(&r->paused, true,
			                      memory_order_release);
			while (atomic_load_explicit(&r->hold,
			                            memory_order_acquire))
				sched_yield();
			atomic_store_explicit(&r->paused, false,
			                      memory_order_release);
			continue;
		}
		for (int pi = 0; pi < r->s->npools; pi++) {
			check_stats_during_run(&r->s->pools[pi]);
			r->s->trimmed += pool_trim(r->s->pools[pi].pool);
			r->reads++;
		}
		sched_yield();
	}
	return NULL;
}

/* ------------------------------------------------------------ the run */

static struct stress *stress_new(const struct stress_config *cfg)
{
	struct stress *s = calloc(1, sizeof *s);
	CHECK(s != NULL, "out of memory");
	static const size_t block_sizes[2] = {64, 128};
	/* Enough blocks that few threads never exhaust the pool and 32 or 64
	 * do (then the fallback serves). */
	static const size_t block_counts[2] = {512, 256};
	s->npools = cfg->npools;
	for (int pi = 0; pi < cfg->npools; pi++)
		tracked_init(&s->pools[pi], pi, block_sizes[pi],
		             block_counts[pi], cfg->flags[pi]);
	s->max_size = 4 * block_sizes[cfg->npools - 1];
	s->ntransfer = 512;
	s->transfer = calloc(s->ntransfer, sizeof *s->transfer);
	CHECK(s->transfer != NULL, "out of memory");
	s->steps = cfg->steps;
	check_pthread(pthread_mutex_init(&s->counts_lock, NULL), "mutex");
	return s;
}

static void stress_free(struct stress *s)
{
	for (int pi = 0; pi < s->npools; pi++)
		tracked_destroy(&s->pools[pi]);
	pthread_mutex_destroy(&s->counts_lock);
	free(s->transfer);
	free(s);
}

/* One round: cfg->threads workers start, take their steps and exit. */
static void run_round(struct stress *s, const struct stress_config *cfg,
                      pthread_t *threads, struct worker *workers)
{
	for (unsigned i = 0; i < cfg->threads; i++) {
		memset(&workers[i], 0, sizeof workers[i]);
		workers[i].s = s;
		workers[i].serial = next_serial();
		workers[i].rng = mix64(cfg->seed ^ mix64(workers[i].serial));
	}
	start_threads(threads, cfg->threads, stress_thread, workers,
	              sizeof *workers);
	join_threads(threads, cfg->threads);
}

/* The rounds, with the reader running beside them. */
static void run_rounds(struct stress *s, const struct stress_config *cfg)
{
	pthread_t *threads = calloc(cfg->threads, sizeof *threads);
	struct worker *workers = calloc(cfg->threads, sizeof *workers);
	CHECK(threads && workers, "out of memory");
	struct stats_reader reader = {.s = s};
	pthread_t reader_thread;
	start_thread(&reader_thread, stats_reader_fn, &reader);
	for (unsigned round = 0; round < cfg->rounds; round++) {
		run_round(s, cfg, threads, workers);
		/* At rest: the reader is held out of its calls too.  Its
		 * pool_trim() drains the remote frees of the spans nobody
		 * holds, and a drain under way has a claimed block's claim
		 * taken and its out bit not yet cleared: pool_stats(), exact
		 * only when no thread is inside a call, counts it in use. */
		atomic_store_explicit(&reader.hold, true, memory_order_release);
		while (
		    !atomic_load_explicit(&reader.paused, memory_order_acquire))
			sched_yield();
		check_quiescent(s, "after a round", false);
		atomic_store_explicit(&reader.hold, false,
		                      memory_order_release);
		/* Resumed before the next hold, which must not take this
		 * pause's answer for its own. */
		while (
		    atomic_load_explicit(&reader.paused, memory_order_acquire))
			sched_yield();
	}
	atomic_store_explicit(&reader.stop, true, memory_order_release);
	join_thread(reader_thread);
	free(threads);
	free(workers);
}

/* Frees what is left in the shared array, from the main thread. */
static void drain_transfer(struct stress *s)
{
	struct worker main_w = {.s = s, .serial = next_serial()};
	for (size_t j = 0; j < s->ntransfer; j++) {
		void *p = atomic_exchange(&s->transfer[j], NULL);
		if (p != NULL)
			obj_free(&main_w, p);
	}
	counts_add(&s->total, &main_w.c);
}

static const char *pools_name(const struct stress_config *cfg)
{
	if (cfg->npools == 1)
		return mode_name(cfg->flags[0]);
	return cfg->flags[0] == cfg->flags[1] ? "per-thread+per-thread"
	                                      : "locked+per-thread";
}

static void stress_report(const struct stress_config *cfg,
                          const struct stress *s, double seconds)
{
	uint64_t pool_allocs = 0, fb = 0;
	for (int pi = 0; pi < s->npools; pi++) {
		pool_allocs += s->total.allocs[pi];
		fb += s->total.fb_allocs[pi];
	}
	printf("%-9s %-21s threads=%-2u rounds=%-3u cycles=%-5" PRIu64
	       " steps=%-8zu objects=%-8" PRIu64 " pool=%-8" PRIu64
	       " fallback=%-7" PRIu64 " (pool empty %-6" PRIu64
	       ") crossed=%-7" PRIu64 " trimmed=%-6" PRIu64 "KiB %.2fs OK\n",
	       cfg->name, pools_name(cfg), cfg->threads, cfg->rounds,
	       (uint64_t)cfg->rounds * cfg->threads,
	       cfg->steps * cfg->threads * cfg->rounds, s->total.objects,
	       pool_allocs, fb, s->total.exhausted, s->total.crossed,
	       s->trimmed >> 10, seconds);
	fflush(stdout);
}

void run_stress(const struct stress_options *o, const char *name,
                const int *flags, int npools, unsigned threads)
{
	struct stress_config cfg = {
	    .flags = {flags[0], npools > 1 ? flags[1] : 0},
	    .npools = npools,
	    .threads = threads,
	    .rounds = o->rounds,
	    .steps = o->steps ? o->steps
	                      : o->total_steps / (threads * o->rounds) + 1,
	    .seed = o->seed,
	    .name = name};
	struct stress *s = stress_new(&cfg);
	double t0 = now();
	run_rounds(s, &cfg);
	double t1 = now();
	drain_transfer(s);
	check_quiescent(s, "at the end", true);
	for (int pi = 0; pi < s->npools; pi++)
		check_whole_capacity(&s->pools[pi], "at the end");
	stress_report(&cfg, s, t1 - t0);
	stress_free(s);
}

void part_stress(const struct stress_options *o, int mode)
{
	for (int t = 0; t < o->nthreads; t++)
		run_stress(o, "stress", &mode, 1, o->threads[t]);
}
