/*
 * shiftpool-analyze: the bookkeeping.  Records change processes, pools and
 * the live set, and what is wrong about them becomes an event of a kind.
 *
 * A pool is known by (process, pool id); a set and the pool ids of its
 * classes all name one pool entry, the set.  A process is a pid and which
 * of the processes that had that pid it is, so a reused pid starts anew.
 * The live set keeps an entry per (pool, address) for the whole run, so
 * that a second free of a block can be told from a free of an address the
 * trace never showed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "analyze.h"

#include <shiftpool.h> /* enum pool_error, the codes of error= */
#include <stdlib.h>
#include <string.h>

const char *const kind_names[K_COUNT] = {
    "invalid_frees",           "double_frees",          "wrong_pool_frees",
    "corrupted_free_lists",    "writes_after_free",     "unknown_frees",
    "unreported_double_frees", "duplicate_allocations",
};

const char *const kind_titles[K_COUNT] = {
    "invalid frees (reported by the library)",
    "double frees (reported by the library)",
    "frees of another pool's pointer (reported by the library)",
    "corrupted free lists (reported by the library)",
    "writes after free (reported by the library)",
    "frees of unknown pointers",
    "double frees not reported by the library",
    "allocations returning a live pointer",
};

/* A record being applied, and what it names. */
struct ctx {
	struct analysis *a;
	const struct call *c;
	uint64_t line;
	uint32_t proc;   /* index into a->procs */
	uint32_t parent; /* of a fork record: the parent's; else NO_PROC */
	uint32_t pi;     /* index into a->pools, when p is not NULL */
	struct pool *p;
};

#define OP_BIT(op) (UINT32_C(1) << TRACE_OP_##op)
_Static_assert(TRACE_OP_COUNT <= 32, "a set of operations is 32 bits");
#define ALLOC_OPS                                                              \
	(OP_BIT(MALLOC) | OP_BIT(CALLOC) | OP_BIT(STRDUP) | OP_BIT(MALLOC_BULK))
#define FREE_OPS (OP_BIT(FREE) | OP_BIT(FREE_BULK))
/* The calls a thread makes on a pool's memory. */
#define CALL_OPS (ALLOC_OPS | FREE_OPS | OP_BIT(REALLOC))

static int op_in(enum trace_op op, uint32_t set)
{
	return (set >> op) & 1;
}

static uint64_t value(const struct ctx *x, enum trace_key k)
{
	return x->c->v[k];
}

static int has(const struct call *c, enum trace_key k)
{
	return (c->present >> k) & 1;
}

/* ------------------------------------------------------- checks and maps */

static int is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static unsigned log2_of(uint64_t pow2)
{
	unsigned i = 0;
	while (pow2 >>= 1)
		i++;
	return i;
}

/* The outcomes that mean the library refused the pointer. */
static int refused(uint64_t src)
{
	return src == TRACE_SRC_INVALID || src == TRACE_SRC_DOUBLE ||
	       src == TRACE_SRC_WRONG_POOL;
}

static enum kind refused_kind(uint64_t src)
{
	if (src == TRACE_SRC_INVALID)
		return K_INVALID;
	return src == TRACE_SRC_DOUBLE ? K_DOUBLE : K_WRONG_POOL;
}

/* The kind of a report record's error=; K_COUNT for none. */
static enum kind error_kind(uint64_t code)
{
	switch (code) {
	case POOL_ERROR_INVALID_POINTER:
		return K_INVALID;
	case POOL_ERROR_DOUBLE_FREE:
		return K_DOUBLE;
	case POOL_ERROR_CORRUPTED:
		return K_CORRUPTED;
	case POOL_ERROR_WRITE_AFTER_FREE:
		return K_WRITE_AFTER_FREE;
	case POOL_ERROR_WRONG_POOL:
		return K_WRONG_POOL;
	}
	return K_COUNT;
}

/* A pointer of 0 exactly when nothing was handed out or freed. */
static int null_iff_none(const uint64_t *v)
{
	return (v[TRACE_KEY_PTR] == 0) == (v[TRACE_KEY_SRC] == TRACE_SRC_NONE);
}

int model_valid(const struct call *c)
{
	const uint64_t *v = c->v;
	if (has(c, TRACE_KEY_CLASS) && v[TRACE_KEY_CLASS] != 0 &&
	    !is_pow2(v[TRACE_KEY_CLASS]))
		return 0;
	if (op_in(c->op, ALLOC_OPS))
		return !refused(v[TRACE_KEY_SRC]) && null_iff_none(v);
	if (op_in(c->op, FREE_OPS))
		return null_iff_none(v);
	switch (c->op) {
	case TRACE_OP_REALLOC:
		if (refused(v[TRACE_KEY_SRC]))
			return v[TRACE_KEY_PTR] == 0 && v[TRACE_KEY_OLD] != 0;
		return null_iff_none(v);
	case TRACE_OP_INIT:
		return !has(c, TRACE_KEY_SET) ||
		       is_pow2(v[TRACE_KEY_BLOCK_SIZE]);
	case TRACE_OP_SET_INIT:
		return is_pow2(v[TRACE_KEY_MIN_BLOCK]) &&
		       is_pow2(v[TRACE_KEY_MAX_BLOCK]) &&
		       v[TRACE_KEY_MIN_BLOCK] <= v[TRACE_KEY_MAX_BLOCK];
	case TRACE_OP_REPORT:
		return error_kind(v[TRACE_KEY_ERROR]) != K_COUNT;
	default:
		return 1;
	}
}

/* ------------------------------------------------------------- processes */

static uint32_t process_new(struct analysis *a, uint64_t pid, int has_pid,
                            unsigned generation)
{
	if (a->nprocs >= UINT32_MAX - 1)
		die_nomem();
	a->procs = array_reserve(a->procs, &a->capprocs, a->nprocs + 1,
	                         sizeof *a->procs);
	a->procs[a->nprocs] = (struct process){
	    .pid = pid, .has_pid = has_pid, .generation = generation};
	*counter_at(&a->proc_index, pid, (uint64_t)has_pid) = a->nprocs + 1;
	return (uint32_t)a->nprocs++;
}

/* The process that wrote a record: the latest with its pid. */
static uint32_t process_of(struct analysis *a, const struct call *c)
{
	int has_pid = has(c, TRACE_KEY_PID);
	uint64_t pid = has_pid ? c->v[TRACE_KEY_PID] : 0;
	uint64_t *index = counter_find(&a->proc_index, pid, (uint64_t)has_pid);
	if (index != NULL)
		return (uint32_t)(*index - 1);
	return process_new(a, pid, has_pid, 1);
}

/* A fork record starts a process, a new one even when its pid was seen. */
static uint32_t process_start(struct analysis *a, const struct call *c)
{
	int has_pid = has(c, TRACE_KEY_PID);
	uint64_t pid = has_pid ? c->v[TRACE_KEY_PID] : 0;
	uint64_t *index = counter_find(&a->proc_index, pid, (uint64_t)has_pid);
	unsigned generation = index ? a->procs[*index - 1].generation + 1 : 1;
	return process_new(a, pid, has_pid, generation);
}

/* ----------------------------------------------------------------- pools */

static uint32_t pool_new(struct analysis *a, uint32_t proc, uint64_t id,
                         uint64_t line)
{
	if (a->npools >= UINT32_MAX - 1)
		die_nomem();
	a->pools = array_reserve(a->pools, &a->cappools, a->npools + 1,
	                         sizeof *a->pools);
	struct pool *p = &a->pools[a->npools];
	memset(p, 0, sizeof *p);
	p->id = id;
	p->process = proc;
	p->first_line = line;
	counter_map_init(&p->sizes, &a->key, &a->map_probes);
	counter_map_init(&p->threads, &a->key, &a->map_probes);
	return (uint32_t)a->npools++;
}

static struct set_info *set_of(struct pool *p)
{
	if (p->set == NULL)
		p->set = xcalloc(1, sizeof *p->set);
	return p->set;
}

/* ----------------------------------------------------- what children share */

/* A process that has forked keeps, in procs[].pools, each of its pool ids
 * as a child forked now would inherit it (struct pool_snap), its lives
 * included: each record of it updates the entry of its pool and of the
 * addresses it named.  A child holds the root its parent had at the fork,
 * and makes its copy of a pool when one of its records first names it;
 * the copy's addresses stay in the snapshot (pool.base) until the child
 * touches one, which then gets its own entry in the live set. */

#define NO_POOL UINT32_MAX

static void set_head_of(const struct set_info *s, struct set_head *h)
{
	memset(h, 0, sizeof *h);
	h->min_block = s->min_block;
	h->max_block = s->max_block;
	h->bytes_per_class = s->bytes_per_class;
	for (int i = 0; i < 64; i++) {
		h->known |= (uint64_t)(s->classes[i].known != 0) << i;
		h->block_count[i] = s->classes[i].block_count;
	}
}

/* The entry of pool pi (of proc, which shares) brought up to date; its
 * lives are updated by the caller. */
static struct pool_snap *share_pool(struct analysis *a, uint32_t proc,
                                    uint32_t pi)
{
	const struct pool *p = &a->pools[pi];
	int made;
	struct pool_snap *s =
	    pools_edit(&a->snap, &a->procs[proc].pools, p->id, &made);
	if (made || s->is_alias) {
		s->is_alias = 0;
		s->lives = p->base;
		snap_hold(p->base);
	}
	s->init = p->init;
	s->origin = pi + 1;
	if (p->set == NULL) {
		s->set = NULL;
	} else {
		struct set_head h;
		set_head_of(p->set, &h);
		if (s->set == NULL || memcmp(s->set, &h, sizeof h) != 0)
			s->set = set_head_keep(&a->snap, &h);
	}
	return s;
}

/* id names pool pi in proc, which shares. */
static void share_id(struct analysis *a, uint32_t proc, uint64_t id,
                     uint32_t pi)
{
	if (a->pools[pi].id == id) {
		share_pool(a, proc, pi);
		return;
	}
	int made;
	struct pool_snap *s =
	    pools_edit(&a->snap, &a->procs[proc].pools, id, &made);
	s->is_alias = 1;
	s->alias = a->pools[pi].id;
}

static void share_life(struct analysis *a, struct pool_snap *s,
                       const struct life *l)
{
	if (l->state != ST_NEW)
		lives_set(&a->snap, &s->lives, l);
}

/* At its first fork: proc's pool ids and addresses into its entries, once;
 * from then on its records keep them up to date. */
static void share_start(struct analysis *a, uint32_t proc)
{
	struct process *pr = &a->procs[proc];
	pr->shares = 1;
	for (size_t i = 0; i < pr->nids; i++) {
		uint64_t *index =
		    counter_find(&a->pool_index, proc, pr->ids[i]);
		share_id(a, proc, pr->ids[i], (uint32_t)(*index - 1));
	}
	for (size_t i = 0; i < pr->nlives; i++) {
		const struct life *l = &a->live.v[pr->lives[i]];
		int made;
		share_life(a,
		           pools_edit(&a->snap, &pr->pools,
		                      a->pools[l->pool].id, &made),
		           l);
	}
	free(pr->ids);
	free(pr->lives);
	pr->ids = NULL;
	pr->lives = NULL;
	pr->nids = pr->capids = pr->nlives = pr->caplives = 0;
}

/* After a record of a process that shares: its pool's entry, and those of
 * the addresses it named. */
static void share_record(struct analysis *a, uint32_t proc, uint32_t pi,
                         const struct call *c)
{
	static const enum trace_key keys[] = {TRACE_KEY_PTR, TRACE_KEY_OLD};
	struct pool_snap *s = share_pool(a, proc, pi);
	if (!op_in(c->op, CALL_OPS))
		return;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (!has(c, keys[i]) || c->v[keys[i]] == 0)
			continue;
		const struct life *l = life_find(&a->live, pi, c->v[keys[i]]);
		if (l != NULL)
			share_life(a, s, l);
	}
}

/* id names pool pi in proc from now on. */
static void pool_register(struct analysis *a, uint32_t proc, uint64_t id,
                          uint32_t pi)
{
	*counter_at(&a->pool_index, proc, id) = (uint64_t)pi + 1;
	struct process *pr = &a->procs[proc];
	if (pr->shares) {
		share_id(a, proc, id, pi);
		return;
	}
	pr->ids = array_reserve_from(pr->ids, &pr->capids, pr->nids + 1,
	                             sizeof *pr->ids, 1);
	pr->ids[pr->nids++] = id;
}

/* A new entry of the live set, of a process that does not share yet. */
static void note_life(struct analysis *a, uint32_t proc, const struct life *l)
{
	struct process *pr = &a->procs[proc];
	if (pr->shares)
		return;
	pr->lives = array_reserve_from(pr->lives, &pr->caplives, pr->nlives + 1,
	                               sizeof *pr->lives, 1);
	pr->lives[pr->nlives++] = (uint32_t)(l - a->live.v);
}

/* The copy of an inherited pool: what the parent had at the fork. */
static void pool_fill(struct analysis *a, struct pool *p,
                      const struct process *pr, const struct pool_snap *s)
{
	p->init = s->init;
	p->forked_from = s->origin;
	p->fork_line = pr->fork_line;
	if (s->set != NULL) {
		struct set_info *set = set_of(p);
		set->min_block = s->set->min_block;
		set->max_block = s->set->max_block;
		set->bytes_per_class = s->set->bytes_per_class;
		for (int i = 0; i < 64; i++) {
			set->classes[i].known = (int)(s->set->known >> i) & 1;
			set->classes[i].block_count = s->set->block_count[i];
		}
	}
	p->base = s->lives;
	snap_hold(p->base);
	const struct live_count *c = lives_count(p->base);
	counts_set(&p->st, STAT(live_pool_blocks), c->pool_blocks);
	counts_set(&p->st, STAT(peak_pool_blocks), c->pool_blocks);
	counts_set(&p->st, STAT(live_fallback_bytes), c->fallback_bytes);
	counts_set(&p->st, STAT(peak_fallback_bytes), c->fallback_bytes);
	series_sample_at(a, p, pr->fork_record, pr->fork_t);
}

/* The child's copy of the pool id named in its parent at the fork, made
 * now; NO_POOL when the parent had none. */
static uint32_t pool_inherit(struct analysis *a, uint32_t proc, uint64_t id)
{
	const struct process *pr = &a->procs[proc];
	if (pr->pools == NULL)
		return NO_POOL;
	const struct pool_snap *s = pools_find(&a->snap, pr->pools, id);
	uint64_t target = id;
	if (s != NULL && s->is_alias) {
		/* A set class's id: the copy of its set. */
		target = s->alias;
		uint64_t *index = counter_find(&a->pool_index, proc, target);
		if (index != NULL) {
			uint32_t pi = (uint32_t)(*index - 1);
			pool_register(a, proc, id, pi);
			return pi;
		}
		s = pools_find(&a->snap, pr->pools, target);
	}
	if (s == NULL || s->is_alias)
		return NO_POOL;
	uint32_t pi = pool_new(a, proc, target, pr->fork_line);
	pool_fill(a, &a->pools[pi], pr, s);
	pool_register(a, proc, target, pi);
	if (target != id)
		pool_register(a, proc, id, pi);
	return pi;
}

/* The pool id names in proc, inherited or not; NO_POOL when none. */
static uint32_t pool_find(struct analysis *a, uint32_t proc, uint64_t id)
{
	uint64_t *index = counter_find(&a->pool_index, proc, id);
	if (index != NULL)
		return (uint32_t)(*index - 1);
	return pool_inherit(a, proc, id);
}

static uint32_t pool_get(struct analysis *a, uint32_t proc, uint64_t id,
                         uint64_t line)
{
	uint32_t pi = pool_find(a, proc, id);
	if (pi == NO_POOL) {
		pi = pool_new(a, proc, id, line);
		pool_register(a, proc, id, pi);
	}
	return pi;
}

/* The pool a record is about: a class's init record is about its set. */
static uint64_t pool_id_of(const struct call *c)
{
	if (c->op == TRACE_OP_INIT && has(c, TRACE_KEY_SET))
		return c->v[TRACE_KEY_SET];
	return c->v[TRACE_KEY_POOL];
}

/* ---------------------------------------------------------------- events */

/* Adds delta (wrapping) to a counter of the pool and of the total. */
static void tally(struct analysis *a, struct pool *p, size_t word,
                  uint64_t delta)
{
	counts_add(&p->st, word, delta);
	*stats_word(&a->total, word) += delta;
}

static void add_event(struct ctx *x, enum kind k, uint64_t ptr,
                      uint64_t other_line)
{
	if (x->p->ev == NULL)
		x->p->ev = xcalloc(K_COUNT, sizeof *x->p->ev);
	struct evlist *l = &x->p->ev[k];
	l->count++;
	tally(x->a, x->p, STAT(problems) + k, 1);
	if (l->n - l->retracted >= x->a->opt.limit)
		return;
	l->v = array_reserve(l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = (struct event){x->line,
	                              ptr,
	                              value(x, TRACE_KEY_THREAD),
	                              other_line,
	                              (unsigned char)x->c->op,
	                              0};
}

/* Takes back the event of kind k at line: it was another kind after all.
 * Events are appended in the order records are applied, which seq= may
 * make another than that of their lines: the list is searched from its
 * end, where a recent event is. */
static void retract_event(struct ctx *x, enum kind k, uint64_t line)
{
	struct evlist *l = &x->p->ev[k];
	l->count--;
	tally(x->a, x->p, STAT(problems) + k, (uint64_t)-1);
	for (size_t i = l->n; i-- > 0;) {
		if (l->v[i].line == line && !l->v[i].retracted) {
			l->v[i].retracted = 1;
			l->retracted++;
			break;
		}
	}
}

/* ------------------------------------------------------------- live set */

static void peak(uint64_t *live, uint64_t *pk)
{
	if (*live > *pk)
		*pk = *live;
}

/* A live counter of the pool and of the total changes (delta wrapping),
 * and its peak follows. */
static void live_change(struct analysis *a, struct pool *p, size_t live,
                        size_t top, uint64_t delta)
{
	counts_add(&p->st, live, delta);
	uint64_t v = counts_get(&p->st, live);
	if (v > counts_get(&p->st, top))
		counts_set(&p->st, top, v);
	*stats_word(&a->total, live) += delta;
	peak(stats_word(&a->total, live), stats_word(&a->total, top));
}

/* Adds (sign > 0) or removes a live entry's weight in both stats and in
 * its process's count. */
static void live_account(struct analysis *a, struct pool *p,
                         const struct life *l, int sign)
{
	struct live_count *c = &a->procs[p->process].live;
	c->n += (uint64_t)(int64_t)sign;
	c->bytes += sign > 0 ? l->size : -l->size;
	if (l->src == TRACE_SRC_POOL)
		c->pool_blocks += (uint64_t)(int64_t)sign;
	else if (l->src == TRACE_SRC_FALLBACK)
		c->fallback_bytes += sign > 0 ? l->size : -l->size;
	if (l->src == TRACE_SRC_POOL)
		live_change(a, p, STAT(live_pool_blocks),
		            STAT(peak_pool_blocks), (uint64_t)(int64_t)sign);
	else if (l->src == TRACE_SRC_FALLBACK)
		live_change(a, p, STAT(live_fallback_bytes),
		            STAT(peak_fallback_bytes),
		            sign > 0 ? l->size : -l->size);
}

/* The entry of ptr in the record's pool: its own, or else a copy of the
 * one it inherited; when it has neither, a new one (state ST_NEW) if
 * create, else NULL.  Earlier pointers into the live set do not survive
 * it. */
static struct life *life_get(struct ctx *x, uint64_t ptr, int create)
{
	struct analysis *a = x->a;
	struct life *l;
	size_t n = a->live.n;
	if (x->p->base == NULL) {
		/* Nothing inherited: one lookup, as without forks. */
		l = create ? life_claim(&a->live, x->pi, ptr)
		           : life_find(&a->live, x->pi, ptr);
		if (a->live.n > n)
			note_life(a, x->proc, l);
		return l;
	}
	l = life_find(&a->live, x->pi, ptr);
	if (l != NULL)
		return l;
	const struct life *b = lives_find(&a->snap, x->p->base, ptr);
	if (b == NULL && !create)
		return NULL;
	l = life_claim(&a->live, x->pi, ptr);
	note_life(a, x->proc, l);
	if (b != NULL) {
		/* The inherited one stays as the fork left it. */
		*l = *b;
		l->pool = x->pi;
		l->pending_double = 0; /* its event is the parent's */
		if (b->state == ST_LIVE) {
			x->p->shadowed++;
			x->p->shadowed_bytes += b->size;
		}
	}
	return l;
}

static void make_live(struct ctx *x, uint64_t ptr, uint64_t size, uint64_t src)
{
	struct life *l = life_get(x, ptr, 1);
	if (l->state == ST_LIVE) {
		add_event(x, K_DUPLICATE, ptr, l->line);
		live_account(x->a, x->p, l, -1);
	}
	*l = (struct life){
	    .ptr = ptr,
	    .size = size,
	    .line = x->line,
	    .thread = value(x, TRACE_KEY_THREAD),
	    .pool = x->pi,
	    .state = ST_LIVE,
	    .op = (unsigned char)x->c->op,
	    .src = (unsigned char)src,
	};
	live_account(x->a, x->p, l, +1);
}

/* The life of ptr when it is live; else why not becomes an event. */
static struct life *live_or_event(struct ctx *x, uint64_t ptr)
{
	struct life *l = life_get(x, ptr, 0);
	if (l == NULL || l->state == ST_NEW) {
		add_event(x, K_UNKNOWN, ptr, 0);
		return NULL;
	}
	if (l->state == ST_RELEASED) {
		/* The system allocator may have handed it to anyone since. */
		add_event(x, K_UNKNOWN, ptr, l->line);
		return NULL;
	}
	if (l->state == ST_FREED) {
		add_event(x, K_UNREPORTED, ptr, l->line);
		l->pending_double = x->line;
		return NULL;
	}
	return l;
}

/* Ends the life of ptr; src is the free's, NONE to go by the entry's. */
static void release(struct ctx *x, uint64_t ptr, uint64_t src)
{
	struct life *l = live_or_event(x, ptr);
	if (l == NULL)
		return;
	live_account(x->a, x->p, l, -1);
	uint64_t thread = value(x, TRACE_KEY_THREAD);
	if (l->thread != thread)
		tally(x->a, x->p, STAT(cross_thread), 1);
	int to_system =
	    src == TRACE_SRC_FALLBACK || l->src == TRACE_SRC_FALLBACK;
	l->state = to_system ? ST_RELEASED : ST_FREED;
	l->line = x->line;
	l->thread = thread;
	l->pending_double = 0;
}

/* -------------------------------------------------------------- requests */

/* The first known class of a set that fits size; -1 when none does. */
static int class_for_size(const struct set_info *s, uint64_t size)
{
	unsigned i = size <= 1 ? 0 : log2_of(size - 1) + 1;
	for (; i < 64; i++)
		if (s->classes[i].known)
			return (int)i;
	return -1;
}

static void count_class(struct ctx *x, uint64_t size, uint64_t src)
{
	struct set_info *s = x->p->set;
	int fallback = src == TRACE_SRC_FALLBACK;
	/* A class= key names the class that served the request; without
	 * one (the library writes none), the class is the smallest that
	 * fits: a set never hands a request to a larger class, an exhausted
	 * one sends it to the fallback. */
	uint64_t class = value(x, TRACE_KEY_CLASS);
	if (src == TRACE_SRC_POOL && class != 0)
		s->classes[log2_of(class)].known = 1;
	int i = class_for_size(s, size);
	if (src == TRACE_SRC_POOL && class != 0)
		s->classes[log2_of(class)].served++;
	else if (src == TRACE_SRC_POOL && i >= 0)
		s->classes[i].served++;
	if (i < 0) {
		s->above_requests++;
		s->above_fallback += (uint64_t)fallback;
	} else {
		s->classes[i].requests++;
		s->classes[i].fallback += (uint64_t)fallback;
	}
}

/* An allocating call: histogram, counters; src says who served it. */
static void count_request(struct ctx *x, uint64_t size, uint64_t src)
{
	struct pool *p = x->p;
	(*counter_at(&p->sizes, size, 0))++;
	tally(x->a, p, STAT(alloc_calls), 1);
	if (src == TRACE_SRC_NONE) {
		tally(x->a, p, STAT(failed), 1);
	} else {
		tally(x->a, p, STAT(served) + src, 1);
		series_count(x->a, p, src == TRACE_SRC_FALLBACK);
	}
	if (p->set != NULL)
		count_class(x, size, src);
}

/* --------------------------------------------------------------- records */

static void on_class_init(struct ctx *x)
{
	struct set_info *s = set_of(x->p);
	struct set_class *class =
	    &s->classes[log2_of(value(x, TRACE_KEY_BLOCK_SIZE))];
	class->known = 1;
	class->block_count = value(x, TRACE_KEY_BLOCK_COUNT);
	/* Whatever names the class's own pool id is about the set, unless
	 * the id names a pool already (a copy made here among them). */
	uint64_t id = value(x, TRACE_KEY_POOL);
	if (pool_find(x->a, x->proc, id) == NO_POOL)
		pool_register(x->a, x->proc, id, x->pi);
	x->p = &x->a->pools[x->pi];
}

static void on_init(struct ctx *x)
{
	struct pool *p = x->p;
	if (has(x->c, TRACE_KEY_SET)) {
		on_class_init(x);
		return;
	}
	p->init.has_init = 1;
	p->init.block_size = value(x, TRACE_KEY_BLOCK_SIZE);
	p->init.block_count = value(x, TRACE_KEY_BLOCK_COUNT);
	p->init.has_flags = has(x->c, TRACE_KEY_FLAGS);
	p->init.flags = value(x, TRACE_KEY_FLAGS);
	p->init.line = x->line;
}

static void on_set_init(struct ctx *x)
{
	struct pool *p = x->p;
	struct set_info *s = set_of(p);
	s->min_block = value(x, TRACE_KEY_MIN_BLOCK);
	s->max_block = value(x, TRACE_KEY_MAX_BLOCK);
	s->bytes_per_class = value(x, TRACE_KEY_BYTES_PER_CLASS);
	for (unsigned i = log2_of(s->min_block); i <= log2_of(s->max_block);
	     i++)
		s->classes[i].known = 1;
	p->init.has_init = 1;
	p->init.has_flags = has(x->c, TRACE_KEY_FLAGS);
	p->init.flags = value(x, TRACE_KEY_FLAGS);
	p->init.line = x->line;
}

static void on_destroy(struct ctx *x)
{
	x->p->destroy_line = x->line;
}

static void on_alloc(struct ctx *x)
{
	uint64_t ptr = value(x, TRACE_KEY_PTR);
	uint64_t size = value(x, TRACE_KEY_SIZE);
	uint64_t src = value(x, TRACE_KEY_SRC);
	count_request(x, size, src);
	if (ptr != 0)
		make_live(x, ptr, size, src);
}

static void on_free(struct ctx *x)
{
	uint64_t ptr = value(x, TRACE_KEY_PTR);
	uint64_t src = value(x, TRACE_KEY_SRC);
	tally(x->a, x->p, STAT(frees_by_src) + src, 1);
	if (refused(src))
		add_event(x, refused_kind(src), ptr, 0);
	else if (ptr != 0)
		release(x, ptr, src);
}

/* realloc(NULL, n) is malloc(n); realloc(NULL, 0) may give NULL. */
static void realloc_new(struct ctx *x, uint64_t size, uint64_t ptr,
                        uint64_t src)
{
	if (ptr != 0 || size > 0)
		count_request(x, size, src);
	if (ptr != 0)
		make_live(x, ptr, size, src);
}

/* The old pointer stays where it was: live from here on, whatever it was
 * before, with the new size. */
static void realloc_in_place(struct ctx *x, uint64_t size, uint64_t ptr,
                             uint64_t src)
{
	count_request(x, size, src);
	tally(x->a, x->p, STAT(realloc_inplace), 1);
	struct life *l = live_or_event(x, ptr);
	if (l != NULL) {
		live_account(x->a, x->p, l, -1);
		l->state = ST_NEW;
	}
	make_live(x, ptr, size, src);
}

static void realloc_moved(struct ctx *x, uint64_t old, uint64_t size,
                          uint64_t ptr, uint64_t src)
{
	count_request(x, size, src);
	tally(x->a, x->p, STAT(realloc_moved), 1);
	release(x, old, TRACE_SRC_NONE);
	make_live(x, ptr, size, src);
}

static void on_realloc(struct ctx *x)
{
	uint64_t old = value(x, TRACE_KEY_OLD);
	uint64_t size = value(x, TRACE_KEY_SIZE);
	uint64_t ptr = value(x, TRACE_KEY_PTR);
	uint64_t src = value(x, TRACE_KEY_SRC);
	if (refused(src)) {
		/* The old pointer was refused: a bad free, nothing more. */
		add_event(x, refused_kind(src), old, 0);
	} else if (old == 0) {
		realloc_new(x, size, ptr, src);
	} else if (ptr == 0 && size == 0) {
		tally(x->a, x->p, STAT(realloc_to_zero), 1);
		release(x, old, TRACE_SRC_NONE);
	} else if (ptr == 0) {
		count_request(x, size, TRACE_SRC_NONE);
		tally(x->a, x->p, STAT(realloc_failed), 1);
		live_or_event(x, old); /* it must still be live */
	} else if (ptr == old) {
		realloc_in_place(x, size, ptr, src);
	} else {
		realloc_moved(x, old, size, ptr, src);
	}
}

static void on_trim(struct ctx *x)
{
	tally(x->a, x->p, STAT(trims), 1);
	tally(x->a, x->p, STAT(trim_bytes), value(x, TRACE_KEY_BYTES));
}

/* A double free the library found after the free that made it: the
 * analyzer's pending "not reported" of that free was reported after all. */
static void on_report(struct ctx *x)
{
	enum kind k = error_kind(value(x, TRACE_KEY_ERROR));
	uint64_t ptr = value(x, TRACE_KEY_PTR);
	struct life *l = life_find(&x->a->live, x->pi, ptr);
	if (k == K_DOUBLE && l != NULL && l->pending_double != 0) {
		retract_event(x, K_UNREPORTED, l->pending_double);
		add_event(x, K_DOUBLE, ptr, l->pending_double);
		l->pending_double = 0;
		return;
	}
	add_event(x, k, ptr, 0);
}

/* ------------------------------------------------------------------ fork */

/* The child starts from its parent's pools as they are now: it holds
 * their snapshot, and what is live in them counts in the totals from here
 * on, as theirs.  Its copy of a pool is made when it names the pool. */
static void on_fork(struct ctx *x)
{
	struct analysis *a = x->a;
	uint32_t parent = x->parent;
	if (parent == NO_PROC || parent == x->proc)
		return;
	if (!a->procs[parent].shares)
		share_start(a, parent);
	const struct process *pp = &a->procs[parent];
	struct process *pc = &a->procs[x->proc];
	pc->pools = pp->pools;
	snap_hold(pc->pools);
	pc->forked = 1;
	pc->fork_line = x->line;
	pc->fork_record = a->applied + 1;
	pc->fork_t = value(x, TRACE_KEY_T);
	pc->inherited = pc->live = pp->live;
	struct stats *t = &a->total;
	t->live_pool_blocks += pp->live.pool_blocks;
	peak(&t->live_pool_blocks, &t->peak_pool_blocks);
	t->live_fallback_bytes += pp->live.fallback_bytes;
	peak(&t->live_fallback_bytes, &t->peak_fallback_bytes);
}

/* -------------------------------------------------------------- dispatch */

typedef void handler(struct ctx *x);

static handler *const handlers[TRACE_OP_COUNT] = {
    [TRACE_OP_INIT] = on_init,         [TRACE_OP_SET_INIT] = on_set_init,
    [TRACE_OP_DESTROY] = on_destroy,   [TRACE_OP_MALLOC] = on_alloc,
    [TRACE_OP_CALLOC] = on_alloc,      [TRACE_OP_REALLOC] = on_realloc,
    [TRACE_OP_STRDUP] = on_alloc,      [TRACE_OP_FREE] = on_free,
    [TRACE_OP_MALLOC_BULK] = on_alloc, [TRACE_OP_FREE_BULK] = on_free,
    [TRACE_OP_TRIM] = on_trim,         [TRACE_OP_REPORT] = on_report,
    [TRACE_OP_FORK] = on_fork,
};

static void note_time(struct analysis *a, const struct call *c)
{
	if (!has(c, TRACE_KEY_T)) {
		a->untimed++;
	} else if (!a->has_t0) {
		a->t0 = c->v[TRACE_KEY_T];
		a->has_t0 = 1;
	}
}

/* Operation and thread counts; a call's sample for the plot. */
static void count_record(struct ctx *x)
{
	struct analysis *a = x->a;
	enum trace_op op = x->c->op;
	a->total.ops[op]++;
	if (x->p == NULL)
		return;
	counts_add(&x->p->st, STAT(ops) + op, 1);
	if (!op_in(op, CALL_OPS))
		return;
	uint64_t thread = value(x, TRACE_KEY_THREAD);
	(*counter_at(&x->p->threads, x->proc, thread))++;
	(*counter_at(&a->threads, x->proc, thread))++;
	series_sample(a, x->p, value(x, TRACE_KEY_T));
}

uint32_t model_process(struct analysis *a, const struct call *c,
                       uint32_t *parent)
{
	*parent = NO_PROC;
	if (c->op != TRACE_OP_FORK)
		return process_of(a, c);
	/* The parent is looked up first: a crafted record may name its own
	 * pid. */
	uint64_t *index =
	    counter_find(&a->proc_index, c->v[TRACE_KEY_PARENT], 1);
	if (index != NULL)
		*parent = (uint32_t)(*index - 1);
	return process_start(a, c);
}

void model_apply(struct analysis *a, const struct call *c, uint64_t line,
                 uint32_t proc, uint32_t parent)
{
	struct ctx x = {a, c, line, proc, parent, 0, NULL};
	note_time(a, c);
	if (c->op != TRACE_OP_FORK) {
		x.pi = pool_get(a, x.proc, pool_id_of(c), line);
		x.p = &a->pools[x.pi];
		if (has(c, TRACE_KEY_CLASS))
			set_of(x.p);
	}
	handlers[c->op](&x);
	if (x.p != NULL && a->procs[x.proc].shares)
		share_record(a, x.proc, x.pi, c);
	count_record(&x);
	a->applied++;
}

/* -------------------------------------------------------------- lifetime */

void analysis_init(struct analysis *a, const struct options *opt)
{
	memset(a, 0, sizeof *a);
	a->opt = *opt;
	hash_key_init(&a->key);
	counter_map_init(&a->pool_index, &a->key, &a->map_probes);
	counter_map_init(&a->proc_index, &a->key, &a->map_probes);
	counter_map_init(&a->threads, &a->key, &a->map_probes);
	a->live.index.key = &a->key;
	a->live.index.stats = &a->live_probes;
	snapshots_init(&a->snap, &a->key, &a->fork_probes);
	order_init(&a->order, opt->window);
}

static void pool_entry_free(struct pool *p)
{
	counts_free(&p->st);
	counter_map_free(&p->sizes);
	counter_map_free(&p->threads);
	for (int k = 0; p->ev != NULL && k < K_COUNT; k++)
		free(p->ev[k].v);
	free(p->ev);
	free(p->leaks);
	free(p->set);
	if (p->series != NULL)
		series_free(p->series);
	free(p->series);
}

void analysis_free(struct analysis *a)
{
	order_free(a);
	for (size_t i = 0; i < a->npools; i++)
		pool_entry_free(&a->pools[i]);
	free(a->pools);
	for (size_t i = 0; i < a->nprocs; i++) {
		free(a->procs[i].ids);
		free(a->procs[i].lives);
	}
	free(a->procs);
	snapshots_free(&a->snap);
	counter_map_free(&a->pool_index);
	counter_map_free(&a->proc_index);
	counter_map_free(&a->threads);
	table_free(&a->live.index);
	free(a->live.v);
	free(a->lines.mal);
	free(a->lines.unk);
}
