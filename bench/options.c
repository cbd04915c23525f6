/*
 * The command line of ./bench and of its workers: the names of the
 * workloads and the allocators, the options with their defaults (the
 * figures of the published measurements these workloads reproduce, see
 * README.md) and --help, and what the names are (which workloads run
 * programs, which allocators are pools).  cases.c resolves one case from
 * them.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "bench.h"
#include "latency.h"
#include "shiftpool.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ constants */

const char *const workload_names[WORKLOAD_COUNT] = {
    "held",         "oversize",   "lighttpd",  "parallel", "sort",   "xthread",
    "pair",         "bulk",       "footprint", "mixed",    "larson", "xmalloc",
    "glibc-thread", "alloc-test", "replace",   "http",     "curl",
};

const char *const allocator_names[ALLOCATOR_COUNT] = {
    "glibc",
    "glibc-notrim",
    "tcmalloc",
    "jemalloc",
    "mimalloc",
    "gslice",
    "dpdk",
    "boost-pool",
    "pool-single",
    "pool-locked",
    "pool-per-thread",
    "pool-single-inline",
    "pool-per-thread-inline",
    "pool-set-single",
    "pool-set-locked",
    "pool-set-per-thread",
    "stack",
    "floor",
};

enum option_id {
	OPT_WORKLOAD = 256,
	OPT_ALLOCATOR,
	OPT_THREADS,
	OPT_BLOCK_SIZE,
	OPT_BLOCKS,
	OPT_N,
	OPT_LEN,
	OPT_CLIENTS,
	OPT_BUFFERS,
	OPT_ROUNDS,
	OPT_ORDER,
	OPT_ROLLING,
	OPT_QUEUE_DEPTH,
	OPT_RUNS,
	OPT_WARMUP,
	OPT_REPEAT,
	OPT_SEED,
	OPT_DURATION,
	OPT_QUICK,
	OPT_SIZES,
	OPT_COLD,
	OPT_LATENCY,
	OPT_PREFAULT,
	OPT_LIVE,
	OPT_MIN_SIZE,
	OPT_MAX_SIZE,
	OPT_CSV,
	OPT_JSON,
	OPT_PLOT,
	OPT_PLOT_FROM,
	OPT_HELP,
};

static const struct option long_options[] = {
    {"workload", required_argument, NULL, OPT_WORKLOAD},
    {"allocator", required_argument, NULL, OPT_ALLOCATOR},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"block-size", required_argument, NULL, OPT_BLOCK_SIZE},
    {"blocks", required_argument, NULL, OPT_BLOCKS},
    {"n", required_argument, NULL, OPT_N},
    {"len", required_argument, NULL, OPT_LEN},
    {"clients", required_argument, NULL, OPT_CLIENTS},
    {"buffers", required_argument, NULL, OPT_BUFFERS},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"order", required_argument, NULL, OPT_ORDER},
    {"rolling", no_argument, NULL, OPT_ROLLING},
    {"queue-depth", required_argument, NULL, OPT_QUEUE_DEPTH},
    {"runs", required_argument, NULL, OPT_RUNS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"sizes", required_argument, NULL, OPT_SIZES},
    {"cold", no_argument, NULL, OPT_COLD},
    {"latency", no_argument, NULL, OPT_LATENCY},
    {"prefault", no_argument, NULL, OPT_PREFAULT},
    {"live", required_argument, NULL, OPT_LIVE},
    {"min-size", required_argument, NULL, OPT_MIN_SIZE},
    {"max-size", required_argument, NULL, OPT_MAX_SIZE},
    {"csv", optional_argument, NULL, OPT_CSV},
    {"json", optional_argument, NULL, OPT_JSON},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"plot-from", required_argument, NULL, OPT_PLOT_FROM},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* ------------------------------------------------------------ names */

const char *allocator_worker(enum allocator allocator)
{
	switch (allocator) {
	case ALLOCATOR_GLIBC:
	case ALLOCATOR_GLIBC_NOTRIM:
		return "bench-glibc";
	case ALLOCATOR_TCMALLOC:
		return "bench-tcmalloc";
	case ALLOCATOR_JEMALLOC:
		return "bench-jemalloc";
	case ALLOCATOR_MIMALLOC:
		return "bench-mimalloc";
	case ALLOCATOR_GSLICE:
		return "bench-gslice";
	case ALLOCATOR_DPDK:
		return "bench-dpdk";
	case ALLOCATOR_BOOST:
		return "bench-boost";
	case ALLOCATOR_POOL_SINGLE:
	case ALLOCATOR_POOL_LOCKED:
	case ALLOCATOR_POOL_PER_THREAD:
	case ALLOCATOR_POOL_SET_SINGLE:
	case ALLOCATOR_POOL_SET_LOCKED:
	case ALLOCATOR_POOL_SET_PER_THREAD:
		return "bench-pool";
	case ALLOCATOR_POOL_SINGLE_INLINE:
	case ALLOCATOR_POOL_PER_THREAD_INLINE:
		return "bench-pool-inline";
	default:
		return "bench-floor";
	}
}

int workload_is_external(enum workload workload)
{
	return workload == WORKLOAD_HTTP || workload == WORKLOAD_CURL;
}

int allocator_applies(enum allocator allocator, enum workload workload)
{
	/* curl-pool has --allocator=pool (POOL_LOCKED, or --pool-mode=
	 * per-thread) and --allocator=system (glibc's malloc). */
	/* The sets serve mixed sizes, the workload made for them; in mixed,
	 * a pool or a fixed-size pool would send most requests to its
	 * fallback or waste most of its blocks. */
	/* replace asks for one size, where the pools in every mode take
	 * part; the other mt workloads ask for many, as mixed does.  The
	 * fixed-size pools and the inline rows sit these out. */
	if (workload == WORKLOAD_REPLACE)
		return allocator != ALLOCATOR_STACK &&
		       !allocator_is_fixed_size(allocator) &&
		       !allocator_is_inline(allocator) &&
		       !allocator_is_pool_set(allocator);
	if (workload == WORKLOAD_MIXED || workload_is_mt(workload))
		return allocator != ALLOCATOR_STACK &&
		       !allocator_is_fixed_size(allocator) &&
		       !allocator_is_pool_mode(allocator);
	if (allocator_is_pool_set(allocator))
		return 0;
	/* The inline rows where the pool_malloc(), pool_calloc() and
	 * pool_free() of a worker are the work: not the bulk calls, not the
	 * memory a block costs, not the external programs. */
	if (allocator_is_inline(allocator) &&
	    (workload == WORKLOAD_BULK || workload == WORKLOAD_FOOTPRINT ||
	     workload_is_external(workload)))
		return 0;
	if (workload == WORKLOAD_CURL)
		return allocator == ALLOCATOR_GLIBC ||
		       allocator == ALLOCATOR_POOL_LOCKED ||
		       allocator == ALLOCATOR_POOL_PER_THREAD;
	if (workload == WORKLOAD_HTTP)
		return allocator != ALLOCATOR_STACK &&
		       allocator != ALLOCATOR_FLOOR &&
		       allocator != ALLOCATOR_GLIBC_NOTRIM &&
		       !allocator_is_fixed_size(allocator);
	return allocator != ALLOCATOR_STACK || workload == WORKLOAD_SORT;
}

int allocator_is_optional(enum allocator allocator)
{
	return allocator_is_fixed_size(allocator);
}

int allocator_is_fixed_size(enum allocator allocator)
{
	return allocator == ALLOCATOR_GSLICE || allocator == ALLOCATOR_DPDK ||
	       allocator == ALLOCATOR_BOOST;
}

int allocator_is_pool_set(enum allocator allocator)
{
	return allocator == ALLOCATOR_POOL_SET_SINGLE ||
	       allocator == ALLOCATOR_POOL_SET_LOCKED ||
	       allocator == ALLOCATOR_POOL_SET_PER_THREAD;
}

int allocator_is_inline(enum allocator allocator)
{
	return allocator == ALLOCATOR_POOL_SINGLE_INLINE ||
	       allocator == ALLOCATOR_POOL_PER_THREAD_INLINE;
}

int allocator_is_pool_mode(enum allocator allocator)
{
	return allocator == ALLOCATOR_POOL_SINGLE ||
	       allocator == ALLOCATOR_POOL_LOCKED ||
	       allocator == ALLOCATOR_POOL_PER_THREAD ||
	       allocator_is_inline(allocator);
}

int allocator_pool_flags(enum allocator allocator)
{
	switch (allocator) {
	case ALLOCATOR_POOL_SINGLE:
	case ALLOCATOR_POOL_SINGLE_INLINE:
	case ALLOCATOR_POOL_SET_SINGLE:
		return POOL_SINGLE;
	case ALLOCATOR_POOL_LOCKED:
	case ALLOCATOR_POOL_SET_LOCKED:
		return POOL_LOCKED;
	default:
		return POOL_PER_THREAD;
	}
}

int workload_is_mt(enum workload workload)
{
	return (MT_WORKLOADS >> workload) & 1;
}

/* ------------------------------------------------------------ helpers */

static int parse_size(const char *text, size_t min, size_t *out)
{
	char *end;
	unsigned long long value;

	if (text[0] == '-' || text[0] == '\0')
		return -1;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno != 0 || *end != '\0' || value < min || value > SIZE_MAX)
		return -1;
	*out = (size_t)value;
	return 0;
}

static int parse_list(const char *text, size_t min, struct size_list *out)
{
	char buf[512];
	char *item, *save = NULL;

	if (strlen(text) >= sizeof(buf))
		return -1;
	strcpy(buf, text);
	out->count = 0;
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		if (out->count == LIST_MAX ||
		    parse_size(item, min, &out->value[out->count]) != 0)
			return -1;
		out->count++;
	}
	return out->count > 0 ? 0 : -1;
}

/* A comma list of names from table, or "all", into a bit set. */
static int parse_names(const char *text, const char *const *table, size_t count,
                       unsigned *out)
{
	char buf[512];
	char *item, *save = NULL;
	size_t i;

	if (strlen(text) >= sizeof(buf))
		return -1;
	strcpy(buf, text);
	*out = 0;
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		if (strcmp(item, "all") == 0) {
			*out |= (1u << count) - 1;
			continue;
		}
		for (i = 0; i < count; i++)
			if (strcmp(item, table[i]) == 0)
				break;
		if (i == count)
			return -1;
		*out |= 1u << i;
	}
	return *out != 0 ? 0 : -1;
}

void list_set(struct size_list *list, const size_t *values, size_t count)
{
	list->count = count;
	memcpy(list->value, values, count * sizeof(values[0]));
}

size_t list_max(const struct size_list *list)
{
	size_t i, max = 0;

	for (i = 0; i < list->count; i++)
		if (list->value[i] > max)
			max = list->value[i];
	return max;
}

/* ------------------------------------------------------------ options */

void options_default(struct options *o)
{
	static const size_t threads[] = {1, 2, 4};
	static const size_t n[] = {50, 100, 500, 1024, 10000};
	static const size_t len[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
	static const size_t sizes[] = {64, 4096};

	memset(o, 0, sizeof(*o));
	/* http and curl run external programs for seconds each: only when
	 * asked for (--workload=http,curl or all). */
	o->workloads = ((1u << WORKLOAD_COUNT) - 1) &
	               ~((1u << WORKLOAD_HTTP) | (1u << WORKLOAD_CURL));
	list_set(&o->threads, threads, 3);
	list_set(&o->n, n, 5);
	list_set(&o->len, len, 10);
	list_set(&o->sizes, sizes, 2);
	o->clients = 10;
	o->buffers = 256;
	o->rounds = 200;
	o->order_kind = ORDER_LIST; /* order.count 0: see case_resolve() */
	o->queue_depth = 64;
	o->runs = 5;
	o->warmup = 1;
	o->seed = 1;
	o->duration = 0.1;
}

void options_usage(const char *program)
{
	printf(
	    "Usage: %s [OPTION]...\n"
	    "Runs the allocation workloads of two published measurements (a\n"
	    "mempool vs tcmalloc comparison, and the allocation case studies)\n"
	    "against each allocator, every run in a process of its own, and\n"
	    "prints a table.\n"
	    "LIST is a comma-separated list.  Defaults in brackets.\n"
	    "\n"
	    "What to run:\n"
	    "  --workload=LIST    held, oversize, lighttpd, parallel, sort, "
	    "xthread,\n"
	    "                     pair, bulk, footprint, mixed, larson, "
	    "xmalloc,\n"
	    "                     glibc-thread, alloc-test, replace, http "
	    "(bench/httpd\n"
	    "                     under wrk), curl (examples/curl-pool from "
	    "lighttpd),\n"
	    "                     or all\n"
	    "                     [all but http and curl]\n"
	    "  --allocator=LIST   glibc, glibc-notrim (glibc with "
	    "GLIBC_TUNABLES=\n"
	    "                     " GLIBC_NOTRIM_TUNABLES "),\n"
	    "                     tcmalloc, jemalloc, mimalloc, gslice, dpdk,\n"
	    "                     boost-pool, pool-single, pool-locked,\n"
	    "                     pool-per-thread, pool-set-single,\n"
	    "                     pool-set-locked, pool-set-per-thread "
	    "(mixed only),\n"
	    "                     stack (sort only),\n"
	    "                     floor, or all [all that were built]\n"
	    "\n"
	    "Workload parameters:\n"
	    "  --n=LIST           held, oversize: blocks held at once\n"
	    "                     [50,100,500,1024,10000]\n"
	    "  --block-size=B     request size of held (oversize: B and 2B), "
	    "lighttpd\n"
	    "                     and xthread, and the pool's block size\n"
	    "                     [1024 held/oversize, 4096 lighttpd/xthread; "
	    "parallel\n"
	    "                     and sort: 8 x the largest len, 4096]\n"
	    "  --blocks=N         the pool's block count [1024 "
	    "held/oversize/parallel/\n"
	    "                     sort/xthread; clients x buffers lighttpd;\n"
	    "                     footprint: max(16 MiB / size, 16384)]\n"
	    "  --clients=N        lighttpd: clients connected at once [10]\n"
	    "  --buffers=N        lighttpd: buffers per client [256]\n"
	    "  --rounds=N         lighttpd: rounds of all clients connecting "
	    "and\n"
	    "                     leaving (with --rolling: clients x N "
	    "departures) [200]\n"
	    "  --order=ORDER      lighttpd: departure order, a permutation of\n"
	    "                     0..clients-1, or random (seeded, new each "
	    "round)\n"
	    "                     [3,0,5,1,6,2,4,9,8,7; 0,1,.. for other "
	    "client "
	    "counts]\n"
	    "  --rolling          lighttpd: one client leaves, one arrives, "
	    "instead of\n"
	    "                     rounds [off]\n"
	    "  --len=LIST         parallel: item counts cycled op by op; sort: "
	    "one row\n"
	    "                     each [1,2,4,8,16,32,64,128,256,512]\n"
	    "  mixed: each thread keeps %d objects of libcurl's sizes live, "
	    "frees a\n"
	    "                     random one and allocates another, "
	    "--repeat times\n"
	    "                     [2^20; pool sets: classes 16 B .. "
	    "--block-size\n"
	    "                     (64 KiB), --blocks (2048) of the "
	    "largest each]\n"
	    "  --threads=LIST     parallel, pair, mixed: threads; xthread:\n"
	    "                     producer/consumer pairs [1,2,4]\n"
	    "  --sizes=LIST       pair, bulk, footprint: request sizes, bytes, "
	    "at least 8\n"
	    "                     [64,4096; footprint 16,64,4096]\n"
	    "  --queue-depth=N    xthread: slots of each bounded queue; "
	    "xmalloc: batches\n"
	    "                     queued at most [64]\n"
	    "  larson, xmalloc, glibc-thread, alloc-test, replace: see "
	    "README.md;\n"
	    "                     --threads [1,2; replace 1,2,256], "
	    "--repeat: ops per\n"
	    "                     thread [2^18; replace 2^20 / T], "
	    "--rounds: larson's\n"
	    "                     thread generations [16]\n"
	    "  --live=LIST        objects a thread holds: replace swept "
	    "[16,100,1000];\n"
	    "                     larson [1000], glibc-thread [1024], "
	    "alloc-test at\n"
	    "                     most [4096] (the first value)\n"
	    "  --min-size=B, --max-size=B  their request sizes [larson "
	    "16..1024,\n"
	    "                     xmalloc 16..256, glibc-thread 16..4096, "
	    "alloc-test\n"
	    "                     16..1024; replace: one size, 64]\n"
	    "  http: httpd --threads=2 --allocator=X, then wrk -t2 -c32\n"
	    "                     --latency for --duration seconds (whole, at "
	    "least 1;\n"
	    "                     default 2, --quick 1) on /bytes/1024\n"
	    "  curl: curl-pool --allocator=pool|system --json, one 256 MiB "
	    "sparse\n"
	    "                     file served by lighttpd on 127.0.0.1\n"
	    "\n"
	    "Measurement:\n"
	    "  --runs=N           counted runs per row, interleaved across "
	    "allocators [5]\n"
	    "  --warmup=N         uncounted runs before them [1]\n"
	    "  --repeat=N         held/oversize/sort: repetitions timed per "
	    "run\n"
	    "                     [auto: about 2^17 allocations, at least 2; "
	    "sort:\n"
	    "                     2^17 items, at least 256 sorts]; mixed: "
	    "operations\n"
	    "                     per thread [2^20]\n"
	    "  --duration=SEC     parallel, xthread, pair: seconds timed per "
	    "run\n"
	    "                     [0.1; pair 0.05];\n"
	    "                     http: seconds of wrk per run [2]\n"
	    "  --seed=N           random seed of inputs and orders [1]\n"
	    "  --cold             the seed's method: no warm-up run, no "
	    "warm-up "
	    "pass in\n"
	    "                     the process, one timed pass (--repeat 1 "
	    "unless given)\n"
	    "  --latency          held, lighttpd, xthread: time every "
	    "allocation and\n"
	    "                     free call (" LATENCY_TIMER "); "
	    "percentiles per row\n"
	    "  --prefault         the pool rows' pools made with "
	    "POOL_PREFAULT: their\n"
	    "                     pages populated at pool_init(), before "
	    "the timing\n"
	    "  --quick            a seconds-long smoke run: --runs=2 "
	    "--warmup=0\n"
	    "                     --n=50,2000 --len=1,512 --threads=1,2 "
	    "--sizes=64\n"
	    "                     --rounds=2 --duration=0.01, repeats / 64 "
	    "(not "
	    "a\n"
	    "                     measurement)\n"
	    "\n"
	    "Output:\n"
	    "  --csv[=FILE]       CSV, to stdout instead of the table, or to "
	    "FILE\n"
	    "  --json[=FILE]      JSON, to stdout instead of the table, or to "
	    "FILE\n"
	    "  --plot=DIR         PNG charts (gnuplot) into DIR\n"
	    "  --plot-from=FILE   with --plot: draw the charts of an earlier "
	    "run from\n"
	    "                     its --csv FILE (and FILE.txt's machine "
	    "line), running\n"
	    "                     nothing\n"
	    "  --help             this text\n"
	    "\n"
	    "Progress goes to stderr.  The exit status is 1 when a row failed "
	    "or an\n"
	    "allocator was not served by the library it names.\n",
	    program, MIXED_WINDOW);
}

/* Options the user gave, so that --quick changes only the others. */
#define GIVEN(id) (1ull << ((id)-OPT_WORKLOAD))

static void options_apply_quick(struct options *o, unsigned long long given)
{
	static const size_t n[] = {50, 2000};
	static const size_t len[] = {1, 512};
	static const size_t threads[] = {1, 2};
	static const size_t sizes[] = {64};

	if (!(given & GIVEN(OPT_RUNS)))
		o->runs = 2;
	if (!(given & GIVEN(OPT_WARMUP)))
		o->warmup = 0;
	if (!(given & GIVEN(OPT_N)))
		list_set(&o->n, n, 2);
	if (!(given & GIVEN(OPT_LEN)))
		list_set(&o->len, len, 2);
	if (!(given & GIVEN(OPT_THREADS)))
		list_set(&o->threads, threads, 2);
	if (!(given & GIVEN(OPT_SIZES)))
		list_set(&o->sizes, sizes, 1);
	if (!(given & GIVEN(OPT_ROUNDS)))
		o->rounds = 2;
	if (!(given & GIVEN(OPT_DURATION)))
		o->duration = 0.01;
}

int options_parse(struct options *o, int argc, char **argv)
{
	unsigned long long given = 0;
	const char *bad = NULL;
	int id;

	options_default(o);
	optind = 1;
	opterr = 1;
	while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
		if (id == '?' || id == ':')
			return -1;
		given |= GIVEN(id);
		switch (id) {
		case OPT_WORKLOAD:
			if (parse_names(optarg, workload_names, WORKLOAD_COUNT,
			                &o->workloads) != 0)
				bad = "--workload";
			break;
		case OPT_ALLOCATOR:
			if (parse_names(optarg, allocator_names,
			                ALLOCATOR_COUNT, &o->allocators) != 0)
				bad = "--allocator";
			break;
		case OPT_THREADS:
			o->threads_given = 1;
			if (parse_list(optarg, 1, &o->threads) != 0)
				bad = "--threads";
			break;
		case OPT_LIVE:
			o->live_given = 1;
			if (parse_list(optarg, 1, &o->live) != 0)
				bad = "--live";
			break;
		case OPT_MIN_SIZE:
			if (parse_size(optarg, 8, &o->min_size) != 0 ||
			    o->min_size > MT_MAX_BLOCK)
				bad = "--min-size (8 to 32768)";
			break;
		case OPT_MAX_SIZE:
			if (parse_size(optarg, 8, &o->max_size) != 0 ||
			    o->max_size > ((size_t)1 << 20))
				bad = "--max-size (8 to 2^20)";
			break;
		case OPT_BLOCK_SIZE:
			if (parse_size(optarg, 16, &o->block_size) != 0 ||
			    o->block_size > ((size_t)1 << 30))
				bad = "--block-size (16 to 2^30)";
			break;
		case OPT_BLOCKS:
			if (parse_size(optarg, 1, &o->blocks) != 0)
				bad = "--blocks";
			break;
		case OPT_N:
			if (parse_list(optarg, 1, &o->n) != 0)
				bad = "--n";
			break;
		case OPT_LEN:
			if (parse_list(optarg, 1, &o->len) != 0)
				bad = "--len";
			break;
		case OPT_CLIENTS:
			if (parse_size(optarg, 1, &o->clients) != 0 ||
			    o->clients > CLIENTS_MAX)
				bad = "--clients (1 to 256)";
			break;
		case OPT_BUFFERS:
			if (parse_size(optarg, 1, &o->buffers) != 0)
				bad = "--buffers";
			break;
		case OPT_ROUNDS:
			o->rounds_given = 1;
			if (parse_size(optarg, 1, &o->rounds) != 0)
				bad = "--rounds";
			break;
		case OPT_ORDER:
			if (strcmp(optarg, "random") == 0) {
				o->order_kind = ORDER_RANDOM;
			} else {
				o->order_kind = ORDER_LIST;
				if (parse_list(optarg, 0, &o->order) != 0)
					bad = "--order";
			}
			break;
		case OPT_ROLLING:
			o->rolling = 1;
			break;
		case OPT_QUEUE_DEPTH:
			if (parse_size(optarg, 1, &o->queue_depth) != 0)
				bad = "--queue-depth";
			break;
		case OPT_RUNS:
			if (parse_size(optarg, 1, &o->runs) != 0)
				bad = "--runs";
			break;
		case OPT_WARMUP:
			if (parse_size(optarg, 0, &o->warmup) != 0)
				bad = "--warmup";
			break;
		case OPT_REPEAT:
			if (parse_size(optarg, 1, &o->repeat) != 0)
				bad = "--repeat";
			break;
		case OPT_SEED: {
			char *end;
			errno = 0;
			o->seed = strtoull(optarg, &end, 0);
			if (errno != 0 || *end != '\0' || optarg[0] == '-')
				bad = "--seed";
			break;
		}
		case OPT_DURATION: {
			char *end;
			o->duration = strtod(optarg, &end);
			if (*end != '\0' || !(o->duration > 0) ||
			    o->duration > 3600)
				bad = "--duration (seconds, above 0)";
			o->duration_given = 1;
			break;
		}
		case OPT_QUICK:
			o->quick = 1;
			break;
		case OPT_SIZES:
			o->sizes_given = 1;
			if (parse_list(optarg, 8, &o->sizes) != 0 ||
			    list_max(&o->sizes) > ((size_t)1 << 30))
				bad = "--sizes (8 to 2^30 bytes)";
			break;
		case OPT_COLD:
			o->cold = 1;
			break;
		case OPT_LATENCY:
			o->latency = 1;
			break;
		case OPT_PREFAULT:
			o->prefault = 1;
			break;
		case OPT_CSV:
			if (optarg != NULL)
				o->csv_file = optarg;
			else
				o->csv = 1;
			break;
		case OPT_JSON:
			if (optarg != NULL)
				o->json_file = optarg;
			else
				o->json = 1;
			break;
		case OPT_PLOT:
			o->plot_dir = optarg;
			break;
		case OPT_PLOT_FROM:
			o->plot_from = optarg;
			break;
		case OPT_HELP:
			o->help = 1;
			break;
		}
		if (bad != NULL) {
			fprintf(stderr, "%s: invalid %s: '%s'\n", argv[0], bad,
			        optarg);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n",
		        argv[0], argv[optind]);
		return -1;
	}
	if (o->csv && o->json) {
		fprintf(stderr,
		        "%s: --csv and --json cannot both take stdout; "
		        "give one a FILE\n",
		        argv[0]);
		return -1;
	}
	if (o->order_kind == ORDER_LIST && o->order.count > 0) {
		unsigned char seen[CLIENTS_MAX] = {0};
		size_t i;
		int ok = o->order.count == o->clients;

		for (i = 0; ok && i < o->order.count; i++) {
			ok = o->order.value[i] < o->clients &&
			     !seen[o->order.value[i]];
			if (ok)
				seen[o->order.value[i]] = 1;
		}
		if (!ok) {
			fprintf(stderr,
			        "%s: --order must be a permutation of "
			        "0..%zu (--clients - 1), or random\n",
			        argv[0], o->clients - 1);
			return -1;
		}
	}
	if (o->min_size && o->max_size && o->min_size > o->max_size) {
		fprintf(stderr, "%s: --min-size is above --max-size\n",
		        argv[0]);
		return -1;
	}
	if (o->quick)
		options_apply_quick(o, given);
	/* The seed timed a fresh process: no warm-up run either. */
	if (o->cold && !(given & GIVEN(OPT_WARMUP)))
		o->warmup = 0;
	return 0;
}
