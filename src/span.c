/*
 * POOL_PER_THREAD: lock-free per-thread spans, many per thread.
 *
 * 1. The region is cut into spans of 2^span_shift blocks (at most 256).  A
 *    span's descriptor (two cache lines, internal.h) holds its lists, a bit
 *    per block and its owner.  A free finds the span of a block from the
 *    block's index with one shift.
 *
 * 2. A thread (its cache for the pool) owns many spans: the active span it
 *    allocates from, the spans of its partial list (spans with free blocks),
 *    and the spans of its full list (spans it found with no free block).
 *    The span's owner field names the cache, with OWNER_FULL set while the
 *    span is on the full list.  Both lists are linked through the spans'
 *    descriptors, so a cache costs no memory per span.
 *
 * 3. A free whose span is owned by the calling thread's cache is a local
 *    free, whatever span it is: plain loads and stores clear the block's out
 *    bit, and push it on the thread's stack (point 14), linked through
 *    word 0 of the free blocks.  The inline fast path does this when
 *    the owner is the cache, the stack has room, and the span keeps a
 *    block handed out or is the active one; the slow path does the rest: a
 *    full stack gives half its blocks back to their spans first; a span
 *    other than the active one that the free leaves with nothing handed
 *    out takes its blocks back from the stack and is kept, or given back
 *    (point 6); a block given back to its span goes on the span's local
 *    list, and a span on the full list then moves to the partial list (no
 *    atomic operation).
 *
 * 4. Allocation takes the head of the thread's stack (point 14), then the
 *    head of the active span's local list, then the blocks other threads
 *    freed into it (its remote frees drained), then its never-used tail
 *    (the bump): blocks given back are used before memory never touched
 *    (in mimalloc-bench's rptest at two threads, where threads free each
 *    other's blocks, bumping first touched 1.3 to 4.2 times the blocks,
 *    2.5 times in the medians of three runs, and the peak RSS was up to
 *    three times as large).  When the active
 *    span has none of them, it goes on the full
 *    list and the head of the partial list becomes the active span (O(1)).
 *    The partial list is a FIFO, so the span taken is the one that had the
 *    longest to gather frees.  When that span is thin (few free blocks: it
 *    would serve few allocations before the next switch), a span given
 *    back to the pool comes first, if the available stack has one: never
 *    a span never used, which would grow the memory the thread touches
 *    without bound while frees trickle in (a producer whose blocks
 *    another thread frees, a live set that shrinks and grows).
 *    When the partial list is empty, the full list is swept once: a span
 *    with remote frees is drained and goes on the partial list, the others
 *    are sealed (point 5), unless the pool has no span left to give: the
 *    thread is then about to fall back, and sealing would only make its
 *    next frees into those spans take each over again (two threads replacing
 *    1,000 blocks each in a pool of exactly 2,000, where the spans leave
 *    one thread a few short: 14 ns a pair with the sealing, 9 without).
 *    Only then does the thread take a span from the
 *    pool's available stack, then a never-used one; then the fallback.  In
 *    a steady state (blocks freed and replaced) the thread's own spans
 *    serve it and the shared stack is not touched.
 *
 * 5. Any other free is a remote free, and it is only a claim (point 8):
 *    one atomic OR sets the block's claim bit in the span's shared line,
 *    and the block itself is not written.  The owner drains the span when
 *    it needs blocks from it: it exchanges each nonzero word of claim bits
 *    for zero and puts the blocks they name on the local list.  Neither
 *    side follows a link through the blocks, so the lines of the blocks do
 *    not travel between the threads for the free.  (One thread freeing
 *    what another allocates took about a third less time, and 179
 *    instructions a block in all, down from 211, than with a remote list
 *    linked through word 1 of the blocks, which took a claim, a CAS push,
 *    and a pointer chase and an atomic AND a block in the drain.)  A span
 *    that nobody owns and that has no free block is abandoned: its
 *    abandoned word holds SPAN_ABANDONED.  A thread seals a full span it
 *    gives up so (its owner becomes 0), when the sweep finds no remote
 *    free in it, and at thread exit.  The first remote free into an
 *    abandoned span clears the mark and publishes the span on the
 *    available stack, so no capacity is stranded behind a sealed span.
 *    Each side writes its own (the mark; the claim) and then reads the
 *    other's, sequentially consistent (point 13), so a claim made as the
 *    owner seals the span is seen by one of the two, and whoever clears
 *    the mark publishes.  A span still on its owner's full list keeps the
 *    blocks remote frees gave back until the owner's next sweep (or
 *    exit): other threads cannot use them meanwhile, the price of a full
 *    list that costs no atomic operation to enter or leave.  A thread
 *    that frees into an abandoned span and allocates itself (it has an
 *    active span or a partial one) takes it over instead (one CAS) and
 *    puts it on its partial list: its later frees into it are local.
 *
 * 6. A thread keeps at most THREAD_KEEP_EMPTY wholly free spans besides its
 *    active span; a free that leaves another span wholly free beyond that
 *    gives it back to the available stack.  So what a thread holds grows
 *    with its live blocks, not with the threads, and a thread that freed
 *    everything holds at most 1 + THREAD_KEEP_EMPTY spans, plus spans whose
 *    last blocks other threads freed (they come back at its next sweep).
 *    A thread that exits, and pool_destroy(), give every span up: a span
 *    with free blocks goes on the available stack, a full one is abandoned
 *    (point 5): no capacity is lost.
 *
 * 7. Why there is no ABA.  Remote frees push nothing: a claim bit is set
 *    once by one remote free and cleared by the owner's exchange, so there
 *    is no shared list of blocks to pop.  The available stack is popped
 *    by many threads, so its head carries a 32-bit tag beside the span
 *    number, bumped by every push and pop; a pop that read a stale next link
 *    fails its CAS.  Spans are never unmapped while the pool lives, so
 *    reading a stale link is harmless (the link is atomic: the owner's lists
 *    reuse it while the span is off the stack).
 *
 * 8. Why a double free can never hand a block out twice, even when two
 *    threads free the same block at the same moment.  A block's out bit is
 *    set while it is handed out; only the span's owner writes it.  A remote
 *    free reads the out bit first: a block that is not handed out is a
 *    double free, reported, and nothing changes.  Then it claims the
 *    block: an atomic OR of its claim bit.  Of two remote frees of one
 *    block only one finds the bit clear; the other is reported.  The
 *    owner, freeing a block of its own, refuses one that is claimed (the
 *    remote free came first).  The two checks can still both pass when the
 *    two frees race (each reads the other's bit before the other writes
 *    it); then the block is both on the owner's lists and claimed, and the
 *    drain finds a claimed block that is not handed out: it reports the
 *    second free and leaves the block where the owner put it, once.  A
 *    double free that races with the block being handed out again frees
 *    the new allocation, as it would in any allocator: nothing tells the
 *    two allocations apart.
 *
 * 9. The owner never hands out a block that is claimed: it parks it (moves
 *    it from the local list to the parked list) until the drain has seen
 *    the claim, then puts it back.  So a claim is always for an allocation
 *    that was live when its free read the out bit.  The drain reports a
 *    double free only after it has written the local list back, since the
 *    handler may call the pool.  A write after free into a block another
 *    thread freed is never read: the drain writes the block's link afresh.
 *
 * 10. Who owns a span is decided by the operations that hand it over, never
 *    by the owner field alone: the pop of the available stack, the take-over
 *    CAS of an abandoned span, the first allocation of a never-used span.
 *    The new owner then writes its cache into owner.  A thread reads owner
 *    equal to its own cache only if it wrote that value itself and nobody
 *    has written since; nobody else writes owner before the span is given
 *    up, and the thread that gives it up writes 0 (or leaves OWNER_FULL,
 *    which its fast path never matches) first.  A cache is freed only
 *    after every span naming it was given up.
 *
 * 11. Counting: a span counts the blocks its owners hand out (allocs, in
 *    the owner line); the blocks handed out now are its out bits that no
 *    claim cancels, so the frees are the difference and nobody counts them.
 *
 * 12. pool_trim() first gives up the calling thread's spans, as its exit
 *    would (its stack back to its spans, then each span given up): the
 *    blocks other threads freed into them, which only their owner drains,
 *    become every thread's.  Then it gives back the pages of the spans on
 *    the available stack whose blocks are all free; spans other threads
 *    hold are left alone.  It
 *    holds them off the stack meanwhile, so trim_seq is odd from before its
 *    first pop to after its last push.  A thread that finds no span while
 *    it is odd, or finds that it changed, looks again under pool->lock,
 *    which no trim holds then: a trim never makes an allocation fail.  A
 *    trim that a thread waits for gives way after it, so trims run back
 *    to back never keep a waiting thread (or a fork()) out.  The trim
 *    also holds pool->lock (unused otherwise in this mode), which fork()
 *    takes too: a child never sees a trim half done.  A span trimmed is
 *    reset to "never used" (its blocks known zero): the blocks in the
 *    pages kept at its ends are zeroed first.
 *
 * 13. Memory ordering, pair by pair:
 *  - claim (sequentially consistent OR) / drain (acquire exchange): the
 *    blocks a remote free gave back come with whatever it wrote before
 *    (the hooks' fill, under SHIFTPOOL_DEBUG).
 *  - available push (release CAS) / pop (acquire CAS): the acquirer of a
 *    span sees the owner line (lists, bump, out bits, used) its last holder
 *    wrote.  An abandoning owner's store of the mark is a release too
 *    (sequentially consistent), and both the publishing CAS (acquire,
 *    before its push) and the take-over CAS (acquire) read it, so the
 *    chain owner -> publisher -> acquirer, and owner -> taker, are
 *    ordered.
 *  - the mark and the claims (point 5): the owner stores the mark, then
 *    loads the claims; a remote free ORs its claim, then loads the mark;
 *    all four are sequentially consistent, so one of the two loads sees
 *    the other's write.
 *  - trim_seq: the trim's increments are sequentially consistent and its
 *    pops release as well as acquire; a thread that finds the stack empty
 *    reads trim_seq before and after (sequentially consistent), so either
 *    its acquire load of the stack synchronised with a trim's pop (and the
 *    second read sees the trim's increment) or no trim held spans.
 *  - owner is read and written with relaxed atomics: point 10 makes every
 *    read that matters a read of the thread's own write.
 *  - out bits are read by remote frees with relaxed loads: a free happens
 *    after the allocation it frees (the program passed the pointer on,
 *    which synchronises), so the bit it reads is current unless the program
 *    races with itself, and then the claim protocol decides.
 *
 * 14. The thread's stack.  Without it, frees in random order over many
 * live blocks land one here, one there, in spans the thread has moved
 * past, and every allocation after them switches span to find the block a
 * free just gave back: with a pool sized to its live blocks, a switch per
 * allocation.  So a local free goes on a stack of the thread's,
 * whatever span the block is in, and allocation takes it from there
 * first (LIFO: the block is likely still in cache), as a thread cache or
 * a magazine would.  A block of the active span goes there too: the free
 * then never branches on which span the block is in, a branch that frees
 * in random order mispredict half the time (glibc's bench-malloc-thread
 * ran 1.6 times faster at one thread, 1.75 times at two, for 24 more
 * instructions in a pair freed at once).  Unlike those, a block on the
 * stack keeps the span's protocol:
 *  - its out bit is cleared when it goes on the stack and set when it
 *    leaves, by the owner, as for any local free and allocation: a double
 *    free of a stacked block is reported, and a remote free racing with
 *    the owner's free is caught by the claim bits as in point 8 (a head
 *    that a claim holds is refused; the stack then goes back to its spans,
 *    whose pops park it, point 9);
 *  - only spans the cache owns have blocks on its stack, and a span is
 *    given up only when none of its blocks is on it: the sweep of the
 *    full list (point 4) empties the stack first, a span the free leaves
 *    with nothing handed out takes its blocks back (a walk of the stack,
 *    once per span so emptied; none when the stack holds that span's
 *    blocks only and its list is empty, as when a batch of its blocks is
 *    freed together: the stack is then the list; and those at the top of
 *    the stack move as one run), and thread exit
 *    empties it before the spans are given up.  A free onto the bottom
 *    of the stack (its first SHIFTPOOL_STACK_PIN_ blocks) is the
 *    exception: the span it leaves with nothing handed out stays held
 *    until the block leaves the stack, so a thread holds at most that
 *    many such spans, and a pool of spans of a block or two, replaced
 *    one by one, stays on the fast paths;
 *  - the span counts them in used, and a block goes on and off the stack
 *    with no count changed: the out bits tell which blocks are handed
 *    out, so used less the bits set is how many are on the stack
 *    (span_stacked()), and a free that clears the span's last bit leaves
 *    nothing of it handed out.  The span's lists and counters stay exact
 *    (the span invariant of internal.h counts them).  A count of the
 *    stacked blocks, kept in the span by every push and pop, took 6 more
 *    instructions and about a tenth of a pair's time.
 * The stack holds at most pool->stack_limit blocks (about 64 KiB of them,
 * 1,024 at most, and a sixteenth of the pool at most): a full stack gives
 * half back to the spans.  Its blocks are in spans the thread owns, which
 * no other thread allocates from anyway, so the bound is not for the
 * other threads (as POOL_LOCKED's is) but for the walk of a purge: at
 * most stack_limit blocks, for a span that held at most 256.
 * The stack lives in the hint, like the active span, and is written back
 * to the cache when the hint moves to another pool.
 *
 * SPDX-License-Identifier: MIT
 */
#include "span.h"

#include <errno.h>
#include <stdlib.h>

/* ------------------------------------------------------------ helpers */

/* The span's blocks handed out: its out bits set. */
uint32_t span_handed_out(const struct span *span)
{
	uint32_t out = 0;
	for (uint32_t i = 0; i < (span->capacity + 63) / 64; i++)
		out += (uint32_t)__builtin_popcountll(
		    atomic_load_explicit(&span->out[i], memory_order_relaxed));
	return out;
}

/* The span's blocks on its owner's stack: those that used counts beyond
 * the out bits. */
static uint32_t span_stacked(const struct span *span)
{
	return span->used - span_handed_out(span);
}

/* Sets or clears a block's out bit, and counts it in used; the owner's. */
static void span_set_out(struct span *span, uint64_t rel, bool out)
{
	if (out) {
		owned_test_and_set(span->out, rel);
		span->used++;
	} else {
		owned_test_and_clear(span->out, rel);
		span->used--;
	}
}

/* The index in the span of the block at ptr, or a value >= capacity when
 * ptr is no block start of the span (as region_slot()). */
static uint64_t span_rel(const struct pool *pool, const struct span *span,
                         const void *ptr)
{
	return slot_from(span_block(pool, span, 0), pool->block_shift, ptr);
}

/* Point 10 of the design: only the thread handing the span over, or the
 * one that just acquired it, writes owner. */
void span_set_owner(struct span *span, uintptr_t owner)
{
	atomic_store_explicit(&span->owner, owner, memory_order_relaxed);
}

void *thread_pop_opened(struct pool *pool)
{
	struct thread_hint *hint = hint_of(pool);
	char *head = NULL;

	if (hint->pool_id == pool->id && hint->stack.head != NULL) {
		size_t index = region_slot(pool, hint->stack.head);
		if (index < pool->block_count) {
			struct span *span =
			    &pool->spans[index >> pool->span_shift];
			uint64_t rel = index & (((size_t)1 << pool->span_shift) - 1);
			if (!span_out(span, rel) && !span_claimed(span, rel))
				head = hint->stack.head;
		}
	} else if (hint->pool_id == pool->id) {
		struct span *span = hint->span;
		uint64_t rel = hint_rel(pool, span->local);
		if (rel < hint->capacity && !span_out(span, rel) &&
		    !span_claimed(span, rel))
			head = span->local;
	}
	if (head != NULL)
		link_open(head, 0);
	void *block = shiftpool_span_pop_(fast_of(pool), fast_hint_of(pool));
	if (head != NULL && block == NULL)
		link_close(head, 0);
	return block;
}

/* Pushes a block on the span's local list. */
static void span_list_push(struct pool *pool, char **list, char *block)
{
	link_store(pool, block, (uintptr_t)*list, pool->hooks);
	*list = block;
}

static char *span_list_next(struct pool *pool, char *block)
{
	return (char *)(uintptr_t)link_load(pool, block, pool->hooks);
}

/* The parked list's head, kept as rel + 1 (0: empty). */
static char *span_parked(struct pool *pool, struct span *span)
{
	return span->parked ? span_block(pool, span, span->parked - 1) : NULL;
}

static void span_set_parked(struct pool *pool, struct span *span, char *block)
{
	span->parked = block ? (uint32_t)span_rel(pool, span, block) + 1 : 0;
}

/* A list found corrupted is reported, and the pool marked: blocks it
 * loses stay counted in their spans, whose invariants are checked no
 * more. */
static void span_damaged(struct pool *pool, const void *link)
{
	atomic_store_explicit(&pool->spans_damaged, true, memory_order_relaxed);
	report_corrupted(pool, link);
}

/* ------------------------------------------------------------ invariants */

#ifdef SHIFTPOOL_ASSERTIONS
/* Counts a list of the span: the blocks it names, once each, free; or
 * SIZE_MAX for a list that a use after free damaged (reported when met). */
static size_t span_list_length(struct pool *pool, struct span *span,
                               char *block)
{
	size_t n = 0;
	uint64_t rel;
	/* NULL ends the list; span_rel() of NULL is out of range too, but
	 * saying so here lets the analyzers see it. */
	for (; block != NULL &&
	       (rel = span_rel(pool, span, block)) < span->capacity;
	     block = span_list_next(pool, block)) {
		if (n >= span->capacity || span_out(span, rel))
			return SIZE_MAX;
		n++;
	}
	return block == NULL ? n : SIZE_MAX;
}

/* The span invariant of internal.h, for a span the caller holds: every
 * block below bump is handed out, or on the local list, or parked, or on
 * its owner's stack, once; used counts the out bits and the blocks on the
 * stack. */
static void span_check(struct pool *pool, struct span *span)
{
	if (atomic_load_explicit(&pool->spans_damaged, memory_order_relaxed))
		return;
	uint32_t bump = atomic_load_explicit(&span->bump, memory_order_relaxed);
	size_t local = span_list_length(pool, span, span->local);
	size_t parked = span_list_length(pool, span, span_parked(pool, span));
	size_t out = 0;

	assert(bump <= span->capacity);
	for (uint32_t rel = 0; rel < span->capacity; rel++) {
		assert(rel < bump || !span_out(span, rel));
		out += span_out(span, rel);
	}
	assert(out <= span->used);
	if (local != SIZE_MAX && parked != SIZE_MAX)
		assert(local + parked + span->used == bump);
}

/* A span given up has no block on its owner's stack. */
static void span_check_unstacked(struct pool *pool, struct span *span)
{
	assert(
	    span_stacked(span) == 0 ||
	    atomic_load_explicit(&pool->spans_damaged, memory_order_relaxed));
}
#else
#define span_check(pool, span)     ((void)0)
#define span_check_unstacked(pool, span) ((void)0)
#endif

/* ------------------------------------------------------------ spans */

/* Acquire, and release too: a pool_trim()'s pops head the release
 * sequence that an allocating thread's look at the stack reads (point 13
 * of the design). */
struct span *available_pop(struct pool *pool)
{
	uint64_t head =
	    atomic_load_explicit(&pool->available, memory_order_acquire);
	for (;;) {
		uint32_t top = (uint32_t)head;
		if (top == 0)
			return NULL;
		struct span *span = &pool->spans[top - 1];
		uint32_t next = atomic_load_explicit(&span->stack_next,
		                                     memory_order_relaxed);
		uint64_t tag = (head >> 32) + 1;
		if (atomic_compare_exchange_weak_explicit(
		        &pool->available, &head, (tag << 32) | next,
		        memory_order_acq_rel, memory_order_acquire))
			return span;
	}
}

void available_push(struct pool *pool, struct span *span)
{
	uint32_t self = (uint32_t)(span - pool->spans) + 1;
	uint64_t head =
	    atomic_load_explicit(&pool->available, memory_order_relaxed);
	do {
		atomic_store_explicit(&span->stack_next, (uint32_t)head,
		                      memory_order_relaxed);
	} while (!atomic_compare_exchange_weak_explicit(
	    &pool->available, &head, (((head >> 32) + 1) << 32) | self,
	    memory_order_release, memory_order_relaxed));
}

/* A span never handed to any thread yet, or NULL. */
static struct span *fresh_span(struct pool *pool)
{
	size_t n =
	    atomic_load_explicit(&pool->fresh_spans, memory_order_relaxed);
	do {
		if (n >= pool->span_count)
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(
	    &pool->fresh_spans, &n, n + 1, memory_order_relaxed,
	    memory_order_relaxed));
	struct span *span = &pool->spans[n];
	size_t first = n << pool->span_shift;
	size_t left = pool->block_count - first;
	size_t per_span = (size_t)1 << pool->span_shift;
	span->capacity = (uint32_t)(left < per_span ? left : per_span);
	return span;
}

/* Puts back on the local list the parked blocks no claim holds any
 * longer.  The caller owns the span. */
static void span_unpark(struct pool *pool, struct span *span)
{
	char *block = span_parked(pool, span);
	char *parked = NULL;
	while (block != NULL) {
		char *next = span_list_next(pool, block);
		span_list_push(pool,
		               span_claimed(span, span_rel(pool, span, block))
		                   ? &parked
		                   : &span->local,
		               block);
		block = next;
	}
	span_set_parked(pool, span, parked);
}

/* Whether a remote free claimed a block of the span since its last
 * drain.  A hint, unless the caller holds the span and nobody frees
 * into it. */
static bool span_has_claims(struct span *span, memory_order order)
{
	/* The four words (internal.h asserts SPAN_WORDS), written out: the
	 * allocation of a never-used block asks too, and a loop took 25
	 * instructions. */
	return (atomic_load_explicit(&span->claim[0], order) |
	        atomic_load_explicit(&span->claim[1], order) |
	        atomic_load_explicit(&span->claim[2], order) |
	        atomic_load_explicit(&span->claim[3], order)) != 0;
}

/* span_drain() for the pool's hooks: compiled apart for unhooked pools,
 * whose loop then tests no hook. */
POOL_INLINE size_t span_drain_hooked(struct pool *pool, struct span *span,
                                     unsigned hooks)
{
	size_t returned = 0;
	/* The local list is the owner's: its head is kept in a register
	 * while the loop runs, and written back before anything is
	 * reported. */
	char *local = span->local;

	for (unsigned w = 0; w < SPAN_WORDS; w++) {
		if (atomic_load_explicit(&span->claim[w],
		                         memory_order_relaxed) == 0)
			continue;
		/* Every claim of the word at once: the blocks are ours again
		 * (and a later free of one of them is a claim of its own). */
		uint64_t bits = atomic_exchange_explicit(&span->claim[w], 0,
		                                         memory_order_acquire);
		for (; bits != 0; bits &= bits - 1) {
			uint64_t rel =
			    (uint64_t)w * 64 + (uint64_t)__builtin_ctzll(bits);
			/* Only a block of the span is claimed. */
			POOL_ASSERT(rel < span->capacity);
			char *block = span_block(pool, span, rel);
			if (owned_test_and_clear(span->out, rel)) {
				link_store(pool, block, (uintptr_t)local,
				           hooks);
				local = block;
				span->used--;
				returned++;
			} else {
				/* The owner freed this block while another
				 * thread freed it too: the owner's free stands
				 * (the block is on the local list, the stack,
				 * or parked) and the remote one is the
				 * second. */
				span->local = local;
				report_detected(pool, "pool_free", block,
				                POOL_ERROR_DOUBLE_FREE);
				/* The handler may have called the pool. */
				local = span->local;
			}
		}
	}
	span->local = local;
	if (span->parked != 0)
		span_unpark(pool, span);
	return returned;
}

/*
 * Moves the blocks other threads freed into the span onto its local list.
 * The caller owns the span.  Returns how many blocks came back.
 */
size_t span_drain(struct pool *pool, struct span *span)
{
	/* Most drains find nothing: look before paying for an exchange. */
	if (!span_has_claims(span, memory_order_relaxed))
		return 0;
	if (unlikely(pool->hooks))
		return span_drain_hooked(pool, span, pool->hooks);
	return span_drain_hooked(pool, span, 0);
}

static bool span_has_free(const struct span *span)
{
	return span->local != NULL ||
	       atomic_load_explicit(&span->bump, memory_order_relaxed) <
	           span->capacity;
}

/*
 * Gives up ownership of a span.  A span with free blocks goes on the
 * available stack; one with none is abandoned (point 5 of the design),
 * unless remote frees came, in which case it is published after all.
 * Parked blocks count as free: the drain of whoever takes the span next
 * puts them back.
 */
static void span_release(struct pool *pool, struct span *span)
{
	span_check(pool, span);
	span_check_unstacked(pool, span);
	span_set_owner(span, 0);
	if (!span_has_free(span) && span->parked == 0) {
		/* Sequentially consistent, then the claims: either we see a
		 * claim made before the mark, or its remote free's look at
		 * the mark sees it (span_free_remote()).  Release too:
		 * whoever later publishes or takes over the span sees our
		 * writes to its owner line. */
		atomic_store_explicit(&span->abandoned, SPAN_ABANDONED,
		                      memory_order_seq_cst);
		/* A claim came: the span has a free block after all.  Whoever
		 * clears the mark publishes it, we or that remote free. */
		if (span_has_claims(span, memory_order_seq_cst))
			span_publish(pool, span);
		return;
	}
	available_push(pool, span);
}

void span_publish(struct pool *pool, struct span *span)
{
	uint64_t expected = SPAN_ABANDONED;
	/* Acquire: we see the owner line its last owner wrote before it
	 * abandoned the span (a release), and pass it on with the push. */
	if (atomic_compare_exchange_strong_explicit(&span->abandoned, &expected,
	                                            0, memory_order_acquire,
	                                            memory_order_relaxed))
		available_push(pool, span);
}

/*
 * Takes a block from a span the caller owns: the local list first (LIFO,
 * so the block is likely still in cache), then the never-used tail
 * (*fresh).  Returns NULL when the span has neither, or when its list is
 * found corrupted: that is reported, and the list dropped (its blocks are
 * lost, never handed out twice).  A block that a remote free still claims
 * is parked instead, for the drain to put back.
 */
static void *span_pop(struct pool *pool, struct span *span, bool *fresh)
{
	for (;;) {
		char *block = span->local;
		uint64_t rel = span_rel(pool, span, block);
		*fresh = block == NULL;
		if (*fresh) {
			uint32_t bump = atomic_load_explicit(
			    &span->bump, memory_order_relaxed);
			if (bump >= span->capacity)
				return NULL;
			atomic_store_explicit(&span->bump, bump + 1,
			                      memory_order_relaxed);
			rel = bump;
			block = span_block(pool, span, rel);
		} else if (rel >= span->capacity || span_out(span, rel)) {
			break;
		} else {
			span->local = span_list_next(pool, block);
			span->last = block;
			if (span_claimed(span, rel)) {
				char *parked = span_parked(pool, span);
				span_list_push(pool, &parked, block);
				span_set_parked(pool, span, parked);
				continue;
			}
		}
		span_set_out(span, rel, true);
		owned_increment(&span->allocs);
		return block;
	}
	/* The list is corrupted: drop it and say so, naming the block whose
	 * link was refused (a head is only ever refused when a pop decoded
	 * it from last's link). */
	char *bad = span->last != NULL ? span->last : span->local;
	span->local = NULL;
	span_damaged(pool, bad);
	return NULL;
}

/* ------------------------------------------------------------ owned spans */

/* A cache's lists: span number + 1, linked through stack_next and prev. */
static struct span *span_at(struct pool *pool, uint32_t link)
{
	return link ? &pool->spans[link - 1] : NULL;
}

static uint32_t span_next(struct span *span)
{
	return atomic_load_explicit(&span->stack_next, memory_order_relaxed);
}

/* Appends span to the list (a FIFO: the span taken next is the one that
 * had the longest to gather frees). */
void list_add(struct pool *pool, struct span_list *list,
                     struct span *span)
{
	uint32_t self = (uint32_t)(span - pool->spans) + 1;
	atomic_store_explicit(&span->stack_next, 0, memory_order_relaxed);
	span->prev = list->tail;
	if (list->tail)
		atomic_store_explicit(&pool->spans[list->tail - 1].stack_next,
		                      self, memory_order_relaxed);
	else
		list->head = self;
	list->tail = self;
}

static void list_remove(struct pool *pool, struct span_list *list,
                        struct span *span)
{
	uint32_t next = span_next(span);
	if (span->prev)
		atomic_store_explicit(&pool->spans[span->prev - 1].stack_next,
		                      next, memory_order_relaxed);
	else
		list->head = next;
	if (next)
		pool->spans[next - 1].prev = span->prev;
	else
		list->tail = span->prev;
}

/* A span of the partial list with fewer free blocks than 1 / THREAD_THIN
 * of its capacity, or than THREAD_THIN_MIN (but half its capacity at
 * most), is thin: an allocation that would switch to it takes a span from
 * the pool first, when there is one. */
#define THREAD_THIN     16
#define THREAD_THIN_MIN 4

static bool span_is_thin(const struct span *span)
{
	uint32_t least = span->capacity / THREAD_THIN;
	if (least < THREAD_THIN_MIN)
		least = THREAD_THIN_MIN;
	if (least > span->capacity / 2)
		least = span->capacity / 2;
	return span->capacity - span->used < least;
}

/* How many wholly free spans a thread keeps on its partial list. */
#define THREAD_KEEP_EMPTY 1

/* A span of the cache that is not active has free blocks now: onto the
 * partial list, or, wholly free beyond what the thread keeps, back to the
 * pool. */
static void cache_add_partial(struct pool *pool, struct thread_cache *tc,
                              struct span *span)
{
	if (span->used == 0) {
		if (tc->empty >= THREAD_KEEP_EMPTY) {
			span_release(pool, span);
			return;
		}
		tc->empty++;
	}
	span_set_owner(span, (uintptr_t)tc);
	list_add(pool, &tc->partial, span);
}

/* The active span has no free block: onto the full list, still owned (a
 * local free into it moves it back, with no atomic operation). */
static void cache_add_full(struct pool *pool, struct thread_cache *tc,
                           struct span *span)
{
	span_set_owner(span, (uintptr_t)tc | OWNER_FULL);
	list_add(pool, &tc->full, span);
}

/* The span leaves the partial list (to become active or go back). */
static void cache_take_partial(struct pool *pool, struct thread_cache *tc,
                               struct span *span)
{
	list_remove(pool, &tc->partial, span);
	if (span->used == 0)
		tc->empty--;
}

/* Whether the pool has no span to give: none on the available stack, and
 * none never used.  A hint: either may change at once. */
static bool pool_is_dry(struct pool *pool)
{
	return (uint32_t)atomic_load_explicit(&pool->available,
	                                      memory_order_relaxed) == 0 &&
	       atomic_load_explicit(&pool->fresh_spans, memory_order_relaxed) >=
	           pool->span_count;
}

/*
 * The sweep of the full list (point 4 of the design): a span that remote
 * frees gave blocks back goes on the partial list; the others are sealed
 * (abandoned, or published if a remote free just came), so that the next
 * remote free into one of them gives it to the pool, and no sweep sees
 * them again.  But when the pool has no span to give, the thread is about
 * to fall back: sealing would gain nothing, and would make its own frees
 * into those spans take them over one by one (a compare-and-swap each).
 * They stay on the full list, unsealed.
 */
static void cache_sweep_full(struct pool *pool, struct thread_cache *tc)
{
	bool seal = !pool_is_dry(pool);
	uint32_t link = tc->full.head;
	tc->full.head = tc->full.tail = 0;
	while (link) {
		struct span *span = span_at(pool, link);
		link = span_next(span);
		if (span_drain(pool, span) > 0)
			cache_add_partial(pool, tc, span);
		else if (seal)
			span_release(pool, span);
		else
			list_add(pool, &tc->full, span);
	}
}

/* ------------------------------------------------------------ the stack */

/*
 * A free block of a span the cache owns goes back on the span's local
 * list: a block off the thread's stack (its out bit is clear already), or
 * one a slow-path local free just cleared, which the caller has stopped
 * counting in used (so that used less the out bits still counts the
 * stack's blocks exactly, span_stacked(), whatever it does first).  The
 * span leaves the full list, and one that is now wholly free is kept, or
 * given back to the pool (points 3 and 6).  The hint holds the pool.
 */
void span_take_back(struct pool *pool, struct thread_cache *tc,
                    struct span *span, char *block)
{
	span_list_push(pool, &span->local, block);
	if (span == hint_span(hint_of(pool)))
		return;
	if (span_owner(span) & OWNER_FULL) {
		list_remove(pool, &tc->full, span);
		cache_add_partial(pool, tc, span);
	} else if (span->used == 0) {
		list_remove(pool, &tc->partial, span);
		cache_add_partial(pool, tc, span);
	}
}

/* The span of a block of the thread's stack, or NULL when the pointer
 * names no free block of a span the cache owns, as every block of the
 * stack is: a link that a use after free overwrote is never followed. */
static struct span *stack_span_of(struct pool *pool, struct thread_cache *tc,
                                  const char *block)
{
	size_t index = region_slot(pool, block);
	if (index >= pool->block_count)
		return NULL;
	struct span *span = &pool->spans[index >> pool->span_shift];
	uint64_t rel = index & (((size_t)1 << pool->span_shift) - 1);
	if ((span_owner(span) & ~OWNER_FULL) != (uintptr_t)tc ||
	    span_out(span, rel))
		return NULL;
	return span;
}

/*
 * Takes the head off a stack of the cache: the block, with its span in
 * *span_of, or NULL at the stack's end.  A head that names no free block
 * of a span the cache owns (a link that a use after free overwrote) is
 * reported, naming the block whose link gave it, and the rest of the
 * stack is dropped: those blocks are lost, never handed out twice.
 */
static char *stack_take(struct pool *pool, struct thread_cache *tc,
                        struct thread_stack *stack, struct span **span_of,
                        bool report)
{
	char *block = stack->head;
	if (block == NULL)
		return NULL;
	struct span *span = stack_span_of(pool, tc, block);
	if (span == NULL) {
		/* Dropped before the report: the handler may call the pool. */
		char *bad = stack->last != NULL ? stack->last : block;
		stack_clear(stack);
		if (report)
			span_damaged(pool, bad);
		return NULL;
	}
	stack->head = span_list_next(pool, block);
	stack->last = block;
	stack->count--;
	*span_of = span;
	return block;
}

/* Puts n blocks of the thread's stack (all, for UINT32_MAX) back on their
 * spans.  The hint holds the pool. */
void stack_flush(struct pool *pool, struct thread_cache *tc, uint32_t n)
{
	struct thread_stack *stack = &hint_of(pool)->stack;
	struct span *span;
	char *block;
	for (; n > 0 &&
	       (block = stack_take(pool, tc, stack, &span, true)) != NULL;
	     n--) {
		span->used--;
		span_take_back(pool, tc, span, block);
	}
}

/* At thread exit (the hint written back): every block of the cache's
 * stack back on its span, whose lists the cache then gives up whole.  A
 * corrupted link ends the stack unreported here: this runs under
 * caches_lock, which a handler calling back into the library would wait
 * for forever. */
static void stack_flush_retired(struct pool *pool, struct thread_cache *tc)
{
	struct span *span;
	char *block;
	while ((block = stack_take(pool, tc, &tc->stack, &span, false)) !=
	       NULL) {
		span_list_push(pool, &span->local, block);
		span->used--;
	}
}

/*
 * A span other than the active one has no block handed out: its blocks on
 * the thread's stack go back on its local list, so that it can be kept or
 * given back whole (point 6).  A walk of the stack, made once for each
 * span that is emptied so.  It checks each link before it follows it, as
 * the pops do: a link that a use after free overwrote is reported (naming
 * the public call, function), and the whole stack dropped: its blocks
 * are lost, never handed out twice.  When the whole stack is the span's
 * and its list is empty, there is no walk: the stack becomes the list,
 * whose pops check each link as they come to it.  The span's blocks at
 * the top of the stack go onto its list as one run, with one link
 * rewritten (in glibc's bench-malloc-simple, 16 to 64 B blocks, 25 to
 * 1,600 at a time, freed half first-in-first-out and half last-in-first-
 * out: 31% fewer instructions in the purges, 3% fewer in the program).
 * The hint holds the pool.
 */
void stack_purge(struct pool *pool, struct span *span, const char *function)
{
	struct thread_hint *hint = hint_of(pool);
	struct thread_stack *stack = &hint->stack;

	/* The whole stack is the span's, and its local list is empty (a
	 * batch of its blocks freed together): the stack becomes the list,
	 * whose links it already is, with no walk.  The links are checked
	 * as the list's pops take them (a damaged one is reported then). */
	uint32_t stacked = span_stacked(span);
	if (stack->count == stacked && span->local == NULL) {
		span->local = stack->head;
		span->last = NULL;
		span->used = (uint16_t)(span->used - stacked);
		stack_clear(stack);
		return;
	}

	char *first = span_block(pool, span, 0);
	uintptr_t bytes = (uintptr_t)span->capacity << pool->block_shift;
	uintptr_t misaligned = ((uintptr_t)1 << pool->block_shift) - 1;
	char *prev = NULL, *block = stack->head, *damaged = NULL;

	/* The span's blocks at the top of the stack (a batch of them freed
	 * together, above older blocks) go onto its list as they are
	 * linked: the walk only finds where they end, and follows a link
	 * only to a free block of the span.  The link below them, the
	 * stack's new head, is checked as the walk below checks each. */
	char *last = NULL;
	uint32_t run = 0;
	while (run < stacked) {
		uintptr_t offset = (uintptr_t)(block - first);
		if (offset >= bytes || (offset & misaligned) != 0 ||
		    span_out(span, offset >> pool->block_shift))
			break;
		last = block;
		run++;
		block = span_list_next(pool, block);
	}
	if (last != NULL) {
		link_store(pool, last, (uintptr_t)span->local, pool->hooks);
		span->local = stack->head;
		span->used = (uint16_t)(span->used - run);
		stack->count -= run;
		stacked -= run;
		stack->head = block;
		if (block != NULL &&
		    stack_span_of(pool, hint->cache, block) == NULL) {
			damaged = last;
			block = NULL;
		}
	}

	while (block != NULL && stacked > 0) {
		char *next = span_list_next(pool, block);
		if (next != NULL &&
		    stack_span_of(pool, hint->cache, next) == NULL) {
			/* The block's link was overwritten after its free:
			 * never followed; the walk ends here. */
			damaged = block;
			next = NULL;
		}
		if ((uintptr_t)(block - first) < bytes) {
			if (prev != NULL)
				link_store(pool, prev, (uintptr_t)next,
				           pool->hooks);
			else
				stack->head = next;
			span_list_push(pool, &span->local, block);
			span->used--;
			stacked--;
			stack->count--;
		} else {
			prev = block;
		}
		block = next;
	}
	stack->last = NULL;
	if (damaged != NULL) {
		/* As stack_take() does: the stack is dropped (its blocks
		 * lost, never handed out twice) before the report, which
		 * may call the pool. */
		stack_clear(stack);
		atomic_store_explicit(&pool->spans_damaged, true,
		                      memory_order_relaxed);
		report_detected(pool, function, damaged, POOL_ERROR_CORRUPTED);
	}
}

/* ------------------------------------------------------------ caches */

/* Gives up every span of the cache's lists (point 6 of the design). */
static void cache_release_all(struct pool *pool, struct thread_cache *tc)
{
	if (tc->active) {
		span_release(pool, tc->active);
		tc->active = NULL;
	}
	struct span_list *lists[] = {&tc->partial, &tc->full};
	for (unsigned i = 0; i < 2; i++) {
		uint32_t link = lists[i]->head;
		lists[i]->head = lists[i]->tail = 0;
		while (link) {
			struct span *span = span_at(pool, link);
			link = span_next(span);
			span_release(pool, span);
		}
	}
	tc->empty = 0;
}

/* The pool's cache_retire (cache.c), at thread exit: every block of the
 * stack back on its span, then every span given up. */
static void span_cache_retire(struct pool *pool, struct thread_cache *tc)
{
	stack_flush_retired(pool, tc);
	cache_release_all(pool, tc);
}

/* pool_trim()'s first part (point 12): the calling thread gives up what
 * it holds for the pool, as at its exit, and takes spans again at its next
 * allocation.  A thread that stops allocating so lets the other threads
 * use the blocks they free into its spans, which it alone would drain. */
void thread_give_up_own(struct pool *pool)
{
	struct thread_cache *tc = cache_of_thread(pool);
	if (tc == NULL)
		return;
	struct thread_hint *hint = hint_of(pool);
	if (hint->stack.head != NULL)
		stack_flush(pool, tc, UINT32_MAX);
	tc->active = hint_span(hint);
	hint_set_span(pool, NULL);
	cache_release_all(pool, tc);
}

/* ------------------------------------------------------------ slow paths */

/*
 * A span given back (on the available stack), else one never used; NULL
 * when there is neither.  A pool_trim() holds the spans it trims off the
 * stack for a moment: a thread that finds none while one runs, or after
 * one ran, looks again, rather than fail (or fall back) while the pool has
 * blocks (point 12 of the design).
 */
static struct span *available_or_fresh(struct pool *pool)
{
	uint32_t seq =
	    atomic_load_explicit(&pool->trim_seq, memory_order_seq_cst);
	struct span *span = available_pop(pool);
	if (span == NULL)
		span = fresh_span(pool);
	/* Pairs with thread_trim()'s increments: unchanged and even, no trim
	 * held spans while we looked. */
	if (span != NULL ||
	    (atomic_load_explicit(&pool->trim_seq, memory_order_seq_cst) ==
	         seq &&
	     !(seq & 1)))
		return span;
	/* A trim held spans: look again under the trims' lock, where none
	 * holds any.  Waiting for the trim to end and looking without the
	 * lock could lose every time to the next trim. */
	lock_acquire(&pool->lock);
	span = available_pop(pool);
	if (span == NULL)
		span = fresh_span(pool);
	lock_release(&pool->lock);
	return span;
}

/* Makes span, which the cache owns and holds on no list, the active span
 * and takes a block from it; NULL (the span then on the full list) when it
 * has none. */
static void *cache_use(struct pool *pool, struct thread_cache *tc,
                       struct span *span, bool *fresh)
{
	span_set_owner(span, (uintptr_t)tc);
	hint_set_span(pool, span);
	span_drain(pool, span);
	span_check(pool, span);
	void *block = span_pop(pool, span, fresh);
	if (block == NULL) {
		hint_set_span(pool, NULL);
		cache_add_full(pool, tc, span);
	}
	return block;
}

void *thread_pop_fresh(struct pool *pool)
{
	struct thread_hint *hint = hint_of(pool);
	/* A head that thread_pop() refused is the slow path's. */
	if (hint->pool_id != pool->id || hint->stack.head != NULL)
		return NULL;
	struct span *span = hint->span;
	if (span->local != NULL)
		return NULL;
	/* thread_no_span's capacity is 0: a thread without a span stops
	 * here. */
	uint32_t bump = atomic_load_explicit(&span->bump, memory_order_relaxed);
	if (bump >= hint->capacity)
		return NULL;
	/* Blocks other threads gave back come before never-used ones: the
	 * slow path drains them (point 4 of the design). */
	if (span_has_claims(span, memory_order_relaxed))
		return NULL;
	atomic_store_explicit(&span->bump, bump + 1, memory_order_relaxed);
	span_set_out(span, bump, true);
	owned_increment(&span->allocs);
	return (char *)hint->first + ((size_t)bump << pool->block_shift);
}

void *thread_alloc_slow(struct pool *pool, bool *fresh, unsigned hooks)
{
	struct thread_cache *tc = cache_get(pool);
	if (tc == NULL)
		return NULL;
	/* The fast path may have missed only the hint. */
	void *block = thread_pop(pool, hooks);
	*fresh = false;
	if (block != NULL)
		return block;
	/* The stack's head was refused: claimed by a remote free that races
	 * with a double free (span_pop() parks it), or a corrupted link
	 * (stack_take() reports it).  The stack goes back to its spans, and
	 * must be empty before the sweep below gives any span up. */
	if (hint_of(pool)->stack.head != NULL)
		stack_flush(pool, tc, UINT32_MAX);
	struct span *span = hint_span(hint_of(pool));
	if (span != NULL) {
		/* The span's list, then what other threads gave back, then
		 * its never-used blocks; then what came back meanwhile. */
		if (span->local == NULL)
			span_drain(pool, span);
		block = span_pop(pool, span, fresh);
		if (block == NULL && span_drain(pool, span) > 0)
			block = span_pop(pool, span, fresh);
		if (block != NULL)
			return block;
		hint_set_span(pool, NULL);
		cache_add_full(pool, tc, span);
	}
	/* Then the thread's other spans: those with free blocks, then the
	 * full ones that remote frees gave blocks back to (once: the sweep
	 * seals the others). */
	bool swept = false, thin = false;
	for (;;) {
		span = span_at(pool, tc->partial.head);
		if (span != NULL && !thin && span_is_thin(span)) {
			/* Few free blocks: the span would serve few allocations
			 * before the next switch.  A span the pool can spare
			 * comes first, and the partial ones gather frees
			 * meanwhile (point 4 of the design). */
			thin = true;
			struct span *more = available_pop(pool);
			if (more != NULL) {
				block = cache_use(pool, tc, more, fresh);
				if (block != NULL)
					return block;
				continue;
			}
		}
		if (span != NULL) {
			cache_take_partial(pool, tc, span);
			block = cache_use(pool, tc, span, fresh);
			if (block != NULL)
				return block;
			continue;
		}
		if (swept || tc->full.head == 0)
			break;
		cache_sweep_full(pool, tc);
		swept = true;
	}
	/* Then another span: one given back (it has free blocks), or one
	 * never used.  Each try adopts a span that had a free block when it
	 * was published, so this loop ends within span_count tries. */
	for (size_t tries = 0; tries <= pool->span_count; tries++) {
		span = available_or_fresh(pool);
		if (span == NULL)
			break;
		block = cache_use(pool, tc, span, fresh);
		if (block != NULL)
			return block;
	}
	return NULL;
}

/* ------------------------------------------------------------ internal API */

/* The most blocks a thread's stack holds (point 14), more than
 * POOL_LOCKED's: a stacked block stays in a span the thread owns, which no
 * other thread allocates from anyway, so what bounds the stack is the walk
 * of a purge. */
#define THREAD_STACK_MOST 1024

int thread_pool_init(struct pool *pool)
{
	int error = cache_pool_init(pool, span_cache_retire);
	if (error == 0)
		pool->stack_limit = stack_limit_of(
		    pool->block_shift, pool->block_count, THREAD_STACK_MOST);
	return error;
}
