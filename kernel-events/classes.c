// SPDX-License-Identifier: GPL-2.0
/* Grouping events into classes. tracefs does not say which
 * DECLARE_EVENT_CLASS an event belongs to; BTF does, nearly always:
 *  1. an event named like a `struct trace_event_raw_<class>` is that class;
 *  2. otherwise the class whose struct matches the event's fields by name,
 *     offset and size;
 *  3. ties are broken by the `btf_trace_<event>` prototype against the
 *     class's `trace_event_raw_event_<class>` assign function.
 * Without BTF, events with byte-identical layouts and print fmts share a
 * class named after the first of them. */
#include <bpf/btf.h>
#include "knobs.h"
#include "tracerd_record.h"
#include "events.h"
#include "util.h"

struct btf_class {
	char *name;
	char *sig;
	int assign_id;		/* FUNC trace_event_raw_event_<name>, or 0 */
};

struct btf_name_id {
	const char *name;	/* points into the BTF string section */
	int id;
};

/* Sorted for bsearch: attaching every event of the kernel looks up ~2300
 * names among ~150k BTF types, so no linear scans per event. */
struct btf_index {
	struct btf *btf;
	struct btf_class *classes;	/* sorted by sig */
	struct btf_class **by_name;	/* sorted by name */
	size_t n, cap;
	struct btf_name_id *protos;	/* btf_trace_<event> typedefs, sorted */
	size_t n_protos, cap_protos;
};

static const char *strip_loc(const char *name)
{
	if (!strncmp(name, "__data_loc_", 11))
		return name + 11;
	if (!strncmp(name, "__rel_loc_", 10))
		return name + 10;
	return name;
}

static void sig_append(char **sig, size_t *len, const char *name, unsigned off, unsigned size)
{
	char item[160];
	int k = snprintf(item, sizeof(item), "%s@%u:%u,", name, off, size);
	char *n = realloc(*sig, *len + k + 1);

	if (!n)
		return;
	memcpy(n + *len, item, k + 1);
	*sig = n;
	*len += k;
}

static char *btf_struct_sig(const struct btf *btf, const struct btf_type *t)
{
	const struct btf_member *m = btf_members(t);
	char *sig = strdup("");
	size_t len = 0;

	for (unsigned i = 0; sig && i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);
		long size = btf__resolve_size(btf, m->type);

		if (!strcmp(name, "ent") || !strcmp(name, "__data"))
			continue;
		sig_append(&sig, &len, strip_loc(name), btf_member_bit_offset(t, i) / 8,
			   size < 0 ? 0 : size);
	}
	return sig;
}

static char *event_sig(const struct tp_event *e)
{
	char *sig = strdup("");
	size_t len = 0;

	for (size_t i = 0; sig && i < e->n_fields; i++) {
		const struct tp_field *f = &e->fields[i];

		if (!f->is_common)
			sig_append(&sig, &len, f->name, f->offset,
				   f->kind == TP_FIELD_FLEX ? 0 : f->size);
	}
	return sig;
}

static int cmp_sig(const void *a, const void *b)
{
	return strcmp(((const struct btf_class *)a)->sig, ((const struct btf_class *)b)->sig);
}

static int cmp_class_name(const void *a, const void *b)
{
	return strcmp((*(struct btf_class *const *)a)->name, (*(struct btf_class *const *)b)->name);
}

static int cmp_name_id(const void *a, const void *b)
{
	return strcmp(((const struct btf_name_id *)a)->name, ((const struct btf_name_id *)b)->name);
}

static int name_id_find(const struct btf_name_id *v, size_t n, const char *name)
{
	struct btf_name_id key = { .name = name }, *hit;

	hit = bsearch(&key, v, n, sizeof(*v), cmp_name_id);
	return hit ? hit->id : 0;
}

/* One pass over BTF: class structs, their assign functions, event prototypes. */
static int btf_index_scan(struct btf_index *x, struct btf_name_id **funcs, size_t *n_funcs)
{
	unsigned n = btf__type_cnt(x->btf);
	size_t cap_funcs = 0;

	for (unsigned id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(x->btf, id);
		const char *name = btf__name_by_offset(x->btf, t->name_off);

		if (btf_is_struct(t) && !strncmp(name, "trace_event_raw_", 16)) {
			if (GROW(x->classes, x->cap, x->n) < 0)
				return -ENOMEM;
			x->classes[x->n].name = strdup(name + 16);
			x->classes[x->n].sig = btf_struct_sig(x->btf, t);
			if (!x->classes[x->n].name || !x->classes[x->n].sig)
				return -ENOMEM;
			x->n++;
		} else if (btf_is_func(t) && !strncmp(name, "trace_event_raw_event_", 22)) {
			if (GROW(*funcs, cap_funcs, *n_funcs) < 0)
				return -ENOMEM;
			(*funcs)[(*n_funcs)++] = (struct btf_name_id){ name + 22, id };
		} else if (btf_is_typedef(t) && !strncmp(name, "btf_trace_", 10)) {
			if (GROW(x->protos, x->cap_protos, x->n_protos) < 0)
				return -ENOMEM;
			x->protos[x->n_protos++] = (struct btf_name_id){ name + 10, id };
		}
	}
	return 0;
}

static void btf_index_free(struct btf_index *x);

static struct btf_index *btf_index_new(void)
{
	struct btf_index *x = calloc(1, sizeof(*x));
	_cleanup_free_ struct btf_name_id *funcs = NULL;
	size_t n_funcs = 0;

	if (!x)
		return NULL;
	/* TRACERD_BTF overrides the kernel's BTF (tests use it to play "no BTF"). */
	x->btf = knob_str(KNOB_BTF) ? btf__parse(knob_str(KNOB_BTF), NULL) : btf__load_vmlinux_btf();
	if (!x->btf)
		fprintf(stderr, "tracerd: no kernel BTF (%s): event classes are inferred from layouts\n",
			strerror(errno));
	if (!x->btf || btf_index_scan(x, &funcs, &n_funcs) < 0 ||
	    !(x->by_name = calloc(x->n ? x->n : 1, sizeof(*x->by_name)))) {
		btf_index_free(x);
		return NULL;
	}
	qsort_safe(funcs, n_funcs, sizeof(*funcs), cmp_name_id);
	qsort_safe(x->protos, x->n_protos, sizeof(*x->protos), cmp_name_id);
	for (size_t i = 0; i < x->n; i++)
		x->classes[i].assign_id = name_id_find(funcs, n_funcs, x->classes[i].name);
	qsort_safe(x->classes, x->n, sizeof(*x->classes), cmp_sig);
	for (size_t i = 0; i < x->n; i++)
		x->by_name[i] = &x->classes[i];
	qsort_safe(x->by_name, x->n, sizeof(*x->by_name), cmp_class_name);
	return x;
}

static void btf_index_free(struct btf_index *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++) {
		free(x->classes[i].name);
		free(x->classes[i].sig);
	}
	free(x->classes);
	free(x->by_name);
	free(x->protos);
	btf__free(x->btf);
	free(x);
}

/* The function prototype behind a type: a FUNC, or a typedef to a pointer to one. */
static const struct btf_type *proto_of(const struct btf *btf, int id)
{
	const struct btf_type *t;

	if (id <= 0)
		return NULL;
	t = btf__type_by_id(btf, id);
	while (t && (btf_is_typedef(t) || btf_is_ptr(t) || btf_is_func(t)))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? t : NULL;
}

static bool protos_equal(const struct btf_type *a, const struct btf_type *b)
{
	const struct btf_param *pa = btf_params(a), *pb = btf_params(b);

	if (btf_vlen(a) != btf_vlen(b))
		return false;
	for (unsigned i = 1; i < btf_vlen(a); i++)	/* [0] is void *__data */
		if (pa[i].type != pb[i].type)
			return false;
	return true;
}

static const char *btf_class_of(const struct btf_index *x, const struct tp_event *e)
{
	_cleanup_free_ char *sig = event_sig(e);
	struct btf_class key = { .name = e->name, .sig = sig }, *k = &key, **named, *hit, *end;
	const struct btf_type *ev_proto;

	/* Every syscalls: event uses the kernel's event_class_syscall_enter/exit. */
	if (e->system && !strcmp(e->system, "syscalls"))
		return strncmp(e->name, "sys_enter_", 10) ? "syscall_exit" : "syscall_enter";
	named = bsearch(&k, x->by_name, x->n, sizeof(*x->by_name), cmp_class_name);
	if (named)
		return (*named)->name;
	if (!sig)
		return NULL;
	hit = bsearch(&key, x->classes, x->n, sizeof(*x->classes), cmp_sig);
	if (!hit)
		return NULL;
	while (hit > x->classes && !strcmp(hit[-1].sig, sig))
		hit--;
	end = hit + 1;
	while (end < x->classes + x->n && !strcmp(end->sig, sig))
		end++;
	if (end - hit == 1)
		return hit->name;
	ev_proto = proto_of(x->btf, name_id_find(x->protos, x->n_protos, e->name));
	for (struct btf_class *c = hit; c < end; c++) {
		const struct btf_type *cl_proto = proto_of(x->btf, c->assign_id);

		if (ev_proto && cl_proto && protos_equal(ev_proto, cl_proto))
			return c->name;
	}
	return hit->name;	/* the remaining ties have byte-identical layouts */
}

static bool same_layout(const struct tp_event *a, const struct tp_event *b)
{
	if (a->n_fields != b->n_fields || strcmp(a->print_fmt, b->print_fmt))
		return false;
	for (size_t i = 0; i < a->n_fields; i++) {
		const struct tp_field *fa = &a->fields[i], *fb = &b->fields[i];

		if (fa->offset != fb->offset || fa->size != fb->size ||
		    strcmp(fa->name, fb->name) || strcmp(fa->type, fb->type))
			return false;
	}
	return true;
}

int tp_classes_task_comm(const struct tp_classes *c)
{
	const struct btf_index *x = c->btf;
	const struct btf_type *t;
	const struct btf_member *m;
	int id;

	/* TRACERD_BTF's is not the kernel's, which the verifier checks against. */
	if (!x || knob_str(KNOB_BTF))
		return 0;
	id = btf__find_by_name_kind(x->btf, "task_struct", BTF_KIND_STRUCT);
	if (id < 0)
		return 0;
	t = btf__type_by_id(x->btf, id);
	m = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(x->btf, m->name_off), "comm") &&
		    btf__resolve_size(x->btf, m->type) == TRACERD_COMM_LEN &&
		    btf_member_bit_offset(t, i) % 64 == 0)
			return btf_member_bit_offset(t, i) / 8;
	return 0;
}

int tp_classes_init(struct tp_classes *c)
{
	memset(c, 0, sizeof(*c));
	c->btf = btf_index_new();	/* NULL: fall back to layouts */
	return 0;
}

static struct tp_class *class_find(struct tp_classes *c, const char *name,
				   const struct tp_event *e)
{
	for (size_t i = 0; i < c->n; i++) {
		struct tp_class *k = c->classes[i];

		/* A synthetic event's class is its own, whatever its name or layout. */
		if (!k->n_events || tp_event_is_synthetic(k->events[0]))
			continue;
		if (name ? !strcmp(k->name, name)
			 : !k->from_btf && same_layout(k->events[0], e))
			return k;
	}
	return NULL;
}

/* A synthetic event (issue 31) is a class of its own: no tracepoint's
 * program serves it, and a kernel struct or event of its name or layout is
 * not its. */
int tp_classes_add(struct tp_classes *c, struct tp_event *e)
{
	bool synthetic = tp_event_is_synthetic(e);
	const char *name = c->btf && !synthetic ? btf_class_of(c->btf, e) : NULL;
	struct tp_class *k = synthetic ? NULL : class_find(c, name, e);

	if (!k) {
		if (GROW(c->classes, c->cap, c->n) < 0 || !(k = calloc(1, sizeof(*k))))
			return -ENOMEM;
		k->name = strdup(name ? name : e->name);
		k->from_btf = name;
		if (!k->name) {
			free(k);
			return -ENOMEM;
		}
		c->classes[c->n++] = k;
	}
	if (GROW(k->events, k->cap_events, k->n_events) < 0)
		return -ENOMEM;
	k->events[k->n_events++] = e;
	e->class = k;
	return 0;
}

void tp_classes_free(struct tp_classes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->classes[i]->name);
		free(c->classes[i]->events);
		free(c->classes[i]);
	}
	free(c->classes);
	btf_index_free(c->btf);
	memset(c, 0, sizeof(*c));
}
