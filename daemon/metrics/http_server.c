// SPDX-License-Identifier: GPL-2.0
/* The metrics endpoint's HTTP server, on the daemon's own sd-event loop:
 * non-blocking accept, read and write, one request per connection
 * (Connection: close), at most HTTP_CONN_MAX connections, a deadline for
 * the request and one for the response, so that no scraper, slow or
 * hostile, holds the loop that drains the ring.
 *
 * Why no library: libmicrohttpd (Debian's libmicrohttpd-dev) runs its own
 * threads, or needs its select/poll integration driven from our loop, and
 * brings a general server's surface (chunked bodies, POST processing, TLS
 * hooks). tracerd answers one GET: a strict parser of about a hundred lines
 * (http_parse.c) on the loop it already runs is smaller to audit and fuzz. */
#include <malloc.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "metrics/http.h"
#include "util.h"

/* Below the ring's drain (priority 0): a scrape waits for records. */
#define HTTP_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 10)
#define HTTP_ACCEPT_BURST 64		/* accepts per wakeup: a flood cannot starve the loop */
#define HTTP_PAUSE_USEC 100000ULL	/* out of descriptors: stop accepting for a while */
#define HTTP_LINGER_USEC 2000000ULL	/* after the response: wait this long for the client's close */
#define HTTP_LINGER_MAX (4u << 20)	/* ... and discard at most this much of what it still sends */

enum conn_state { CONN_READ, CONN_WRITE, CONN_LINGER };

struct http_conn {
	struct http_server *server;
	struct http_conn *prev, *next;
	int fd;
	enum conn_state state;
	sd_event_source *io, *timer;
	struct strbuf head, body;	/* the response: headers, then the body unless HEAD */
	size_t sent, lingered;
	size_t in_len;
	char in[HTTP_REQUEST_MAX];
};

struct http_server {
	sd_event *event;
	int listen_fd;
	sd_event_source *listen_src, *pause_src;
	http_handler_fn fn;
	void *userdata;
	struct http_conn *conns;
	unsigned n_conns;
	uint64_t request_usec, response_usec;
	struct http_stats stats;
};

/* A response this large was a scrape of many series, whose work freed
 * megabytes that glibc keeps in its heap (its mmap threshold rises to the
 * size of each mapped block freed): given back once it is sent. */
#define HTTP_TRIM_BYTES (256 * 1024)

static void conn_free(struct http_conn *c)
{
	struct http_server *s = c->server;

	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->n_conns--;
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	close(c->fd);
	sb_free(&c->head);
	sb_free(&c->body);
	free(c);
}

/* A timer source fires once, usec from now. */
static int deadline(sd_event_source *timer, uint64_t usec)
{
	int r = sd_event_source_set_time_relative(timer, usec);

	return r < 0 ? r : sd_event_source_set_enabled(timer, SD_EVENT_ONESHOT);
}

/* What the client still sends after the response is read and thrown away
 * until it closes: closing with unread bytes would reset the connection,
 * and the client could lose the response (a 414 to a 1 MiB request line). */
static void conn_linger(struct http_conn *c)
{
	char buf[4096];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		c->lingered += n > 0 ? (size_t)n : 0;
		if (n <= 0 || c->lingered > HTTP_LINGER_MAX) {
			conn_free(c);
			return;
		}
	}
}

static void conn_write(struct http_conn *c)
{
	uint64_t linger;
	bool large;

	for (;;) {
		size_t total = c->head.len + c->body.len, off = c->sent;
		struct iovec iov[2];
		struct msghdr msg = { .msg_iov = iov };
		ssize_t n;

		if (off == total)
			break;
		if (off < c->head.len)
			iov[msg.msg_iovlen++] = (struct iovec) { c->head.buf + off, c->head.len - off };
		off = off > c->head.len ? off - c->head.len : 0;
		if (off < c->body.len)
			iov[msg.msg_iovlen++] = (struct iovec) { c->body.buf + off, c->body.len - off };
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;		/* EPOLLOUT brings us back */
		if (n < 0) {
			conn_free(c);
			return;
		}
		c->sent += (size_t)n;
	}
	c->server->stats.answered++;
	large = c->body.cap >= HTTP_TRIM_BYTES;
	sb_free(&c->head);
	sb_free(&c->body);
	if (large)
		malloc_trim(0);
	c->state = CONN_LINGER;
	linger = HTTP_LINGER_USEC < c->server->response_usec ? HTTP_LINGER_USEC : c->server->response_usec;
	if (shutdown(c->fd, SHUT_WR) < 0 ||
	    sd_event_source_set_io_events(c->io, EPOLLIN) < 0 ||
	    deadline(c->timer, linger) < 0) {
		conn_free(c);
		return;
	}
	conn_linger(c);
}

/* The status line, the three headers, and the body (none for HEAD). A
 * status other than 200 gets a short text body of its own. */
static void conn_respond(struct http_conn *c, int status, bool head, const char *content_type)
{
	const char *reason = http_reason(status);

	if (status != 200) {
		sb_reset(&c->body);
		sb_printf(&c->body, "%d %s\n", status, reason);
		content_type = "text/plain; charset=utf-8";
	}
	sb_printf(&c->head, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		  "Connection: close\r\n\r\n", status, reason, content_type, c->body.len);
	if (head)
		sb_free(&c->body);
	if (c->head.oom) {
		conn_free(c);
		return;
	}
	c->state = CONN_WRITE;
	if (sd_event_source_set_io_events(c->io, EPOLLOUT) < 0 ||
	    deadline(c->timer, c->server->response_usec) < 0) {
		conn_free(c);
		return;
	}
	conn_write(c);
}

static void conn_answer(struct http_conn *c, const struct http_request *req)
{
	struct http_server *s = c->server;
	const char *content_type = NULL;
	int status;

	status = s->fn(s->userdata, req, &c->body, &content_type);
	if (status < 100 || status > 599 || (status == 200 && (c->body.oom || !content_type)))
		status = 500;
	conn_respond(c, status, !strcmp(req->method, "HEAD"), content_type);
}

static void conn_read(struct http_conn *c)
{
	struct http_request req;
	int r;

	for (;;) {
		ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {		/* gone before a whole request */
			conn_free(c);
			return;
		}
		c->in_len += (size_t)n;
		r = http_parse_request(c->in, c->in_len, &req);
		if (r == -EAGAIN && c->in_len == sizeof(c->in))
			r = 431;	/* both limits' line ends past 16 KiB */
		if (r == -EAGAIN)
			continue;
		if (r == 0) {
			conn_answer(c, &req);
			return;
		}
		c->server->stats.bad_requests++;
		conn_respond(c, r, false, NULL);
		return;
	}
}

static int on_conn_io(sd_event_source *src _unused_, int fd _unused_, uint32_t revents _unused_,
		      void *userdata)
{
	struct http_conn *c = userdata;

	switch (c->state) {
	case CONN_READ:
		conn_read(c);
		break;
	case CONN_WRITE:
		conn_write(c);
		break;
	case CONN_LINGER:
		conn_linger(c);
		break;
	}
	return 0;
}

static int on_conn_timer(sd_event_source *src _unused_, uint64_t usec _unused_, void *userdata)
{
	struct http_conn *c = userdata;

	if (c->state != CONN_LINGER)	/* lingering, the response was delivered */
		c->server->stats.timeouts++;
	conn_free(c);
	return 0;
}

/* Takes fd. */
static int conn_new(struct http_server *s, int fd)
{
	struct http_conn *c = calloc(1, sizeof(*c));
	int r;

	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->server = s;
	c->fd = fd;
	c->next = s->conns;
	if (c->next)
		c->next->prev = c;
	s->conns = c;
	s->n_conns++;
	r = sd_event_add_io(s->event, &c->io, fd, EPOLLIN, on_conn_io, c);
	if (r >= 0)
		r = sd_event_add_time_relative(s->event, &c->timer, CLOCK_MONOTONIC, s->request_usec,
					       0, on_conn_timer, c);
	if (r >= 0)
		r = sd_event_source_set_priority(c->io, HTTP_PRIORITY);
	if (r < 0) {
		conn_free(c);
		return r;
	}
	return 0;
}

static int on_pause_end(sd_event_source *src _unused_, uint64_t usec _unused_, void *userdata)
{
	struct http_server *s = userdata;

	return sd_event_source_set_enabled(s->listen_src, SD_EVENT_ON);
}

/* Out of descriptors or memory: the listening socket stays readable, and
 * accepting again at once would spin the loop. */
static void pause_accepting(struct http_server *s)
{
	int r;

	sd_event_source_set_enabled(s->listen_src, SD_EVENT_OFF);
	if (s->pause_src)
		r = deadline(s->pause_src, HTTP_PAUSE_USEC);
	else
		r = sd_event_add_time_relative(s->event, &s->pause_src, CLOCK_MONOTONIC,
					       HTTP_PAUSE_USEC, 0, on_pause_end, s);
	if (r < 0)	/* never stay deaf */
		sd_event_source_set_enabled(s->listen_src, SD_EVENT_ON);
}

static int on_accept(sd_event_source *src _unused_, int fd _unused_, uint32_t revents _unused_,
		     void *userdata)
{
	struct http_server *s = userdata;

	for (int i = 0; i < HTTP_ACCEPT_BURST; i++) {
		int cfd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				pause_accepting(s);
			return 0;
		}
		if (s->n_conns >= HTTP_CONN_MAX) {
			close(cfd);
			s->stats.refused_full++;
			continue;
		}
		if (conn_new(s, cfd) < 0)
			return 0;
		s->stats.accepted++;
	}
	return 0;
}

int http_server_new(sd_event *e, int listen_fd, http_handler_fn fn, void *userdata,
		    struct http_server **ret)
{
	struct http_server *s;
	int r;

	if (!e || listen_fd < 0 || !fn) {
		if (listen_fd >= 0)
			close(listen_fd);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(listen_fd);
		return -ENOMEM;
	}
	s->event = sd_event_ref(e);
	s->listen_fd = listen_fd;
	s->fn = fn;
	s->userdata = userdata;
	s->request_usec = HTTP_REQUEST_TIMEOUT_USEC;
	s->response_usec = HTTP_RESPONSE_TIMEOUT_USEC;
	r = sd_event_add_io(e, &s->listen_src, listen_fd, EPOLLIN, on_accept, s);
	if (r >= 0)
		r = sd_event_source_set_priority(s->listen_src, HTTP_PRIORITY);
	if (r < 0) {
		http_server_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void http_server_free(struct http_server *s)
{
	if (!s)
		return;
	while (s->conns)
		conn_free(s->conns);
	sd_event_source_disable_unref(s->listen_src);
	sd_event_source_disable_unref(s->pause_src);
	close(s->listen_fd);
	sd_event_unref(s->event);
	free(s);
}

void http_server_stats(const struct http_server *s, struct http_stats *out)
{
	*out = s->stats;
}

void http_server_set_timeouts(struct http_server *s, uint64_t request_usec, uint64_t response_usec)
{
	s->request_usec = request_usec;
	s->response_usec = response_usec;
}
