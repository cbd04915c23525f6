/*
 * SHIFTPOOL_TRACE=FILE makes the library append one record per call to
 * FILE.  The format is defined in trace-format.h; this file writes it.
 *
 * Each record is written whole, and only once, in every process that
 * shares the file (a forked child inherits it):
 *  - A record is formatted whole, then copied into one buffer under a
 *    lock.  The buffer only ever holds whole records, and it is written
 *    with write(2) on a descriptor opened with O_APPEND, so the writes of
 *    the parent and of the child interleave record by record, never
 *    inside a record.
 *  - The lock is held across fork(), so no child inherits it taken.  The
 *    child empties its copy of the buffer: those records are the
 *    parent's, and the parent writes them.
 *
 * The variable is read with secure_getenv(), so a set-user-ID or
 * set-group-ID program never traces, and an unprivileged caller cannot
 * make such a program create or append to a file that the caller could
 * not write itself.
 *
 * The variable is read, and the file opened, only once: when the first
 * pool or pool set of the process is created.  When the file cannot be
 * opened, the process is not traced, and this happens silently, as for
 * any other value of the variable: the library writes to stderr only to
 * report misuse.  A FIFO that no process has open for reading is such a
 * file.  It is opened without blocking, so pool_init() goes on without a
 * trace at once, instead of waiting for a reader that may never come.
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ data */

#define TRACE_BUFFER_SIZE (1 << 16)
#define TRACE_RECORD_MAX  512

/* The trace file, opened when the first pool or set is created (see
 * trace_open()) and kept open until exit.  Everything here is guarded by
 * trace_lock. */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static int trace_fd = -1;
static bool trace_tried;
static char trace_buffer[TRACE_BUFFER_SIZE];
static size_t trace_used;

/* The last seq= number handed out (see trace-format.h).  Relaxed atomic
 * operations are enough.  When two numbers are taken in an order that one
 * thread, or a synchronisation between threads (the free list handing a
 * block on, say), imposes, they come out in that order, since all the
 * changes of one atomic object happen in a single order that respects
 * it. */
static _Atomic uint64_t trace_seq_last;
/* The seq= number of the fork under way, taken in the parent before the
 * fork.  The child's fork record carries it, so that the record falls
 * between the parent's records from before the fork and those from after
 * it.  Guarded by trace_lock. */
static uint64_t trace_fork_seq;

/* The process and thread IDs, asked of the kernel once, and asked again
 * in a forked child. */
static _Atomic pid_t trace_pid;
static __thread pid_t trace_tid;

/* ------------------------------------------------------------ helpers */

/* Writes out the buffer.  The caller holds the lock.  When a write fails,
 * the buffered records are lost, and the program goes on with those
 * records missing from the trace. */
static void flush_locked(void)
{
	size_t done = 0;
	while (done < trace_used) {
		ssize_t n =
		    write(trace_fd, trace_buffer + done, trace_used - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	trace_used = 0;
}

static void flush_at_exit(void)
{
	trace_flush();
}

static pid_t thread_id(void)
{
	if (trace_tid == 0)
		trace_tid = gettid();
	return trace_tid;
}

/* Opens the trace file named by path for appending, and returns its
 * descriptor, or -1 when it cannot be opened.  O_NONBLOCK makes the open
 * of a FIFO without a reader fail with ENXIO instead of blocking.  The flag
 * is cleared again at once, so that writes block as they always did: a
 * reader that falls behind slows the program down, but loses no record. */
static int open_trace(const char *path)
{
	int fd = open(
	    path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0)
		return -1;
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Appends one whole record to the buffer, after writing the buffer out
 * when the record does not fit.  The caller holds the lock. */
static void append_locked(const char *record, size_t len)
{
	if (trace_used + len > sizeof trace_buffer)
		flush_locked();
	memcpy(trace_buffer + trace_used, record, len);
	trace_used += len;
}

/* ------------------------------------------------------------ internal API */

bool trace_open(void)
{
	pthread_mutex_lock(&trace_lock);
	if (!trace_tried) {
		trace_tried = true;
		const char *path = secure_getenv("SHIFTPOOL_TRACE");
		if (path != NULL && *path != '\0')
			trace_fd = open_trace(path);
		if (trace_fd >= 0) {
			atomic_store(&trace_pid, getpid());
			append_locked(TRACE_VERSION_LINE "\n",
			              sizeof TRACE_VERSION_LINE);
			atexit(flush_at_exit);
		}
	}
	bool on = trace_fd >= 0;
	pthread_mutex_unlock(&trace_lock);
	return on;
}

uint64_t trace_seq(void)
{
	return atomic_fetch_add_explicit(&trace_seq_last, 1,
	                                 memory_order_relaxed) +
	       1;
}

static void trace_vrecord(uint64_t id, uint64_t seq, enum trace_op op,
                          const char *format, va_list args)
{
	char record[TRACE_RECORD_MAX];
	int saved = errno;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	int n = snprintf(
	    record, sizeof record,
	    "%s t=%" PRIu64 " pid=%ld thread=%ld pool=%" PRIu64 " seq=%" PRIu64,
	    trace_op_name(op),
	    (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
	    (long)atomic_load(&trace_pid), (long)thread_id(), id, seq);
	if (n > 0 && (size_t)n + 1 < sizeof record && *format != '\0') {
		record[n++] = ' ';
		int rest = vsnprintf(record + n, sizeof record - (size_t)n,
		                     format, args);
		/* When the rest is empty, the space added before it is
		 * taken back, so that the record does not end in a space. */
		n += rest > 0 ? rest : -1;
	}
	if (n > 0) {
		/* A record that did not fit in TRACE_RECORD_MAX bytes is cut
		 * short, but stays one line. */
		size_t len = (size_t)n < sizeof record - 1 ? (size_t)n
		                                           : sizeof record - 2;
		record[len++] = '\n';
		pthread_mutex_lock(&trace_lock);
		if (trace_fd >= 0)
			append_locked(record, len);
		pthread_mutex_unlock(&trace_lock);
	}
	errno = saved;
}

void trace_record(const struct pool *pool, enum trace_op op, const char *format,
                  ...)
{
	va_list args;
	va_start(args, format);
	trace_vrecord(pool != NULL ? pool->id : 0, trace_seq(), op, format,
	              args);
	va_end(args);
}

void trace_record_seq(const struct pool *pool, uint64_t seq, enum trace_op op,
                      const char *format, ...)
{
	va_list args;
	va_start(args, format);
	trace_vrecord(pool->id, seq, op, format, args);
	va_end(args);
}

void trace_record_id(uint64_t id, enum trace_op op, const char *format, ...)
{
	va_list args;
	va_start(args, format);
	trace_vrecord(id, trace_seq(), op, format, args);
	va_end(args);
}

/* Writes a record with the given seq= number, for the pool or set
 * numbered id. */
static void trace_record_id_seq(uint64_t id, uint64_t seq, enum trace_op op,
                                const char *format, ...)
{
	va_list args;
	va_start(args, format);
	trace_vrecord(id, seq, op, format, args);
	va_end(args);
}

void trace_flush(void)
{
	int saved = errno;
	pthread_mutex_lock(&trace_lock);
	if (trace_fd >= 0)
		flush_locked();
	pthread_mutex_unlock(&trace_lock);
	errno = saved;
}

/* The records buffered so far are written out before the fork, so that
 * they come before any of the child's records in the file.  The lock
 * stays held across the fork. */
void trace_fork_prepare(void)
{
	pthread_mutex_lock(&trace_lock);
	if (trace_fd >= 0) {
		int saved = errno;
		flush_locked();
		errno = saved;
		trace_fork_seq = trace_seq();
	}
}

void trace_fork_parent(void)
{
	pthread_mutex_unlock(&trace_lock);
}

void trace_fork_child(void)
{
	pid_t parent = atomic_load(&trace_pid);
	uint64_t seq = trace_fork_seq;

	/* The buffered records are the parent's, and the parent writes
	 * them. */
	trace_used = 0;
	trace_tid = 0;
	atomic_store(&trace_pid, getpid());
	bool on = trace_fd >= 0;
	pthread_mutex_unlock(&trace_lock);
	if (on)
		trace_record_id_seq(0, seq, TRACE_OP_FORK, "parent=%ld",
		                    (long)parent);
}
