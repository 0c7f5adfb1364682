// SPDX-License-Identifier: GPL-2.0
/* tracerd --snapshot [PID]: asks the running daemon for a snapshot of its
 * recorder, as SIGUSR1 does (`systemctl kill -s USR1 tracerd`), with a
 * value that names the request (the snapshot's REASON is "request"). The
 * daemon is tracerd.service's main process, which systemd names over
 * D-Bus, or PID. Root only: the snapshot lands in root's directory, and
 * the kernel would refuse the signal to root's daemon anyway. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>
#include "loop.h"
#include "util.h"

/* The system bus, else systemd's own socket (root's, as systemctl uses it
 * where no D-Bus runs). */
static int open_bus(sd_bus **ret)
{
	sd_bus *bus = NULL;
	int r = sd_bus_open_system(ret);

	if (r >= 0)
		return r;
	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, "unix:path=/run/systemd/private");
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		sd_bus_unref(bus);
		return r;
	}
	*ret = bus;
	return 0;
}

/* tracerd.service's MainPID; -ESRCH: it does not run. */
static int main_pid(pid_t *ret)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *bus = NULL;
	uint32_t pid = 0;
	int r = open_bus(&bus);

	if (r >= 0)
		r = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1",
						"/org/freedesktop/systemd1/unit/tracerd_2eservice",
						"org.freedesktop.systemd1.Service", "MainPID", &e, 'u',
						&pid);
	sd_bus_error_free(&e);
	sd_bus_unref(bus);
	if (r < 0)
		return r;
	if (!pid)
		return -ESRCH;
	*ret = pid;
	return 0;
}

/* Whether pid is a tracerd (SIGUSR1 would kill most other programs). */
static bool is_tracerd(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	return !strcmp(comm, "tracerd\n");
}

int snapshot_ask(const char *pid_arg)
{
	union sigval v = { .sival_int = TRACERD_SNAPSHOT_REQUEST };
	pid_t pid = 0;
	char *end;
	int r = 0;

	if (geteuid() != 0) {
		fprintf(stderr, "tracerd: --snapshot is for root only\n");
		return EXIT_NOPERM;
	}
	if (pid_arg) {
		pid = strtol(pid_arg, &end, 10);
		if (*end || pid <= 0) {
			fprintf(stderr, "tracerd: --snapshot PID: '%s' is not a pid; see --help\n", pid_arg);
			return 2;
		}
	} else if ((r = main_pid(&pid)) < 0) {
		if (r == -ESRCH)
			fprintf(stderr, "tracerd: --snapshot: tracerd.service does not run; "
				"--snapshot PID names another tracerd\n");
		else
			fprintf(stderr, "tracerd: --snapshot: cannot ask systemd for tracerd.service's "
				"pid (%s); --snapshot PID names the daemon\n", strerror(-r));
		return EXIT_UNAVAILABLE;
	}
	if (!is_tracerd(pid)) {
		fprintf(stderr, "tracerd: --snapshot: process %d is not tracerd\n", (int)pid);
		return EXIT_UNAVAILABLE;
	}
	if (sigqueue(pid, SIGUSR1, v) < 0) {
		fprintf(stderr, "tracerd: --snapshot: cannot signal tracerd (pid %d): %s\n", (int)pid,
			strerror(errno));
		return errno == EPERM ? EXIT_NOPERM : 1;
	}
	printf("asked tracerd (pid %d) for a snapshot: its journal entry (TRACE_SNAPSHOT=) "
	       "names the directory\n", (int)pid);
	return 0;
}
