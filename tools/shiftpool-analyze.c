/*
 * shiftpool-analyze: read a SHIFTPOOL_TRACE log (format v1) and report, per
 * pool and in total, what was allocated, from where, what peaked, what
 * leaked and what was freed wrongly.
 *
 * One pass over the log.  The live set is an open-addressing hash table
 * keyed by (pool, pointer).  Entries are never removed: a freed pointer
 * keeps its slot marked FREED, so that a second free of it can be told from
 * a free of a pointer the log never showed, and so that an address the
 * allocator hands out again simply becomes LIVE again.
 *
 * Exit status: 0 clean, 1 problems found, 2 usage error or unreadable input.
 */
#define _POSIX_C_SOURCE 200809L

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define EXIT_CLEAN    0
#define EXIT_PROBLEMS 1
#define EXIT_USAGE    2

#define TRACE_VERSION 1

/* ------------------------------------------------------------------ utils */

static const char *progname = "shiftpool-analyze";

static void die_nomem(void)
{
	fprintf(stderr, "%s: out of memory\n", progname);
	exit(EXIT_USAGE);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		die_nomem();
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		die_nomem();
	return p;
}

static void *xrealloc(void *old, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		die_nomem();
	size_t bytes = n * size;
	void *p = realloc(old, bytes != 0 ? bytes : 1);
	if (p == NULL)
		die_nomem();
	return p;
}

static uint64_t mix64(uint64_t x)
{
	/* splitmix64 finaliser */
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/* ---------------------------------------------------- u64 -> u64 counter */

struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	unsigned char *used;
	size_t cap; /* power of two, or 0 */
	size_t n;
};

static void u64map_grow(struct u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 16;
	struct u64map nm = {
	    .keys = xmalloc(ncap * sizeof(uint64_t)),
	    .vals = xmalloc(ncap * sizeof(uint64_t)),
	    .used = xcalloc(ncap, 1),
	    .cap = ncap,
	    .n = m->n,
	};
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		size_t j = (size_t)mix64(m->keys[i]) & (ncap - 1);
		while (nm.used[j])
			j = (j + 1) & (ncap - 1);
		nm.used[j] = 1;
		nm.keys[j] = m->keys[i];
		nm.vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	free(m->used);
	*m = nm;
}

/* The value slot for key, created as 0 when absent. */
static uint64_t *u64map_slot(struct u64map *m, uint64_t key)
{
	if ((m->n + 1) * 4 > m->cap * 3)
		u64map_grow(m);
	size_t j = (size_t)mix64(key) & (m->cap - 1);
	while (m->used[j]) {
		if (m->keys[j] == key)
			return &m->vals[j];
		j = (j + 1) & (m->cap - 1);
	}
	m->used[j] = 1;
	m->keys[j] = key;
	m->vals[j] = 0;
	m->n++;
	return &m->vals[j];
}

static void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

/* -------------------------------------------------------- the trace model */

enum op {
	OP_INIT,
	OP_MALLOC,
	OP_CALLOC,
	OP_REALLOC,
	OP_STRDUP,
	OP_FREE,
	OP_DESTROY,
	OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
    "init", "malloc", "calloc", "realloc", "strdup", "free", "destroy",
};

enum src {
	SRC_NONE,
	SRC_POOL,
	SRC_FALLBACK,
	SRC_INVALID,
	SRC_DOUBLE,
	SRC_COUNT
};
static const char *const src_names[SRC_COUNT] = {
    "none", "pool", "fallback", "invalid", "double",
};

/* What a problem list is about. */
enum kind {
	K_INVALID,
	K_DOUBLE,
	K_UNKNOWN,
	K_UNREPORTED,
	K_DUPLICATE,
	K_COUNT
};
static const char *const kind_names[K_COUNT] = {
    "invalid_frees",           "double_frees",          "unknown_frees",
    "unreported_double_frees", "duplicate_allocations",
};
static const char *const kind_titles[K_COUNT] = {
    "invalid frees (reported by the library)",
    "double frees (reported by the library)",
    "frees of unknown pointers",
    "double frees not reported by the library",
    "allocations returning a live pointer",
};

struct event {
	uint64_t line;
	uint64_t ptr;
	uint64_t thread;
	uint64_t
	    other_line; /* line of the earlier allocation or free; 0 if none */
	enum op op;
};

struct evlist {
	uint64_t count;
	size_t n, cap;
	struct event *v;
};

/* Counters kept per pool and, updated alongside, for all pools. */
struct stats {
	uint64_t ops[OP_COUNT];
	uint64_t
	    alloc_calls; /* malloc, calloc, strdup, realloc that allocate */
	uint64_t served[SRC_COUNT]; /* by src: pool, fallback */
	uint64_t failed;
	uint64_t frees_by_src[SRC_COUNT];
	uint64_t cross_thread;
	uint64_t realloc_inplace, realloc_moved, realloc_to_zero,
	    realloc_failed;
	uint64_t live_pool_blocks, peak_pool_blocks;
	uint64_t live_fallback_bytes, peak_fallback_bytes;
	uint64_t leaks, leak_bytes;
	uint64_t problems[K_COUNT];
};

struct leak {
	uint64_t ptr, size, line, thread;
	enum op op;
	enum src src;
};

struct pool {
	uint64_t id;
	int has_init;
	uint64_t block_size, block_count, flags;
	int has_flags;
	uint64_t first_line, init_line, destroy_line;
	struct stats st;
	struct u64map sizes;   /* requested size -> count */
	struct u64map threads; /* thread id -> calls */
	uint64_t buckets[66];
	struct evlist ev[K_COUNT];
	struct leak *leaks;
	size_t nleaks;
};

enum { ST_EMPTY = 0, ST_LIVE, ST_FREED };

struct entry {
	uint64_t ptr;
	uint64_t size;
	uint64_t line; /* allocation line when live, free line when freed */
	uint64_t thread;
	uint32_t pool; /* index into pools[] */
	unsigned char state, op, src;
};

struct table {
	struct entry *v;
	size_t cap, n;
};

struct lineinfo {
	uint64_t total, records, comments, blank, unknown, unknown_keys,
	    malformed;
	size_t nmal, nunk;
	uint64_t *mal; /* first few malformed line numbers */
	uint64_t *unk; /* first few unknown-operation line numbers */
};

struct options {
	int json;
	int strict;
	size_t limit; /* list entries shown; SIZE_MAX = all */
	size_t top;   /* most frequent sizes shown */
	const char *file;
};

struct analysis {
	struct options opt;
	struct pool *pools;
	size_t npools, cappools;
	struct u64map pool_index; /* id -> index + 1 */
	struct table tab;
	struct stats total;
	struct u64map threads;
	struct lineinfo lines;
	int version; /* from the header; 0 when absent */
	uint64_t header_line;
};

/* ------------------------------------------------------------ live table */

static size_t entry_hash(uint32_t pool, uint64_t ptr)
{
	return (size_t)mix64(ptr ^
	                     ((uint64_t)pool * UINT64_C(0x9e3779b97f4a7c15)));
}

static void table_grow(struct table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	struct entry *nv = xcalloc(ncap, sizeof(*nv));
	for (size_t i = 0; i < t->cap; i++) {
		struct entry *e = &t->v[i];
		if (e->state == ST_EMPTY)
			continue;
		size_t j = entry_hash(e->pool, e->ptr) & (ncap - 1);
		while (nv[j].state != ST_EMPTY)
			j = (j + 1) & (ncap - 1);
		nv[j] = *e;
	}
	free(t->v);
	t->v = nv;
	t->cap = ncap;
}

/* The entry for (pool, ptr); with create, an EMPTY one is claimed. */
static struct entry *table_lookup(struct table *t, uint32_t pool, uint64_t ptr,
                                  int create)
{
	if (create && (t->n + 1) * 10 > t->cap * 7)
		table_grow(t);
	if (t->cap == 0)
		return NULL;
	size_t j = entry_hash(pool, ptr) & (t->cap - 1);
	while (t->v[j].state != ST_EMPTY) {
		if (t->v[j].ptr == ptr && t->v[j].pool == pool)
			return &t->v[j];
		j = (j + 1) & (t->cap - 1);
	}
	if (!create)
		return NULL;
	t->v[j].ptr = ptr;
	t->v[j].pool = pool;
	t->n++;
	return &t->v[j];
}

/* ------------------------------------------------------------ bookkeeping */

static struct pool *pool_get(struct analysis *a, uint64_t id, uint64_t line,
                             uint32_t *index)
{
	uint64_t *slot = u64map_slot(&a->pool_index, id);
	if (*slot == 0) {
		if (a->npools == UINT32_MAX)
			die_nomem();
		if (a->npools == a->cappools) {
			a->cappools = a->cappools ? a->cappools * 2 : 8;
			a->pools =
			    xrealloc(a->pools, a->cappools, sizeof(*a->pools));
		}
		struct pool *p = &a->pools[a->npools];
		memset(p, 0, sizeof(*p));
		p->id = id;
		p->first_line = line;
		*slot = ++a->npools;
	}
	*index = (uint32_t)(*slot - 1);
	return &a->pools[*slot - 1];
}

static void add_event(struct analysis *a, struct pool *p, enum kind k,
                      enum op op, uint64_t line, uint64_t ptr, uint64_t thread,
                      uint64_t other_line)
{
	struct evlist *l = &p->ev[k];
	l->count++;
	p->st.problems[k]++;
	a->total.problems[k]++;
	if (l->n >= a->opt.limit)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->v = xrealloc(l->v, l->cap, sizeof(*l->v));
	}
	l->v[l->n++] = (struct event){line, ptr, thread, other_line, op};
}

static void peak(uint64_t *live, uint64_t *pk)
{
	if (*live > *pk)
		*pk = *live;
}

/* Adds (sign > 0) or removes a live entry's weight in both stats. */
static void live_account(struct analysis *a, struct pool *p,
                         const struct entry *e, int sign)
{
	struct stats *s[2] = {&p->st, &a->total};
	for (int i = 0; i < 2; i++) {
		if (e->src == SRC_POOL) {
			if (sign > 0) {
				s[i]->live_pool_blocks++;
				peak(&s[i]->live_pool_blocks,
				     &s[i]->peak_pool_blocks);
			} else {
				s[i]->live_pool_blocks--;
			}
		} else if (e->src == SRC_FALLBACK) {
			if (sign > 0) {
				s[i]->live_fallback_bytes += e->size;
				peak(&s[i]->live_fallback_bytes,
				     &s[i]->peak_fallback_bytes);
			} else {
				s[i]->live_fallback_bytes -= e->size;
			}
		}
	}
}

static unsigned size_bucket(uint64_t size)
{
	if (size <= 1)
		return (unsigned)size;
	/* 1 + ceil(log2(size)) */
	uint64_t v = size - 1;
	unsigned bits = 0;
	while (v) {
		bits++;
		v >>= 1;
	}
	return 1 + bits;
}

/* An allocating call: histogram, counters; served says by whom. */
static void count_request(struct analysis *a, struct pool *p, uint64_t size,
                          enum src served)
{
	(*u64map_slot(&p->sizes, size))++;
	p->buckets[size_bucket(size)]++;
	p->st.alloc_calls++;
	a->total.alloc_calls++;
	if (served == SRC_NONE) {
		p->st.failed++;
		a->total.failed++;
	} else {
		p->st.served[served]++;
		a->total.served[served]++;
	}
}

static void make_live(struct analysis *a, struct pool *p, uint32_t pi,
                      enum op op, uint64_t ptr, uint64_t size, enum src src,
                      uint64_t thread, uint64_t line)
{
	struct entry *e = table_lookup(&a->tab, pi, ptr, 1);
	if (e->state == ST_LIVE) {
		add_event(a, p, K_DUPLICATE, op, line, ptr, thread, e->line);
		live_account(a, p, e, -1);
	}
	e->state = ST_LIVE;
	e->size = size;
	e->line = line;
	e->thread = thread;
	e->op = (unsigned char)op;
	e->src = (unsigned char)src;
	live_account(a, p, e, +1);
}

/* Ends the life of (pool, ptr), reporting it when it was not live. */
/*
 * The old pointer of a realloc that left it in place or failed: it must be
 * live.  Returns its entry when it is, else records why not and returns
 * NULL.
 */
static struct entry *realloc_old(struct analysis *a, struct pool *p,
                                 uint32_t pi, uint64_t old, uint64_t thread,
                                 uint64_t line)
{
	struct entry *e = table_lookup(&a->tab, pi, old, 0);
	if (e == NULL)
		add_event(a, p, K_UNKNOWN, OP_REALLOC, line, old, thread, 0);
	else if (e->state != ST_LIVE)
		add_event(a, p, K_UNREPORTED, OP_REALLOC, line, old, thread,
		          e->line);
	else
		return e;
	return NULL;
}

static void release(struct analysis *a, struct pool *p, uint32_t pi, enum op op,
                    uint64_t ptr, uint64_t thread, uint64_t line)
{
	struct entry *e = table_lookup(&a->tab, pi, ptr, 0);
	if (e == NULL) {
		add_event(a, p, K_UNKNOWN, op, line, ptr, thread, 0);
		return;
	}
	if (e->state != ST_LIVE) {
		add_event(a, p, K_UNREPORTED, op, line, ptr, thread, e->line);
		return;
	}
	live_account(a, p, e, -1);
	if (e->thread != thread) {
		p->st.cross_thread++;
		a->total.cross_thread++;
	}
	e->state = ST_FREED;
	e->line = line;
	e->thread = thread;
}

/* ---------------------------------------------------------------- parsing */

enum key {
	KEY_POOL,
	KEY_THREAD,
	KEY_SIZE,
	KEY_PTR,
	KEY_OLD,
	KEY_SRC,
	KEY_BLOCK_SIZE,
	KEY_BLOCK_COUNT,
	KEY_FLAGS,
	KEY_COUNT
};
static const char *const key_names[KEY_COUNT] = {
    "pool", "thread",     "size",        "ptr",   "old",
    "src",  "block_size", "block_count", "flags",
};

struct record {
	enum op op;
	const char *val[KEY_COUNT];
	int unknown_keys;
};

static int is_ident(const char *s, size_t n)
{
	if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') ||
	                (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		      c == '.'))
			return 0;
	}
	return 1;
}

static int parse_dec(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (s == NULL || *s == '\0')
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	*out = v;
	return 1;
}

static int parse_hex_digits(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (*s == '\0')
		return 0;
	for (; *s; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return 0;
		if (v >> 60)
			return 0;
		v = (v << 4) | d;
	}
	*out = v;
	return 1;
}

/* "(nil)", "0" or "0x<hex>"; NULL comes out as 0. */
static int parse_ptr(const char *s, uint64_t *out)
{
	if (s == NULL)
		return 0;
	if (strcmp(s, "(nil)") == 0 || strcmp(s, "0") == 0) {
		*out = 0;
		return 1;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_hex_digits(s + 2, out);
	return 0;
}

/* Decimal, or hexadecimal with 0x. */
static int parse_num(const char *s, uint64_t *out)
{
	if (s != NULL && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_hex_digits(s + 2, out);
	return parse_dec(s, out);
}

static int parse_src(const char *s, enum src *out)
{
	if (s == NULL)
		return 0;
	for (int i = 0; i < SRC_COUNT; i++) {
		if (strcmp(s, src_names[i]) == 0) {
			*out = (enum src)i;
			return 1;
		}
	}
	return 0;
}

enum verdict { LINE_OK, LINE_UNKNOWN, LINE_MALFORMED };

/*
 * Splits line (modified in place) into an operation and key=value fields.
 * An unknown operation is tolerated when the line is still well formed.
 */
static enum verdict tokenize(char *line, struct record *r)
{
	char *save = line;
	char *tok;
	int first = 1;
	int known = 0;

	memset(r, 0, sizeof(*r));
	while (*save) {
		while (*save == ' ' || *save == '\t')
			save++;
		if (*save == '\0')
			break;
		tok = save;
		while (*save && *save != ' ' && *save != '\t')
			save++;
		if (*save)
			*save++ = '\0';
		if (first) {
			first = 0;
			if (!is_ident(tok, strlen(tok)))
				return LINE_MALFORMED;
			for (int i = 0; i < OP_COUNT; i++) {
				if (strcmp(tok, op_names[i]) == 0) {
					r->op = (enum op)i;
					known = 1;
				}
			}
			continue;
		}
		char *eq = strchr(tok, '=');
		if (eq == NULL || eq[1] == '\0' ||
		    !is_ident(tok, (size_t)(eq - tok)))
			return LINE_MALFORMED;
		*eq = '\0';
		int k;
		for (k = 0; k < KEY_COUNT; k++)
			if (strcmp(tok, key_names[k]) == 0)
				break;
		if (k == KEY_COUNT) {
			r->unknown_keys = 1;
			continue;
		}
		if (r->val[k] != NULL)
			return LINE_MALFORMED; /* the same key twice */
		r->val[k] = eq + 1;
	}
	return known ? LINE_OK : LINE_UNKNOWN;
}

static int process(struct analysis *a, struct record *r, uint64_t line)
{
	uint64_t id, thread = 0, size = 0, ptr = 0, old = 0;
	enum src src = SRC_NONE;
	uint32_t pi;
	struct pool *p;

	if (!parse_dec(r->val[KEY_POOL], &id))
		return 0;
	switch (r->op) {
	case OP_INIT: {
		uint64_t bs, bc, fl = 0;
		if (!parse_dec(r->val[KEY_BLOCK_SIZE], &bs) ||
		    !parse_dec(r->val[KEY_BLOCK_COUNT], &bc) ||
		    (r->val[KEY_FLAGS] && !parse_num(r->val[KEY_FLAGS], &fl)))
			return 0;
		p = pool_get(a, id, line, &pi);
		p->has_init = 1;
		p->block_size = bs;
		p->block_count = bc;
		p->flags = fl;
		p->has_flags = r->val[KEY_FLAGS] != NULL;
		p->init_line = line;
		break;
	}
	case OP_DESTROY:
		p = pool_get(a, id, line, &pi);
		p->destroy_line = line;
		break;
	case OP_MALLOC:
	case OP_CALLOC:
	case OP_STRDUP:
		if (!parse_dec(r->val[KEY_THREAD], &thread) ||
		    !parse_dec(r->val[KEY_SIZE], &size) ||
		    !parse_ptr(r->val[KEY_PTR], &ptr) ||
		    !parse_src(r->val[KEY_SRC], &src))
			return 0;
		if ((ptr == 0) != (src == SRC_NONE) || src == SRC_INVALID ||
		    src == SRC_DOUBLE)
			return 0;
		p = pool_get(a, id, line, &pi);
		count_request(a, p, size, src);
		if (ptr != 0)
			make_live(a, p, pi, r->op, ptr, size, src, thread,
			          line);
		break;
	case OP_FREE:
		if (!parse_dec(r->val[KEY_THREAD], &thread) ||
		    !parse_ptr(r->val[KEY_PTR], &ptr) ||
		    !parse_src(r->val[KEY_SRC], &src))
			return 0;
		if ((ptr == 0) != (src == SRC_NONE))
			return 0;
		p = pool_get(a, id, line, &pi);
		p->st.frees_by_src[src]++;
		a->total.frees_by_src[src]++;
		if (src == SRC_INVALID)
			add_event(a, p, K_INVALID, OP_FREE, line, ptr, thread,
			          0);
		else if (src == SRC_DOUBLE)
			add_event(a, p, K_DOUBLE, OP_FREE, line, ptr, thread,
			          0);
		else if (ptr != 0)
			release(a, p, pi, OP_FREE, ptr, thread, line);
		break;
	case OP_REALLOC:
		if (!parse_dec(r->val[KEY_THREAD], &thread) ||
		    !parse_ptr(r->val[KEY_OLD], &old) ||
		    !parse_dec(r->val[KEY_SIZE], &size) ||
		    !parse_ptr(r->val[KEY_PTR], &ptr) ||
		    !parse_src(r->val[KEY_SRC], &src))
			return 0;
		if (src == SRC_INVALID || src == SRC_DOUBLE) {
			/* The old pointer was refused: nothing changed. */
			if (ptr != 0 || old == 0)
				return 0;
			p = pool_get(a, id, line, &pi);
			add_event(a, p,
			          src == SRC_INVALID ? K_INVALID : K_DOUBLE,
			          OP_REALLOC, line, old, thread, 0);
			break;
		}
		if ((ptr == 0) != (src == SRC_NONE))
			return 0;
		p = pool_get(a, id, line, &pi);
		if (old == 0) {
			/* realloc(NULL, n) is malloc(n); realloc(NULL, 0) may
			 * give NULL. */
			if (ptr != 0 || size > 0)
				count_request(a, p, size, src);
			if (ptr != 0)
				make_live(a, p, pi, OP_REALLOC, ptr, size, src,
				          thread, line);
		} else if (ptr == 0 && size == 0) {
			p->st.realloc_to_zero++;
			a->total.realloc_to_zero++;
			release(a, p, pi, OP_REALLOC, old, thread, line);
		} else if (ptr == 0) {
			count_request(a, p, size, SRC_NONE);
			p->st.realloc_failed++;
			a->total.realloc_failed++;
			realloc_old(a, p, pi, old, thread, line);
		} else if (ptr == old) {
			count_request(a, p, size, src);
			p->st.realloc_inplace++;
			a->total.realloc_inplace++;
			struct entry *e =
			    realloc_old(a, p, pi, old, thread, line);
			if (e != NULL)
				live_account(a, p, e, -1);
			/* Live from here on, whatever it was before. */
			e = table_lookup(&a->tab, pi, ptr, 1);
			e->state = ST_LIVE;
			e->size = size;
			e->line = line;
			e->thread = thread;
			e->op = OP_REALLOC;
			e->src = (unsigned char)src;
			live_account(a, p, e, +1);
		} else {
			count_request(a, p, size, src);
			p->st.realloc_moved++;
			a->total.realloc_moved++;
			release(a, p, pi, OP_REALLOC, old, thread, line);
			make_live(a, p, pi, OP_REALLOC, ptr, size, src, thread,
			          line);
		}
		break;
	default:
		return 0;
	}
	p->st.ops[r->op]++;
	a->total.ops[r->op]++;
	if (r->op != OP_INIT && r->op != OP_DESTROY) {
		(*u64map_slot(&p->threads, thread))++;
		(*u64map_slot(&a->threads, thread))++;
	}
	return 1;
}

static void note_line(uint64_t **list, size_t *n, size_t limit, uint64_t line)
{
	if (*n >= limit)
		return;
	if ((*n & (*n - 1)) == 0 || *n == 0)
		*list = xrealloc(*list, *n ? *n * 2 : 1, sizeof(**list));
	(*list)[(*n)++] = line;
}

static void malformed(struct analysis *a, uint64_t line)
{
	a->lines.malformed++;
	note_line(&a->lines.mal, &a->lines.nmal, a->opt.limit, line);
}

static void analyze_line(struct analysis *a, char *s, size_t len, uint64_t line)
{
	struct record r;

	a->lines.total++;
	if (len > 0 && s[len - 1] == '\n')
		s[--len] = '\0';
	if (len > 0 && s[len - 1] == '\r')
		s[--len] = '\0';
	if (memchr(s, '\0', len) != NULL) {
		malformed(a, line);
		return;
	}
	const char *t = s;
	while (*t == ' ' || *t == '\t')
		t++;
	if (*t == '\0') {
		a->lines.blank++;
		return;
	}
	if (*t == '#') {
		static const char magic[] = "# shiftpool trace v";
		uint64_t v;
		a->lines.comments++;
		if (a->header_line == 0 &&
		    strncmp(t, magic, sizeof(magic) - 1) == 0 &&
		    parse_dec(t + sizeof(magic) - 1, &v) && v > 0) {
			a->version = v > 1000 ? 1000 : (int)v;
			a->header_line = line;
		}
		return;
	}
	switch (tokenize(s, &r)) {
	case LINE_MALFORMED:
		malformed(a, line);
		return;
	case LINE_UNKNOWN:
		a->lines.unknown++;
		note_line(&a->lines.unk, &a->lines.nunk, a->opt.limit, line);
		return;
	case LINE_OK:
		break;
	}
	if (!process(a, &r, line)) {
		malformed(a, line);
		return;
	}
	a->lines.records++;
	if (r.unknown_keys)
		a->lines.unknown_keys++;
}

static int read_log(struct analysis *a, FILE *f)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t line = 0;

	errno = 0;
	while ((n = getline(&buf, &cap, f)) != -1)
		analyze_line(a, buf, (size_t)n, ++line);
	int err = ferror(f) ? errno : 0;
	free(buf);
	if (err == 0 && errno == ENOMEM)
		die_nomem();
	return err;
}

/* -------------------------------------------------------------- leak scan */

static int leak_cmp(const void *x, const void *y)
{
	const struct leak *l = x, *m = y;
	return (l->line > m->line) - (l->line < m->line);
}

static void collect_leaks(struct analysis *a)
{
	for (size_t i = 0; i < a->tab.cap; i++) {
		const struct entry *e = &a->tab.v[i];
		if (e->state != ST_LIVE)
			continue;
		struct pool *p = &a->pools[e->pool];
		p->st.leaks++;
		p->st.leak_bytes += e->size;
		a->total.leaks++;
		a->total.leak_bytes += e->size;
	}
	for (size_t i = 0; i < a->npools; i++) {
		struct pool *p = &a->pools[i];
		p->leaks = xcalloc(p->st.leaks, sizeof(*p->leaks));
	}
	for (size_t i = 0; i < a->tab.cap; i++) {
		const struct entry *e = &a->tab.v[i];
		if (e->state != ST_LIVE)
			continue;
		struct pool *p = &a->pools[e->pool];
		p->leaks[p->nleaks++] =
		    (struct leak){e->ptr,    e->size,        e->line,
		                  e->thread, (enum op)e->op, (enum src)e->src};
	}
	for (size_t i = 0; i < a->npools; i++)
		qsort(a->pools[i].leaks, a->pools[i].nleaks,
		      sizeof(struct leak), leak_cmp);
}

struct sizecount {
	uint64_t size, count;
};

static int sizecount_cmp(const void *x, const void *y)
{
	const struct sizecount *s = x, *t = y;
	if (s->count != t->count)
		return s->count < t->count ? 1 : -1;
	return (s->size > t->size) - (s->size < t->size);
}

/* The sizes by falling frequency; *n of them. */
static struct sizecount *top_sizes(const struct pool *p, size_t *n)
{
	struct sizecount *v = xcalloc(p->sizes.n, sizeof(*v));
	size_t k = 0;
	for (size_t i = 0; i < p->sizes.cap; i++)
		if (p->sizes.used[i])
			v[k++] = (struct sizecount){p->sizes.keys[i],
			                            p->sizes.vals[i]};
	qsort(v, k, sizeof(*v), sizecount_cmp);
	*n = k;
	return v;
}

static uint64_t oversize_requests(const struct pool *p)
{
	uint64_t n = 0;
	if (!p->has_init)
		return 0;
	for (size_t i = 0; i < p->sizes.cap; i++)
		if (p->sizes.used[i] && p->sizes.keys[i] > p->block_size)
			n += p->sizes.vals[i];
	return n;
}

static void bucket_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
	if (b <= 1) {
		*lo = *hi = b;
		return;
	}
	*lo = (UINT64_C(1) << (b - 2)) + 1;
	*hi = b - 1 >= 64 ? UINT64_MAX : UINT64_C(1) << (b - 1);
	if (b == 2)
		*lo = 2;
}

/* Leaks and every kind of problem; with --strict, bad lines too. */
static uint64_t total_problems(const struct analysis *a)
{
	uint64_t n = a->total.leaks;
	for (int k = 0; k < K_COUNT; k++)
		n += a->total.problems[k];
	if (a->opt.strict)
		n += a->lines.malformed + a->lines.unknown;
	return n;
}

/* ------------------------------------------------------------ text report */

static void text_rate(FILE *o, const struct stats *s)
{
	uint64_t served = s->served[SRC_POOL] + s->served[SRC_FALLBACK];
	if (served == 0)
		fprintf(o, "  fallback rate: n/a\n");
	else
		fprintf(o, "  fallback rate: %.2f%%\n",
		        100.0 * (double)s->served[SRC_FALLBACK] /
		            (double)served);
}

static void text_stats(FILE *o, const struct stats *s, uint64_t nthreads)
{
	fprintf(o, "  operations:");
	for (int i = 0; i < OP_COUNT; i++)
		fprintf(o, " %s=%" PRIu64, op_names[i], s->ops[i]);
	fprintf(o, "\n  threads: %" PRIu64 "\n", nthreads);
	fprintf(o,
	        "  allocations: %" PRIu64 " (pool %" PRIu64
	        ", fallback %" PRIu64 ", failed %" PRIu64 ")\n",
	        s->alloc_calls, s->served[SRC_POOL], s->served[SRC_FALLBACK],
	        s->failed);
	text_rate(o, s);
	fprintf(o,
	        "  reallocs: in place %" PRIu64 ", moved %" PRIu64
	        ", freed (size 0) %" PRIu64 ", failed %" PRIu64 "\n",
	        s->realloc_inplace, s->realloc_moved, s->realloc_to_zero,
	        s->realloc_failed);
	fprintf(o,
	        "  frees: %" PRIu64 " (pool %" PRIu64 ", fallback %" PRIu64
	        ", NULL %" PRIu64 ", invalid %" PRIu64 ", double %" PRIu64
	        ")\n",
	        s->ops[OP_FREE], s->frees_by_src[SRC_POOL],
	        s->frees_by_src[SRC_FALLBACK], s->frees_by_src[SRC_NONE],
	        s->frees_by_src[SRC_INVALID], s->frees_by_src[SRC_DOUBLE]);
	fprintf(o, "  cross-thread frees: %" PRIu64 "\n", s->cross_thread);
	fprintf(o, "  peak live pool blocks: %" PRIu64 "\n",
	        s->peak_pool_blocks);
	fprintf(o, "  peak live fallback bytes: %" PRIu64 "\n",
	        s->peak_fallback_bytes);
}

static void text_pool(const struct analysis *a, FILE *o, const struct pool *p)
{
	fprintf(o, "\npool %" PRIu64 "\n", p->id);
	if (p->has_init) {
		fprintf(o,
		        "  block size: %" PRIu64 "\n  block count: %" PRIu64
		        "\n",
		        p->block_size, p->block_count);
		if (p->has_flags)
			fprintf(o, "  flags: 0x%" PRIx64 "\n", p->flags);
		fprintf(o, "  init: line %" PRIu64 "\n", p->init_line);
	} else {
		fprintf(o,
		        "  block size: unknown (no init line; first seen at "
		        "line %" PRIu64 ")\n",
		        p->first_line);
	}
	if (p->destroy_line)
		fprintf(o, "  destroy: line %" PRIu64 "\n", p->destroy_line);
	else
		fprintf(o, "  destroy: never\n");
	text_stats(o, &p->st, p->threads.n);
	if (p->has_init)
		fprintf(o, "  requests larger than a block: %" PRIu64 "\n",
		        oversize_requests(p));

	size_t n;
	struct sizecount *v = top_sizes(p, &n);
	size_t shown = n < a->opt.top ? n : a->opt.top;
	fprintf(o, "  sizes, most frequent (%zu of %zu distinct):", shown, n);
	for (size_t i = 0; i < shown; i++)
		fprintf(o, " %" PRIu64 "x%" PRIu64, v[i].size, v[i].count);
	fprintf(o, "\n");
	free(v);
	fprintf(o, "  sizes, by power of two:\n");
	for (unsigned b = 0; b < 66; b++) {
		uint64_t lo, hi;
		if (p->buckets[b] == 0)
			continue;
		bucket_range(b, &lo, &hi);
		fprintf(o, "    %" PRIu64 "-%" PRIu64 ": %" PRIu64 "\n", lo, hi,
		        p->buckets[b]);
	}

	fprintf(o, "  leaks: %" PRIu64 " (%" PRIu64 " bytes)\n", p->st.leaks,
	        p->st.leak_bytes);
	for (size_t i = 0; i < p->nleaks && i < a->opt.limit; i++) {
		const struct leak *l = &p->leaks[i];
		fprintf(o,
		        "    0x%" PRIx64 " size %" PRIu64 " %s line %" PRIu64
		        " (%s, thread %" PRIu64 ")\n",
		        l->ptr, l->size, op_names[l->op], l->line,
		        src_names[l->src], l->thread);
	}
	if (p->nleaks > a->opt.limit)
		fprintf(o, "    ... and %zu more\n", p->nleaks - a->opt.limit);

	for (int k = 0; k < K_COUNT; k++) {
		const struct evlist *l = &p->ev[k];
		fprintf(o, "  %s: %" PRIu64 "\n", kind_titles[k], l->count);
		for (size_t i = 0; i < l->n; i++) {
			const struct event *e = &l->v[i];
			fprintf(o,
			        "    line %" PRIu64 ": %s 0x%" PRIx64
			        " (thread %" PRIu64 ")",
			        e->line, op_names[e->op], e->ptr, e->thread);
			if (e->other_line)
				fprintf(o,
				        k == K_DUPLICATE
				            ? ", allocated at line %" PRIu64
				            : ", freed at line %" PRIu64,
				        e->other_line);
			fprintf(o, "\n");
		}
		if (l->count > l->n)
			fprintf(o, "    ... and %" PRIu64 " more\n",
			        l->count - l->n);
	}
}

static void text_lines(FILE *o, const char *what, uint64_t count,
                       const uint64_t *v, size_t n)
{
	fprintf(o, "%s: %" PRIu64, what, count);
	if (n > 0) {
		fprintf(o, " (line");
		for (size_t i = 0; i < n; i++)
			fprintf(o, "%s %" PRIu64, i ? "," : (n > 1 ? "s" : ""),
			        v[i]);
		if (count > n)
			fprintf(o, ", ...");
		fprintf(o, ")");
	}
	fprintf(o, "\n");
}

static void text_report(const struct analysis *a, FILE *o)
{
	const struct lineinfo *L = &a->lines;
	fprintf(o, "shiftpool-analyze: %s\n",
	        strcmp(a->opt.file, "-") == 0 ? "(standard input)"
	                                      : a->opt.file);
	if (a->version == 0)
		fprintf(o, "format: no \"# shiftpool trace v1\" header\n");
	else if (a->version != TRACE_VERSION)
		fprintf(o,
		        "format: v%d (this analyzer knows v%d; unknown parts "
		        "are skipped)\n",
		        a->version, TRACE_VERSION);
	else
		fprintf(o, "format: v%d\n", a->version);
	fprintf(o,
	        "lines: %" PRIu64 " (records %" PRIu64 ", comments %" PRIu64
	        ", blank %" PRIu64 ")\n",
	        L->total, L->records, L->comments, L->blank);
	text_lines(o, "unknown operations", L->unknown, L->unk, L->nunk);
	fprintf(o, "records with unknown keys: %" PRIu64 "\n", L->unknown_keys);
	text_lines(o, "malformed lines", L->malformed, L->mal, L->nmal);

	for (size_t i = 0; i < a->npools; i++)
		text_pool(a, o, &a->pools[i]);

	const struct stats *s = &a->total;
	fprintf(o, "\ntotal (%zu pool%s)\n", a->npools,
	        a->npools == 1 ? "" : "s");
	text_stats(o, s, a->threads.n);
	fprintf(o, "  leaks: %" PRIu64 " (%" PRIu64 " bytes)\n", s->leaks,
	        s->leak_bytes);
	for (int k = 0; k < K_COUNT; k++)
		fprintf(o, "  %s: %" PRIu64 "\n", kind_titles[k],
		        s->problems[k]);

	uint64_t np = total_problems(a);
	if (np == 0) {
		fprintf(o, "\nresult: clean\n");
		return;
	}
	fprintf(o, "\nresult: %" PRIu64 " problem%s (", np, np == 1 ? "" : "s");
	const char *sep = "";
	if (s->leaks) {
		fprintf(o, "leaks %" PRIu64, s->leaks);
		sep = ", ";
	}
	for (int k = 0; k < K_COUNT; k++) {
		if (s->problems[k]) {
			fprintf(o, "%s%s %" PRIu64, sep, kind_names[k],
			        s->problems[k]);
			sep = ", ";
		}
	}
	if (a->opt.strict && L->malformed) {
		fprintf(o, "%smalformed %" PRIu64, sep, L->malformed);
		sep = ", ";
	}
	if (a->opt.strict && L->unknown)
		fprintf(o, "%sunknown %" PRIu64, sep, L->unknown);
	fprintf(o, ")\n");
}

/* ------------------------------------------------------------ JSON report */

struct jw {
	FILE *o;
	int depth;
	int first;
};

static void jw_string(FILE *o, const char *s)
{
	fputc('"', o);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(o, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(o, "\\u%04x", *c);
		else
			fputc(*c, o);
	}
	fputc('"', o);
}

static void jw_key(struct jw *w, const char *key)
{
	if (!w->first)
		fputc(',', w->o);
	fputc('\n', w->o);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->o);
	w->first = 0;
	if (key != NULL) {
		jw_string(w->o, key);
		fputs(": ", w->o);
	}
}

static void jw_open(struct jw *w, const char *key, char c)
{
	jw_key(w, key);
	fputc(c, w->o);
	w->depth++;
	w->first = 1;
}

static void jw_close(struct jw *w, char c)
{
	w->depth--;
	if (!w->first) {
		fputc('\n', w->o);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->o);
	}
	fputc(c, w->o);
	w->first = 0;
}

static void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	fprintf(w->o, "%" PRIu64, v);
}

static void jw_str(struct jw *w, const char *key, const char *v)
{
	jw_key(w, key);
	jw_string(w->o, v);
}

static void jw_ptr(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	fprintf(w->o, "\"0x%" PRIx64 "\"", v);
}

static void jw_lit(struct jw *w, const char *key, const char *literal)
{
	jw_key(w, key);
	fputs(literal, w->o);
}

static void jw_lines(struct jw *w, const char *key, const uint64_t *v, size_t n)
{
	jw_open(w, key, '[');
	for (size_t i = 0; i < n; i++)
		jw_u64(w, NULL, v[i]);
	jw_close(w, ']');
}

static void json_stats(struct jw *w, const struct stats *s, uint64_t nthreads)
{
	jw_open(w, "operations", '{');
	for (int i = 0; i < OP_COUNT; i++)
		jw_u64(w, op_names[i], s->ops[i]);
	jw_close(w, '}');
	jw_u64(w, "threads", nthreads);
	jw_open(w, "allocations", '{');
	jw_u64(w, "total", s->alloc_calls);
	jw_u64(w, "pool", s->served[SRC_POOL]);
	jw_u64(w, "fallback", s->served[SRC_FALLBACK]);
	jw_u64(w, "failed", s->failed);
	jw_close(w, '}');
	uint64_t served = s->served[SRC_POOL] + s->served[SRC_FALLBACK];
	jw_key(w, "fallback_rate");
	if (served == 0)
		fputs("null", w->o);
	else
		fprintf(w->o, "%.6f",
		        (double)s->served[SRC_FALLBACK] / (double)served);
	jw_open(w, "reallocs", '{');
	jw_u64(w, "in_place", s->realloc_inplace);
	jw_u64(w, "moved", s->realloc_moved);
	jw_u64(w, "to_zero", s->realloc_to_zero);
	jw_u64(w, "failed", s->realloc_failed);
	jw_close(w, '}');
	jw_open(w, "frees", '{');
	jw_u64(w, "total", s->ops[OP_FREE]);
	jw_u64(w, "pool", s->frees_by_src[SRC_POOL]);
	jw_u64(w, "fallback", s->frees_by_src[SRC_FALLBACK]);
	jw_u64(w, "null", s->frees_by_src[SRC_NONE]);
	jw_u64(w, "invalid", s->frees_by_src[SRC_INVALID]);
	jw_u64(w, "double", s->frees_by_src[SRC_DOUBLE]);
	jw_u64(w, "cross_thread", s->cross_thread);
	jw_close(w, '}');
	jw_u64(w, "peak_live_pool_blocks", s->peak_pool_blocks);
	jw_u64(w, "peak_live_fallback_bytes", s->peak_fallback_bytes);
}

static void json_pool(const struct analysis *a, struct jw *w,
                      const struct pool *p)
{
	jw_open(w, NULL, '{');
	jw_u64(w, "id", p->id);
	if (p->has_init) {
		jw_u64(w, "block_size", p->block_size);
		jw_u64(w, "block_count", p->block_count);
		if (p->has_flags) {
			char buf[32];
			snprintf(buf, sizeof(buf), "0x%" PRIx64, p->flags);
			jw_str(w, "flags", buf);
		} else {
			jw_lit(w, "flags", "null");
		}
		jw_u64(w, "init_line", p->init_line);
	} else {
		jw_lit(w, "block_size", "null");
		jw_lit(w, "block_count", "null");
		jw_lit(w, "flags", "null");
		jw_lit(w, "init_line", "null");
	}
	if (p->destroy_line)
		jw_u64(w, "destroy_line", p->destroy_line);
	else
		jw_lit(w, "destroy_line", "null");
	jw_u64(w, "first_line", p->first_line);
	json_stats(w, &p->st, p->threads.n);
	if (p->has_init)
		jw_u64(w, "oversize_requests", oversize_requests(p));
	else
		jw_lit(w, "oversize_requests", "null");

	jw_open(w, "sizes", '{');
	size_t n;
	struct sizecount *v = top_sizes(p, &n);
	jw_u64(w, "distinct", n);
	jw_open(w, "top", '[');
	for (size_t i = 0; i < n && i < a->opt.top; i++) {
		jw_open(w, NULL, '{');
		jw_u64(w, "size", v[i].size);
		jw_u64(w, "count", v[i].count);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	free(v);
	jw_open(w, "buckets", '[');
	for (unsigned b = 0; b < 66; b++) {
		uint64_t lo, hi;
		if (p->buckets[b] == 0)
			continue;
		bucket_range(b, &lo, &hi);
		jw_open(w, NULL, '{');
		jw_u64(w, "min", lo);
		jw_u64(w, "max", hi);
		jw_u64(w, "count", p->buckets[b]);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');

	jw_open(w, "leaks", '{');
	jw_u64(w, "count", p->st.leaks);
	jw_u64(w, "bytes", p->st.leak_bytes);
	jw_open(w, "list", '[');
	for (size_t i = 0; i < p->nleaks && i < a->opt.limit; i++) {
		const struct leak *l = &p->leaks[i];
		jw_open(w, NULL, '{');
		jw_ptr(w, "ptr", l->ptr);
		jw_u64(w, "size", l->size);
		jw_str(w, "op", op_names[l->op]);
		jw_u64(w, "line", l->line);
		jw_str(w, "src", src_names[l->src]);
		jw_u64(w, "thread", l->thread);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_u64(w, "not_listed",
	       p->nleaks > a->opt.limit ? p->nleaks - a->opt.limit : 0);
	jw_close(w, '}');

	for (int k = 0; k < K_COUNT; k++) {
		const struct evlist *l = &p->ev[k];
		jw_open(w, kind_names[k], '{');
		jw_u64(w, "count", l->count);
		jw_open(w, "list", '[');
		for (size_t i = 0; i < l->n; i++) {
			const struct event *e = &l->v[i];
			jw_open(w, NULL, '{');
			jw_u64(w, "line", e->line);
			jw_str(w, "op", op_names[e->op]);
			jw_ptr(w, "ptr", e->ptr);
			jw_u64(w, "thread", e->thread);
			if (e->other_line)
				jw_u64(w,
				       k == K_DUPLICATE ? "allocated_line"
				                        : "freed_line",
				       e->other_line);
			jw_close(w, '}');
		}
		jw_close(w, ']');
		jw_u64(w, "not_listed", l->count - l->n);
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

static void json_report(const struct analysis *a, FILE *o)
{
	struct jw w = {o, 0, 1};
	const struct lineinfo *L = &a->lines;

	fputc('{', o);
	w.depth = 1;
	jw_str(&w, "file", a->opt.file);
	if (a->version)
		jw_u64(&w, "format_version", (uint64_t)a->version);
	else
		jw_lit(&w, "format_version", "null");
	jw_open(&w, "lines", '{');
	jw_u64(&w, "total", L->total);
	jw_u64(&w, "records", L->records);
	jw_u64(&w, "comments", L->comments);
	jw_u64(&w, "blank", L->blank);
	jw_u64(&w, "unknown", L->unknown);
	jw_lines(&w, "unknown_lines", L->unk, L->nunk);
	jw_u64(&w, "unknown_keys", L->unknown_keys);
	jw_u64(&w, "malformed", L->malformed);
	jw_lines(&w, "malformed_lines", L->mal, L->nmal);
	jw_close(&w, '}');

	jw_open(&w, "pools", '[');
	for (size_t i = 0; i < a->npools; i++)
		json_pool(a, &w, &a->pools[i]);
	jw_close(&w, ']');

	const struct stats *s = &a->total;
	jw_open(&w, "total", '{');
	jw_u64(&w, "pools", a->npools);
	json_stats(&w, s, a->threads.n);
	jw_open(&w, "leaks", '{');
	jw_u64(&w, "count", s->leaks);
	jw_u64(&w, "bytes", s->leak_bytes);
	jw_close(&w, '}');
	for (int k = 0; k < K_COUNT; k++)
		jw_u64(&w, kind_names[k], s->problems[k]);
	jw_close(&w, '}');

	uint64_t np = total_problems(a);
	jw_u64(&w, "problems", np);
	jw_lit(&w, "clean", np == 0 ? "true" : "false");
	w.depth = 0;
	fputs("\n}\n", o);
}

/* ------------------------------------------------------------------- main */

/* clang-format off */
static void usage(FILE *o)
{
	fputs(
"NAME\n"
"    shiftpool-analyze - summarise a shiftpool trace log\n"
"\n"
"SYNOPSIS\n"
"    shiftpool-analyze [--json] [--strict] [--limit N] [--top N] FILE\n"
"    shiftpool-analyze --help | --version\n"
"\n"
"DESCRIPTION\n"
"    Reads the log that libshiftpool writes when the environment variable\n"
"    SHIFTPOOL_TRACE=FILE is set (format \"# shiftpool trace v1\": one line\n"
"    per call) and reports, for each pool and in total:\n"
"      - block size and count, from the pool's init line;\n"
"      - calls by operation, threads seen, frees made by another thread than\n"
"        the allocating one (cross-thread);\n"
"      - allocations served by the pool, by the malloc fallback, or failed,\n"
"        and the fallback rate, fallback / (pool + fallback); reallocs in\n"
"        place, moved, freed by size 0, failed;\n"
"      - requested sizes: the most frequent exactly, all of them in\n"
"        power-of-two buckets, and how many exceed the block size;\n"
"      - peak live pool blocks and peak live fallback bytes;\n"
"      - leaks: allocations live at the end of the log (pointer, size,\n"
"        operation, line), first listed first;\n"
"      - invalid and double frees the library reported (src=invalid,\n"
"        src=double); frees of unknown pointers, which the log never showed\n"
"        allocated in that pool; double frees the library did not report,\n"
"        such as of fallback memory; allocations that returned a pointer\n"
"        still live.\n"
"    Pointers are tracked per (pool, address), so an address may be\n"
"    allocated, freed and allocated again.  Lines starting with # are\n"
"    comments.  Unknown operations and keys are skipped and counted, so a\n"
"    newer log still reads; malformed lines are counted and listed.\n"
"    FILE - is standard input.\n"
"\n"
"OPTIONS\n"
"    --json       print the report as one JSON object instead of text\n"
"    --strict     count malformed lines and unknown operations as problems\n"
"    --limit N    list at most N entries (leaks, problem lines, malformed\n"
"                 line numbers) per list; default 20, 0 lists all\n"
"    --top N      show the N most frequent sizes per pool; default 10\n"
"    -h, --help   print this help and exit\n"
"    --version    print the version and exit\n"
"\n"
"EXIT STATUS\n"
"    0  clean: no leaks, no invalid, double or unknown frees, no\n"
"       allocation of a live pointer\n"
"    1  problems found (with --strict, malformed or unknown lines too)\n"
"    2  usage error, or FILE cannot be read\n"
"\n"
"EXAMPLES\n"
"    SHIFTPOOL_TRACE=/tmp/trace ./server; shiftpool-analyze /tmp/trace\n"
"    shiftpool-analyze --json --limit 0 /tmp/trace > report.json\n",
	      o);
}
/* clang-format on */

static int parse_count(const char *opt, const char *arg, size_t *out)
{
	uint64_t v;
	if (arg == NULL || !parse_dec(arg, &v)) {
		fprintf(stderr, "%s: %s needs a non-negative number\n",
		        progname, opt);
		return 0;
	}
	*out = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
	return 1;
}

static int parse_args(int argc, char **argv, struct options *opt)
{
	int only_files = 0;
	opt->limit = 20;
	opt->top = 10;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!only_files && s[0] == '-' && s[1] != '\0') {
			const char *eq = strchr(s, '=');
			size_t nl = eq ? (size_t)(eq - s) : strlen(s);
			const char *arg = eq ? eq + 1 : NULL;
			if (strcmp(s, "--") == 0) {
				only_files = 1;
			} else if (strcmp(s, "--json") == 0) {
				opt->json = 1;
			} else if (strcmp(s, "--strict") == 0) {
				opt->strict = 1;
			} else if (strcmp(s, "-h") == 0 ||
			           strcmp(s, "--help") == 0) {
				usage(stdout);
				exit(fflush(stdout) == 0 ? EXIT_CLEAN
				                         : EXIT_USAGE);
			} else if (strcmp(s, "--version") == 0) {
				printf("shiftpool-analyze (shiftpool) %s\n",
				       PACKAGE_VERSION);
				exit(fflush(stdout) == 0 ? EXIT_CLEAN
				                         : EXIT_USAGE);
			} else if ((nl == 7 && strncmp(s, "--limit", 7) == 0) ||
			           (nl == 5 && strncmp(s, "--top", 5) == 0)) {
				size_t *dst = nl == 7 ? &opt->limit : &opt->top;
				const char *name =
				    nl == 7 ? "--limit" : "--top";
				if (arg == NULL) {
					if (i + 1 >= argc) {
						fprintf(
						    stderr,
						    "%s: %s needs a number\n",
						    progname, name);
						return 0;
					}
					arg = argv[++i];
				}
				if (!parse_count(name, arg, dst))
					return 0;
			} else {
				fprintf(stderr, "%s: unknown option '%s'\n",
				        progname, s);
				return 0;
			}
			continue;
		}
		if (opt->file != NULL) {
			fprintf(stderr, "%s: one FILE only\n", progname);
			return 0;
		}
		opt->file = s;
	}
	if (opt->file == NULL) {
		fprintf(stderr, "%s: no FILE given\n", progname);
		return 0;
	}
	if (opt->limit == 0)
		opt->limit = SIZE_MAX;
	return 1;
}

static void analysis_free(struct analysis *a)
{
	for (size_t i = 0; i < a->npools; i++) {
		struct pool *p = &a->pools[i];
		u64map_free(&p->sizes);
		u64map_free(&p->threads);
		for (int k = 0; k < K_COUNT; k++)
			free(p->ev[k].v);
		free(p->leaks);
	}
	free(a->pools);
	u64map_free(&a->pool_index);
	u64map_free(&a->threads);
	free(a->tab.v);
	free(a->lines.mal);
	free(a->lines.unk);
}

int main(int argc, char **argv)
{
	static struct analysis a;
	FILE *f;

	if (!parse_args(argc, argv, &a.opt)) {
		fprintf(stderr, "Try '%s --help'.\n", progname);
		return EXIT_USAGE;
	}
	if (strcmp(a.opt.file, "-") == 0) {
		f = stdin;
	} else {
		f = fopen(a.opt.file, "r");
		if (f == NULL) {
			fprintf(stderr, "%s: %s: %s\n", progname, a.opt.file,
			        strerror(errno));
			return EXIT_USAGE;
		}
	}
	int err = read_log(&a, f);
	if (f != stdin)
		fclose(f);
	if (err != 0) {
		fprintf(stderr, "%s: %s: %s\n", progname, a.opt.file,
		        strerror(err));
		analysis_free(&a);
		return EXIT_USAGE;
	}
	collect_leaks(&a);
	if (a.opt.json)
		json_report(&a, stdout);
	else
		text_report(&a, stdout);
	int status = total_problems(&a) ? EXIT_PROBLEMS : EXIT_CLEAN;
	analysis_free(&a);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: write error: %s\n", progname,
		        strerror(errno));
		return EXIT_USAGE;
	}
	return status;
}
