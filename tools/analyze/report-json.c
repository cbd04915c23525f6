/*
 * shiftpool-analyze: the report as one JSON object, for programs: the same
 * facts as the text, with null where a fact is unknown.
 *
 * SPDX-License-Identifier: MIT
 */
#include "analyze.h"

#include <inttypes.h>
#include <stdlib.h>

/* ----------------------------------------------------------- the writer */

struct jw {
	FILE *o;
	int depth;
	int first;
};

static void jw_string(FILE *o, const char *s)
{
	fputc('"', o);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(o, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(o, "\\u%04x", *c);
		else
			fputc(*c, o);
	}
	fputc('"', o);
}

static void jw_indent(struct jw *w)
{
	fputc('\n', w->o);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->o);
}

static void jw_key(struct jw *w, const char *key)
{
	if (!w->first)
		fputc(',', w->o);
	if (w->depth > 0)
		jw_indent(w);
	w->first = 0;
	if (key != NULL) {
		jw_string(w->o, key);
		fputs(": ", w->o);
	}
}

static void jw_open(struct jw *w, const char *key, char c)
{
	jw_key(w, key);
	fputc(c, w->o);
	w->depth++;
	w->first = 1;
}

static void jw_close(struct jw *w, char c)
{
	w->depth--;
	if (!w->first)
		jw_indent(w);
	fputc(c, w->o);
	w->first = 0;
}

static void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	fprintf(w->o, "%" PRIu64, v);
}

/* v, or null when known is false. */
static void jw_u64_or_null(struct jw *w, const char *key, uint64_t v, int known)
{
	jw_key(w, key);
	if (known)
		fprintf(w->o, "%" PRIu64, v);
	else
		fputs("null", w->o);
}

static void jw_str(struct jw *w, const char *key, const char *v)
{
	jw_key(w, key);
	jw_string(w->o, v);
}

static void jw_hex(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	fprintf(w->o, "\"0x%" PRIx64 "\"", v);
}

static void jw_lit(struct jw *w, const char *key, const char *literal)
{
	jw_key(w, key);
	fputs(literal, w->o);
}

static void jw_lines(struct jw *w, const char *key, const uint64_t *v, size_t n)
{
	jw_open(w, key, '[');
	for (size_t i = 0; i < n; i++)
		jw_u64(w, NULL, v[i]);
	jw_close(w, ']');
}

/* ------------------------------------------------------------ the parts */

static void json_rate(struct jw *w, const struct stats *s)
{
	uint64_t pool = s->served[TRACE_SRC_POOL];
	uint64_t fallback = s->served[TRACE_SRC_FALLBACK];
	jw_key(w, "fallback_rate");
	if (pool + fallback == 0)
		fputs("null", w->o);
	else
		fprintf(w->o, "%.6f",
		        (double)fallback / (double)(pool + fallback));
}

static void json_frees(struct jw *w, const struct stats *s)
{
	jw_open(w, "frees", '{');
	jw_u64(w, "total", frees_total(s));
	jw_u64(w, "pool", s->frees_by_src[TRACE_SRC_POOL]);
	jw_u64(w, "fallback", s->frees_by_src[TRACE_SRC_FALLBACK]);
	jw_u64(w, "null", s->frees_by_src[TRACE_SRC_NONE]);
	jw_u64(w, "invalid", s->frees_by_src[TRACE_SRC_INVALID]);
	jw_u64(w, "double", s->frees_by_src[TRACE_SRC_DOUBLE]);
	jw_u64(w, "wrong_pool", s->frees_by_src[TRACE_SRC_WRONG_POOL]);
	jw_u64(w, "cross_thread", s->cross_thread);
	jw_close(w, '}');
}

static void json_stats(struct jw *w, const struct stats *s, uint64_t nthreads)
{
	jw_open(w, "operations", '{');
	for (unsigned i = 0; i < TRACE_OP_COUNT; i++)
		jw_u64(w, trace_op_name(i), s->ops[i]);
	jw_close(w, '}');
	jw_u64(w, "threads", nthreads);
	jw_open(w, "allocations", '{');
	jw_u64(w, "total", s->alloc_calls);
	jw_u64(w, "pool", s->served[TRACE_SRC_POOL]);
	jw_u64(w, "fallback", s->served[TRACE_SRC_FALLBACK]);
	jw_u64(w, "failed", s->failed);
	jw_close(w, '}');
	json_rate(w, s);
	jw_open(w, "reallocs", '{');
	jw_u64(w, "in_place", s->realloc_inplace);
	jw_u64(w, "moved", s->realloc_moved);
	jw_u64(w, "to_zero", s->realloc_to_zero);
	jw_u64(w, "failed", s->realloc_failed);
	jw_close(w, '}');
	json_frees(w, s);
	jw_open(w, "trims", '{');
	jw_u64(w, "count", s->trims);
	jw_u64(w, "bytes", s->trim_bytes);
	jw_close(w, '}');
	jw_u64(w, "peak_live_pool_blocks", s->peak_pool_blocks);
	jw_u64(w, "peak_live_fallback_bytes", s->peak_fallback_bytes);
}

static void json_name(const struct analysis *a, struct jw *w, const char *key,
                      const struct pool *p)
{
	char name[64];
	pool_name(a, p, name, sizeof name);
	jw_str(w, key, name);
}

static void json_identity(const struct analysis *a, struct jw *w,
                          const struct pool *p)
{
	const struct process *pr = &a->procs[p->process];
	json_name(a, w, "name", p);
	jw_str(w, "kind", pool_kind(p));
	jw_u64(w, "id", p->id);
	jw_u64_or_null(w, "pid", pr->pid, pr->has_pid);
	if (p->forked_from)
		json_name(a, w, "forked_from", &a->pools[p->forked_from - 1]);
	else
		jw_lit(w, "forked_from", "null");
	jw_u64_or_null(w, "fork_line", p->fork_line, p->forked_from != 0);
}

static void json_init(struct jw *w, const struct pool *p)
{
	int pool = p->init.has_init && p->set == NULL;
	jw_u64_or_null(w, "block_size", p->init.block_size, pool);
	jw_u64_or_null(w, "block_count", p->init.block_count, pool);
	if (p->init.has_init && p->init.has_flags) {
		char buf[32];
		snprintf(buf, sizeof buf, "0x%" PRIx64, p->init.flags);
		jw_str(w, "flags", buf);
	} else {
		jw_lit(w, "flags", "null");
	}
	jw_u64_or_null(w, "init_line", p->init.line, p->init.has_init);
	jw_u64_or_null(w, "destroy_line", p->destroy_line,
	               p->destroy_line != 0);
	jw_u64(w, "first_line", p->first_line);
}

static void json_classes(struct jw *w, const struct pool *p)
{
	const struct set_info *s = p->set;
	jw_u64_or_null(w, "min_block", s->min_block, p->init.has_init);
	jw_u64_or_null(w, "max_block", s->max_block, p->init.has_init);
	jw_u64_or_null(w, "bytes_per_class", s->bytes_per_class,
	               p->init.has_init);
	jw_open(w, "classes", '[');
	for (unsigned i = 0; i < 64; i++) {
		const struct set_class *c = &s->classes[i];
		if (!c->known)
			continue;
		jw_open(w, NULL, '{');
		jw_u64(w, "block_size", UINT64_C(1) << i);
		jw_u64_or_null(w, "block_count", c->block_count,
		               c->block_count != 0);
		jw_u64(w, "requests", c->requests);
		jw_u64(w, "fallback", c->fallback);
		jw_u64(w, "served", c->served);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_open(w, "above_largest_class", '{');
	jw_u64(w, "requests", s->above_requests);
	jw_u64(w, "fallback", s->above_fallback);
	jw_close(w, '}');
}

static void json_sizes(const struct analysis *a, struct jw *w,
                       const struct pool *p)
{
	size_t n;
	struct sizecount *v = top_sizes(p, &n);
	jw_open(w, "sizes", '{');
	jw_u64(w, "distinct", n);
	jw_open(w, "top", '[');
	for (size_t i = 0; i < n && i < a->opt.top; i++) {
		jw_open(w, NULL, '{');
		jw_u64(w, "size", v[i].size);
		jw_u64(w, "count", v[i].count);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	free(v);
	jw_open(w, "buckets", '[');
	uint64_t buckets[BUCKETS];
	pool_buckets(p, buckets);
	for (unsigned b = 0; b < BUCKETS; b++) {
		uint64_t lo, hi;
		if (buckets[b] == 0)
			continue;
		bucket_range(b, &lo, &hi);
		jw_open(w, NULL, '{');
		jw_u64(w, "min", lo);
		jw_u64(w, "max", hi);
		jw_u64(w, "count", buckets[b]);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

static void json_leaks(const struct analysis *a, struct jw *w,
                       const struct pool *p)
{
	jw_open(w, "leaks", '{');
	uint64_t leaks = counts_get(&p->st, STAT(leaks));
	jw_u64(w, "count", leaks);
	jw_u64(w, "bytes", counts_get(&p->st, STAT(leak_bytes)));
	size_t shown = p->nleaks < a->opt.limit ? p->nleaks : a->opt.limit;
	jw_open(w, "list", '[');
	for (size_t i = 0; i < shown; i++) {
		const struct leak *l = &p->leaks[i];
		jw_open(w, NULL, '{');
		jw_hex(w, "ptr", l->ptr);
		jw_u64(w, "size", l->size);
		jw_str(w, "op", trace_op_name(l->op));
		jw_u64(w, "line", l->line);
		jw_str(w, "src", trace_src_name(l->src));
		jw_u64(w, "thread", l->thread);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_u64(w, "not_listed", leaks - shown);
	jw_close(w, '}');
}

static void json_events(struct jw *w, enum kind k, const struct evlist *l)
{
	uint64_t listed = 0;
	size_t i = 0;
	const struct event *e;
	jw_open(w, kind_names[k], '{');
	jw_u64(w, "count", l->count);
	jw_open(w, "list", '[');
	while ((e = event_next(l, &i)) != NULL) {
		jw_open(w, NULL, '{');
		jw_u64(w, "line", e->line);
		jw_str(w, "op", trace_op_name(e->op));
		jw_hex(w, "ptr", e->ptr);
		jw_u64(w, "thread", e->thread);
		if (e->other_line)
			jw_u64(w,
			       k == K_DUPLICATE ? "allocated_line"
			                        : "freed_line",
			       e->other_line);
		jw_close(w, '}');
		listed++;
	}
	jw_close(w, ']');
	jw_u64(w, "not_listed", l->count - listed);
	jw_close(w, '}');
}

static void json_pool(const struct analysis *a, struct jw *w,
                      const struct pool *p)
{
	jw_open(w, NULL, '{');
	json_identity(a, w, p);
	json_init(w, p);
	struct stats st;
	counts_expand(&p->st, &st);
	json_stats(w, &st, p->threads.n);
	if (p->set != NULL)
		json_classes(w, p);
	jw_u64_or_null(w, "oversize_requests", oversize_requests(p),
	               p->init.has_init && p->set == NULL);
	json_sizes(a, w, p);
	json_leaks(a, w, p);
	for (int k = 0; k < K_COUNT; k++)
		json_events(w, (enum kind)k, pool_events(p, (enum kind)k));
	jw_close(w, '}');
}

static void json_lines(struct jw *w, const struct lineinfo *L,
                       const struct order *order)
{
	jw_open(w, "lines", '{');
	jw_u64(w, "total", L->total);
	jw_u64(w, "records", L->records);
	jw_u64(w, "comments", L->comments);
	jw_u64(w, "blank", L->blank);
	jw_u64(w, "unknown", L->unknown);
	jw_lines(w, "unknown_lines", L->unk, L->nunk);
	jw_u64(w, "unknown_keys", L->unknown_keys);
	jw_u64(w, "malformed", L->malformed);
	jw_lines(w, "malformed_lines", L->mal, L->nmal);
	jw_u64(w, "out_of_order", order->late);
	jw_close(w, '}');
}

static void json_total(const struct analysis *a, struct jw *w)
{
	const struct stats *s = &a->total;
	jw_open(w, "total", '{');
	jw_u64(w, "pools", a->npools);
	json_stats(w, s, a->threads.n);
	jw_open(w, "leaks", '{');
	jw_u64(w, "count", s->leaks);
	jw_u64(w, "bytes", s->leak_bytes);
	jw_open(w, "in_unnamed_pools", '{');
	jw_u64(w, "count", a->unnamed_leaks);
	jw_u64(w, "bytes", a->unnamed_leak_bytes);
	jw_close(w, '}');
	jw_close(w, '}');
	for (int k = 0; k < K_COUNT; k++)
		jw_u64(w, kind_names[k], s->problems[k]);
	jw_close(w, '}');
}

void json_report(const struct analysis *a, FILE *o)
{
	struct jw w = {o, 0, 1};
	jw_open(&w, NULL, '{');
	jw_str(&w, "file", a->opt.file);
	jw_u64_or_null(&w, "format_version", (uint64_t)a->version,
	               a->version != 0);
	jw_u64(&w, "processes", a->nprocs);
	json_lines(&w, &a->lines, &a->order);
	jw_open(&w, "pools", '[');
	for (size_t i = 0; i < a->npools; i++)
		json_pool(a, &w, &a->pools[i]);
	jw_close(&w, ']');
	json_total(a, &w);
	uint64_t np = total_problems(a);
	jw_u64(&w, "problems", np);
	jw_lit(&w, "clean", np == 0 ? "true" : "false");
	jw_close(&w, '}');
	fputc('\n', o);
}
