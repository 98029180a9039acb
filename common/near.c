/*
 * The nearest known word (near.h).  The distance is Damerau's optimal
 * string alignment, not plain Levenshtein: the commonest typo is two
 * letters swapped ("hots"), which Levenshtein counts as two edits and so
 * ties with unrelated words ("ports"), and the last of the ties won.  The
 * bound keeps short words from matching anything two edits away ("id" is
 * two from "ip" and from "dns").
 */
#include "config.h"

#include <string.h>

#include "near.h"

unsigned
near_distance(const char *a, size_t la, const char *b, size_t lb)
{
	/* three rows of the table: i - 2, i - 1, i */
	unsigned	 rows[3][NEAR_WORD_MAX + 1], best;
	unsigned	*r2, *r1, *r0;
	size_t		 i, j;

	if (la > NEAR_WORD_MAX || lb > NEAR_WORD_MAX)
		return NEAR_WORD_MAX;
	for (j = 0; j <= lb; j++)
		rows[0][j] = (unsigned)j;
	for (i = 1; i <= la; i++) {
		r0 = rows[i % 3];
		r1 = rows[(i - 1) % 3];
		r2 = rows[(i + 1) % 3];		/* row i - 2 */
		r0[0] = (unsigned)i;
		for (j = 1; j <= lb; j++) {
			best = r1[j - 1] + (a[i - 1] != b[j - 1]);
			if (r1[j] + 1 < best)
				best = r1[j] + 1;
			if (r0[j - 1] + 1 < best)
				best = r0[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && r2[j - 2] + 1 < best)
				best = r2[j - 2] + 1;
			r0[j] = best;
		}
	}
	return rows[la % 3][lb];
}

int
near_pick(const char *word, size_t len, const char *const *cand, size_t n)
{
	unsigned	 bound = len <= 4 ? 1 : 2, dist, best = bound + 1;
	size_t		 i;
	int		 pick = -1, prefix = -1, nprefix = 0;

	for (i = 0; i < n; i++) {
		dist = near_distance(word, len, cand[i], strlen(cand[i]));
		if (dist < best) {
			best = dist;
			pick = (int)i;
		}
		if (len >= 1 && strlen(cand[i]) > len &&
		    strncmp(cand[i], word, len) == 0) {
			prefix = (int)i;
			nprefix++;
		}
	}
	if (pick == -1 && nprefix == 1)
		pick = prefix;
	return pick;
}
