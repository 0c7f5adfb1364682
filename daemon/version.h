/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TRACERD_VERSION_H
#define TRACERD_VERSION_H

#include <stdio.h>

/* --version: tracerd's own, then the libbpf, libsystemd, libtraceevent and
 * kernel it runs with, one line each. */
void version_print(FILE *f);

#endif
