/* suggest.h - the one edit distance and "did you mean" rule (server/api/suggest.c), shared by
 * the command line's options and subcommands (cli/args.c, cli/cli.c), `gpath serve`'s flags
 * (server/config.c) and the /v1 parameter layer's unknown names (server/api/params.c).
 */
#ifndef GP_API_SUGGEST_H
#define GP_API_SUGGEST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Optimal string alignment distance (Levenshtein plus adjacent transpositions: "grpah" is 1 from
 * "graph"); (size_t)-1 when either word is longer than 63 bytes (never close to a name). */
size_t gp_edit_distance(const char *a, const char *b);
/* The closest of cand[0..n) to word by edit distance, or NULL when none is close enough to be a
 * likely typo (distance at most 2, or a third of the word's length for long words; a prefix of a
 * longer name counts as 1.5, a likely abbreviation). */
const char *gp_suggest(const char *word, const char *const *cand, size_t n);

#ifdef __cplusplus
}
#endif
#endif
