/*
 * The bench worker's workloads of the published measurements (held,
 * oversize, lighttpd, parallel, sort, xthread) and pair, bulk and
 * footprint (see README.md), written once against peer.h and compiled
 * into every worker; the threaded workloads of many sizes are in
 * workloads-mt.c, and what both use in harness.h.
 *
 * Every workload follows the same shape: set-up outside the timed region
 * (pool_init() in peer_open(), input data, pointer arrays, and for the
 * floor its preallocated and pre-touched memory), one untimed warm-up pass
 * of the same work, then the timed region, bracketed by CLOCK_MONOTONIC.
 * Each allocation is checked (calloc'ed memory is zero) and tagged, and
 * each tag is read back before the free: the sum of the tags is the
 * checksum, so the compiler cannot drop the work, and a block handed to
 * two owners at once shows as a wrong sum.
 *
 * An operation is one allocation with its free and the workload's own
 * work on the memory (zeroing, copying, sorting); ns/op is the timed
 * region's wall time over the operations of all threads.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "harness.h"

#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ constants */

/* sort cycles through this many different inputs, so that the branch
 * predictor cannot learn one. */
#define SORT_INPUTS 8
/* Below this many items, sort by insertion. */
#define SORT_INSERTION_MAX 16

/* ---------------------------------------------------- held, oversize */

/*
 * One pass: count requests held at once, then freed in allocation order.
 * oversize alternates size and 2 x size; the floor lays the requests out
 * back to back in its memory.  Always inlined, so that the copy given
 * `untimed` has no timing code left at all.
 */
static inline __attribute__((always_inline)) void
held_pass(const struct bench_case *c, struct peer *peer, void **held,
          char *floor_memory, size_t count, uint64_t tag, uint64_t *sum,
          struct latency_histogram *const *latency)
{
	const int oversize = c->workload == WORKLOAD_OVERSIZE;
	const size_t size = c->size;
	size_t i;

	for (i = 0; i < count; i++) {
		size_t bytes = oversize && (i & 1) ? 2 * size : size;
		size_t offset =
		    oversize ? (i >> 1) * 3 * size + (i & 1) * size : i * size;
		uint64_t *p = check_allocated(
		    timed_calloc(peer, SLOT(floor_memory + offset), bytes,
		                 latency[LATENCY_ALLOC]),
		    bytes);
		check_zeroed(p, bytes);
		p[0] = tag + i;
		held[i] = p;
	}
	for (i = 0; i < count; i++) {
		uint64_t *p = held[i];
		*sum += p[0];
		escape(p);
		timed_free(peer, p, latency[LATENCY_FREE]);
	}
}

void run_held(const struct bench_case *c, struct peer *peer,
              struct workload_result *out)
{
	size_t count = c->workload == WORKLOAD_HELD ? c->n : 4 * c->n;
	void **held = harness_alloc(count * sizeof(*held));
	size_t floor_bytes = c->workload == WORKLOAD_HELD
	                         ? count * c->size
	                         : count / 2 * 3 * c->size;
	char *floor_memory = PEER_IS_FLOOR ? harness_alloc(floor_bytes) : NULL;
	uint64_t sum = 0, repeat;
	struct timed t;

	if (!c->cold)
		held_pass(c, peer, held, floor_memory, count, 0, &sum, untimed);
	sum = 0;
	timed_start(&t);
	if (c->latency)
		for (repeat = 0; repeat < c->repeat; repeat++)
			held_pass(c, peer, held, floor_memory, count,
			          repeat << 32, &sum, out->latency);
	else
		for (repeat = 0; repeat < c->repeat; repeat++)
			held_pass(c, peer, held, floor_memory, count,
			          repeat << 32, &sum, untimed);
	timed_stop(&t, out);
	out->ops = c->repeat * count;
	out->checksum = sum;
	free(held);
	free(floor_memory);
}

/* ------------------------------------------------------------ lighttpd */

/* The lighttpd model: clients hold buffers while connected. */
struct lighttpd {
	const struct bench_case *c;
	struct peer *peer;
	void **buffers;     /* clients x buffers, client-major */
	char *floor_memory; /* the same layout, buffers of size bytes */
	uint64_t random;
	uint64_t sum;
	size_t departures[CLIENTS_MAX];
	struct latency_histogram *const *latency; /* untimed, or timed */
};

static void client_connect(struct lighttpd *l, size_t client, uint64_t tag)
{
	const size_t size = l->c->size, count = l->c->buffers;
	void **held = l->buffers + client * count;
	size_t j;

	for (j = 0; j < count; j++) {
		uint64_t *p = check_allocated(
		    timed_calloc(
		        l->peer,
		        SLOT(l->floor_memory + (client * count + j) * size),
		        size, l->latency[LATENCY_ALLOC]),
		    size);
		check_zeroed(p, size);
		p[0] = tag + j;
		held[j] = p;
	}
}

static void client_disconnect(struct lighttpd *l, size_t client)
{
	const size_t count = l->c->buffers;
	void **held = l->buffers + client * count;
	size_t j;

	for (j = 0; j < count; j++) {
		uint64_t *p = held[j];
		l->sum += p[0];
		escape(p);
		timed_free(l->peer, p, l->latency[LATENCY_FREE]);
	}
}

/* The order in which this round's clients leave. */
static void lighttpd_order(struct lighttpd *l)
{
	const size_t clients = l->c->clients;
	size_t i;

	if (l->c->order_kind == ORDER_LIST) {
		for (i = 0; i < clients; i++)
			l->departures[i] = l->c->order.value[i];
		return;
	}
	for (i = 0; i < clients; i++)
		l->departures[i] = i;
	for (i = clients - 1; i > 0; i--) {
		size_t j = (size_t)(random_next(&l->random) % (i + 1));
		size_t t = l->departures[i];
		l->departures[i] = l->departures[j];
		l->departures[j] = t;
	}
}

static void lighttpd_round(struct lighttpd *l, uint64_t round)
{
	const size_t clients = l->c->clients, count = l->c->buffers;
	size_t i;

	for (i = 0; i < clients; i++)
		client_connect(l, i, (round * clients + i) * count);
	lighttpd_order(l);
	for (i = 0; i < clients; i++)
		client_disconnect(l, l->departures[i]);
}

/* One client leaves, one takes its place: a server's steady state. */
static void lighttpd_step(struct lighttpd *l, uint64_t step)
{
	const size_t clients = l->c->clients;
	size_t client = l->c->order_kind == ORDER_LIST
	                    ? l->c->order.value[step % clients]
	                    : (size_t)(random_next(&l->random) % clients);

	client_disconnect(l, client);
	client_connect(l, client, (step + clients) * l->c->buffers);
}

/* Rounds: every client connects, then they all leave. */
static void lighttpd_rounds(struct lighttpd *l, struct workload_result *out)
{
	const struct bench_case *c = l->c;
	struct timed t;
	uint64_t i;

	if (!c->cold)
		lighttpd_round(l, 0);
	l->sum = 0;
	l->random = c->seed;
	l->latency = out->latency;
	timed_start(&t);
	for (i = 0; i < c->rounds; i++)
		lighttpd_round(l, i);
	timed_stop(&t, out);
	out->ops = c->rounds * c->clients * c->buffers;
}

/* Rolling: every client connects (untimed, the server's steady state),
 * then clients x rounds times one leaves and one arrives. */
static void lighttpd_rolling(struct lighttpd *l, struct workload_result *out)
{
	const struct bench_case *c = l->c;
	const size_t clients = c->clients;
	uint64_t i, sum, steps = c->rounds * clients;
	struct timed t;

	for (i = 0; i < clients; i++)
		client_connect(l, i, i * c->buffers);
	/* Warm-up: one round of departures. */
	for (i = 0; !c->cold && i < clients; i++)
		lighttpd_step(l, i);
	l->sum = 0;
	l->random = c->seed;
	l->latency = out->latency;
	timed_start(&t);
	for (i = 0; i < steps; i++)
		lighttpd_step(l, clients + i);
	timed_stop(&t, out);
	out->ops = steps * c->buffers;
	/* The clients still connected leave untimed and uncounted. */
	sum = l->sum;
	l->latency = untimed;
	for (i = 0; i < clients; i++)
		client_disconnect(l, i);
	l->sum = sum;
}

void run_lighttpd(const struct bench_case *c, struct peer *peer,
                  struct workload_result *out)
{
	struct lighttpd l;

	memset(&l, 0, sizeof(l));
	l.c = c;
	l.peer = peer;
	l.random = c->seed;
	l.latency = untimed;
	l.buffers = harness_alloc(c->clients * c->buffers * sizeof(void *));
	if (PEER_IS_FLOOR)
		l.floor_memory =
		    harness_alloc(c->clients * c->buffers * c->size);
	if (c->rolling)
		lighttpd_rolling(&l, out);
	else
		lighttpd_rounds(&l, out);
	out->checksum = l.sum;
	free(l.buffers);
	free(l.floor_memory);
}

/* ------------------------------------------------------------ parallel */

/* parallel and pair: threads that each allocate, copy and free in a
 * loop; parallel cycles through its lens, pair has one size. */
struct parallel {
	const struct bench_case *c;
	const uint64_t *input;     /* the bytes copied, the largest op's */
	size_t op_bytes[LIST_MAX]; /* the ops' sizes, cycled */
	size_t op_count;
	int private_pools; /* POOL_SINGLE: one pool per thread */
	struct peer *shared;
	_Atomic int phase;
	pthread_barrier_t start, timed;
};

struct parallel_thread {
	_Alignas(CACHE_LINE) struct parallel *p;
	pthread_t thread;
	struct peer own;
	uint64_t ops, sum;
	uint64_t pool_allocs, fallback_allocs;
};

/* One operation: allocate bytes (at least 8), copy the input into them,
 * read the last 8 back, free. */
static inline uint64_t parallel_op(struct peer *peer, void *slot,
                                   const uint64_t *input, size_t bytes)
{
	char *buffer;
	uint64_t value;

	buffer = check_allocated(peer_malloc(peer, slot, bytes), bytes);
	memcpy(buffer, input, bytes);
	escape(buffer);
	memcpy(&value, buffer + bytes - 8, 8);
	peer_free(peer, buffer);
	return value;
}

/* bulk's operation: BULK_BATCH blocks at once, each written and read
 * back, then freed at once.  Returns the sum of what was read. */
static inline uint64_t bulk_op(struct peer *peer, char *slots,
                               const uint64_t *input, size_t bytes)
{
	void *blocks[BULK_BATCH];
	uint64_t sum = 0;
	size_t i;

	if (!peer_malloc_bulk(peer, slots, bytes, BULK_BATCH, blocks))
		worker_fail("allocation of %d x %zu bytes failed", BULK_BATCH,
		            bytes);
	for (i = 0; i < BULK_BATCH; i++)
		memcpy(blocks[i], &input[i], 8);
	escape(blocks);
	for (i = 0; i < BULK_BATCH; i++)
		sum += *(const uint64_t *)blocks[i];
	peer_free_bulk(peer, BULK_BATCH, blocks);
	return sum;
}

/* One operation of parallel, pair or bulk: how many blocks it counts
 * for, its result through sum. */
static inline size_t parallel_step(const struct parallel *p, struct peer *peer,
                                   char *floor_memory, size_t bytes,
                                   uint64_t *sum)
{
	if (p->c->workload == WORKLOAD_BULK) {
		*sum += bulk_op(peer, floor_memory, p->input, bytes);
		return BULK_BATCH;
	}
	*sum += parallel_op(peer, SLOT(floor_memory), p->input, bytes);
	return 1;
}

static void *parallel_thread_run(void *arg)
{
	struct parallel_thread *t = arg;
	struct parallel *p = t->p;
	const size_t *bytes = p->op_bytes, count = p->op_count;
	struct peer *peer = p->shared;
	char *floor_memory = NULL;
	size_t k = 0;
	uint64_t ops = 0, sum = 0;

	peer_thread_enter();
	if (p->private_pools) {
		if (peer_open(&t->own, p->c) != 0)
			worker_fail("a thread's private pool failed");
		peer = &t->own;
	}
	if (PEER_IS_FLOOR)
		floor_memory = harness_alloc(
		    p->c->size *
		    (p->c->workload == WORKLOAD_BULK ? BULK_BATCH : 1));

	pthread_barrier_wait(&p->start);
	while (atomic_load_explicit(&p->phase, memory_order_relaxed) ==
	       PHASE_WARMUP) {
		parallel_step(p, peer, floor_memory, bytes[k], &sum);
		if (++k == count)
			k = 0;
	}
	pthread_barrier_wait(&p->timed);
	sum = 0;
	k = 0;
	/* At least one operation: on a busy machine a thread may not run at
	 * all in a short timed window (--quick's is 10 ms).  The window ends
	 * at the join, so that operation is timed too. */
	do {
		ops += parallel_step(p, peer, floor_memory, bytes[k], &sum);
		if (++k == count)
			k = 0;
	} while (atomic_load_explicit(&p->phase, memory_order_relaxed) ==
	         PHASE_TIMED);
	t->ops = ops;
	t->sum = sum;
	if (p->private_pools) {
		peer_count(&t->own, &t->pool_allocs, &t->fallback_allocs);
		peer_close(&t->own);
	}
	free(floor_memory);
	peer_thread_leave();
	return NULL;
}

/* The sizes of the ops: parallel's lens of 8-byte items, pair's size. */
static void parallel_sizes(const struct bench_case *c, struct parallel *p)
{
	size_t k;

	if (c->workload == WORKLOAD_PAIR || c->workload == WORKLOAD_BULK) {
		p->op_bytes[0] = c->size;
		p->op_count = 1;
		return;
	}
	for (k = 0; k < c->lens.count; k++)
		p->op_bytes[k] = 8 * c->lens.value[k];
	p->op_count = c->lens.count;
}

/* Lets the threads warm up (unless --cold), then times them for the
 * case's duration. */
static void parallel_time(const struct bench_case *c, struct parallel *p,
                          struct parallel_thread *threads,
                          struct workload_result *out)
{
	struct timed t;
	size_t i;

	pthread_barrier_wait(&p->start);
	if (!c->cold) {
		sleep_seconds(c->duration * WARMUP_SHARE);
		atomic_store_explicit(&p->phase, PHASE_TIMED,
		                      memory_order_relaxed);
	}
	pthread_barrier_wait(&p->timed);
	timed_start(&t);
	sleep_seconds(c->duration);
	atomic_store_explicit(&p->phase, PHASE_STOP, memory_order_relaxed);
	for (i = 0; i < c->threads; i++)
		pthread_join(threads[i].thread, NULL);
	timed_stop(&t, out);
	/* pair and bulk report thread time: every thread ran the whole
	 * window. */
	if (c->workload == WORKLOAD_PAIR || c->workload == WORKLOAD_BULK)
		out->ns *= c->threads;
}

/* The words of input: one op's bytes, and a word for each block of a
 * bulk batch. */
static size_t max_items(const struct bench_case *c)
{
	size_t items = (c->size + 7) / 8;

	return items > BULK_BATCH ? items : BULK_BATCH;
}

void run_parallel(const struct bench_case *c, struct peer *peer,
                  struct workload_result *out)
{
	struct parallel p;
	struct parallel_thread *threads;
	/* bulk writes a word of the input into each block of a batch. */
	size_t i, items = max_items(c);
	uint64_t *input = harness_alloc(items * 8);
	uint64_t random = c->seed;

	for (i = 0; i < items; i++)
		input[i] = random_next(&random);
	memset(&p, 0, sizeof(p));
	p.c = c;
	p.input = input;
	parallel_sizes(c, &p);
	p.shared = peer;
	p.private_pools = case_private_pools(c);
	/* --cold: the threads skip their warm-up loop. */
	atomic_init(&p.phase, c->cold ? PHASE_TIMED : PHASE_WARMUP);
	barrier_init(&p.start, c->threads + 1);
	barrier_init(&p.timed, c->threads + 1);
	threads = harness_alloc(c->threads * sizeof(*threads));

	for (i = 0; i < c->threads; i++) {
		threads[i].p = &p;
		thread_start(&threads[i].thread, parallel_thread_run,
		             &threads[i]);
	}
	parallel_time(c, &p, threads, out);
	for (i = 0; i < c->threads; i++) {
		out->ops += threads[i].ops;
		out->checksum += threads[i].sum;
		out->pool_allocs += threads[i].pool_allocs;
		out->fallback_allocs += threads[i].fallback_allocs;
	}
	pthread_barrier_destroy(&p.start);
	pthread_barrier_destroy(&p.timed);
	free(threads);
	free(input);
}

/* ------------------------------------------------------------ sort */

/* The case study's item: a random key and a sequential id, 8 bytes. */
struct item {
	int32_t key;
	uint32_t id;
};

static void insertion_sort(struct item *a, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct item x = a[i];
		for (j = i; j > 0 && a[j - 1].key > x.key; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* Hoare's partition around the middle item's key; returns the size of the
 * left part, which is at least 1 and less than n. */
static size_t partition(struct item *a, size_t n)
{
	int32_t pivot = a[(n - 1) / 2].key;
	ptrdiff_t i = -1, j = (ptrdiff_t)n;

	for (;;) {
		do
			i++;
		while (a[i].key < pivot);
		do
			j--;
		while (a[j].key > pivot);
		if (i >= j)
			return (size_t)j + 1;
		struct item t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

/* The project's own sort: qsort() may allocate, which would count against
 * the allocator.  Quicksort, recursing into the smaller part only. */
static void item_sort(struct item *a, size_t n)
{
	while (n > SORT_INSERTION_MAX) {
		size_t left = partition(a, n);
		if (left < n - left) {
			item_sort(a, left);
			a += left;
			n -= left;
		} else {
			item_sort(a + left, n - left);
			n = left;
		}
	}
	insertion_sort(a, n);
}

static inline uint64_t sort_digest(const struct item *a, size_t len)
{
	return (uint64_t)(uint32_t)a[0].key + (uint32_t)a[len / 2].key +
	       (uint32_t)a[len - 1].key + a[len - 1].id;
}

static __attribute__((noinline)) uint64_t
sort_allocated(struct peer *peer, void *slot, const struct item *input,
               size_t len)
{
	struct item *items;
	uint64_t digest;

	items = check_allocated(peer_malloc(peer, slot, len * sizeof(*items)),
	                        len * sizeof(*items));
	memcpy(items, input, len * sizeof(*items));
	escape(items);
	item_sort(items, len);
	digest = sort_digest(items, len);
	peer_free(peer, items);
	return digest;
}

#if PEER_IS_FLOOR
/* The case study's stack control: the buffer is the function's frame. */
static __attribute__((noinline)) uint64_t
sort_on_stack(const struct item *input, size_t len)
{
	struct item *items = alloca(len * sizeof(*items));

	memcpy(items, input, len * sizeof(*items));
	escape(items);
	item_sort(items, len);
	return sort_digest(items, len);
}
#endif

static uint64_t sort_once(const struct bench_case *c, struct peer *peer,
                          void *slot, const struct item *input)
{
#if PEER_IS_FLOOR
	if (c->allocator == ALLOCATOR_STACK)
		return sort_on_stack(input, c->len);
#endif
	return sort_allocated(peer, slot, input, c->len);
}

void run_sort(const struct bench_case *c, struct peer *peer,
              struct workload_result *out)
{
	const size_t len = c->len;
	struct item *inputs =
	    harness_alloc(SORT_INPUTS * len * sizeof(*inputs));
	struct item *check = harness_alloc(len * sizeof(*check));
	void *caller_buffer = harness_alloc(len * sizeof(struct item));
	uint64_t random = c->seed, sum = 0, i;
	struct timed t;
	size_t k;

	(void)caller_buffer;
	for (i = 0; i < SORT_INPUTS * len; i++) {
		inputs[i].key = (int32_t)(random_next(&random) >> 32);
		inputs[i].id = (uint32_t)(i % len);
	}
	/* The sort itself, checked once per input. */
	for (k = 0; k < SORT_INPUTS; k++) {
		memcpy(check, inputs + k * len, len * sizeof(*check));
		item_sort(check, len);
		for (i = 1; i < len; i++)
			if (check[i - 1].key > check[i].key)
				worker_fail("the sort does not sort");
	}

	for (i = 0; !c->cold && i < c->repeat / 8 + 1; i++)
		sum += sort_once(c, peer, SLOT(caller_buffer),
		                 inputs + (i % SORT_INPUTS) * len);
	sum = 0;
	timed_start(&t);
	for (i = 0; i < c->repeat; i++)
		sum += sort_once(c, peer, SLOT(caller_buffer),
		                 inputs + (i % SORT_INPUTS) * len);
	timed_stop(&t, out);
	out->ops = c->repeat;
	out->checksum = sum;
	free(inputs);
	free(check);
	free(caller_buffer);
}

/* ------------------------------------------------------------ xthread */

/*
 * A bounded single-producer single-consumer queue: head is written by the
 * producer only, tail by the consumer only.  The release store of head
 * pairs with the consumer's acquire load of it (the slot and the buffer's
 * bytes are visible before the pointer is taken); the release store of
 * tail pairs with the producer's acquire load (the consumer is done with
 * the slot, and, for the floor, with the buffer it popped before).
 */
struct ring {
	_Alignas(CACHE_LINE) _Atomic size_t head;
	_Alignas(CACHE_LINE) _Atomic size_t tail;
	_Alignas(CACHE_LINE) void **slots;
	size_t capacity;
};

static void ring_push(struct ring *r, void *item)
{
	size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);

	while (head - atomic_load_explicit(&r->tail, memory_order_acquire) >=
	       r->capacity)
		sched_yield();
	r->slots[head % r->capacity] = item;
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

static void *ring_pop(struct ring *r)
{
	size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	void *item;

	while (atomic_load_explicit(&r->head, memory_order_acquire) == tail)
		sched_yield();
	item = r->slots[tail % r->capacity];
	atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
	return item;
}

/* Ends the warm-up in a queue; NULL ends the run. */
static char warmup_mark;
#define WARMUP_MARK ((void *)&warmup_mark)

struct xthread {
	const struct bench_case *c;
	struct peer *peer;
	_Atomic int phase;
	pthread_barrier_t start, timed;
};

/* A producer and its consumer, joined by one queue. */
struct xthread_pair {
	struct ring ring;
	struct xthread *x;
	pthread_t producer, consumer;
	char *floor_memory; /* the floor's buffers, reused round-robin */
	size_t floor_buffers;
	uint64_t ops, sum;
	/* --latency: the producer's allocations and the consumer's frees,
	 * timed; else none. */
	struct latency_histogram *latency[LATENCY_SIDES];
};

static void produce(struct xthread_pair *pair, uint64_t *sequence,
                    struct latency_histogram *latency)
{
	const size_t size = pair->x->c->size;
	uint64_t *p = check_allocated(
	    timed_calloc(pair->x->peer,
	                 SLOT(pair->floor_memory +
	                      (*sequence % pair->floor_buffers) * size),
	                 size, latency),
	    size);

	check_zeroed(p, size);
	p[0] = (*sequence)++;
	ring_push(&pair->ring, p);
}

static void *xthread_producer(void *arg)
{
	struct xthread_pair *pair = arg;
	struct xthread *x = pair->x;
	uint64_t sequence = 0;

	peer_thread_enter();
	pthread_barrier_wait(&x->start);
	while (atomic_load_explicit(&x->phase, memory_order_relaxed) ==
	       PHASE_WARMUP)
		produce(pair, &sequence, NULL);
	ring_push(&pair->ring, WARMUP_MARK);
	pthread_barrier_wait(&x->timed);
	/* At least one buffer, as in parallel: the window ends at the
	 * join, so it is timed. */
	do
		produce(pair, &sequence, pair->latency[LATENCY_ALLOC]);
	while (atomic_load_explicit(&x->phase, memory_order_relaxed) ==
	       PHASE_TIMED);
	ring_push(&pair->ring, NULL);
	peer_thread_leave();
	return NULL;
}

/* Takes buffers until the marker; returns how many. */
static uint64_t consume(struct xthread_pair *pair, void *marker,
                        uint64_t *expected, struct latency_histogram *latency)
{
	uint64_t count = 0;
	uint64_t *p;

	while ((p = ring_pop(&pair->ring)) != marker) {
		if (p == NULL || (void *)p == WARMUP_MARK)
			worker_fail("xthread: a queue ended out of order");
		if (p[0] != *expected)
			worker_fail(
			    "xthread: buffer %llu arrived holding %llu: "
			    "handed out twice or overwritten",
			    (unsigned long long)*expected,
			    (unsigned long long)p[0]);
		pair->sum += p[0];
		(*expected)++;
		escape(p);
		timed_free(pair->x->peer, p, latency);
		count++;
	}
	return count;
}

static void *xthread_consumer(void *arg)
{
	struct xthread_pair *pair = arg;
	struct xthread *x = pair->x;
	uint64_t expected = 0;

	peer_thread_enter();
	pthread_barrier_wait(&x->start);
	consume(pair, WARMUP_MARK, &expected, NULL);
	pair->sum = 0;
	pthread_barrier_wait(&x->timed);
	pair->ops = consume(pair, NULL, &expected, pair->latency[LATENCY_FREE]);
	peer_thread_leave();
	return NULL;
}

/* A pair's queue, the floor's buffers, and its histograms. */
static void xthread_pair_init(struct xthread_pair *pair, struct xthread *x)
{
	const struct bench_case *c = x->c;
	int side;

	pair->x = x;
	pair->ring.capacity = c->queue_depth;
	pair->ring.slots = harness_alloc(c->queue_depth * sizeof(void *));
	/* The queue holds queue_depth buffers and the consumer one more:
	 * with two beyond that, the producer never reuses a buffer still in
	 * use. */
	pair->floor_buffers = c->queue_depth + 2;
	if (PEER_IS_FLOOR)
		pair->floor_memory =
		    harness_alloc(pair->floor_buffers * c->size);
	for (side = 0; c->latency && side < LATENCY_SIDES; side++)
		pair->latency[side] =
		    harness_alloc(sizeof(struct latency_histogram));
}

/* Adds a pair's figures to out, and frees what it holds. */
static void xthread_pair_done(struct xthread_pair *pair,
                              struct workload_result *out)
{
	int side;

	out->ops += pair->ops;
	out->checksum += pair->sum;
	for (side = 0; side < LATENCY_SIDES; side++)
		if (pair->latency[side] != NULL) {
			latency_merge(out->latency[side], pair->latency[side]);
			free(pair->latency[side]);
		}
	free(pair->ring.slots);
	free(pair->floor_memory);
}

void run_xthread(const struct bench_case *c, struct peer *peer,
                 struct workload_result *out)
{
	struct xthread x;
	struct xthread_pair *pairs;
	size_t i, threads = c->threads;
	struct timed t;

	memset(&x, 0, sizeof(x));
	x.c = c;
	x.peer = peer;
	/* --cold: the producers skip their warm-up. */
	atomic_init(&x.phase, c->cold ? PHASE_TIMED : PHASE_WARMUP);
	barrier_init(&x.start, 2 * threads + 1);
	barrier_init(&x.timed, 2 * threads + 1);
	pairs = harness_alloc(threads * sizeof(*pairs));
	for (i = 0; i < threads; i++)
		xthread_pair_init(&pairs[i], &x);
	for (i = 0; i < threads; i++) {
		thread_start(&pairs[i].consumer, xthread_consumer, &pairs[i]);
		thread_start(&pairs[i].producer, xthread_producer, &pairs[i]);
	}
	pthread_barrier_wait(&x.start);
	if (!c->cold) {
		sleep_seconds(c->duration * WARMUP_SHARE);
		atomic_store_explicit(&x.phase, PHASE_TIMED,
		                      memory_order_relaxed);
	}
	pthread_barrier_wait(&x.timed);
	timed_start(&t);
	sleep_seconds(c->duration);
	atomic_store_explicit(&x.phase, PHASE_STOP, memory_order_relaxed);
	for (i = 0; i < threads; i++) {
		pthread_join(pairs[i].producer, NULL);
		pthread_join(pairs[i].consumer, NULL);
	}
	timed_stop(&t, out);
	for (i = 0; i < threads; i++)
		xthread_pair_done(&pairs[i], out);
	pthread_barrier_destroy(&x.start);
	pthread_barrier_destroy(&x.timed);
	free(pairs);
}

/* ------------------------------------------------------------ footprint */

/* A "Name:   123 kB" line's value of /proc/self/status, in bytes. */
static uint64_t status_kib(const char *text, const char *name)
{
	const char *line = strstr(text, name);
	unsigned long long kib;

	if (line == NULL || sscanf(line + strlen(name), "%llu", &kib) != 1)
		worker_fail("no %s in /proc/self/status", name);
	return (uint64_t)kib * 1024;
}

/*
 * The process's resident memory that is not a file's, bytes: RssAnon and
 * RssShmem of /proc/self/status.  So the allocator's bookkeeping and the
 * blocks (DPDK's EAL heap without huge pages is shared memory), but not
 * the code pages that happen to run for the first time.
 */
static uint64_t resident_bytes(void)
{
	/* read(), not stdio: a FILE's buffer would come from the peer. */
	char text[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t length = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);

	if (fd >= 0)
		close(fd);
	if (length <= 0)
		worker_fail("cannot read /proc/self/status");
	text[length] = '\0';
	return status_kib(text, "\nRssAnon:") + status_kib(text, "\nRssShmem:");
}

/* Memory of the harness outside every allocator: mmap'ed, so that it
 * neither comes from the peer nor is handed back to it by free(). */
static void *footprint_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		worker_fail("mmap of %zu bytes: %s", bytes, strerror(errno));
	return p;
}

/*
 * N blocks allocated, each written whole, all live at once: what the
 * process's RSS grew by, from before the allocator's set-up (pool_init(),
 * rte_mempool_create(); DPDK's EAL is process-wide and earlier), over the
 * blocks' bytes.  The pointer array is mapped and touched before.  The
 * floor's blocks are a fresh mapping: its ratio is the method's own.
 */
void run_footprint(const struct bench_case *c, struct peer *peer,
                   struct workload_result *out)
{
	const size_t count = c->blocks, size = c->size;
	void **blocks = footprint_map(count * sizeof(*blocks));
	char *floor_memory = NULL;
	struct timed t;
	size_t i;

	memset(blocks, 0, count * sizeof(*blocks));
	out->footprint_before = resident_bytes();
	if (peer_open(peer, c) != 0)
		worker_fail("cannot set up %s", allocator_names[c->allocator]);
	if (PEER_IS_FLOOR)
		floor_memory = footprint_map(count * size);
	out->footprint_open = resident_bytes();
	timed_start(&t);
	for (i = 0; i < count; i++) {
		uint64_t *p = check_allocated(
		    peer_malloc(peer, SLOT(floor_memory + i * size), size),
		    size);
		memset(p, (int)(i & 0xff) | 1, size);
		p[0] = i;
		blocks[i] = p;
	}
	timed_stop(&t, out);
	out->footprint_after = resident_bytes();
	out->footprint_bytes = (uint64_t)count * size;
	out->ops = count;
	for (i = 0; i < count; i++) {
		out->checksum += *(const uint64_t *)blocks[i];
		peer_free(peer, blocks[i]);
	}
	if (floor_memory != NULL)
		munmap(floor_memory, count * size);
	munmap(blocks, count * sizeof(*blocks));
}
