/* match_traces.h - noisy GPS traces for the map matching table tests (tests/test_match_model.c on
 * the CPU, tests/test_gpu_match.c on the GPU): random drives along a graph's arcs sampled at its
 * nodes with Gaussian noise and, now and then, a point far off every road (so Viterbi drops it
 * and the next step searches from a point before the previous one), plus an exact comparison of
 * two matchings; eng, a CPU engine (setup / teardown) that attaches the graphs (turn costs).
 * Header-only; include after cmocka.h, engine/engine.h and engine/match.h. */
#ifndef GP_TESTS_MATCH_TRACES_H
#define GP_TESTS_MATCH_TRACES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static gp_engine *eng;

static int setup(void **state) {
    (void)state;
    gp_err err;
    eng = gp_engine_new("cpu", 2, NULL, &err);
    return eng ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    gp_engine_free(eng);
    return 0;
}

static double mt_uniform(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return ((*s >> 11) + 0.5) / 9007199254740992.0;
}

static double mt_gauss(uint64_t *s) {
    double u = mt_uniform(s), v = mt_uniform(s);
    return sqrt(-2 * log(u)) * cos(2 * 3.14159265358979323846 * v);
}

/* Fills up to n points (and timestamps ts, 10 s apart) of a drive from a random node with
 * noise_m metres of noise; one point in 25 is moved 2 km away. Returns the count (>= 2). */
static uint32_t mt_trace(const gp_graph *g, uint64_t *seed, double noise_m, gp_match_point *p,
                         double *ts, uint32_t n) {
    uint32_t v = (uint32_t)(mt_uniform(seed) * g->n) % g->n, k = 0;
    while (k < n) {
        double m_lat = 111195.0, m_lon = 111195.0 * cos(g->lat[v] * 3.14159265358979323846 / 180);
        memset(&p[k], 0, sizeof p[k]);
        p[k].lon = g->lon[v] + noise_m * mt_gauss(seed) / m_lon;
        p[k].lat = g->lat[v] + noise_m * mt_gauss(seed) / m_lat;
        p[k].accuracy_m = NAN;
        if (k > 1 && mt_uniform(seed) < 0.04) p[k].lat += 2000 / m_lat;
        ts[k] = 10.0 * k;
        k++;
        uint32_t deg = g->row[v + 1] - g->row[v];
        if (!deg) break;
        v = g->col[g->row[v] + (uint32_t)(mt_uniform(seed) * deg) % deg];
    }
    return k < 2 ? 0 : k;
}

/* Asserts that a and b are the same matching, bit for bit. */
static void mt_same(const gp_match *a, const gp_match *b) {
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->nmatch, b->nmatch);
    for (uint32_t i = 0; i < a->n; i++) {
        assert_int_equal(a->matching[i], b->matching[i]);
        if (a->matching[i] == GP_NONE) continue;
        assert_int_equal(a->alternatives[i], b->alternatives[i]);
        assert_int_equal(a->snap[i].arc, b->snap[i].arc);
        assert_true(a->snap[i].frac == b->snap[i].frac);
    }
    for (uint32_t i = 0; i < a->nmatch; i++) {
        assert_true(a->confidence[i] == b->confidence[i]);
        assert_true(a->length_m[i] == b->length_m[i]);
    }
}

#endif
