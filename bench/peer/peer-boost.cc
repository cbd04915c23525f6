/*
 * boost::pool<> behind the C functions of peer-boost.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include "peer-boost.h"

#include <boost/pool/pool.hpp>
#include <boost/version.hpp>
#include <new>

/* The pool's chunks come from new[] (its default user allocator): the C
 * library's malloc in this worker. */
struct boost_pool {
	boost::pool<> pool;
	boost_pool(size_t block_size, size_t first_blocks)
	    : pool(block_size, first_blocks)
	{
	}
};

struct boost_pool *boost_pool_new(size_t block_size, size_t first_blocks)
{
	return new (std::nothrow) boost_pool(block_size, first_blocks);
}

void boost_pool_delete(struct boost_pool *pool)
{
	delete pool;
}

void *boost_pool_malloc(struct boost_pool *pool)
{
	return pool->pool.malloc();
}

void boost_pool_free(struct boost_pool *pool, void *block)
{
	pool->pool.free(block);
}

const char *boost_pool_version(void)
{
	return "boost " BOOST_LIB_VERSION;
}
