/*
 * In an AddressSanitizer build the pool poisons free blocks and unpoisons a
 * block handed out exactly to the requested size.  This test proves ASan
 * then stops a program at the first bad access: each case runs in a forked
 * child whose stderr goes to a file; a bad case must end the child with a
 * non-zero status and an ASan "use-after-poison" report on the very address
 * the child touched, and the correct-use cases must exit 0.  Every mode.
 *
 * SKIP (77) unless configured with --enable-sanitizers=address[,...].
 *
 * The header's alloc_size attributes are left out: with them, UBSan's
 * object-size check would stop the deliberate overflows first, and this
 * test is about what the pool tells ASan.
 *
 * SPDX-License-Identifier: MIT
 */
#define SHIFTPOOL_NO_ATTRIBUTES 1
#include "safety-util.h"

#ifndef SHIFTPOOL_ASAN

int main(void)
{
	puts("SKIP: not an AddressSanitizer build "
	     "(configure --enable-sanitizers=address,undefined)");
	return SAFETY_SKIP;
}

#else

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 64
#define COUNT 16
#define CHILD_SECONDS 20

/* A case: what the child does. */
enum action {
	OK_ALL,          /* every call, every requested byte: exit 0 */
	OK_REMOTE,       /* blocks freed by another thread, reused: exit 0 */
	UAF_READ,        /* read byte 20 of a freed block */
	UAF_WRITE,       /* write byte 20 of a freed block */
	UAF_LINK,        /* read byte 0 (the link word) of a freed block */
	UAF_REMOTE,      /* read a block another thread freed */
	OVERFLOW,        /* byte 40 of a 40-byte request in a 64-byte block */
	OVERFLOW_REUSED, /* the same in a block used before */
	OVERFLOW_CALLOC, /* byte 33 of calloc(1, 33) */
	OVERFLOW_SHRUNK, /* byte 10 after realloc(p, 10) shrank it in place */
	OVERFLOW_STRDUP, /* the byte after a strdup'ed string's NUL */
};

static const struct {
	enum action action;
	const char *name;
	bool bad;
} cases[] = {
	{OK_ALL, "correct use", false},
	{OK_REMOTE, "correct cross-thread use", false},
	{UAF_READ, "read after free", true},
	{UAF_WRITE, "write after free", true},
	{UAF_LINK, "read of a free block's link word", true},
	{UAF_REMOTE, "read after a free by another thread", true},
	{OVERFLOW, "one byte past the requested size", true},
	{OVERFLOW_REUSED, "one byte past the size, reused block", true},
	{OVERFLOW_CALLOC, "one byte past a calloc", true},
	{OVERFLOW_SHRUNK, "one byte past a realloc shrunk in place", true},
	{OVERFLOW_STRDUP, "one byte past a strdup", true},
};

/* The child says which address it is about to touch. */
static void announce(volatile unsigned char *p)
{
	fprintf(stderr, "bad=%p\n", (void *)p);
	fflush(stderr);
}

static void child_fail(const char *what)
{
	fprintf(stderr, "child: %s\n", what);
	fflush(stderr);
	_exit(3);
}

struct remote {
	pool_t *pool;
	void *blocks[4];
};

static void *remote_free(void *arg)
{
	struct remote *r = arg;
	for (int i = 0; i < 4; i++)
		pool_free(r->pool, r->blocks[i]);
	return NULL;
}

static void free_remotely(pool_t *pool, void **blocks)
{
	struct remote r = {.pool = pool};
	memcpy(r.blocks, blocks, sizeof r.blocks);
	pthread_t t;
	if (pthread_create(&t, NULL, remote_free, &r) != 0)
		child_fail("pthread_create");
	pthread_join(t, NULL);
}

/* Touches every byte of p[0, n): reads and writes, instrumented. */
static void use(volatile unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(v + i);
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(v + i))
			child_fail("contents changed");
}

static void ok_all(pool_t *pool)
{
	unsigned char *p[COUNT + 2];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < COUNT + 2; i++) {
			size_t n = (size_t)(1 + (i * 7 + round) % BLOCK);
			p[i] = round == 1 ? pool_calloc(pool, 1, n)
			                  : pool_malloc(pool, n);
			if (p[i] == NULL)
				child_fail("allocation failed");
			if (round == 1)
				for (size_t j = 0; j < n; j++)
					if (((volatile unsigned char *)p[i])[j])
						child_fail("calloc not zero");
			use(p[i], n, (unsigned char)i);
		}
		for (int i = 0; i < COUNT + 2; i++)
			pool_free(pool, p[i]);
	}
	/* realloc within the block, both ways, then out and back. */
	unsigned char *r = pool_malloc(pool, 10);
	use(r, 10, 1);
	r = pool_realloc(pool, r, BLOCK);
	use(r, BLOCK, 2);
	r = pool_realloc(pool, r, 5);
	use(r, 5, 3);
	r = pool_realloc(pool, r, 3 * BLOCK);
	use(r, 3 * BLOCK, 4);
	r = pool_realloc(pool, r, 30);
	use(r, 30, 5);
	pool_free(pool, r);
	char *s = pool_strdup(pool, "hello");
	if (s == NULL || strcmp(s, "hello") != 0)
		child_fail("strdup");
	pool_free(pool, s);
}

static void ok_remote(pool_t *pool)
{
	void *b[4];
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 4; i++) {
			b[i] = pool_malloc(pool, 48);
			if (b[i] == NULL)
				child_fail("allocation failed");
			use(b[i], 48, (unsigned char)round);
		}
		free_remotely(pool, b);
	}
}

/* The child: does the case, exits 0 if ASan let it. */
static void child(int mode, enum action action)
{
	alarm(CHILD_SECONDS);
	pool_t *pool = pool_init(BLOCK, COUNT, mode);
	if (pool == NULL)
		child_fail("pool_init");
	volatile unsigned char *p, *q;
	unsigned char sink = 0;
	void *b[4];

	/* A live neighbour on each side keeps the bad bytes' shadow the
	 * pool's alone. */
	void *before = pool_malloc(pool, BLOCK);
	switch (action) {
	case OK_ALL:
		ok_all(pool);
		break;
	case OK_REMOTE:
		ok_remote(pool);
		break;
	case UAF_READ:
	case UAF_WRITE:
	case UAF_LINK:
		p = pool_malloc(pool, 40);
		use(p, 40, 1);
		pool_free(pool, (void *)p);
		announce(p + (action == UAF_LINK ? 0 : 20));
		if (action == UAF_WRITE)
			p[20] = 1;
		else
			sink = p[action == UAF_LINK ? 0 : 20];
		break;
	case UAF_REMOTE:
		for (int i = 0; i < 4; i++)
			b[i] = pool_malloc(pool, 40);
		free_remotely(pool, b);
		p = b[2];
		announce(p + 24);
		sink = p[24];
		break;
	case OVERFLOW:
		p = pool_malloc(pool, 40);
		use(p, 40, 1);
		announce(p + 40);
		p[40] = 1;
		break;
	case OVERFLOW_REUSED:
		p = pool_malloc(pool, BLOCK);
		use(p, BLOCK, 1);
		pool_free(pool, (void *)p);
		q = pool_malloc(pool, 40);
		if (q != p)
			child_fail("the freed block did not come back");
		use(q, 40, 2);
		announce(q + 40);
		q[40] = 1;
		break;
	case OVERFLOW_CALLOC:
		p = pool_calloc(pool, 1, 33);
		use(p, 33, 1);
		announce(p + 33);
		sink = p[33];
		break;
	case OVERFLOW_SHRUNK:
		p = pool_malloc(pool, BLOCK);
		use(p, BLOCK, 1);
		q = pool_realloc(pool, (void *)p, 10);
		if (q != p)
			child_fail("realloc moved a shrinking block");
		use(q, 10, 2);
		announce(q + 10);
		q[10] = 1;
		break;
	case OVERFLOW_STRDUP:
		p = (volatile unsigned char *)pool_strdup(pool, "hello");
		if (p == NULL || !pool_owns(pool, (void *)p))
			child_fail("strdup not served by the pool");
		announce(p + 6);
		sink = p[6];
		break;
	}
	(void)sink;
	pool_free(pool, before);
	pool_destroy(pool);
	_exit(0);
}

/* Reads the whole file behind fd. */
static char *slurp(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	if (size < 0)
		return NULL;
	char *text = malloc((size_t)size + 1);
	if (text == NULL)
		return NULL;
	ssize_t n = pread(fd, text, (size_t)size, 0);
	text[n > 0 ? n : 0] = '\0';
	return text;
}

/* The address after "key" in text, or 0. */
static uintptr_t address_after(const char *text, const char *key)
{
	const char *at = strstr(text, key);
	if (at == NULL)
		return 0;
	return (uintptr_t)strtoull(at + strlen(key), NULL, 16);
}

/* Waits for pid at most seconds; kills it after that. */
static int wait_bounded(pid_t pid, int seconds, int *status)
{
	struct timespec nap = {0, 10 * 1000 * 1000};
	for (int i = 0; i < seconds * 100; i++) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -1;
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return -1;
}

static void run(const struct safety_mode *mode, size_t c)
{
	char name[4096];
	const char *dir = getenv("TMPDIR");
	snprintf(name, sizeof name, "%s/safety-asan.XXXXXX",
	         dir && *dir ? dir : "/tmp");
	int fd = mkstemp(name);
	REQUIRE(fd >= 0, "mkstemp %s: %s", name, strerror(errno));
	unlink(name);

	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(fd, STDERR_FILENO);
		child(mode->flag, cases[c].action);
	}
	int status = 0;
	bool hung = wait_bounded(pid, CHILD_SECONDS + 10, &status) != 0;
	char *report = slurp(fd);
	close(fd);
	REQUIRE(report != NULL, "cannot read the child's stderr");

	bool ok_exit = !hung && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	const char *what = cases[c].name;
	CHECK(!hung, "%s, %s: the child hung", mode->name, what);
	if (!cases[c].bad) {
		CHECK(ok_exit && strstr(report, "AddressSanitizer") == NULL,
		      "%s, %s: the child failed (status 0x%x):\n%s",
		      mode->name, what, (unsigned)status, report);
	} else {
		uintptr_t bad = address_after(report, "bad=0x");
		uintptr_t seen = address_after(report, "on address 0x");
		CHECK(!ok_exit, "%s, %s: the child exited 0: ASan saw nothing",
		      mode->name, what);
		CHECK(strstr(report, "AddressSanitizer") != NULL,
		      "%s, %s: no AddressSanitizer report (status 0x%x):\n%s",
		      mode->name, what, (unsigned)status, report);
		CHECK(strstr(report, "use-after-poison") != NULL,
		      "%s, %s: not a use-after-poison report:\n%s", mode->name,
		      what, report);
		CHECK(bad != 0 && bad == seen,
		      "%s, %s: ASan reported 0x%jx, the child touched 0x%jx",
		      mode->name, what, (uintmax_t)seen, (uintmax_t)bad);
	}
	printf("%-10s %-45s %s\n", mode->name, what,
	       ok_exit ? "exit 0" : "stopped by ASan");
	free(report);
}

int main(void)
{
	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++)
		for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
			run(&safety_modes[m], c);
	return safety_result("safety-asan");
}

#endif /* SHIFTPOOL_ASAN */
