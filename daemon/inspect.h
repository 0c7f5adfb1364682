/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TRACERD_INSPECT_H
#define TRACERD_INSPECT_H

#include <stdio.h>

#include "resolve/registry.h"

int inspect_list_events(struct registry *reg, const char *glob);
int inspect_list_classes(struct registry *reg, const char *glob);
int inspect_describe(struct registry *reg, const char *sys_event);

/* --version: tracerd's own, then the libbpf, libsystemd, libtraceevent and
 * kernel it runs with, one line each. */
void inspect_version(FILE *f);

#endif
