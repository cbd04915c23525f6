/*
 * shiftpool-analyze: records back into the order of their calls.
 *
 * A trace's lines are not in the order of the calls (trace-format.h): a
 * thread writes its record after its call, so a block freed by one thread
 * and handed out again to another can have its allocation written before
 * its free.  Records of format v3 carry seq=, which puts the records of
 * one process in the order of the calls on each block.  So the records of
 * a process are held back, up to a window of opt.window records in all,
 * and applied in seq order: a record is applied at the latest when the
 * window has moved past it, together with every record of its process of
 * a lower seq=.  Memory is the window's and no more, whatever the size of
 * the trace.  A record that comes after its process has applied one of a
 * higher seq= (further out of place than the window) is applied at once,
 * and counted as late.
 *
 * Processes are told apart here, in the order of the lines, since that is
 * the order in which pids are reused.  A fork record is the first record
 * of its process, and carries the seq= its parent took for the fork: it
 * is applied after the parent's records below that number and before
 * those above it, so that the child starts from its parent's state at
 * the fork.  Records without seq= (formats v1 and v2) are applied in the
 * order of their lines, after what their process holds.
 *
 * SPDX-License-Identifier: MIT
 */
#include "analyze.h"

#include <stdlib.h>
#include <string.h>

/* A record held back: what it says, where it was, whose it is. */
struct held {
	struct call c;
	uint64_t line;
	uint64_t arrival; /* records held before it: breaks ties of seq= */
	uint32_t proc, parent;
	unsigned char done; /* applied, its slot not yet reused */
};

/* What a process holds: a heap of ring slots by (seq, arrival), and the
 * fork records of its children still held, by ring slot. */
struct stream {
	uint32_t *heap;
	size_t n, cap;
	uint32_t *forks;
	size_t nforks, capforks;
};

static void apply_held(struct analysis *a, uint32_t slot);

/* --------------------------------------------------------------- helpers */

static int has_seq(const struct call *c)
{
	return (c->present >> TRACE_KEY_SEQ) & 1;
}

static uint64_t seq_of(const struct held *h)
{
	return h->c.v[TRACE_KEY_SEQ];
}

static int before(const struct held *x, const struct held *y)
{
	if (seq_of(x) != seq_of(y))
		return seq_of(x) < seq_of(y);
	return x->arrival < y->arrival;
}

static struct stream *stream_of(struct analysis *a, uint32_t proc)
{
	struct process *pr = &a->procs[proc];
	if (pr->stream == NULL)
		pr->stream = xcalloc(1, sizeof *pr->stream);
	return pr->stream;
}

/* A process that holds nothing keeps no stream: memory is for what is
 * held. */
static void stream_release(struct analysis *a, uint32_t proc)
{
	struct stream *s = a->procs[proc].stream;
	if (s == NULL || s->n != 0 || s->nforks != 0)
		return;
	free(s->heap);
	free(s->forks);
	free(s);
	a->procs[proc].stream = NULL;
}

/* ------------------------------------------------------------ the heaps */

static void heap_push(struct analysis *a, struct stream *s, uint32_t slot)
{
	const struct held *r = a->order.ring;
	s->heap = array_reserve(s->heap, &s->cap, s->n + 1, sizeof *s->heap);
	size_t i = s->n++;
	while (i > 0) {
		size_t up = (i - 1) / 2;
		if (!before(&r[slot], &r[s->heap[up]]))
			break;
		s->heap[i] = s->heap[up];
		i = up;
	}
	s->heap[i] = slot;
}

static uint32_t heap_pop(struct analysis *a, struct stream *s)
{
	const struct held *r = a->order.ring;
	uint32_t top = s->heap[0];
	uint32_t last = s->heap[--s->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->n)
			break;
		if (c + 1 < s->n && before(&r[s->heap[c + 1]], &r[s->heap[c]]))
			c++;
		if (!before(&r[s->heap[c]], &r[last]))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->n > 0)
		s->heap[i] = last;
	return top;
}

/* Applies what proc holds, in order, while its first is not after bound
 * (NULL: everything); through: bound itself too. */
static void emit(struct analysis *a, uint32_t proc, const struct held *bound,
                 int through)
{
	for (;;) {
		struct stream *s = a->procs[proc].stream;
		if (s == NULL || s->n == 0)
			break;
		const struct held *first = &a->order.ring[s->heap[0]];
		if (bound != NULL &&
		    (through ? before(bound, first) : !before(first, bound)))
			break;
		uint32_t slot = heap_pop(a, s);
		apply_held(a, slot);
		if (&a->order.ring[slot] == bound)
			break;
	}
	stream_release(a, proc);
}

/* ------------------------------------------------------------- forks */

static void fork_add(struct analysis *a, uint32_t parent, uint32_t slot)
{
	struct stream *s = stream_of(a, parent);
	s->forks = array_reserve(s->forks, &s->capforks, s->nforks + 1,
	                         sizeof *s->forks);
	s->forks[s->nforks++] = slot;
}

static void fork_remove(struct analysis *a, uint32_t parent, uint32_t slot)
{
	struct stream *s = a->procs[parent].stream;
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nforks; i++)
		if (s->forks[i] == slot) {
			s->forks[i] = s->forks[--s->nforks];
			break;
		}
}

/* Before a record of proc at seq: the forks of its children below it. */
static void emit_forks_before(struct analysis *a, uint32_t proc, uint64_t seq)
{
	struct stream *s;
	size_t i = 0;
	while ((s = a->procs[proc].stream) != NULL && i < s->nforks) {
		struct held *f = &a->order.ring[s->forks[i]];
		if (seq_of(f) < seq)
			emit(a, f->proc, f, 1); /* removes it from the list */
		else
			i++;
	}
}

/* ------------------------------------------------------------- applying */

static void apply(struct analysis *a, const struct call *c, uint64_t line,
                  uint32_t proc, uint32_t parent)
{
	struct process *pr = &a->procs[proc];
	/* The highest applied: a late record does not lower it. */
	if (has_seq(c) &&
	    (!pr->has_last_seq || c->v[TRACE_KEY_SEQ] > pr->last_seq)) {
		pr->last_seq = c->v[TRACE_KEY_SEQ];
		pr->has_last_seq = 1;
	}
	model_apply(a, c, line, proc, parent);
}

/* How deep applying a record may go into the records of other processes
 * it must come after or before.  A trace a program wrote goes one or two
 * deep; one written to hurt (a chain of forks, each numbered below its
 * parent's last record) could otherwise go as deep as its chain, on the
 * stack. */
#define ORDER_DEPTH_MAX 64

static void apply_held(struct analysis *a, uint32_t slot)
{
	struct held *h = &a->order.ring[slot];
	int deep = a->order.depth >= ORDER_DEPTH_MAX;
	h->done = 1;
	a->order.depth++;
	if (h->c.op == TRACE_OP_FORK && h->parent != NO_PROC) {
		fork_remove(a, h->parent, slot);
		/* The parent's state at the fork: its records below it. */
		if (!deep)
			emit(a, h->parent, h, 0);
		stream_release(a, h->parent);
	} else if (!deep) {
		emit_forks_before(a, h->proc, seq_of(h));
	}
	apply(a, &h->c, h->line, h->proc, h->parent);
	a->order.depth--;
}

/* ----------------------------------------------------------------- ring */

/* Room for one more record in the ring: when the window is full, its
 * oldest record is applied (with those of its process before it). */
static void ring_room(struct analysis *a)
{
	struct order *o = &a->order;
	if (o->n < o->window)
		return;
	struct held *old = &o->ring[o->head];
	if (!old->done)
		emit(a, old->proc, old, 1);
	o->head = (o->head + 1) % o->window;
	o->n--;
}

/* The next slot of the ring, which has room. */
static uint32_t ring_take(struct analysis *a)
{
	struct order *o = &a->order;
	if (o->n == o->cap) {
		/* Until it is first full, the ring is an array from slot 0. */
		size_t cap = o->cap ? o->cap * 2 : 64;
		o->cap = cap < o->window ? cap : o->window;
		o->ring = xrealloc(o->ring, o->cap, sizeof *o->ring);
	}
	uint32_t slot = (uint32_t)((o->head + o->n) % o->window);
	o->n++;
	return slot;
}

/* -------------------------------------------------------------- the API */

void order_init(struct order *o, size_t window)
{
	memset(o, 0, sizeof *o);
	/* Slots are 32-bit. */
	o->window = window < UINT32_MAX ? window : UINT32_MAX - 1;
}

void order_record(struct analysis *a, const struct call *c, uint64_t line)
{
	uint32_t parent = NO_PROC;
	uint32_t proc = model_process(a, c, &parent);
	struct process *pr = &a->procs[proc];
	struct order *o = &a->order;

	if (!has_seq(c) || o->window == 0) {
		emit(a, proc, NULL, 0);
		apply(a, c, line, proc, parent);
		return;
	}
	/* Room first: what it applies decides whether this one is late. */
	ring_room(a);
	uint64_t seq = c->v[TRACE_KEY_SEQ];
	if (pr->has_last_seq && seq < pr->last_seq) {
		o->late++;
		apply(a, c, line, proc, parent);
		return;
	}
	if (c->op == TRACE_OP_FORK && parent != NO_PROC &&
	    a->procs[parent].has_last_seq && a->procs[parent].last_seq > seq)
		o->late++; /* the parent is past the fork already */
	uint32_t slot = ring_take(a);
	struct held *h = &o->ring[slot];
	*h = (struct held){.c = *c,
	                   .line = line,
	                   .arrival = o->arrivals++,
	                   .proc = proc,
	                   .parent = parent};
	heap_push(a, stream_of(a, proc), slot);
	if (c->op == TRACE_OP_FORK && parent != NO_PROC)
		fork_add(a, parent, slot);
	if (o->n > o->held_max)
		o->held_max = o->n;
}

void order_finish(struct analysis *a)
{
	struct order *o = &a->order;
	for (size_t i = 0; i < o->n; i++) {
		struct held *h = &o->ring[(o->head + i) % o->window];
		if (!h->done)
			emit(a, h->proc, h, 1);
	}
	o->head = o->n = 0;
}

void order_free(struct analysis *a)
{
	for (size_t i = 0; i < a->nprocs; i++) {
		struct stream *s = a->procs[i].stream;
		if (s != NULL) {
			free(s->heap);
			free(s->forks);
			free(s);
			a->procs[i].stream = NULL;
		}
	}
	free(a->order.ring);
	a->order.ring = NULL;
}
