/*
 * pool_stats_print(): the text and the JSON output carry the right numbers.
 * In every mode a known sequence leaves known counters; the text form is
 * parsed line by line ("name: value", every counter once, nothing else),
 * the JSON form by a small strict parser (one object on one line, string
 * keys, string or unsigned integer values, no duplicate key), and both are
 * compared with pool_stats() and with the numbers the sequence must give.
 * When python3 is installed, it parses the JSON too (json.loads) and checks
 * the same numbers.  The output goes to a real file, read back after the
 * call: pool_stats_print() must have written it all by the time it
 * returns 0.  Errors: NULL pool or stream, an unknown format (EINVAL), a
 * stream that cannot be written: read-only, /dev/full, and a stream whose
 * every write fails (EIO, from the call itself and not only from a later
 * fclose()).
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <ctype.h>
#include <inttypes.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK 100 /* rounded to 128 */
#define COUNT 8

/* The counters, by name, as both formats spell them. */
#define FIELDS 9
static const char *const names[FIELDS] = {
    "mode",   "block_size", "block_count",     "in_use",        "peak_in_use",
    "allocs", "frees",      "fallback_allocs", "fallback_frees"};

struct values {
	char mode[32];
	uint64_t n[FIELDS]; /* n[0] unused */
	int seen[FIELDS];
};

static int name_index(const char *name, size_t len)
{
	for (int i = 0; i < FIELDS; i++)
		if (strlen(names[i]) == len &&
		    strncmp(names[i], name, len) == 0)
			return i;
	return -1;
}

/* Parses an unsigned decimal number without sign, spaces or leading zeros
 * (JSON's rule); returns the end or NULL. */
static const char *parse_number(const char *s, uint64_t *out)
{
	if (!isdigit((unsigned char)*s) ||
	    (s[0] == '0' && isdigit((unsigned char)s[1])))
		return NULL;
	uint64_t v = 0;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (uint64_t)(*s - '0');
		s++;
	}
	*out = v;
	return s;
}

/* "name: value\n" per counter; false on any malformed line. */
static bool parse_text(const char *text, struct values *v, const char *ctx)
{
	memset(v, 0, sizeof *v);
	const char *line = text;
	while (*line) {
		const char *end = strchr(line, '\n');
		CHECK(end != NULL, "%s: text: last line not terminated", ctx);
		if (end == NULL)
			return false;
		const char *colon = memchr(line, ':', (size_t)(end - line));
		if (colon == NULL || colon[1] != ' ') {
			safety_fail(__FILE__, __LINE__,
			            "%s: text: bad line \"%.*s\"", ctx,
			            (int)(end - line), line);
			return false;
		}
		int i = name_index(line, (size_t)(colon - line));
		if (i < 0) {
			safety_fail(__FILE__, __LINE__,
			            "%s: text: unknown counter \"%.*s\"", ctx,
			            (int)(colon - line), line);
			return false;
		}
		const char *val = colon + 2;
		if (i == 0) {
			snprintf(v->mode, sizeof v->mode, "%.*s",
			         (int)(end - val), val);
		} else if (parse_number(val, &v->n[i]) != end) {
			safety_fail(__FILE__, __LINE__,
			            "%s: text: %s is not a number", ctx,
			            names[i]);
			return false;
		}
		v->seen[i]++;
		line = end + 1;
	}
	return true;
}

/* A strict parser for the flat object pool_stats_print() writes. */
static bool parse_json(const char *s, struct values *v, const char *ctx)
{
	memset(v, 0, sizeof *v);
#define JSON_FAIL(what)                                                        \
	do {                                                                   \
		safety_fail(__FILE__, __LINE__, "%s: JSON: %s at \"%.20s\"",   \
		            ctx, what, s);                                     \
		return false;                                                  \
	} while (0)
	if (*s++ != '{')
		JSON_FAIL("no '{'");
	for (;;) {
		if (*s++ != '"')
			JSON_FAIL("no key");
		const char *key = s;
		while (*s && *s != '"' && *s != '\\' &&
		       (unsigned char)*s >= 0x20)
			s++;
		if (*s != '"')
			JSON_FAIL("bad key");
		int i = name_index(key, (size_t)(s - key));
		if (i < 0)
			JSON_FAIL("unknown key");
		if (v->seen[i]++)
			JSON_FAIL("duplicate key");
		s++;
		if (*s++ != ':')
			JSON_FAIL("no ':'");
		if (*s == '"') {
			const char *val = ++s;
			while (*s && *s != '"' && *s != '\\' &&
			       (unsigned char)*s >= 0x20)
				s++;
			if (*s != '"' || i != 0)
				JSON_FAIL("bad string");
			snprintf(v->mode, sizeof v->mode, "%.*s",
			         (int)(s - val), val);
			s++;
		} else {
			if (i == 0)
				JSON_FAIL("mode is not a string");
			s = parse_number(s, &v->n[i]);
			if (s == NULL) {
				s = "";
				JSON_FAIL("bad number");
			}
		}
		if (*s == ',') {
			s++;
			continue;
		}
		if (*s++ != '}')
			JSON_FAIL("no '}'");
		break;
	}
	if (strcmp(s, "\n") != 0)
		JSON_FAIL("not one line ending in a newline");
	return true;
#undef JSON_FAIL
}

/* Prints to a temporary file and reads back what reached it, without
 * flushing first; returns the text (free it), NULL when there is none. */
static char *print(const pool_t *pool, int format)
{
	FILE *f = tmpfile();
	REQUIRE(f != NULL, "tmpfile: %s", strerror(errno));
	errno = 0;
	int rc = pool_stats_print(pool, f, format);
	CHECK(rc == 0, "pool_stats_print(format %d) returned %d, errno %d",
	      format, rc, errno);
	/* What the file holds, through its own descriptor: stdio's buffer
	 * does not count. */
	int fd = fileno(f);
	off_t len = lseek(fd, 0, SEEK_END);
	REQUIRE(len >= 0 && len < 4096, "lseek: %s", strerror(errno));
	char *buf = calloc(1, (size_t)len + 1);
	REQUIRE(buf != NULL, "calloc");
	CHECK(pread(fd, buf, (size_t)len, 0) == len, "pread: %s",
	      strerror(errno));
	CHECK(len > 0,
	      "format %d: nothing reached the file when "
	      "pool_stats_print() returned",
	      format);
	fclose(f);
	if (len == 0) {
		free(buf);
		return NULL; /* nothing to parse: failed above */
	}
	return buf;
}

/* A stream every write of which fails, as on a full disk. */
static ssize_t write_nospace(void *cookie, const char *buf, size_t size)
{
	(void)cookie, (void)buf, (void)size;
	errno = ENOSPC;
	return -1;
}

/* pool_stats_print() to a stream that takes the text into its buffer
 * but fails when the buffer is written: the call must say so itself. */
static void check_write_failure(const pool_t *pool, const char *mode)
{
	for (int format = 0; format < 2; format++) {
		FILE *full = fopen("/dev/full", "w");
		if (full == NULL) {
			printf("%s: no /dev/full (%s): the failing stream "
			       "below stands in for it\n",
			       mode, strerror(errno));
		} else {
			errno = 0;
			int rc = pool_stats_print(pool, full, format);
			CHECK(rc == -1 && errno == EIO,
			      "%s: /dev/full, format %d: returned %d, errno "
			      "%d (%s), expected -1 and EIO",
			      mode, format, rc, errno, strerror(errno));
			fclose(full);
		}
		cookie_io_functions_t io = {.write = write_nospace};
		FILE *failing = fopencookie(NULL, "w", io);
		REQUIRE(failing != NULL, "fopencookie: %s", strerror(errno));
		errno = 0;
		int rc = pool_stats_print(pool, failing, format);
		CHECK(rc == -1 && errno == EIO,
		      "%s: a stream whose writes fail, format %d: returned "
		      "%d, errno %d (%s), expected -1 and EIO",
		      mode, format, rc, errno, strerror(errno));
		fclose(failing);
	}
}

static void compare(const struct values *v, const uint64_t *want,
                    const char *mode, const char *ctx)
{
	for (int i = 0; i < FIELDS; i++)
		CHECK(v->seen[i] == 1, "%s: %s appears %d times", ctx, names[i],
		      v->seen[i]);
	CHECK(strcmp(v->mode, mode) == 0, "%s: mode \"%s\", expected \"%s\"",
	      ctx, v->mode, mode);
	for (int i = 1; i < FIELDS; i++)
		CHECK(v->n[i] == want[i],
		      "%s: %s = %" PRIu64 ", expected %" PRIu64, ctx, names[i],
		      v->n[i], want[i]);
}

static bool have_python(void)
{
	return system("python3 -c 'import json' >/dev/null 2>&1") == 0;
}

/* python3 json.loads() the output and compares every number. */
static void python_check(const char *json, const uint64_t *want,
                         const char *mode, const char *ctx)
{
	char path[4096];
	const char *dir = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/safety-stats.XXXXXX",
	         dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	REQUIRE(fd >= 0, "mkstemp: %s", strerror(errno));
	size_t len = strlen(json);
	REQUIRE(write(fd, json, len) == (ssize_t)len, "write");
	close(fd);
	char script[2048];
	int n = snprintf(script, sizeof script,
	                 "python3 -c 'import json,sys\n"
	                 "d = json.load(open(sys.argv[1]))\n"
	                 "want = {\"mode\": \"%s\"",
	                 mode);
	for (int i = 1; i < FIELDS; i++)
		n += snprintf(script + n, sizeof script - (size_t)n,
		              ", \"%s\": %" PRIu64, names[i], want[i]);
	snprintf(script + n, sizeof script - (size_t)n,
	         "}\n"
	         "sys.exit(0 if d == want else \"python3: %%r != %%r\" %% (d, "
	         "want))' '%s'",
	         path);
	int status = system(script);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "%s: python3 json check failed (status 0x%x)", ctx,
	      (unsigned)status);
	unlink(path);
}

struct frees {
	pool_t *pool;
	void *block;
};

static void *free_one(void *arg)
{
	struct frees *f = arg;
	pool_free(f->pool, f->block);
	return NULL;
}

int main(void)
{
	unsetenv("SHIFTPOOL_DEBUG");
	unsetenv("SHIFTPOOL_TRACE");
	bool python = have_python();
	if (!python)
		printf("python3 not found: the JSON is checked by the built-in "
		       "parser only\n");

	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++) {
		const struct safety_mode *mode = &safety_modes[m];
		const char *mode_name =
		    mode->flag == POOL_PER_THREAD ? "per-thread" : mode->name;
		pool_t *pool = pool_init(BLOCK, COUNT, mode->flag);
		REQUIRE(pool != NULL, "pool_init");

		/* 8 blocks, all taken; 3 fallbacks (2 for exhaustion, 1
		 * too big); 3 blocks and 1 fallback freed, one block by
		 * another thread; 2 blocks taken again. */
		void *p[COUNT + 3];
		for (int i = 0; i < COUNT + 2; i++)
			p[i] = pool_malloc(pool, 8);
		p[COUNT + 2] = pool_calloc(pool, 1, 1000);
		struct frees f = {pool, p[0]};
		pthread_t t;
		REQUIRE(pthread_create(&t, NULL, free_one, &f) == 0,
		        "pthread_create");
		pthread_join(t, NULL);
		pool_free(pool, p[1]);
		pool_free(pool, p[2]);
		pool_free(pool, p[COUNT]);
		p[0] = p[COUNT] = NULL;
		p[1] = pool_malloc(pool, 8);
		p[2] = pool_malloc(pool, 8);
		/* per-thread: a remote free returns once the owner drains;
		 * either way one of the three freed blocks is free again. */

		uint64_t want[FIELDS] = {0};
		want[1] = 128;
		want[2] = COUNT;
		want[3] = COUNT - 1;
		want[4] = COUNT; /* every block was taken at once */
		want[5] = COUNT + 2;
		want[6] = 3;
		want[7] = 3;
		want[8] = 1;
		/* If the per-thread pool could not get its remotely freed
		 * block back, the second pool_malloc() was a fallback. */
		if (!pool_owns(pool, p[2])) {
			want[3]--, want[5]--, want[7]++;
		}

		pool_stats_t st = safety_stats(pool);
		uint64_t from_stats[FIELDS] = {
		    0,         st.block_size,      st.block_count,
		    st.in_use, st.peak_in_use,     st.allocs,
		    st.frees,  st.fallback_allocs, st.fallback_frees};
		char ctx[64];
		snprintf(ctx, sizeof ctx, "%s, pool_stats", mode->name);
		for (int i = 1; i < FIELDS; i++)
			CHECK(from_stats[i] == want[i],
			      "%s: %s = %" PRIu64 ", expected %" PRIu64, ctx,
			      names[i], from_stats[i], want[i]);

		struct values v;
		char *text = print(pool, POOL_STATS_TEXT);
		snprintf(ctx, sizeof ctx, "%s, text", mode->name);
		if (text && parse_text(text, &v, ctx))
			compare(&v, want, mode_name, ctx);
		char *json = print(pool, POOL_STATS_JSON);
		snprintf(ctx, sizeof ctx, "%s, JSON", mode->name);
		if (json && parse_json(json, &v, ctx))
			compare(&v, want, mode_name, ctx);
		if (json && python)
			python_check(json, want, mode_name, ctx);
		printf("%s:\n%s%s", mode->name, text ? text : "",
		       json ? json : "");
		free(text);
		free(json);

		/* Errors. */
		errno = 0;
		CHECK(pool_stats_print(pool, NULL, POOL_STATS_TEXT) == -1 &&
		          errno == EINVAL,
		      "%s: NULL stream: errno %d", mode->name, errno);
		errno = 0;
		CHECK(pool_stats_print(NULL, stdout, POOL_STATS_TEXT) == -1 &&
		          errno == EINVAL,
		      "%s: NULL pool: errno %d", mode->name, errno);
		errno = 0;
		CHECK(pool_stats_print(pool, stdout, 7) == -1 &&
		          errno == EINVAL,
		      "%s: unknown format: errno %d", mode->name, errno);
		FILE *ro = fopen("/dev/null", "r");
		REQUIRE(ro != NULL, "fopen /dev/null");
		for (int format = 0; format < 2; format++) {
			errno = 0;
			CHECK(pool_stats_print(pool, ro, format) == -1 &&
			          errno == EIO,
			      "%s: read-only stream, format %d: errno %d",
			      mode->name, format, errno);
		}
		fclose(ro);
		check_write_failure(pool, mode->name);

		for (int i = 0; i < COUNT + 3; i++)
			pool_free(pool, p[i]);
		pool_destroy(pool);
	}
	return safety_result("safety-stats-print");
}
