/*
 * examples/adapters/libevent-pool-test: libevent on a pool set, with a
 * real workload.
 *
 * In each mode of the set, in a process of its own (libevent takes its
 * allocator once, before its first call), libevent_pool_install() hands
 * libevent a fresh set and one event base runs
 *
 *   - timers: a thousand one-shot timers of 0 to 19 ms, which must each
 *     fire once and in the order of their timeouts, and a persistent
 *     timer that stops itself after fifty ticks;
 *   - an echo over a socketpair: two bufferevents, one sending ten
 *     thousand messages of 1 to 4096 bytes (about 20 MB) with at most
 *     256 KiB on the way, the other sending back whatever it reads; every
 *     byte that comes back is checked;
 *   - evbuffer churn: buffers filled with printf'd lines, a prepended
 *     header and a referenced trailer, moved, searched, pulled up, read
 *     back line by line and through reserved space, each result checked.
 *
 * Then libevent_global_shutdown(): the set must have served every
 * allocation libevent made, with no fallback, and got all of them back.
 * Exits 0, 1 on a failed check.
 *
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include "adapter-test.h"
#include "libevent-pool.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ limits */

#define TIMERS          1000
#define TIMER_SPREAD_MS 20
#define TICKS           50
#define MESSAGES        10000
#define MESSAGE_MAX     4096
#define WINDOW          ((size_t)256 << 10) /* bytes sent, not yet back */
#define ROUNDS          3000                /* of evbuffer churn */
#define RESERVE_MAX     65536

/* 16 B to 1 MiB, each class with room for more than libevent holds at
 * once here (the 1 KiB class holds most chains). */
#define SET_MIN_BLOCK   16
#define SET_MAX_BLOCK   ((size_t)1 << 20)
#define SET_CLASS_BYTES ((size_t)64 << 20)

/* ------------------------------------------------------------ timers */

struct timers;

struct timer {
	struct timers *timers;
	struct event *event;
	int timeout_ms;
	int fired;
};

/* Invariant: fired is the sum of the timers' fired counts;
 * last_timeout_ms is the timeout of the latest timer to fire, and
 * out_of_order counts the timers that fired after one of a longer
 * timeout. */
struct timers {
	struct event_base *base;
	struct timer timer[TIMERS];
	int fired;
	int last_timeout_ms;
	int out_of_order;
	struct event *ticker;
	int ticks;
};

static void timer_fired(evutil_socket_t fd, short what, void *arg)
{
	struct timer *timer = arg;
	struct timers *timers = timer->timers;

	(void)fd;
	(void)what;
	timer->fired++;
	timers->fired++;
	if (timer->timeout_ms < timers->last_timeout_ms)
		timers->out_of_order++;
	timers->last_timeout_ms = timer->timeout_ms;
}

static void ticker_ticked(evutil_socket_t fd, short what, void *arg)
{
	struct timers *timers = arg;

	(void)fd;
	(void)what;
	if (++timers->ticks == TICKS)
		event_del(timers->ticker);
}

/* Arms the timers from inside the loop, where libevent reads the clock
 * once for all of them: their deadlines are then in the order of their
 * timeouts, however slowly this runs. */
static void timers_start(evutil_socket_t fd, short what, void *arg)
{
	struct timers *timers = arg;

	(void)fd;
	(void)what;
	for (int i = 0; i < TIMERS; i++) {
		struct timer *timer = &timers->timer[i];
		timer->timers = timers;
		timer->timeout_ms = (i * 7) % TIMER_SPREAD_MS;
		timer->event = evtimer_new(timers->base, timer_fired, timer);
		struct timeval timeout = {0, timer->timeout_ms * 1000};
		if (!test_check(timer->event != NULL &&
		                    evtimer_add(timer->event, &timeout) == 0,
		                "timer %d not armed", i))
			return;
	}
	timers->ticker =
	    event_new(timers->base, -1, EV_PERSIST, ticker_ticked, timers);
	struct timeval tick = {0, 1000};
	test_check(timers->ticker != NULL &&
	               event_add(timers->ticker, &tick) == 0,
	           "the ticker is not armed");
}

static void run_timers(struct event_base *base)
{
	static struct timers timers;
	struct timeval now = {0, 0};

	memset(&timers, 0, sizeof(timers));
	timers.base = base;
	if (!test_check(event_base_once(base, -1, EV_TIMEOUT, timers_start,
	                                &timers, &now) == 0,
	                "event_base_once failed"))
		return;
	test_check(event_base_dispatch(base) == 1, "the timers' loop failed");
	int once = 0;
	for (int i = 0; i < TIMERS; i++) {
		once += timers.timer[i].fired == 1;
		if (timers.timer[i].event != NULL)
			event_free(timers.timer[i].event);
	}
	if (timers.ticker != NULL)
		event_free(timers.ticker);
	test_check(once == TIMERS && timers.fired == TIMERS,
	           "%d of %d timers fired once (%d firings)", once, TIMERS,
	           timers.fired);
	test_check(timers.out_of_order == 0,
	           "%d timers fired after one of a longer timeout",
	           timers.out_of_order);
	test_check(timers.ticks == TICKS, "the ticker ticked %d times of %d",
	           timers.ticks, TICKS);
	printf("timers: %d fired in the order of their timeouts, %d ticks\n",
	       timers.fired, timers.ticks);
}

/* ------------------------------------------------------------ echo */

/* The byte at offset position of the stream the client sends. */
static unsigned char stream_byte(uint64_t position)
{
	return (unsigned char)((position * 2654435761u) >> 11);
}

static uint32_t next_random(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

/* Invariant: received <= sent <= total; sent - received <= WINDOW +
 * MESSAGE_MAX; corrupt counts the bytes that came back wrong. */
struct echo {
	struct bufferevent *client;
	struct bufferevent *server;
	uint32_t random;
	int messages_sent;
	uint64_t total; /* of the messages sent so far */
	uint64_t sent;
	uint64_t received;
	uint64_t corrupt;
	bool failed; /* an event said so */
};

/* Sends messages while the window has room. */
static void echo_send(struct echo *echo)
{
	unsigned char message[MESSAGE_MAX];

	while (echo->messages_sent < MESSAGES &&
	       echo->sent - echo->received < WINDOW) {
		size_t length = 1 + next_random(&echo->random) % MESSAGE_MAX;
		for (size_t i = 0; i < length; i++)
			message[i] = stream_byte(echo->sent + i);
		if (!test_check(
		        bufferevent_write(echo->client, message, length) == 0,
		        "echo: bufferevent_write failed")) {
			echo->failed = true;
			return;
		}
		echo->sent += length;
		echo->total += length;
		echo->messages_sent++;
	}
}

static void echo_free(struct echo *echo)
{
	if (echo->client != NULL)
		bufferevent_free(echo->client);
	if (echo->server != NULL)
		bufferevent_free(echo->server);
	echo->client = NULL;
	echo->server = NULL;
}

/* The server: whatever it reads goes back, copied through a buffer of its
 * own, so that every message makes new chains on the way back. */
static void server_read(struct bufferevent *server, void *arg)
{
	struct echo *echo = arg;
	struct evbuffer *input = bufferevent_get_input(server);
	unsigned char data[MESSAGE_MAX];

	for (int n; (n = evbuffer_remove(input, data, sizeof(data))) > 0;)
		if (bufferevent_write(server, data, (size_t)n) != 0) {
			test_check(false, "echo: the server cannot write");
			echo->failed = true;
			echo_free(echo);
			return;
		}
}

static void client_read(struct bufferevent *client, void *arg)
{
	struct echo *echo = arg;
	struct evbuffer *input = bufferevent_get_input(client);
	unsigned char data[MESSAGE_MAX];

	for (int n; (n = evbuffer_remove(input, data, sizeof(data))) > 0;) {
		for (int i = 0; i < n; i++)
			echo->corrupt +=
			    data[i] != stream_byte(echo->received + (size_t)i);
		echo->received += (size_t)n;
	}
	if (echo->received > echo->sent) {
		test_check(false, "echo: more came back than went");
		echo->failed = true;
	}
	if (echo->failed ||
	    (echo->messages_sent == MESSAGES && echo->received == echo->sent))
		echo_free(echo); /* the loop ends: no event is left */
	else
		echo_send(echo);
}

static void echo_event(struct bufferevent *bufferevent, short what, void *arg)
{
	struct echo *echo = arg;

	(void)bufferevent;
	test_check(false, "echo: unexpected event 0x%x", (unsigned)what);
	echo->failed = true;
	echo_free(echo);
}

static void run_echo(struct event_base *base)
{
	struct echo echo = {.random = 7};
	int fds[2];

	if (!test_check(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0,
	                "socketpair failed"))
		return;
	evutil_make_socket_nonblocking(fds[0]);
	evutil_make_socket_nonblocking(fds[1]);
	echo.client =
	    bufferevent_socket_new(base, fds[0], BEV_OPT_CLOSE_ON_FREE);
	echo.server =
	    bufferevent_socket_new(base, fds[1], BEV_OPT_CLOSE_ON_FREE);
	if (!test_check(echo.client != NULL && echo.server != NULL,
	                "bufferevent_socket_new failed")) {
		if (echo.client == NULL)
			close(fds[0]);
		if (echo.server == NULL)
			close(fds[1]);
		echo_free(&echo);
		return;
	}
	bufferevent_setcb(echo.client, client_read, NULL, echo_event, &echo);
	bufferevent_setcb(echo.server, server_read, NULL, echo_event, &echo);
	bufferevent_enable(echo.client, EV_READ | EV_WRITE);
	bufferevent_enable(echo.server, EV_READ | EV_WRITE);
	echo_send(&echo);
	test_check(event_base_dispatch(base) != -1, "the echo's loop failed");
	echo_free(&echo);
	test_check(!echo.failed && echo.messages_sent == MESSAGES &&
	               echo.received == echo.total && echo.corrupt == 0,
	           "echo: %d messages, %" PRIu64 " of %" PRIu64
	           " bytes back, %" PRIu64 " wrong",
	           echo.messages_sent, echo.received, echo.total, echo.corrupt);
	printf("echo: %d messages, %" PRIu64 " bytes sent and checked back\n",
	       echo.messages_sent, echo.received);
}

/* ------------------------------------------------------------ evbuffer */

static void trailer_released(const void *data, size_t length, void *arg)
{
	(void)data;
	(void)length;
	++*(int *)arg;
}

/* One round: returns true when every result was right. */
static bool churn_round(pool_set_t *set, int round, int *released)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz"
	                              "abcdefghijklmnopqrstuvwxyz";
	static const char trailer[] = "END\n";
	struct evbuffer *first = evbuffer_new();
	struct evbuffer *second = evbuffer_new();
	int lines = 1 + round % 50;
	size_t length = 0;
	bool ok = first != NULL && second != NULL;

	for (int line = 0; ok && line < lines; line++) {
		int width = (round * 31 + line * 17) % 300;
		int n = evbuffer_add_printf(first, "%d:%d:%.*s\n", round, line,
		                            width, letters);
		ok = n > 0;
		length += (size_t)n;
	}
	ok = ok && evbuffer_prepend(first, "BEGIN\n", 6) == 0 &&
	     evbuffer_add_reference(first, trailer, strlen(trailer),
	                            trailer_released, released) == 0;
	length += 6 + strlen(trailer);
	ok = ok && evbuffer_get_length(first) == length &&
	     evbuffer_add_buffer(second, first) == 0 &&
	     evbuffer_get_length(first) == 0 &&
	     evbuffer_get_length(second) == length;
	/* Pulled up: the first bytes (up to 64: pulling up more than the
	 * buffer holds fails), contiguous, begin with the header. */
	unsigned char *head =
	    ok ? evbuffer_pullup(second, length < 64 ? (ev_ssize_t)length : 64)
	       : NULL;
	ok = ok && head != NULL && memcmp(head, "BEGIN\n", 6) == 0;
	struct evbuffer_ptr end =
	    evbuffer_search(second, trailer, strlen(trailer), NULL);
	ok = ok && end.pos == (ev_ssize_t)(length - strlen(trailer));

	/* Line by line: each line is libevent's allocation, so it goes back
	 * to the set, not to free(). */
	for (int line = -1; ok && line <= lines; line++) {
		size_t line_length;
		char *text =
		    evbuffer_readln(second, &line_length, EVBUFFER_EOL_LF);
		int read_round, read_line, prefix = 0;
		if (text == NULL)
			ok = false;
		else if (line == -1)
			ok = strcmp(text, "BEGIN") == 0;
		else if (line == lines)
			ok = strcmp(text, "END") == 0;
		else
			ok = sscanf(text, "%d:%d:%n", &read_round, &read_line,
			            &prefix) == 2 &&
			     read_round == round && read_line == line &&
			     line_length - (size_t)prefix ==
			         (size_t)((round * 31 + line * 17) % 300) &&
			     memcmp(text + prefix, letters,
			            line_length - (size_t)prefix) == 0;
		pool_set_free(set, text);
	}
	ok = ok && evbuffer_get_length(second) == 0;

	/* Reserved space, written in place and committed: 1 B to 64 KiB. */
	size_t size = 1 + (size_t)round * 9973 % RESERVE_MAX;
	struct evbuffer_iovec vector[4];
	int count =
	    ok ? evbuffer_reserve_space(second, (ev_ssize_t)size, vector, 4)
	       : -1;
	ok = count > 0;
	size_t written = 0;
	for (int i = 0; ok && i < count && written < size; i++) {
		size_t part = vector[i].iov_len < size - written
		                  ? vector[i].iov_len
		                  : size - written;
		for (size_t j = 0; j < part; j++)
			((unsigned char *)vector[i].iov_base)[j] =
			    (unsigned char)(written + j);
		vector[i].iov_len = part;
		written += part;
		count = i + 1;
	}
	ok = ok && written == size &&
	     evbuffer_commit_space(second, vector, count) == 0 &&
	     evbuffer_get_length(second) == size;
	unsigned char *data = ok ? evbuffer_pullup(second, -1) : NULL;
	for (size_t i = 0; ok && i < size; i++)
		ok = data[i] == (unsigned char)i;
	ok = ok && evbuffer_drain(second, size) == 0;

	if (first != NULL)
		evbuffer_free(first);
	if (second != NULL)
		evbuffer_free(second);
	return ok;
}

static void run_churn(pool_set_t *set)
{
	int released = 0, failed = 0;

	for (int round = 0; round < ROUNDS; round++)
		failed += !churn_round(set, round, &released);
	test_check(failed == 0, "evbuffer: %d of %d rounds went wrong", failed,
	           ROUNDS);
	test_check(released == ROUNDS,
	           "evbuffer: %d referenced trailers released, of %d", released,
	           ROUNDS);
	printf("evbuffer: %d rounds of buffers filled, moved, searched and "
	       "read back\n",
	       ROUNDS);
}

/* ------------------------------------------------------------ main */

/* One mode, in the child process that runs it: exits 0 when every check
 * passed. */
static void run_mode(int flags)
{
	char what[64];
	pool_set_t *set =
	    pool_set_init(SET_MIN_BLOCK, SET_MAX_BLOCK, SET_CLASS_BYTES, flags);

	snprintf(what, sizeof(what), "libevent %s", test_mode_name(flags));
	if (!test_check(set != NULL, "%s: pool_set_init failed", what))
		exit(1);
	libevent_pool_install(set);
	struct event_base *base = event_base_new();
	if (!test_check(base != NULL, "%s: event_base_new failed", what))
		exit(1);
	printf("%s: libevent %s, method %s\n", what, event_get_version(),
	       event_base_get_method(base));
	run_timers(base);
	run_echo(base);
	run_churn(set);
	event_base_free(base);
	libevent_global_shutdown();
	test_set_clean(set, what, MESSAGES, 0);
	pool_set_destroy(set);
	exit(test_failures == 0 ? 0 : 1);
}

int main(void)
{
	static const int modes[] = {POOL_SINGLE, POOL_LOCKED, POOL_PER_THREAD};
	int failed = 0;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		fflush(stdout);
		pid_t child = fork();
		if (child < 0) {
			perror("libevent-pool-test: fork");
			return 1;
		}
		if (child == 0)
			run_mode(modes[i]);
		int status;
		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			printf(
			    "FAIL: libevent %s: the run failed (status 0x%x)\n",
			    test_mode_name(modes[i]), (unsigned)status);
			failed++;
		}
	}
	if (failed != 0) {
		printf("libevent-pool-test: %d modes failed\n", failed);
		return 1;
	}
	printf("libevent-pool-test: all checks passed\n");
	return 0;
}
