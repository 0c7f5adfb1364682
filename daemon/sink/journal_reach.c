// SPDX-License-Identifier: GPL-2.0
/* Whether the journal can be written, and the daemon's messages on stderr
 * when it cannot. sd_journal_sendv() returns 0 when the journal's socket
 * does not exist ("fail silently", for programs that may run without
 * one), so statistics, summaries and reload results would vanish without
 * a word: the socket is asked directly instead, per message (they are a
 * few a minute). */
#include <sys/socket.h>
#include <sys/un.h>
#include "log.h"
#include "sink.h"
#include "util.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

/* 0, or -errno: the last try found the journal could not be written. */
static int journal_err;

int journal_probe(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	return connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
}

void journal_reached(int r)
{
	int old = __atomic_exchange_n(&journal_err, r < 0 ? r : 0, __ATOMIC_RELAXED);

	if (r < 0 && !old)
		log_warning("cannot write to the journal (%s): the daemon's messages and statistics "
			    "go to stderr", strerror(-r));
	else if (r >= 0 && old)
		log_info("the journal can be written again: the daemon's messages go to it");
}

int journal_unreachable(void)
{
	return __atomic_load_n(&journal_err, __ATOMIC_RELAXED);
}
