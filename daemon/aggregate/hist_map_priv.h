/* SPDX-License-Identifier: GPL-2.0 */
/* Inside daemon/aggregate: how the maps hold a dump's keys, shared by the
 * dumps that clear them (hist_map.c) and the reads that do not (hist_peek.c). */
#ifndef TRACERD_HIST_MAP_PRIV_H
#define TRACERD_HIST_MAP_PRIV_H

#include "hist_map.h"

/* How a map's key holds the dump's key: as it is, as a stack id (the small
 * map of a stack_ids slot), or in the compact layout of short strings (the
 * small map of a slot with agg_desc.short_size). */
enum key_form { KEY_FULL, KEY_STACK_ID, KEY_COMPACT };

/* The small map's entries of a slot that has some there besides its own
 * map's: keyed by stack id, or compact. */
enum key_form hist_small_form(const struct agg_desc *desc);
/* The dump's key of a map key: key itself, or made in buf; NULL: a stack
 * id whose stack is gone (never: the program's map keeps them). */
const uint8_t *hist_full_key(const struct hist_maps *m, const struct agg_desc *desc,
			     enum key_form f, const uint8_t *key, uint8_t buf[TRACERD_AGG_LARGE]);
#endif
