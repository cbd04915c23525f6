/*
 * examples/echo-server: a small server on a pool, to copy from.
 *
 *   echo-server [PORT]        (default 0: any free port)
 *
 * It listens on 127.0.0.1, prints "listening on 127.0.0.1:PORT" and sends
 * back whatever a client sends.  Each connection takes a buffer from the
 * pool when it is accepted and gives it back when it closes; one thread
 * serves them all with poll(), so the pool is POOL_SINGLE (no lock).  It
 * holds POOL_BLOCKS buffers, the usual need: connections beyond that get
 * theirs from malloc (the fallback), and pool_free() hands those back to
 * free().  SIGTERM or SIGINT stops it: it prints the pool's counters and
 * exits 0 when every buffer went back.
 *
 *   cc echo-server.c $(pkg-config --cflags --libs shiftpool)
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE /* accept4(), ppoll() */

#include <arpa/inet.h>
#include <poll.h>
#include <shiftpool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUFFER_SIZE 4096 /* one read, one pool block */
#define POOL_BLOCKS 32   /* buffers in the pool */
#define MAX_CLIENTS 256  /* connections open at once */

static volatile sig_atomic_t stopping;

static void stop(int signal_number)
{
	(void)signal_number;
	stopping = 1;
}

/* A socket listening on 127.0.0.1:port; prints the port, -1 on error. */
static int listen_on(int port)
{
	struct sockaddr_in addr = {.sin_family = AF_INET,
	                           .sin_port = htons((uint16_t)port),
	                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t length = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&addr, &length) != 0) {
		perror("echo-server");
		return -1;
	}
	printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
	fflush(stdout);
	return fd;
}

/* Sends all of buf; -1 when the client is gone.  A client that sends
 * without reading would stall this one-thread server here: a real one
 * keeps the unsent bytes and waits for POLLOUT. */
static int send_all(int fd, const char *buf, size_t length)
{
	while (length > 0) {
		ssize_t n = send(fd, buf, length, MSG_NOSIGNAL);
		if (n <= 0)
			return -1;
		buf += n;
		length -= (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pollfd fds[1 + MAX_CLIENTS]; /* [0]: the listening socket */
	char *buffers[1 + MAX_CLIENTS];     /* [i]: the buffer of fds[i] */
	nfds_t count = 1;
	char *end = "";
	long port = argc == 2 ? strtol(argv[1], &end, 10) : 0;
	sigset_t blocked, unblocked;

	if (argc > 2 || *end != '\0' || port < 0 || port > 65535) {
		fprintf(stderr, "usage: echo-server [PORT]\n");
		return 2;
	}
	/* The signals are let in only while ppoll() waits, so that a stop
	 * cannot slip in between the check of `stopping` and the wait. */
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigprocmask(SIG_BLOCK, &blocked, &unblocked);
	sigaction(SIGTERM, &(struct sigaction){.sa_handler = stop}, NULL);
	sigaction(SIGINT, &(struct sigaction){.sa_handler = stop}, NULL);

	pool_t *pool = pool_init(BUFFER_SIZE, POOL_BLOCKS, POOL_SINGLE);
	if (pool == NULL) {
		perror("echo-server: pool_init");
		return 1;
	}
	fds[0] = (struct pollfd){.fd = listen_on((int)port)};
	if (fds[0].fd < 0)
		return 1;

	while (!stopping) {
		fds[0].events = count < 1 + MAX_CLIENTS ? POLLIN : 0;
		if (ppoll(fds, count, NULL, &unblocked) < 0)
			continue; /* EINTR: a signal came */
		if (fds[0].revents & POLLIN) {
			int fd = accept4(fds[0].fd, NULL, NULL, SOCK_CLOEXEC);
			char *buffer =
			    fd >= 0 ? pool_malloc(pool, BUFFER_SIZE) : NULL;
			if (buffer != NULL) {
				fds[count] = (struct pollfd){fd, POLLIN, 0};
				buffers[count++] = buffer;
			} else if (fd >= 0) {
				close(fd);
			}
		}
		for (nfds_t i = 1; i < count; i++) {
			if (fds[i].revents == 0)
				continue;
			ssize_t n = recv(fds[i].fd, buffers[i], BUFFER_SIZE, 0);
			if (n > 0 &&
			    send_all(fds[i].fd, buffers[i], (size_t)n) == 0)
				continue;
			/* The client closed, or failed: its buffer goes back,
			 * and the last connection moves into its place. */
			close(fds[i].fd);
			pool_free(pool, buffers[i]);
			count--;
			fds[i] = fds[count];
			buffers[i] = buffers[count];
			i--; /* so that the moved one is served too */
		}
	}

	for (nfds_t i = 1; i < count; i++) {
		close(fds[i].fd);
		pool_free(pool, buffers[i]);
	}
	close(fds[0].fd);
	pool_stats_t stats;
	pool_stats(pool, &stats);
	pool_stats_print(pool, stdout, POOL_STATS_TEXT);
	pool_destroy(pool);
	int clean =
	    stats.in_use == 0 && stats.fallback_frees == stats.fallback_allocs;
	return clean ? 0 : 1;
}
