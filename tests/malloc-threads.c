/*
 * Threads and fork under libshiftpool-malloc.so (tests/malloc-threads.sh
 * runs it on the C library's allocator and preloaded): generations of
 * threads allocate blocks of many sizes, fill them with a pattern of their
 * own, and swap them through a shared table, so that most blocks are freed
 * by another thread than the one that got them, often after that thread
 * has exited.  A thread-specific destructor allocates and frees while its
 * thread exits.  Meanwhile the main thread forks: each child allocates,
 * frees, checks, and exits through exit() (destructors and all) or
 * _exit().  Every block's pattern is checked before it is freed, so a
 * block handed to two owners, or one too small, shows.
 *
 * Prints a summary whose numbers do not depend on the interleaving.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THREADS     4
#define GENERATIONS 25
#define OPS         4000
#define SLOTS       1024
#define FORKS       12

/* A block: its size and pattern byte at the start, the pattern after. */
struct header {
	size_t size;
	unsigned char byte;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *table[SLOTS];
static pthread_key_t exit_key;
static int failed;
static pthread_mutex_t failed_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what)
{
	pthread_mutex_lock(&failed_lock);
	failed++;
	fprintf(stderr, "malloc-threads: %s\n", what);
	pthread_mutex_unlock(&failed_lock);
}

static uint64_t next(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

/* Sizes mostly small, some up to 64 KiB (beyond the default classes). */
static size_t pick_size(uint64_t *rng)
{
	uint64_t r = next(rng);
	switch (r % 8) {
	case 0:
		return sizeof(struct header) + r % 4096;
	case 1:
		return sizeof(struct header) + r % 65536;
	default:
		return sizeof(struct header) + r % 256;
	}
}

static unsigned char *make(uint64_t *rng)
{
	size_t size = pick_size(rng);
	unsigned char byte = (unsigned char)(next(rng) | 1);
	unsigned char *p;
	switch (next(rng) % 4) {
	case 0:
		p = calloc(1, size);
		break;
	case 1:
		if (posix_memalign((void **)&p, 64, size) != 0)
			p = NULL;
		break;
	default:
		p = malloc(size);
	}
	if (p == NULL) {
		fail("allocation failed");
		return NULL;
	}
	struct header h = {size, byte};
	memcpy(p, &h, sizeof h);
	memset(p + sizeof h, byte, size - sizeof h);
	return p;
}

static void check_and_free(unsigned char *p)
{
	if (p == NULL)
		return;
	struct header h;
	memcpy(&h, p, sizeof h);
	if (malloc_usable_size(p) < h.size)
		fail("usable size below the request");
	for (size_t i = sizeof h; i < h.size; i++)
		if (p[i] != h.byte) {
			fail("a block's contents changed");
			break;
		}
	free(p);
}

/* Runs while the thread exits, after its last own call. */
static void on_exit_key(void *value)
{
	check_and_free(value);
	uint64_t rng = 99;
	check_and_free(make(&rng));
}

static void *worker(void *arg)
{
	uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15u + 1;
	unsigned char *own[64] = {0};
	for (int op = 0; op < OPS; op++) {
		uint64_t r = next(&rng);
		unsigned char **mine = &own[r % 64];
		if (r % 3 == 0) {
			/* Swap with the table: the block taken out was made
			 * by some thread, maybe one that has exited. */
			unsigned char *p = make(&rng);
			pthread_mutex_lock(&table_lock);
			unsigned char *old = table[(r >> 8) % SLOTS];
			table[(r >> 8) % SLOTS] = p;
			pthread_mutex_unlock(&table_lock);
			check_and_free(old);
		} else if (r % 3 == 1) {
			check_and_free(*mine);
			*mine = make(&rng);
		} else if (*mine != NULL) {
			/* Grow or shrink one of its own, contents kept. */
			struct header h;
			memcpy(&h, *mine, sizeof h);
			size_t size = pick_size(&rng);
			unsigned char *q = realloc(*mine, size);
			if (q == NULL) {
				fail("realloc failed");
				continue;
			}
			size_t kept = h.size < size ? h.size : size;
			for (size_t i = sizeof h; i < kept; i++)
				if (q[i] != h.byte) {
					fail("realloc lost contents");
					break;
				}
			h.size = size;
			memcpy(q, &h, sizeof h);
			memset(q + sizeof h, h.byte, size - sizeof h);
			*mine = q;
		}
	}
	/* Half of its own blocks are left in the table for the threads of
	 * the next generation; the rest freed here. */
	for (int i = 0; i < 64; i++) {
		if (i % 2 == 0) {
			check_and_free(own[i]);
			continue;
		}
		pthread_mutex_lock(&table_lock);
		unsigned char *old = table[(i * 131 + (uintptr_t)arg) % SLOTS];
		table[(i * 131 + (uintptr_t)arg) % SLOTS] = own[i];
		pthread_mutex_unlock(&table_lock);
		check_and_free(old);
	}
	uint64_t key_rng = rng;
	pthread_setspecific(exit_key, make(&key_rng));
	return NULL;
}

/* A child of a fork made while the workers run: the allocator must work
 * in it (no lock left held by a thread that does not exist there). */
static void child(int n)
{
	uint64_t rng = 7 + (uint64_t)n;
	unsigned char *keep[200];
	for (int i = 0; i < 200; i++)
		keep[i] = make(&rng);
	for (int i = 0; i < 200; i++)
		check_and_free(keep[i]);
	/* The table's blocks are the child's copy: freeing some is fine. */
	for (int i = 0; i < SLOTS; i += 7)
		if (pthread_mutex_trylock(&table_lock) == 0) {
			check_and_free(table[i]);
			table[i] = NULL;
			pthread_mutex_unlock(&table_lock);
		}
	if (failed)
		_exit(1);
	if (n % 2)
		_exit(0);
	exit(0);
}

/* Waits for a child, at most five minutes: a bound far above any normal
 * run (a child takes milliseconds) that only turns a child hung on a lock
 * into a failure.  false then, the child killed. */
static bool wait_bounded(pid_t pid, int *status)
{
	struct timespec nap = {0, 1000 * 1000};
	for (long waited_ms = 0; waited_ms < 300 * 1000; waited_ms++) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return true;
		if (w < 0 && errno != EINTR)
			return false;
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return false;
}

int main(void)
{
	if (pthread_key_create(&exit_key, on_exit_key) != 0)
		return 99;
	int forks = 0;
	for (int g = 0; g < GENERATIONS; g++) {
		pthread_t t[THREADS];
		for (uintptr_t i = 0; i < THREADS; i++)
			if (pthread_create(&t[i], NULL, worker,
			                   (void *)(g * THREADS + i + 1)) !=
			    0) {
				fail("pthread_create failed");
				return 99;
			}
		if (g % 2 == 0 && forks < FORKS) {
			pid_t pid = fork();
			if (pid == 0)
				child(forks);
			int status;
			if (pid < 0 || !wait_bounded(pid, &status) ||
			    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
				fail("a forked child failed");
			forks++;
		}
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
	}
	for (int i = 0; i < SLOTS; i++)
		check_and_free(table[i]);
	printf("malloc-threads: %d generations of %d threads, %d forks, %s\n",
	       GENERATIONS, THREADS, forks, failed ? "FAILED" : "ok");
	return failed ? 1 : 0;
}
