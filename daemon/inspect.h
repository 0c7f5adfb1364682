/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TRACERD_INSPECT_H
#define TRACERD_INSPECT_H

#include "tracer.h"

int inspect_list_events(struct tracer *t, const char *glob);
int inspect_list_classes(struct tracer *t, const char *glob);
int inspect_describe(struct tracer *t, const char *sys_event);

#endif
