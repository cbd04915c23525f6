/*
 * The bench worker's threaded workloads of many sizes (see README.md):
 * mixed (libcurl's sizes), and four modelled on the published allocator
 * benchmarks, larson (a server whose threads hand their objects to
 * successors), xmalloc (producers' objects freed by consumers),
 * glibc-thread (glibc's bench-malloc-thread: a working set freed in random
 * order) and alloc-test (a live set that grows and shrinks), with replace,
 * the many-threads case: H live blocks of one size per thread, up to 256
 * threads.  Written against peer.h like workloads.c; the pool rows are
 * pool sets (peer_sized_malloc()), but for replace, which asks for one
 * size and runs the pools in every mode.
 *
 * The same shape as workloads.c: set-up outside the timed region, an
 * untimed pass of the same work, then the timed one.  Every object gets
 * a tag in its first 8 bytes, read back before its free and summed: the
 * work is fixed, so the sum is the same for every allocator.  Random
 * sizes and choices are drawn, seeded, before the timed region into a
 * script of steps each thread cycles through.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "harness.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ mixed */

/*
 * libcurl's allocations by size: what examples/curl-pool counted for a
 * 1 MiB download from bench/httpd with libcurl 7.88.1 (Debian 12; the
 * table in examples/README.md), 66 calls in power-of-two buckets.  A
 * request picks a bucket with these weights, then a size uniformly within
 * it, above half its bound (1 to 16 for the first).
 */
static const struct mixed_bucket {
	uint32_t upto;  /* bytes */
	uint32_t calls; /* libcurl's, of 66 */
} mixed_profile[] = {
    {16, 21}, {32, 9},   {64, 16},  {128, 10}, {256, 1},
    {512, 2}, {1024, 2}, {2048, 2}, {8192, 2}, {32768, 1},
};
#define MIXED_BUCKETS (sizeof(mixed_profile) / sizeof(mixed_profile[0]))

/* A thread's operations come from a script of this many steps, made
 * before the timed region and cycled, so that drawing them costs every
 * allocator one load. */
#define MIXED_SCRIPT ((size_t)1 << 16)

struct mixed_step {
	uint32_t size;   /* the request */
	uint32_t victim; /* the window slot freed and refilled */
};

struct mixed {
	const struct bench_case *c;
	struct peer *shared;
	int private_pools; /* POOL_SINGLE sets: one per thread */
	/* ready: every thread set up; go: the clock runs (the main thread
	 * starts it before it releases them); done: every thread's ops
	 * are done. */
	pthread_barrier_t ready, go, done;
};

struct mixed_thread {
	_Alignas(CACHE_LINE) struct mixed *m;
	pthread_t thread;
	uint64_t seed;
	struct peer own;
	struct mixed_step *script;
	void **live;         /* the window */
	uint32_t *live_size; /* what each live object asked for */
	char *floor_memory;  /* MIXED_WINDOW slots of MIXED_MAX_SIZE */
	uint64_t sum;
	uint64_t live_bytes, rounded_bytes;
	uint64_t pool_allocs, fallback_allocs;
};

static uint32_t mixed_size(uint64_t *random)
{
	uint32_t total = 0, pick, lo;
	size_t b;

	for (b = 0; b < MIXED_BUCKETS; b++)
		total += mixed_profile[b].calls;
	pick = (uint32_t)(random_next(random) % total);
	for (b = 0; pick >= mixed_profile[b].calls; b++)
		pick -= mixed_profile[b].calls;
	lo = b == 0 ? 0 : mixed_profile[b].upto / 2;
	return lo + 1 +
	       (uint32_t)(random_next(random) % (mixed_profile[b].upto - lo));
}

/* What a pool set hands out for a request: its class's block (the
 * fallback's own rounding above the largest class is not counted). */
static uint64_t mixed_rounded(size_t size, size_t max_block)
{
	size_t block = MIXED_MIN_BLOCK;

	if (size > max_block)
		return size;
	while (block < size)
		block *= 2;
	return block;
}

/* Frees window slot victim and allocates size bytes in its place, tagged
 * in its first (up to) 8 bytes.  Returns the old object's tag. */
static inline uint64_t mixed_replace(struct mixed_thread *t, struct peer *peer,
                                     uint32_t victim, uint32_t size,
                                     uint64_t tag)
{
	uint64_t old = 0;
	char *p = t->live[victim];

	if (p != NULL) {
		uint32_t n = t->live_size[victim];
		memcpy(&old, p, n < 8 ? n : 8);
		peer_sized_free(peer, p);
	}
	p = check_allocated(
	    peer_sized_malloc(
	        peer, SLOT(t->floor_memory + (size_t)victim * MIXED_MAX_SIZE),
	        size),
	    size);
	memcpy(p, &tag, size < 8 ? size : 8);
	escape(p);
	t->live[victim] = p;
	t->live_size[victim] = size;
	return old;
}

/* Operations first .. first + count of the script. */
static uint64_t mixed_ops(struct mixed_thread *t, struct peer *peer,
                          uint64_t first, uint64_t count)
{
	uint64_t k, sum = 0;

	for (k = first; k < first + count; k++) {
		const struct mixed_step *s = &t->script[k & (MIXED_SCRIPT - 1)];
		sum += mixed_replace(t, peer, s->victim, s->size, k + 1);
	}
	return sum;
}

static void *mixed_thread_run(void *arg)
{
	struct mixed_thread *t = arg;
	const struct bench_case *c = t->m->c;
	struct peer *peer = t->m->shared;
	uint64_t random = t->seed, first = 0;
	size_t i;

	peer_thread_enter();
	if (t->m->private_pools) {
		if (peer_open(&t->own, c) != 0)
			worker_fail("a thread's private pool set failed");
		peer = &t->own;
	}
	t->script = harness_alloc(MIXED_SCRIPT * sizeof(*t->script));
	for (i = 0; i < MIXED_SCRIPT; i++) {
		t->script[i].size = mixed_size(&random);
		t->script[i].victim =
		    (uint32_t)(random_next(&random) % MIXED_WINDOW);
	}
	t->live = harness_alloc(MIXED_WINDOW * sizeof(*t->live));
	t->live_size = harness_alloc(MIXED_WINDOW * sizeof(*t->live_size));
	if (PEER_IS_FLOOR)
		t->floor_memory =
		    harness_alloc((size_t)MIXED_WINDOW * MIXED_MAX_SIZE);
	/* The window fills with the script's first sizes. */
	for (i = 0; i < MIXED_WINDOW; i++)
		mixed_replace(t, peer, (uint32_t)i, t->script[i].size, 0);
	/* An untimed pass of as many operations as the timed one. */
	if (!c->cold) {
		mixed_ops(t, peer, first, c->repeat);
		first += c->repeat;
	}

	pthread_barrier_wait(&t->m->ready);
	pthread_barrier_wait(&t->m->go);
	t->sum = mixed_ops(t, peer, first, c->repeat);
	pthread_barrier_wait(&t->m->done);

	for (i = 0; i < MIXED_WINDOW; i++) {
		t->live_bytes += t->live_size[i];
		t->rounded_bytes +=
		    mixed_rounded(t->live_size[i], c->block_size);
		peer_sized_free(peer, t->live[i]);
	}
	if (t->m->private_pools) {
		peer_count(&t->own, &t->pool_allocs, &t->fallback_allocs);
		peer_close(&t->own);
	}
	free(t->floor_memory);
	free(t->live_size);
	free(t->live);
	free(t->script);
	peer_thread_leave();
	return NULL;
}

void run_mixed(const struct bench_case *c, struct peer *peer,
               struct workload_result *out)
{
	struct mixed m;
	struct mixed_thread *threads;
	struct timed t;
	size_t i;

	memset(&m, 0, sizeof(m));
	m.c = c;
	m.shared = peer;
	m.private_pools = case_private_pools(c);
	barrier_init(&m.ready, c->threads + 1);
	barrier_init(&m.go, c->threads + 1);
	barrier_init(&m.done, c->threads + 1);
	threads = harness_alloc(c->threads * sizeof(*threads));
	for (i = 0; i < c->threads; i++) {
		threads[i].m = &m;
		/* A stream per thread, the same for every allocator. */
		threads[i].seed = c->seed + i * 0x9e3779b97f4a7c15ull;
		thread_start(&threads[i].thread, mixed_thread_run, &threads[i]);
	}
	pthread_barrier_wait(&m.ready);
	timed_start(&t);
	pthread_barrier_wait(&m.go);
	pthread_barrier_wait(&m.done);
	timed_stop(&t, out);
	for (i = 0; i < c->threads; i++) {
		pthread_join(threads[i].thread, NULL);
		out->checksum += threads[i].sum;
		out->mixed_live_bytes += threads[i].live_bytes;
		out->mixed_rounded_bytes += threads[i].rounded_bytes;
		out->pool_allocs += threads[i].pool_allocs;
		out->fallback_allocs += threads[i].fallback_allocs;
	}
	out->ops = c->threads * c->repeat;
	pthread_barrier_destroy(&m.ready);
	pthread_barrier_destroy(&m.go);
	pthread_barrier_destroy(&m.done);
	free(threads);
}

/* ------------------------------------------------ the mt workloads' parts */

/* A thread's random steps: the size of its next request and 32 random
 * bits that choose the slot (and, for alloc-test, the call).  A script
 * has as many steps as the thread makes operations, up to MT_SCRIPT, a
 * power of two, and is then cycled: 256 threads' scripts stay small
 * beside the memory the allocators are measured by. */
#define MT_SCRIPT ((size_t)1 << 16)

struct mt_step {
	uint32_t size;
	uint32_t pick;
};

/*
 * A request size from min to max: larson and xmalloc draw uniformly, as
 * theirs do; glibc-thread and alloc-test draw each power of two alike and
 * then uniformly within it, a density close to the 1/size^0.95 of
 * glibc's bench-malloc-thread, so that small requests are the most
 * frequent and large ones still come.
 */
static uint32_t mt_size(const struct bench_case *c, uint64_t *random)
{
	size_t lo = c->min_size, hi = c->max_size, top;
	unsigned buckets = 1, b;

	if (c->workload == WORKLOAD_LARSON || c->workload == WORKLOAD_XMALLOC ||
	    lo == hi)
		return (uint32_t)(lo + random_next(random) % (hi - lo + 1));
	while ((lo << buckets) <= hi)
		buckets++;
	b = (unsigned)(random_next(random) % buckets);
	lo <<= b;
	top = (lo << 1) - 1 < hi ? (lo << 1) - 1 : hi;
	return (uint32_t)(lo + random_next(random) % (top - lo + 1));
}

/* The steps of a case's scripts, minus one: a mask. */
static uint64_t mt_script_mask(const struct bench_case *c)
{
	size_t steps = 64;

	while (steps < MT_SCRIPT && (steps < c->repeat || steps < c->live))
		steps <<= 1;
	return steps - 1;
}

/* The script of a thread whose stream starts at seed. */
static struct mt_step *mt_script(const struct bench_case *c, uint64_t seed)
{
	const size_t steps = mt_script_mask(c) + 1;
	struct mt_step *script = harness_alloc(steps * sizeof(*script));
	uint64_t random = seed;
	size_t i;

	for (i = 0; i < steps; i++) {
		script[i].size = mt_size(c, &random);
		script[i].pick = (uint32_t)random_next(&random);
	}
	return script;
}

/* A thread's stream: the same for every allocator, another per thread. */
static uint64_t mt_seed(const struct bench_case *c, size_t thread)
{
	return c->seed + (thread + 1) * 0x9e3779b97f4a7c15ull;
}

/* The request of a step: a set's (sized) or one pool's; the floor's slot
 * is given.  Always inlined, so that sized is a constant. */
static inline __attribute__((always_inline)) void *
mt_alloc(struct peer *peer, int sized, void *slot, size_t size)
{
	void *p = sized ? peer_sized_malloc(peer, slot, size)
	                : peer_malloc(peer, slot, size);
	return check_allocated(p, size);
}

static inline __attribute__((always_inline)) void mt_free(struct peer *peer,
                                                          int sized, void *p)
{
	if (sized)
		peer_sized_free(peer, p);
	else
		peer_free(peer, p);
}

/* An object's tag: its first 8 bytes (every request here has them). */
static inline uint64_t tag_read(const void *p)
{
	uint64_t tag;

	memcpy(&tag, p, sizeof(tag));
	return tag;
}

static inline void tag_write(void *p, uint64_t tag)
{
	memcpy(p, &tag, sizeof(tag));
	escape(p);
}

/*
 * A slot array: live objects, each of which a step replaces (frees and
 * allocates anew in its place).  larson, glibc-thread and replace.
 */
struct slots {
	const struct bench_case *c;
	struct mt_step *script;
	void **live;
	char *floor_memory; /* a slot of max_size per object */
	uint64_t next;      /* the script's next step */
	uint64_t base;      /* tags: base + step + 1, unique per array */
	uint64_t sum;
};

static void slots_init(struct slots *s, const struct bench_case *c,
                       size_t index)
{
	memset(s, 0, sizeof(*s));
	s->c = c;
	s->script = mt_script(c, mt_seed(c, index));
	s->live = harness_alloc(c->live * sizeof(*s->live));
	s->base = (uint64_t)index << 40;
	if (PEER_IS_FLOOR)
		s->floor_memory = harness_alloc(c->live * c->max_size);
}

static inline __attribute__((always_inline)) void
slots_replace(struct slots *s, struct peer *peer, int sized, uint64_t count)
{
	const uint64_t end = s->next + count;
	const size_t live = s->c->live, slot_bytes = s->c->max_size;
	const uint64_t mask = mt_script_mask(s->c);
	uint64_t k, sum = 0;

	for (k = s->next; k < end; k++) {
		const struct mt_step *step = &s->script[k & mask];
		size_t victim = step->pick % live;
		void *p = s->live[victim];

		if (p != NULL) {
			sum += tag_read(p);
			mt_free(peer, sized, p);
		}
		p = mt_alloc(peer, sized,
		             SLOT(s->floor_memory + victim * slot_bytes),
		             step->size);
		tag_write(p, s->base + k + 1);
		s->live[victim] = p;
	}
	s->next = end;
	s->sum += sum;
}

/* Fills every slot (untimed), in order, with the script's first sizes. */
static void slots_fill(struct slots *s, struct peer *peer, int sized)
{
	size_t i;

	for (i = 0; i < s->c->live; i++) {
		size_t size = s->script[i & mt_script_mask(s->c)].size;
		void *p =
		    mt_alloc(peer, sized,
		             SLOT(s->floor_memory + i * s->c->max_size), size);
		tag_write(p, 0);
		s->live[i] = p;
	}
}

static void slots_done(struct slots *s, struct peer *peer, int sized)
{
	size_t i;

	for (i = 0; i < s->c->live; i++)
		if (s->live[i] != NULL)
			mt_free(peer, sized, s->live[i]);
	free(s->floor_memory);
	free(s->live);
	free(s->script);
}

/* ------------------------------------------------------------ larson */

/*
 * larson: T chains of threads.  A chain's thread replaces random slots of
 * its array for one round, then starts its successor, which takes the
 * array over (and joins its predecessor), and ends; after the last round
 * the chain's thread waits at the done barrier.  So every round, each
 * object left in an array is freed by a thread other than the one that
 * allocated it, as in larson's server simulation, and threads come and
 * go all the time.
 */
struct larson {
	const struct bench_case *c;
	struct peer *peer;
	pthread_barrier_t done;
	uint64_t per_round;
};

struct larson_chain {
	_Alignas(CACHE_LINE) struct larson *l;
	struct slots slots;
	size_t round, rounds;
	pthread_t predecessor, last;
	int has_predecessor;
};

static void *larson_thread(void *arg)
{
	struct larson_chain *chain = arg;
	struct larson *l = chain->l;

	if (chain->has_predecessor)
		pthread_join(chain->predecessor, NULL);
	peer_thread_enter();
	slots_replace(&chain->slots, l->peer, 1, l->per_round);
	peer_thread_leave();
	if (++chain->round < chain->rounds) {
		pthread_t next;
		chain->predecessor = pthread_self();
		chain->has_predecessor = 1;
		thread_start(&next, larson_thread, chain);
		return NULL;
	}
	chain->last = pthread_self();
	pthread_barrier_wait(&l->done);
	return NULL;
}

/* One pass: every chain's rounds, the first threads started here. */
static void larson_pass(struct larson *l, struct larson_chain *chains)
{
	size_t i;

	for (i = 0; i < l->c->threads; i++) {
		pthread_t first;
		chains[i].round = 0;
		chains[i].has_predecessor = 0;
		thread_start(&first, larson_thread, &chains[i]);
	}
	pthread_barrier_wait(&l->done);
	for (i = 0; i < l->c->threads; i++)
		pthread_join(chains[i].last, NULL);
}

void run_larson(const struct bench_case *c, struct peer *peer,
                struct workload_result *out)
{
	struct larson l;
	struct larson_chain *chains =
	    harness_alloc(c->threads * sizeof(*chains));
	struct timed t;
	size_t i;

	memset(&l, 0, sizeof(l));
	l.c = c;
	l.peer = peer;
	l.per_round = c->repeat / c->rounds;
	barrier_init(&l.done, c->threads + 1);
	/* The main thread fills the arrays, as larson's does: the first
	 * round already frees what another thread allocated. */
	for (i = 0; i < c->threads; i++) {
		chains[i].l = &l;
		chains[i].rounds = c->rounds;
		slots_init(&chains[i].slots, c, i);
		slots_fill(&chains[i].slots, peer, 1);
	}
	if (!c->cold)
		larson_pass(&l, chains);
	for (i = 0; i < c->threads; i++)
		chains[i].slots.sum = 0;
	timed_start(&t);
	larson_pass(&l, chains);
	timed_stop(&t, out);
	for (i = 0; i < c->threads; i++) {
		out->checksum += chains[i].slots.sum;
		slots_done(&chains[i].slots, peer, 1);
	}
	out->ops = c->threads * l.per_round * c->rounds;
	pthread_barrier_destroy(&l.done);
	free(chains);
}

/* ------------------------------------------------------------ xmalloc */

/*
 * xmalloc: T producers fill batches of XMALLOC_BATCH objects and push
 * them on one stack guarded by a mutex (at most queue_depth batches, as
 * xmalloc-test's); T consumers pop them and free every object.  The
 * batch records are the harness's: each producer has its own, which the
 * consumers give back with their next pop, under the same lock.
 */
struct xbatch {
	struct xbatch *next;
	struct xproducer *owner;
	char *floor_memory; /* XMALLOC_BATCH slots of max_size */
	void *object[XMALLOC_BATCH];
};

struct xmalloc {
	const struct bench_case *c;
	struct peer *peer;
	pthread_mutex_t lock;
	pthread_cond_t nonempty, nonfull;
	struct xbatch *top;
	size_t queued, producing;
	pthread_barrier_t ready, go;
};

struct xproducer {
	_Alignas(CACHE_LINE) struct xmalloc *x;
	pthread_t thread;
	struct mt_step *script;
	struct xbatch *records, *spare; /* spare: under the lock */
	size_t index;
	uint64_t next; /* the script's next step */
};

struct xconsumer {
	_Alignas(CACHE_LINE) struct xmalloc *x;
	pthread_t thread;
	uint64_t sum;
};

static void *xmalloc_producer(void *arg)
{
	struct xproducer *p = arg;
	struct xmalloc *x = p->x;
	const size_t batches = x->c->repeat / XMALLOC_BATCH;
	const uint64_t mask = mt_script_mask(x->c);
	struct xbatch *b;
	size_t n, i;

	peer_thread_enter();
	pthread_mutex_lock(&x->lock);
	b = p->spare;
	p->spare = b->next;
	pthread_mutex_unlock(&x->lock);
	pthread_barrier_wait(&x->ready);
	pthread_barrier_wait(&x->go);
	for (n = 0; n < batches; n++) {
		for (i = 0; i < XMALLOC_BATCH; i++, p->next++) {
			const struct mt_step *s = &p->script[p->next & mask];
			void *o =
			    mt_alloc(x->peer, 1,
			             SLOT(b->floor_memory + i * x->c->max_size),
			             s->size);
			tag_write(o, ((uint64_t)p->index << 40) + p->next + 1);
			b->object[i] = o;
		}
		pthread_mutex_lock(&x->lock);
		while (x->queued >= x->c->queue_depth)
			pthread_cond_wait(&x->nonfull, &x->lock);
		b->next = x->top;
		x->top = b;
		x->queued++;
		pthread_cond_signal(&x->nonempty);
		/* There is always a spare: a producer has more records than
		 * the queue and the consumers can hold. */
		b = p->spare;
		p->spare = b->next;
		pthread_mutex_unlock(&x->lock);
	}
	pthread_mutex_lock(&x->lock);
	b->next = p->spare;
	p->spare = b;
	x->producing--;
	pthread_cond_broadcast(&x->nonempty);
	pthread_mutex_unlock(&x->lock);
	peer_thread_leave();
	return NULL;
}

static void *xmalloc_consumer(void *arg)
{
	struct xconsumer *k = arg;
	struct xmalloc *x = k->x;
	struct xbatch *b = NULL;
	size_t i;

	peer_thread_enter();
	pthread_barrier_wait(&x->ready);
	pthread_barrier_wait(&x->go);
	for (;;) {
		pthread_mutex_lock(&x->lock);
		if (b != NULL) { /* the record back to its producer */
			b->next = b->owner->spare;
			b->owner->spare = b;
		}
		while (x->top == NULL && x->producing > 0)
			pthread_cond_wait(&x->nonempty, &x->lock);
		b = x->top;
		if (b != NULL) {
			x->top = b->next;
			x->queued--;
			pthread_cond_signal(&x->nonfull);
		}
		pthread_mutex_unlock(&x->lock);
		if (b == NULL)
			break;
		for (i = 0; i < XMALLOC_BATCH; i++) {
			k->sum += tag_read(b->object[i]);
			mt_free(x->peer, 1, b->object[i]);
		}
	}
	peer_thread_leave();
	return NULL;
}

/* One pass: the producers' batches, all freed by the consumers. */
static void xmalloc_pass(struct xmalloc *x, struct xproducer *producers,
                         struct xconsumer *consumers,
                         struct workload_result *timed_out)
{
	const size_t threads = x->c->threads;
	struct timed t;
	size_t i;

	x->producing = threads;
	for (i = 0; i < threads; i++) {
		thread_start(&producers[i].thread, xmalloc_producer,
		             &producers[i]);
		thread_start(&consumers[i].thread, xmalloc_consumer,
		             &consumers[i]);
	}
	pthread_barrier_wait(&x->ready);
	timed_start(&t);
	pthread_barrier_wait(&x->go);
	for (i = 0; i < threads; i++) {
		pthread_join(producers[i].thread, NULL);
		pthread_join(consumers[i].thread, NULL);
	}
	if (timed_out != NULL)
		timed_stop(&t, timed_out);
}

void run_xmalloc(const struct bench_case *c, struct peer *peer,
                 struct workload_result *out)
{
	/* Records per producer: more than the queue and the consumers can
	 * hold at once, with one being filled. */
	const size_t records = c->queue_depth + c->threads + 2;
	struct xmalloc x;
	struct xproducer *producers;
	struct xconsumer *consumers;
	size_t i, r;

	memset(&x, 0, sizeof(x));
	x.c = c;
	x.peer = peer;
	pthread_mutex_init(&x.lock, NULL);
	pthread_cond_init(&x.nonempty, NULL);
	pthread_cond_init(&x.nonfull, NULL);
	barrier_init(&x.ready, 2 * c->threads + 1);
	barrier_init(&x.go, 2 * c->threads + 1);
	producers = harness_alloc(c->threads * sizeof(*producers));
	consumers = harness_alloc(c->threads * sizeof(*consumers));
	for (i = 0; i < c->threads; i++) {
		struct xproducer *p = &producers[i];
		p->x = &x;
		p->index = i;
		p->script = mt_script(c, mt_seed(c, i));
		p->records = harness_alloc(records * sizeof(*p->records));
		for (r = 0; r < records; r++) {
			p->records[r].owner = p;
			if (PEER_IS_FLOOR)
				p->records[r].floor_memory =
				    harness_alloc(XMALLOC_BATCH * c->max_size);
			p->records[r].next = p->spare;
			p->spare = &p->records[r];
		}
		consumers[i].x = &x;
	}
	if (!c->cold)
		xmalloc_pass(&x, producers, consumers, NULL);
	for (i = 0; i < c->threads; i++)
		consumers[i].sum = 0;
	xmalloc_pass(&x, producers, consumers, out);
	for (i = 0; i < c->threads; i++) {
		out->checksum += consumers[i].sum;
		for (r = 0; r < records; r++)
			free(producers[i].records[r].floor_memory);
		free(producers[i].records);
		free(producers[i].script);
	}
	out->ops = c->threads * (c->repeat / XMALLOC_BATCH) * XMALLOC_BATCH;
	pthread_barrier_destroy(&x.ready);
	pthread_barrier_destroy(&x.go);
	pthread_cond_destroy(&x.nonempty);
	pthread_cond_destroy(&x.nonfull);
	pthread_mutex_destroy(&x.lock);
	free(consumers);
	free(producers);
}

/* --------------------------------------------- glibc-thread, replace */

/*
 * glibc-thread and replace: each thread fills its slots, then replaces a
 * random one per operation.  glibc-thread's requests vary (the pool rows
 * are sets); replace's are of one size, on one pool with room for every
 * thread's blocks.  The threads are started and fill their slots before
 * the clock starts.
 */
struct window {
	const struct bench_case *c;
	struct peer *peer;
	pthread_barrier_t ready, go, done;
};

struct window_thread {
	_Alignas(CACHE_LINE) struct window *w;
	pthread_t thread;
	struct slots slots;
	size_t index;
};

static void *window_thread_run(void *arg)
{
	struct window_thread *t = arg;
	struct window *w = t->w;
	const struct bench_case *c = w->c;
	const int sized = c->workload != WORKLOAD_REPLACE;

	peer_thread_enter();
	slots_init(&t->slots, c, t->index);
	slots_fill(&t->slots, w->peer, sized);
	if (!c->cold) {
		if (sized)
			slots_replace(&t->slots, w->peer, 1, c->repeat);
		else
			slots_replace(&t->slots, w->peer, 0, c->repeat);
	}
	t->slots.sum = 0;
	pthread_barrier_wait(&w->ready);
	pthread_barrier_wait(&w->go);
	if (sized)
		slots_replace(&t->slots, w->peer, 1, c->repeat);
	else
		slots_replace(&t->slots, w->peer, 0, c->repeat);
	pthread_barrier_wait(&w->done);
	slots_done(&t->slots, w->peer, sized);
	peer_thread_leave();
	return NULL;
}

void run_window(const struct bench_case *c, struct peer *peer,
                struct workload_result *out)
{
	struct window w;
	struct window_thread *threads =
	    harness_alloc(c->threads * sizeof(*threads));
	struct timed t;
	size_t i;

	memset(&w, 0, sizeof(w));
	w.c = c;
	w.peer = peer;
	barrier_init(&w.ready, c->threads + 1);
	barrier_init(&w.go, c->threads + 1);
	barrier_init(&w.done, c->threads + 1);
	for (i = 0; i < c->threads; i++) {
		threads[i].w = &w;
		threads[i].index = i;
		thread_start(&threads[i].thread, window_thread_run,
		             &threads[i]);
	}
	pthread_barrier_wait(&w.ready);
	timed_start(&t);
	pthread_barrier_wait(&w.go);
	pthread_barrier_wait(&w.done);
	timed_stop(&t, out);
	for (i = 0; i < c->threads; i++) {
		pthread_join(threads[i].thread, NULL);
		out->checksum += threads[i].slots.sum;
	}
	out->ops = c->threads * c->repeat;
	pthread_barrier_destroy(&w.ready);
	pthread_barrier_destroy(&w.go);
	pthread_barrier_destroy(&w.done);
	free(threads);
}

/* ------------------------------------------------------------ alloc-test */

/*
 * alloc-test: each thread's live set grows, 6 steps in 10 a malloc and
 * the others a free of a random live object, until it holds c->live
 * objects, then shrinks, 4 in 10 a malloc, to c->live / 8, and so on.
 * The live objects are kept packed: a new one goes to a random position
 * (the one there moves to the end), a freed one's position takes the
 * last.  The floor keeps a stack of free slots of its memory.
 */
struct churn {
	const struct bench_case *c;
	struct peer *peer;
	pthread_barrier_t ready, go, done;
};

struct churn_thread {
	_Alignas(CACHE_LINE) struct churn *ch;
	pthread_t thread;
	struct mt_step *script;
	void **live;
	uint32_t *slot;       /* floor: each live object's slot */
	uint32_t *free_slots; /* floor: a stack of the unused ones */
	char *floor_memory;
	size_t count, free_count, index;
	int growing;
	uint64_t next, sum;
};

static void churn_ops(struct churn_thread *t, struct peer *peer, uint64_t ops)
{
	const size_t capacity = t->ch->c->live, low = capacity / 8;
	const size_t slot_bytes = t->ch->c->max_size;
	const uint64_t end = t->next + ops, mask = mt_script_mask(t->ch->c);
	uint64_t k, sum = 0;

	for (k = t->next; k < end; k++) {
		const struct mt_step *s = &t->script[k & mask];
		uint32_t decide = s->pick & 0xff, at = s->pick >> 8;
		int grow =
		    t->count == 0 || (t->count < capacity &&
		                      decide % 10 < (t->growing ? 6u : 4u));

		if (grow) {
			size_t pos = at % (t->count + 1);
			uint32_t slot = 0;
			void *p;
			if (PEER_IS_FLOOR)
				slot = t->free_slots[--t->free_count];
			p = mt_alloc(
			    peer, 1,
			    SLOT(t->floor_memory + (size_t)slot * slot_bytes),
			    s->size);
			tag_write(p, ((uint64_t)t->index << 40) + k + 1);
			t->live[t->count] = t->live[pos];
			t->live[pos] = p;
			if (PEER_IS_FLOOR) {
				t->slot[t->count] = t->slot[pos];
				t->slot[pos] = slot;
			}
			if (++t->count == capacity)
				t->growing = 0;
		} else {
			size_t pos = at % t->count;
			void *p = t->live[pos];
			sum += tag_read(p);
			mt_free(peer, 1, p);
			t->count--;
			t->live[pos] = t->live[t->count];
			if (PEER_IS_FLOOR) {
				t->free_slots[t->free_count++] = t->slot[pos];
				t->slot[pos] = t->slot[t->count];
			}
			if (t->count <= low)
				t->growing = 1;
		}
	}
	t->next = end;
	t->sum += sum;
}

static void *churn_thread_run(void *arg)
{
	struct churn_thread *t = arg;
	const struct bench_case *c = t->ch->c;
	struct peer *peer = t->ch->peer;
	size_t i;

	peer_thread_enter();
	t->script = mt_script(c, mt_seed(c, t->index));
	t->live = harness_alloc(c->live * sizeof(*t->live));
	t->growing = 1;
	if (PEER_IS_FLOOR) {
		t->slot = harness_alloc(c->live * sizeof(*t->slot));
		t->free_slots = harness_alloc(c->live * sizeof(*t->free_slots));
		t->floor_memory = harness_alloc(c->live * c->max_size);
		for (i = 0; i < c->live; i++)
			t->free_slots[t->free_count++] = (uint32_t)i;
	}
	if (!c->cold)
		churn_ops(t, peer, c->repeat);
	t->sum = 0;
	pthread_barrier_wait(&t->ch->ready);
	pthread_barrier_wait(&t->ch->go);
	churn_ops(t, peer, c->repeat);
	pthread_barrier_wait(&t->ch->done);
	for (i = 0; i < t->count; i++)
		mt_free(peer, 1, t->live[i]);
	free(t->floor_memory);
	free(t->free_slots);
	free(t->slot);
	free(t->live);
	free(t->script);
	peer_thread_leave();
	return NULL;
}

void run_alloc_test(const struct bench_case *c, struct peer *peer,
                    struct workload_result *out)
{
	struct churn ch;
	struct churn_thread *threads =
	    harness_alloc(c->threads * sizeof(*threads));
	struct timed t;
	size_t i;

	memset(&ch, 0, sizeof(ch));
	ch.c = c;
	ch.peer = peer;
	barrier_init(&ch.ready, c->threads + 1);
	barrier_init(&ch.go, c->threads + 1);
	barrier_init(&ch.done, c->threads + 1);
	for (i = 0; i < c->threads; i++) {
		threads[i].ch = &ch;
		threads[i].index = i;
		thread_start(&threads[i].thread, churn_thread_run, &threads[i]);
	}
	pthread_barrier_wait(&ch.ready);
	timed_start(&t);
	pthread_barrier_wait(&ch.go);
	pthread_barrier_wait(&ch.done);
	timed_stop(&t, out);
	for (i = 0; i < c->threads; i++) {
		pthread_join(threads[i].thread, NULL);
		out->checksum += threads[i].sum;
	}
	out->ops = c->threads * c->repeat;
	pthread_barrier_destroy(&ch.ready);
	pthread_barrier_destroy(&ch.go);
	pthread_barrier_destroy(&ch.done);
	free(threads);
}
