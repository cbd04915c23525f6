/*
 * bench/httpd's writer thread: it sends the responses the workers
 * submit, waits for EPOLLOUT on the sockets that are full, frees each
 * response once it is sent (except in pool-single) and hands its
 * connection back to the worker that owns it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "httpd.h"

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

/* ------------------------------------------------------------ writer */

void writer_submit(struct writer *writer, struct response *response)
{
	response->next = NULL;
	pthread_mutex_lock(&writer->queue_lock);
	bool was_empty = writer->queue_head == NULL;
	if (was_empty)
		writer->queue_head = response;
	else
		writer->queue_tail->next = response;
	writer->queue_tail = response;
	pthread_mutex_unlock(&writer->queue_lock);
	/* The writer drains the whole queue on each knock: only the first
	 * response of a batch needs one. */
	if (was_empty)
		wake(writer->wake_fd);
}

/* Hands a response's connection back to its worker, freeing the response
 * here unless its worker must (pool-single). */
static void writer_complete(struct writer *writer, struct response *response,
                            bool failed)
{
	struct conn *conn = response->conn;
	struct worker *owner = conn->owner;

	if (response->registered) {
		/* Removed before the worker may close the socket. */
		epoll_ctl(writer->epoll_fd, EPOLL_CTL_DEL, conn->fd, NULL);
		if (response->prev != NULL)
			response->prev->next = response->next;
		else
			writer->pending = response->next;
		if (response->next != NULL)
			response->next->prev = response->prev;
		response->registered = false;
	}
	if (failed)
		writer->abandoned++;
	else
		writer->written++;

	struct response *returned = NULL;
	if (writer->server->writer_frees)
		heap_free(&writer->heap, response);
	else
		returned = response;

	pthread_mutex_lock(&owner->done_lock);
	conn->returned = returned;
	conn->write_failed = failed;
	conn->done_next = owner->done;
	bool was_empty = owner->done == NULL;
	owner->done = conn;
	pthread_mutex_unlock(&owner->done_lock);
	if (was_empty)
		wake(owner->wake_fd);
}

/* Sends what the socket takes; completes the response when it is all sent
 * or the connection failed, else waits for EPOLLOUT. */
static void writer_send(struct writer *writer, struct response *response)
{
	int fd = response->conn->fd;

	while (response->sent < response->length) {
		ssize_t n =
		    send(fd, response->data + response->sent,
		         response->length - response->sent, MSG_NOSIGNAL);
		if (n > 0) {
			response->sent += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (response->registered)
				return;
			struct epoll_event event = {.events = EPOLLOUT,
			                            .data.ptr = response};
			if (epoll_ctl(writer->epoll_fd, EPOLL_CTL_ADD, fd,
			              &event) != 0) {
				writer_complete(writer, response, true);
				return;
			}
			response->registered = true;
			response->prev = NULL;
			response->next = writer->pending;
			if (writer->pending != NULL)
				writer->pending->prev = response;
			writer->pending = response;
			return;
		}
		/* EPIPE, ECONNRESET: the client went away. */
		writer_complete(writer, response, true);
		return;
	}
	writer_complete(writer, response, false);
}

/* Takes the submitted responses: sends them, or abandons them once the
 * server is stopping. */
static void writer_take_queue(struct writer *writer, bool stopping)
{
	pthread_mutex_lock(&writer->queue_lock);
	struct response *response = writer->queue_head;
	writer->queue_head = NULL;
	writer->queue_tail = NULL;
	pthread_mutex_unlock(&writer->queue_lock);

	while (response != NULL) {
		struct response *next = response->next;
		response->registered = false;
		if (stopping)
			writer_complete(writer, response, true);
		else
			writer_send(writer, response);
		response = next;
	}
}

void *writer_main(void *arg)
{
	struct writer *writer = arg;
	struct server *server = writer->server;
	struct epoll_event events[EVENTS_PER_WAIT];

	for (;;) {
		int n =
		    epoll_wait(writer->epoll_fd, events, EVENTS_PER_WAIT, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			thread_fail(server, "writer: epoll_wait");
			/* Go on: shutdown still needs the writer to hand
			 * every response back. */
			n = 0;
		}
		bool stopping = atomic_load(&server->stopping);
		bool knocked = false;
		for (int i = 0; i < n; i++) {
			if (events[i].data.ptr == &server->wake_tag) {
				drain_wake(writer->wake_fd);
				knocked = true;
			} else {
				writer_send(writer, events[i].data.ptr);
			}
		}
		if (knocked || stopping)
			writer_take_queue(writer, stopping);
		while (stopping && writer->pending != NULL)
			writer_complete(writer, writer->pending, true);
		if (atomic_load(&server->writer_exit))
			break;
	}
	return NULL;
}
