/*
 * shiftpool-analyze: the hash tables, and the live set built on one.
 *
 * Every address and size in a trace comes from a file that may have been
 * written to hurt: with a fixed hash, anyone can compute keys that share a
 * slot, and linear probing then walks all of them on every lookup (a 10 MB
 * trace took 65 times as long as a random one).  So each run draws a secret
 * key and hashes with SipHash-1-3, whose outputs cannot be steered without
 * it, and the load stays at most one half.
 *
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "analyze.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_GETRANDOM
#include <sys/random.h>
#endif

/* -------------------------------------------------------------- the hash */

static uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

struct sip {
	uint64_t v0, v1, v2, v3;
};

static void sip_round(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = rotl(s->v1, 13) ^ s->v0;
	s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl(s->v3, 16) ^ s->v2;
	s->v0 += s->v3;
	s->v3 = rotl(s->v3, 21) ^ s->v0;
	s->v2 += s->v1;
	s->v1 = rotl(s->v1, 17) ^ s->v2;
	s->v2 = rotl(s->v2, 32);
}

/* One compression round per 8-byte word, as SipHash-1-3 does. */
static void sip_word(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	s->v0 ^= m;
}

/* SipHash-1-3 of the 16 bytes a, b (each little-endian). */
uint64_t hash_pair(const struct hash_key *key, uint64_t a, uint64_t b)
{
	struct sip s = {
	    key->k0 ^ UINT64_C(0x736f6d6570736575),
	    key->k1 ^ UINT64_C(0x646f72616e646f6d),
	    key->k0 ^ UINT64_C(0x6c7967656e657261),
	    key->k1 ^ UINT64_C(0x7465646279746573),
	};
	sip_word(&s, a);
	sip_word(&s, b);
	sip_word(&s, UINT64_C(16) << 56); /* the length, no bytes left */
	s.v2 ^= 0xff;
	for (int i = 0; i < 3; i++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

void hash_key_init(struct hash_key *key)
{
#ifdef HAVE_GETRANDOM
	if (getrandom(key, sizeof *key, 0) == (ssize_t)sizeof *key)
		return;
#endif
	/* Without getrandom(), a key a trace written beforehand cannot
	 * predict either: the time and the process. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	struct hash_key seed = {(uint64_t)ts.tv_nsec, (uint64_t)getpid()};
	key->k0 = hash_pair(&seed, (uint64_t)ts.tv_sec, (uintptr_t)key);
	key->k1 = hash_pair(&seed, key->k0, (uint64_t)time(NULL));
}

/* ------------------------------------------------------------- the index */

/* The slot holding (a, b), or the empty one where it would go. */
static size_t probe(struct table *t, uint64_t a, uint64_t b)
{
	size_t mask = t->cap - 1;
	size_t j = (size_t)hash_pair(t->key, a, b) & mask;
	uint64_t walked = 1;
	while (t->slots[j].ref != 0 &&
	       (t->slots[j].a != a || t->slots[j].b != b)) {
		j = (j + 1) & mask;
		walked++;
	}
	t->stats->lookups++;
	t->stats->probes += walked;
	if (walked > t->stats->max)
		t->stats->max = walked;
	return j;
}

static void table_grow(struct table *t)
{
	struct table old = *t;
	t->cap = old.cap ? old.cap * 2 : 16;
	t->slots = xcalloc(t->cap, sizeof *t->slots);
	for (size_t i = 0; i < old.cap; i++) {
		const struct slot *s = &old.slots[i];
		if (s->ref != 0)
			t->slots[probe(t, s->a, s->b)] = *s;
	}
	free(old.slots);
}

uint32_t table_find(struct table *t, uint64_t a, uint64_t b)
{
	if (t->cap == 0)
		return 0;
	return t->slots[probe(t, a, b)].ref;
}

uint32_t table_claim(struct table *t, uint64_t a, uint64_t b, uint32_t ref)
{
	if ((t->n + 1) * 2 > t->cap)
		table_grow(t);
	struct slot *s = &t->slots[probe(t, a, b)];
	if (s->ref == 0) {
		*s = (struct slot){a, b, ref};
		t->n++;
	}
	return s->ref;
}

void table_free(struct table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
}

/* The next position of an array indexed by a table, as a ref. */
static uint32_t next_ref(size_t n)
{
	if (n >= UINT32_MAX)
		die_nomem();
	return (uint32_t)n + 1;
}

/* -------------------------------------------------------------- counters */

void counter_map_init(struct counter_map *m, const struct hash_key *key,
                      struct probe_stats *stats)
{
	memset(m, 0, sizeof *m);
	m->index.key = key;
	m->index.stats = stats;
}

/* While a map holds at most COUNTER_SCAN counters it has no index: the
 * counter of (a, b) by walking them; NULL when absent. */
static struct counter *counter_scan(struct counter_map *m, uint64_t a,
                                    uint64_t b)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].a == a && m->v[i].b == b)
			return &m->v[i];
	return NULL;
}

static void counter_append(struct counter_map *m, uint64_t a, uint64_t b)
{
	m->v = array_reserve_from(m->v, &m->cap, m->n + 1, sizeof *m->v, 1);
	m->v[m->n++] = (struct counter){a, b, 0};
}

uint64_t *counter_at(struct counter_map *m, uint64_t a, uint64_t b)
{
	if (m->index.cap == 0) {
		struct counter *c = counter_scan(m, a, b);
		if (c != NULL)
			return &c->count;
		counter_append(m, a, b);
		/* One more than a walk should take: index them all. */
		if (m->n > COUNTER_SCAN)
			for (size_t i = 0; i < m->n; i++)
				table_claim(&m->index, m->v[i].a, m->v[i].b,
				            (uint32_t)i + 1);
		return &m->v[m->n - 1].count;
	}
	uint32_t ref = table_claim(&m->index, a, b, next_ref(m->n));
	if (ref > m->n)
		counter_append(m, a, b);
	return &m->v[ref - 1].count;
}

uint64_t *counter_find(struct counter_map *m, uint64_t a, uint64_t b)
{
	if (m->index.cap == 0) {
		struct counter *c = counter_scan(m, a, b);
		return c != NULL ? &c->count : NULL;
	}
	uint32_t ref = table_find(&m->index, a, b);
	return ref ? &m->v[ref - 1].count : NULL;
}

void counter_map_free(struct counter_map *m)
{
	table_free(&m->index);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

/* -------------------------------------------------------------- live set */

struct life *life_find(struct live_set *s, uint32_t pool, uint64_t ptr)
{
	uint32_t ref = table_find(&s->index, pool, ptr);
	return ref ? &s->v[ref - 1] : NULL;
}

struct life *life_claim(struct live_set *s, uint32_t pool, uint64_t ptr)
{
	uint32_t ref = table_claim(&s->index, pool, ptr, next_ref(s->n));
	if (ref > s->n) {
		s->v = array_reserve(s->v, &s->cap, s->n + 1, sizeof *s->v);
		s->v[s->n++] = (struct life){.ptr = ptr, .pool = pool};
	}
	return &s->v[ref - 1];
}
