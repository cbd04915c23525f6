/*
 * The test client of bench/httpd: runs a fixed set of scenarios against
 * a server on 127.0.0.1 and checks every answer (status, Connection,
 * Content-Length, the body byte by byte, and the close that must follow
 * an error).
 *
 *   httpd-client --port=N [--seed=N] [--random=N]
 *   httpd-client --check-file=FILE --size=N
 *
 * The second form checks that FILE holds exactly the N-byte body of
 * /bytes/N (the curl-pool test uses it).  Every socket has a receive and
 * send timeout, so a silent server fails a scenario instead of hanging.
 * Prints one line per scenario and a closing "N passed, N failed" line;
 * exits 0 when nothing failed.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "../http/httpd-proto.h"
#include "../http/httpd-util.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* ------------------------------------------------------------ limits */

#define IO_TIMEOUT_SECONDS      10
#define MAX_HEAD                8192
#define READ_BUFFER             65536
#define MANY_CONNECTIONS        64
#define DEFAULT_RANDOM_REQUESTS 200

/* ------------------------------------------------------------ types */

/* A connection with its read-ahead: pipelined answers arrive together. */
struct client {
	int fd;
	size_t start; /* unread bytes are buffer[start..end) */
	size_t end;
	char buffer[READ_BUFFER];
};

/* What an answer must be. */
struct expect {
	int status;
	bool head;       /* answer to HEAD: no body follows */
	bool bytes;      /* the body is the /bytes body (else any text) */
	uint64_t length; /* the Content-Length, when bytes */
	bool close;      /* Connection: close, and then end of stream */
};

static int port;
static uint64_t requests;
static int passed;
static int failed;
static char failure[512]; /* why the current scenario failed */

/* ------------------------------------------------------------ helpers */

/* Records the first reason of a failure; returns -1 for the caller. */
static int fail(const char *format, ...)
{
	if (failure[0] == '\0') {
		va_list args;
		va_start(args, format);
		vsnprintf(failure, sizeof(failure), format, args);
		va_end(args);
	}
	return -1;
}

static uint64_t random_state;

/* xorshift64*: fixed seeds give the same run every time. */
static uint64_t random_next(void)
{
	random_state ^= random_state >> 12;
	random_state ^= random_state << 25;
	random_state ^= random_state >> 27;
	return random_state * 2685821657736338717u;
}

static int client_open(struct client *client)
{
	client->start = client->end = 0;
	client->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (client->fd < 0)
		return fail("socket: %s", strerror(errno));
	struct timeval timeout = {.tv_sec = IO_TIMEOUT_SECONDS};
	int one = 1;
	setsockopt(client->fd, SOL_SOCKET, SO_RCVTIMEO, &timeout,
	           sizeof(timeout));
	setsockopt(client->fd, SOL_SOCKET, SO_SNDTIMEO, &timeout,
	           sizeof(timeout));
	setsockopt(client->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct sockaddr_in address = {
	    .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	if (connect(client->fd, (struct sockaddr *)&address, sizeof(address)) !=
	    0) {
		int saved = errno;
		close(client->fd);
		client->fd = -1;
		return fail("connect: %s", strerror(saved));
	}
	return 0;
}

static void client_close(struct client *client)
{
	if (client->fd >= 0)
		close(client->fd);
	client->fd = -1;
}

static int client_send(struct client *client, const char *data, size_t length)
{
	while (length > 0) {
		ssize_t n = send(client->fd, data, length, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fail("send: %s", strerror(errno));
		data += n;
		length -= (size_t)n;
	}
	return 0;
}

static int client_send_text(struct client *client, const char *text)
{
	return client_send(client, text, strlen(text));
}

/* Reads more into the buffer; returns the bytes read, 0 at end of stream,
 * -1 on error or timeout. */
static ssize_t client_fill(struct client *client)
{
	if (client->start == client->end)
		client->start = client->end = 0;
	if (client->end == sizeof(client->buffer)) {
		memmove(client->buffer, client->buffer + client->start,
		        client->end - client->start);
		client->end -= client->start;
		client->start = 0;
	}
	for (;;) {
		ssize_t n = recv(client->fd, client->buffer + client->end,
		                 sizeof(client->buffer) - client->end, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			client->end += (size_t)n;
		return n;
	}
}

/* Finds the value of a header in a head; returns its length or -1. */
static int find_header(const char *head, const char *name, const char **value)
{
	size_t name_length = strlen(name);
	const char *line = strstr(head, "\r\n");
	while (line != NULL && line[2] != '\r') {
		line += 2;
		if (strncasecmp(line, name, name_length) == 0 &&
		    line[name_length] == ':') {
			const char *v = line + name_length + 1;
			while (*v == ' ')
				v++;
			const char *end = strstr(v, "\r\n");
			*value = v;
			return (int)(end - v);
		}
		line = strstr(line, "\r\n");
	}
	return -1;
}

/* Reads one answer and checks it against *expect. */
static int read_answer(struct client *client, const struct expect *expect)
{
	char head[MAX_HEAD + 1];
	size_t head_length = 0;

	/* The head, up to and with its blank line. */
	for (;;) {
		size_t available = client->end - client->start;
		const char *data = client->buffer + client->start;
		for (size_t i = 0; i < available; i++) {
			if (head_length == MAX_HEAD)
				return fail("answer head over %d bytes",
				            MAX_HEAD);
			head[head_length++] = data[i];
			if (head_length >= 4 && memcmp(head + head_length - 4,
			                               "\r\n\r\n", 4) == 0) {
				client->start += i + 1;
				goto have_head;
			}
		}
		client->start = client->end;
		ssize_t n = client_fill(client);
		if (n == 0)
			return fail("end of stream before an answer (expected "
			            "%d)",
			            expect->status);
		if (n < 0)
			return fail("reading an answer: %s", strerror(errno));
	}
have_head:
	head[head_length] = '\0';
	requests++;

	int status = 0;
	if (sscanf(head, "HTTP/1.1 %3d ", &status) != 1)
		return fail("bad status line: %.40s", head);
	if (status != expect->status)
		return fail("status %d, expected %d", status, expect->status);

	const char *value;
	int n = find_header(head, "Content-Length", &value);
	if (n <= 0)
		return fail("no Content-Length");
	uint64_t length = strtoull(value, NULL, 10);
	if (expect->bytes && length != expect->length)
		return fail("Content-Length %" PRIu64 ", expected %" PRIu64,
		            length, expect->length);

	n = find_header(head, "Connection", &value);
	bool closes = n == 5 && strncmp(value, "close", 5) == 0;
	bool keeps = n == 10 && strncmp(value, "keep-alive", 10) == 0;
	if (closes != expect->close || (!closes && !keeps))
		return fail("Connection: %.*s, expected %s", n < 0 ? 0 : n,
		            n < 0 ? "" : value,
		            expect->close ? "close" : "keep-alive");

	/* The body, checked as it arrives. */
	uint64_t offset = 0;
	uint64_t body_length = expect->head ? 0 : length;
	while (offset < body_length) {
		if (client->start == client->end) {
			ssize_t got = client_fill(client);
			if (got == 0)
				return fail("end of stream at byte %" PRIu64
				            " of %" PRIu64,
				            offset, body_length);
			if (got < 0)
				return fail("reading the body: %s",
				            strerror(errno));
		}
		size_t chunk = client->end - client->start;
		if (chunk > body_length - offset)
			chunk = (size_t)(body_length - offset);
		if (expect->bytes) {
			const char *data = client->buffer + client->start;
			size_t good = http_body_check(data, offset, chunk);
			if (good != chunk)
				return fail("body byte %" PRIu64 " is wrong",
				            offset + good);
		}
		client->start += chunk;
		offset += chunk;
	}
	return 0;
}

/* After an answer with Connection: close, the server must end the stream
 * (an orderly close, not a reset). */
static int expect_end(struct client *client)
{
	if (client->start != client->end)
		return fail("%zu bytes after the last answer",
		            client->end - client->start);
	ssize_t n = client_fill(client);
	if (n > 0)
		return fail("bytes after the last answer");
	if (n < 0)
		return fail("no end of stream after close: %s",
		            strerror(errno));
	return 0;
}

static void get_request(char *request, size_t size, const char *method,
                        uint64_t length, bool close)
{
	snprintf(request, size,
	         "%s /bytes/%" PRIu64 " HTTP/1.1\r\n"
	         "Host: 127.0.0.1\r\n"
	         "User-Agent: httpd-client\r\n"
	         "%s"
	         "\r\n",
	         method, length, close ? "Connection: close\r\n" : "");
}

/* One request for /bytes/length on an open connection, and its check. */
static int exchange(struct client *client, bool head, uint64_t length,
                    bool close)
{
	char request[256];
	get_request(request, sizeof(request), head ? "HEAD" : "GET", length,
	            close);
	if (client_send_text(client, request) != 0)
		return -1;
	struct expect expect = {.status = 200,
	                        .head = head,
	                        .bytes = true,
	                        .length = length,
	                        .close = close};
	if (read_answer(client, &expect) != 0)
		return -1;
	return close ? expect_end(client) : 0;
}

/* Sends raw bytes on a new connection, then ends the sending side if
 * shut_write, and expects one answer after which the server closes. */
static int last_answer(const char *raw, size_t length, bool shut_write,
                       const struct expect *expect)
{
	struct client *client = malloc(sizeof(*client));
	if (client == NULL)
		return fail("out of memory");
	int result = client_open(client);
	if (result == 0)
		result = client_send(client, raw, length);
	if (result == 0 && shut_write && shutdown(client->fd, SHUT_WR) != 0)
		result = fail("shutdown: %s", strerror(errno));
	if (result == 0)
		result = read_answer(client, expect);
	if (result == 0)
		result = expect_end(client);
	client_close(client);
	free(client);
	return result;
}

/* Sends raw bytes on a new connection and expects one error answer that
 * closes the connection. */
static int refused(const char *raw, size_t length, int status)
{
	struct expect expect = {.status = status, .close = true};
	return last_answer(raw, length, false, &expect);
}

static int refused_text(const char *raw, int status)
{
	return refused(raw, strlen(raw), status);
}

/* ------------------------------------------------------------ scenarios */

static int scenario_keep_alive(void)
{
	static const uint64_t sizes[] = {
	    0,    1,    2,    63,   64,    65,    100,    1000,    3800,
	    4000, 4095, 4096, 4097, 16384, 65536, 100000, 1048576, 16777216,
	};
	struct client client;
	if (client_open(&client) != 0)
		return -1;
	int result = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && result == 0;
	     i++)
		result = exchange(&client, false, sizes[i], false);
	for (size_t i = 0; i < 4 && result == 0; i++)
		result = exchange(&client, true, sizes[i * 5], false);
	if (result == 0)
		result = exchange(&client, false, 10, true);
	client_close(&client);
	return result;
}

static int scenario_paths(void)
{
	struct client client;
	if (client_open(&client) != 0)
		return -1;
	static const struct {
		const char *request;
		int status;
	} cases[] = {
	    {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 200},
	    {"GET /nothing HTTP/1.1\r\nHost: a\r\n\r\n", 404},
	    {"GET /bytes HTTP/1.1\r\nHost: a\r\n\r\n", 404},
	    {"HEAD /missing HTTP/1.1\r\nHost: a\r\n\r\n", 404},
	    {"DELETE /bytes/1 HTTP/1.1\r\nHost: a\r\n\r\n", 405},
	    {"get /bytes/1 HTTP/1.1\r\nHost: a\r\n\r\n", 405},
	    {"GET /bytes/3 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
	     200},
	    {"\r\nGET /bytes/3 HTTP/1.1\r\nhost: a\r\nX-Empty:\r\n\r\n", 200},
	    {"GET /bytes/3 HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, "
	     "keep-alive\r\n\r\n",
	     200},
	};
	int result = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && result == 0;
	     i++) {
		result = client_send_text(&client, cases[i].request);
		bool head = strncmp(cases[i].request, "HEAD", 4) == 0;
		struct expect expect = {
		    .status = cases[i].status,
		    .head = head,
		    .bytes = cases[i].status == 200 &&
		             strstr(cases[i].request, "/bytes/3") != NULL,
		    .length = 3};
		if (result == 0)
			result = read_answer(&client, &expect);
		if (result != 0)
			fail("case %zu", i);
	}
	if (result == 0)
		result = exchange(&client, false, 7, false);
	client_close(&client);
	return result;
}

static int scenario_pipelined(void)
{
	enum { COUNT = 24 };
	char requests_text[COUNT * 256];
	size_t length = 0;
	for (int i = 0; i < COUNT; i++) {
		/* Padded, so that heads straddle the server's buffer. */
		length += (size_t)snprintf(
		    requests_text + length, sizeof(requests_text) - length,
		    "%s /bytes/%d HTTP/1.1\r\nHost: a\r\nX-Pad: %.*s\r\n%s\r\n",
		    i % 3 == 2 ? "HEAD" : "GET", i * 100, 120 + i,
		    "0123456789012345678901234567890123456789"
		    "0123456789012345678901234567890123456789"
		    "0123456789012345678901234567890123456789"
		    "0123456789012345678901234567890123456789",
		    i == COUNT - 1 ? "Connection: close\r\n" : "");
	}
	/* The 24 heads exceed one request buffer: the server must take them
	 * a buffer at a time. */
	if (length <= 4096)
		return fail("pipelined requests fit one buffer (%zu)", length);
	struct client client;
	if (client_open(&client) != 0)
		return -1;
	int result = client_send(&client, requests_text, length);
	for (int i = 0; i < COUNT && result == 0; i++) {
		struct expect expect = {.status = 200,
		                        .head = i % 3 == 2,
		                        .bytes = true,
		                        .length = (uint64_t)i * 100,
		                        .close = i == COUNT - 1};
		result = read_answer(&client, &expect);
	}
	if (result == 0)
		result = expect_end(&client);
	client_close(&client);
	return result;
}

static int scenario_close(void)
{
	int result = 0;
	for (int i = 0; i < 20 && result == 0; i++) {
		struct client client;
		if (client_open(&client) != 0)
			return -1;
		result = exchange(&client, i % 4 == 3, (uint64_t)i * 977, true);
		client_close(&client);
	}
	return result;
}

static int scenario_http10(void)
{
	struct client client;
	if (client_open(&client) != 0)
		return -1;
	/* HTTP/1.0 closes unless asked to keep alive; Host is optional. */
	int result = client_send_text(
	    &client,
	    "GET /bytes/10 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	struct expect expect = {
	    .status = 200, .bytes = true, .length = 10, .close = false};
	if (result == 0)
		result = read_answer(&client, &expect);
	if (result == 0)
		result =
		    client_send_text(&client, "GET /bytes/11 HTTP/1.0\r\n\r\n");
	expect.length = 11;
	expect.close = true;
	if (result == 0)
		result = read_answer(&client, &expect);
	if (result == 0)
		result = expect_end(&client);
	client_close(&client);
	return result;
}

static int scenario_malformed(void)
{
	static const struct {
		const char *request;
		int status;
	} cases[] = {
	    {"GARBAGE\r\n\r\n", 400},
	    {"GET /bytes/10\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/1.1\r\n\r\n", 400}, /* no Host */
	    {"GET /bytes/10 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/1.1\r\nHost a\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/1.1\r\nHost : a\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/1.1\nHost: a\n\n", 400},
	    {"GET /bytes/10 HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400},
	    {"GET  /bytes/10 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET bytes/10 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET http://a/bytes/10 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/10 HTTPS/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/1.1 \r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/1.10\r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/2.0\r\nHost: a\r\n\r\n", 505},
	    {"GET /bytes/10 HTTP/0.9\r\nHost: a\r\n\r\n", 505},
	    {"GET /bytes/1x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/-1 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/ HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/16777217 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/123456789 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/10?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/1.1\r\nHost: a\x01\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/1.1\r\n: empty\r\nHost: a\r\n\r\n", 400},
	    {"GET /bytes/10 HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n",
	     400},
	    {"GET /bytes/10 HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n"
	     "Content-Length: 2\r\n\r\n",
	     400},
	    {"POST /bytes/1 HTTP/1.1\r\nHost: a\r\nContent-Length: "
	     "5\r\n\r\nhello",
	     413},
	    {"POST /bytes/1 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
	     "chunked\r\n\r\n0\r\n\r\n",
	     501},
	    {"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400},
	    /* Found bad before the head is over: no blank line needed. */
	    {"GET /\rX", 400},
	    {"GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n", 400},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (refused_text(cases[i].request, cases[i].status) != 0) {
			char what[64];
			snprintf(what, sizeof(what), "%s", failure);
			failure[0] = '\0';
			return fail("case %zu (%.20s...): %s", i,
			            cases[i].request, what);
		}
	}
	/* A NUL inside a header. */
	static const char nul[] =
	    "GET /bytes/10 HTTP/1.1\r\nHost: a\0b\r\n\r\n";
	return refused(nul, sizeof(nul) - 1, 400);
}

/* A request cut short by the client's end of stream gets 400. */
static int scenario_truncated(void)
{
	static const char cut[] = "GET /bytes/10 HTTP/1.1\r\nHo";
	struct expect expect = {.status = 400, .close = true};
	int result = last_answer(cut, sizeof(cut) - 1, true, &expect);
	if (result != 0)
		return result;

	/* A complete request then the end of stream: answered, then
	 * closed. */
	static const char whole[] = "GET /bytes/5 HTTP/1.1\r\nHost: a\r\n\r\n";
	struct expect answer = {.status = 200, .bytes = true, .length = 5};
	return last_answer(whole, sizeof(whole) - 1, true, &answer);
}

/* Heads larger than the request buffer get 431 and a clean close, however
 * much the client still sends. */
static int scenario_oversized(void)
{
	static const size_t sizes[] = {4097, 5000, 65536, 200000};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i];
		char *raw = malloc(size);
		if (raw == NULL)
			return fail("out of memory");
		static const char start[] =
		    "GET /bytes/1 HTTP/1.1\r\nHost: a\r\nX-Fill: ";
		memcpy(raw, start, sizeof(start) - 1);
		memset(raw + sizeof(start) - 1, 'x', size - sizeof(start) + 1);
		/* The largest one is complete, the others are not. */
		if (i == sizeof(sizes) / sizeof(sizes[0]) - 1)
			memcpy(raw + size - 4, "\r\n\r\n", 4);
		int result = refused(raw, size, 431);
		free(raw);
		if (result != 0)
			return result;
	}
	/* A head of exactly one buffer that ends on its last byte fits. */
	char raw[4096];
	static const char start[] =
	    "GET /bytes/2 HTTP/1.1\r\nHost: a\r\nX-Fill: ";
	memcpy(raw, start, sizeof(start) - 1);
	memset(raw + sizeof(start) - 1, 'y', sizeof(raw) - sizeof(start) + 1);
	memcpy(raw + sizeof(raw) - 23, "\r\nConnection: close\r\n\r\n", 23);
	struct expect expect = {
	    .status = 200, .bytes = true, .length = 2, .close = true};
	return last_answer(raw, sizeof(raw), false, &expect);
}

/* Many connections at once, each with a request in flight. */
static int scenario_many(void)
{
	struct client *clients = calloc(MANY_CONNECTIONS, sizeof(*clients));
	if (clients == NULL)
		return fail("out of memory");
	int opened = 0;
	int result = 0;
	for (; opened < MANY_CONNECTIONS && result == 0; opened++) {
		result = client_open(&clients[opened]);
		if (result != 0)
			break;
		char request[256];
		get_request(request, sizeof(request), "GET",
		            (uint64_t)opened * 1111, false);
		result = client_send_text(&clients[opened], request);
	}
	for (int i = 0; i < opened && result == 0; i++) {
		struct expect expect = {
		    .status = 200, .bytes = true, .length = (uint64_t)i * 1111};
		result = read_answer(&clients[i], &expect);
	}
	for (int i = 0; i < opened; i++)
		client_close(&clients[i]);
	free(clients);
	return result;
}

/* Clients that go away: mid-body, mid-head, right after connecting.  The
 * server must carry on. */
static int scenario_abandon(void)
{
	for (int i = 0; i < 3; i++) {
		struct client client;
		if (client_open(&client) != 0)
			return -1;
		if (i == 0) {
			char request[256];
			get_request(request, sizeof(request), "GET", 16777216,
			            false);
			if (client_send_text(&client, request) != 0 ||
			    client_fill(&client) <= 0) {
				client_close(&client);
				return fail("no start of a large answer");
			}
		} else if (i == 1) {
			client_send_text(&client, "GET /bytes/1 HTT");
		}
		client_close(&client);
	}
	struct client client;
	if (client_open(&client) != 0)
		return -1;
	int result = exchange(&client, false, 12345, true);
	client_close(&client);
	return result;
}

/* Seeded random traffic: sizes spread over orders of magnitude, methods,
 * keep-alive or not, and now and then a malformed request. */
static int scenario_random(int count)
{
	struct client client = {.fd = -1};
	int result = 0;
	for (int i = 0; i < count && result == 0; i++) {
		if (client.fd < 0 && client_open(&client) != 0)
			return -1;
		uint64_t r = random_next();
		if (r % 16 == 0) {
			/* Malformed: refused, on a connection of its own. */
			result = refused_text("GET /bytes/1 HTTP/1.1\r\n"
			                      "Host: a\r\nX:\x7f\r\n\r\n",
			                      400);
			continue;
		}
		unsigned magnitude = (unsigned)(r >> 8) % 19; /* up to 256K */
		uint64_t size = (r >> 16) % ((uint64_t)1 << magnitude);
		bool head = (r >> 40) % 8 == 0;
		bool close = (r >> 44) % 5 == 0;
		result = exchange(&client, head, size, close);
		if (close)
			client_close(&client);
	}
	client_close(&client);
	return result;
}

/* ------------------------------------------------------------ main */

static void run(const char *name, int (*scenario)(void))
{
	uint64_t before = requests;
	failure[0] = '\0';
	if (scenario() == 0) {
		passed++;
		printf("ok   %-12s (%" PRIu64 " answers checked)\n", name,
		       requests - before);
	} else {
		failed++;
		printf("FAIL %-12s %s\n", name, failure);
	}
	fflush(stdout);
}

static int random_count = DEFAULT_RANDOM_REQUESTS;

static int scenario_random_default(void)
{
	return scenario_random(random_count);
}

/* Checks that a file holds exactly the body of /bytes/size. */
static int check_file(const char *path, uint64_t size)
{
	FILE *file = fopen(path, "rb");
	if (file == NULL) {
		fprintf(stderr, "httpd-client: %s: %s\n", path,
		        strerror(errno));
		return 1;
	}
	char buffer[65536];
	uint64_t offset = 0;
	size_t n;
	int status = 0;
	while ((n = fread(buffer, 1, sizeof(buffer), file)) > 0) {
		size_t good = http_body_check(buffer, offset, n);
		if (good != n || offset + n > size) {
			fprintf(
			    stderr,
			    "httpd-client: %s: wrong byte at offset %" PRIu64
			    "\n",
			    path, offset + (good != n ? good : size - offset));
			status = 1;
			break;
		}
		offset += n;
	}
	if (status == 0 && offset != size) {
		fprintf(stderr,
		        "httpd-client: %s: %" PRIu64 " bytes, expected %" PRIu64
		        "\n",
		        path, offset, size);
		status = 1;
	}
	fclose(file);
	if (status == 0)
		printf("httpd-client: %s: %" PRIu64 " bytes, all correct\n",
		       path, size);
	return status;
}

static void usage(FILE *stream)
{
	fprintf(stream, "usage: httpd-client --port=N [--seed=N] [--random=N]\n"
	                "       httpd-client --check-file=FILE --size=N\n");
}

int main(int argc, char **argv)
{
	static const struct option long_options[] = {
	    {"port", required_argument, NULL, 'p'},
	    {"seed", required_argument, NULL, 's'},
	    {"random", required_argument, NULL, 'r'},
	    {"check-file", required_argument, NULL, 'f'},
	    {"size", required_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *check_path = NULL;
	uint64_t check_size = 0;
	random_state = 20240611;

	for (int c; (c = next_option(argc, argv, long_options, usage)) != -1;) {
		switch (c) {
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			random_state = strtoull(optarg, NULL, 10) | 1;
			break;
		case 'r':
			random_count = atoi(optarg);
			break;
		case 'f':
			check_path = optarg;
			break;
		case 'n':
			check_size = strtoull(optarg, NULL, 10);
			break;
		default:
			return 2;
		}
	}
	if (check_path != NULL)
		return check_file(check_path, check_size);
	if (port <= 0 || port > 65535 || random_count < 0 ||
	    random_count > 100000) {
		usage(stderr);
		return 2;
	}

	run("keep-alive", scenario_keep_alive);
	run("paths", scenario_paths);
	run("pipelined", scenario_pipelined);
	run("close", scenario_close);
	run("http/1.0", scenario_http10);
	run("malformed", scenario_malformed);
	run("truncated", scenario_truncated);
	run("oversized", scenario_oversized);
	run("many", scenario_many);
	run("abandon", scenario_abandon);
	run("random", scenario_random_default);
	printf("httpd-client: %" PRIu64 " answers checked\n", requests);
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
