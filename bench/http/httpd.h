/*
 * bench/httpd's threads and what they share: the server, its worker
 * threads (httpd-conn.c: connections, requests and responses) and its
 * writer thread (httpd-writer.c: sending responses and handing their
 * connections back).  httpd.c sets them up and runs them; the top of
 * httpd.c describes the design.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_HTTPD_H
#define BENCH_HTTPD_H

#include "httpd-alloc.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ limits */

/* A request head must fit one request buffer, else 431.  4 KiB is one
 * block of the default pool. */
#define REQUEST_BUFFER_SIZE 4096
#define MAX_THREADS         64
#define EVENTS_PER_WAIT     64
/* Accepts per wake-up, so that a flood of connections cannot starve the
 * connections a worker already has. */
#define ACCEPTS_PER_EVENT 32
/* The epoll timeout while something waits on the clock. */
#define TICK_MS 100
/* A closing connection is drained for at most this long and this much, so
 * that its unread bytes do not turn the close into a reset that could
 * destroy the error response before the client reads it. */
#define LINGER_NS    ((uint64_t)2000000000)
#define LINGER_BYTES ((size_t)1 << 20)
/* After accept() runs out of descriptors, the pause before trying again. */
#define ACCEPT_PAUSE_NS ((uint64_t)100000000)

#define DEFAULT_THREADS         2
#define DEFAULT_POOL_BLOCK_SIZE 4096
#define DEFAULT_POOL_BLOCKS     4096
/* pool-set: its classes, each --pool-block-size x --pool-blocks bytes of
 * address space (touched as used); larger responses go to malloc. */
#define SET_MIN_BLOCK 16
#define SET_MAX_BLOCK ((size_t)64 << 10)

/* ------------------------------------------------------------ types */

struct options {
	enum allocator allocator;
	int port; /* 0: any free port */
	int threads;
	size_t pool_block_size;
	size_t pool_blocks;
};

/*
 * One response, allocated whole by a worker and freed by the writer (or,
 * in pool-single, by the worker after the writer returns it).
 * Invariant: sent <= length; while the writer holds it, it is on the
 * writer's queue or (registered with the writer's epoll) on its pending
 * list, never both.
 */
struct response {
	struct response *next;
	struct response *prev;
	struct conn *conn;
	size_t length; /* bytes of data[] to send: head and body */
	size_t sent;
	bool registered; /* in the writer's epoll set, waiting for EPOLLOUT */
	char data[];
};

enum conn_state {
	CONN_READING,  /* the worker reads and parses */
	CONN_WRITING,  /* a response is with the writer: the worker keeps off
	                  the socket until the writer hands it back */
	CONN_LINGERING /* answered and shut for writing: draining, then close */
};

/*
 * A connection, owned by the worker that accepted it.  Invariants: buffer
 * is NULL or REQUEST_BUFFER_SIZE bytes holding length unparsed bytes; in
 * CONN_WRITING exactly one response of this connection is with the writer,
 * and only the writer touches fd, write_failed, returned and done_next,
 * which it hands over under the owner's done_lock.
 */
struct conn {
	struct worker *owner;
	struct conn *prev; /* the owner's list of connections */
	struct conn *next;
	struct conn *done_next;    /* the owner's list of written responses */
	struct response *returned; /* pool-single: for the owner to free */
	bool write_failed;         /* the writer could not send it all */
	char *buffer;
	size_t length;
	int fd;
	enum conn_state state;
	bool close_after; /* close once the response in flight is written */
	bool peer_closed; /* the client will send no more */
	uint64_t linger_deadline;
	size_t linger_drained;
};

/* One worker thread.  Aligned so that two workers' counters never share a
 * cache line. */
struct worker {
	_Alignas(64) struct server *server;
	pthread_t thread;
	int epoll_fd;
	int wake_fd; /* the writer and the main thread knock here */
	struct heap heap;
	struct conn *conns;
	size_t conn_count;
	size_t lingering;
	bool stopping;
	bool listening;
	uint64_t listen_resume; /* when accept() may be tried again, or 0 */
	pthread_mutex_t done_lock;
	struct conn *done; /* written responses, pushed by the writer */
	uint64_t connections;
	uint64_t requests;
	uint64_t error_responses;
};

/* The writer thread.  Invariant: pending holds exactly the responses
 * registered with epoll_fd. */
struct writer {
	_Alignas(64) struct server *server;
	pthread_t thread;
	int epoll_fd;
	int wake_fd;
	struct heap heap;
	pthread_mutex_t queue_lock;
	struct response *queue_head; /* submitted, not looked at yet */
	struct response *queue_tail;
	struct response *pending; /* partly sent, waiting for EPOLLOUT */
	uint64_t written;
	uint64_t abandoned;
};

struct server {
	struct options options;
	int listen_fd;
	/* Set by the main thread on a signal; read by every thread at its
	 * next wake-up, which the main thread forces through wake_fd. */
	atomic_bool stopping;
	/* Set once every worker has exited: the writer may exit too. */
	atomic_bool writer_exit;
	/* A thread hit an error it cannot recover from; the exit status
	 * says so. */
	atomic_bool failed;
	bool writer_frees; /* false in pool-single, see the top */
	bool writer_started;
	/* Addresses that tag the non-connection descriptors in the epoll
	 * sets: neither is ever a connection's or a response's. */
	char listen_tag;
	char wake_tag;
#if defined(HTTPD_PEER_DEFAULT)
	pool_t *pools[MAX_THREADS];
	int pool_count;
	pool_set_t *set; /* pool-set */
#endif
	struct writer writer;
	struct worker workers[MAX_THREADS];
};

/* Addresses that tag the non-connection descriptors in epoll sets. */

/* ------------------------------------------------------------ helpers */

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Reports an unrecoverable error of a thread and asks the main thread to
 * shut down: the signal is blocked everywhere but in its sigwait(). */
static inline void thread_fail(struct server *server, const char *what)
{
	/* The first failure says why; what follows is its echo. */
	if (atomic_exchange(&server->failed, true))
		return;
	fprintf(stderr, "httpd: %s: %s\n", what, strerror(errno));
	kill(getpid(), SIGTERM);
}

static inline void wake(int fd)
{
	uint64_t one = 1;
	/* EAGAIN means the counter is already non-zero: awake anyway. */
	while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR)
		continue;
}

static inline void drain_wake(int fd)
{
	uint64_t count;
	while (read(fd, &count, sizeof(count)) < 0 && errno == EINTR)
		continue;
}

/* ------------------------------------------------------------ threads */

/* httpd-writer.c: queues a response for the writer to send. */
void writer_submit(struct writer *writer, struct response *response);
/* httpd-writer.c: the writer thread, arg being its struct writer. */
void *writer_main(void *arg);
/* httpd-conn.c: a worker thread, arg being its struct worker. */
void *worker_main(void *arg);

#endif /* BENCH_HTTPD_H */
