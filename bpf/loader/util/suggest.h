/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * "Did you mean": the nearest of a few known words to a misspelt one (a subcommand, a long
 * option), so that a refusal names the fix.
 */
#ifndef INFLIGHT_SUGGEST_H
#define INFLIGHT_SUGGEST_H

#include <argp.h>
#include <stddef.h>

/* The edit distance (insertions, deletions, substitutions, swaps of neighbours) of a and b;
 * words longer than 63 bytes compare as far apart. */
unsigned suggest_distance(const char *a, const char *b);

/* The word of `words` (NULL-terminated) nearest to `word` when it is close enough to be a
 * slip: at most 2 edits, fewer than half of the word's letters. NULL otherwise. */
const char *suggest_nearest(const char *word, const char *const *words);

/*
 * Refuses (exit 2) the first "--name" of argv (before "--") that is no long option of `argp`
 * or its children, nor an abbreviation of one, when one is near it: "unrecognized option
 * '--jsno'; did you mean --json?". Words far from every option are left to argp's own
 * refusal. Values of options that take one are skipped.
 */
void suggest_check_options(const struct argp *argp, int argc, char **argv);

#endif /* INFLIGHT_SUGGEST_H */
