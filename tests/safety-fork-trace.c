/*
 * fork() with the trace on (SHIFTPOOL_TRACE): the children neither hang
 * nor break the trace.  Three threads hammer pools of every mode (each its
 * own POOL_SINGLE pool, and a POOL_LOCKED and a POOL_PER_THREAD pool they
 * share), every call a trace record, while the main thread forks FORKS
 * times, each time once the hammers are under way.  Every child makes a
 * few pool calls and ends with exit(), not _exit(), so whatever trace
 * buffer it inherited is written out if it still holds anything.  A child
 * that hangs is ended by its own alarm() and the parent's bounded wait;
 * either fails the test.
 *
 * Then the trace is read back (trace-format.h):
 *  - one version line, before the parent's records (a child's may come
 *    before it); every other line a whole record: a known
 *    operation, then key=value pairs starting t=, pid=, thread=, pool=,
 *    with the keys of the operation;
 *  - no line appears twice: records carry t=, pid= and thread=, so two
 *    byte-identical lines are one record written twice;
 *  - each child's first record is "fork parent=<the parent>", and the
 *    child has exactly that and the records of its calls;
 *  - each thread of the parent has exactly one record per call it made
 *    (none lost, none written again by a child), with t= never going back.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <inttypes.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BLOCK         64
#define COUNT         4096
#define HAMMERS       3
#define SLOTS         32
#define BURST         200 /* calls per hammer per fork */
#define UNDER_WAY     16  /* calls each hammer makes before the fork */
#define FORKS         250
#define CHILD_CALLS   6
#define CHILD_SECONDS 30
#define WAIT_SECONDS  60
#define TEST_SECONDS  600
#define MAX_SHOWN     5 /* examples shown per kind of problem */
#define VERSION_LINE  "# shiftpool trace v3"

static pool_t *locked_pool, *thread_pool, *main_pool;
static atomic_bool stop;
static _Atomic unsigned epoch; /* one per fork */

struct hammer {
	pthread_t thread;
	unsigned index;
	_Atomic unsigned epoch_calls; /* calls in the current epoch */
	long tid;
	unsigned long calls; /* traced calls in all, read after the join */
};

static struct hammer hammers[HAMMERS];

static long tid(void)
{
	return (long)syscall(SYS_gettid);
}

/* ------------------------------------------------------------ hammers */

static void *hammer(void *arg)
{
	struct hammer *h = arg;
	h->tid = tid();
	pool_t *own = pool_init(BLOCK, 256, POOL_SINGLE);
	REQUIRE(own != NULL, "pool_init: %s", strerror(errno));
	h->calls = 1;
	pool_t *pools[3] = {own, locked_pool, thread_pool};
	void *slot[3][SLOTS] = {{NULL}};
	unsigned seed = h->index * 7919u + 1;
	unsigned seen = 0;

	for (;;) {
		/* A burst per fork, so the trace stays small. */
		while (atomic_load(&epoch) == seen && !atomic_load(&stop))
			sched_yield();
		if (atomic_load(&stop))
			break;
		seen = atomic_load(&epoch);
		atomic_store(&h->epoch_calls, 0);
		for (int op = 0; op < BURST; op++) {
			seed = seed * 1103515245u + 12345u;
			unsigned r = seed >> 8;
			unsigned p = r % 3, i = (r >> 4) % SLOTS;
			if (slot[p][i] != NULL) {
				pool_free(pools[p], slot[p][i]);
				slot[p][i] = NULL;
			} else {
				slot[p][i] =
				    (r >> 12) % 2
				        ? pool_calloc(pools[p], 1, BLOCK)
				        : pool_malloc(pools[p], BLOCK);
				REQUIRE(slot[p][i] != NULL, "hammer: %s",
				        strerror(errno));
			}
			h->calls++;
			atomic_fetch_add(&h->epoch_calls, 1);
		}
	}
	for (unsigned p = 0; p < 3; p++)
		for (unsigned i = 0; i < SLOTS; i++)
			if (slot[p][i] != NULL) {
				pool_free(pools[p], slot[p][i]);
				h->calls++;
			}
	pool_destroy(own);
	h->calls++;
	return NULL;
}

/* ------------------------------------------------------------ child */

/* CHILD_CALLS traced calls, then exit(): atexit handlers and all. */
static void child(void)
{
	alarm(CHILD_SECONDS);
	pool_t *pools[3] = {main_pool, locked_pool, thread_pool};
	for (int p = 0; p < 3; p++) {
		void *block = pool_malloc(pools[p], BLOCK);
		if (block == NULL)
			exit(10);
		memset(block, 0x5a, BLOCK);
		pool_free(pools[p], block);
	}
	exit(0);
}

/* ------------------------------------------------------------ reading */

static const char *const known_ops[] = {"init",   "destroy", "malloc",
                                        "calloc", "free",    "fork"};

/* The keys each operation must have after the four common ones. */
static const char *const op_keys[][4] = {
    {"block_size", "block_count", "flags", NULL},
    {NULL},
    {"size", "ptr", "src", NULL},
    {"size", "ptr", "src", NULL},
    {"ptr", "src", NULL},
    {"parent", NULL},
};

#define MAX_FIELDS 16

struct record {
	const char *op;
	int op_index;
	char *key[MAX_FIELDS];
	char *value[MAX_FIELDS];
	int n;
};

static const char *field(const struct record *r, const char *key)
{
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->key[i], key) == 0)
			return r->value[i];
	return NULL;
}

static bool is_number(const char *s)
{
	if (s == NULL || *s == '\0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Splits the line in place into an operation and key=value words; false
 * (with why) when it is not even that. */
static bool split(char *text, struct record *r, const char **why)
{
	char *save = NULL;

	memset(r, 0, sizeof *r);
	r->op = strtok_r(text, " ", &save);
	r->op_index = -1;
	for (size_t i = 0; r->op && i < sizeof known_ops / sizeof *known_ops;
	     i++)
		if (strcmp(r->op, known_ops[i]) == 0)
			r->op_index = (int)i;
	if (r->op_index < 0) {
		*why = "unknown operation";
		return false;
	}
	for (char *word; (word = strtok_r(NULL, " ", &save)) != NULL;) {
		char *eq = strchr(word, '=');
		if (eq == NULL || eq == word || r->n == MAX_FIELDS) {
			*why = "a word that is not key=value";
			return false;
		}
		*eq = '\0';
		r->key[r->n] = word;
		r->value[r->n++] = eq + 1;
	}
	return true;
}

/* Whether a split line is a whole record of trace-format.h: the four
 * common keys first, in order, then the keys of its operation. */
static bool conforms(const struct record *r, const char **why)
{
	static const char *const common[] = {"t", "pid", "thread", "pool"};

	for (int i = 0; i < 4; i++)
		if (r->n <= i || strcmp(r->key[i], common[i]) != 0 ||
		    !is_number(r->value[i])) {
			*why = "not starting t=N pid=N thread=N pool=N";
			return false;
		}
	for (int i = 0; op_keys[r->op_index][i] != NULL; i++)
		if (field(r, op_keys[r->op_index][i]) == NULL) {
			*why = "a key of its operation missing";
			return false;
		}
	return true;
}

/* What the trace shows of one thread.  Thread ids are unique among the
 * parent's live threads and the children (a child's only thread has the
 * child's pid), so thread= alone names the writer. */
struct writer {
	long thread;
	unsigned long records;
	uint64_t last_t;
	bool fork_first;     /* a child whose first record is its fork */
	unsigned long forks; /* fork records */
	long parent;         /* parent= of the last of them */
};

#define MAX_WRITERS (FORKS + HAMMERS + 8)
static struct writer writers[MAX_WRITERS];
static size_t nwriters;

static struct writer *writer_of(long thread)
{
	for (size_t i = 0; i < nwriters; i++)
		if (writers[i].thread == thread)
			return &writers[i];
	if (nwriters == MAX_WRITERS)
		return NULL;
	struct writer *w = &writers[nwriters++];
	memset(w, 0, sizeof *w);
	w->thread = thread;
	return w;
}

/* Problems, by kind, with a few examples each. */
struct problems {
	const char *what;
	unsigned long count;
};

enum {
	P_NOT_WHOLE,
	P_DUPLICATE,
	P_VERSION,
	P_CHILD_ORDER,
	P_WRONG_PID,
	P_CHILD_COUNT,
	P_PARENT_COUNT,
	P_TIME,
	P_KINDS
};

static struct problems problems[P_KINDS] = {
    {"lines that are not a whole record", 0},
    {"lines that appear twice (a record written again)", 0},
    {"misplaced or missing version lines", 0},
    {"children whose first record is not fork parent=<parent>", 0},
    {"records of a thread unknown or with another process's pid=", 0},
    {"children without exactly their fork record and calls", 0},
    {"parent threads whose record count is not their call count", 0},
    {"records whose t= goes back within their thread", 0},
};

__attribute__((format(printf, 2, 3))) static void
problem(int kind, const char *format, ...)
{
	if (problems[kind].count++ >= MAX_SHOWN)
		return;
	va_list args;
	fprintf(stderr, "trace: ");
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
}

static int compare_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *in = fopen(path, "r");
	REQUIRE(in != NULL, "open %s: %s", path, strerror(errno));
	REQUIRE(fseek(in, 0, SEEK_END) == 0, "fseek");
	long size = ftell(in);
	REQUIRE(size >= 0, "ftell");
	rewind(in);
	char *text = malloc((size_t)size + 1);
	REQUIRE(text != NULL, "malloc");
	REQUIRE(fread(text, 1, (size_t)size, in) == (size_t)size, "fread");
	fclose(in);
	text[size] = '\0';
	*len = (size_t)size;
	return text;
}

static bool is_child(long pid, const pid_t *children, int nchildren)
{
	for (int i = 0; i < nchildren; i++)
		if (children[i] == pid)
			return true;
	return false;
}

static void check_trace(const char *path, const pid_t *children, int nchildren,
                        unsigned long main_calls)
{
	size_t len;
	char *text = read_file(path, &len);
	REQUIRE(len > 0, "the trace is empty");
	if (text[len - 1] != '\n')
		problem(P_NOT_WHOLE, "the last line is cut: \"%.80s\"",
		        strrchr(text, '\n') ? strrchr(text, '\n') + 1 : text);

	size_t nlines = 0;
	for (size_t i = 0; i < len; i++)
		nlines += text[i] == '\n';
	char **lines = calloc(nlines + 1, sizeof *lines);
	REQUIRE(lines != NULL, "calloc");
	nlines = 0;
	for (char *line = text, *end; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (end == NULL)
			break;
		*end = '\0';
		lines[nlines++] = line;
	}

	long parent = (long)getpid();
	char line_copy[1024];
	size_t versions = 0;
	for (size_t i = 0; i < nlines; i++) {
		/* One version line, the parent's: before its first record,
		 * though children may write theirs before it is out. */
		if (lines[i][0] == '#') {
			if (versions++ > 0 ||
			    strcmp(lines[i], VERSION_LINE) != 0)
				problem(P_VERSION, "line %zu: \"%.80s\"", i + 1,
				        lines[i]);
			continue;
		}
		struct record r;
		const char *why = "too long";
		if (strlen(lines[i]) >= sizeof line_copy ||
		    !split(strcpy(line_copy, lines[i]), &r, &why)) {
			problem(P_NOT_WHOLE, "line %zu: %s: \"%.100s\"", i + 1,
			        why, lines[i]);
			continue;
		}
		if (!conforms(&r, &why))
			problem(P_NOT_WHOLE, "line %zu: %s: \"%.100s\"", i + 1,
			        why, lines[i]);
		/* Counted by thread even when it does not conform: a record
		 * written twice shows in the counts whatever its form. */
		const char *thread_text = field(&r, "thread");
		long thread =
		    is_number(thread_text) ? strtol(thread_text, NULL, 10) : 0;
		bool from_child = is_child(thread, children, nchildren);
		const char *pid = field(&r, "pid");
		if (thread == 0 ||
		    (pid != NULL &&
		     strtol(pid, NULL, 10) != (from_child ? thread : parent))) {
			problem(P_WRONG_PID, "line %zu: \"%.100s\"", i + 1,
			        lines[i]);
			continue;
		}
		if (!from_child && versions == 0)
			problem(
			    P_VERSION,
			    "line %zu: a record of the parent before \"%s\"",
			    i + 1, VERSION_LINE);
		struct writer *w = writer_of(thread);
		REQUIRE(w != NULL, "too many threads in the trace");
		if (strcmp(r.op, "fork") == 0) {
			w->forks++;
			w->parent = strtol(field(&r, "parent"), NULL, 10);
			if (w->records == 0)
				w->fork_first = true;
		}
		if (from_child && w->records == 0 && !w->fork_first)
			problem(P_CHILD_ORDER,
			        "line %zu: child %ld's first record: %.80s",
			        i + 1, thread, lines[i]);
		const char *t_text = field(&r, "t");
		uint64_t t = is_number(t_text) ? strtoull(t_text, NULL, 10) : 0;
		if (w->records > 0 && t < w->last_t)
			problem(P_TIME, "line %zu: t= goes back in thread %ld",
			        i + 1, thread);
		w->last_t = t;
		w->records++;
	}

	/* Every child: its fork record first, then its calls, nothing
	 * more; it has one thread, so one writer. */
	for (int c = 0; c < nchildren; c++) {
		struct writer *w = writer_of(children[c]);
		REQUIRE(w != NULL, "too many threads in the trace");
		if (w->records != 1 + CHILD_CALLS || w->forks != 1 ||
		    w->parent != parent)
			problem(P_CHILD_COUNT,
			        "child %ld: %lu records, %lu fork records "
			        "(parent=%ld), expected %d and 1 (parent=%ld)",
			        (long)children[c], w->records, w->forks,
			        w->parent, 1 + CHILD_CALLS, parent);
	}

	/* Every thread of the parent: one record per call. */
	for (int h = 0; h <= HAMMERS; h++) {
		long thread = h < HAMMERS ? hammers[h].tid : tid();
		unsigned long calls =
		    h < HAMMERS ? hammers[h].calls : main_calls;
		struct writer *w = writer_of(thread);
		unsigned long records = w ? w->records : 0;
		if (records != calls)
			problem(P_PARENT_COUNT,
			        "thread %ld of the parent: %lu records for %lu "
			        "calls",
			        thread, records, calls);
	}

	qsort(lines, nlines, sizeof *lines, compare_lines);
	for (size_t i = 1; i < nlines; i++)
		if (strcmp(lines[i], lines[i - 1]) == 0)
			problem(P_DUPLICATE, "twice: \"%.100s\"", lines[i]);

	if (versions == 0)
		problem(P_VERSION, "no \"%s\" line", VERSION_LINE);
	for (int k = 0; k < P_KINDS; k++) {
		printf("trace: %lu %s\n", problems[k].count, problems[k].what);
		CHECK(problems[k].count == 0, "trace: %lu %s",
		      problems[k].count, problems[k].what);
	}
	printf("trace: %zu lines\n", nlines);
	free(lines);
	free(text);
}

/* ------------------------------------------------------------ main */

int main(void)
{
	/* The parent too is bounded: SIGALRM ends it, and make sees a
	 * failure. */
	alarm(TEST_SECONDS);
	char path[4096];
	const char *dir = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/safety-fork-trace.XXXXXX",
	         dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	REQUIRE(fd >= 0, "mkstemp: %s", strerror(errno));
	close(fd);
	unsetenv("SHIFTPOOL_DEBUG");
	setenv("SHIFTPOOL_TRACE", path, 1);

	main_pool = pool_init(BLOCK, 256, POOL_SINGLE);
	locked_pool = pool_init(BLOCK, COUNT, POOL_LOCKED);
	thread_pool = pool_init(BLOCK, COUNT, POOL_PER_THREAD);
	REQUIRE(main_pool && locked_pool && thread_pool, "pool_init: %s",
	        strerror(errno));
	unsigned long main_calls = 3;

	for (unsigned i = 0; i < HAMMERS; i++) {
		hammers[i].index = i;
		REQUIRE(pthread_create(&hammers[i].thread, NULL, hammer,
		                       &hammers[i]) == 0,
		        "pthread_create");
	}

	double start = safety_now();
	static pid_t children[FORKS];
	int nchildren = 0, ok = 0, failed = 0, hung = 0;
	for (int f = 0; f < FORKS; f++) {
		for (int i = 0; i < HAMMERS; i++)
			atomic_store(&hammers[i].epoch_calls, 0);
		atomic_fetch_add(&epoch, 1);
		/* Fork while the hammers are under way: inside a call, or
		 * between two, holding the trace's lock or not. */
		for (int i = 0; i < HAMMERS; i++)
			while (atomic_load(&hammers[i].epoch_calls) < UNDER_WAY)
				sched_yield();
		fflush(NULL);
		pid_t pid = fork();
		REQUIRE(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0)
			child();
		children[nchildren++] = pid;
		int status = 0;
		if (!safety_wait_bounded(pid, &status, WAIT_SECONDS)) {
			hung++;
			fprintf(stderr, "fork %d: the child hung\n", f);
		} else if (status != 0) {
			failed++;
			fprintf(stderr, "fork %d: the child %s %d%s\n", f,
			        WIFSIGNALED(status) ? "died of signal"
			                            : "exited with status",
			        WIFSIGNALED(status) ? WTERMSIG(status)
			                            : WEXITSTATUS(status),
			        WIFSIGNALED(status) &&
			                WTERMSIG(status) == SIGALRM
			            ? " (its alarm: it hung)"
			            : "");
		} else {
			ok++;
		}
	}
	atomic_store(&stop, true);
	for (int i = 0; i < HAMMERS; i++)
		pthread_join(hammers[i].thread, NULL);
	pool_destroy(main_pool);
	pool_destroy(locked_pool);
	pool_destroy(thread_pool);
	main_calls += 3;
	unsetenv("SHIFTPOOL_TRACE");
	printf("%d forks: %d children passed, %d failed, %d hung; %.2f s\n",
	       nchildren, ok, failed, hung, safety_now() - start);
	CHECK(ok == FORKS, "%d children failed and %d hung of %d", failed, hung,
	      FORKS);

	check_trace(path, children, nchildren, main_calls);
	if (atomic_load(&safety_failures) == 0)
		unlink(path);
	else
		fprintf(stderr, "the trace is kept in %s\n", path);
	return safety_result("safety-fork-trace");
}
