/*
 * shiftpool-analyze: lines into records.  A line is blank, a comment (the
 * version line among them), a record of a known operation, one of an
 * operation this analyzer does not know (counted and skipped, so that a
 * newer trace still reads), or malformed (counted and listed).
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include "analyze.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- the vocabulary */

enum value_type { V_DEC, V_NUM, V_PTR, V_SRC, V_ERROR, V_TEXT };

/* Every key not named here is decimal. */
static const unsigned char key_types[TRACE_KEY_COUNT] = {
    [TRACE_KEY_FLAGS] = V_NUM,   [TRACE_KEY_OLD] = V_PTR,
    [TRACE_KEY_PTR] = V_PTR,     [TRACE_KEY_SRC] = V_SRC,
    [TRACE_KEY_ERROR] = V_ERROR, [TRACE_KEY_FUNCTION] = V_TEXT,
};

#define CALL_KEYS                                                              \
	(KEY_BIT(POOL) | KEY_BIT(THREAD) | KEY_BIT(PTR) | KEY_BIT(SRC))
#define ALLOC_KEYS (CALL_KEYS | KEY_BIT(SIZE))

/* The keys without which a record of an operation means nothing. */
static const uint32_t required_keys[TRACE_OP_COUNT] = {
    [TRACE_OP_INIT] =
        KEY_BIT(POOL) | KEY_BIT(BLOCK_SIZE) | KEY_BIT(BLOCK_COUNT),
    [TRACE_OP_SET_INIT] =
        KEY_BIT(POOL) | KEY_BIT(MIN_BLOCK) | KEY_BIT(MAX_BLOCK),
    [TRACE_OP_DESTROY] = KEY_BIT(POOL),
    [TRACE_OP_MALLOC] = ALLOC_KEYS,
    [TRACE_OP_CALLOC] = ALLOC_KEYS,
    [TRACE_OP_REALLOC] = ALLOC_KEYS | KEY_BIT(OLD),
    [TRACE_OP_STRDUP] = ALLOC_KEYS,
    [TRACE_OP_FREE] = CALL_KEYS,
    [TRACE_OP_MALLOC_BULK] = ALLOC_KEYS,
    [TRACE_OP_FREE_BULK] = CALL_KEYS,
    [TRACE_OP_TRIM] = KEY_BIT(POOL) | KEY_BIT(BYTES),
    [TRACE_OP_REPORT] = KEY_BIT(POOL) | KEY_BIT(ERROR),
    [TRACE_OP_FORK] = KEY_BIT(PARENT),
};

/* The code whose name is s among count names; -1 when none is. */
static int lookup_name(const char *s, const char *(*name)(unsigned),
                       unsigned first, unsigned count)
{
	for (unsigned i = first; i < count; i++) {
		const char *n = name(i);
		if (n != NULL && strcmp(s, n) == 0)
			return (int)i;
	}
	return -1;
}

static const char *error_name(unsigned code)
{
	return trace_error_name((int)code);
}

/* Error codes are small; 64 leaves room for the ones still to come. */
#define ERROR_CODE_LIMIT 64

static int parse_value(enum trace_key k, const char *s, uint64_t *out)
{
	int code;
	switch (key_types[k]) {
	case V_NUM:
		return parse_num(s, out);
	case V_PTR:
		return parse_ptr(s, out);
	case V_SRC:
		code = lookup_name(s, trace_src_name, 0, TRACE_SRC_COUNT);
		break;
	case V_ERROR:
		code = lookup_name(s, error_name, 1, ERROR_CODE_LIMIT);
		break;
	case V_TEXT:
		*out = 0;
		return 1;
	default:
		return parse_dec(s, out);
	}
	*out = (uint64_t)code;
	return code >= 0;
}

/* ------------------------------------------------------------- one record */

enum verdict { LINE_OK, LINE_UNKNOWN, LINE_MALFORMED };

static int is_ident(const char *s, size_t n)
{
	if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') ||
	                (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		      c == '.'))
			return 0;
	}
	return 1;
}

/* The next word of *s, cut out in place; NULL at the end. */
static char *next_word(char **s)
{
	char *p = *s + strspn(*s, " \t");
	if (*p == '\0')
		return NULL;
	char *word = p;
	p += strcspn(p, " \t");
	if (*p)
		*p++ = '\0';
	*s = p;
	return word;
}

/* One key=value field into c, its value parsed when parse says so;
 * *unknown set for a key not in the format. */
static int parse_field(char *word, struct call *c, int *unknown, int parse)
{
	char *eq = strchr(word, '=');
	if (eq == NULL || eq[1] == '\0' || !is_ident(word, (size_t)(eq - word)))
		return 0;
	*eq = '\0';
	int k = lookup_name(word, trace_key_name, 0, TRACE_KEY_COUNT);
	if (k < 0) {
		*unknown = 1;
		return 1;
	}
	if (c->present & (UINT32_C(1) << k))
		return 0; /* the same key twice */
	c->present |= UINT32_C(1) << k;
	return !parse || parse_value((enum trace_key)k, eq + 1, &c->v[k]);
}

/* Splits line (modified in place) into an operation and its fields. */
static enum verdict tokenize(char *line, struct call *c, int *unknown_keys)
{
	memset(c, 0, sizeof *c);
	*unknown_keys = 0;
	char *word = next_word(&line);
	if (word == NULL || !is_ident(word, strlen(word)))
		return LINE_MALFORMED;
	int op = lookup_name(word, trace_op_name, 0, TRACE_OP_COUNT);
	while ((word = next_word(&line)) != NULL)
		if (!parse_field(word, c, unknown_keys, op >= 0))
			return LINE_MALFORMED;
	if (op < 0)
		return LINE_UNKNOWN;
	c->op = (enum trace_op)op;
	uint32_t need = required_keys[op];
	return (c->present & need) == need ? LINE_OK : LINE_MALFORMED;
}

/* --------------------------------------------------------------- lines */

static void note_line(uint64_t **list, size_t *n, size_t *cap, size_t limit,
                      uint64_t line)
{
	if (*n >= limit)
		return;
	*list = array_reserve(*list, cap, *n + 1, sizeof **list);
	(*list)[(*n)++] = line;
}

static void malformed(struct analysis *a)
{
	struct lineinfo *L = &a->lines;
	L->malformed++;
	note_line(&L->mal, &L->nmal, &L->capmal, a->opt.limit, L->total);
}

/* A comment; the first version line says the format. */
static void comment(struct analysis *a, const char *t)
{
	static const char prefix[] = TRACE_VERSION_PREFIX;
	uint64_t v;
	a->lines.comments++;
	if (a->version == 0 && strncmp(t, prefix, sizeof prefix - 1) == 0 &&
	    parse_dec(t + sizeof prefix - 1, &v) && v > 0)
		a->version = v > 1000 ? 1000 : (int)v;
}

static void record(struct analysis *a, char *s)
{
	struct lineinfo *L = &a->lines;
	struct call c;
	int unknown_keys;
	switch (tokenize(s, &c, &unknown_keys)) {
	case LINE_MALFORMED:
		malformed(a);
		return;
	case LINE_UNKNOWN:
		L->unknown++;
		note_line(&L->unk, &L->nunk, &L->capunk, a->opt.limit,
		          L->total);
		return;
	case LINE_OK:
		break;
	}
	if (!model_valid(&c)) {
		malformed(a);
		return;
	}
	L->records++;
	L->unknown_keys += unknown_keys != 0;
	order_record(a, &c, L->total);
}

void analysis_line(struct analysis *a, char *s, size_t len)
{
	a->lines.total++;
	if (len > 0 && s[len - 1] == '\n')
		s[--len] = '\0';
	if (len > 0 && s[len - 1] == '\r')
		s[--len] = '\0';
	if (memchr(s, '\0', len) != NULL) {
		malformed(a);
		return;
	}
	const char *t = s + strspn(s, " \t");
	if (*t == '\0')
		a->lines.blank++;
	else if (*t == '#')
		comment(a, t);
	else
		record(a, s);
}

int analysis_read(struct analysis *a, FILE *f)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	errno = 0;
	while ((n = getline(&buf, &cap, f)) != -1)
		analysis_line(a, buf, (size_t)n);
	int err = ferror(f) ? errno : 0;
	free(buf);
	if (err == 0 && errno == ENOMEM)
		die_nomem();
	return err;
}

void analysis_feed(struct analysis *a, const char *data, size_t size)
{
	char *line = NULL;
	size_t cap = 0;
	while (size > 0) {
		const char *nl = memchr(data, '\n', size);
		size_t len = nl ? (size_t)(nl - data) + 1 : size;
		line = array_reserve(line, &cap, len + 1, 1);
		memcpy(line, data, len);
		line[len] = '\0';
		analysis_line(a, line, len);
		data += len;
		size -= len;
	}
	free(line);
}
