/* suggest.c - edit distance and "did you mean" (contract in suggest.h). */
#include "server/api/suggest.h"

#include <string.h>

size_t gp_edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return (size_t)-1;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++) d[i][0] = i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t x = d[i - 1][j] + 1, y = d[i][j - 1] + 1, z = d[i - 1][j - 1] + cost;
            size_t m = x < y ? x : y;
            m = m < z ? m : z;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < m)
                m = d[i - 2][j - 2] + 1;
            d[i][j] = m;
        }
    return d[la][lb];
}

const char *gp_suggest(const char *word, const char *const *cand, size_t n) {
    size_t lw = strlen(word), limit = lw / 3 > 2 ? lw / 3 : 2, best = (size_t)-1;
    const char *pick = NULL;
    /* in half steps: a prefix of a longer name ("--next" for "--next-hops") counts 1.5, a likely
     * abbreviation, yet a real one-edit typo ("--sourc" for "--source") still wins */
    for (size_t i = 0; i < n; i++) {
        size_t d = gp_edit_distance(word, cand[i]);
        d = d == (size_t)-1 ? d : 2 * d;
        size_t lc = strlen(cand[i]);
        if (lw >= 3 && lc > lw && strncmp(word, cand[i], lw) == 0 && d > 3) d = 3;
        if (d < best) {
            best = d;
            pick = cand[i];
        }
    }
    return best <= 2 * limit && best < 2 * lw ? pick : NULL;
}
