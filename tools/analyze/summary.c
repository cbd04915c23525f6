/*
 * shiftpool-analyze: what both reports derive from the model at the end:
 * the records still held back applied, leaks, sizes by frequency,
 * buckets, the verdict, the names of pools.
 *
 * SPDX-License-Identifier: MIT
 */
#include "analyze.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int leak_cmp(const void *x, const void *y)
{
	const struct leak *l = x, *m = y;
	if (l->line != m->line)
		return l->line > m->line ? 1 : -1;
	return (l->ptr > m->ptr) - (l->ptr < m->ptr);
}

static void count_leak(struct analysis *a, struct pool *p, uint64_t n,
                       uint64_t bytes)
{
	counts_add(&p->st, STAT(leaks), n);
	counts_add(&p->st, STAT(leak_bytes), bytes);
	a->total.leaks += n;
	a->total.leak_bytes += bytes;
}

/* A pool's own entries, in the live set. */
static void count_own_leaks(struct analysis *a)
{
	for (size_t i = 0; i < a->live.n; i++) {
		const struct life *l = &a->live.v[i];
		if (l->state == ST_LIVE)
			count_leak(a, &a->pools[l->pool], 1, l->size);
	}
}

struct own_entry {
	struct analysis *a;
	uint32_t pool;
};

static int has_own_entry(void *arg, uint64_t ptr)
{
	struct own_entry *o = arg;
	return life_find(&o->a->live, o->pool, ptr) != NULL;
}

/* What a forked process inherited and never touched: of the pools it
 * named, from their snapshots; of the others, as many as were live in
 * them at the fork, which no pool lists. */
static void count_inherited_leaks(struct analysis *a)
{
	struct live_count *named = xcalloc(a->nprocs, sizeof *named);
	for (size_t i = 0; i < a->npools; i++) {
		struct pool *p = &a->pools[i];
		if (p->base == NULL)
			continue;
		const struct live_count *c = lives_count(p->base);
		count_leak(a, p, c->n - p->shadowed,
		           c->bytes - p->shadowed_bytes);
		named[p->process].n += c->n;
		named[p->process].bytes += c->bytes;
	}
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct process *pr = &a->procs[i];
		if (!pr->forked)
			continue;
		a->unnamed_leaks += pr->inherited.n - named[i].n;
		a->unnamed_leak_bytes += pr->inherited.bytes - named[i].bytes;
	}
	a->total.leaks += a->unnamed_leaks;
	a->total.leak_bytes += a->unnamed_leak_bytes;
	free(named);
}

/* Of the inherited leaks of p, as many as a list shows. */
static size_t leaks_listed(const struct analysis *a, const struct pool *p,
                           uint64_t own)
{
	uint64_t inherited = counts_get(&p->st, STAT(leaks)) - own;
	return inherited < a->opt.limit ? (size_t)inherited : a->opt.limit;
}

/* Allocations live at the end, per pool, first allocated first: all of a
 * pool's own entries, and of the inherited ones only as many as a list
 * shows. */
void analysis_finish(struct analysis *a)
{
	order_finish(a);
	count_own_leaks(a);
	uint64_t *own = xcalloc(a->npools, sizeof *own);
	for (size_t i = 0; i < a->npools; i++)
		own[i] = counts_get(&a->pools[i].st, STAT(leaks));
	count_inherited_leaks(a);
	for (size_t i = 0; i < a->npools; i++) {
		struct pool *p = &a->pools[i];
		size_t n = (size_t)own[i] + leaks_listed(a, p, own[i]);
		if (n > 0)
			p->leaks = xcalloc(n, sizeof *p->leaks);
	}
	for (size_t i = 0; i < a->live.n; i++) {
		const struct life *l = &a->live.v[i];
		if (l->state != ST_LIVE)
			continue;
		struct pool *p = &a->pools[l->pool];
		p->leaks[p->nleaks++] = (struct leak){
		    l->ptr, l->size, l->line, l->thread, l->op, l->src};
	}
	for (size_t i = 0; i < a->npools; i++) {
		struct pool *p = &a->pools[i];
		size_t max = leaks_listed(a, p, own[i]);
		if (max == 0)
			continue;
		struct own_entry o = {a, (uint32_t)i};
		struct life *v = xcalloc(max, sizeof *v);
		size_t n =
		    lives_first(&a->snap, p->base, max, has_own_entry, &o, v);
		for (size_t j = 0; j < n; j++)
			p->leaks[p->nleaks++] =
			    (struct leak){v[j].ptr,    v[j].size, v[j].line,
			                  v[j].thread, v[j].op,   v[j].src};
		free(v);
	}
	free(own);
	for (size_t i = 0; i < a->npools; i++)
		if (a->pools[i].nleaks > 1) /* a pool without leaks has no list */
			qsort(a->pools[i].leaks, a->pools[i].nleaks,
			      sizeof(struct leak), leak_cmp);
}

static int sizecount_cmp(const void *x, const void *y)
{
	const struct sizecount *s = x, *t = y;
	if (s->count != t->count)
		return s->count < t->count ? 1 : -1;
	return (s->size > t->size) - (s->size < t->size);
}

struct sizecount *top_sizes(const struct pool *p, size_t *n)
{
	struct sizecount *v = xcalloc(p->sizes.n, sizeof *v);
	for (size_t i = 0; i < p->sizes.n; i++)
		v[i] = (struct sizecount){p->sizes.v[i].a, p->sizes.v[i].count};
	qsort(v, p->sizes.n, sizeof *v, sizecount_cmp);
	*n = p->sizes.n;
	return v;
}

uint64_t oversize_requests(const struct pool *p)
{
	uint64_t n = 0;
	for (size_t i = 0; i < p->sizes.n; i++)
		if (p->sizes.v[i].a > p->init.block_size)
			n += p->sizes.v[i].count;
	return n;
}

/* Bucket 0 is size 0, 1 is size 1, b > 1 holds 2^(b-2) + 1 .. 2^(b-1). */
const struct evlist *pool_events(const struct pool *p, enum kind k)
{
	static const struct evlist none;
	return p->ev != NULL ? &p->ev[k] : &none;
}

/* The bucket of a size: 0 and 1 their own, then 1 + ceil(log2(size)). */
static unsigned size_bucket(uint64_t size)
{
	if (size <= 1)
		return (unsigned)size;
	unsigned b = 2;
	for (uint64_t v = size - 1; v > 1; v >>= 1)
		b++;
	return b;
}

void pool_buckets(const struct pool *p, uint64_t out[BUCKETS])
{
	memset(out, 0, BUCKETS * sizeof *out);
	for (size_t i = 0; i < p->sizes.n; i++)
		out[size_bucket(p->sizes.v[i].a)] += p->sizes.v[i].count;
}

void bucket_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
	if (b <= 1) {
		*lo = *hi = b;
		return;
	}
	*lo = b == 2 ? 2 : (UINT64_C(1) << (b - 2)) + 1;
	*hi = b - 1 >= 64 ? UINT64_MAX : UINT64_C(1) << (b - 1);
}

/* Leaks and every kind of problem; with --strict, bad lines too. */
uint64_t total_problems(const struct analysis *a)
{
	uint64_t n = a->total.leaks;
	for (int k = 0; k < K_COUNT; k++)
		n += a->total.problems[k];
	if (a->opt.strict)
		n += a->lines.malformed + a->lines.unknown;
	return n;
}

uint64_t frees_total(const struct stats *s)
{
	uint64_t n = 0;
	for (int i = 0; i < TRACE_SRC_COUNT; i++)
		n += s->frees_by_src[i];
	return n;
}

void pool_name(const struct analysis *a, const struct pool *p, char *buf,
               size_t size)
{
	const struct process *pr = &a->procs[p->process];
	if (a->nprocs <= 1)
		snprintf(buf, size, "%" PRIu64, p->id);
	else if (!pr->has_pid)
		snprintf(buf, size, "?:%" PRIu64, p->id);
	else if (pr->generation > 1)
		snprintf(buf, size, "%" PRIu64 "#%u:%" PRIu64, pr->pid,
		         pr->generation, p->id);
	else
		snprintf(buf, size, "%" PRIu64 ":%" PRIu64, pr->pid, p->id);
}

const char *pool_kind(const struct pool *p)
{
	return p->set != NULL ? "set" : "pool";
}

const char *input_name(const struct analysis *a)
{
	return strcmp(a->opt.file, "-") == 0 ? "(standard input)" : a->opt.file;
}

const struct event *event_next(const struct evlist *l, size_t *i)
{
	while (*i < l->n) {
		const struct event *e = &l->v[(*i)++];
		if (!e->retracted)
			return e;
	}
	return NULL;
}
