/* SPDX-License-Identifier: GPL-2.0 */
/* A socket address as a config writes it: "HOST:PORT" (IPv4), "[V6]:PORT",
 * or an absolute unix socket path. Parsed once, for the config's check and
 * for the socket that listens on it. */
#ifndef TRACERD_SOCKADDR_SPEC_H
#define TRACERD_SOCKADDR_SPEC_H

#include <sys/socket.h>

#define SOCKADDR_SPEC_EXPECTED "HOST:PORT, [IPV6]:PORT or an absolute unix socket path"

/* 0, or -EINVAL with *bad the byte offset in spec where it went wrong. */
int sockaddr_spec_parse(const char *spec, struct sockaddr_storage *sa, socklen_t *len, int *bad);

/* The other way: an address in the form above ("127.0.0.1:9464", "[::1]:9464",
 * "/run/x.sock"; an abstract unix socket as "@name", an unnamed one as "");
 * -EAFNOSUPPORT for another family. What is equal parses to equal text. */
int sockaddr_spec_format(const struct sockaddr_storage *sa, socklen_t len, char *buf, size_t size);

#endif
