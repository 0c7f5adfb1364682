// SPDX-License-Identifier: GPL-2.0
/* tracerd: kernel trace events, filtered in BPF, into the journal. */
#include <getopt.h>
#include "config/config.h"
#include "kernel-events/unit_path.h"
#include "inspect.h"
#include "log.h"
#include "loop.h"
#include "read/read.h"
#include "render/render.h"
#include "tracer/tracer.h"
#include "util.h"

#define DEFAULT_CONFIG "/etc/tracerd/tracerd.conf"

/* "     --opt VALUE   description", the description from column 26,
 * wrapped before column 80 as the lines of help() are. */
static void help_line(const char *opt, const char *desc)
{
	_cleanup_free_ char *words = strdup(desc);
	int col = printf("     %s VALUE", opt);
	char *save = NULL;

	if (col > 24) {	/* a long option: the description below it */
		printf("\n");
		col = 0;
	}
	for (char *w = words ? strtok_r(words, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save)) {
		if (col > 26 && col + 1 + (int)strlen(w) > 79) {
			printf("\n");
			col = 0;
		}
		col += col < 26 ? printf("%*s%s", 26 - col, "", w) : printf(" %s", w);
	}
	printf("\n");
}

/* Each [Selection] key is an option too (RateLimit= is --rate-limit): the
 * ones not written out in help() below, from the table. */
static void help_selection_keys(void)
{
	size_t n;
	const struct config_item *t = config_table(&n);

	for (size_t i = 0; i < n; i++) {
		char opt[64];

		if (strcmp(t[i].section, "Selection") || !strcmp(t[i].key, "Events") ||
		    !strcmp(t[i].key, "Filter") || !strcmp(t[i].key, "Name"))
			continue;
		config_item_option(&t[i], opt, sizeof(opt));
		help_line(opt, t[i].description);
	}
}

static void help(void)
{
	printf("Usage: tracerd [OPTIONS]\n\n"
	       "Traces kernel events selected in a config file or on the command line,\n"
	       "filters them in BPF and writes them to the systemd journal (or stdout).\n\n"
	       "  -c --config FILE        config file (default " DEFAULT_CONFIG ")\n"
	       "  -f --foreground         print events to stdout, kernel trace style\n"
	       "  -e --events GLOBS       trace these events, e.g. 'sched:*', as one selection\n"
	       "                          made of options, without a config file (with -c:\n"
	       "                          in place of its selections); repeatable\n"
	       "     --filter EXPR        that selection's Filter=\n"
	       "     --name NAME          that selection's Name= (default " CONFIG_ARGS_NAME ")\n");
	help_selection_keys();
	printf("     --synthetic DEF       a synthetic event, as [Synthetic] Event= (added to the\n"
	       "                           file's); repeatable; also for --list-events, --describe\n"
	       "     --metrics-listen ADDR serve GET /metrics (Prometheus) at HOST:PORT, [IPV6]:PORT\n"
	       "                           or a unix socket path, as [Metrics] Listen=\n");
	printf("     --check-config [FILE] check the config against this kernel and exit\n"
	       "     --snapshot [PID]      ask the running tracerd (tracerd.service's, or PID)\n"
	       "                           for a snapshot of its recorder; root only\n"
	       "     --list-events [GLOB]  list events, e.g. 'sched:*'\n"
	       "     --list-classes [GLOB] list event classes with their events\n"
	       "     --describe SYS:EVENT  fields, class and symbol tables of an event\n"
	       "     --read PATH...        print stored events (files or directories), as -f does\n"
	       "       --json              one JSON object per event, the journal's field names\n"
	       "       -e --events GLOBS   only these events, e.g. 'sched:*'\n"
	       "       --filter EXPR       only records that pass this filter\n"
	       "       --unit GLOBS        only records of tasks in these units (or below), by\n"
	       "                           the cgroup paths stored with them\n"
	       "       --since TIME        only records from TIME on: '934.253262' (as printed),\n"
	       "                           '2026-12-03 10:00:00.250', '@EPOCH', '-10min', 'now'\n"
	       "       --until TIME        only records up to TIME (its last digit included)\n"
	       "       --follow            wait for more at the end\n"
	       "       --raw-pointers      print %%p addresses raw instead of hashed\n"
	       "       --trace-dat FILE    write them to FILE as trace.dat (version 6), for\n"
	       "                           trace-cmd report and KernelShark\n"
	       "     --version             print the version, and the libbpf, libsystemd,\n"
	       "                           libtraceevent and kernel it runs with\n"
	       "  -h --help               this text\n");
}

enum {
	ARG_CHECK = 0x100, ARG_LIST_EVENTS, ARG_LIST_CLASSES, ARG_DESCRIBE, ARG_VERSION,
	ARG_READ, ARG_JSON, ARG_SINCE, ARG_UNTIL, ARG_FOLLOW, ARG_RAW_PTRS, ARG_TRACE_DAT,
	ARG_SYNTHETIC,
	ARG_METRICS, ARG_SNAPSHOT,
	ARG_SELECTION = 0x200,	/* + the key's index in the config table */
};

#define MAX_OPTIONS 64

/* The fixed options, then one per [Selection] key, named by the table. */
static const struct option *options(void)
{
	static const struct option fixed[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check-config", optional_argument, NULL, ARG_CHECK },
		{ "list-events", optional_argument, NULL, ARG_LIST_EVENTS },
		{ "list-classes", optional_argument, NULL, ARG_LIST_CLASSES },
		{ "describe", required_argument, NULL, ARG_DESCRIBE },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "read", no_argument, NULL, ARG_READ },
		{ "json", no_argument, NULL, ARG_JSON },
		{ "since", required_argument, NULL, ARG_SINCE },
		{ "until", required_argument, NULL, ARG_UNTIL },
		{ "follow", no_argument, NULL, ARG_FOLLOW },
		{ "raw-pointers", no_argument, NULL, ARG_RAW_PTRS },
		{ "trace-dat", required_argument, NULL, ARG_TRACE_DAT },
		{ "synthetic", required_argument, NULL, ARG_SYNTHETIC },
		{ "metrics-listen", required_argument, NULL, ARG_METRICS },
		{ "snapshot", optional_argument, NULL, ARG_SNAPSHOT },
		{ "help", no_argument, NULL, 'h' },
	};
	static struct option all[MAX_OPTIONS];
	static char names[MAX_OPTIONS][32];
	size_t n, k = ARRAY_SIZE(fixed);
	const struct config_item *t = config_table(&n);

	memcpy(all, fixed, sizeof(fixed));
	for (size_t i = 0; i < n && k + 1 < MAX_OPTIONS; i++) {
		if (strcmp(t[i].section, "Selection"))
			continue;
		config_item_option(&t[i], names[k], sizeof(names[k]));
		all[k] = (struct option){ names[k] + 2, required_argument, NULL, ARG_SELECTION + i };
		k++;
	}
	return all;
}

/* -e is --events. */
static int events_option(void)
{
	size_t n;
	const struct config_item *t = config_table(&n);

	return ARG_SELECTION + (int)(config_find("Selection", "Events") - t);
}

/* The command line's selection: -e, --filter and the other [Selection] keys;
 * and keys of other sections (--synthetic, --metrics-listen), n_sections of
 * v, n_synth of them synthetic events. */
struct sel_args {
	struct config_arg v[MAX_OPTIONS];
	size_t n, n_sections, n_synth;
	const char *events[MAX_OPTIONS];	/* -e, for --read */
	size_t n_events;
	const char *filter;			/* --filter, for --read */
	const char *units[MAX_OPTIONS];		/* --unit, for --read */
	size_t n_units;
	const char *other;			/* an option --read does not take */
};

static int selection_option(int c, struct sel_args *a)
{
	size_t n;
	const struct config_item *it = &config_table(&n)[c - ARG_SELECTION];

	if (a->n == MAX_OPTIONS) {
		fprintf(stderr, "tracerd: more than %d options of a selection\n", MAX_OPTIONS);
		return 2;
	}
	a->v[a->n++] = (struct config_arg){ it, optarg };
	if (!strcmp(it->key, "Events"))
		a->events[a->n_events++] = optarg;
	else if (!strcmp(it->key, "Filter"))
		a->filter = optarg;
	else if (!strcmp(it->key, "Unit"))
		a->units[a->n_units++] = optarg;
	else
		a->other = it->key;
	return 0;
}

/* --synthetic DEF and --metrics-listen ADDR: a key of another section,
 * beside the selection's keys. */
static int section_option(struct sel_args *a, const char *section, const char *key)
{
	if (a->n == MAX_OPTIONS) {
		fprintf(stderr, "tracerd: more than %d options of a selection\n", MAX_OPTIONS);
		return 2;
	}
	a->v[a->n++] = (struct config_arg){ config_find(section, key), optarg };
	a->n_sections++;
	a->n_synth += !strcmp(section, "Synthetic");
	return 0;
}

/* The --read options; 0, or 2 for a bad one. */
static int read_option(int c, struct read_opts *ro)
{
	switch (c) {
	case ARG_JSON: ro->json = true; return 0;
	case ARG_FOLLOW: ro->follow = true; return 0;
	case ARG_RAW_PTRS: ro->raw_pointers = true; return 0;
	case ARG_TRACE_DAT: ro->trace_dat = optarg; return 0;
	case ARG_SINCE: case ARG_UNTIL:
		if (read_parse_time(optarg, c == ARG_SINCE ? &ro->since : &ro->until) < 0) {
			fprintf(stderr, "tracerd: cannot parse time '%s'; see --help\n", optarg);
			return 2;
		}
		return 0;
	}
	return 2;
}

static int check_config(const char *path, const struct sel_args *a)
{
	struct registry *reg = NULL;
	struct diag d = { 0 };
	struct config cfg;
	int r = config_load_args(path, a->v, a->n, &cfg, &d);

	if (r >= 0) {
		r = registry_new(&reg, cfg.synth, cfg.n_synth, &d);
		if (r >= 0)
			r = tracer_check(reg, &cfg, &d);
		config_free(&cfg);
		registry_free(reg, render_release);
	}
	if (r < 0) {
		if (d.msg[0])
			diag_print(&d, stderr);
		else
			log_error("%s: %s", path ? path : "command line", strerror(-r));
		return 1;
	}
	printf("%s: OK\n", path ? path : "command line");
	return 0;
}

/* The registry alone, with the synthetic events of --synthetic. */
static int inspect(int what, const char *arg, const struct sel_args *a)
{
	struct registry *reg = NULL;
	struct diag d = { 0 };
	struct config cfg;
	int r = config_load_synthetic(a->v, a->n, &cfg, &d);

	if (r >= 0) {
		r = registry_new(&reg, cfg.synth, cfg.n_synth, &d);
		config_free(&cfg);
	}
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

/* --read --unit: the words of every --unit, checked as Unit= checks them. */
static int read_units(struct read_opts *ro, const struct sel_args *a)
{
	size_t cap = 0;

	for (size_t i = 0; i < a->n_units; i++) {
		_cleanup_free_ char *copy = strdup(a->units[i]);
		char *save = NULL;

		if (!copy)
			return -ENOMEM;
		for (char *g = strtok_r(copy, " \t", &save); g; g = strtok_r(NULL, " \t", &save)) {
			char name[UNIT_NAME_MAX + 16];
			size_t bad = 0;

			if (unit_glob_normalize(g, name, sizeof(name), &bad) < 0) {
				fprintf(stderr, "tracerd: --unit: '%s' is not a unit name or glob "
					"(at '%s')\n", g, g + bad);
				return -EINVAL;
			}
			if (GROW(ro->units, cap, ro->n_units) < 0 ||
			    !(ro->units[ro->n_units] = strdup(name)))
				return -ENOMEM;
			ro->n_units++;
		}
	}
	return 0;
}

/* --read takes -e, --filter and --unit of the selection options; -e given
 * more than once adds globs. */
static int read_main(struct read_opts *ro, const struct sel_args *a, char **paths, int n)
{
	_cleanup_free_ char *events = NULL;
	size_t len = 0;
	int k;

	if (a->other) {
		fprintf(stderr, "tracerd: --read takes -e, --filter and --unit, not %s=; see --help\n",
			a->other);
		return 2;
	}
	if (a->n_synth) {	/* the store has their formats */
		fprintf(stderr, "tracerd: --read takes -e, --filter and --unit, not --synthetic: "
			"the store keeps the formats of its synthetic events; see --help\n");
		return 2;
	}
	if (a->n_sections) {
		fprintf(stderr, "tracerd: --read takes -e, --filter and --unit, not "
			"--metrics-listen; see --help\n");
		return 2;
	}
	for (size_t i = 0; i < a->n_events; i++) {
		char *e = realloc(events, len + strlen(a->events[i]) + 2);

		if (!e)
			return 2;
		events = e;
		len += sprintf(events + len, "%s%s", i ? " " : "", a->events[i]);
	}
	ro->events = events;
	ro->filter = a->filter;
	if (read_units(ro, a) < 0) {
		strv_free(ro->units, ro->n_units);
		return 2;
	}
	ro->paths = paths;
	ro->n_paths = n;
	if (!ro->n_paths) {
		fprintf(stderr, "tracerd: --read needs a file or directory; see --help\n");
		return 2;
	}
	if (ro->trace_dat && (ro->json || ro->follow)) {
		fprintf(stderr, "tracerd: --trace-dat writes a file, not lines: not with %s; see --help\n",
			ro->json ? "--json" : "--follow");
		return 2;
	}
	k = read_store(ro);
	strv_free(ro->units, ro->n_units);
	return k;
}

int main(int argc, char **argv)
{
	const struct option *opts = options();
	struct run_opts o = { .config_path = NULL };
	struct read_opts ro = { .since.ns = INT64_MIN, .until.ns = INT64_MAX };
	static struct sel_args sa;
	int c, action = 0;
	const char *arg = NULL;

	while ((c = getopt_long(argc, argv, "c:fhe:", opts, NULL)) >= 0) {
		if (c == 'e')
			c = events_option();
		switch (c) {
		case 'c': o.config_path = optarg; break;
		case 'f': o.foreground = true; break;
		case 'h': help(); return 0;
		case ARG_VERSION: inspect_version(stdout); return 0;
		case ARG_SNAPSHOT:	/* "--snapshot PID" as well as "--snapshot=PID" */
			return snapshot_ask(optarg ? optarg : optind < argc && argv[optind][0] != '-' ?
					    argv[optind] : NULL);
		case ARG_CHECK: case ARG_LIST_EVENTS: case ARG_LIST_CLASSES: case ARG_DESCRIBE:
			action = c;
			/* "--opt VALUE" as well as "--opt=VALUE" for the optional ones */
			arg = optarg ? optarg : optind < argc && argv[optind][0] != '-' ? argv[optind++] : NULL;
			break;
		case ARG_READ: action = c; break;
		case ARG_SYNTHETIC:
		case ARG_METRICS:
			if (c == ARG_SYNTHETIC ? section_option(&sa, "Synthetic", "Event") :
			    section_option(&sa, "Metrics", "Listen"))
				return 2;
			break;
		default:
			if (c >= ARG_SELECTION ? selection_option(c, &sa) : read_option(c, &ro))
				return 2;
		}
	}
	if (action == ARG_READ)	/* the remaining arguments are paths */
		return read_main(&ro, &sa, argv + optind, argc - optind);
	if (optind < argc) {
		fprintf(stderr, "tracerd: unexpected argument '%s'; see --help\n", argv[optind]);
		return 2;
	}
	if (sa.n > sa.n_sections && !sa.n_events) {
		fprintf(stderr, "tracerd: a selection on the command line needs -e (its events); see --help\n");
		return 2;
	}
	if (sa.n > sa.n_sections && action && action != ARG_CHECK) {
		fprintf(stderr, "tracerd: -e and the selection's options go with tracing, --check-config or --read; see --help\n");
		return 2;
	}
	/* Without -e, the default config; with -e, none unless -c names one. */
	if (!o.config_path && sa.n == sa.n_sections)
		o.config_path = DEFAULT_CONFIG;
	o.sel_args = sa.v;
	o.n_sel_args = sa.n;
	if (action == ARG_CHECK)
		return check_config(arg ? arg : o.config_path, &sa);
	if (action)
		return inspect(action, arg, &sa);
	return run_daemon(&o);
}
