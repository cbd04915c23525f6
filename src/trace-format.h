/*
 * The trace format: what libshiftpool writes to the file named by
 * SHIFTPOOL_TRACE, and what shiftpool-analyze reads.  Both include this
 * header, and nothing else defines the vocabulary, so the two cannot
 * drift apart.
 *
 * A trace is text, with one record per line, appended by every process
 * that has the variable set; a child forked by a traced process writes to
 * the same file.  Each line is written whole, and only once (see
 * trace.c).
 *
 *   # shiftpool trace v3                        (the version line)
 *   OP key=value key=value ...                  (a record)
 *
 * Every record starts with these keys, in this order:
 *
 *   t=NS        CLOCK_MONOTONIC time of the record, in nanoseconds
 *   pid=N       the process that wrote it
 *   thread=N    the thread (gettid())
 *   pool=N      the pool or set, numbered from 1 in each process
 *   seq=N       the record's place among the process's records (below)
 *
 * and then the keys of its operation:
 *
 *   init        block_size= block_count= flags=0xF [set=N]
 *               (a pool; set= names the set whose class it is)
 *   set_init    min_block= max_block= bytes_per_class= flags=0xF
 *               (a pool set, whose classes follow as init records)
 *   destroy
 *   malloc      size= ptr= src=      calloc  size= ptr= src=
 *   strdup      size= ptr= src=
 *   realloc     old= size= ptr= src=
 *   free        ptr= src=
 *   malloc_bulk size= n= ptr= src=   one record per object handed out,
 *                                    where n is the length of the batch;
 *                                    a batch that failed is one record,
 *                                    with ptr=0x0 src=none
 *   free_bulk   n= ptr= src=         one record per pointer of the batch
 *   trim        bytes=               a pool_trim() call, and the bytes it
 *                                    gave back
 *   report      error= function= ptr=
 *               misuse that the library found outside the call that made
 *               it: a double free seen when a racing remote free is
 *               drained, a corrupted free list, or a write after free
 *   fork        parent=N             the first record of a forked child,
 *                                    whose pools start as copies of the
 *                                    parent's at this point
 *
 * The classes of a set are pools that write their own records.  Each
 * class's init record names its set (set=), so a reader files the class's
 * records under the set.  A record may carry class=N, the block size of
 * the class that served it (0 for the fallback).  The library writes no
 * class= today, and a reader finds the class from the size instead.
 *
 * src= says what the library decided, so that a reader never has to
 * guess.  For an allocation it says who served it: pool, fallback, or
 * none when the allocation failed.  For a free (and for the old pointer of
 * a realloc that refused it), it says pool, fallback, none (for NULL), or
 * the misuse that was reported: invalid, double or wrong_pool.  Pointers
 * are written in hexadecimal with a 0x prefix, and NULL as ptr=0x0.
 *
 * Records are written after their call, by each thread on its own, so the
 * order of the lines is not the order of the calls: a block freed by one
 * thread and handed out again to another may have its allocation written
 * before its free.  seq= gives the order back.  It is a number taken from
 * one counter of the process.  A free (and a realloc that gives back its
 * old pointer) takes its number before the memory goes back to the pool or
 * to malloc; an allocation takes its number after it has its memory; other
 * records take theirs when they are written.  So the records of one block,
 * in seq order, are in the order of its calls.  A forked child's counter
 * goes on from its parent's at the fork, and the child's fork record
 * carries the seq= number that the parent took for the fork: the parent's
 * records below that number came before the fork, and those above it
 * after.  Otherwise the numbers of different processes cannot be
 * compared.
 *
 * Version 1 traces (no t=, pid= or class=) and version 2 traces (no seq=)
 * stay readable: the keys that are missing are taken as unknown, and
 * records without seq= are taken in the order of their lines.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_TRACE_FORMAT_H
#define SHIFTPOOL_TRACE_FORMAT_H

#define TRACE_VERSION 3
#define TRACE_VERSION_LINE "# shiftpool trace v3"
/* Every version line starts with this prefix, followed by a number. */
#define TRACE_VERSION_PREFIX "# shiftpool trace v"

/* The operations, in the order of enum trace_op. */
#define TRACE_OPS(X)                                                           \
	X(INIT, "init")                                                        \
	X(SET_INIT, "set_init")                                                \
	X(DESTROY, "destroy")                                                  \
	X(MALLOC, "malloc")                                                    \
	X(CALLOC, "calloc")                                                    \
	X(REALLOC, "realloc")                                                  \
	X(STRDUP, "strdup")                                                    \
	X(FREE, "free")                                                        \
	X(MALLOC_BULK, "malloc_bulk")                                          \
	X(FREE_BULK, "free_bulk")                                              \
	X(TRIM, "trim")                                                        \
	X(REPORT, "report")                                                    \
	X(FORK, "fork")

enum trace_op {
#define TRACE_OP_ENUM(name, text) TRACE_OP_##name,
	TRACE_OPS(TRACE_OP_ENUM)
#undef TRACE_OP_ENUM
	    TRACE_OP_COUNT
};

/* The values of src=, in the order of enum trace_src. */
#define TRACE_SRCS(X)                                                          \
	X(NONE, "none")                                                        \
	X(POOL, "pool")                                                        \
	X(FALLBACK, "fallback")                                                \
	X(INVALID, "invalid")                                                  \
	X(DOUBLE, "double")                                                    \
	X(WRONG_POOL, "wrong_pool")

enum trace_src {
#define TRACE_SRC_ENUM(name, text) TRACE_SRC_##name,
	TRACE_SRCS(TRACE_SRC_ENUM)
#undef TRACE_SRC_ENUM
	    TRACE_SRC_COUNT
};

/* The values of a report record's error=, by enum pool_error code. */
#define TRACE_ERRORS(X)                                                        \
	X(1, "invalid")                                                        \
	X(2, "double")                                                         \
	X(3, "corrupted")                                                      \
	X(4, "write_after_free")                                               \
	X(5, "wrong_pool")

/* The keys, in the order of enum trace_key. */
#define TRACE_KEYS(X)                                                          \
	X(T, "t")                                                              \
	X(PID, "pid")                                                          \
	X(THREAD, "thread")                                                    \
	X(POOL, "pool")                                                        \
	X(CLASS, "class")                                                      \
	X(SET, "set")                                                          \
	X(SIZE, "size")                                                        \
	X(N, "n")                                                              \
	X(OLD, "old")                                                          \
	X(PTR, "ptr")                                                          \
	X(SRC, "src")                                                          \
	X(BLOCK_SIZE, "block_size")                                            \
	X(BLOCK_COUNT, "block_count")                                          \
	X(FLAGS, "flags")                                                      \
	X(MIN_BLOCK, "min_block")                                              \
	X(MAX_BLOCK, "max_block")                                              \
	X(BYTES_PER_CLASS, "bytes_per_class")                                  \
	X(BYTES, "bytes")                                                      \
	X(ERROR, "error")                                                      \
	X(FUNCTION, "function")                                                \
	X(PARENT, "parent")                                                    \
	X(SEQ, "seq")

enum trace_key {
#define TRACE_KEY_ENUM(name, text) TRACE_KEY_##name,
	TRACE_KEYS(TRACE_KEY_ENUM)
#undef TRACE_KEY_ENUM
	    TRACE_KEY_COUNT
};

/* These return the text of an operation, of an outcome (src=), of a key
 * or of an error, or NULL for an unknown one. */
#define TRACE_NAME(name, text) text,
static inline const char *trace_op_name(unsigned op)
{
	static const char *const names[] = {TRACE_OPS(TRACE_NAME)};
	return op < sizeof names / sizeof names[0] ? names[op] : 0;
}

static inline const char *trace_src_name(unsigned src)
{
	static const char *const names[] = {TRACE_SRCS(TRACE_NAME)};
	return src < sizeof names / sizeof names[0] ? names[src] : 0;
}

static inline const char *trace_key_name(unsigned key)
{
	static const char *const names[] = {TRACE_KEYS(TRACE_NAME)};
	return key < sizeof names / sizeof names[0] ? names[key] : 0;
}
#undef TRACE_NAME

static inline const char *trace_error_name(int error)
{
	switch (error) {
#define TRACE_ERROR_CASE(code, text)                                           \
	case code:                                                             \
		return text;
		TRACE_ERRORS(TRACE_ERROR_CASE)
#undef TRACE_ERROR_CASE
	}
	return 0;
}

#endif /* SHIFTPOOL_TRACE_FORMAT_H */
