/*
 * The request-head parser of bench/httpd and the /bytes/N body (see
 * httpd-proto.h).  The grammar is RFC 9112's, kept strict where leniency lets a
 * request mean two things (bare LF, whitespace before a colon, folded
 * lines, conflicting lengths): a server that guesses there is one that
 * request smuggling goes through.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "httpd-proto.h"

#include <string.h>

/* ------------------------------------------------------------ characters */

/* tchar of RFC 9110: the characters of a method or a header name. */
static bool is_token_char(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* field-vchar, SP and HTAB: what a header value may hold (obs-text too). */
static bool is_value_char(unsigned char c)
{
	return c == ' ' || c == '\t' || (c > 0x20 && c != 0x7f);
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* The characters of a request target: visible ASCII only, no space. */
static bool is_target_char(unsigned char c)
{
	return c > 0x20 && c < 0x7f;
}

static unsigned char to_lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* Case-insensitive comparison of the n bytes at s with the literal word. */
static bool equals_word(const char *s, size_t n, const char *word)
{
	if (strlen(word) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (to_lower((unsigned char)s[i]) != (unsigned char)word[i])
			return false;
	return true;
}

/* ------------------------------------------------------------ head parts */

/* The state the header lines add up to, checked once the head is over. */
struct head_state {
	int host_count;
	bool connection_close;
	bool connection_keep_alive;
	bool has_length;
	uint64_t length;
	bool has_transfer_encoding;
};

/* Parses "METHOD SP TARGET SP HTTP/d.d" (without CRLF).  Returns 0 or the
 * error status. */
static int parse_request_line(const char *line, size_t n,
                              struct http_request *request)
{
	size_t i = 0;
	while (i < n && is_token_char((unsigned char)line[i]))
		i++;
	if (i == 0 || i == n || line[i] != ' ')
		return 400;
	if (i == 3 && memcmp(line, "GET", 3) == 0)
		request->method = HTTP_METHOD_GET;
	else if (i == 4 && memcmp(line, "HEAD", 4) == 0)
		request->method = HTTP_METHOD_HEAD;
	else
		request->method = HTTP_METHOD_OTHER;

	size_t target = ++i;
	while (i < n && is_target_char((unsigned char)line[i]))
		i++;
	if (i == target || i == n || line[i] != ' ')
		return 400;
	request->target = line + target;
	request->target_length = i - target;
	/* Only the origin form ("/path"): this server is no proxy. */
	if (line[target] != '/')
		return 400;

	const char *version = line + i + 1;
	size_t version_length = n - i - 1;
	if (version_length != 8 || memcmp(version, "HTTP/", 5) != 0 ||
	    !is_digit((unsigned char)version[5]) || version[6] != '.' ||
	    !is_digit((unsigned char)version[7]))
		return 400;
	if (version[5] != '1' || (version[7] != '0' && version[7] != '1'))
		return 505;
	request->minor_version = version[7] - '0';
	return 0;
}

/* Adds the comma-separated tokens of a Connection value to *state. */
static void parse_connection(const char *value, size_t n,
                             struct head_state *state)
{
	size_t i = 0;
	while (i < n) {
		while (i < n &&
		       (value[i] == ' ' || value[i] == '\t' || value[i] == ','))
			i++;
		size_t start = i;
		while (i < n && value[i] != ',' && value[i] != ' ' &&
		       value[i] != '\t')
			i++;
		if (equals_word(value + start, i - start, "close"))
			state->connection_close = true;
		else if (equals_word(value + start, i - start, "keep-alive"))
			state->connection_keep_alive = true;
	}
}

/* Parses "name: value" (without CRLF).  Returns 0 or the error status. */
static int parse_header_line(const char *line, size_t n,
                             struct head_state *state)
{
	size_t i = 0;
	while (i < n && is_token_char((unsigned char)line[i]))
		i++;
	/* An empty name, a name with a space before the colon, or a line
	 * that starts with whitespace (obsolete folding) are all refused. */
	if (i == 0 || i == n || line[i] != ':')
		return 400;
	const char *name = line;
	size_t name_length = i;

	i++;
	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	size_t end = n;
	while (end > i && (line[end - 1] == ' ' || line[end - 1] == '\t'))
		end--;
	for (size_t j = i; j < end; j++)
		if (!is_value_char((unsigned char)line[j]))
			return 400;
	const char *value = line + i;
	size_t value_length = end - i;

	if (equals_word(name, name_length, "host")) {
		state->host_count++;
	} else if (equals_word(name, name_length, "connection")) {
		parse_connection(value, value_length, state);
	} else if (equals_word(name, name_length, "content-length")) {
		uint64_t length = 0;
		if (value_length == 0 || value_length > 15)
			return 400;
		for (size_t j = 0; j < value_length; j++) {
			if (!is_digit((unsigned char)value[j]))
				return 400;
			length = length * 10 + (uint64_t)(value[j] - '0');
		}
		/* Two lengths that disagree make the framing ambiguous. */
		if (state->has_length && state->length != length)
			return 400;
		state->has_length = true;
		state->length = length;
	} else if (equals_word(name, name_length, "transfer-encoding")) {
		state->has_transfer_encoding = true;
	}
	return 0;
}

/* The checks that need the whole head.  Returns 0 or the error status. */
static int finish_head(const struct head_state *state,
                       struct http_request *request)
{
	/* HTTP/1.1 requires exactly one Host; HTTP/1.0 at most one. */
	if (state->host_count > 1 ||
	    (request->minor_version == 1 && state->host_count == 0))
		return 400;
	/* The server reads no request bodies: framing it cannot follow is
	 * refused before it could be misread as the next request. */
	if (state->has_transfer_encoding)
		return 501;
	if (state->has_length && state->length > 0)
		return 413;
	if (state->connection_close)
		request->keep_alive = false;
	else if (request->minor_version == 1)
		request->keep_alive = true;
	else
		request->keep_alive = state->connection_keep_alive;
	return 0;
}

/* ------------------------------------------------------------ public */

int http_parse_head(const char *buf, size_t length,
                    struct http_request *request)
{
	struct head_state state = {0};
	size_t position = 0;
	bool seen_request_line = false;

	memset(request, 0, sizeof(*request));
	while (position < length) {
		const char *line = buf + position;
		const char *newline = memchr(line, '\n', length - position);
		size_t n = newline != NULL ? (size_t)(newline - line)
		                           : length - position;
		/* A line so far: no control characters but HTAB, and CR
		 * only before LF.  Checked on the unfinished line too, so
		 * that binary junk (a TLS hello, say) is refused at once
		 * instead of waiting for a line end that never comes. */
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)line[i];
			if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f ||
			    (c == '\r' && i + 1 < n))
				return 400;
		}
		if (newline == NULL)
			return HTTP_PARSE_INCOMPLETE;
		if (n == 0 || line[n - 1] != '\r')
			return 400;
		n--; /* without the CR */
		position += n + 2;

		int status;
		if (!seen_request_line) {
			/* RFC 9112 2.2: ignore empty lines before the
			 * request line (left over from a previous body). */
			if (n == 0)
				continue;
			status = parse_request_line(line, n, request);
			seen_request_line = true;
		} else if (n == 0) {
			status = finish_head(&state, request);
			if (status != 0)
				return status;
			request->head_length = position;
			return HTTP_PARSE_DONE;
		} else {
			status = parse_header_line(line, n, &state);
		}
		if (status != 0)
			return status;
	}
	return HTTP_PARSE_INCOMPLETE;
}

const char *http_reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 413:
		return "Content Too Large";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Unknown";
	}
}

int http_bytes_target(const char *target, size_t length, uint64_t *size)
{
	static const char prefix[] = "/bytes/";
	size_t prefix_length = sizeof(prefix) - 1;

	if (length < prefix_length ||
	    memcmp(target, prefix, prefix_length) != 0)
		return 0;
	const char *digits = target + prefix_length;
	size_t count = length - prefix_length;
	/* Eight digits reach 99,999,999, past HTTP_MAX_BODY, and cannot
	 * overflow. */
	if (count == 0 || count > 8)
		return -1;
	uint64_t value = 0;
	for (size_t i = 0; i < count; i++) {
		if (!is_digit((unsigned char)digits[i]))
			return -1;
		value = value * 10 + (uint64_t)(digits[i] - '0');
	}
	if (value > HTTP_MAX_BODY)
		return -1;
	*size = value;
	return 1;
}

void http_body_fill(char *dst, uint64_t offset, size_t length)
{
	size_t done = 0;
	/* Up to the cycle's start, byte by byte; then one cycle, doubled by
	 * copying what is already written (a copy from period-aligned data
	 * keeps the pattern). */
	while (done < length && ((offset + done) & 63) != 0) {
		dst[done] = http_body_byte(offset + done);
		done++;
	}
	size_t start = done;
	while (done < length && done - start < 64) {
		dst[done] = http_body_byte(offset + done);
		done++;
	}
	while (done < length) {
		size_t chunk = done - start;
		if (chunk > length - done)
			chunk = length - done;
		memcpy(dst + done, dst + start, chunk);
		done += chunk;
	}
}

size_t http_body_check(const char *src, uint64_t offset, size_t length)
{
	for (size_t i = 0; i < length; i++)
		if (src[i] != http_body_byte(offset + i))
			return i;
	return length;
}
