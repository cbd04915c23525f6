/*
 * bench/httpd's worker threads: each accepts connections, reads and parses
 * their requests, builds each response in one allocation and submits it to
 * the writer, then reads the next request once the writer hands the
 * connection back.  Closing connections linger so that an error response
 * reaches the client.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "httpd.h"
#include "httpd-proto.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ worker */

/* Waits for the next readable event of the connection (one-shot, so that
 * the connection is only ever handled by one thread at a time). */
static int conn_arm(struct worker *worker, struct conn *conn)
{
	struct epoll_event event = {.events = EPOLLIN | EPOLLONESHOT,
	                            .data.ptr = conn};
	return epoll_ctl(worker->epoll_fd, EPOLL_CTL_MOD, conn->fd, &event);
}

static void conn_release_buffer(struct worker *worker, struct conn *conn)
{
	heap_free(&worker->heap, conn->buffer);
	conn->buffer = NULL;
	conn->length = 0;
}

static void conn_close(struct worker *worker, struct conn *conn)
{
	/* Closing the descriptor also takes it out of the epoll set. */
	close(conn->fd);
	conn_release_buffer(worker, conn);
	if (conn->state == CONN_LINGERING)
		worker->lingering--;
	if (conn->prev != NULL)
		conn->prev->next = conn->next;
	else
		worker->conns = conn->next;
	if (conn->next != NULL)
		conn->next->prev = conn->prev;
	worker->conn_count--;
	heap_free(&worker->heap, conn);
}

/* After the last response of a connection: shut it for writing and drain
 * what the client still sends, so that the close sends no reset. */
static void conn_linger(struct worker *worker, struct conn *conn)
{
	conn_release_buffer(worker, conn);
	if (worker->stopping || conn->peer_closed ||
	    shutdown(conn->fd, SHUT_WR) != 0) {
		conn_close(worker, conn);
		return;
	}
	conn->state = CONN_LINGERING;
	worker->lingering++;
	conn->linger_deadline = now_ns() + LINGER_NS;
	conn->linger_drained = 0;
	if (conn_arm(worker, conn) != 0)
		conn_close(worker, conn);
}

static void conn_drain(struct worker *worker, struct conn *conn)
{
	char scratch[4096];

	for (;;) {
		ssize_t n = recv(conn->fd, scratch, sizeof(scratch), 0);
		if (n > 0) {
			conn->linger_drained += (size_t)n;
			if (conn->linger_drained > LINGER_BYTES)
				break;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (conn_arm(worker, conn) == 0)
				return;
		}
		break; /* end of stream, error, or drained enough */
	}
	conn_close(worker, conn);
}

/*
 * Builds one response and hands it to the writer.  body_size bytes of the
 * /bytes body follow the head unless head_only; text, when not NULL, is
 * the body instead.  Returns 0, or -1 when no memory could be had, and
 * then the caller closes the connection.
 */
static int conn_respond(struct worker *worker, struct conn *conn, int status,
                        const char *text, uint64_t body_size, bool head_only)
{
	char head[256];
	size_t text_length = text != NULL ? strlen(text) : 0;
	uint64_t content_length = text != NULL ? text_length : body_size;
	int head_length = snprintf(
	    head, sizeof(head),
	    "HTTP/1.1 %d %s\r\n"
	    "Server: shiftpool-httpd\r\n"
	    "Content-Type: %s\r\n"
	    "Content-Length: %" PRIu64 "\r\n"
	    "%s"
	    "Connection: %s\r\n"
	    "\r\n",
	    status, http_reason(status),
	    text != NULL ? "text/plain" : "application/octet-stream",
	    content_length, status == 405 ? "Allow: GET, HEAD\r\n" : "",
	    conn->close_after ? "close" : "keep-alive");
	if (head_length < 0 || (size_t)head_length >= sizeof(head))
		return -1;

	size_t body_length = head_only ? 0 : (size_t)content_length;
	struct response *response =
	    heap_alloc(&worker->heap,
	               sizeof(*response) + (size_t)head_length + body_length);
	if (response == NULL)
		return -1;
	response->conn = conn;
	response->length = (size_t)head_length + body_length;
	response->sent = 0;
	memcpy(response->data, head, (size_t)head_length);
	if (body_length > 0) {
		char *body = response->data + head_length;
		if (text != NULL)
			memcpy(body, text, body_length);
		else
			http_body_fill(body, 0, body_length);
	}
	if (status >= 400)
		worker->error_responses++;
	conn->state = CONN_WRITING;
	writer_submit(&worker->server->writer, response);
	return 0;
}

/* Answers an error that ends the connection. */
static void conn_refuse(struct worker *worker, struct conn *conn, int status)
{
	conn->close_after = true;
	conn->length = 0; /* whatever follows cannot be framed */
	char text[64];
	snprintf(text, sizeof(text), "%d %s\n", status, http_reason(status));
	if (conn_respond(worker, conn, status, text, 0, false) != 0)
		conn_close(worker, conn);
}

/* What a request asks for, decided while its head is still in the
 * request buffer (which the next pipelined request then overwrites). */
struct route {
	enum http_method method;
	bool keep_alive;
	enum { ROUTE_ROOT, ROUTE_BYTES, ROUTE_UNKNOWN, ROUTE_BAD } kind;
	uint64_t size; /* ROUTE_BYTES */
};

static struct route route_of(const struct http_request *request)
{
	struct route route = {.method = request->method,
	                      .keep_alive = request->keep_alive};
	if (request->target_length == 1) {
		route.kind = ROUTE_ROOT; /* "/" */
		return route;
	}
	switch (http_bytes_target(request->target, request->target_length,
	                          &route.size)) {
	case 1:
		route.kind = ROUTE_BYTES;
		break;
	case 0:
		route.kind = ROUTE_UNKNOWN;
		break;
	default:
		route.kind = ROUTE_BAD;
		break;
	}
	return route;
}

/* Answers one parsed request. */
static void conn_answer(struct worker *worker, struct conn *conn,
                        const struct route *route)
{
	bool head_only = route->method == HTTP_METHOD_HEAD;
	int status;

	worker->requests++;
	conn->close_after = !route->keep_alive;
	if (route->method == HTTP_METHOD_OTHER) {
		status = conn_respond(worker, conn, 405,
		                      "405 Method Not Allowed\n", 0, false);
	} else {
		switch (route->kind) {
		case ROUTE_ROOT:
			status = conn_respond(worker, conn, 200,
			                      "shiftpool httpd: GET /bytes/N\n",
			                      0, head_only);
			break;
		case ROUTE_BYTES:
			status = conn_respond(worker, conn, 200, NULL,
			                      route->size, head_only);
			break;
		case ROUTE_UNKNOWN:
			status = conn_respond(worker, conn, 404,
			                      "404 Not Found\n", 0, head_only);
			break;
		default:
			conn_refuse(worker, conn, 400);
			return;
		}
	}
	if (status != 0) {
		/* No memory for the response: a 503 is a small allocation
		 * and may still fit. */
		conn->close_after = true;
		if (conn_respond(worker, conn, 503, "503\n", 0, false) != 0)
			conn_close(worker, conn);
	}
}

/* Serves what the request buffer holds: one request at most, since a
 * connection has one response in flight at a time. */
static void conn_serve(struct worker *worker, struct conn *conn)
{
	if (conn->length == 0) {
		if (conn->peer_closed) {
			conn_close(worker, conn);
			return;
		}
		/* Idle: the buffer goes back until bytes arrive. */
		conn_release_buffer(worker, conn);
		if (conn_arm(worker, conn) != 0)
			conn_close(worker, conn);
		return;
	}

	struct http_request request;
	int parsed = http_parse_head(conn->buffer, conn->length, &request);
	if (parsed == HTTP_PARSE_INCOMPLETE) {
		if (conn->length == REQUEST_BUFFER_SIZE)
			conn_refuse(worker, conn, 431);
		else if (conn->peer_closed)
			conn_refuse(worker, conn, 400);
		else if (conn_arm(worker, conn) != 0)
			conn_close(worker, conn);
		return;
	}
	if (parsed != HTTP_PARSE_DONE) {
		conn_refuse(worker, conn, parsed);
		return;
	}
	/* Pipelined bytes move to the front for the next round. */
	struct route route = route_of(&request);
	conn->length -= request.head_length;
	memmove(conn->buffer, conn->buffer + request.head_length, conn->length);
	conn_answer(worker, conn, &route);
}

static void conn_read(struct worker *worker, struct conn *conn)
{
	if (conn->buffer == NULL) {
		conn->buffer = heap_alloc(&worker->heap, REQUEST_BUFFER_SIZE);
		if (conn->buffer == NULL) {
			conn_close(worker, conn);
			return;
		}
		conn->length = 0;
	}
	while (conn->length < REQUEST_BUFFER_SIZE) {
		ssize_t n = recv(conn->fd, conn->buffer + conn->length,
		                 REQUEST_BUFFER_SIZE - conn->length, 0);
		if (n > 0) {
			conn->length += (size_t)n;
			continue;
		}
		if (n == 0) {
			conn->peer_closed = true;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		conn_close(worker, conn); /* ECONNRESET and the like */
		return;
	}
	conn_serve(worker, conn);
}

/* The writer has handed the connection back. */
static void conn_written(struct worker *worker, struct conn *conn)
{
	heap_free(&worker->heap, conn->returned);
	conn->returned = NULL;
	conn->state = CONN_READING;
	if (conn->write_failed || worker->stopping)
		conn_close(worker, conn);
	else if (conn->close_after)
		conn_linger(worker, conn);
	else
		conn_serve(worker, conn);
}

static void worker_take_done(struct worker *worker)
{
	pthread_mutex_lock(&worker->done_lock);
	struct conn *conn = worker->done;
	worker->done = NULL;
	pthread_mutex_unlock(&worker->done_lock);

	while (conn != NULL) {
		struct conn *next = conn->done_next;
		conn_written(worker, conn);
		conn = next;
	}
}

static void conn_open(struct worker *worker, int fd)
{
	struct conn *conn = heap_alloc(&worker->heap, sizeof(*conn));
	if (conn == NULL) {
		close(fd);
		return;
	}
	memset(conn, 0, sizeof(*conn));
	conn->owner = worker;
	conn->fd = fd;
	conn->state = CONN_READING;
	conn->next = worker->conns;
	if (worker->conns != NULL)
		worker->conns->prev = conn;
	worker->conns = conn;
	worker->conn_count++;
	worker->connections++;

	int one = 1;
	/* Each response leaves in one send; Nagle would only hold back the
	 * tail of a large one. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct epoll_event event = {.events = EPOLLIN | EPOLLONESHOT,
	                            .data.ptr = conn};
	if (epoll_ctl(worker->epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0)
		conn_close(worker, conn);
}

static void worker_listen(struct worker *worker, bool on)
{
	struct server *server = worker->server;

	if (on == worker->listening)
		return;
	if (on) {
		/* EPOLLEXCLUSIVE: a new connection wakes one worker, not
		 * all of them. */
		struct epoll_event event = {.events = EPOLLIN | EPOLLEXCLUSIVE,
		                            .data.ptr = &server->listen_tag};
		if (epoll_ctl(worker->epoll_fd, EPOLL_CTL_ADD,
		              server->listen_fd, &event) != 0) {
			thread_fail(server, "worker: epoll_ctl(listen)");
			return;
		}
	} else {
		epoll_ctl(worker->epoll_fd, EPOLL_CTL_DEL, server->listen_fd,
		          NULL);
	}
	worker->listening = on;
}

static void worker_accept(struct worker *worker)
{
	for (int i = 0; i < ACCEPTS_PER_EVENT; i++) {
		int fd = accept4(worker->server->listen_fd, NULL, NULL,
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			conn_open(worker, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			/* The listening socket stays readable: stop watching
			 * it for a while instead of spinning on it. */
			worker_listen(worker, false);
			worker->listen_resume = now_ns() + ACCEPT_PAUSE_NS;
		}
		return; /* EAGAIN: another worker was faster */
	}
}

/* Stops accepting and closes every connection that has no response with
 * the writer; those close when the writer hands them back. */
static void worker_stop(struct worker *worker)
{
	worker->stopping = true;
	worker_listen(worker, false);
	struct conn *conn = worker->conns;
	while (conn != NULL) {
		struct conn *next = conn->next;
		if (conn->state != CONN_WRITING)
			conn_close(worker, conn);
		conn = next;
	}
}

/* The clock's work: lingering connections past their deadline, and the
 * listening socket after a pause. */
static void worker_tick(struct worker *worker)
{
	uint64_t now = now_ns();

	if (worker->listen_resume != 0 && now >= worker->listen_resume &&
	    !worker->stopping) {
		worker->listen_resume = 0;
		worker_listen(worker, true);
	}
	if (worker->lingering == 0)
		return;
	struct conn *conn = worker->conns;
	while (conn != NULL) {
		struct conn *next = conn->next;
		if (conn->state == CONN_LINGERING &&
		    now >= conn->linger_deadline)
			conn_close(worker, conn);
		conn = next;
	}
}

void *worker_main(void *arg)
{
	struct worker *worker = arg;
	struct server *server = worker->server;
	struct epoll_event events[EVENTS_PER_WAIT];

	worker_listen(worker, true);
	while (!worker->stopping || worker->conn_count > 0) {
		bool timed =
		    worker->lingering > 0 || worker->listen_resume != 0;
		int n = epoll_wait(worker->epoll_fd, events, EVENTS_PER_WAIT,
		                   timed ? TICK_MS : -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			thread_fail(server, "worker: epoll_wait");
			n = 0;
		}
		bool knocked = false;
		for (int i = 0; i < n; i++) {
			void *tag = events[i].data.ptr;
			if (tag == &server->wake_tag) {
				drain_wake(worker->wake_fd);
				knocked = true;
			} else if (tag == &server->listen_tag) {
				if (!worker->stopping)
					worker_accept(worker);
			} else {
				struct conn *conn = tag;
				if (conn->state == CONN_LINGERING)
					conn_drain(worker, conn);
				else if (conn->state == CONN_READING)
					conn_read(worker, conn);
			}
		}
		if (knocked) {
			worker_take_done(worker);
			if (!worker->stopping && atomic_load(&server->stopping))
				worker_stop(worker);
		}
		if (timed)
			worker_tick(worker);
	}
	return NULL;
}
