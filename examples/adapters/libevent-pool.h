/*
 * examples/adapters/libevent-pool: libevent's allocator on a shiftpool set.
 *
 * Copy libevent-pool.c and this header into a program that uses libevent.
 * SPDX-License-Identifier: MIT
 */
#ifndef LIBEVENT_POOL_H
#define LIBEVENT_POOL_H

#include <shiftpool.h>

/*
 * Makes libevent take all its memory from set, through
 * event_set_mem_functions().  Call it before any other libevent call;
 * the set must outlive libevent's memory, so destroy it only after
 * libevent_global_shutdown() (or never).  The set's mode must allow the
 * threads that use libevent (POOL_LOCKED or POOL_PER_THREAD unless one
 * thread does).  What libevent allocates for the program to free (the
 * lines of evbuffer_readln(), the strings of evhttp_encode_uri() and the
 * like) goes back with pool_set_free(), not free().
 */
void libevent_pool_install(pool_set_t *set);

#endif
