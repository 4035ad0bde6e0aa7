// SPDX-License-Identifier: BSD-2-Clause
/* "Did you mean": see suggest.h. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "util/errors.h"
#include "util/suggest.h"

#define WORD_MAX 64
#define OPTIONS_MAX 128 /* long options of one command, its children's included */

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
	unsigned m = a < b ? a : b;

	return m < c ? m : c;
}

/* Damerau-Levenshtein (optimal string alignment), row by row */
unsigned suggest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned d[WORD_MAX + 1][WORD_MAX + 1];

	if (la > WORD_MAX || lb > WORD_MAX)
		return ~0u;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = a[i - 1] != b[j - 1];

			d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < d[i][j])
				d[i][j] = d[i - 2][j - 2] + 1;
		}
	}
	return d[la][lb];
}

const char *suggest_nearest(const char *word, const char *const *words)
{
	const char *best = NULL;
	unsigned best_d = ~0u, len = (unsigned)strlen(word);

	for (const char *const *w = words; *w; w++) {
		unsigned d = suggest_distance(word, *w);

		if (d < best_d) {
			best_d = d;
			best = *w;
		}
	}
	return best && best_d <= 2 && 2 * best_d < len ? best : NULL;
}

struct opt_list {
	const char *name[OPTIONS_MAX + 1];
	const struct argp_option *opt[OPTIONS_MAX];
	int n;
};

static void collect(const struct argp *argp, struct opt_list *l)
{
	for (const struct argp_option *o = argp->options; o && (o->name || o->key || o->doc);
	     o++)
		if (o->name && !(o->flags & OPTION_DOC) && l->n < OPTIONS_MAX) {
			l->opt[l->n] = o;
			l->name[l->n++] = o->name;
		}
	for (const struct argp_child *c = argp->children; c && c->argp; c++)
		collect(c->argp, l);
	l->name[l->n] = NULL;
}

/* The option `name` (len bytes) names or abbreviates, as argp takes it; NULL: none */
static const struct argp_option *find_long(const struct opt_list *l, const char *name,
					   size_t len)
{
	const struct argp_option *prefix = NULL;

	for (int i = 0; i < l->n; i++) {
		if (strncmp(l->name[i], name, len))
			continue;
		if (!l->name[i][len])
			return l->opt[i];
		prefix = l->opt[i];
	}
	return prefix;
}

static const struct argp_option *find_short(const struct opt_list *l, int key)
{
	for (int i = 0; i < l->n; i++)
		if (l->opt[i]->key == key)
			return l->opt[i];
	return NULL;
}

static void check_long(const struct opt_list *l, const char *arg, bool *value_next)
{
	static const char *const builtin[] = { "help", "usage", "version", NULL };
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	const struct argp_option *o = find_long(l, arg, len);
	char word[WORD_MAX];
	const char *near;

	if (o) {
		*value_next = o->arg && !(o->flags & OPTION_ARG_OPTIONAL) && !eq;
		return;
	}
	if (len >= sizeof(word))
		return;
	memcpy(word, arg, len);
	word[len] = '\0';
	for (const char *const *b = builtin; *b; b++)
		if (!strncmp(*b, word, len))
			return;
	near = suggest_nearest(word, l->name);
	if (near) {
		char hint[WORD_MAX + 32];

		snprintf(hint, sizeof(hint), "did you mean --%s?", near);
		infl_die(EXIT_USAGE, hint, "unrecognized option '--%s'", word);
	}
}

/* A cluster of short options ("-vi", "-i3s"): whether its last one takes the next word */
static bool short_takes_next(const struct opt_list *l, const char *a)
{
	for (const char *c = a + 1; *c; c++) {
		const struct argp_option *o = find_short(l, (unsigned char)*c);

		if (o && o->arg && !(o->flags & OPTION_ARG_OPTIONAL))
			return !c[1];
	}
	return false;
}

void suggest_check_options(const struct argp *argp, int argc, char **argv)
{
	struct opt_list l = { .n = 0 };
	bool value_next = false;

	collect(argp, &l);
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];

		if (value_next) {
			value_next = false;
		} else if (a[0] == '-' && a[1] == '-') {
			check_long(&l, a + 2, &value_next);
		} else if (a[0] == '-' && a[1]) {
			value_next = short_takes_next(&l, a);
		}
	}
}
