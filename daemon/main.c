// SPDX-License-Identifier: GPL-2.0
/* tracerd: kernel trace events, filtered in BPF, into the journal. */
#include <getopt.h>
#include "inspect.h"
#include "log.h"
#include "loop.h"
#include "read.h"
#include "render/render.h"
#include "tracer.h"
#include "util.h"

#define DEFAULT_CONFIG "/etc/tracerd/tracerd.conf"

static void help(void)
{
	printf("Usage: tracerd [OPTIONS]\n\n"
	       "Traces kernel events selected in a config file, filters them in BPF\n"
	       "and writes them to the systemd journal (or stdout).\n\n"
	       "  -c --config FILE        config file (default " DEFAULT_CONFIG ")\n"
	       "  -f --foreground         print events to stdout, kernel trace style\n"
	       "     --check-config [FILE] check the config against this kernel and exit\n"
	       "     --list-events [GLOB]  list events, e.g. 'sched:*'\n"
	       "     --list-classes [GLOB] list event classes with their events\n"
	       "     --describe SYS:EVENT  fields, class and symbol tables of an event\n"
	       "     --read PATH...        print stored events (files or directories), as -f does\n"
	       "       --json              one JSON object per event, the journal's field names\n"
	       "       --events GLOBS      only these events, e.g. 'sched:*'\n"
	       "       --filter EXPR       only records that pass this filter\n"
	       "       --since TIME        only records from TIME on: '934.253262' (as printed),\n"
	       "                           '2026-12-03 10:00:00.250', '@EPOCH', '-10min', 'now'\n"
	       "       --until TIME        only records up to TIME (its last digit included)\n"
	       "       --follow            wait for more at the end\n"
	       "       --raw-pointers      print %%p addresses raw instead of hashed\n"
	       "     --version             print the version, and the libbpf, libsystemd,\n"
	       "                           libtraceevent and kernel it runs with\n"
	       "  -h --help               this text\n");
}

enum {
	ARG_CHECK = 0x100, ARG_LIST_EVENTS, ARG_LIST_CLASSES, ARG_DESCRIBE, ARG_VERSION,
	ARG_READ, ARG_JSON, ARG_EVENTS, ARG_FILTER, ARG_SINCE, ARG_UNTIL, ARG_FOLLOW, ARG_RAW_PTRS,
};

/* The --read options; 0, or 2 for a bad one. */
static int read_option(int c, struct read_opts *ro)
{
	switch (c) {
	case ARG_JSON: ro->json = true; return 0;
	case ARG_EVENTS: ro->events = optarg; return 0;
	case ARG_FILTER: ro->filter = optarg; return 0;
	case ARG_FOLLOW: ro->follow = true; return 0;
	case ARG_RAW_PTRS: ro->raw_pointers = true; return 0;
	case ARG_SINCE: case ARG_UNTIL:
		if (read_parse_time(optarg, c == ARG_SINCE ? &ro->since : &ro->until) < 0) {
			fprintf(stderr, "tracerd: cannot parse time '%s'; see --help\n", optarg);
			return 2;
		}
		return 0;
	}
	return 2;
}

static int check_config(const char *path)
{
	struct registry *reg = NULL;
	struct diag d = { 0 };
	struct config cfg;
	int r = config_load(path, &cfg, &d);

	if (r >= 0) {
		r = registry_new(&reg, &d);
		if (r >= 0)
			r = tracer_check(reg, &cfg, &d);
		config_free(&cfg);
		registry_free(reg, render_release);
	}
	if (r < 0) {
		if (d.msg[0])
			diag_print(&d, stderr);
		else
			log_error("%s: %s", path, strerror(-r));
		return 1;
	}
	printf("%s: OK\n", path);
	return 0;
}

static int inspect(int what, const char *arg)
{
	struct registry *reg = NULL;
	struct diag d = { 0 };
	int r = registry_new(&reg, &d);

	if (r < 0) {
		diag_print(&d, stderr);
		return 1;
	}
	if (what == ARG_LIST_EVENTS)
		r = inspect_list_events(reg, arg);
	else if (what == ARG_LIST_CLASSES)
		r = inspect_list_classes(reg, arg);
	else
		r = inspect_describe(reg, arg);
	registry_free(reg, render_release);
	return r < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check-config", optional_argument, NULL, ARG_CHECK },
		{ "list-events", optional_argument, NULL, ARG_LIST_EVENTS },
		{ "list-classes", optional_argument, NULL, ARG_LIST_CLASSES },
		{ "describe", required_argument, NULL, ARG_DESCRIBE },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "read", no_argument, NULL, ARG_READ },
		{ "json", no_argument, NULL, ARG_JSON },
		{ "events", required_argument, NULL, ARG_EVENTS },
		{ "filter", required_argument, NULL, ARG_FILTER },
		{ "since", required_argument, NULL, ARG_SINCE },
		{ "until", required_argument, NULL, ARG_UNTIL },
		{ "follow", no_argument, NULL, ARG_FOLLOW },
		{ "raw-pointers", no_argument, NULL, ARG_RAW_PTRS },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct run_opts o = { .config_path = DEFAULT_CONFIG };
	struct read_opts ro = { .since.ns = INT64_MIN, .until.ns = INT64_MAX };
	int c, action = 0;
	const char *arg = NULL;

	while ((c = getopt_long(argc, argv, "c:fh", opts, NULL)) >= 0) {
		switch (c) {
		case 'c': o.config_path = optarg; break;
		case 'f': o.foreground = true; break;
		case 'h': help(); return 0;
		case ARG_VERSION: inspect_version(stdout); return 0;
		case ARG_CHECK: case ARG_LIST_EVENTS: case ARG_LIST_CLASSES: case ARG_DESCRIBE:
			action = c;
			/* "--opt VALUE" as well as "--opt=VALUE" for the optional ones */
			arg = optarg ? optarg : optind < argc && argv[optind][0] != '-' ? argv[optind++] : NULL;
			break;
		case ARG_READ: action = c; break;
		default:
			if (read_option(c, &ro))
				return 2;
		}
	}
	if (action == ARG_READ) {
		/* --read takes the remaining arguments as paths */
		ro.paths = argv + optind;
		ro.n_paths = argc - optind;
		if (!ro.n_paths) {
			fprintf(stderr, "tracerd: --read needs a file or directory; see --help\n");
			return 2;
		}
		return read_store(&ro);
	}
	if (optind < argc) {
		fprintf(stderr, "tracerd: unexpected argument '%s'; see --help\n", argv[optind]);
		return 2;
	}
	if (action == ARG_CHECK)
		return check_config(arg ? arg : o.config_path);
	if (action)
		return inspect(action, arg);
	return run_daemon(&o);
}
