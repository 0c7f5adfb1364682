/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TRACERD_INSPECT_H
#define TRACERD_INSPECT_H

#include "resolve/registry.h"

int inspect_list_events(struct registry *reg, const char *glob);
int inspect_list_classes(struct registry *reg, const char *glob);
int inspect_describe(struct registry *reg, const char *sys_event);

#endif
