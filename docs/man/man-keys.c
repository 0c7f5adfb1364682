// SPDX-License-Identifier: GPL-2.0
/* Builds tracerd.conf(5) from its .in file and the config key table
 * (daemon/config/config_table.c), so that the page cannot drift from what
 * the parser accepts:
 *
 *   man-keys tracerd.conf.5.in > tracerd.conf.5
 *	copies the file, replacing a line "@KEYS Section@" with an entry per
 *	key of [Section] and "@VERSION@" with tracerd's version; fails if a
 *	section of the table has no such line, or the line names no section.
 *   man-keys --dump
 *	one line per key, "Section<TAB>Key<TAB>Default" ("-": none, the key
 *	is required), for tests/integration/man.sh to check the page with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config/config.h"

/* Text for a roff line: backslash and minus escaped (a bare '-' is a
 * hyphen, and options and values must copy as the ASCII minus). */
static void roff(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

/* A text line: "\&" keeps a leading '.' or '\'' from being read as a
 * request. */
static void roff_line(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	roff(f, s);
	fputc('\n', f);
}

/* 4096 as "4K", as a file would write it. */
static void format_size(unsigned long long v, char *buf, size_t size)
{
	static const char suffix[] = "GMK";

	for (int i = 0; i < 3; i++) {
		unsigned shift = 30 - 10 * i;

		if (v && !(v & ((1ULL << shift) - 1))) {
			snprintf(buf, size, "%llu%c", v >> shift, suffix[i]);
			return;
		}
	}
	snprintf(buf, size, "%llu", v);
}

static void print_key(FILE *f, const struct config_item *it)
{
	char buf[512];

	fputs(".TP\n\\fB", f);
	roff(f, it->key);
	fputs("=\\fP\\fI", f);
	if (it->names && it->type == &config_type_enum) {
		/* the few values an enum takes say more than "enum" */
		for (size_t i = 0; it->names[i]; i++) {
			if (i)
				fputc('|', f);
			roff(f, it->names[i]);
		}
	} else {
		roff(f, it->type->name);
	}
	fputs("\\fP\n", f);
	/* The description starts lower case, as the parser's messages use it. */
	snprintf(buf, sizeof(buf), "%s", it->description);
	if (buf[0] >= 'a' && buf[0] <= 'z')
		buf[0] -= 'a' - 'A';
	strcat(buf, buf[strlen(buf) - 1] == '.' ? "" : ".");
	roff_line(f, buf);
	fputs(".br\nDefault: ", f);
	if (!it->def)
		fputs("none; required.\n", f);
	else if (!it->def[0])
		fputs("empty.\n", f);
	else {
		fputs("\\fB", f);
		roff(f, it->def);
		fputs("\\fP.\n", f);
	}
	config_item_expects(it, buf, sizeof(buf));
	/* A plain size's expects() gives an example only; the table has its
	 * range. */
	if (it->type == &config_type_size) {
		char lo[32], hi[32];

		format_size(it->min, lo, sizeof(lo));
		format_size(it->max, hi, sizeof(hi));
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ", from %s to %s", lo, hi);
	}
	fputs(".br\nValue: ", f);
	roff(f, buf);
	fputs(".\n", f);
}

/* Every entry of [section]; 0 if it has none. */
static size_t print_section(FILE *f, const char *section)
{
	size_t n, k = 0;
	const struct config_item *t = config_table(&n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].section, section)) {
			print_key(f, &t[i]);
			k++;
		}
	return k;
}

static int generate(const char *in_path)
{
	size_t n, n_done = 0;
	const struct config_item *t = config_table(&n);
	const char *done[64];
	char line[4096];
	FILE *in = fopen(in_path, "r");
	int ok = 1;

	if (!in) {
		perror(in_path);
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		char section[64];
		char *v = strstr(line, "@VERSION@");

		if (sscanf(line, "@KEYS %63[A-Za-z]@", section) == 1) {
			if (!print_section(stdout, section)) {
				fprintf(stderr, "%s: @KEYS %s@: no such section in the config table\n",
					in_path, section);
				ok = 0;
			}
			for (size_t i = 0; i < n; i++)
				if (!strcmp(t[i].section, section) && n_done < 64) {
					done[n_done++] = t[i].section;
					break;
				}
			continue;
		}
		if (v) {
			*v = 0;
			printf("%s%s%s", line, TRACERD_VERSION, v + strlen("@VERSION@"));
			continue;
		}
		fputs(line, stdout);
	}
	fclose(in);
	/* A new section in the table must be given a place in the page. */
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < n_done && strcmp(done[j], t[i].section))
			j++;
		if (j == n_done) {
			fprintf(stderr, "%s: no @KEYS %s@ line for the keys of [%s]\n", in_path,
				t[i].section, t[i].section);
			ok = 0;
			if (n_done < 64)
				done[n_done++] = t[i].section;
		}
	}
	return ok && !ferror(stdout) && fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--dump")) {
		size_t n;
		const struct config_item *t = config_table(&n);

		for (size_t i = 0; i < n; i++)
			printf("%s\t%s\t%s\n", t[i].section, t[i].key, t[i].def ? t[i].def : "-");
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: man-keys FILE.in > FILE | man-keys --dump\n");
		return 2;
	}
	return generate(argv[1]);
}
