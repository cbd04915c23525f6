/*
 * The objects of the stress and two-pools parts and the workers that
 * move them (stress-objects.c); stress-crossing.c runs the workers in
 * rounds and checks the pools between them.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_STRESS_OBJECTS_H
#define SHIFTPOOL_STRESS_OBJECTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "concurrency.h"

/* What the workers did, as the test saw it, per pool. */
struct counts {
	uint64_t allocs[2], frees[2];       /* pool blocks, as the test saw */
	uint64_t fb_allocs[2], fb_frees[2]; /* fallback, new/free only */
	uint64_t objects, crossed, swaps, reallocs, callocs;
	uint64_t exhausted; /* requests that fit a block, served by fallback */
};

void counts_add(struct counts *to, const struct counts *from);

/* One run: its pools, the shared array and the totals of exited workers. */
struct stress {
	int npools;
	struct tracked pools[2];
	size_t max_size;           /* largest object: 4 blocks of the biggest */
	_Atomic(void *) *transfer; /* the shared array */
	size_t ntransfer;
	size_t steps; /* per thread per round */
	pthread_mutex_t counts_lock;
	struct counts total; /* under counts_lock */
	uint64_t trimmed;    /* bytes pool_trim() gave back during the run */
};

#define LOCAL_SLOTS 32

struct worker {
	struct stress *s;
	uint32_t serial;
	uint32_t next; /* ids made by this thread */
	uint64_t rng;
	struct counts c;
	void *local[LOCAL_SLOTS];
};

/* A worker's thread: s->steps random steps, then what it holds goes to
 * the shared array or back to the pool, its counts to s->total. */
void *stress_thread(void *arg);

/* Checks an object of the run and frees it, counted in w. */
void obj_free(struct worker *w, void *p);

#endif
