/*
 * shiftpool-analyze: the report as text, for a person: the trace, then
 * each pool or set, then the total and the verdict.
 *
 * SPDX-License-Identifier: MIT
 */
#include "analyze.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NAME_SIZE 64

static void text_rate(FILE *o, const struct stats *s)
{
	uint64_t pool = s->served[TRACE_SRC_POOL];
	uint64_t fallback = s->served[TRACE_SRC_FALLBACK];
	if (pool + fallback == 0)
		fprintf(o, "  fallback rate: n/a\n");
	else
		fprintf(o, "  fallback rate: %.2f%%\n",
		        100.0 * (double)fallback / (double)(pool + fallback));
}

static void text_frees(FILE *o, const struct stats *s)
{
	const uint64_t *f = s->frees_by_src;
	fprintf(o,
	        "  frees: %" PRIu64 " (pool %" PRIu64 ", fallback %" PRIu64
	        ", NULL %" PRIu64 ", invalid %" PRIu64 ", double %" PRIu64
	        ", wrong pool %" PRIu64 ")\n",
	        frees_total(s), f[TRACE_SRC_POOL], f[TRACE_SRC_FALLBACK],
	        f[TRACE_SRC_NONE], f[TRACE_SRC_INVALID], f[TRACE_SRC_DOUBLE],
	        f[TRACE_SRC_WRONG_POOL]);
}

static void text_stats(FILE *o, const struct stats *s, uint64_t nthreads)
{
	fprintf(o, "  operations:");
	for (unsigned i = 0; i < TRACE_OP_COUNT; i++)
		fprintf(o, " %s=%" PRIu64, trace_op_name(i), s->ops[i]);
	fprintf(o, "\n  threads: %" PRIu64 "\n", nthreads);
	fprintf(o,
	        "  allocations: %" PRIu64 " (pool %" PRIu64
	        ", fallback %" PRIu64 ", failed %" PRIu64 ")\n",
	        s->alloc_calls, s->served[TRACE_SRC_POOL],
	        s->served[TRACE_SRC_FALLBACK], s->failed);
	text_rate(o, s);
	fprintf(o,
	        "  reallocs: in place %" PRIu64 ", moved %" PRIu64
	        ", freed (size 0) %" PRIu64 ", failed %" PRIu64 "\n",
	        s->realloc_inplace, s->realloc_moved, s->realloc_to_zero,
	        s->realloc_failed);
	text_frees(o, s);
	fprintf(o, "  cross-thread frees: %" PRIu64 "\n", s->cross_thread);
	fprintf(o, "  trims: %" PRIu64 " (%" PRIu64 " bytes released)\n",
	        s->trims, s->trim_bytes);
	fprintf(o, "  peak live pool blocks: %" PRIu64 "\n",
	        s->peak_pool_blocks);
	fprintf(o, "  peak live fallback bytes: %" PRIu64 "\n",
	        s->peak_fallback_bytes);
}

static void text_init(FILE *o, const struct pool *p)
{
	const struct set_info *s = p->set;
	if (!p->init.has_init) {
		fprintf(o,
		        "  %s: unknown (no %s line; first seen at line %" PRIu64
		        ")\n",
		        s ? "classes" : "block size",
		        trace_op_name(s ? TRACE_OP_SET_INIT : TRACE_OP_INIT),
		        p->first_line);
		return;
	}
	if (s != NULL)
		fprintf(o,
		        "  classes: %" PRIu64 "-%" PRIu64 " bytes, %" PRIu64
		        " bytes per class\n",
		        s->min_block, s->max_block, s->bytes_per_class);
	else
		fprintf(o,
		        "  block size: %" PRIu64 "\n  block count: %" PRIu64
		        "\n",
		        p->init.block_size, p->init.block_count);
	if (p->init.has_flags)
		fprintf(o, "  flags: 0x%" PRIx64 "\n", p->init.flags);
	fprintf(o, "  init: line %" PRIu64 "\n", p->init.line);
}

static void text_header(const struct analysis *a, FILE *o, const struct pool *p)
{
	char name[NAME_SIZE];
	pool_name(a, p, name, sizeof name);
	fprintf(o, "\n%s %s\n", pool_kind(p), name);
	text_init(o, p);
	if (p->forked_from) {
		const struct pool *q = &a->pools[p->forked_from - 1];
		pool_name(a, q, name, sizeof name);
		fprintf(o, "  forked: from %s %s at line %" PRIu64 "\n",
		        pool_kind(q), name, p->fork_line);
	}
	if (p->destroy_line)
		fprintf(o, "  destroy: line %" PRIu64 "\n", p->destroy_line);
	else
		fprintf(o, "  destroy: never\n");
}

static void text_classes(FILE *o, const struct set_info *s)
{
	fprintf(o, "  per class:\n");
	for (unsigned i = 0; i < 64; i++) {
		const struct set_class *c = &s->classes[i];
		if (!c->known)
			continue;
		fprintf(o, "    %" PRIu64 ": blocks ", UINT64_C(1) << i);
		if (c->block_count)
			fprintf(o, "%" PRIu64, c->block_count);
		else
			fprintf(o, "unknown");
		fprintf(o,
		        ", requests %" PRIu64 ", fallback %" PRIu64
		        ", served %" PRIu64 "\n",
		        c->requests, c->fallback, c->served);
	}
	fprintf(o,
	        "    above the largest class: requests %" PRIu64
	        ", fallback %" PRIu64 "\n",
	        s->above_requests, s->above_fallback);
}

static void text_sizes(const struct analysis *a, FILE *o, const struct pool *p)
{
	size_t n;
	struct sizecount *v = top_sizes(p, &n);
	size_t shown = n < a->opt.top ? n : a->opt.top;
	fprintf(o, "  sizes, most frequent (%zu of %zu distinct):", shown, n);
	for (size_t i = 0; i < shown; i++)
		fprintf(o, " %" PRIu64 "x%" PRIu64, v[i].size, v[i].count);
	fprintf(o, "\n");
	free(v);
	fprintf(o, "  sizes, by power of two:\n");
	uint64_t buckets[BUCKETS];
	pool_buckets(p, buckets);
	for (unsigned b = 0; b < BUCKETS; b++) {
		uint64_t lo, hi;
		if (buckets[b] == 0)
			continue;
		bucket_range(b, &lo, &hi);
		fprintf(o, "    %" PRIu64 "-%" PRIu64 ": %" PRIu64 "\n", lo, hi,
		        buckets[b]);
	}
}

static void text_leaks(const struct analysis *a, FILE *o, const struct pool *p)
{
	uint64_t leaks = counts_get(&p->st, STAT(leaks));
	fprintf(o, "  leaks: %" PRIu64 " (%" PRIu64 " bytes)\n", leaks,
	        counts_get(&p->st, STAT(leak_bytes)));
	size_t shown = p->nleaks < a->opt.limit ? p->nleaks : a->opt.limit;
	for (size_t i = 0; i < shown; i++) {
		const struct leak *l = &p->leaks[i];
		fprintf(o,
		        "    0x%" PRIx64 " size %" PRIu64 " %s line %" PRIu64
		        " (%s, thread %" PRIu64 ")\n",
		        l->ptr, l->size, trace_op_name(l->op), l->line,
		        trace_src_name(l->src), l->thread);
	}
	if (leaks > shown)
		fprintf(o, "    ... and %" PRIu64 " more\n", leaks - shown);
}

static void text_events(FILE *o, enum kind k, const struct evlist *l)
{
	size_t shown = 0, i = 0;
	const struct event *e;
	fprintf(o, "  %s: %" PRIu64 "\n", kind_titles[k], l->count);
	while ((e = event_next(l, &i)) != NULL) {
		fprintf(o,
		        "    line %" PRIu64 ": %s 0x%" PRIx64
		        " (thread %" PRIu64 ")",
		        e->line, trace_op_name(e->op), e->ptr, e->thread);
		if (e->other_line)
			fprintf(o,
			        k == K_DUPLICATE
			            ? ", allocated at line %" PRIu64
			            : ", freed at line %" PRIu64,
			        e->other_line);
		fprintf(o, "\n");
		shown++;
	}
	if (l->count > shown)
		fprintf(o, "    ... and %" PRIu64 " more\n", l->count - shown);
}

static void text_pool(const struct analysis *a, FILE *o, const struct pool *p)
{
	text_header(a, o, p);
	struct stats st;
	counts_expand(&p->st, &st);
	text_stats(o, &st, p->threads.n);
	if (p->set != NULL)
		text_classes(o, p->set);
	else if (p->init.has_init)
		fprintf(o, "  requests larger than a block: %" PRIu64 "\n",
		        oversize_requests(p));
	text_sizes(a, o, p);
	text_leaks(a, o, p);
	for (int k = 0; k < K_COUNT; k++)
		text_events(o, (enum kind)k, pool_events(p, (enum kind)k));
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

static void text_format(const struct analysis *a, FILE *o)
{
	if (a->version == 0)
		fprintf(o, "format: no \"%sN\" version line\n",
		        TRACE_VERSION_PREFIX);
	else if (a->version > TRACE_VERSION)
		fprintf(o,
		        "format: v%d (this analyzer knows v%d; unknown parts "
		        "are skipped)\n",
		        a->version, TRACE_VERSION);
	else
		fprintf(o, "format: v%d\n", a->version);
}

static void text_trace(const struct analysis *a, FILE *o)
{
	const struct lineinfo *L = &a->lines;
	fprintf(o, "shiftpool-analyze: %s\n", input_name(a));
	text_format(a, o);
	fprintf(o, "processes: %zu\n", a->nprocs);
	fprintf(o,
	        "lines: %" PRIu64 " (records %" PRIu64 ", comments %" PRIu64
	        ", blank %" PRIu64 ")\n",
	        L->total, L->records, L->comments, L->blank);
	text_lines(o, "unknown operations", L->unknown, L->unk, L->nunk);
	fprintf(o, "records with unknown keys: %" PRIu64 "\n", L->unknown_keys);
	text_lines(o, "malformed lines", L->malformed, L->mal, L->nmal);
	/* Only when there are some: traces in order read as they did. */
	if (a->order.late > 0)
		fprintf(o,
		        "records out of seq order: %" PRIu64
		        " (further out of place than --window %zu; their "
		        "problems may be false)\n",
		        a->order.late, a->order.window);
}

static void text_total(const struct analysis *a, FILE *o)
{
	const struct stats *s = &a->total;
	fprintf(o, "\ntotal (%zu pool%s)\n", a->npools,
	        a->npools == 1 ? "" : "s");
	text_stats(o, s, a->threads.n);
	fprintf(o, "  leaks: %" PRIu64 " (%" PRIu64 " bytes)\n", s->leaks,
	        s->leak_bytes);
	if (a->unnamed_leaks != 0)
		fprintf(o,
		        "    of them in pools a forked process inherited and "
		        "never named: %" PRIu64 " (%" PRIu64 " bytes)\n",
		        a->unnamed_leaks, a->unnamed_leak_bytes);
	for (int k = 0; k < K_COUNT; k++)
		fprintf(o, "  %s: %" PRIu64 "\n", kind_titles[k],
		        s->problems[k]);
}

static void text_count(FILE *o, const char **sep, const char *what, uint64_t n)
{
	if (n == 0)
		return;
	fprintf(o, "%s%s %" PRIu64, *sep, what, n);
	*sep = ", ";
}

static void text_result(const struct analysis *a, FILE *o)
{
	uint64_t np = total_problems(a);
	if (np == 0) {
		fprintf(o, "\nresult: clean\n");
		return;
	}
	fprintf(o, "\nresult: %" PRIu64 " problem%s (", np, np == 1 ? "" : "s");
	const char *sep = "";
	text_count(o, &sep, "leaks", a->total.leaks);
	for (int k = 0; k < K_COUNT; k++)
		text_count(o, &sep, kind_names[k], a->total.problems[k]);
	if (a->opt.strict) {
		text_count(o, &sep, "malformed", a->lines.malformed);
		text_count(o, &sep, "unknown", a->lines.unknown);
	}
	fprintf(o, ")\n");
}

void text_report(const struct analysis *a, FILE *o)
{
	text_trace(a, o);
	for (size_t i = 0; i < a->npools; i++)
		text_pool(a, o, &a->pools[i]);
	text_total(a, o);
	text_result(a, o);
}
