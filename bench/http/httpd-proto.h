/*
 * The little HTTP/1.1 of bench/httpd: a request-head parser for the
 * server, the body that the server generates for GET /bytes/N, and
 * the check of that body that the test client and the curl-pool test use.
 *
 * The parser works on the whole head received so far, every time more
 * arrives: heads are at most one request buffer (a few KiB), so parsing
 * again is cheaper than keeping a resumable state, and a bad byte is found
 * as soon as it arrives instead of when the buffer is full.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_HTTPD_PROTO_H
#define BENCH_HTTPD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest body GET /bytes/N serves: 16 MiB. */
#define HTTP_MAX_BODY ((uint64_t)16 << 20)

/* What http_parse_head() found. */
enum http_parse {
	HTTP_PARSE_INCOMPLETE = 0, /* valid so far; the blank line is missing */
	HTTP_PARSE_DONE = 1        /* a complete, valid head */
	/* else: the HTTP status to answer with (400, 413, 501, 505) */
};

enum http_method {
	HTTP_METHOD_GET,
	HTTP_METHOD_HEAD,
	HTTP_METHOD_OTHER /* a well-formed method this server does not serve */
};

/*
 * A parsed request head.  target points into the parsed buffer and is not
 * NUL-terminated.  Invariant after HTTP_PARSE_DONE: head_length covers the
 * request line, the header lines and the blank line, and the request has
 * no body (the parser refuses heads that announce one).
 */
struct http_request {
	enum http_method method;
	const char *target;
	size_t target_length;
	int minor_version; /* HTTP/1.minor_version: 0 or 1 */
	bool keep_alive;   /* the connection stays open after the answer */
	size_t head_length;
};

/*
 * Parses the request head at the start of buf[0..length).  Returns
 * HTTP_PARSE_DONE and fills *request, HTTP_PARSE_INCOMPLETE when the head
 * has not ended yet (no error so far), or the status code of the error
 * response.  A caller whose buffer is full on HTTP_PARSE_INCOMPLETE answers
 * 431 itself.
 */
int http_parse_head(const char *buf, size_t length,
                    struct http_request *request);

/* Returns the reason phrase of a status code ("OK", "Bad Request"...). */
const char *http_reason(int status);

/*
 * Parses the target "/bytes/N": returns 1 and sets *size for a decimal N
 * of at most HTTP_MAX_BODY (no sign, no leading "+"), 0 when the target is
 * not of that form at all, -1 when it is /bytes/ followed by anything else.
 */
int http_bytes_target(const char *target, size_t length, uint64_t *size);

/*
 * The body of /bytes/N: byte i is http_body_byte(i), a 64-character cycle,
 * so a short body shows which part went missing or was swapped.
 */
static inline char http_body_byte(uint64_t offset)
{
	static const char cycle[64] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "0123456789-_";
	return cycle[offset & 63];
}

/* Writes bytes [offset, offset + length) of the body to dst. */
void http_body_fill(char *dst, uint64_t offset, size_t length);

/* Returns length when src holds bytes [offset, offset + length) of the
 * body, else the index of the first wrong byte. */
size_t http_body_check(const char *src, uint64_t offset, size_t length);

#endif /* BENCH_HTTPD_PROTO_H */
