// SPDX-License-Identifier: GPL-2.0
/* Every enumerator of vmlinux BTF, sorted by name, loaded on first use. */
#include <bpf/btf.h>
#include "printfmt.h"
#include "util.h"

struct enumerator {
	const char *name;
	int64_t value;
};

static struct btf *vmlinux;
static struct enumerator *enums;
static size_t n_enums;
static bool loaded;

static int cmp_enum(const void *a, const void *b)
{
	return strcmp(((const struct enumerator *)a)->name, ((const struct enumerator *)b)->name);
}

static int add(const char *name, int64_t value, size_t *cap)
{
	if (GROW(enums, *cap, n_enums) < 0)
		return -ENOMEM;
	enums[n_enums++] = (struct enumerator){ name, value };
	return 0;
}

static int add_type(const struct btf_type *t, size_t *cap)
{
	unsigned n = btf_vlen(t);

	for (unsigned i = 0; i < n; i++) {
		int r;

		if (btf_is_enum(t))
			r = add(btf__name_by_offset(vmlinux, btf_enum(t)[i].name_off),
				btf_kflag(t) ? (int64_t)btf_enum(t)[i].val :
					       (int64_t)(uint32_t)btf_enum(t)[i].val, cap);
		else
			r = add(btf__name_by_offset(vmlinux, btf_enum64(t)[i].name_off),
				(int64_t)btf_enum64_value(btf_enum64(t) + i), cap);
		if (r < 0)
			return r;
	}
	return 0;
}

static void load(void)
{
	size_t cap = 0;
	unsigned n;

	loaded = true;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		vmlinux = NULL;
		return;
	}
	n = btf__type_cnt(vmlinux);
	for (unsigned id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(vmlinux, id);

		if ((btf_is_enum(t) || btf_is_enum64(t)) && add_type(t, &cap) < 0)
			return;
	}
	qsort_safe(enums, n_enums, sizeof(*enums), cmp_enum);
}

int btf_enum_value(const char *name, size_t len, int64_t *ret)
{
	char key[128];
	struct enumerator k = { key, 0 }, *hit;

	if (!loaded)
		load();
	if (len >= sizeof(key))
		return -ENOENT;
	memcpy(key, name, len);
	key[len] = 0;
	hit = bsearch(&k, enums, n_enums, sizeof(*enums), cmp_enum);
	if (!hit)
		return -ENOENT;
	*ret = hit->value;
	return 0;
}
