/* SPDX-License-Identifier: GPL-2.0 */
/* The daemon's own messages, on stderr. Under systemd, stderr is a journal
 * stream ($JOURNAL_STREAM), and a "<N>" prefix carries the priority. */
#ifndef TRACERD_LOG_H
#define TRACERD_LOG_H

#include <syslog.h>

void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)

#endif
