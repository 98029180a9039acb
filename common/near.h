/*
 * "Did you mean": the known word nearest to a misspelt one, for the
 * policy's keys, aisb's flags, config keys and subcommand flags.
 */
#ifndef AISB_NEAR_H
#define AISB_NEAR_H

#include <stddef.h>

#define NEAR_WORD_MAX	64	/* bytes compared; longer words match none */

/*
 * The optimal string alignment distance between a (alen bytes) and b:
 * insertions, deletions, substitutions and swaps of two neighbours count
 * one each, so "hots" is one from "host" and two from "ports".  Words
 * over NEAR_WORD_MAX bytes are NEAR_WORD_MAX apart from everything.
 */
unsigned	 near_distance(const char *a, size_t alen, const char *b,
		    size_t blen);

/*
 * Of the n candidates (the words valid where word was written), the index
 * of the nearest to word (len bytes): the smallest distance within a bound
 * that grows with the word (1 up to 4 bytes, else 2), the earlier
 * candidate on a tie; failing that, the one candidate that starts with
 * word.  -1 when none is near enough.
 */
int		 near_pick(const char *word, size_t len,
		    const char *const *cand, size_t n);

#endif
