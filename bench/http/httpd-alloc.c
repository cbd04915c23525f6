/*
 * Names and self-description of the allocators of bench/httpd (see
 * httpd-alloc.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "httpd-alloc.h"

#include <dlfcn.h>
#include <string.h>

const char *const httpd_allocator_names[ALLOCATOR_COUNT] = {
    [ALLOCATOR_POOL_SINGLE] = "pool-single",
    [ALLOCATOR_POOL_LOCKED] = "pool-locked",
    [ALLOCATOR_POOL_PER_THREAD] = "pool-per-thread",
    [ALLOCATOR_POOL_SET] = "pool-set",
    [ALLOCATOR_GLIBC] = "glibc",
    [ALLOCATOR_TCMALLOC] = "tcmalloc",
    [ALLOCATOR_JEMALLOC] = "jemalloc",
    [ALLOCATOR_MIMALLOC] = "mimalloc",
};

enum allocator allocator_by_name(const char *name)
{
	for (int i = 0; i < ALLOCATOR_COUNT; i++)
		if (strcmp(name, httpd_allocator_names[i]) == 0)
			return (enum allocator)i;
	return ALLOCATOR_COUNT;
}

bool allocator_served_here(enum allocator allocator)
{
#if defined(HTTPD_PEER_DEFAULT)
	return allocator == ALLOCATOR_POOL_SINGLE ||
	       allocator == ALLOCATOR_POOL_LOCKED ||
	       allocator == ALLOCATOR_POOL_PER_THREAD ||
	       allocator == ALLOCATOR_POOL_SET || allocator == ALLOCATOR_GLIBC;
#elif defined(HTTPD_PEER_TCMALLOC)
	return allocator == ALLOCATOR_TCMALLOC;
#elif defined(HTTPD_PEER_JEMALLOC)
	return allocator == ALLOCATOR_JEMALLOC;
#else
	return allocator == ALLOCATOR_MIMALLOC;
#endif
}

const char *allocator_program(enum allocator allocator)
{
	switch (allocator) {
	case ALLOCATOR_TCMALLOC:
		return "httpd-tcmalloc";
	case ALLOCATOR_JEMALLOC:
		return "httpd-jemalloc";
	case ALLOCATOR_MIMALLOC:
		return "httpd-mimalloc";
	default:
		return "httpd";
	}
}

/* A function pointer as dladdr() takes it. */
#define ENTRY_POINT(f) ((void *)(uintptr_t)(f))

const char *allocator_library(enum allocator allocator)
{
	void *entry;
#if defined(HTTPD_PEER_DEFAULT)
	entry = allocator == ALLOCATOR_GLIBC      ? ENTRY_POINT(malloc)
	        : allocator == ALLOCATOR_POOL_SET ? ENTRY_POINT(pool_set_malloc)
	                                          : ENTRY_POINT(pool_malloc);
#elif defined(HTTPD_PEER_TCMALLOC)
	(void)allocator;
	entry = ENTRY_POINT(tc_malloc);
#elif defined(HTTPD_PEER_MIMALLOC)
	(void)allocator;
	entry = ENTRY_POINT(mi_malloc);
#else
	(void)allocator;
	entry = ENTRY_POINT(malloc);
#endif
	Dl_info info;
	if (dladdr(entry, &info) == 0 || info.dli_fname == NULL)
		return "unknown";
	const char *slash = strrchr(info.dli_fname, '/');
	return slash != NULL ? slash + 1 : info.dli_fname;
}
