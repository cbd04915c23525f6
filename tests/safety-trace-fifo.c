/*
 * SHIFTPOOL_TRACE naming a FIFO.  Each case runs in a child of its own,
 * since the trace is opened once per process, and the child arms alarm()
 * first: a pool_init() that waits for a reader is a child killed by
 * SIGALRM, a failure, never a test that hangs.
 *
 *  - No process has the FIFO open for reading: pool_init() returns a
 *    working pool at once, and the process is not traced (it holds no
 *    write end of the FIFO: a reader opened afterwards reads end of file).
 *  - A reader has it open: the trace is written to it, and the library's
 *    descriptor is a blocking one, so that a full FIFO makes the writer
 *    wait rather than lose records.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Far above what either case takes on a loaded machine: only a hang
 * reaches it. */
#define ALARM_SECONDS 60

static char fifo[4096];

/* The descriptor of this process open on path (other than skip); -1 when
 * there is none. */
static int fd_open_on(const char *path, int skip)
{
	DIR *dir = opendir("/proc/self/fd");
	if (dir == NULL)
		return -1;
	int found = -1;
	struct dirent *e;
	while (found < 0 && (e = readdir(dir)) != NULL) {
		char link[64], target[4096];
		int fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd == skip || fd == dirfd(dir))
			continue;
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, path) == 0)
			found = fd;
	}
	closedir(dir);
	return found;
}

/* A pool that works: a block out and back, then destroyed (which writes
 * out what the trace holds). */
static void use_pool(void)
{
	pool_t *pool = pool_init(64, 16, POOL_LOCKED);
	REQUIRE(pool != NULL, "pool_init: %s", strerror(errno));
	void *p = pool_malloc(pool, 32);
	CHECK(p != NULL && pool_owns(pool, p), "pool_malloc");
	pool_free(pool, p);
	pool_destroy(pool);
}

/* No reader: no wait, no trace. */
static void child_without_reader(void)
{
	alarm(ALARM_SECONDS);
	setenv("SHIFTPOOL_TRACE", fifo, 1);
	use_pool();
	CHECK(fd_open_on(fifo, -1) < 0,
	      "the library holds the FIFO open without a reader");
	int r = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(r >= 0, "open %s for reading: %s", fifo, strerror(errno));
	char c;
	ssize_t n = read(r, &c, 1);
	/* 0: no writer at all; -1 with EAGAIN would be a writer that holds
	 * the FIFO open. */
	CHECK(n == 0, "read from the FIFO: %zd (%s), not end of file", n,
	      n < 0 ? strerror(errno) : "data");
	close(r);
	exit(safety_result("safety-trace-fifo: without a reader"));
}

/* A reader: the trace goes to the FIFO, written with blocking writes. */
static void child_with_reader(void)
{
	alarm(ALARM_SECONDS);
	int r = open(fifo, O_RDONLY | O_NONBLOCK);
	REQUIRE(r >= 0, "open %s for reading: %s", fifo, strerror(errno));
	setenv("SHIFTPOOL_TRACE", fifo, 1);
	use_pool();
	int w = fd_open_on(fifo, r);
	REQUIRE(w >= 0, "the library did not open the FIFO");
	int flags = fcntl(w, F_GETFL);
	CHECK(flags >= 0 && (flags & O_NONBLOCK) == 0,
	      "the trace descriptor is non-blocking (flags 0x%x)",
	      (unsigned)flags);
	char text[4096];
	ssize_t n = read(r, text, sizeof text - 1);
	REQUIRE(n > 0, "nothing read from the FIFO");
	text[n] = '\0';
	static const char version[] = "# shiftpool trace v";
	CHECK(strncmp(text, version, sizeof version - 1) == 0,
	      "the FIFO does not start with the version line: %.40s", text);
	CHECK(strstr(text, "\ninit ") != NULL &&
	          strstr(text, "\nmalloc ") != NULL &&
	          strstr(text, "\nfree ") != NULL &&
	          strstr(text, "\ndestroy ") != NULL,
	      "records missing from the FIFO:\n%s", text);
	close(r);
	exit(safety_result("safety-trace-fifo: with a reader"));
}

static void run_case(const char *name, void (*child)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* The child counts its own failures, not the parent's. */
		atomic_store(&safety_failures, 0);
		child();
	}
	int status;
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid: %s",
	        strerror(errno));
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		safety_fail(__FILE__, __LINE__,
		            "%s: still blocked after %d seconds", name,
		            ALARM_SECONDS);
	else
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "%s: child status 0x%x", name, (unsigned)status);
}

int main(void)
{
	const char *dir = getenv("TMPDIR");
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s/safety-trace-fifo.XXXXXX",
	         dir && *dir ? dir : "/tmp");
	REQUIRE(mkdtemp(tmp) != NULL, "mkdtemp: %s", strerror(errno));
	/* As /proc names it: the directory without symbolic links. */
	char *real = realpath(tmp, NULL);
	REQUIRE(real != NULL, "realpath %s: %s", tmp, strerror(errno));
	snprintf(fifo, sizeof fifo, "%s/trace", real);
	free(real);
	REQUIRE(mkfifo(fifo, 0600) == 0, "mkfifo: %s", strerror(errno));
	unsetenv("SHIFTPOOL_DEBUG");

	run_case("without a reader", child_without_reader);
	run_case("with a reader", child_with_reader);

	unlink(fifo);
	rmdir(tmp);
	return safety_result("safety-trace-fifo");
}
