/*
 * A worker: runs one case of one workload for the one allocator it is
 * built for (see peer.h), and prints what it measured on stdout as
 * "key=value" lines for the driver.  It takes the driver's options, with
 * one workload, one allocator and one value per list, e.g.
 *
 *	bench-glibc --workload=held --allocator=glibc --n=500 --repeat=524
 *
 * It also names the shared object that holds each entry point it calls
 * (dladdr() on the very function pointers it calls), so that no row can
 * claim an allocator it did not run.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "harness.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Runs the case's workload on its peer, opened here (footprint opens
 * its own: it measures the set-up too). */
void workload_run(const struct bench_case *c, struct workload_result *out)
{
	struct peer peer;
	int side;

	memset(out, 0, sizeof(*out));
	for (side = 0; c->latency && side < LATENCY_SIDES; side++)
		out->latency[side] =
		    harness_alloc(sizeof(struct latency_histogram));
	/* footprint measures the set-up too. */
	if (c->workload != WORKLOAD_FOOTPRINT && peer_open(&peer, c) != 0)
		worker_fail("cannot set up %s", allocator_names[c->allocator]);
	switch (c->workload) {
	case WORKLOAD_HELD:
	case WORKLOAD_OVERSIZE:
		run_held(c, &peer, out);
		break;
	case WORKLOAD_LIGHTTPD:
		run_lighttpd(c, &peer, out);
		break;
	case WORKLOAD_PARALLEL:
	case WORKLOAD_PAIR:
	case WORKLOAD_BULK:
		run_parallel(c, &peer, out);
		break;
	case WORKLOAD_FOOTPRINT:
		run_footprint(c, &peer, out);
		break;
	case WORKLOAD_SORT:
		run_sort(c, &peer, out);
		break;
	case WORKLOAD_XTHREAD:
		run_xthread(c, &peer, out);
		break;
	case WORKLOAD_MIXED:
		run_mixed(c, &peer, out);
		break;
	case WORKLOAD_LARSON:
		run_larson(c, &peer, out);
		break;
	case WORKLOAD_XMALLOC:
		run_xmalloc(c, &peer, out);
		break;
	case WORKLOAD_GLIBC_THREAD:
	case WORKLOAD_REPLACE:
		run_window(c, &peer, out);
		break;
	case WORKLOAD_ALLOC_TEST:
		run_alloc_test(c, &peer, out);
		break;
	default:
		worker_fail("unknown workload");
	}
	peer_count(&peer, &out->pool_allocs, &out->fallback_allocs);
	peer_close(&peer);
}

/* The object that defines a function, by path; "none" without one. */
static const char *object_of(const char *symbol, void (*function)(void))
{
	Dl_info info, self;

	if (function == NULL)
		return "none";
	if (dladdr((void *)function, &info) == 0 || info.dli_fname == NULL)
		return "unknown";
	/* In a program built without -fPIE, a function's address is its PLT
	 * entry in the program itself: look up the definition it jumps to. */
	if (dladdr((void *)object_of, &self) != 0 &&
	    info.dli_fbase == self.dli_fbase) {
		void *target = dlsym(RTLD_NEXT, symbol);
		if (target != NULL && dladdr(target, &info) != 0 &&
		    info.dli_fname != NULL)
			return info.dli_fname;
	}
	return info.dli_fname;
}

static int count_bits(unsigned bits)
{
	return __builtin_popcount(bits);
}

/* glibc-notrim is glibc with its tunables in the environment: without
 * them the row would measure plain glibc under another name. */
static void check_environment(const struct bench_case *c)
{
	const char *tunables = getenv("GLIBC_TUNABLES");

	if (c->allocator == ALLOCATOR_GLIBC_NOTRIM &&
	    (tunables == NULL ||
	     strstr(tunables, "glibc.malloc.trim_threshold=") == NULL))
		worker_fail("glibc-notrim runs with GLIBC_TUNABLES=%s in its "
		            "environment (bench sets it)",
		            GLIBC_NOTRIM_TUNABLES);
	if (c->allocator != ALLOCATOR_GLIBC_NOTRIM && tunables != NULL)
		worker_fail("GLIBC_TUNABLES is set: unset it, or run "
		            "glibc-notrim");
	/* G_SLICE=always-malloc would make GSlice glibc's malloc. */
	if (c->allocator == ALLOCATOR_GSLICE && getenv("G_SLICE") != NULL)
		worker_fail("G_SLICE is set: unset it (bench does)");
}

/* --latency: the histograms of the timed calls, one line each. */
static void print_latency(const struct workload_result *result)
{
	int side;

	for (side = 0; side < LATENCY_SIDES; side++) {
		if (result->latency[side] == NULL)
			continue;
		printf("latency_%s=", latency_side_names[side]);
		latency_write(stdout, result->latency[side]);
		putchar('\n');
		free(result->latency[side]);
	}
}

int main(int argc, char **argv)
{
	struct options options;
	struct bench_case c;
	struct peer_entry entry;
	struct workload_result result;
	struct rusage usage;
	const char *reason;
	char version[128];

	if (options_parse(&options, argc, argv) != 0)
		return 2;
	if (options.help) {
		printf("%s: a worker of bench; run bench --help\n", argv[0]);
		return 0;
	}
	if (count_bits(options.workloads) != 1 ||
	    count_bits(options.allocators) != 1 ||
	    case_points(&options,
	                (enum workload)__builtin_ctz(options.workloads)) != 1)
		worker_fail(
		    "%s: give one workload, one allocator and one value "
		    "per swept list (the driver, bench, sweeps)",
		    argv[0]);

	case_resolve(&options, (enum workload)__builtin_ctz(options.workloads),
	             (enum allocator)__builtin_ctz(options.allocators), 0, &c);
	if (!peer_serves(c.allocator))
		worker_fail("%s does not serve %s", argv[0],
		            allocator_names[c.allocator]);
	reason = case_not_applicable(&c);
	if (reason != NULL)
		worker_fail("%s", reason);
	check_environment(&c);

	if (peer_start(argv[0]) != 0)
		worker_fail("cannot start %s", allocator_names[c.allocator]);
	peer_entries(&c, &entry);
	peer_version(version, sizeof(version));
	workload_run(&c, &result);
	getrusage(RUSAGE_SELF, &usage);
	peer_stop();

	printf("ops=%llu\n", (unsigned long long)result.ops);
	printf("ns=%llu\n", (unsigned long long)result.ns);
	printf("checksum=%llu\n", (unsigned long long)result.checksum);
	printf("pool_allocs=%llu\n", (unsigned long long)result.pool_allocs);
	printf("fallback_allocs=%llu\n",
	       (unsigned long long)result.fallback_allocs);
	printf("minor_faults=%llu\n", (unsigned long long)result.minor_faults);
	if (c.workload == WORKLOAD_FOOTPRINT) {
		printf("footprint_before=%llu\n",
		       (unsigned long long)result.footprint_before);
		printf("footprint_open=%llu\n",
		       (unsigned long long)result.footprint_open);
		printf("footprint_after=%llu\n",
		       (unsigned long long)result.footprint_after);
		printf("footprint_bytes=%llu\n",
		       (unsigned long long)result.footprint_bytes);
	}
	if (c.workload == WORKLOAD_MIXED) {
		printf("mixed_live_bytes=%llu\n",
		       (unsigned long long)result.mixed_live_bytes);
		printf("mixed_rounded_bytes=%llu\n",
		       (unsigned long long)result.mixed_rounded_bytes);
	}
	print_latency(&result);
	printf("symbol=%s\n", entry.symbol ? entry.symbol : "none");
	printf("source=%s\n", object_of(entry.symbol, entry.function));
	printf("free_symbol=%s\n",
	       entry.free_symbol ? entry.free_symbol : "none");
	printf("free_source=%s\n",
	       object_of(entry.free_symbol, entry.free_function));
	printf("fallback_symbol=%s\n",
	       entry.fallback_symbol ? entry.fallback_symbol : "none");
	printf("fallback_source=%s\n",
	       object_of(entry.fallback_symbol, entry.fallback_function));
	printf("version=%s\n", version);
#ifdef __OPTIMIZE__
	printf("optimized=1\n");
#else
	printf("optimized=0\n");
#endif
	printf("maxrss_kib=%ld\n", usage.ru_maxrss);
	return fflush(stdout) == 0 ? 0 : 1;
}
