// SPDX-License-Identifier: GPL-2.0
/* From a selection's subsystem:event globs to loaded event formats. */
#include "resolve/registry.h"
#include "util.h"

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* How far candidate "sys:event" is from what was written, or SIZE_MAX when
 * it is no likely meaning of it. A plain name: the edit distance, a real
 * name it is the start of counting as 1, and only close ones (a fifth of
 * the length, at least 2) qualify. A glob: its literal start against the
 * candidate's start, or else its longest literal piece found inside. */
static size_t suggestion_score(const char *glob, const char *cand)
{
	const char *gcolon = strchr(glob, ':'), *ccolon = strchr(cand, ':');
	size_t glen = strlen(glob), d, limit;
	char gsys[128], csys[128];
	const char *gev, *cev;
	bool sys_ok;

	if (!ccolon || glen >= 128)
		return SIZE_MAX;
	snprintf(gsys, sizeof(gsys), "%.*s", gcolon ? (int)(gcolon - glob) : 0, glob);
	snprintf(csys, sizeof(csys), "%.*s", (int)(ccolon - cand), cand);
	gev = gcolon ? gcolon + 1 : glob;
	cev = ccolon + 1;
	sys_ok = !gcolon || (has_glob(gsys) ? tp_glob_match(gsys, csys) : !strcmp(gsys, csys));
	if (!has_glob(glob)) {
		limit = glen / 5 > 2 ? glen / 5 : 2;
		d = diag_edit_distance(gcolon ? glob : gev, gcolon ? cand : cev, false);
		if (sys_ok && *gev && !strncmp(cev, gev, strlen(gev)) && d > 1)
			d = 1;
		return d <= limit ? d : SIZE_MAX;
	}
	if (!sys_ok) {	/* a mistyped subsystem in front of a good glob */
		d = diag_edit_distance(gsys, csys, false);
		return d <= 1 && tp_glob_match(gev, cev) ? d : SIZE_MAX;
	}
	{
		size_t lit = strcspn(gev, "*?["), best = 0;
		char piece[128], head[128];

		if (lit >= 3) {
			snprintf(head, sizeof(head), "%.*s", (int)lit, cev);
			snprintf(piece, sizeof(piece), "%.*s", (int)lit, gev);
			d = diag_edit_distance(piece, head, false);
			return d <= (lit / 5 > 1 ? lit / 5 : 1) ? d : SIZE_MAX;
		}
		/* "*retrans*": the longest literal piece, anywhere in the name */
		for (const char *q = gev; *q; q += strcspn(q, "*?[]") ?: 1) {
			size_t n = strcspn(q, "*?[]");

			if (n >= 3 && n < sizeof(piece)) {
				snprintf(piece, sizeof(piece), "%.*s", (int)n, q);
				if (strstr(cev, piece) && n > best)
					best = n;
			}
		}
		return best ? 100 - best : SIZE_MAX;
	}
}

/* The three available events nearest to glob, as "a, b or c"; empty when
 * nothing is near enough to be what was meant. */
void suggest_events(struct registry *reg, const char *glob, char *buf, size_t size)
{
	size_t best[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX }, idx[3] = { 0 };

	buf[0] = 0;
	for (size_t i = 0; i < reg->n_available; i++) {
		size_t dist = suggestion_score(glob, reg->available[i]);

		for (size_t k = 0; k < 3 && dist != SIZE_MAX; k++)
			if (dist < best[k]) {
				memmove(best + k + 1, best + k, (2 - k) * sizeof(*best));
				memmove(idx + k + 1, idx + k, (2 - k) * sizeof(*idx));
				best[k] = dist;
				idx[k] = i;
				break;
			}
	}
	for (size_t k = 0; k < 3 && best[k] != SIZE_MAX; k++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s",
			 k == 0 ? "" : k == 2 || best[k + 1] == SIZE_MAX ? " or " : ", ",
			 reg->available[idx[k]]);
}

static int add_unique(struct tp_event ***v, size_t *n, size_t *cap, struct tp_event *e)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == e)
			return 0;
	if (GROW(*v, *cap, *n) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = e;
	return 0;
}

static int resolve_glob(struct registry *reg, const struct selection *s, size_t gi,
			struct tp_event ***v, size_t *n, size_t *cap, struct diag *d)
{
	const char *g = s->events[gi];
	size_t matched = 0;
	char near[512];
	int at = tp_glob_check(g);

	if (at >= 0)
		return diag_set(d, s->events_file, s->event_lines[gi], s->event_cols[gi] + at,
				"'%s' is not a valid glob: expected ']' to close this '['", g);

	for (size_t i = 0; i < reg->n_available; i++) {
		struct tp_event *e;
		int r;

		if (!tp_glob_match(g, reg->available[i]))
			continue;
		r = registry_event(reg, reg->available[i], &e);
		if (r < 0)
			return diag_set(d, s->events_file, s->event_lines[gi], s->event_cols[gi],
					"cannot read the format of %s: %s", reg->available[i], strerror(-r));
		r = add_unique(v, n, cap, e);
		if (r < 0)
			return r;
		matched++;
	}
	if (matched)
		return 0;
	suggest_events(reg, g, near, sizeof(near));
	return diag_set(d, s->events_file, s->event_lines[gi], s->event_cols[gi],
			has_glob(g) ? "'%s' matches no event%s%s" : "no event '%s'%s%s",
			g, near[0] ? "; did you mean " : "", near);
}

int resolve_selection(struct registry *reg, const struct selection *s,
		      struct tp_event ***events, size_t *n, struct diag *d)
{
	struct tp_event **v = NULL;
	size_t k = 0, cap = 0;

	for (size_t gi = 0; gi < s->n_events; gi++) {
		int r = resolve_glob(reg, s, gi, &v, &k, &cap, d);

		if (r < 0) {
			free(v);
			return r;
		}
	}
	*events = v;
	*n = k;
	return 0;
}
