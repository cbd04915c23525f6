/*
 * boost::pool<> for the C workers of bench-boost: the pool is a C++ class
 * template (header-only), so one C++ file, peer-boost.cc, wraps it in
 * these functions.  A C++ program would have them inlined; here each is a
 * call into the worker itself, as shiftpool's are calls into its library.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_PEER_BOOST_H
#define BENCH_PEER_BOOST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct boost_pool;

/* A pool of block_size-byte blocks whose first chunk holds first_blocks
 * (it grows by chunks when they are all handed out); NULL if out of
 * memory. */
struct boost_pool *boost_pool_new(size_t block_size, size_t first_blocks);
void boost_pool_delete(struct boost_pool *pool);

/* One block, or NULL when no more memory can be had. */
void *boost_pool_malloc(struct boost_pool *pool);
void boost_pool_free(struct boost_pool *pool, void *block);

/* "boost 1_74" */
const char *boost_pool_version(void);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_PEER_BOOST_H */
