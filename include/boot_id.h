/* SPDX-License-Identifier: GPL-2.0 */
/* This boot's id, as /proc/sys/kernel/random/boot_id shows it: public,
 * the same for every process until the next boot. */
#ifndef TRACERD_BOOT_ID_H
#define TRACERD_BOOT_ID_H

#define BOOT_ID_MAX 37	/* "f09dceda-c1cb-4dd7-97f3-db65aa1d8a80" and its NUL */

/* 0, or -errno with id set to "unknown". */
int boot_id_get(char id[BOOT_ID_MAX]);

#endif
