// SPDX-License-Identifier: GPL-2.0
/* The event registry and Events= globs (daemon/resolve/) against a tracefs
 * built from the captured formats: a temporary directory with
 * available_events and events/<sys>/<event>/format for all 2323 events of
 * tests/fixtures/formats-6.18.txt, named by TRACERD_TRACEFS. Checks exact
 * names, globs, an event named twice, the registry sharing one format
 * between selections, "did you mean" for names that match nothing, an
 * invalid glob's column, an unreadable format, a tracefs that is not
 * there, and the config's synthetic events among tracefs's. Classes come
 * from the running kernel's BTF, as in the daemon. */
#include <fnmatch.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fixtures.h"
#include "resolve/registry.h"
#include "test.h"

/* In /dev/shm: removing 2400 directories from a disk takes seconds. */
static char root[] = "/dev/shm/tracerd-test-resolve-XXXXXX";
static struct registry *reg;

/* Writes the fake tracefs; "fake:missing" is listed but has no format, and
 * so is "synthetic:made_in_tracefs", a synthetic event of the kernel's,
 * which the registry does not list. */
static int build_tracefs(void)
{
	char p[512];
	FILE *avail;

	if (!mkdtemp(root))
		return -errno;
	snprintf(p, sizeof(p), "%s/events", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/available_events", root);
	avail = fopen(p, "we");
	if (!avail)
		return -errno;
	/* Listed backwards: the registry sorts what tracefs lists. */
	for (size_t i = n_fixtures; i-- > 0;) {
		_cleanup_free_ char *sys = strdup(fixtures[i].name);
		char *ev = strchr(sys, ':');
		FILE *f;

		*ev++ = 0;
		snprintf(p, sizeof(p), "%s/events/%s", root, sys);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/events/%s/%s", root, sys, ev);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/events/%s/%s/format", root, sys, ev);
		f = fopen(p, "we");
		if (!f) {
			fclose(avail);
			return -errno;
		}
		fputs(fixtures[i].text, f);
		fclose(f);
		fprintf(avail, "%s\n", fixtures[i].name);
	}
	fprintf(avail, "fake:missing\nsynthetic:made_in_tracefs\n");
	fclose(avail);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* How many captured events a glob matches, counted apart from the code
 * under test (fnmatch, which agrees with the kernel's glob on these). */
static size_t fixture_count(const char *glob)
{
	size_t n = 0;

	for (size_t i = 0; i < n_fixtures; i++)
		n += fnmatch(glob, fixtures[i].name, 0) == 0;
	return n;
}

/* A selection with these globs, as the config reader leaves it: each glob
 * on line 3 + i, from column 8. */
struct sel {
	struct selection s;
	char *globs[8];
	int lines[8], cols[8];
};

static void sel_init(struct sel *x, const char *const *globs, size_t n)
{
	memset(x, 0, sizeof(*x));
	for (size_t i = 0; i < n; i++) {
		x->globs[i] = (char *)globs[i];
		x->lines[i] = 3 + i;
		x->cols[i] = 8;
	}
	x->s.name = (char *)"test";
	x->s.events = x->globs;
	x->s.event_lines = x->lines;
	x->s.event_cols = x->cols;
	x->s.events_file = (char *)"/etc/tracerd.conf";
	x->s.n_events = n;
}

/* Resolves globs; returns the count or -errno, d holding the error. */
static int resolve(const char *const *globs, size_t n, struct tp_event ***ev, struct diag *d)
{
	struct sel x;
	size_t k = 0;
	int r;

	sel_init(&x, globs, n);
	memset(d, 0, sizeof(*d));
	*ev = NULL;
	r = resolve_selection(reg, &x.s, ev, &k, d);
	return r < 0 ? r : (int)k;
}

static void no_tracefs_is_enomedium(void)
{
	struct registry *r = NULL;
	struct diag d = { 0 };
	int ret;

	setenv("TRACERD_TRACEFS", "/nonexistent/tracefs", 1);
	ret = registry_new(&r, NULL, 0, &d);
	EXPECT(ret == -ENOMEDIUM && !r, "registry_new gave %d", ret);
	EXPECT(strstr(d.msg, "tracefs is not mounted at /nonexistent/tracefs"), "message '%s'", d.msg);
}

static void the_registry_lists_tracefs_sorted(void)
{
	struct diag d = { 0 };
	int r;

	setenv("TRACERD_TRACEFS", root, 1);
	r = registry_new(&reg, NULL, 0, &d);
	EXPECT(r == 0, "registry_new: %d %s", r, d.msg);
	if (r < 0)
		return;
	EXPECT(reg->n_available == n_fixtures + 1, "%zu listed, want %zu", reg->n_available,
	       n_fixtures + 1);
	for (size_t i = 1; i < reg->n_available; i++)
		if (strcmp(reg->available[i - 1], reg->available[i]) >= 0) {
			EXPECT(0, "not sorted at %zu: %s, %s", i, reg->available[i - 1], reg->available[i]);
			break;
		}
	EXPECT(reg->n_events == 0, "formats loaded before anything asked: %zu", reg->n_events);
}

static void an_exact_name_is_one_event(void)
{
	const char *g[] = { "sched:sched_switch" };
	struct tp_event **ev;
	struct diag d;
	int n = resolve(g, 1, &ev, &d);

	EXPECT(n == 1, "%d events; %s", n, d.msg);
	if (n == 1) {
		EXPECT_STREQ(ev[0]->system, "sched");
		EXPECT_STREQ(ev[0]->name, "sched_switch");
		EXPECT(ev[0]->id == 372, "id %d, the fixture says 372", ev[0]->id);
		EXPECT(ev[0]->class && ev[0]->class->n_events >= 1, "no class");
		EXPECT(tp_event_field(ev[0], "prev_comm") != NULL, "no prev_comm field");
	}
	free(ev);
}

static void globs_match_what_fnmatch_matches(void)
{
	static const char *const globs[] = {
		"sched:*", "sched:sched_process_*", "*:sched_switch", "syscalls:sys_enter_open*",
		"xfs:xfs_da_*", "ext4:ext4_fc_track_[clu]*", "t?p:*", "*:*_start",
	};

	for (size_t i = 0; i < ARRAY_SIZE(globs); i++) {
		struct tp_event **ev;
		struct diag d;
		int n = resolve(&globs[i], 1, &ev, &d);
		size_t want = fixture_count(globs[i]);

		EXPECT(want > 0 && n == (int)want, "%s: %d events, fnmatch says %zu; %s", globs[i], n,
		       want, d.msg);
		for (int k = 0; k < n; k++) {
			char full[256];

			snprintf(full, sizeof(full), "%s:%s", ev[k]->system, ev[k]->name);
			if (fnmatch(globs[i], full, 0)) {
				EXPECT(0, "%s matched %s", globs[i], full);
				break;
			}
		}
		free(ev);
	}
	EXPECT(fixture_count("ext4:ext4_fc_track_[clu]*") == 3, "ext4_fc_track_[clu]*: %zu",
	       fixture_count("ext4:ext4_fc_track_[clu]*"));
}

/* Each event once per selection, in the order the globs first name it;
 * one loaded format for every selection that names the event. */
static void an_event_named_twice_is_resolved_once(void)
{
	const char *g[] = { "sched:sched_switch", "sched:*", "*:sched_switch" };
	const char *g2[] = { "*:sched_switch" };
	struct tp_event **ev, **ev2;
	struct diag d;
	size_t loaded;
	int n = resolve(g, 3, &ev, &d), n2;

	EXPECT(n == (int)fixture_count("sched:*"), "%d events; %s", n, d.msg);
	EXPECT(n > 0 && !strcmp(ev[0]->name, "sched_switch"), "first %s", n > 0 ? ev[0]->name : "-");
	for (int i = 0; i < n; i++)
		for (int k = i + 1; k < n; k++)
			if (ev[i] == ev[k])
				EXPECT(0, "%s twice", ev[i]->name);
	loaded = reg->n_events;
	n2 = resolve(g2, 1, &ev2, &d);
	EXPECT(n2 == 1 && n > 0 && ev2[0] == ev[0], "another selection got another format");
	EXPECT(reg->n_events == loaded, "loaded again: %zu, was %zu", reg->n_events, loaded);
	free(ev);
	free(ev2);
}

static void no_match_suggests(void)
{
	const char *typo[] = { "sched:sched_swich" };
	const char *glob[] = { "sched:sched_swi*x" };
	const char *sys[] = { "shced:sched_switch" };
	struct tp_event **ev;
	struct diag d;
	int n;

	n = resolve(typo, 1, &ev, &d);
	EXPECT(n == -EINVAL && !ev, "a typo resolved to %d", n);
	EXPECT(strstr(d.msg, "no event 'sched:sched_swich'; did you mean sched:sched_switch"),
	       "message '%s'", d.msg);
	EXPECT(!strcmp(d.file, "/etc/tracerd.conf") && d.line == 3 && d.col == 8, "at %s:%d:%d",
	       d.file, d.line, d.col);

	n = resolve(glob, 1, &ev, &d);
	EXPECT(n == -EINVAL, "a glob matching nothing resolved to %d", n);
	EXPECT(strstr(d.msg, "'sched:sched_swi*x' matches no event; did you mean sched:sched_switch"),
	       "message '%s'", d.msg);

	n = resolve(sys, 1, &ev, &d);
	EXPECT(n == -EINVAL && strstr(d.msg, "did you mean sched:sched_switch"), "message '%s'", d.msg);
}

static void suggestions_are_near_or_nothing(void)
{
	char buf[512];

	suggest_events(reg, "tcp:*retrans*", buf, sizeof(buf));
	EXPECT(strstr(buf, "tcp:tcp_retransmit_skb") && !strstr(buf, "sched:"), "tcp: '%s'", buf);
	suggest_events(reg, "sched:sched_process_exex", buf, sizeof(buf));
	EXPECT(!strncmp(buf, "sched:sched_process_exec", 24), "exex: '%s'", buf);
	suggest_events(reg, "qqqq:zzzzzzzz", buf, sizeof(buf));
	EXPECT_STREQ(buf, "");
	/* Three at most, "a, b or c". */
	suggest_events(reg, "sched:sched_process_*x", buf, sizeof(buf));
	EXPECT(strstr(buf, " or ") && strchr(buf, ',') && !strchr(strchr(buf, ',') + 1, ','),
	       "three: '%s'", buf);
}

/* The column points at the '[' no ']' closes. */
static void an_invalid_glob_points_at_its_bracket(void)
{
	const char *g[] = { "sched:*", "sched:[ab" };
	struct tp_event **ev;
	struct diag d;
	int n = resolve(g, 2, &ev, &d);

	EXPECT(n == -EINVAL && !ev, "resolved to %d", n);
	EXPECT(strstr(d.msg, "'sched:[ab' is not a valid glob: expected ']'"), "message '%s'", d.msg);
	EXPECT(d.line == 4 && d.col == 8 + 6, "at %d:%d, want 4:14", d.line, d.col);
}

static void an_unreadable_format_is_an_error(void)
{
	const char *g[] = { "fake:*" };
	struct tp_event **ev;
	struct diag d;
	int n = resolve(g, 1, &ev, &d);

	EXPECT(n < 0 && !ev, "resolved to %d", n);
	EXPECT(strstr(d.msg, "cannot read the format of fake:missing: No such file or directory"),
	       "message '%s'", d.msg);
}

static bool listed(const struct registry *r, const char *name)
{
	for (size_t i = 0; i < r->n_available; i++)
		if (!strcmp(r->available[i], name))
			return true;
	return false;
}

/* [Synthetic]: the config's events are listed, sorted, as synthetic:NAME,
 * built from their definitions with ids from TP_SYNTH_ID_FIRST in config
 * order and a class each (sched_switch's name and BTF struct are not its);
 * globs and suggestions find them. A reload keeps an unchanged
 * definition's event and makes a changed one anew, and says which globs
 * name a changed one. */
static void synthetic_events_resolve(void)
{
	struct synth_def defs[] = {
		{ .def = (char *)"wakeup_latency u64 lat; pid_t pid; int prio",
		  .pos = { .file = (char *)"t.conf", .line = 2, .col = 7 } },
		{ .def = (char *)"sched_switch u64 x",
		  .pos = { .file = (char *)"t.conf", .line = 3, .col = 1 } },
	}, changed[] = {
		defs[0],
		{ .def = (char *)"sched_switch u32 y", .pos = defs[1].pos },
	};
	const char *g[] = { "synthetic:*" }, *kernel[] = { "sched:sched_switch" },
		   *typo[] = { "synthetic:wakeup_latancy" }, *wakeup[] = { "synthetic:wakeup*" };
	struct tp_event **ev = NULL, **kev = NULL, *e, *kept;
	struct registry *sr = NULL;
	struct diag d = { 0 };
	struct sel x;
	size_t n = 0, k = 0;
	int r = registry_new(&sr, defs, ARRAY_SIZE(defs), &d);

	EXPECT(r == 0, "registry_new: %d %s", r, d.msg);
	if (r < 0)
		return;
	EXPECT(sr->n_available == n_fixtures + 1 + 2, "%zu listed", sr->n_available);
	EXPECT(listed(sr, "synthetic:wakeup_latency") && listed(sr, "synthetic:sched_switch") &&
	       !listed(sr, "synthetic:made_in_tracefs"), "the config's synthetic events, not tracefs's");
	for (size_t i = 1; i < sr->n_available; i++)
		if (strcmp(sr->available[i - 1], sr->available[i]) >= 0) {
			EXPECT(0, "not sorted at %zu: %s, %s", i, sr->available[i - 1], sr->available[i]);
			break;
		}
	sel_init(&x, g, 1);
	r = resolve_selection(sr, &x.s, &ev, &n, &d);
	EXPECT(r == 0 && n == 2, "synthetic:* gave %zu events: %s", n, d.msg);
	if (r == 0 && n == 2) {
		/* in the list's order: sched_switch before wakeup_latency */
		EXPECT(!strcmp(ev[0]->system, "synthetic") && !strcmp(ev[0]->name, "sched_switch") &&
		       ev[0]->id == TP_SYNTH_ID_FIRST + 1, "%s:%s id %d", ev[0]->system, ev[0]->name,
		       ev[0]->id);
		EXPECT(!strcmp(ev[1]->name, "wakeup_latency") && ev[1]->id == TP_SYNTH_ID_FIRST,
		       "%s id %d", ev[1]->name, ev[1]->id);
		EXPECT(tp_event_is_synthetic(ev[1]) && tp_event_field(ev[1], "prio"), "its fields");
		EXPECT(ev[0]->class && ev[0]->class->n_events == 1 && ev[1]->class &&
		       ev[1]->class->n_events == 1 && ev[0]->class != ev[1]->class, "a class each");
		sel_init(&x, kernel, 1);
		EXPECT(resolve_selection(sr, &x.s, &kev, &k, &d) == 0 && k == 1 &&
		       !tp_event_is_synthetic(kev[0]) && kev[0]->class != ev[0]->class &&
		       kev[0]->id != ev[0]->id, "sched:sched_switch is the kernel's, in its own class");
		free(kev);
	}
	EXPECT(registry_event(sr, "synthetic:made_in_tracefs", &e) == -ENOENT,
	       "a kernel's synthetic event is not read from tracefs");
	sel_init(&x, typo, 1);
	EXPECT(resolve_selection(sr, &x.s, &kev, &k, &d) < 0, "a typo resolves");
	EXPECT_STREQ(d.msg, "no event 'synthetic:wakeup_latancy'; did you mean synthetic:wakeup_latency");
	EXPECT(d.line == 3 && d.col == 8, "at %d:%d", d.line, d.col);

	kept = n == 2 ? ev[1] : NULL;
	r = registry_synthetic(sr, changed, ARRAY_SIZE(changed), &d);
	EXPECT(r == 0, "reload: %s", d.msg);
	EXPECT(registry_event(sr, "synthetic:wakeup_latency", &e) == 0 && e == kept,
	       "an unchanged definition keeps its event");
	EXPECT(registry_event(sr, "synthetic:sched_switch", &e) == 0 && n == 2 && e != ev[0] &&
	       tp_event_field(e, "y") && e->id == TP_SYNTH_ID_FIRST + 1, "a changed one is new");
	sel_init(&x, g, 1);
	EXPECT(registry_synthetic_changed(sr, &x.s), "synthetic:* names the changed one");
	sel_init(&x, wakeup, 1);
	EXPECT(!registry_synthetic_changed(sr, &x.s), "synthetic:wakeup* names none");
	sel_init(&x, kernel, 1);
	EXPECT(!registry_synthetic_changed(sr, &x.s), "sched:sched_switch is not synthetic");
	r = registry_synthetic(sr, changed, 1, &d);
	EXPECT(r == 0 && !listed(sr, "synthetic:sched_switch") && sr->n_available == n_fixtures + 2,
	       "a removed one is not listed: %s", d.msg);
	sel_init(&x, typo, 1);
	x.globs[0] = (char *)"synthetic:sched_switch";
	EXPECT(registry_synthetic_changed(sr, &x.s), "nor kept");
	/* config_load() refused it already; a registry told still says where */
	changed[1].def = (char *)"broken u64 a; foo b";
	EXPECT(registry_synthetic(sr, changed, 2, &d) == -EINVAL && d.line == 3 && d.col == 15,
	       "a bad definition: %d:%d %s", d.line, d.col, d.msg);
	EXPECT(registry_event(sr, "synthetic:wakeup_latency", &e) == 0 && e == kept,
	       "and changes nothing");
	free(ev);
	registry_free(sr, NULL);
}

int main(void)
{
	fixtures_load();
	if (build_tracefs() < 0) {
		printf("not ok - cannot build a tracefs from %s in %s\n", FIXTURE, root);
		return 1;
	}
	RUN(no_tracefs_is_enomedium);
	RUN(the_registry_lists_tracefs_sorted);
	if (reg) {
		RUN(an_exact_name_is_one_event);
		RUN(globs_match_what_fnmatch_matches);
		RUN(an_event_named_twice_is_resolved_once);
		RUN(no_match_suggests);
		RUN(suggestions_are_near_or_nothing);
		RUN(an_invalid_glob_points_at_its_bracket);
		RUN(an_unreadable_format_is_an_error);
		RUN(synthetic_events_resolve);
	}
	registry_free(reg, NULL);
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	fixtures_free();
	return TEST_EXIT();
}
