/*
 * shiftpool-analyze: the persistent tries that hold what forked children
 * inherit (see analyze.h).
 *
 * A trie is a digital search tree: every node holds an entry, and the
 * bits of the keyed hash of its key, two at a level, choose the child to
 * go down to.  A trace cannot know the key, so it cannot make a walk long:
 * the depth stays about log4 of the entries.  A node counts its holders
 * (parent nodes, roots); one held once, reached from a root its changer
 * holds, is changed in place, any other is copied first, so that a change
 * copies at most the path to its entry and those who hold the old nodes
 * still see them as they were.  The nodes of a trie of lives also sum up
 * the live entries under them: their count and sizes for the totals, and
 * the first of them by (line, ptr) for listing leaks in order without
 * looking at the others.
 *
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "analyze.h"

#include <stdlib.h>
#include <string.h>

enum { SN_LIFE, SN_POOL };

struct life_node {
	struct life life;
	struct live_count sum;      /* the live entries of the subtree */
	uint64_t min_line, min_ptr; /* the first of them, when sum.n */
};

struct snode {
	uint64_t key;
	uint32_t refs;
	unsigned char kind;
	struct snode *child[4];
	union {
		struct life_node l;
		struct pool_snap pool;
	} u;
};

#define CHUNK_NODES 1024

struct snode_chunk {
	struct snode_chunk *next;
	struct snode v[CHUNK_NODES];
};

void snapshots_init(struct snapshots *s, const struct hash_key *key,
                    struct probe_stats *stats)
{
	memset(s, 0, sizeof *s);
	s->key = key;
	s->stats = stats;
}

void snapshots_free(struct snapshots *s)
{
	while (s->chunks != NULL) {
		struct snode_chunk *c = s->chunks;
		s->chunks = c->next;
		free(c);
	}
	for (size_t i = 0; i < s->nsets; i++)
		free(s->sets[i]);
	free(s->sets);
	memset(s, 0, sizeof *s);
}

size_t snapshot_node_size(void)
{
	return sizeof(struct snode);
}

void snap_hold(struct snode *n)
{
	if (n != NULL) {
		if (n->refs == UINT32_MAX)
			die_nomem();
		n->refs++;
	}
}

static struct snode *node_new(struct snapshots *s, unsigned char kind,
                              uint64_t key)
{
	if (s->left == 0) {
		struct snode_chunk *c = xmalloc(sizeof *c);
		c->next = s->chunks;
		s->chunks = c;
		s->left = CHUNK_NODES;
	}
	struct snode *n = &s->chunks->v[--s->left];
	memset(n, 0, sizeof *n);
	n->key = key;
	n->refs = 1;
	n->kind = kind;
	s->nodes++;
	return n;
}

/* The node at *slot, copied first unless held by *slot alone. */
static struct snode *own(struct snapshots *s, struct snode **slot)
{
	struct snode *n = *slot;
	if (n->refs == 1)
		return n;
	struct snode *c = node_new(s, n->kind, n->key);
	memcpy(&c->child, &n->child, sizeof c->child);
	c->u = n->u;
	for (int i = 0; i < 4; i++)
		snap_hold(c->child[i]);
	if (c->kind == SN_POOL)
		snap_hold(c->u.pool.lives);
	n->refs--;
	*slot = c;
	return c;
}

/* The child of the node at depth d that key goes down to; *h carries the
 * hash, made again every 32 levels from more of it. */
static unsigned branch(const struct snapshots *s, uint64_t key,
                       unsigned char kind, unsigned d, uint64_t *h)
{
	if (d % 32 == 0)
		*h = hash_pair(s->key, key, ((uint64_t)(d / 32) << 1) | kind);
	return (unsigned)(*h >> (2 * (d % 32))) & 3;
}

static void count_walk(struct snapshots *s, uint64_t walked)
{
	s->stats->lookups++;
	s->stats->probes += walked;
	if (walked > s->stats->max)
		s->stats->max = walked;
}

static const struct snode *find(struct snapshots *s, const struct snode *n,
                                unsigned char kind, uint64_t key)
{
	uint64_t h = 0, walked = 1;
	unsigned d = 0;
	while (n != NULL && n->key != key) {
		n = n->child[branch(s, key, kind, d++, &h)];
		walked++;
	}
	count_walk(s, walked);
	return n;
}

/* ------------------------------------------------------------------ lives */

static int before(uint64_t line, uint64_t ptr, uint64_t line2, uint64_t ptr2)
{
	return line != line2 ? line < line2 : ptr < ptr2;
}

static void sum_update(struct snode *n)
{
	struct life_node *v = &n->u.l;
	const struct life *l = &v->life;
	memset(&v->sum, 0, sizeof v->sum);
	if (l->state == ST_LIVE) {
		v->sum.n = 1;
		v->sum.bytes = l->size;
		if (l->src == TRACE_SRC_POOL)
			v->sum.pool_blocks = 1;
		else if (l->src == TRACE_SRC_FALLBACK)
			v->sum.fallback_bytes = l->size;
		v->min_line = l->line;
		v->min_ptr = l->ptr;
	}
	for (int i = 0; i < 4; i++) {
		const struct life_node *c =
		    n->child[i] ? &n->child[i]->u.l : NULL;
		if (c == NULL || c->sum.n == 0)
			continue;
		if (v->sum.n == 0 ||
		    before(c->min_line, c->min_ptr, v->min_line, v->min_ptr)) {
			v->min_line = c->min_line;
			v->min_ptr = c->min_ptr;
		}
		v->sum.n += c->sum.n;
		v->sum.bytes += c->sum.bytes;
		v->sum.pool_blocks += c->sum.pool_blocks;
		v->sum.fallback_bytes += c->sum.fallback_bytes;
	}
}

const struct life *lives_find(struct snapshots *s, const struct snode *root,
                              uint64_t ptr)
{
	const struct snode *n = find(s, root, SN_LIFE, ptr);
	return n ? &n->u.l.life : NULL;
}

static void set_at(struct snapshots *s, struct snode **slot,
                   const struct life *l, uint64_t h, unsigned d,
                   uint64_t *walked)
{
	struct snode *n;
	(*walked)++;
	if (*slot == NULL) {
		n = node_new(s, SN_LIFE, l->ptr);
		*slot = n;
		n->u.l.life = *l;
	} else {
		n = own(s, slot);
		if (n->key == l->ptr) {
			n->u.l.life = *l;
		} else {
			unsigned b = branch(s, l->ptr, SN_LIFE, d, &h);
			set_at(s, &n->child[b], l, h, d + 1, walked);
		}
	}
	sum_update(n);
}

void lives_set(struct snapshots *s, struct snode **root, const struct life *l)
{
	struct life v = *l;
	uint64_t walked = 0;
	v.pool = 0;
	v.pending_double = 0;
	set_at(s, root, &v, 0, 0, &walked);
	count_walk(s, walked);
}

const struct live_count *lives_count(const struct snode *root)
{
	static const struct live_count none;
	return root ? &root->u.l.sum : &none;
}

/* lives_first's frontier: subtrees by their first live entry, and
 * entries, in a binary heap. */
struct item {
	uint64_t line, ptr;
	const struct snode *n;
	int entry;
};

struct heap {
	struct item *v;
	size_t n, cap;
};

static int item_before(const struct item *x, const struct item *y)
{
	return before(x->line, x->ptr, y->line, y->ptr);
}

static void heap_push(struct heap *h, struct item it)
{
	h->v = array_reserve(h->v, &h->cap, h->n + 1, sizeof *h->v);
	size_t i = h->n++;
	while (i > 0 && item_before(&it, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = it;
}

static struct item heap_pop(struct heap *h)
{
	struct item top = h->v[0], last = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && item_before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!item_before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n > 0)
		h->v[i] = last;
	return top;
}

static void push_subtree(struct heap *h, const struct snode *n)
{
	if (n != NULL && n->u.l.sum.n != 0)
		heap_push(h,
		          (struct item){n->u.l.min_line, n->u.l.min_ptr, n, 0});
}

size_t lives_first(struct snapshots *s, const struct snode *root, size_t max,
                   int (*skip)(void *arg, uint64_t ptr), void *arg,
                   struct life *out)
{
	struct heap h = {NULL, 0, 0};
	size_t count = 0;
	uint64_t walked = 0;
	push_subtree(&h, root);
	while (count < max && h.n > 0) {
		struct item it = heap_pop(&h);
		const struct snode *n = it.n;
		walked++;
		if (it.entry) {
			if (!skip(arg, it.ptr))
				out[count++] = n->u.l.life;
			continue;
		}
		if (n->u.l.life.state == ST_LIVE)
			heap_push(&h, (struct item){n->u.l.life.line,
			                            n->u.l.life.ptr, n, 1});
		for (int i = 0; i < 4; i++)
			push_subtree(&h, n->child[i]);
	}
	free(h.v);
	/* Not a walk to an entry: counted as a lookup an entry listed. */
	s->stats->lookups += count ? count : 1;
	s->stats->probes += walked;
	return count;
}

/* ------------------------------------------------------------------ pools */

const struct pool_snap *pools_find(struct snapshots *s,
                                   const struct snode *root, uint64_t id)
{
	const struct snode *n = find(s, root, SN_POOL, id);
	return n ? &n->u.pool : NULL;
}

struct pool_snap *pools_edit(struct snapshots *s, struct snode **root,
                             uint64_t id, int *made)
{
	struct snode **slot = root;
	uint64_t h = 0, walked = 0;
	unsigned d = 0;
	*made = 0;
	for (;;) {
		walked++;
		if (*slot == NULL) {
			*slot = node_new(s, SN_POOL, id);
			*made = 1;
			break;
		}
		struct snode *n = own(s, slot);
		if (n->key == id)
			break;
		slot = &n->child[branch(s, id, SN_POOL, d++, &h)];
	}
	count_walk(s, walked);
	return &(*slot)->u.pool;
}

const struct set_head *set_head_keep(struct snapshots *s,
                                     const struct set_head *h)
{
	struct set_head *c = xmalloc(sizeof *c);
	*c = *h;
	s->sets =
	    array_reserve(s->sets, &s->capsets, s->nsets + 1, sizeof *s->sets);
	s->sets[s->nsets++] = c;
	return c;
}
