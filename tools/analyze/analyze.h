/*
 * shiftpool-analyze: the types every part shares and the functions each
 * part offers the others, grouped by file.
 *
 * The flow: parse.c turns a line into a struct call, model.c applies it to
 * the processes, pools and the live set, summary.c derives what the reports
 * need at the end, report-text.c, report-json.c and plot.c write it.  The
 * trace vocabulary comes from src/trace-format.h only.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_ANALYZE_H
#define SHIFTPOOL_ANALYZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace-format.h"

#define EXIT_CLEAN    0
#define EXIT_PROBLEMS 1
#define EXIT_USAGE    2

/* ------------------------------------------------------------------ util.c */

extern const char *progname;

void die_nomem(void);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *old, size_t n, size_t size);
/* v, an array of *cap elements of size bytes, with room for need of them:
 * grown by doubling when it has not. */
void *array_reserve(void *v, size_t *cap, size_t need, size_t size);
/* The same, its first capacity first elements (not 0): for the arrays
 * kept per pool or process, which most often hold one or two. */
void *array_reserve_from(void *v, size_t *cap, size_t need, size_t size,
                         size_t first);
/* Decimal; hexadecimal with 0x; "(nil)", "0" or 0x<hex> as a pointer. */
int parse_dec(const char *s, uint64_t *out);
int parse_num(const char *s, uint64_t *out);
int parse_ptr(const char *s, uint64_t *out);

/* ----------------------------------------------------------------- table.c */

/* The per-run secret of every hash table: a trace cannot know it, so it
 * cannot choose addresses or sizes that collide. */
struct hash_key {
	uint64_t k0, k1;
};

/* How far lookups walked: the cost a crafted trace would inflate. */
struct probe_stats {
	uint64_t lookups, probes, max;
};

/* An open-addressing index from a pair of words to a position in an array
 * its owner keeps.  Invariant: n * 2 <= cap (cap a power of two, or 0), so
 * with a keyed hash the expected walk stays under two slots.  Entries are
 * never removed. */
struct slot {
	uint64_t a, b;
	uint32_t ref; /* position + 1 in the owner's array; 0: empty */
};

struct table {
	struct slot *slots;
	size_t cap, n;
	const struct hash_key *key;
	struct probe_stats *stats;
};

void hash_key_init(struct hash_key *key);
uint64_t hash_pair(const struct hash_key *key, uint64_t a, uint64_t b);
/* The ref stored for (a, b), 0 when absent. */
uint32_t table_find(struct table *t, uint64_t a, uint64_t b);
/* The ref of (a, b), claimed and set to ref when absent. */
uint32_t table_claim(struct table *t, uint64_t a, uint64_t b, uint32_t ref);
void table_free(struct table *t);

/* Counters by a pair of words, in the order first counted.  Most maps are
 * a pool's (its sizes, its threads) and hold one or a few counters: up to
 * COUNTER_SCAN of them are found by walking the array, and the index is
 * made only for more, so that a map costs what it holds. */
#define COUNTER_SCAN 8

struct counter {
	uint64_t a, b, count;
};

struct counter_map {
	struct table index;
	struct counter *v;
	size_t n, cap;
};

void counter_map_init(struct counter_map *m, const struct hash_key *key,
                      struct probe_stats *stats);
/* The count of (a, b), created as 0 when absent. */
uint64_t *counter_at(struct counter_map *m, uint64_t a, uint64_t b);
/* The count of (a, b), or NULL when absent. */
uint64_t *counter_find(struct counter_map *m, uint64_t a, uint64_t b);
void counter_map_free(struct counter_map *m);

/* The life of an address in a pool: allocated (LIVE), returned to the pool
 * (FREED), or returned to the system allocator (RELEASED), where the
 * address may come back from any malloc and so starts a new life. */
enum life_state { ST_NEW = 0, ST_LIVE, ST_FREED, ST_RELEASED };

struct life {
	uint64_t ptr;
	uint64_t size;
	uint64_t line; /* of the allocation when live, of the free after */
	uint64_t thread;
	uint64_t pending_double; /* line of a double free the library may
	                            still report; 0: none */
	uint32_t pool;           /* index into analysis.pools */
	unsigned char state, op, src;
};

struct live_set {
	struct table index;
	struct life *v;
	size_t n, cap;
};

struct life *life_find(struct live_set *s, uint32_t pool, uint64_t ptr);
/* The life of (pool, ptr), a new one in state ST_NEW when absent.  Earlier
 * pointers into s->v do not survive it. */
struct life *life_claim(struct live_set *s, uint32_t pool, uint64_t ptr);

/* -------------------------------------------------------------- snapshot.c */

/* What a forked child inherits is its parent's state at the fork, which
 * the parent goes on changing.  So that a fork costs the same however much
 * the parent holds, and a chain of forks as little as one fork, that state
 * is kept in persistent tries: digital search trees on the keyed hash,
 * which a process and its children share, a node copied only when one of
 * them changes a part another still holds (a path at a time).  Nothing is
 * freed before the end of the run. */

struct snode; /* a node of a trie, private to snapshot.c */

/* The live entries of a trie of lives (of a process, for a total). */
struct live_count {
	uint64_t n, bytes;       /* every live entry, its size */
	uint64_t pool_blocks;    /* of them, src pool */
	uint64_t fallback_bytes; /* the sizes of those of src fallback */
};

/* What a child inherits of a set: what pool_init of its classes said. */
struct set_head {
	uint64_t min_block, max_block, bytes_per_class;
	uint64_t known; /* bit i: the class of block size 1 << i */
	uint64_t block_count[64];
};

/* A pool id as a child inherits it: a pool or set, or a set class's own
 * id (alias), which names its set. */
/* What a pool's init record said (a set's: its flags and line). */
struct pool_init {
	int has_init, has_flags;
	uint64_t block_size, block_count, flags, line;
};

struct pool_snap {
	int is_alias;
	uint64_t alias; /* the set's pool id */
	struct pool_init init;
	const struct set_head *set; /* NULL: a pool */
	uint32_t origin;            /* index + 1 into analysis.pools */
	struct snode *lives;        /* its addresses, by pointer */
};

struct snapshots {
	const struct hash_key *key;
	struct probe_stats *stats; /* nodes walked per lookup or change */
	uint64_t nodes;            /* nodes made */
	struct snode_chunk *chunks;
	size_t left; /* unused nodes in the first chunk */
	struct set_head **sets;
	size_t nsets, capsets;
};

void snapshots_init(struct snapshots *s, const struct hash_key *key,
                    struct probe_stats *stats);
void snapshots_free(struct snapshots *s);
size_t snapshot_node_size(void);
/* One more holder of the trie at n (NULL: none). */
void snap_hold(struct snode *n);

/* The life of ptr in a trie of lives; NULL when absent. */
const struct life *lives_find(struct snapshots *s, const struct snode *root,
                              uint64_t ptr);
/* Sets the life of l->ptr in the trie at *root, copying what others hold. */
void lives_set(struct snapshots *s, struct snode **root, const struct life *l);
const struct live_count *lives_count(const struct snode *root);
/* The first live entries of the trie by (line, ptr), at most max of them
 * into out, passing over those whose ptr skip says to; how many. */
size_t lives_first(struct snapshots *s, const struct snode *root, size_t max,
                   int (*skip)(void *arg, uint64_t ptr), void *arg,
                   struct life *out);

const struct pool_snap *pools_find(struct snapshots *s,
                                   const struct snode *root, uint64_t id);
/* The entry of id in the trie at *root, for changing: made (zeroed, and
 * *made set) when absent; what others hold is copied first. */
struct pool_snap *pools_edit(struct snapshots *s, struct snode **root,
                             uint64_t id, int *made);
/* An unchanging copy of h, kept to the end. */
const struct set_head *set_head_keep(struct snapshots *s,
                                     const struct set_head *h);

/* ------------------------------------------------------------- the model */

/* What a problem list is about; the first five the library reports. */
enum kind {
	K_INVALID,
	K_DOUBLE,
	K_WRONG_POOL,
	K_CORRUPTED,
	K_WRITE_AFTER_FREE,
	K_UNKNOWN,
	K_UNREPORTED,
	K_DUPLICATE,
	K_COUNT
};

extern const char *const kind_names[K_COUNT];
extern const char *const kind_titles[K_COUNT];

struct event {
	uint64_t line;
	uint64_t ptr;
	uint64_t thread;
	uint64_t other_line; /* of the earlier allocation or free; 0: none */
	unsigned char op;    /* enum trace_op */
	unsigned char retracted; /* counted under another kind after all */
};

/* Invariant: count >= n - retracted; the first events are in v. */
struct evlist {
	uint64_t count;
	size_t n, cap, retracted;
	struct event *v;
};

/* Counters kept per pool and, updated alongside, for all pools. */
struct stats {
	uint64_t ops[TRACE_OP_COUNT];
	uint64_t alloc_calls;             /* every allocating record */
	uint64_t served[TRACE_SRC_COUNT]; /* by src: pool, fallback */
	uint64_t failed;
	uint64_t frees_by_src[TRACE_SRC_COUNT];
	uint64_t cross_thread;
	uint64_t realloc_inplace, realloc_moved, realloc_to_zero,
	    realloc_failed;
	uint64_t trims, trim_bytes;
	uint64_t live_pool_blocks, peak_pool_blocks;
	uint64_t live_fallback_bytes, peak_fallback_bytes;
	uint64_t leaks, leak_bytes;
	uint64_t problems[K_COUNT];
};

/* Word field of struct stats, for the functions below. */
#define STAT(field) (offsetof(struct stats, field) / sizeof(uint64_t))
#define STAT_WORDS  (sizeof(struct stats) / sizeof(uint64_t))
_Static_assert(sizeof(struct stats) % sizeof(uint64_t) == 0 && STAT_WORDS <= 64,
               "struct stats is words, each a bit of struct counts");

/* A pool's counters, as struct stats holds them for the total: only the
 * words that have been counted, in the order of the struct (bit i of
 * present: word i), so that a pool costs the counters it uses. */
struct counts {
	uint64_t present;
	uint64_t *v;
};

uint64_t counts_get(const struct counts *c, size_t word);
void counts_set(struct counts *c, size_t word, uint64_t value);
/* Adds delta (wrapping: a "negative" one subtracts). */
void counts_add(struct counts *c, size_t word, uint64_t delta);
/* The word of a struct stats. */
uint64_t *stats_word(struct stats *s, size_t word);
void counts_expand(const struct counts *c, struct stats *out);
void counts_free(struct counts *c);

struct leak {
	uint64_t ptr, size, line, thread;
	unsigned char op, src;
};

/* A class of a pool set: its block size is 1 << its index in the set. */
struct set_class {
	int known;            /* named by set_init's range or a class's init */
	uint64_t block_count; /* from its init record; 0: unknown */
	uint64_t requests;    /* requests whose size this class fits first */
	uint64_t served;      /* of requests, those the class served */
	uint64_t fallback;    /* of requests, those the fallback served */
};

struct set_info {
	uint64_t min_block, max_block, bytes_per_class;
	struct set_class classes[64];
	uint64_t above_requests, above_fallback; /* larger than every class */
};

/* The plot's samples of one pool, and its window of allocation sources. */
struct sample {
	uint64_t record, t;
	uint64_t blocks, fallback_bytes;
	double rate; /* < 0: no allocation in the window yet */
};

struct series {
	struct sample *v;
	size_t n, cap;
	unsigned char *window; /* 1: fallback; a ring of opt.plot_window */
	size_t next, filled, fallbacks;
};

struct pool {
	uint64_t id;
	uint32_t process;     /* index into analysis.procs */
	struct set_info *set; /* NULL for a pool */
	struct pool_init init;
	uint64_t first_line, destroy_line;
	uint32_t forked_from; /* index + 1 of the parent's pool; 0: none */
	uint64_t fork_line;
	/* The addresses it inherited, as they were at the fork (NULL: none),
	 * under its own in analysis.live: an address the process touches is
	 * copied there first.  shadowed: those copied that were live. */
	struct snode *base;
	uint64_t shadowed, shadowed_bytes;
	struct counts st;
	struct counter_map sizes;   /* (requested size, 0) -> count */
	struct counter_map threads; /* (process, thread) -> calls */
	struct leak *leaks;
	size_t nleaks;
	struct series *series; /* NULL until plotted */
	/* Allocated with its first event (NULL: none; pool_events()). */
	struct evlist *ev;
};

struct stream; /* what a process holds back, private to order.c */

/* A process: a pid, and which of the processes that had it. */
struct process {
	uint64_t pid;
	int has_pid;         /* v1 records have none */
	unsigned generation; /* 1 + earlier processes with this pid */
	/* Its pools as a child forked now would inherit them, by pool id:
	 * of a forked process, its parent's at the fork; once it has forked
	 * itself (shares), kept up to date after each of its records. */
	struct snode *pools;
	int shares;
	int forked; /* its fork record named a known parent */
	uint64_t fork_line, fork_record, fork_t;
	struct live_count inherited; /* live in pools at the fork */
	struct live_count live;      /* live in its pools, inherited too */
	/* Until it shares: the pool ids it named and its entries in
	 * analysis.live (positions), which sharing starts from. */
	uint64_t *ids;
	size_t nids, capids;
	uint32_t *lives;
	size_t nlives, caplives;
	/* Its records held back for their seq= order (NULL: none), and the
	 * highest seq= applied. */
	struct stream *stream;
	uint64_t last_seq;
	int has_last_seq;
};

/* No process: a fork record's parent that the trace never showed. */
#define NO_PROC UINT32_MAX

/* The window of records held back to be applied in seq= order. */
struct order {
	struct held *ring; /* private to order.c */
	size_t window;     /* at most this many records held; 0: none */
	size_t cap, head, n;
	uint64_t arrivals;
	uint64_t late;     /* records applied out of their seq= order */
	uint64_t held_max; /* the most records held at once */
	unsigned depth;    /* records being applied, one inside another */
};

struct lineinfo {
	uint64_t total, records, comments, blank, unknown, unknown_keys,
	    malformed;
	size_t nmal, nunk, capmal, capunk;
	uint64_t *mal; /* first few malformed line numbers */
	uint64_t *unk; /* first few unknown-operation line numbers */
};

struct options {
	int json;
	int strict;
	size_t limit; /* list entries shown; SIZE_MAX = all */
	size_t top;   /* most frequent sizes shown */
	const char *file;
	const char *plot;      /* PNG to draw, or NULL */
	const char *plot_data; /* the plot's series as text, or NULL */
	size_t plot_window;    /* allocations the fallback rate looks at */
	size_t window;         /* records held back for seq= order */
};

struct analysis {
	struct options opt;
	struct hash_key key;
	struct probe_stats live_probes, map_probes, fork_probes;
	struct snapshots snap;
	struct pool *pools;
	size_t npools, cappools;
	struct counter_map pool_index; /* (process, pool id) -> index + 1 */
	struct process *procs;
	size_t nprocs, capprocs;
	struct counter_map proc_index; /* (pid, has pid) -> index + 1 */
	struct live_set live;
	struct stats total;
	/* Of total.leaks, those in pools a forked process inherited and
	 * never named (no pool of it lists them). */
	uint64_t unnamed_leaks, unnamed_leak_bytes;
	struct counter_map threads;
	struct lineinfo lines;
	int version;      /* from the version line; 0 when absent */
	uint64_t untimed; /* records without t= */
	uint64_t t0;      /* t= of the first record that had one */
	int has_t0;
	struct order order;
	uint64_t applied; /* records applied so far */
};

/* A record, its values parsed; a key's bit in present says it was there. */
struct call {
	enum trace_op op;
	uint32_t present;
	uint64_t v[TRACE_KEY_COUNT]; /* src and error as their codes */
};

#define KEY_BIT(k) (UINT32_C(1) << TRACE_KEY_##k)
_Static_assert(TRACE_KEY_COUNT <= 32, "struct call.present has a bit a key");

/* ----------------------------------------------------------------- parse.c */

/* One line, without its newline or with it; s is modified. */
void analysis_line(struct analysis *a, char *s, size_t len);
/* Every line of a stream; returns 0 or the errno of a read error. */
int analysis_read(struct analysis *a, FILE *f);
/* Every line of a buffer of any bytes. */
void analysis_feed(struct analysis *a, const char *data, size_t size);

/* ----------------------------------------------------------------- order.c */

void order_init(struct order *o, size_t window);
/* Takes a valid record of line: applies it, or holds it back until the
 * records of its process before it by seq= are applied. */
void order_record(struct analysis *a, const struct call *c, uint64_t line);
/* At the end of the trace: applies whatever is held. */
void order_finish(struct analysis *a);
void order_free(struct analysis *a);

/* ----------------------------------------------------------------- model.c */

void analysis_init(struct analysis *a, const struct options *opt);
/* Whether the values of a record make sense together. */
int model_valid(const struct call *c);
/* The process that wrote a record, in the order of the lines: a fork
 * record starts one, and *parent is then the process it names (NO_PROC
 * when none). */
uint32_t model_process(struct analysis *a, const struct call *c,
                       uint32_t *parent);
/* Applies one valid record of proc (parent: model_process()'s). */
void model_apply(struct analysis *a, const struct call *c, uint64_t line,
                 uint32_t proc, uint32_t parent);
void analysis_free(struct analysis *a);

/* --------------------------------------------------------------- summary.c */

struct sizecount {
	uint64_t size, count;
};

/* At the end of the trace: leaks, and event lists in line order. */
void analysis_finish(struct analysis *a);
/* The pool's events of kind k (an empty list when it has none). */
const struct evlist *pool_events(const struct pool *p, enum kind k);
/* The requests of each power-of-two bucket (bucket_range()), from the
 * pool's sizes. */
#define BUCKETS 66
void pool_buckets(const struct pool *p, uint64_t out[BUCKETS]);
/* The sizes by falling frequency; *n of them. */
struct sizecount *top_sizes(const struct pool *p, size_t *n);
uint64_t oversize_requests(const struct pool *p);
void bucket_range(unsigned b, uint64_t *lo, uint64_t *hi);
uint64_t total_problems(const struct analysis *a);
uint64_t frees_total(const struct stats *s);
/* "1", or "4242:1" when the trace has several processes. */
void pool_name(const struct analysis *a, const struct pool *p, char *buf,
               size_t size);
const char *pool_kind(const struct pool *p);
/* FILE, or "(standard input)" for -. */
const char *input_name(const struct analysis *a);
/* The event of l at or after *i still counted under its kind, *i moved
 * past it; NULL after the last. */
const struct event *event_next(const struct evlist *l, size_t *i);

/* ----------------------------------------------------------- report-*.c */

void text_report(const struct analysis *a, FILE *o);
void json_report(const struct analysis *a, FILE *o);

/* ------------------------------------------------------------------ plot.c */

/* Counts an allocation's source in the pool's window. */
void series_count(const struct analysis *a, struct pool *p, int fallback);
/* Takes a sample of the pool after a record at time t (when it has one). */
void series_sample(const struct analysis *a, struct pool *p, uint64_t t);
/* The same after record number record, an earlier one. */
void series_sample_at(const struct analysis *a, struct pool *p, uint64_t record,
                      uint64_t t);
void series_free(struct series *s);
/* Writes the samples of every pool as text; 0 or an errno. */
int plot_data_write(const struct analysis *a, FILE *o);
/* The gnuplot script that draws opt.plot, its data inline. */
void plot_script_write(const struct analysis *a, FILE *o);
/* Whether gnuplot is on PATH. */
int plot_can_draw(void);
/* Draws opt.plot with gnuplot; 0 on success, else says why on stderr. */
int plot_draw(const struct analysis *a);

#endif /* SHIFTPOOL_ANALYZE_H */
