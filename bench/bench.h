/*
 * ./bench: what the driver (bench) and the per-allocator workers
 * (bench-glibc, bench-tcmalloc, ...) share: the names of the workloads and
 * the allocators, the command-line options, and one resolved case.
 *
 * The driver parses the user's options, expands their lists into cases, and
 * runs each case in a worker of its own with every parameter spelled out on
 * the worker's command line; the worker parses that command line with the
 * same parser.  So a row can be reproduced by hand from the command the
 * driver prints for it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ names */

enum workload {
	WORKLOAD_HELD,
	WORKLOAD_OVERSIZE,
	WORKLOAD_LIGHTTPD,
	WORKLOAD_PARALLEL,
	WORKLOAD_SORT,
	WORKLOAD_XTHREAD,
	WORKLOAD_PAIR,      /* malloc, copy, free in a tight loop */
	WORKLOAD_BULK,      /* pair's loop, BULK_BATCH blocks at a time */
	WORKLOAD_FOOTPRINT, /* RSS of N live blocks over their bytes */
	WORKLOAD_MIXED,     /* libcurl's sizes, a window of live objects */
	/* The published allocator benchmarks' patterns (workloads-mt.c): */
	WORKLOAD_LARSON,       /* a server: slots handed to successor threads */
	WORKLOAD_XMALLOC,      /* producers' batches freed by consumers */
	WORKLOAD_GLIBC_THREAD, /* glibc's bench-malloc-thread */
	WORKLOAD_ALLOC_TEST,   /* a live set that grows and shrinks */
	WORKLOAD_REPLACE,      /* H live 64 B blocks a thread, T up to 256 */
	WORKLOAD_HTTP,         /* bench/httpd under wrk (external programs) */
	WORKLOAD_CURL,         /* examples/curl-pool from lighttpd (external) */
	WORKLOAD_COUNT
};

/* The order of the rows in every output. */
enum allocator {
	ALLOCATOR_GLIBC,
	ALLOCATOR_GLIBC_NOTRIM, /* glibc with GLIBC_NOTRIM_TUNABLES */
	ALLOCATOR_TCMALLOC,
	ALLOCATOR_JEMALLOC,
	ALLOCATOR_MIMALLOC,
	ALLOCATOR_GSLICE, /* GLib's g_slice_alloc, a fixed size per call */
	ALLOCATOR_DPDK,   /* DPDK's rte_mempool, per-lcore caches */
	ALLOCATOR_BOOST,  /* boost::pool<>, not thread-safe */
	ALLOCATOR_POOL_SINGLE,
	ALLOCATOR_POOL_LOCKED,
	ALLOCATOR_POOL_PER_THREAD,
	/* the same through the header's inline fast paths (SHIFTPOOL_INLINE) */
	ALLOCATOR_POOL_SINGLE_INLINE,
	ALLOCATOR_POOL_PER_THREAD_INLINE,
	/* pool sets (pool_set_*), mixed only: a class per power of two */
	ALLOCATOR_POOL_SET_SINGLE,
	ALLOCATOR_POOL_SET_LOCKED,
	ALLOCATOR_POOL_SET_PER_THREAD,
	ALLOCATOR_STACK, /* sort only: a buffer on the stack (alloca) */
	ALLOCATOR_FLOOR, /* no allocator: preallocated memory, same bytes */
	ALLOCATOR_COUNT
};

/*
 * glibc-notrim: the glibc worker with these tunables in its environment
 * (and only in its own).  trim_threshold keeps glibc from giving the top
 * of its heap back to the kernel whenever enough of it is free, which it
 * otherwise does every lighttpd round, so that each round faults its
 * pages in again.  Setting it also fixes the mmap threshold at its
 * default (128 KiB), which no request here reaches.  See README.md.
 */
#define GLIBC_NOTRIM_TUNABLES "glibc.malloc.trim_threshold=4294967296"

extern const char *const workload_names[WORKLOAD_COUNT];
extern const char *const allocator_names[ALLOCATOR_COUNT];

/* The worker program that serves an allocator, e.g. "bench-glibc". */
const char *allocator_worker(enum allocator allocator);

/* Whether the allocator takes part in the workload at all (stack is the
 * sort benchmark's control only). */
int allocator_applies(enum allocator allocator, enum workload workload);

/* Whether the allocator's worker is built only where its library is
 * installed (gslice, dpdk, boost: bench/local.mk looks for them, not
 * configure), so that the driver looks for the worker itself. */
int allocator_is_optional(enum allocator allocator);

/* Fixed-size pools: every request is one block of the case's block size. */
int allocator_is_fixed_size(enum allocator allocator);

/* The pool set rows (pool_set_init() and the pool_set_* calls). */
int allocator_is_pool_set(enum allocator allocator);

/* The pool's own rows, one per mode (pool_init() and the pool_* calls),
 * called or inline; the inline ones alone. */
int allocator_is_pool_mode(enum allocator allocator);
int allocator_is_inline(enum allocator allocator);

/* The pool_init() mode of a pool row or a set row. */
int allocator_pool_flags(enum allocator allocator);

/*
 * mixed: each thread keeps MIXED_WINDOW objects live; an operation frees a
 * random one and allocates in its place a size drawn from libcurl's
 * profile (workloads.c), at most MIXED_MAX_SIZE.  The pool sets' classes
 * run from MIXED_MIN_BLOCK to the case's block size (MIXED_MAX_BLOCK
 * unless --block-size), each class room for --blocks of the largest.
 */
#define MIXED_WINDOW    1024
#define MIXED_MAX_SIZE  ((size_t)32 << 10)
#define MIXED_MIN_BLOCK 16
#define MIXED_MAX_BLOCK ((size_t)64 << 10)
#define MIXED_OPS       ((size_t)1 << 20) /* per thread, unless --repeat */

/*
 * larson, xmalloc, glibc-thread, alloc-test and replace (workloads-mt.c,
 * cases in cases-mt.c).  Their pool rows are the sets, classes
 * MT_MIN_BLOCK to MT_MAX_BLOCK, except replace's (one size: the pools).
 * xmalloc's producers pass XMALLOC_BATCH objects at a time.
 */
#define MT_MIN_BLOCK  16
#define MT_MAX_BLOCK  ((size_t)32 << 10)
#define XMALLOC_BATCH 256

/* bulk: the blocks an operation allocates, and frees, together (DPDK's
 * rte_mempool_get_bulk() takes up to its cache size at once). */
#define BULK_BATCH 16

/* footprint: the default block count for a block size, so that the blocks
 * fill at least FOOTPRINT_MIN_BYTES and are at least FOOTPRINT_MIN_BLOCKS:
 * 1 Mi x 16 B, 256 Ki x 64 B, 16 Ki x 4096 B. */
#define FOOTPRINT_MIN_BYTES  ((size_t)16 << 20)
#define FOOTPRINT_MIN_BLOCKS ((size_t)16 << 10)

/* ------------------------------------------------------------ options */

#define LIST_MAX 32

/* The external workloads' fixed shape (see README.md). */
#define HTTP_SERVER_THREADS 2                   /* httpd --threads */
#define HTTP_CONNECTIONS    32                  /* wrk -c */
#define HTTP_WRK_THREADS    2                   /* wrk -t */
#define HTTP_BODY_BYTES     1024                /* GET /bytes/1024 */
#define CURL_FILE_BYTES     ((size_t)256 << 20) /* a sparse file */
#define CLIENTS_MAX         256

struct size_list {
	size_t count;
	size_t value[LIST_MAX];
};

enum order_kind {
	ORDER_LIST,   /* a fixed permutation of the clients, every round */
	ORDER_RANDOM, /* a fresh seeded permutation every round */
};

/*
 * Everything the command line can say.  Zero in a size means "the
 * workload's default" (see case_resolve()); the lists are the values the
 * driver sweeps.
 */
struct options {
	unsigned workloads;  /* bit set of enum workload */
	unsigned allocators; /* bit set of enum allocator; 0: every one */
	struct size_list threads, n, len;
	struct size_list sizes; /* pair, bulk, footprint: request sizes */
	int sizes_given;        /* footprint's differ unless given */
	int threads_given, rounds_given; /* the mt workloads' differ */
	struct size_list live;           /* live objects a thread holds (mt) */
	int live_given;
	size_t min_size, max_size; /* request sizes (mt), 0: default */
	size_t block_size, blocks;
	size_t clients, buffers, rounds, queue_depth;
	enum order_kind order_kind;
	struct size_list order; /* ORDER_LIST: the departure order */
	int rolling;
	size_t runs, warmup, repeat;
	uint64_t seed;
	double duration;
	int duration_given; /* --duration was given (http: its seconds) */
	int quick;
	int cold;     /* no warm-up at all: the seed's method */
	int latency;  /* time each call (held, lighttpd, xthread) */
	int prefault; /* the pool rows' pools made with POOL_PREFAULT */
	int help;
	int csv, json; /* 1: to stdout instead of the table */
	const char *csv_file, *json_file; /* or to a file, beside the table */
	const char *plot_dir;
	const char *plot_from; /* a --csv file to draw instead of running */
};

/* A list set to count values; the largest value of a list (0 if empty). */
void list_set(struct size_list *list, const size_t *values, size_t count);
size_t list_max(const struct size_list *list);

/* Fills the defaults (those of the original measurements). */
void options_default(struct options *options);

/*
 * Parses argv (getopt_long: --flag=value and --flag value).  Returns 0, or
 * -1 after printing the reason to stderr.
 */
int options_parse(struct options *options, int argc, char **argv);

/* Prints --help. */
void options_usage(const char *program);

/* ------------------------------------------------------------ one case
 * (cases.c, the mt workloads' in cases-mt.c) */

/* One workload at one point of its sweep, for one allocator: every
 * parameter resolved to a number. */
struct bench_case {
	enum workload workload;
	enum allocator allocator;
	size_t size;           /* request bytes (held, oversize: also 2x size,
	                          lighttpd, xthread) */
	size_t block_size;     /* the pool's block size */
	size_t blocks;         /* the pool's block count */
	size_t n;              /* held, oversize: N */
	size_t len;            /* sort: items of 8 bytes */
	struct size_list lens; /* parallel: item counts, cycled op by op */
	size_t threads;        /* parallel, pair: threads; xthread:
	                          producer/consumer pairs */
	size_t clients, buffers, rounds;
	enum order_kind order_kind;
	struct size_list order;
	int rolling;
	size_t queue_depth; /* xthread: slots per queue */
	size_t repeat;      /* fixed-work workloads: repetitions timed */
	double duration;    /* parallel, xthread, pair: seconds timed */
	uint64_t seed;
	int cold;     /* no warm-up pass, one timed pass */
	int latency;  /* time each allocation and free call */
	int prefault; /* POOL_PREFAULT for a pool row's pool */
	/* larson, glibc-thread, alloc-test, replace: objects live in each
	 * thread (alloc-test: at most); requests of min_size to max_size */
	size_t live, min_size, max_size;
};

/* Whether a workload runs external programs (http, curl) rather than a
 * bench worker; those are not in the default set of workloads. */
int workload_is_external(enum workload workload);

/* The swept value of a case's workload (N, threads, len; 0 for lighttpd)
 * and the number of points of the sweep. */
size_t case_points(const struct options *options, enum workload workload);
size_t case_point_value(const struct options *options, enum workload workload,
                        size_t point);

/*
 * The mt workloads (larson, xmalloc, glibc-thread, alloc-test, replace):
 * their sweeps, parameters, command lines and labels (cases-mt.c), which
 * the functions above call for them.
 */
int workload_is_mt(enum workload workload);
#define MT_WORKLOADS                                                           \
	((1u << WORKLOAD_LARSON) | (1u << WORKLOAD_XMALLOC) |                  \
	 (1u << WORKLOAD_GLIBC_THREAD) | (1u << WORKLOAD_ALLOC_TEST) |         \
	 (1u << WORKLOAD_REPLACE))
size_t mt_case_points(const struct options *options, enum workload workload);
void mt_case_resolve(const struct options *options, enum workload workload,
                     size_t point, struct bench_case *out);
int mt_case_format_args(const struct bench_case *c, char *buf, size_t size);
void mt_case_label(const struct bench_case *c, char *buf, size_t size);
const char *mt_case_not_applicable(const struct bench_case *c);
const char *mt_case_note(const struct bench_case *c);
/* What one run of the case does, for the report's header. */
void mt_case_describe(const struct bench_case *c, char *buf, size_t size);

/* Resolves one point of a workload's sweep for one allocator. */
void case_resolve(const struct options *options, enum workload workload,
                  enum allocator allocator, size_t point,
                  struct bench_case *out);

/* Why a case cannot run (for example a POOL_SINGLE pool in xthread, where
 * every block is freed by another thread), or NULL. */
const char *case_not_applicable(const struct bench_case *c);

/* How a case runs differently for its allocator, or NULL. */
const char *case_note(const struct bench_case *c);

/* Whether each of the case's threads has a pool of its own (POOL_SINGLE
 * and boost::pool<> serve one thread at a time). */
int case_private_pools(const struct bench_case *c);

/* bulk: whether the case's allocator takes and gives back BULK_BATCH
 * blocks in one call (rte_mempool_get_bulk(), pool_malloc_bulk()); the
 * others make single calls. */
int case_has_bulk(const struct bench_case *c);

/* GLib 2.74's GSlice serves requests up to this size from its slabs
 * (chunks of at most about 8 KiB / 8, in steps of 16 bytes; found by the
 * addresses of successive allocations) and hands larger ones to
 * g_malloc(), which is the C library's malloc. */
#define GSLICE_SLAB_MAX 1008

/* The per-lcore cache of a DPDK mempool for a case: as large as DPDK
 * allows (256 here), but small enough that the caches of all the case's
 * threads together can hold at most a quarter of the pool, so that no
 * thread finds the pool empty while the others' caches hold its blocks. */
size_t case_dpdk_cache(const struct bench_case *c);

/* Whether the case's work is fixed (its checksum must then be the same
 * for every allocator) or timed (parallel, xthread, pair). */
int case_is_timed(const struct bench_case *c);

/* Writes the worker's command line for a case: "--workload=held ...",
 * arguments separated by single spaces, none containing a space.  Returns
 * the length, as snprintf. */
int case_format_args(const struct bench_case *c, char *buf, size_t size);

/* A short label of the swept value, e.g. "N=500", "T=4", "len=64",
 * "64 B T=2". */
void case_label(const struct bench_case *c, char *buf, size_t size);

#endif /* BENCH_BENCH_H */
