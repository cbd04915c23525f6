/*
 * The request-head parser and the /bytes body of bench/httpd-proto.c, on their
 * own: every case a table row, every prefix of every valid head checked to
 * be "incomplete" (never an error, never done too early), and the body
 * generator checked against its byte-at-a-time definition.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "../http/httpd-proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed;
static int failed;

static void expect(int ok, const char *what, const char *detail)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		printf("FAIL %s: %s\n", what, detail);
	}
}

/* ------------------------------------------------------------ heads */

struct head_case {
	const char *head;
	int result; /* HTTP_PARSE_* or an error status */
	int method; /* when done */
	const char *target;
	int keep_alive;
};

static const struct head_case head_cases[] = {
    {"GET /bytes/1 HTTP/1.1\r\nHost: a\r\n\r\n", HTTP_PARSE_DONE,
     HTTP_METHOD_GET, "/bytes/1", 1},
    {"HEAD / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", HTTP_PARSE_DONE,
     HTTP_METHOD_HEAD, "/", 0},
    {"GET / HTTP/1.0\r\n\r\n", HTTP_PARSE_DONE, HTTP_METHOD_GET, "/", 0},
    {"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", HTTP_PARSE_DONE,
     HTTP_METHOD_GET, "/", 1},
    {"GET / HTTP/1.1\r\nHOST:a\r\nconnection: foo, CLOSE\r\n\r\n",
     HTTP_PARSE_DONE, HTTP_METHOD_GET, "/", 0},
    {"PUT /x HTTP/1.1\r\nHost: a\r\n\r\n", HTTP_PARSE_DONE, HTTP_METHOD_OTHER,
     "/x", 1},
    {"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", HTTP_PARSE_DONE,
     HTTP_METHOD_GET, "/", 1},
    {"GET / HTTP/1.1\r\nHost: a\r\nX: \t v \t\r\n\r\n", HTTP_PARSE_DONE,
     HTTP_METHOD_GET, "/", 1},
    {"GET / HTTP/1.1\r\nHost: a\r\nX: caf\xc3\xa9\r\n\r\n", HTTP_PARSE_DONE,
     HTTP_METHOD_GET, "/", 1},
    {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", HTTP_PARSE_DONE,
     HTTP_METHOD_GET, "/", 1},

    {"", HTTP_PARSE_INCOMPLETE, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: a\r\n", HTTP_PARSE_INCOMPLETE, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: a\r\n\r", HTTP_PARSE_INCOMPLETE, 0, NULL, 0},

    {"GET / HTTP/1.1\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1\nHost: a\n\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: a\rX\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: a\r\n\tfold\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\n: a\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: \x01\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: a\x7f\r\n\r\n", 400, 0, NULL, 0},
    {" GET / HTTP/1.1\r\n\r\n", 400, 0, NULL, 0},
    {"GET  / HTTP/1.1\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1 \r\n\r\n", 400, 0, NULL, 0},
    {"GET /\x80 HTTP/1.1\r\nHost: a\r\n\r\n", 400, 0, NULL, 0},
    {"GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\n", HTTP_PARSE_INCOMPLETE, 0, NULL, 0},
    {"GET / HTTP/11\r\n\r\n", 400, 0, NULL, 0},
    {"GET / http/1.1\r\n\r\n", 400, 0, NULL, 0},
    {"GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505, 0, NULL, 0},
    {"GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n", 413, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400, 0, NULL,
     0},
    {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n", 400, 0, NULL,
     0},
    {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999"
     "\r\n\r\n",
     400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n"
     "Content-Length: 1\r\n\r\n",
     400, 0, NULL, 0},
    {"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 501, 0,
     NULL, 0},
    /* Refused before the line ends. */
    {"\x16\x03\x01", 400, 0, NULL, 0},
    {"GET /\r/", 400, 0, NULL, 0},
};

static void test_heads(void)
{
	for (size_t i = 0; i < sizeof(head_cases) / sizeof(head_cases[0]);
	     i++) {
		const struct head_case *c = &head_cases[i];
		struct http_request request;
		size_t length = strlen(c->head);
		char detail[160];
		int result = http_parse_head(c->head, length, &request);
		snprintf(detail, sizeof(detail), "case %zu: %d, expected %d", i,
		         result, c->result);
		expect(result == c->result, "parse", detail);
		if (result != HTTP_PARSE_DONE || c->result != HTTP_PARSE_DONE)
			continue;
		expect(request.head_length == length, "head_length", detail);
		expect((int)request.method == c->method, "method", detail);
		expect(request.target_length == strlen(c->target) &&
		           memcmp(request.target, c->target,
		                  request.target_length) == 0,
		       "target", detail);
		expect(request.keep_alive == (c->keep_alive != 0), "keep_alive",
		       detail);

		/* Every proper prefix is incomplete, never an error: a head
		 * may arrive a byte at a time. */
		int prefixes_ok = 1;
		for (size_t n = 0; n < length && prefixes_ok; n++) {
			/* A copy of exactly n bytes, so that a read past the
			 * end shows under a sanitizer. */
			char *copy = malloc(n + 1);
			if (copy == NULL)
				abort();
			memcpy(copy, c->head, n);
			int partial = http_parse_head(copy, n, &request);
			free(copy);
			if (partial != HTTP_PARSE_INCOMPLETE) {
				snprintf(detail, sizeof(detail),
				         "case %zu prefix %zu: %d", i, n,
				         partial);
				prefixes_ok = 0;
			}
		}
		expect(prefixes_ok, "prefix", detail);

		/* A pipelined request after the head is not part of it. */
		char both[512];
		snprintf(both, sizeof(both), "%sGET /", c->head);
		expect(http_parse_head(both, strlen(both), &request) ==
		               HTTP_PARSE_DONE &&
		           request.head_length == length,
		       "pipelined", detail);
	}
}

/* ------------------------------------------------------------ targets */

static void test_targets(void)
{
	static const struct {
		const char *target;
		int result;
		uint64_t size;
	} cases[] = {
	    {"/bytes/0", 1, 0},
	    {"/bytes/16777216", 1, 16777216},
	    {"/bytes/00000007", 1, 7},
	    {"/bytes/16777217", -1, 0},
	    {"/bytes/123456789", -1, 0},
	    {"/bytes/", -1, 0},
	    {"/bytes/1a", -1, 0},
	    {"/bytes/+1", -1, 0},
	    {"/bytes", 0, 0},
	    {"/", 0, 0},
	    {"/other/1", 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t size = 12345;
		int result = http_bytes_target(cases[i].target,
		                               strlen(cases[i].target), &size);
		expect(result == cases[i].result &&
		           (result != 1 || size == cases[i].size),
		       "bytes target", cases[i].target);
	}
}

/* ------------------------------------------------------------ body */

static void test_body(void)
{
	static const uint64_t offsets[] = {0, 1, 63, 64, 65, 1000};
	static const size_t lengths[] = {0,   1,   2,   63,   64,    65,
	                                 127, 128, 129, 4096, 100000};
	char *buffer = malloc(100000);
	if (buffer == NULL)
		abort();
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		for (size_t j = 0; j < sizeof(lengths) / sizeof(lengths[0]);
		     j++) {
			size_t length = lengths[j];
			http_body_fill(buffer, offsets[i], length);
			int ok = 1;
			for (size_t k = 0; k < length; k++)
				if (buffer[k] != http_body_byte(offsets[i] + k))
					ok = 0;
			ok = ok && http_body_check(buffer, offsets[i],
			                           length) == length;
			expect(ok, "body fill", "offset/length");
			if (length > 10) {
				buffer[10] ^= 1;
				expect(http_body_check(buffer, offsets[i],
				                       length) == 10,
				       "body check", "finds a flipped byte");
			}
		}
	}
	free(buffer);
}

int main(void)
{
	test_heads();
	test_targets();
	test_body();
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
